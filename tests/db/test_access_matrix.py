"""Every role against every registry/auth endpoint: allowed → 2xx, forbidden → 403, anonymous → 401.

The table below must list every `/api/v1` route the app serves (besides tracker ingest and login),
and each entry's permission must be the one the route's guard really requires, so a new endpoint
cannot ship without a decision about who may call it.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi.routing import APIRoute

from telemetria.app import API_ROUTERS
from telemetria.auth import store
from telemetria.auth.roles import PERMISSIONS, Perm, Role
from telemetria.registry import fleet
from telemetria.traccar import gateways
from tests.db.conftest import People
from tests.db.world import LINE, ZONE, World, make_world

_seq = itertools.count(1)

Fresh = Callable[[asyncpg.Connection, World, str], Awaitable[int | str]]


async def fresh_token(conn: asyncpg.Connection, w: World, role: str) -> int:
    return int((await store.create_token(conn, w.people.ids[role], "to revoke"))["id"])


async def fresh_tracker(conn: asyncpg.Connection, w: World, role: str) -> int:
    return int((await fleet.add_tracker(conn, f"99{next(_seq):013d}", "AAA1A11"))["id"])


async def fresh_gateway(conn: asyncpg.Connection, w: World, role: str) -> int:
    return int((await gateways.add_gateway(conn, f"matrix gateway {next(_seq)}"))["id"])


async def fresh_driver_assignment(conn: asyncpg.Connection, w: World, role: str) -> int:
    return int(
        await conn.fetchval(
            "INSERT INTO driver_assignments (driver_id, vehicle_id, during)"
            " VALUES ($1, $2, tstzrange($3::date, $3::date + 1)) RETURNING id",
            w["d1"],
            w["v1"],
            date(2020, 1, 1) + timedelta(next(_seq)),
        )
    )


async def fresh_route_assignment(conn: asyncpg.Connection, w: World, role: str) -> int:
    return int(
        await conn.fetchval(
            "INSERT INTO route_assignments (route_id, vehicle_id, valid_from)"
            " VALUES ($1, $2, '2026-03-01') RETURNING id",
            w["r1"],
            w["v1"],
        )
    )


async def stored_school_year(conn: asyncpg.Connection, w: World, role: str) -> int:
    await conn.execute(
        "INSERT INTO school_years (year, start_date, end_date) VALUES (2026, '2026-02-02', '2026-12-18')"
        " ON CONFLICT DO NOTHING"
    )
    return 2026


async def measured_route(conn: asyncpg.Connection, w: World, role: str) -> int:
    """Route r1 paid by contract k1, with the 2026 school year: its run of Monday 2 March is due (and not made)."""
    await stored_school_year(conn, w, role)
    await conn.execute("UPDATE routes SET contract_id = $1, declared_km = 1.1 WHERE id = $2", w["k1"], w["r1"])
    return w["r1"]


async def stored_justification(conn: asyncpg.Connection, w: World, role: str) -> int:
    """A justification of route r1's run on a day of its own (each role corrects a fresh one)."""
    await measured_route(conn, w, role)
    return int(
        await conn.fetchval(
            "INSERT INTO run_justifications (route_id, day, reason, created_by)"
            " VALUES ($1, $2, 'ponte caída na estrada', 'matrix') RETURNING id",
            w["r1"],
            date(2026, 3, 2) + timedelta(days=next(_seq)),
        )
    )


async def closed_month(conn: asyncpg.Connection, w: World, role: str) -> str:
    await conn.execute(
        "INSERT INTO measurement_closures (contract_id, month, content, sha256, closed_by)"
        " VALUES ($1, '2026-04-01', '{}', $2, 'matrix')",
        w["k1"],
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",  # sha256 of {}
    )
    return "2026-04"


async def march(conn: asyncpg.Connection, w: World, role: str) -> str:
    return "2026-03"


async def next_school_year(conn: asyncpg.Connection, w: World, role: str) -> int:
    return 2027


