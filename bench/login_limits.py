"""What the login limits cost: one read of the audit log's last 15 minutes per login, next to argon2.

    .venv/bin/python -m bench.login_limits [--quick]

The limits (telemetria/auth/limits.py) are counted in the audit log, which has no index but time,
so every login scans the login entries of the lockout window. Under a password-guessing attack
that window fills with failed logins, at most as fast as the service can check passwords (every
audited attempt spends one argon2 verification). This fills a throw-away database's audit log
with N failed logins spread over the last 15 minutes, from many addresses and usernames, and
times the limits query for a login from a fresh address (the slowest case: nothing to stop at)
next to one argon2 verification and the baseline of an empty log.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from bench.benchdb import BenchDb
from bench.table import ms, num, render
from telemetria.auth import passwords
from telemetria.auth import queries as q
from telemetria.settings import Settings

FILL = """
INSERT INTO audit_log (at, username, action, detail, ip)
SELECT now() - random() * interval '15 minutes', 'user' || (i % 500), 'auth.login_failed',
       '{"reason": "bad_password"}'::jsonb, ('10.' || (i % 250) || '.' || (i / 250 % 250) || '.1')::inet
FROM generate_series(1, $1) i"""


def argon2_s(reps: int) -> float:
    h = passwords.hash_password("a password of some length")
    t = []
    for _ in range(reps):
        start = time.perf_counter()
        passwords.verify(h, "a wrong password")
        t.append(time.perf_counter() - start)
    return statistics.median(t)


async def main(quick: bool) -> None:
    reps = 10 if quick else 40
    verify = argon2_s(5 if quick else 20)
    cores = os.cpu_count() or 1
    ceiling = int(cores / verify * 900)  # failed logins argon2 lets this machine check in 15 minutes
    sizes = [0, 10_000, ceiling] + ([] if quick else [50_000, 200_000])
    db = BenchDb.for_this_run(Settings())
    await db.create()
    rows = []
    try:
        conn = await db.connect()
        try:
            filled = 0
            for n in sorted(set(sizes)):
                await conn.execute(FILL, n - filled)
                filled = n
                await conn.execute("ANALYZE audit_log")
                args = ("admin", "203.0.113.5", 60.0, 900.0)
                for _ in range(3):
                    await conn.fetchrow(q.LOGIN_LIMITS, *args)
                t = []
                for _ in range(reps):
                    start = time.perf_counter()
                    await conn.fetchrow(q.LOGIN_LIMITS, *args)
                    t.append(time.perf_counter() - start)
                limits = statistics.median(t)
                label = "baseline: empty log" if n == 0 else ("argon2's ceiling" if n == ceiling else "")
                rows.append([num(n), label, ms(limits * 1000), ms(verify * 1000), f"{limits / verify * 100:.0f}%"])
        finally:
            await conn.close()
    finally:
        await db.drop()
    print(f"argon2 verification: {verify * 1000:.0f} ms (median); {cores} cores check at most {num(ceiling)} in 15 min")
    print(render(["failed logins in 15 min", "", "limits query ms", "argon2 ms", "limits/argon2"], rows))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions, no 50,000 and 200,000 rows")
    asyncio.run(main(p.parse_args().quick))
