"""The shape every simple registry write takes: one transaction that writes, audits and reads the row back.

The handler passes its request's connection (telemetria.deps.Conn) and the request, for the client's address.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response

from telemetria.audit.log import record
from telemetria.auth.guard import client_ip
from telemetria.auth.roles import Principal
from telemetria.db import Conn
from telemetria.http import json_response
from telemetria.registry import queries as q
from telemetria.registry import store
from telemetria.registry.errors import NotFound

Read = Callable[[Conn, int], Awaitable[dict[str, Any]]]


async def create(
    conn: Conn, request: Request, who: Principal, kind: str, sql: str, columns: tuple[str, ...],
    values: dict[str, Any], read: Read,
) -> Response:  # fmt: skip
    """INSERT a `kind` row, audit it, answer 201 with the row as the caller may see it."""
    async with conn.transaction():
        row_id = await store.insert(conn, sql, columns, values)
        await record(conn, f"registry.{kind}.create", who, client_ip(request), f"{kind}:{row_id}")
        return json_response(await read(conn, row_id), 201)


async def update(
    conn: Conn, request: Request, who: Principal, kind: str, sql: str, columns: tuple[str, ...], row_id: int,
    sent: dict[str, Any], read: Read,
) -> Response:  # fmt: skip
    """PATCH the sent fields of a `kind` row, audit which fields with their old and new values (a line's geometry
    as its size and digest; a driver's, personal data, by field name only: queries.OLD_ROW), answer the row."""
    async with conn.transaction():
        before = await conn.fetchval(q.OLD_ROW[kind], row_id) if kind in q.OLD_ROW else None
        await store.patch(conn, sql, columns, row_id, sent)
        after = await conn.fetchval(q.OLD_ROW[kind], row_id) if kind in q.OLD_ROW else None
        values = {"old": _shown(before, sent), "new": _shown(after, sent)} if before is not None else {}
        await record(
            conn, f"registry.{kind}.update", who, client_ip(request), f"{kind}:{row_id}",
            {"fields": sorted(sent), **values},
        )  # fmt: skip
        return json_response(await read(conn, row_id))


def _shown(row: dict[str, Any] | None, sent: dict[str, Any]) -> dict[str, Any]:
    """The sent fields' values in `row`, as the audit log keeps them."""
    out: dict[str, Any] = {}
    for k in sorted(sent):
        v = (row or {}).get(k)
        if k == "geometry" and v is not None:
            v = f"<{len(orjson.dumps(v))} bytes, sha256 {hashlib.sha256(orjson.dumps(v)).hexdigest()[:16]}>"
        out[k] = v
    return out


async def delete(conn: Conn, request: Request, who: Principal, kind: str, sql: str, row_id: int) -> Response:
    """DELETE a `kind` row (`sql` returns its id), audit it, answer what went; 404 when there is none."""
    async with conn.transaction():
        if await conn.fetchval(sql, row_id) is None:
            raise NotFound(f"no {kind.replace('_', ' ')} {row_id}")
        await record(conn, f"registry.{kind}.delete", who, client_ip(request), f"{kind}:{row_id}")
    return json_response({"id": row_id, "deleted": True})
