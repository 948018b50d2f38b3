"""The shape every simple registry write takes: one transaction that writes, audits and reads the row back.

The handler passes its request's connection (telemetria.deps.Conn) and the request, for the client's address.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from telemetria.audit.log import record
from telemetria.auth.guard import client_ip
from telemetria.auth.roles import Principal
from telemetria.db import Conn
from telemetria.http import json_response
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
    """PATCH the sent fields of a `kind` row, audit which fields (never their values), answer the row."""
    async with conn.transaction():
        await store.patch(conn, sql, columns, row_id, sent)
        await record(
            conn, f"registry.{kind}.update", who, client_ip(request), f"{kind}:{row_id}", {"fields": sorted(sent)}
        )
        return json_response(await read(conn, row_id))


async def delete(conn: Conn, request: Request, who: Principal, kind: str, sql: str, row_id: int) -> Response:
    """DELETE a `kind` row (`sql` returns its id), audit it, answer what went; 404 when there is none."""
    async with conn.transaction():
        if await conn.fetchval(sql, row_id) is None:
            raise NotFound(f"no {kind.replace('_', ' ')} {row_id}")
        await record(conn, f"registry.{kind}.delete", who, client_ip(request), f"{kind}:{row_id}")
    return json_response({"id": row_id, "deleted": True})
