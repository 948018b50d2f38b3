"""A SETE import against our registry: read SETE's snapshot and ours, decide (plan.py), apply as dated versions.

Every write goes through the registry's own store functions and statements inside `versions.dated`, so each
change is a version from `effective_from` (default: today) by `sete:<user>`, as an edit on the page would be.
"""

from __future__ import annotations

from datetime import date
from functools import partial
from typing import Any

from telemetria.audit.log import record
from telemetria.db import Conn
from telemetria.registry import queries as rq
from telemetria.registry import routes, store, versions
from telemetria.registry.geocheck import StopIn
from telemetria.sete import queries as q
from telemetria.sete.client import Snapshot
from telemetria.sete.convert import Item, driver_item, line_digest, route_item, stops_digest, vehicle_item
from telemetria.sete.plan import CONFLICT, LINKED, NEW, SKIPPED, Action, decide, summary


def items_of(snap: Snapshot, school_year: int) -> list[Item]:
    """Vehicles and drivers first (routes name them), then routes; a second item with the same natural key
    (plate, CPF) as an earlier one is skipped, not written twice."""
    items = [vehicle_item(v) for v in snap.vehicles] + [driver_item(d) for d in snap.drivers]
    items += [route_item(r, school_year) for r in snap.routes]
    seen: dict[tuple[str, str], str] = {}
    for it in items:
        natural = _natural(it)
        if it.skip or natural is None:
            continue
        if natural in seen:
            it.skip = f"same {natural[0]} as SETE item {seen[natural]}"
        else:
            seen[natural] = it.key
    return items


async def plan(conn: Conn, ibge: str, items: list[Item], school_year: int) -> list[Action]:
    links = {(r["kind"], r["sete_id"]): (r["local_id"], r["imported"]) for r in await conn.fetch(q.LINKS, ibge)}
    actions = []
    for it in items:
        link = links.get((it.kind, it.key))
        if link is not None:
            local_id, imported = link
        else:
            local_id, imported = await _by_natural_key(conn, it, school_year), None
        local = await _local(conn, it.kind, local_id) if local_id is not None else None
        actions.append(decide(it, imported, local, local_id))
    return actions


async def apply(conn: Conn, ibge: str, actions: list[Action], who: str, effective_from: date | None) -> None:
    """Write the plan in one transaction: all of it, or nothing."""
    async with versions.dated(conn, who, effective_from):
        for act in actions:
            if act.status == SKIPPED or (act.status == CONFLICT and act.local_id is None):
                continue
            if act.status == NEW:
                act.local_id = await _create(conn, act.item)
            elif act.apply:
                assert act.local_id is not None
                await _update(conn, act.item, act.local_id, act.apply)
            if act.status == CONFLICT and not act.imported:
                continue
            memory = {**act.imported, "_sete": act.item.extra}
            it = act.item
            await store.guarded(partial(conn.execute, q.UPSERT_LINK, ibge, it.kind, it.key, act.local_id, memory))
        await record(conn, "sete.import", None, None, f"sete:{ibge}", {"by": who, **summary(actions)})


def report(ibge: str, actions: list[Action], dry_run: bool) -> dict[str, Any]:
    return {
        "ibge": ibge,
        "dry_run": dry_run,
        "summary": summary(actions),
        "items": [a.as_json() for a in actions],
    }


def _natural(it: Item) -> tuple[str, str] | None:
    key = {"vehicle": "plate", "driver": "cpf", "route": "code"}[it.kind]
    value = it.row.get(key)
    return (key, str(value)) if value else None


async def _by_natural_key(conn: Conn, it: Item, school_year: int) -> int | None:
    if it.skip:
        return None
    if it.kind == "vehicle":
        return await conn.fetchval(q.VEHICLE_BY_PLATE, it.row["plate"])  # type: ignore[no-any-return]
    if it.kind == "driver":
        return await conn.fetchval(q.DRIVER_BY_CPF, it.row["cpf"])  # type: ignore[no-any-return]
    return await conn.fetchval(q.ROUTE_BY_CODE, it.row["code"], school_year)  # type: ignore[no-any-return]


async def _local(conn: Conn, kind: str, local_id: int) -> dict[str, Any] | None:
    """Our row's values in the form `convert` gives SETE's, so the two compare."""
    sql = {"vehicle": q.VEHICLE, "driver": q.DRIVER, "route": q.ROUTE}[kind]
    row = await conn.fetchrow(sql, local_id)
    if row is None:
        return None
    values = dict(row)
    if kind == "route":
        km = values["declared_km"]
        values["declared_km"] = None if km is None else f"{routes.exact_km(km):f}"
        values["geometry"] = line_digest(values["geometry"]["coordinates"])
        stops = [StopIn(s["name"], s["lat"], s["lon"], s["kind"]) for s in await conn.fetch(rq.ROUTE_STOPS, local_id)]
        values["stops"] = stops_digest(stops)
    return values


async def _create(conn: Conn, it: Item) -> int:
    if it.kind == "vehicle":
        return await store.insert(conn, rq.INSERT_VEHICLE_FULL, rq.VEHICLE_COLUMNS, it.row)
    if it.kind == "driver":
        return await store.insert(conn, rq.INSERT_DRIVER, rq.DRIVER_COLUMNS, it.row)
    assert it.geo is not None
    return await routes.create_route(conn, it.row, it.geo)


async def _update(conn: Conn, it: Item, local_id: int, fields: dict[str, Any]) -> None:
    sent = {k: v for k, v in fields.items() if k not in ("geometry", "stops")}
    if it.kind == "vehicle":
        await store.patch(conn, rq.PATCH_VEHICLE, rq.VEHICLE_COLUMNS, local_id, sent)
        return
    if it.kind == "driver":
        await store.patch(conn, rq.PATCH_DRIVER, rq.DRIVER_COLUMNS, local_id, sent)
        return
    assert it.geo is not None
    if "declared_km" in sent:
        sent["declared_km"] = routes.exact_km(sent["declared_km"])
    if "geometry" in fields:
        sent["geometry"] = {"type": "LineString", "coordinates": [list(c) for c in it.geo.coords]}
        sent["length_m"] = it.geo.length_m
    if sent:
        await store.patch(conn, rq.PATCH_ROUTE, rq.ROUTE_COLUMNS, local_id, sent)
    if "stops" in fields:
        await routes.replace_stops(conn, local_id, it.geo.stops)


__all__ = ["LINKED", "apply", "items_of", "plan", "report"]