async def occurrence_in(conn: asyncpg.Connection, w: World, status: str, *, evidence: bool = False) -> int:
    """An occurrence of contractor c1's vehicle in `status` (the defence deadline still running)."""
    oid = await conn.fetchval(
        "INSERT INTO occurrences (kind, vehicle_id, contractor_id, route_id, day, start_ts, end_ts, article, severity,"
        " status, notified_at, defense_due)"
        " VALUES ('speeding', $1, $2, $3, '2026-03-02', '2026-03-02T11:00Z', '2026-03-02T11:02Z', 'Art. 37, X',"
        " 'media', $4, now(), now() + interval '7 days') RETURNING id",
        w["v1"], w["c1"], w["r1"], status,
    )  # fmt: skip
    if status == "defense":  # a final defence: the decision need not wait for the term (issue 32)
        await conn.execute("UPDATE occurrences SET defense_final = true WHERE id = $1", oid)
    if evidence:
        content = b'{"facts":{},"fixes":[]}'
        digest = hashlib.sha256(content).hexdigest()
        await conn.execute(
            "INSERT INTO occurrence_evidence (occurrence_id, content, sha256, frozen_by) VALUES ($1, $2, $3, 'matrix')",
            oid, content, digest,
        )  # fmt: skip
        await conn.execute("UPDATE occurrences SET evidence_sha256 = $2 WHERE id = $1", oid, digest)
    return int(oid)


def occurrence(status: str, contractor_status: str = "notified", evidence: bool = False) -> Fresh:
    """A fresh occurrence in `status`; for the contractor, one in `contractor_status` (one it can see)."""

    async def fresh(conn: asyncpg.Connection, w: World, role: str) -> int:
        return await occurrence_in(conn, w, contractor_status if role == "contractor" else status, evidence=evidence)

    return fresh


def sanctioned(status: str) -> Fresh:
    """A fresh occurrence decided with a warning, in `status` (decided: the appeal term running; under_appeal)."""

    async def fresh(conn: asyncpg.Connection, w: World, role: str) -> int:
        oid = await occurrence_in(conn, w, status)
        await conn.execute(
            "UPDATE occurrences SET penalty = 'warning', decided_at = now(), appeal_due = now() + interval '7 days',"
            " appealed_at = CASE WHEN status = 'under_appeal' THEN now() END WHERE id = $1",
            oid,
        )
        return oid

    return fresh


async def attachment(conn: asyncpg.Connection, w: World, role: str) -> int:
    oid = await occurrence_in(conn, w, "defense")
    aid = await conn.fetchval(
        "INSERT INTO occurrence_attachments (occurrence_id, filename, content_type, size, sha256, content,"
        " uploaded_by) VALUES ($1, 'a.txt', 'text/plain', 1, $2, 'a', 'matrix') RETURNING id",
        oid, hashlib.sha256(b"a").hexdigest(),
    )  # fmt: skip
    return int(aid)


async def attachment_occurrence(conn: asyncpg.Connection, w: World, role: str) -> int:
    return int(await conn.fetchval("SELECT max(occurrence_id) FROM occurrence_attachments"))


async def same_kind(conn: asyncpg.Connection, w: World, role: str) -> str:
    return "speeding"  # set to what it is: the kinds table is not emptied between tests


def year_window(w: World) -> dict[str, Any]:
    year = 2015  # before the world's own assignment of d2 (2026 on); each role runs on a fresh database
    return {"driver_id": w["d2"], "vehicle_id": w["v2"], "valid_from": f"{year}-01-01T00:00:00Z",
            "valid_to": f"{year}-12-31T00:00:00Z"}  # fmt: skip


def plate(n: int) -> str:
    return f"MAT{n % 10}A{n % 100:02d}"


@dataclass
class Case:
    method: str
    path: str  # as the app declares it
    perm: Perm | None  # None: any authenticated user
    params: dict[str, str | Fresh] = field(default_factory=dict)  # path parameter -> world key or factory
    body: Callable[[World], Any] | None = None
    files: Callable[[], Any] | None = None
    query: dict[str, str] = field(default_factory=dict)
    # What a contractor gets instead of 403: a servidor's process action on its own notified occurrence is a wrong
    # transition for it, answered 409 naming the state and the role (issue 18).
    contractor: int | None = None
    # What an allowed caller gets instead of 2xx when the call needs what the matrix's app lacks (a SETE address).
    allowed: int | None = None


