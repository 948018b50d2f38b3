"""`POST /api/v1/sete/import`: the registry page's SETE import, from the address the operator configured.

The address is TELEMETRIA_SETE_URL, never one sent in the request: a form must not make the service call
any address it is given. The password is used for this one login and not kept.
"""

from __future__ import annotations

from datetime import date

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from telemetria.auth.roles import Principal
from telemetria.deps import Conn
from telemetria.http import HttpError, json_response
from telemetria.registry.routing import WRITE
from telemetria.sete import importer
from telemetria.sete.client import SeteClient, SeteError, SeteUnreachable

router = APIRouter(prefix="/api/v1", tags=["registry"])


class SeteImportIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ibge: str = Field(pattern=r"^[0-9]{7}$", description="the municipality's IBGE code")
    user: str = Field(min_length=3, max_length=200, description="the SETE user's e-mail")
    password: str = Field(min_length=1, max_length=200, description="used for this login only, never kept")
    dry_run: bool = Field(default=True, description="report what would change, change nothing")
    effective_from: date | None = Field(default=None, description="first day of the changes (default: today)")
    school_year: int = Field(default_factory=lambda: date.today().year, ge=2000, le=2100)
    pupil_counts: bool = False


@router.post("/sete/import")
async def sete_import(body: SeteImportIn, request: Request, who: Principal = WRITE, *, conn: Conn) -> Response:
    """Import (or, with `dry_run`, simulate) routes, vehicles, drivers and schools from SETE (docs/sete.md)."""
    url = request.app.state.settings.sete_url
    if not url:
        raise HttpError(409, "sete: no SETE address is configured (TELEMETRIA_SETE_URL); ask the operator")
    try:
        async with httpx.AsyncClient(base_url=url.rstrip("/"), timeout=30.0) as http:
            client = SeteClient(http, body.ibge)
            await client.login(body.user, body.password)
            snapshot = await client.snapshot(pupil_counts=body.pupil_counts)
    except SeteUnreachable as e:
        raise HttpError(502, f"sete: SETE could not be reached ({e})") from None
    except SeteError as e:
        raise HttpError(422, f"sete: {e}") from None
    items = importer.items_of(snapshot, body.school_year)
    actions = await importer.plan(conn, body.ibge, items, body.school_year)
    if not body.dry_run:
        await importer.apply(conn, body.ibge, actions, f"sete:{body.user} ({who.username})", body.effective_from)
    return json_response(importer.report(body.ibge, actions, body.dry_run))
