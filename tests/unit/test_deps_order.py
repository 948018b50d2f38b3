"""Every route that takes a pooled connection (telemetria/deps.py) declares its guard first.

FastAPI resolves dependencies in declaration order; a connection taken before the guard runs is held
while the guard waits for one of its own, and a full pool of such requests would wait forever.
"""

from __future__ import annotations

from fastapi.routing import APIRoute

from telemetria.app import API_ROUTERS
from telemetria.deps import BuiltReportsConn, Conn, ReportsConn
from telemetria.web import pages

POOLED = {alias.__metadata__[0].dependency for alias in (Conn, ReportsConn, BuiltReportsConn)}


def _routes() -> list[APIRoute]:
    routers = (*API_ROUTERS, pages.router)
    return [r for router in routers for r in router.routes if isinstance(r, APIRoute)]


def test_some_route_takes_a_pooled_connection() -> None:
    assert any(d.call in POOLED for r in _routes() for d in r.dependant.dependencies)


def test_the_guard_is_resolved_before_the_connection() -> None:
    wrong = []
    for route in _routes():
        calls = [d.call for d in route.dependant.dependencies]
        guards = [i for i, c in enumerate(calls) if hasattr(c, "perm")]
        pooled = [i for i, c in enumerate(calls) if c in POOLED]
        if guards and pooled and min(pooled) < max(guards):
            wrong.append(f"{sorted(route.methods or ())} {route.path}")
    assert not wrong, f"declare the guard before the connection (telemetria/deps.py): {wrong}"