GPX = b"""<?xml version="1.0"?><gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
<trk><trkseg><trkpt lat="-10.44" lon="-62.47"/><trkpt lat="-10.44" lon="-62.465"/></trkseg></trk></gpx>"""

# A track export with no positions (what verifying answers is the tamper test's, tests/db/test_seal_tamper.py).
TRACK_CSV = (
    "\ufeffVeículo (id);Placa;Data e hora (America/Porto_Velho);Latitude;Longitude;Velocidade (km/h)\r\n".encode()
)

R, W = Perm.READ, Perm.WRITE_REGISTRY
CASES = [
    Case("GET", "/api/v1/auth/me", R),
    Case("POST", "/api/v1/auth/logout", None),
    Case("POST", "/api/v1/tokens", Perm.OWN_TOKENS, body=lambda w: {"name": "matrix"}),
    Case("GET", "/api/v1/tokens", Perm.OWN_TOKENS),
    Case("DELETE", "/api/v1/tokens/{token_id}", Perm.OWN_TOKENS, {"token_id": fresh_token}),
    Case("GET", "/api/v1/users", Perm.MANAGE_USERS),
    Case("GET", "/api/v1/traccar/gateways", Perm.MANAGE_USERS),
    # No SETE address is configured in the matrix's app: an allowed caller gets 409, past the guard.
    Case(
        "POST",
        "/api/v1/sete/import",
        Perm.WRITE_REGISTRY,
        allowed=409,
        body=lambda w: {"ibge": "1100114", "user": "a@b.c", "password": "x"},
    ),
    Case("POST", "/api/v1/traccar/gateways", Perm.MANAGE_USERS, body=lambda w: {"name": f"matrix {next(_seq)}"}),
    Case(
        "PATCH",
        "/api/v1/traccar/gateways/{gateway_id}",
        Perm.MANAGE_USERS,
        {"gateway_id": fresh_gateway},
        body=lambda w: {"active": False},
    ),
    Case("POST", "/api/v1/traccar/gateways/{gateway_id}/token", Perm.MANAGE_USERS, {"gateway_id": fresh_gateway}),
    Case(
        "POST",
        "/api/v1/users",
        Perm.MANAGE_USERS,
        body=lambda w: {"username": f"u{next(_seq)}", "password": "long enough pw", "role": "auditor"},
    ),
    Case(
        "PATCH",
        "/api/v1/users/{user_id}",
        Perm.MANAGE_USERS,
        {"user_id": "auditor_user"},
        body=lambda w: {"full_name": "Auditora TCE"},
    ),
    Case("GET", "/api/v1/audit", Perm.READ_AUDIT),
    Case("GET", "/api/v1/contractors", R),
    Case("GET", "/api/v1/contractors/{contractor_id}", R, {"contractor_id": "c1"}),
    Case("POST", "/api/v1/contractors", W, body=lambda w: {"name": f"Empresa {next(_seq)}", "cnpj": "06990590000123"}),
    Case(
        "PATCH",
        "/api/v1/contractors/{contractor_id}",
        W,
        {"contractor_id": "c2"},
        lambda w: {"contract_number": "7/2026"},
    ),
    Case("GET", "/api/v1/vehicles", R),
    Case("GET", "/api/v1/vehicles/{vehicle_id}", R, {"vehicle_id": "v1"}),
    Case("POST", "/api/v1/vehicles", W, body=lambda w: {"plate": plate(next(_seq)), "kind": "van", "capacity": 15}),
    Case("PATCH", "/api/v1/vehicles/{vehicle_id}", W, {"vehicle_id": "v2"}, lambda w: {"capacity": 44}),
    Case("GET", "/api/v1/trackers", R),
    Case("POST", "/api/v1/trackers", W, body=lambda w: {"unique_id": f"77{next(_seq):013d}", "vehicle_id": w["v1"]}),
    Case("POST", "/api/v1/trackers/{tracker_id}/token", W, {"tracker_id": fresh_tracker}),
    Case(
        "POST",
        "/api/v1/trackers/{tracker_id}/move",
        W,
        {"tracker_id": fresh_tracker},
        lambda w: {"vehicle_id": w["v2"]},
    ),
    Case("PATCH", "/api/v1/trackers/{tracker_id}", W, {"tracker_id": fresh_tracker}, lambda w: {"active": False}),
    Case("GET", "/api/v1/drivers", R),
    Case("GET", "/api/v1/drivers/{driver_id}", R, {"driver_id": "d1"}),
    Case(
        "POST",
        "/api/v1/drivers",
        W,
        body=lambda w: {"name": "Novo Condutor", "cpf": "39053344705", "cnh_category": "E"},
    ),
    Case("PATCH", "/api/v1/drivers/{driver_id}", W, {"driver_id": "d2"}, lambda w: {"cnh_category": "E"}),
    Case("GET", "/api/v1/driver-assignments", R),
    Case("POST", "/api/v1/driver-assignments", W, body=year_window),
    Case("DELETE", "/api/v1/driver-assignments/{assignment_id}", W, {"assignment_id": fresh_driver_assignment}),
    Case("GET", "/api/v1/routes", R),
    Case("GET", "/api/v1/routes/{route_id}", R, {"route_id": "r1"}),
    Case("POST", "/api/v1/routes", W, body=lambda w: {"code": f"L{next(_seq)}", "name": "Linha", "geometry": LINE}),
    Case("POST", "/api/v1/routes", W, files=lambda: {"file": ("linha.gpx", GPX), "code": (None, f"G{next(_seq)}")}),
    Case("PATCH", "/api/v1/routes/{route_id}", W, {"route_id": "r2"}, lambda w: {"declared_km": 1.2}),
    Case(
        "PUT",
        "/api/v1/routes/{route_id}/stops",
        W,
        {"route_id": "r2"},
        lambda w: {"stops": [{"name": "Escola", "lat": -10.4350, "lon": -62.4650, "kind": "school"}]},
    ),
    Case("GET", "/api/v1/route-assignments", R),
    Case(
        "POST",
        "/api/v1/route-assignments",
        W,
        body=lambda w: {"route_id": w["r2"], "vehicle_id": w["v2"], "valid_from": "2026-02-01"},
    ),
    Case("DELETE", "/api/v1/route-assignments/{assignment_id}", W, {"assignment_id": fresh_route_assignment}),
    Case("GET", "/api/v1/speed-zones", R),
    Case("POST", "/api/v1/speed-zones", W, body=lambda w: {"name": "Escola", "limit_kmh": 30, "geometry": ZONE}),
    Case("PATCH", "/api/v1/speed-zones/{zone_id}", W, {"zone_id": "z1"}, lambda w: {"limit_kmh": 40}),
    Case("GET", "/api/v1/routes/{route_id}/history", R, {"route_id": "r1"}),
    Case("GET", "/api/v1/speed-zones/{zone_id}/history", R, {"zone_id": "z1"}),
    Case("GET", "/api/v1/vehicles/{vehicle_id}/history", R, {"vehicle_id": "v1"}),
    Case("GET", "/api/v1/route-assignments/{assignment_id}/history", R, {"assignment_id": "ra1"}),
    Case("GET", "/api/v1/live", R),
    Case("GET", "/api/v1/day", R),
    Case("GET", "/api/v1/roads/status", R),
    Case("GET", "/api/v1/roads", R, query={"bbox": "-62.6,-10.6,-62.3,-10.3"}),
    Case("GET", "/api/v1/school-years/{year}", R, {"year": stored_school_year}),
    Case(
        "PUT",
        "/api/v1/school-years/{year}",
        W,
        {"year": next_school_year},
        lambda w: {"start": "2027-02-01", "end": "2027-12-17", "no_school_days": [], "extra_school_days": []},
    ),
    Case("GET", "/api/v1/contracts", R),
    Case("GET", "/api/v1/contracts/{contract_id}", R, {"contract_id": "k1"}),
    Case("GET", "/api/v1/contracts/{contract_id}/history", R, {"contract_id": "k1"}),
    Case(
        "POST",
        "/api/v1/contracts",
        W,
        body=lambda w: {
            "contractor_id": w["c1"],
            "number": f"M{next(_seq)}/2026",
            "lot": "2",
            "valid_from": "2026-02-01",
            "valid_to": "2026-12-31",
            "price_per_km": 4.35,
        },
    ),
    Case(
        "PATCH",
        "/api/v1/contracts/{contract_id}",
        W,
        {"contract_id": "k2"},
        lambda w: {"price_per_km": 4.9, "effective_from": "2026-06-01"},
    ),
    Case("GET", "/api/v1/reports/measurement", R, query={"from": "2026-03-02", "to": "2026-03-06"}),
    Case(
        "POST",
        "/api/v1/run-justifications",
        W,
        {"setup": measured_route},
        lambda w: {"route_id": w["r1"], "date": "2026-03-02", "reason": "ponte caída"},
    ),
    Case(
        "PATCH",
        "/api/v1/run-justifications/{justification_id}",
        W,
        {"justification_id": stored_justification},
        lambda w: {"reason": "ponte caída: corrigido pelo servidor"},
    ),
    Case("POST", "/api/v1/measurements/{contract_id}/{month}/close", W, {"contract_id": "k1", "month": march}),
    Case(
        "POST",
        "/api/v1/measurements/{contract_id}/{month}/reopen",
        Perm.REOPEN_MEASUREMENT,
        {"contract_id": "k1", "month": closed_month},
        lambda w: {"reason": "revisão"},
    ),
    Case("GET", "/api/v1/occurrences", R, query={"from": "2026-03-02", "to": "2026-03-02"}),
    Case("GET", "/api/v1/occurrences/{occurrence_id}", R, {"occurrence_id": occurrence("detected")}),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/review",
        Perm.REVIEW_OCCURRENCES,
        {"occurrence_id": occurrence("detected")},
        lambda w: {"decision": "confirm"},
        contractor=409,
    ),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/notify",
        Perm.REVIEW_OCCURRENCES,
        {"occurrence_id": occurrence("confirmed")},
        contractor=409,
    ),
    Case(
        "GET",
        "/api/v1/occurrences/{occurrence_id}/termo.pdf",
        R,
        {"occurrence_id": occurrence("notified", evidence=True)},
        contractor=403,  # the Termo goes to the Secretaria (Art. 34): internal; the contractor has its notificação
    ),
    Case(
        "GET",
        "/api/v1/occurrences/{occurrence_id}/notificacao.pdf",
        R,
        {"occurrence_id": occurrence("notified", evidence=True)},
    ),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/appeal",
        Perm.DEFEND_OCCURRENCES,
        {"occurrence_id": sanctioned("decided")},
        lambda w: {"text": "recurso"},
    ),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/appeal-decision",
        Perm.DECIDE_OCCURRENCES,
        {"occurrence_id": sanctioned("under_appeal")},
        lambda w: {"outcome": "upheld", "motivation": "mantida"},
        contractor=409,
    ),
    Case("GET", "/api/v1/holidays/{year}", R, {"year": next_school_year}),
    Case("PUT", "/api/v1/holidays/{year}/municipal", W, {"year": next_school_year}, lambda w: {"holidays": []}),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/defense",
        Perm.DEFEND_OCCURRENCES,
        {"occurrence_id": occurrence("notified")},
        lambda w: {"text": "defesa"},
    ),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/defense",
        Perm.DEFEND_OCCURRENCES,
        {"occurrence_id": occurrence("notified")},
        files=lambda: {"text": (None, "defesa"), "files": ("laudo.txt", b"laudo", "text/plain")},
    ),
    Case(
        "GET",
        "/api/v1/occurrences/{occurrence_id}/attachments/{attachment_id}",
        R,
        {"attachment_id": attachment, "occurrence_id": attachment_occurrence},
    ),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/decision",
        Perm.DECIDE_OCCURRENCES,
        {"occurrence_id": occurrence("defense", "defense")},
        lambda w: {"penalty": "warning", "motivation": "provado"},
        contractor=409,
    ),
    Case(
        "POST",
        "/api/v1/occurrences/{occurrence_id}/close",
        Perm.REVIEW_OCCURRENCES,
        {"occurrence_id": occurrence("decided", "decided")},
        contractor=409,
    ),
    Case("GET", "/api/v1/occurrence-kinds", R),
    Case("POST", "/api/v1/seals/verify", None, files=lambda: {"file": ("trajetoria.csv", TRACK_CSV)}),
    Case(
        "PUT",
        "/api/v1/occurrence-kinds/{kind}",
        Perm.CLASSIFY_OCCURRENCES,
        {"kind": same_kind},
        lambda w: {"article": "Art. 37, X", "severity": "media"},
    ),
    Case("GET", "/api/v1/upfm-values", R),
    Case(
        "PUT",
        "/api/v1/upfm-values/{year}",
        Perm.CLASSIFY_OCCURRENCES,
        {"year": next_school_year},
        lambda w: {"brl": "4.71"},
    ),
    Case("GET", "/api/v1/seals", R, query={"from": "2026-03-02", "to": "2026-03-02"}),
    *(
        Case("GET", f"/api/v1/reports/{kind}", R, query={"from": "2026-03-02", "to": "2026-03-02"})
        for kind in ("km", "summary", "speeding", "trips", "route-deviation", "stops", "track", "reporting", "schedule")
    ),
]

