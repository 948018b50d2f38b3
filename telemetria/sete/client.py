"""SETE's REST API as its own clients call it (seteWeb js/db_rest.js, login-ctl.js, modules/*/…-model.js).

`POST /authenticator/sete {"usuario", "senha": md5}` answers `{"data": {"token": {"access_token"}}}`; the
raw token then goes in `Authorization` (no scheme). Lists answer `{"data": [...], "result", "total"}`;
a route's shape `{"data": {"shape": "<GeoJSON text>"}}` (rota-dados-ctrl.js reads `.data.shape`; a bare
`{"shape"}` is read too). Only what the import needs is fetched: pupils' records never are (only counted,
and only when asked).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import httpx


class SeteError(Exception):
    """SETE answered, but not what the import can use (login refused, an unexpected shape)."""


class SeteUnreachable(SeteError):
    """SETE could not be reached (name, connection, timeout, or a 5xx from it or its proxy)."""


@dataclass
class Snapshot:
    """What SETE holds for one municipality, as the import reads it (raw SETE records)."""

    routes: list[dict[str, Any]] = field(default_factory=list)  # each with "_shape", "_escolas", ...
    vehicles: list[dict[str, Any]] = field(default_factory=list)
    drivers: list[dict[str, Any]] = field(default_factory=list)


class SeteClient:
    def __init__(self, http: httpx.AsyncClient, ibge: str) -> None:
        self._http = http
        self._ibge = ibge

    async def login(self, user: str, password: str) -> None:
        """Log in as SETE's clients do (password sent as its md5); keeps the raw token for the next calls."""
        body = await self._call("POST", "/authenticator/sete", {"usuario": user, "senha": _md5(password)})
        token = _inner(body).get("token")
        token = token.get("access_token") if isinstance(token, dict) else token
        if not isinstance(token, str) or not token:
            raise SeteError("login: SETE's answer carries no token (data.token.access_token)")
        self._http.headers["Authorization"] = token

    async def snapshot(self, *, pupil_counts: bool = False) -> Snapshot:
        """Routes with their shape, schools, vehicle and drivers; the municipality's vehicles and drivers."""
        snap = Snapshot(
            vehicles=await self._list(f"/veiculos/{self._ibge}"),
            drivers=await self._list(f"/motoristas/{self._ibge}"),
        )
        for listed in await self._list(f"/rotas/{self._ibge}"):
            rid = listed.get("id_rota")
            if rid is None:
                raise SeteError("rotas: an item without id_rota")
            base = f"/rotas/{self._ibge}/{rid}"
            detail = await self._get(base)
            route = {**listed, **_inner(detail)}
            route["_shape"] = await self._shape(base)
            route["_escolas"] = [await self._school(s) for s in await self._list(base + "/escolas", missing_ok=True)]
            vehicle = (await self._get(base + "/veiculos", missing_ok=True)).get("data")
            route["_veiculos"] = vehicle if isinstance(vehicle, list) else [vehicle] if vehicle else []
            route["_motoristas"] = await self._list(base + "/motoristas", missing_ok=True)
            if pupil_counts:  # the records are read to be counted, never kept
                route["_alunos"] = len(await self._list(base + "/alunos", missing_ok=True))
            snap.routes.append(route)
        return snap

    async def _shape(self, base: str) -> str | None:
        body = await self._get(base + "/shape", missing_ok=True)
        shape = _inner(body).get("shape")
        return shape if isinstance(shape, str) and shape.strip() else None

    async def _school(self, listed: dict[str, Any]) -> dict[str, Any]:
        if listed.get("loc_latitude") not in (None, "") or listed.get("id_escola") is None:
            return listed
        detail = await self._get(f"/escolas/{self._ibge}/{listed['id_escola']}", missing_ok=True)
        return {**listed, **_inner(detail)}

    async def _list(self, path: str, missing_ok: bool = False) -> list[dict[str, Any]]:
        data = (await self._get(path, missing_ok)).get("data")
        if data is None:
            return []
        if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
            raise SeteError(f"{path}: expected {{'data': [...]}}, got {type(data).__name__}")
        return data

    async def _get(self, path: str, missing_ok: bool = False) -> dict[str, Any]:
        return await self._call("GET", path, None, missing_ok)

    async def _call(self, method: str, path: str, json: Any, missing_ok: bool = False) -> dict[str, Any]:
        try:
            r = await self._http.request(method, path, json=json)
        except httpx.HTTPError as e:
            raise SeteUnreachable(f"{method} {path}: {type(e).__name__}: {e}") from None
        if r.status_code >= 500:
            raise SeteUnreachable(f"{method} {path}: SETE answered {r.status_code}")
        if r.status_code in (401, 403):
            raise SeteError(f"{method} {path}: refused ({r.status_code}); check the user, password and IBGE code")
        if r.status_code == 404 and missing_ok:
            return {}
        if r.status_code >= 400:
            raise SeteError(f"{method} {path}: SETE answered {r.status_code}: {r.text[:200]}")
        try:
            body = r.json()
        except ValueError:
            raise SeteError(f"{method} {path}: the answer is not JSON") from None
        if not isinstance(body, dict):
            raise SeteError(f"{method} {path}: expected a JSON object")
        return body


def _inner(body: dict[str, Any]) -> dict[str, Any]:
    """An entity's answer: `{"data": {...}}`, or the object itself (SETE answers both ways)."""
    data = body.get("data")
    return data if isinstance(data, dict) else body


def _md5(password: str) -> str:
    """SETE's clients send md5(password) (db_rest.js: `MD5(userconfig.get("PASSWORD"))`); it is SETE's choice."""
    return hashlib.md5(password.encode(), usedforsecurity=False).hexdigest()
