"""What the windows of one detector chunk share, read once for the chunk instead of once a window: the registry
context of its vehicles, the school calendar, and their fixes (only what was stored since, for the days the
process kept: trackcache.py), with the fixes just outside them. derive.window_candidates uses it when given, and
reads its own otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from uuid import UUID

import numpy as np

from telemetria.contracts import store as calendar_store
from telemetria.contracts.calendar import school_days
from telemetria.db import DB_ERRORS, Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.detection import derive_queries as dq
from telemetria.occurrences.detection import rules, trackcache
from telemetria.occurrences.detection.store import Mark
from telemetria.reports.analysis.days import day_bounds, split
from telemetria.reports.analysis.track import FloatArray, Track
from telemetria.reports.model import Context, Route, Selection, Window
from telemetria.reports.store import context, fetch

log = logging.getLogger(__name__)

# What a chunk reads ahead for its windows (a few hundred vehicles): at most PREFETCH_FIXES fixes in all, about
# STATEMENT_FIXES a statement (the rows of a statement are held whole before they become arrays). Windows past
# the budget read their own day, one at a time per worker: a detector's memory is bounded by these, its kept
# days (trackcache.MAX_FIXES) and its workers' days, however many fixes a day holds (bench.soak: ~125,000 fixes a
# vehicle-day read 100 vehicles at a time took the two detectors from 0.4 to 1.3 GB).
PREFETCH_FIXES = 1_000_000
STATEMENT_FIXES = 200_000

# How far back a silence that began before the day is traced (its `since`); beyond, it is "before that".
LOOK_BACK = timedelta(days=7)


class Days:
    """Which local days a route's runs are due, by its contract's validity and the school calendar, read once."""

    def __init__(self) -> None:
        self._years: dict[int, set[date] | None] = {}
        self._contracts: dict[int, tuple[date, date] | None] = {}

    async def school(self, conn: Conn, day: date) -> set[date] | None:
        """The school days of `day`'s year, None when no school year is registered."""
        if day.year not in self._years:
            sy = await calendar_store.school_year(conn, day.year)
            self._years[day.year] = set(school_days(sy)) if sy is not None else None
        return self._years[day.year]

    async def due(self, conn: Conn, route: Route, day: date) -> bool:
        """Whether a route assigned on `day` is due then: its contract (if any) in force, and a school day (without
        a registered school year: a weekday)."""
        if route.contract_id is not None:
            if route.contract_id not in self._contracts:
                found = await dq.contract_dates(conn, [route.contract_id])
                self._contracts[route.contract_id] = found.get(route.contract_id)
            span = self._contracts[route.contract_id]
            if span is not None and not span[0] <= day <= span[1]:
                return False
        school = await self.school(conn, day)
        return day in school if school is not None else day.isoweekday() <= 5


def local_days(start: datetime, end: datetime, now: datetime) -> list[tuple[date, datetime, datetime]]:
    """The local days a window [start, end) touches that have begun by `now`, with their bounds."""
    out = []
    for day in sorted({d for d, _, _ in split(start, end)}):
        d0, d1 = day_bounds(day)
        if d0 > now:
            break
        out.append((day, d0, d1))
    return out


Piece = tuple[int, datetime]  # (vehicle, start of the local day analysed)


@dataclass(frozen=True, slots=True)
class Kept:
    """A detector process's kept days (trackcache) and, for a chunk's vehicles, their marks and stamps as just read
    (store.dirty_of)."""

    cache: trackcache.TrackCache
    marks: Mapping[int, Mark]
    stamps: Mapping[int, UUID]