UNGUARDED = {("POST", "/api/v1/fixes"), ("POST", "/api/v1/auth/login")}


def test_the_matrix_lists_every_endpoint_with_its_real_permission() -> None:
    declared: dict[tuple[str, str], Perm | None] = {}
    for route in (r for router in API_ROUTERS for r in router.routes):
        assert isinstance(route, APIRoute)
        perms = [getattr(d.call, "perm", None) for d in route.dependant.dependencies]
        for method in route.methods or ():
            declared[(method, route.path)] = next((p for p in perms if p is not None), None)
    declared = {k: v for k, v in declared.items() if k not in UNGUARDED}
    listed = {(c.method, c.path): c.perm for c in CASES}
    assert declared == listed


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    w = await make_world(conn, people)
    w.ids["auditor_user"] = people.ids["auditor"]
    return w


async def _call(client: httpx.AsyncClient, conn: asyncpg.Connection, w: World, case: Case, role: str | None) -> int:
    values: dict[str, Any] = {}
    for name, src in case.params.items():
        values[name] = await src(conn, w, role or "admin") if callable(src) else w[src]
    headers = w.people.auth(role) if role else {}
    kwargs: dict[str, Any] = {"headers": headers}
    if case.body:
        kwargs["json"] = case.body(w)
    if case.files:
        kwargs["files"] = case.files()
    if case.query:
        kwargs["params"] = case.query
    r = await client.request(case.method, case.path.format(**values), **kwargs)
    if r.status_code >= 500:
        raise AssertionError(f"{case.method} {case.path} as {role}: {r.status_code} {r.text}")
    return r.status_code


@pytest.mark.parametrize("role", [None, *[r.value for r in Role]])
async def test_every_role_against_every_endpoint(
    client: httpx.AsyncClient, conn: asyncpg.Connection, world: World, role: str | None
) -> None:
    failures = []
    for case in CASES:
        status = await _call(client, conn, world, case, role)
        if role is None:
            ok = status == 401
        elif role == Role.CONTRACTOR and case.contractor is not None:
            ok = status == case.contractor
        elif case.perm is None or case.perm in PERMISSIONS[Role(role)]:
            ok = status == case.allowed if case.allowed else 200 <= status < 300
        else:
            ok = status == 403
        if not ok:
            failures.append(f"{case.method} {case.path}: {status}")
    assert not failures, f"as {role}: " + "; ".join(failures)
