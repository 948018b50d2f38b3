"""The bench's own throw-away database: created, migrated, given a fleet, counted, dropped."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from bench.keys import Stored
from telemetria.db import init_connection, migrate
from telemetria.ops.localdb import LocalDb
from telemetria.registry import fleet
from telemetria.settings import Settings

COUNT_FIXES = "SELECT count(*) FROM fixes"
# Rows stored in [$1, $2) by request number g (see bench/keys.py): the fix's tracker index t (its
# place in $3), its step from $1 in units of $4 µs, and its request k = step // $5 (fixes per request);
# g = k * trackers + t. Consecutive g with the same (rows, distinct) come back as one run, so a
# healthy phase of millions of fixes is a handful of rows.
STORED_RUNS = """
WITH fleet AS (SELECT tracker_id, ord - 1 AS t FROM unnest($3::int[]) WITH ORDINALITY AS f(tracker_id, ord)),
r AS (
    SELECT f.t, x.ts, (extract(epoch FROM x.ts - $1::timestamptz) * 1000000)::bigint AS off_us
    FROM fixes x JOIN fleet f USING (tracker_id)
    WHERE x.ts >= $1 AND x.ts < $2
),
per_g AS (
    SELECT (off_us / $4 / $5) * cardinality($3::int[]) + t AS g, count(*) AS n, count(DISTINCT ts) AS d
    FROM r WHERE off_us % $4 = 0
    GROUP BY 1
),
islands AS (SELECT g, n, d, g - row_number() OVER (PARTITION BY n, d ORDER BY g) AS island FROM per_g)
SELECT min(g) AS g0, count(*) AS len, n, d FROM islands GROUP BY island, n, d ORDER BY g0"""
# Rows in [$1, $2) no request number can name: another tracker's, or a fix time between steps of $4 µs.
OFF_GRID = """
SELECT count(*) FROM fixes x
WHERE x.ts >= $1 AND x.ts < $2
  AND (x.tracker_id IS NULL OR x.tracker_id <> ALL($3::int[])
       OR (extract(epoch FROM x.ts - $1::timestamptz) * 1000000)::bigint % $4 <> 0)"""
DUPLICATE_KEYS = """
SELECT count(*) FROM (SELECT vehicle_id, ts FROM fixes GROUP BY vehicle_id, ts HAVING count(*) > 1) d"""


def _with_dbname(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@dataclass(frozen=True, slots=True)
class Vehicle:
    vehicle_id: int
    tracker_id: int
    token: str


@dataclass(frozen=True, slots=True)
class BenchDb:
    name: str
    dsn: str
    admin_dsn: str

    @classmethod
    def for_this_run(cls, settings: Settings) -> BenchDb:
        name = f"telemetria_bench_{os.getpid()}"
        return cls(name, _with_dbname(settings.dsn(), name), _with_dbname(settings.dsn(), "postgres"))

    def named(self, name: str) -> BenchDb:
        """Another database of this run, in the same cluster."""
        return BenchDb(name, _with_dbname(self.dsn, name), self.admin_dsn)

    async def create(self) -> None:
        """A fresh database (a leftover of a crashed run with our pid is replaced), migrated."""
        await self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        await self._admin(f'CREATE DATABASE "{self.name}"')
        conn = await asyncpg.connect(self.dsn)
        try:
            await migrate(conn)
        finally:
            await conn.close()

    async def drop(self) -> None:
        await self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    async def exists(self) -> bool:
        conn = await asyncpg.connect(self.admin_dsn)
        try:
            return bool(await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", self.name))
        finally:
            await conn.close()

    async def _admin(self, sql: str) -> None:
        conn = await asyncpg.connect(self.admin_dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    async def connect(self, *, jsonb_codec: bool = True) -> asyncpg.Connection:
        """A connection set up as the service's pool sets up its own (orjson jsonb text codec).

        COPY goes without it: asyncpg's binary COPY cannot use a text-only codec, and the
        bench's rows carry no attributes (NULL jsonb) anyway.
        """
        conn = await asyncpg.connect(self.dsn)
        if jsonb_codec:
            await init_connection(conn)
        return conn

    async def register_fleet(self, n: int) -> list[Vehicle]:
        """n vehicles, each with one tracker installed from the beginning of time; tokens kept."""
        conn = await self.connect()
        try:
            out = []
            for i in range(n):
                plate = f"BNC{i:04d}"  # old-style Brazilian plate ABC1234
                v = await fleet.add_vehicle(conn, plate, prefix=f"B-{i:03d}", description="bench")
                t = await fleet.add_tracker(conn, f"BENCH{i:05d}", plate)
                out.append(Vehicle(v["id"], t["id"], t["token"]))
            return out
        finally:
            await conn.close()

    async def count_fixes(self) -> int:
        conn = await asyncpg.connect(self.dsn)
        try:
            return int(await conn.fetchval(COUNT_FIXES))
        finally:
            await conn.close()

    async def stored_runs(
        self, start: datetime, end: datetime, step: timedelta, per: int, tracker_ids: list[int]
    ) -> tuple[list[Stored], int]:
        """Rows stored in [start, end) by request number, and the rows there no request number names."""
        step_us = step // timedelta(microseconds=1)
        conn = await asyncpg.connect(self.dsn)
        try:
            rows = await conn.fetch(STORED_RUNS, start, end, tracker_ids, step_us, per)
            off = int(await conn.fetchval(OFF_GRID, start, end, tracker_ids, step_us))
        finally:
            await conn.close()
        return [Stored(r["g0"], r["len"], r["n"], r["d"]) for r in rows], off

    async def duplicate_keys(self) -> int:
        """(vehicle_id, ts) keys stored more than once; the unique index should keep this at 0."""
        conn = await asyncpg.connect(self.dsn)
        try:
            return int(await conn.fetchval(DUPLICATE_KEYS))
        finally:
            await conn.close()


def postmaster_pid(settings: Settings) -> int | None:
    """The local cluster's postmaster, whose process tree is the database's CPU; None if external."""
    if settings.database_url:
        return None
    try:
        return int((LocalDb.from_settings(settings).pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
