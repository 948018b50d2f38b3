"""The request's database connection, as a FastAPI dependency: one way to get one, for every router.

    async def handler(conn: Conn) -> Response: ...          # the main pool (reads and writes)
    async def report(conn: ReportsConn) -> Response: ...    # the reports pool (a replica when configured)
    async def table(conn: BuiltReportsConn) -> Response: ...  # the same, given back when the handler returns

The connection is taken from the pool when the handler is called and given back when the answer has
been sent (a streamed answer may still be reading through it). `BuiltReportsConn` is given back as soon
as the handler returns, before the answer is sent: for reports whose rows are all computed first, so that
a slow client downloading a large CSV holds no connection of the (small) pool while it reads.

A pool that cannot give one (database down) raises one of `db.DB_ERRORS`, which the app answers with
503 like any other database failure.

Declare it *after* the route's guard (`who: Principal = Depends(require(...))`, then `*, conn: Conn`):
FastAPI resolves dependencies in the order they are declared, and the guard takes a connection of its
own for a moment; a handler holding one while its guard waits for another could, with the pool full of
such handlers, wait forever. `tests/unit/test_deps_order.py` fails on a route that declares them the
other way round.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import asyncpg
from fastapi import Depends, Request


async def _main(request: Request) -> AsyncIterator[asyncpg.Connection]:
    async with request.app.state.pool.acquire() as conn:
        yield conn


async def _reports(request: Request) -> AsyncIterator[asyncpg.Connection]:
    async with request.app.state.reports_pool.acquire() as conn:
        yield conn


Conn = Annotated[asyncpg.Connection, Depends(_main)]
ReportsConn = Annotated[asyncpg.Connection, Depends(_reports)]
BuiltReportsConn = Annotated[asyncpg.Connection, Depends(_reports, scope="function")]
