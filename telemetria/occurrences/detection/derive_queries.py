"""Read-only SQL of the occurrence derivation (derive.py): what the reports' and the measurement's stores do not
already read for it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from telemetria.db import Conn

# The vehicle's first fix after $2: where a silence that outlasts the day's track ends (and where the vehicle was).
FIX_AFTER = """
SELECT extract(epoch FROM ts)::float8 AS t, lat, lon FROM fixes
WHERE vehicle_id = $1 AND ts > $2 ORDER BY ts LIMIT 1"""

# The vehicle's last fix before $2, looking back at most $3: since when a silence that began before the day lasts.
FIX_BEFORE = """
SELECT extract(epoch FROM ts)::float8 AS t, lat, lon FROM fixes
WHERE vehicle_id = $1 AND ts < $2 AND ts >= $2 - $3::interval ORDER BY ts DESC LIMIT 1"""

# The same two for many (vehicle $1[i], instant $2[i]) at once (a detector chunk's), each with its ordinal k.
FIX_AFTER_EACH = """
SELECT u.k, f.t, f.lat, f.lon FROM unnest($1::int[], $2::timestamptz[]) WITH ORDINALITY AS u(v, at, k)
CROSS JOIN LATERAL (SELECT extract(epoch FROM ts)::float8 AS t, lat, lon FROM fixes
                    WHERE vehicle_id = u.v AND ts > u.at ORDER BY ts LIMIT 1) f"""
FIX_BEFORE_EACH = """
SELECT u.k, f.t, f.lat, f.lon FROM unnest($1::int[], $2::timestamptz[]) WITH ORDINALITY AS u(v, at, k)
CROSS JOIN LATERAL (SELECT extract(epoch FROM ts)::float8 AS t, lat, lon FROM fixes
                    WHERE vehicle_id = u.v AND ts < u.at AND ts >= u.at - $3::interval ORDER BY ts DESC LIMIT 1) f"""

# The validity of the contracts $1 (a route's runs are due only while its contract is in force).
CONTRACT_DATES = """
SELECT id, valid_from, valid_to FROM contracts WHERE id = ANY ($1::int[])"""

# Which of the vehicles $1 exist (a batch's context is loaded for those; a deleted one has no candidates).
KNOWN_VEHICLES = """
SELECT id FROM vehicles WHERE id = ANY ($1::int[]) ORDER BY id"""

# Every route in some contract (as registered now).
CONTRACTED_ROUTES = """
SELECT id FROM routes WHERE contract_id IS NOT NULL ORDER BY id"""

# The vehicles $1: whether each is active now and whose it was on local day $2 (why a substitute is not
# authorized; issue 33: the contractor of the run's day, migrations/0028).
VEHICLES = """
SELECT id, plate, active, vehicle_contractor_on(id, $2::date) AS contractor_id FROM vehicles
WHERE id = ANY ($1::int[])"""


async def fix_after(conn: Conn, vehicle_id: int, after: datetime) -> dict[str, Any] | None:
    row = await conn.fetchrow(FIX_AFTER, vehicle_id, after)
    return dict(row) if row is not None else None


async def fix_before(conn: Conn, vehicle_id: int, before: datetime, within: timedelta) -> dict[str, Any] | None:
    row = await conn.fetchrow(FIX_BEFORE, vehicle_id, before, within)
    return dict(row) if row is not None else None


async def fixes_after(conn: Conn, at: Sequence[tuple[int, datetime]]) -> list[dict[str, Any] | None]:
    """fix_after of each (vehicle, instant), in their order."""
    rows = await conn.fetch(FIX_AFTER_EACH, [v for v, _ in at], [t for _, t in at])
    found = {r["k"]: {"t": r["t"], "lat": r["lat"], "lon": r["lon"]} for r in rows}
    return [found.get(k) for k in range(1, len(at) + 1)]


async def fixes_before(
    conn: Conn, at: Sequence[tuple[int, datetime]], within: timedelta
) -> list[dict[str, Any] | None]:
    """fix_before of each (vehicle, instant), in their order."""
    rows = await conn.fetch(FIX_BEFORE_EACH, [v for v, _ in at], [t for _, t in at], within)
    found = {r["k"]: {"t": r["t"], "lat": r["lat"], "lon": r["lon"]} for r in rows}
    return [found.get(k) for k in range(1, len(at) + 1)]


async def contract_dates(conn: Conn, ids: list[int]) -> dict[int, tuple[date, date]]:
    return {r["id"]: (r["valid_from"], r["valid_to"]) for r in await conn.fetch(CONTRACT_DATES, ids)}


async def contracted_routes(conn: Conn) -> list[int]:
    return [r["id"] for r in await conn.fetch(CONTRACTED_ROUTES)]


async def vehicles(conn: Conn, ids: list[int], day: date) -> dict[int, dict[str, Any]]:
    return {r["id"]: dict(r) for r in await conn.fetch(VEHICLES, ids, day)}


async def known_vehicles(conn: Conn, ids: list[int]) -> list[int]:
    return [r["id"] for r in await conn.fetch(KNOWN_VEHICLES, ids)]