class Shared:
    """What the windows of one detector round share, read once for a batch of vehicles instead of once a window:
    the registry context of the batch's vehicles over the days of their windows, the calendar (Days), and (after
    prefetch) each window's fixes with context and the fixes just outside them. A window whose vehicle or days it
    does not cover loads its own, as without it."""

    def __init__(self) -> None:
        self.calendar = Days()
        self.ctx: Context | None = None
        self.days: tuple[date, date] | None = None
        self.fixes: dict[Piece, Track] = {}
        self.kept: Kept | None = None
        self.prior: dict[Piece, tuple[trackcache.Computed, int]] = {}  # kept analysis values, fixes unchanged
        self.before: dict[Piece, rules.Edge | None] = {}
        self.after: dict[Piece, rules.Edge | None] = {}

    async def prefetch(
        self, conn: Conn, windows: Mapping[int, tuple[datetime, datetime]], now: datetime,
        kept: Kept | None = None,
    ) -> None:  # fmt: skip
        """The fixes window_candidates reads for each vehicle's window [start, end), a few statements in all.

        `kept`: a detector process's TrackCache with the marks and stamps its chunk just read: a day kept under the
        vehicle's stamp is read only from the vehicle's dirty_from on (not at all without a mark), when that lies
        inside the day; what is read is kept for the next round (under the stamp read)."""
        pieces = [(v, d0, d1) for v, (s, e) in windows.items() for _, d0, d1 in local_days(s, e, now)]
        whole, since, unchanged, spent = list(pieces), {}, set(), 0
        self.kept = kept
        if kept is not None:
            whole = []
            for v, d0, d1 in pieces:
                old = kept.cache.get(v, d0, kept.stamps.get(v))
                computed = kept.cache.computed(v, d0, kept.stamps.get(v))
                mark = kept.marks.get(v)
                if old is None or (len(old) and old.t[-1] >= d1.timestamp()):  # nothing kept, or past the day
                    whole.append((v, d0, d1))
                elif mark is None:
                    self.fixes[(v, d0)] = old  # nothing stored since it was read
                    unchanged.add((v, d0))
                    if computed is not None:
                        self.prior[(v, d0)] = (computed, len(old))
                elif d0 <= mark.dirty_from < d1 and v not in since:
                    since[v] = (mark.dirty_from, d0, d1, old)
                    if computed is not None:
                        self.prior[(v, d0)] = (computed, int(np.searchsorted(old.t, mark.dirty_from.timestamp())))
                else:
                    whole.append((v, d0, d1))
            until = max((d1 for _, _, d1, _ in since.values()), default=now) + fetch.CONTEXT
            starts = {v: f for v, (f, _, _, _) in since.items()}
            new = await fetch.since_bounded(conn, starts, until, STATEMENT_FIXES, PREFETCH_FIXES)
            spent = sum(len(t) for t in new.values())
            for v, (f, d0, d1, old) in since.items():
                if v not in new:  # past the budget: the window reads its own day
                    continue
                if len(new[v]) and new[v].t[-1] >= d1.timestamp():  # the day's end context too: read it whole
                    whole.append((v, d0, d1))
                    self.prior.pop((v, d0), None)
                else:
                    self.fixes[(v, d0)] = trackcache.extend(old, f.timestamp(), new[v])
        self.fixes |= await fetch.bounded(conn, whole, STATEMENT_FIXES, PREFETCH_FIXES - spent)
        left = {p[0] for p in pieces if (p[0], p[1]) not in self.fixes}  # past the budget: windows read their own
        pieces = [p for p in pieces if (p[0], p[1]) in self.fixes]
        for v, d0 in [p for p in self.prior if p[0] in left]:
            del self.prior[(v, d0)]
        if kept is not None:
            for v in left:
                # What is kept of its days may be older than what was stored since; this round's clear of its
                # mark would then restamp it as current (detector.restamp): it must go.
                kept.cache.drop(v)
            for v, d0, _ in pieces:  # what was read (an unchanged day stays kept as it is, with its values)
                if v in kept.stamps and (v, d0) not in unchanged:
                    kept.cache.put(v, d0, self.fixes[(v, d0)], kept.stamps[v])
        befores, afters = [], []
        for v, d0, d1 in pieces:
            t = self.fixes[(v, d0)].t
            if before_needed(t, d0):
                befores.append((v, d0))
            if after_needed(t, d1):
                afters.append((v, last(t, d1), d0))
        found = await dq.fixes_before(conn, befores, LOOK_BACK)
        self.before = {p: edge(row) for p, row in zip(befores, found, strict=True)}
        found = await dq.fixes_after(conn, [(v, at) for v, at, _ in afters])
        self.after = {(v, d0): edge(row) for (v, _, d0), row in zip(afters, found, strict=True)}

    async def load(self, conn: Conn, vehicle_ids: Sequence[int], start: datetime, end: datetime) -> None:
        """The context of `vehicle_ids` over the local days of [start, end); unknown vehicles are left out."""
        days = [d for d, _, _ in split(start, end)]
        if not days or not vehicle_ids:
            return
        win = Window(day_bounds(days[0])[0], day_bounds(days[-1])[1], LOCAL_TZ)
        ids = sorted(set(vehicle_ids))
        known = await dq.known_vehicles(conn, ids)
        if not known:
            return
        try:
            self.ctx = await context.load(conn, None, Selection(known, None, None), win)
        except DB_ERRORS:
            raise
        except Exception:  # e.g. a vehicle deleted meanwhile: each window loads its own, and fails alone
            log.warning("the registry of a chunk of %d vehicles could not be read at once", len(known), exc_info=True)
            return
        self.days = (days[0], days[-1])

    def context(self, vehicle_id: int, first: date, last: date) -> Context | None:
        if self.ctx is None or self.days is None or not (self.days[0] <= first and last <= self.days[1]):
            return None
        return self.ctx if self.ctx.vehicle(vehicle_id) is not None else None


def before_needed(t: FloatArray, d0: datetime) -> bool:
    return not len(t) or bool(t[0] >= d0.timestamp())


def after_needed(t: FloatArray, d1: datetime) -> bool:
    return not len(t) or bool(t[-1] < d1.timestamp())


def last(t: FloatArray, d1: datetime) -> datetime:
    """Where a track that ends inside its day ends (the day's end when it has no fix)."""
    return datetime.fromtimestamp(float(t[-1]), UTC) if len(t) else d1


def edge(row: Mapping[str, Any] | None) -> rules.Edge | None:
    return rules.Edge(row["t"], row["lat"], row["lon"]) if row is not None else None
