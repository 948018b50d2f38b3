"""The UPFM's value in R$ per year, kept in the registry (table upfm_values, migration 0032).

A fine is counted in UPFM (Lei 3.588/2023 Art. 36–39) and paid in R$ by the value of the infraction's year. An
admin sets a year's value in Administração › UPFM (audited `upfm.update`, old → new). The setting
TELEMETRIA_UPFM_BRL (`2025=4.52,2026=4.71`) only seeds the years the registry does not hold yet: once a year is
stored, the registry's value wins, and changing the setting does not change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from telemetria.audit.log import record
from telemetria.auth.roles import Principal
from telemetria.db import Conn

VALUES = "SELECT year, brl, updated_at, updated_by FROM upfm_values ORDER BY year"
SEED = """
INSERT INTO upfm_values (year, brl) SELECT * FROM unnest($1::integer[], $2::numeric[])
ON CONFLICT (year) DO NOTHING RETURNING year
"""
OLD = "SELECT brl FROM upfm_values WHERE year = $1 FOR UPDATE"
SET = """
INSERT INTO upfm_values AS u (year, brl, updated_by) VALUES ($1, $2, $3)
ON CONFLICT (year) DO UPDATE SET brl = excluded.brl, updated_at = now(), updated_by = excluded.updated_by
RETURNING u.brl AS new, u.updated_at
"""


async def seed(conn: Conn, settings_values: Mapping[int, Decimal]) -> list[int]:
    """Store the setting's years the registry does not hold (never overwrites); the years stored now."""
    if not settings_values:
        return []
    years = sorted(settings_values)
    rows = await conn.fetch(SEED, years, [settings_values[y] for y in years])
    return [r["year"] for r in rows]


async def values(conn: Conn, settings_values: Mapping[int, Decimal] | None = None) -> dict[int, Decimal]:
    """{year: R$ of one UPFM} as the registry holds them (seeded first from the setting's missing years)."""
    rows = await conn.fetch(VALUES)
    held = {r["year"] for r in rows}
    if settings_values and any(y not in held for y in settings_values):
        await seed(conn, {y: v for y, v in settings_values.items() if y not in held})
        rows = await conn.fetch(VALUES)
    return {r["year"]: Decimal(r["brl"]) for r in rows}


async def listing(conn: Conn, settings_values: Mapping[int, Decimal] | None = None) -> list[dict[str, Any]]:
    await values(conn, settings_values)
    return [
        {"year": r["year"], "brl": str(Decimal(r["brl"]).normalize()), "updated_at": r["updated_at"],
         "updated_by": r["updated_by"]}
        for r in await conn.fetch(VALUES)
    ]  # fmt: skip


async def put(conn: Conn, year: int, brl: Decimal, who: Principal, ip: str | None) -> dict[str, Any]:
    """Set the year's value; audited `upfm.update` with old → new (old null: the year had none)."""
    async with conn.transaction():
        before = await conn.fetchval(OLD, year)
        row = await conn.fetchrow(SET, year, brl, who.username)
        old = None if before is None else str(Decimal(before).normalize())
        new = str(Decimal(row["new"]).normalize())
        await record(conn, "upfm.update", who, ip, f"upfm:{year}", {"year": year, "old": old, "new": new})
    return {"year": year, "brl": new, "old": old, "updated_at": row["updated_at"], "updated_by": who.username}
