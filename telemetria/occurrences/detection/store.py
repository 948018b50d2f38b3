"""The detector's reads and writes (one thin function per statement of queries.py) and applying a reconcile plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from uuid import UUID

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.detection import queries as q
from telemetria.occurrences.detection.reconcile import Plan, Stored
from telemetria.occurrences.model import Candidate, Kind, Status

WINDOW_KINDS = (
    Kind.SPEEDING, Kind.ROUTE_DEVIATION, Kind.UNAUTHORIZED_STOP, Kind.SCHEDULE_DELAY, Kind.OVER_2H_ON_BOARD,
    Kind.TRACKER_SILENT,
)  # fmt: skip
RUN_KINDS = (Kind.RUN_NOT_MADE, Kind.UNAUTHORIZED_VEHICLE)


@dataclass(frozen=True, slots=True)
class Mark:
    vehicle_id: int
    dirty_from: datetime  # the least fix time stored since the detector last looked
    dirty_at: datetime  # when it was last marked (the clear compares it)
    dirty_since: datetime  # when the oldest change it waits for arrived
    read_at: datetime  # when the detector read it


@dataclass(frozen=True, slots=True)
class Applied:
    inserted: list[int]
    updated: int
    withdrawn: int
    noted: int


async def dirty(conn: Conn, limit: int, slices: Sequence[int]) -> list[Mark]:
    rows = await conn.fetch(q.DIRTY, limit, list(slices))
    return [Mark(r["vehicle_id"], r["dirty_from"], r["dirty_at"], r["dirty_since"], r["read_at"]) for r in rows]


async def dirty_of(conn: Conn, vehicle_ids: Sequence[int]) -> tuple[dict[int, Mark], dict[int, UUID]]:
    """The marks of `vehicle_ids` now (those not marked are left out), and the stamps of all that have a row."""
    rows = await conn.fetch(q.DIRTY_OF, list(vehicle_ids))
    marks = {r["vehicle_id"]: Mark(r["vehicle_id"], r["dirty_from"], r["dirty_at"], r["dirty_since"], r["read_at"])
             for r in rows if r["dirty_from"] is not None}  # fmt: skip
    return marks, {r["vehicle_id"]: r["detector_stamp"] for r in rows}


async def clear_dirty(conn: Conn, marks: Sequence[Mark]) -> dict[int, UUID]:
    """Clears the marks still as read; the stamps of their rows after it (new where cleared)."""
    if not marks:
        return {}
    ids, at = [m.vehicle_id for m in marks], [m.dirty_at for m in marks]
    rows = await conn.fetch(q.CLEAR_DIRTY, ids, at, min(m.read_at for m in marks))
    return {r["vehicle_id"]: r["detector_stamp"] for r in rows}


async def silent(
    conn: Conn, now: datetime, silent_s: float, margin_s: float, recheck_s: float, slices: Sequence[int]
) -> list[int]:
    """Vehicles of `slices` due around now (a prefilter, widened by margin_s) with no fix for more than silent_s,
    not checked for silence in the last recheck_s; they are marked checked at `now`."""
    local = now.astimezone(LOCAL_TZ)
    seconds = local.hour * 3600 + local.minute * 60 + local.second
    rows = await conn.fetch(
        q.SILENT,
        now - timedelta(seconds=silent_s),
        local.date(),
        local.isoweekday(),
        float(seconds),
        margin_s,
        now - timedelta(seconds=recheck_s),
        list(slices),
    )
    ids = [r["vehicle_id"] for r in rows]
    if ids:
        await conn.execute(q.SILENCE_CHECKED, ids, now)
    return ids


async def open_since(conn: Conn, starts: Mapping[int, datetime]) -> dict[int, datetime]:
    """vehicle → the earliest start of its detected occurrences still open at its `starts` instant (looking at
    most a day back); vehicles with none are left out."""
    ids, at = list(starts), list(starts.values())
    return {r["vehicle_id"]: r["since"] for r in await conn.fetch(q.OPEN_SINCE, ids, at) if r["since"] is not None}


def _stored(r: Mapping[str, Any]) -> Stored:
    return Stored(
        id=r["id"],
        kind=Kind(r["kind"]),
        vehicle_id=r["vehicle_id"],
        start=r["start_ts"],
        end=r["end_ts"],
        status=Status(r["status"]),
        key=r["natural_key"],
        route_id=r["route_id"],
        run_no=r["run_no"],
        lat=r["lat"],
        lon=r["lon"],
        place=r["place"],
        facts=r["facts"] or {},
        last_note=r["last_note"],
    )


async def stored_window(conn: Conn, vehicle_id: int, start: datetime, end: datetime) -> list[Stored]:
    return (await stored_windows(conn, {vehicle_id: start}, end))[vehicle_id]


async def stored_windows(conn: Conn, starts: Mapping[int, datetime], end: datetime) -> dict[int, list[Stored]]:
    """stored_window of each vehicle of `starts` (vehicle → its window's start), all ending at `end`, in one read."""
    kinds = [k.value for k in WINDOW_KINDS]
    out: dict[int, list[Stored]] = {v: [] for v in starts}
    for r in await conn.fetch(q.STORED_WINDOWS, list(starts), list(starts.values()), end, kinds):
        out[r["vehicle_id"]].append(_stored(r))
    return out


async def stored_day(conn: Conn, day: date) -> list[Stored]:
    return [_stored(r) for r in await conn.fetch(q.STORED_DAY, day, [k.value for k in RUN_KINDS])]


def completing(c: Candidate) -> datetime | None:
    """The fix time of the fix that completed a candidate: its own word, else its end (None: still going on)."""
    return c.completed_ts or c.end


async def received(conn: Conn, candidates: Sequence[Candidate]) -> dict[tuple[int, datetime], datetime]:
    """When each candidate's completing fix arrived, by (vehicle, fix time)."""
    keys = [(c.vehicle_id, t) for c in candidates if (t := completing(c)) is not None]
    if not keys:
        return {}
    rows = await conn.fetch(q.RECEIVED, [k[0] for k in keys], [k[1] for k in keys])
    return {(r["v"], r["ts"]): r["received_at"] for r in rows}


async def insert(conn: Conn, candidates: Sequence[Candidate], late_after_s: float) -> list[int]:
    """Store new occurrences (late when the completing fix arrived more than late_after_s after its fix time)."""
    if not candidates:
        return []
    arrived = await received(conn, candidates)
    cols: list[list[Any]] = [[] for _ in range(15)]
    for c in candidates:
        done = completing(c)
        rcv = arrived.get((c.vehicle_id, done)) if done is not None else None
        late = rcv is not None and done is not None and (rcv - done).total_seconds() > late_after_s
        row = (
            c.kind.value, c.vehicle_id, c.route_id, c.run_no, c.key, c.start, c.end, c.lat, c.lon, c.place,
            dict(c.facts), done, rcv, late, c.contractor_id,
        )  # fmt: skip
        for col, value in zip(cols, row, strict=True):
            col.append(value)
    return [r["id"] for r in await conn.fetch(q.INSERT, *cols, LOCAL_TZ.key)]


async def update(
    conn: Conn, occurrence_id: int, c: Candidate, *, restore: bool, text: str | None, late_after_s: float
) -> bool:
    """Follow a `detected` (or restore a withdrawn) occurrence's candidate; `late` is judged again from the fix
    that completes it now (a live episode completed by a store-and-forward batch becomes late)."""
    done = completing(c)
    rcv = (await received(conn, [c])).get((c.vehicle_id, done)) if done is not None else None
    row = await conn.fetchval(
        q.UPDATE, occurrence_id, c.start, c.end, c.route_id, c.lat, c.lon, c.place, dict(c.facts), done, rcv,
        restore, text, late_after_s,
    )  # fmt: skip
    return row is not None


async def withdraw(conn: Conn, occurrence_id: int, reason: str) -> bool:
    return await conn.fetchval(q.WITHDRAW, occurrence_id, reason) is not None


async def note(conn: Conn, occurrence_id: int, text: str, data: Mapping[str, Any]) -> bool:
    return await conn.fetchval(q.NOTE, occurrence_id, text, dict(data)) is not None


async def apply(conn: Conn, plan: Plan, late_after_s: float) -> Applied:
    """Write a reconcile plan (the caller holds a transaction); the ids of the occurrences inserted."""
    ids = await insert(conn, plan.inserts, late_after_s)
    updated = 0
    for u in plan.updates:
        text = "os dados completos sustentam de novo esta ocorrência" if u.restore else None
        updated += await update(conn, u.id, u.candidate, restore=u.restore, text=text, late_after_s=late_after_s)
    withdrawn = 0
    for w in plan.withdrawals:
        withdrawn += await withdraw(conn, w.id, w.reason)
    noted = 0
    for n in plan.notes:
        noted += await note(conn, n.id, n.text, n.data)
    return Applied(ids, updated, withdrawn, noted)


async def round_done(conn: Conn, elapsed_s: float, windows: int) -> None:
    await conn.execute(q.ROUND_DONE, elapsed_s, windows)


async def first_chunk(conn: Conn) -> tuple[str, datetime] | None:
    """(a key naming the fixes' first chunk, its end), or None while no fix is stored."""
    row = await conn.fetchrow(q.FIRST_CHUNK)
    return None if row is None else (row["key"], row["range_end"])


async def first_fix(conn: Conn, chunk_end: datetime) -> datetime | None:
    """When the first fix ever stored was taken, looked for in the first chunk (ending at `chunk_end`)."""
    value: datetime | None = await conn.fetchval(q.FIRST_FIX, chunk_end)
    return value


async def closed_through(conn: Conn) -> date | None:
    value: date | None = await conn.fetchval(q.RESCANNED_THROUGH)
    return value


async def queue_rescans(conn: Conn, day: date, start: datetime) -> None:
    await conn.execute(q.QUEUE_RESCANS, day, start)
    await conn.execute(q.SET_RESCANNED_THROUGH, day)


async def rescans(conn: Conn, limit: int, slices: Sequence[int]) -> list[tuple[int, date]]:
    return [(r["vehicle_id"], r["day"]) for r in await conn.fetch(q.RESCANS, limit, list(slices))]


async def mark_run_days(conn: Conn, days: Sequence[date]) -> None:
    """Hand `days` to the process that judges the run kinds (detector_run_days)."""
    if days:
        await conn.execute(q.MARK_RUN_DAYS, sorted(set(days)))


async def run_days(conn: Conn) -> dict[date, datetime]:
    """The days handed over to be judged → when each was last handed over."""
    return {r["day"]: r["marked_at"] for r in await conn.fetch(q.RUN_DAYS)}


async def run_day_judged(conn: Conn, day: date, marked_at: datetime) -> None:
    """`day` judged as handed over at `marked_at`: off the list, unless handed over again since."""
    await conn.execute(q.RUN_DAY_JUDGED, day, marked_at)


async def rescanned(conn: Conn, vehicle_id: int, day: date) -> None:
    await conn.execute(q.DELETE_RESCAN, vehicle_id, day)
