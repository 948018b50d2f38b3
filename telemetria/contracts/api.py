"""The calendar and contracts API (`/api/v1/school-years`, `/api/v1/contracts`): one router for app.py."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response

from telemetria.audit.log import record
from telemetria.auth.guard import client_ip, require
from telemetria.auth.roles import Perm, Principal
from telemetria.contracts import calendar, store
from telemetria.contracts import queries as q
from telemetria.contracts.holidays import national_holidays, state_holidays
from telemetria.contracts.schemas import ContractIn, ContractPatch, MunicipalHolidaysIn, SchoolYearIn
from telemetria.deps import Conn
from telemetria.http import FieldError, json_response
from telemetria.ids import IdPath, IdQuery
from telemetria.localtime import LOCAL_TZ
from telemetria.paging import Page, page
from telemetria.registry.errors import NotFound

router = APIRouter(prefix="/api/v1", tags=["contracts"])
CAN_READ = Depends(require(Perm.READ))
CAN_WRITE = Depends(require(Perm.WRITE_REGISTRY))
YearPath = Annotated[int, Path(ge=calendar.FIRST_YEAR, le=calendar.LAST_YEAR, description="e.g. 2026")]


def local_today() -> date:
    """Today in the municipality (America/Porto_Velho): the default first day of a contract edit."""
    return datetime.now(LOCAL_TZ).date()


# --- school years -----------------------------------------------------------------------------


@router.get("/school-years/{year}")
async def get_school_year(year: YearPath, who: Principal = CAN_READ, *, conn: Conn) -> Response:
    """The school year as stored, then its school days, the national holidays and the weekdays without school."""
    sy = await store.school_year(conn, year)
    if sy is None:
        raise NotFound(f"no school year {year}: PUT it first")
    return json_response(store.school_year_json(sy, await store.school_year_meta(conn, year)))


@router.put("/school-years/{year}")
async def put_school_year(
    year: YearPath, body: SchoolYearIn, request: Request, who: Principal = CAN_WRITE, *, conn: Conn
) -> Response:
    """Replace the school year: first and last day, days without school (with reasons), extra school days."""
    sy = calendar.SchoolYear(
        year, body.start, body.end,
        tuple(calendar.MarkedDay(m.day, m.reason, tuple(m.shifts) if m.shifts is not None else None)
              for m in body.no_school_days),
        tuple(calendar.MarkedDay(m.day, m.reason) for m in body.extra_school_days),
        tuple(calendar.ScheduleChange(c.day, c.shift, c.runs_due_from, c.reason, c.kind)
              for c in body.schedule_changes),
    )  # fmt: skip
    calendar.check(sy)
    async with conn.transaction():
        old = await store.school_year(conn, year)
        await store.closed_days_unchanged(conn, old, sy)
        await store.put_school_year(conn, sy, who.username)
        await record(
            conn, "registry.school_year.update", who, client_ip(request), f"school_year:{year}",
            {"old": store.school_year_stored(old) if old else None, "new": store.school_year_stored(sy)},
        )  # fmt: skip
        return json_response(store.school_year_json(sy, await store.school_year_meta(conn, year)))


# --- holidays (business days of the process's terms) ------------------------------------------


async def _holidays_json(conn: Conn, year: int) -> dict[str, object]:
    municipal = [
        {"date": r["day"].isoformat(), "name": r["name"], "updated_by": r["updated_by"]}
        for r in await conn.fetch(q.MUNICIPAL_HOLIDAYS, year)
    ]
    return {
        "year": year,
        "national": [h.as_json() for h in national_holidays(year)],
        "state": [h.as_json() for h in state_holidays(year)],
        "municipal": municipal,
    }


@router.get("/holidays/{year}")
async def get_holidays(year: YearPath, who: Principal = CAN_READ, *, conn: Conn) -> Response:
    """The year's holidays that are not business days for the terms of defence and appeal (Lei 14.133/2021):
    national (and pontos facultativos), Rondônia's, and the municipality's own (editable)."""
    return json_response(await _holidays_json(conn, year))


@router.put("/holidays/{year}/municipal")
async def put_municipal_holidays(
    year: YearPath, body: MunicipalHolidaysIn, request: Request, who: Principal = CAN_WRITE, *, conn: Conn
) -> Response:
    """Replace the year's municipal holidays (date and name); terms already running keep their end."""
    days = [h.day for h in body.holidays]
    for n, d in enumerate(days):
        if d.year != year:
            raise FieldError(f"holidays[{n}].date: {d.isoformat()} is not in {year}", f"holidays[{n}].date")
        if d in days[:n]:
            raise FieldError(f"holidays[{n}].date: {d.isoformat()} is listed twice", f"holidays[{n}].date")
    async with conn.transaction():
        await conn.execute(q.DELETE_MUNICIPAL_HOLIDAYS, year)
        if days:
            await conn.execute(q.INSERT_MUNICIPAL_HOLIDAYS, days, [h.name for h in body.holidays], who.username)
        await record(
            conn, "registry.municipal_holidays.update", who, client_ip(request), f"holidays:{year}",
            {"days": [d.isoformat() for d in days]},
        )  # fmt: skip
        return json_response(await _holidays_json(conn, year))


# --- contracts --------------------------------------------------------------------------------


@router.get("/contracts")
async def list_contracts(
    contractor_id: IdQuery = None, pg: Page = Depends(page), who: Principal = CAN_READ, *, conn: Conn
) -> Response:
    """Contracts (a contractor's users see only their own), each with the prices and rule in force today."""
    return json_response(await store.contracts(conn, who.scope, contractor_id, local_today(), pg))


@router.get("/contracts/{contract_id}")
async def get_contract(contract_id: IdPath, who: Principal = CAN_READ, *, conn: Conn) -> Response:
    return json_response(await store.contract(conn, who.scope, contract_id, local_today()))


@router.post("/contracts", status_code=201)
async def add_contract(body: ContractIn, request: Request, who: Principal = CAN_WRITE, *, conn: Conn) -> Response:
    """Register a contract: contractor, number, lot, validity, price per km (R$) and payment rule."""
    async with conn.transaction():
        cid = await store.create_contract(conn, body, who.username)
        await record(conn, "registry.contract.create", who, client_ip(request), f"contract:{cid}")
        return json_response(await store.contract(conn, who.scope, cid, local_today()), 201)


@router.patch("/contracts/{contract_id}")
async def change_contract(
    contract_id: IdPath, body: ContractPatch, request: Request, who: Principal = CAN_WRITE, *, conn: Conn
) -> Response:
    """Change number, lot or validity in place; prices and rule as a new version from `effective_from`."""
    today = local_today()
    async with conn.transaction():
        done = await store.patch_contract(conn, contract_id, body, who.username, today)
        await record(conn, "registry.contract.update", who, client_ip(request), f"contract:{contract_id}", done)
        return json_response(await store.contract(conn, who.scope, contract_id, today))


@router.get("/contracts/{contract_id}/history")
async def contract_history(contract_id: IdPath, who: Principal = CAN_READ, *, conn: Conn) -> Response:
    """Every version of the contract's prices and rule: from when, to when, who wrote it, what it changed."""
    return json_response(await store.history(conn, who.scope, contract_id, local_today()))
