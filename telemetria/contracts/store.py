"""Storing and reading school years and contracts; a contract's prices and rule are written as dated versions."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from telemetria.contracts import calendar
from telemetria.contracts import queries as q
from telemetria.contracts.holidays import national_holidays
from telemetria.contracts.money import numbers
from telemetria.contracts.schemas import ContractIn, ContractPatch
from telemetria.db import Conn
from telemetria.paging import Page, split_total
from telemetria.registry.errors import Conflict, NotFound, RegistryError
from telemetria.registry.store import guarded

PLACES = {"price_per_km": 2, "price_per_km_unpaved": 2, "made_min_coverage_pct": 2, "partial_min_coverage_pct": 2}
RULE_FIELDS = (
    "made_min_coverage_pct", "partial_min_coverage_pct", "partial_pay", "off_route_km_paid", "justified_paid",
)  # fmt: skip
PRICE_FIELDS = ("price_per_km", "price_per_km_unpaved")
NULLABLE = {"lot", "price_per_km_unpaved"}

# --- school years -----------------------------------------------------------------------------


async def school_year(conn: Conn, year: int) -> calendar.SchoolYear | None:
    row = await conn.fetchrow(q.GET_SCHOOL_YEAR, year)
    if row is None:
        return None
    days = await conn.fetch(q.SCHOOL_YEAR_DAYS, year)
    changes = await conn.fetch(q.SCHEDULE_CHANGES, year)
    return calendar.SchoolYear(
        year, row["start_date"], row["end_date"],
        tuple(calendar.MarkedDay(d["day"], d["reason"], tuple(d["shifts"]) if d["shifts"] else None)
              for d in days if not d["school"]),
        tuple(calendar.MarkedDay(d["day"], d["reason"]) for d in days if d["school"]),
        tuple(calendar.ScheduleChange(c["day"], c["shift"], c["runs_due_from"], c["reason"], c["kind"])
              for c in changes),
    )  # fmt: skip


async def school_year_meta(conn: Conn, year: int) -> dict[str, Any]:
    row = await conn.fetchrow(q.GET_SCHOOL_YEAR, year)
    return {"updated_at": row["updated_at"], "updated_by": row["updated_by"]} if row else {}


async def put_school_year(conn: Conn, sy: calendar.SchoolYear, username: str) -> None:
    """Replace the whole school year (checked first: nothing is stored when it is not valid)."""
    calendar.check(sy)
    marks = [(m, False) for m in sy.no_school_days] + [(m, True) for m in sy.extra_school_days]
    await conn.execute(q.UPSERT_SCHOOL_YEAR, sy.year, sy.start, sy.end, username)
    await conn.execute(q.DELETE_SCHOOL_YEAR_DAYS, sy.year)
    if marks:
        await conn.execute(
            q.INSERT_SCHOOL_YEAR_DAYS, sy.year, [m.day for m, _ in marks], [s for _, s in marks],
            [m.reason for m, _ in marks], [",".join(m.shifts) if m.shifts else "" for m, _ in marks],
        )  # fmt: skip
    await conn.execute(q.DELETE_SCHEDULE_CHANGES, sy.year)
    if sy.schedule_changes:
        cs = sy.schedule_changes
        await conn.execute(q.INSERT_SCHEDULE_CHANGES, sy.year, [c.day for c in cs], [c.shift for c in cs],
                           [c.runs_due_from for c in cs], [c.reason for c in cs], [c.kind for c in cs])  # fmt: skip


def _signature(sy: calendar.SchoolYear | None) -> dict[date, tuple[object, ...]]:
    """What the calendar says of each day that has school in some shift: its shifts off and schedule changes."""
    if sy is None:
        return {}
    off, changes = calendar.shifts_off(sy), sy.schedule_changes
    return {d: (tuple(sorted(off.get(d, ()))),
                tuple(sorted((c.shift, c.runs_due_from, c.kind) for c in changes if c.day == d)))
            for d in calendar.school_days(sy)}  # fmt: skip


async def closed_days_unchanged(conn: Conn, old: calendar.SchoolYear | None, new: calendar.SchoolYear) -> None:
    """409 naming the month when the new school year changes what a day of a closed month was (school or not, its
    shifts, its runs' times): a closed boletim is what was paid; reopen the month first."""
    a, b = _signature(old), _signature(new)
    changed = {d for d in a.keys() | b.keys() if a.get(d) != b.get(d)}
    if not changed:
        return
    row = await conn.fetchrow(q.CLOSED_AMONG, sorted({d.replace(day=1) for d in changed}))
    if row is not None:
        first = min(d for d in changed if d.replace(day=1) == row["month"])
        raise Conflict(
            f"no_school_days: the change reaches {row['month']:%Y-%m} ({first}), a closed month of contract "
            f"{row['number']}: reabra o mês (POST /api/v1/measurements/{row['id']}/{row['month']:%Y-%m}/reopen) first",
            "no_school_days",
        )


def school_year_stored(sy: calendar.SchoolYear) -> dict[str, Any]:
    """The school year as stored (the audit log's old and new values)."""
    return {"start": sy.start.isoformat(), "end": sy.end.isoformat(),
            "no_school_days": [m.as_json() for m in sy.no_school_days],
            "extra_school_days": [m.as_json() for m in sy.extra_school_days],
            "schedule_changes": [c.as_json() for c in sy.schedule_changes]}  # fmt: skip


def school_year_json(sy: calendar.SchoolYear, meta: dict[str, Any]) -> dict[str, Any]:
    """The stored fields as PUT takes them, then what follows from them (school days, holidays, days off)."""
    days = calendar.school_days(sy)
    return {
        "year": sy.year,
        "start": sy.start.isoformat(),
        "end": sy.end.isoformat(),
        "no_school_days": [m.as_json() for m in sy.no_school_days],
        "extra_school_days": [m.as_json() for m in sy.extra_school_days],
        "schedule_changes": [c.as_json() for c in sy.schedule_changes],
        **meta,
        "school_days_count": len(days),
        "school_days": [d.isoformat() for d in days],
        "holidays": [h.as_json() for h in national_holidays(sy.year)],
        "days_off": calendar.days_off(sy),
        "shifts_off": calendar.shifts_json(sy),
    }


# --- contracts --------------------------------------------------------------------------------


def _shape(row: dict[str, Any]) -> dict[str, Any]:
    """A contract row as the API shows it: money as exact JSON numbers, the rule as one object."""
    out = numbers(row, PLACES)
    out["payment_rule"] = {k: out.pop(k) for k in RULE_FIELDS}
    return out


async def contract(conn: Conn, scope: int | None, cid: int, today: date) -> dict[str, Any]:
    """The contract with the prices and rule in force on `today`; NotFound outside the caller's scope too."""
    rows, _ = split_total(await conn.fetch(q.GET_CONTRACT, scope, cid, None, today))
    if not rows:
        raise NotFound(f"no contract {cid}")
    return _shape(rows[0])


async def contracts(conn: Conn, scope: int | None, contractor_id: int | None, today: date, pg: Page) -> dict[str, Any]:
    rows = await conn.fetch(q.LIST_CONTRACTS, scope, None, contractor_id, today, pg.limit, pg.offset)
    items, total = split_total(rows)
    return pg.answer([_shape(r) for r in items], total)


# Dates in a plausible range (issue 33): a typo such as 2062 or 9999 would otherwise make a contract that locks
# months no one will close. A continuous service is contracted for up to 5 years and extended up to 10 in all
# (Lei 14.133/2021, Arts. 106 and 107); nothing before this century is a school-transport contract of ours.
EARLIEST_CONTRACT_DAY = date(2000, 1, 1)
MAX_CONTRACT_YEARS = 10


def _window(valid_from: date, valid_to: date) -> None:
    if valid_to < valid_from:
        raise RegistryError(f"valid_to: {valid_to} is before valid_from {valid_from}", "valid_to")
    if valid_from < EARLIEST_CONTRACT_DAY:
        raise RegistryError(
            f"valid_from: {valid_from:%d/%m/%Y} é anterior a {EARLIEST_CONTRACT_DAY:%d/%m/%Y}: confira o ano",
            "valid_from",
        )
    last = _years_after(valid_from, MAX_CONTRACT_YEARS)
    if valid_to > last:
        raise RegistryError(
            f"valid_to: {valid_to:%d/%m/%Y} passa de {MAX_CONTRACT_YEARS} anos de vigência (até {last:%d/%m/%Y}, "
            "Lei 14.133/2021, Art. 107): confira o ano",
            "valid_to",
        )


def _years_after(day: date, years: int) -> date:
    """The same day `years` later (28 February for a 29 February in a common year)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:
        return day.replace(year=day.year + years, day=28)


async def create_contract(conn: Conn, body: ContractIn, username: str) -> int:
    """Insert the contract and its first priced version (valid from the contract's first day)."""
    _window(body.valid_from, body.valid_to)
    cid = int(
        await guarded(
            lambda: conn.fetchval(
                q.INSERT_CONTRACT, body.contractor_id, body.number, body.lot, body.valid_from, body.valid_to
            )
        )
    )
    terms: dict[str, Any] = {
        "price_per_km": body.price_per_km, "price_per_km_unpaved": body.price_per_km_unpaved,
        **body.payment_rule.model_dump(),
    }  # fmt: skip
    await _insert_terms(conn, cid, body.valid_from, terms, sorted(terms), username)
    return cid


async def _insert_terms(
    conn: Conn, cid: int, valid_from: date, terms: dict[str, Any], changed: list[str], username: str
) -> int:
    args = [terms[c] for c in q.TERM_COLUMNS]
    return int(await guarded(lambda: conn.fetchval(q.INSERT_TERMS, cid, valid_from, *args, changed, username)))


async def patch_contract(conn: Conn, cid: int, body: ContractPatch, username: str, today: date) -> dict[str, Any]:
    """Change the contract: its own fields in place; prices and rule as a new version from `effective_from`.

    Answers what was done ({"fields", "version"}) for the audit log. Run inside a transaction.
    """
    own = body.model_dump(include=body.model_fields_set - {"payment_rule", "effective_from", *PRICE_FIELDS})
    priced = body.model_dump(include=body.model_fields_set & set(PRICE_FIELDS))
    if body.payment_rule is not None:
        priced |= body.payment_rule.model_dump(include=body.payment_rule.model_fields_set)
    if body.effective_from is not None and not priced:
        raise RegistryError(
            "effective_from: only with price_per_km, price_per_km_unpaved or payment_rule", "effective_from"
        )
    if not own and not priced:
        raise RegistryError("nothing to change: send at least one field")
    for k, v in (own | priced).items():
        if v is None and k not in NULLABLE:
            raise RegistryError(f"{k}: may not be null", k)
    current = await conn.fetchrow(q.LOCK_CONTRACT, cid)
    if current is None:
        raise NotFound(f"no contract {cid}")
    valid_from, valid_to = own.get("valid_from", current["valid_from"]), own.get("valid_to", current["valid_to"])
    _window(valid_from, valid_to)
    for name, old, new, after in (("valid_from", current["valid_from"], valid_from, False),
                                  ("valid_to", current["valid_to"], valid_to, True)):  # fmt: skip
        if new != old:  # the days that enter or leave the validity
            lo, hi = min(old, new), max(old, new)
            lo, hi = (lo + timedelta(days=1), hi) if after else (lo, hi - timedelta(days=1))
            await _open(conn, cid, current["number"], lo, hi, name)
    if own:
        args = [own.get(c) for c in ("number", "lot", "valid_from", "valid_to")]
        await guarded(lambda: conn.fetchval(q.PATCH_CONTRACT, cid, list(own), *args))
    done: dict[str, Any] = {"fields": sorted(own) + sorted(priced)}
    if priced:
        day = body.effective_from or today
        if not valid_from <= day <= valid_to:
            raise RegistryError(
                f"effective_from: {day} is outside the contract's validity ({valid_from} to {valid_to})",
                "effective_from",
            )
        await _open(conn, cid, current["number"], day, valid_to, "effective_from")
        done |= await _new_version(conn, cid, day, priced, username)
    done["old"] = {k: _plain(current[k]) for k in own}
    done["new"] = {k: _plain(v) for k, v in own.items()}
    return done


def _plain(v: Any) -> Any:
    return v.isoformat() if isinstance(v, date) else str(v) if isinstance(v, Decimal) else v


async def _open(conn: Conn, cid: int, number: str, first: date, last: date, field: str) -> None:
    """409 naming the month when a change would reach a day of first..last inside a closed month of the contract:
    a closed boletim is what was paid; the month must be reopened first (POST .../reopen), or the change made to
    apply after it."""
    if first > last:
        return
    month = await conn.fetchval(q.CLOSED_MONTH_IN, cid, first, last)
    if month is not None:
        raise Conflict(
            f"{field}: the change reaches {month:%Y-%m}, a closed month of contract {number}: reabra o mês "
            f"(POST /api/v1/measurements/{cid}/{month:%Y-%m}/reopen) or make the change apply after it",
            field,
        )


async def _new_version(conn: Conn, cid: int, day: date, priced: dict[str, Any], username: str) -> dict[str, Any]:
    base = await conn.fetchrow(q.TERMS_ON, cid, day)
    if base is None:  # every contract is created with a first version; only a hand-made row lacks one
        raise Conflict(f"contract {cid} has no priced version to change", "price_per_km")
    old = {c: base[c] for c in q.TERM_COLUMNS}
    new = old | priced
    if new["partial_min_coverage_pct"] > new["made_min_coverage_pct"]:
        field = "payment_rule.partial_min_coverage_pct"
        raise RegistryError(f"{field}: must not exceed made_min_coverage_pct ({new['made_min_coverage_pct']})", field)
    changed = sorted(k for k in q.TERM_COLUMNS if new[k] != old[k])
    if not changed:
        return {"version": base["id"], "effective_from": base["valid_from"].isoformat(), "unchanged": True}
    if base["valid_from"] == day:
        await conn.execute(q.SUPERSEDE_TERMS, cid, day)
    version = await _insert_terms(conn, cid, day, new, changed, username)
    return {
        "version": version, "effective_from": day.isoformat(), "changed": changed,
        "terms_old": {k: _plain(old[k]) for k in changed}, "terms_new": {k: _plain(new[k]) for k in changed},
    }  # fmt: skip


async def history(conn: Conn, scope: int | None, cid: int, today: date) -> dict[str, Any]:
    """Every priced version of the contract, superseded ones too: who wrote it, when, what it changed."""
    head = await contract(conn, scope, cid, today)
    versions = []
    for r in await conn.fetch(q.CONTRACT_HISTORY, cid):
        v = _shape(dict(r))
        during = v.pop("during")
        # The last day it applies (the next version's first day − 1); None: open, or superseded.
        v["valid_to"] = during.upper - timedelta(days=1) if during is not None and during.upper else None
        v["in_force"] = v["superseded_at"] is None
        versions.append(v)
    return {"contract_id": cid, "number": head["number"], "versions": versions}
