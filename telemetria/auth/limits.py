"""Login limits that every service process shares, counted in the audit log.

Every login that reaches a password check is in the audit log with the client's address (see
telemetria/forwarded.py), and all processes, on one host or several, write to the same log. So
the limits are counted there: they hold however many processes answer, and survive restarts.
Only the last minutes of the log are read, through its time index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from telemetria.auth import queries as q
from telemetria.db import Conn

ADDRESS_WINDOW_S = 60.0  # TELEMETRIA_LOGIN_ATTEMPTS_PER_MIN


@dataclass(frozen=True, slots=True)
class LoginLimits:
    attempts: tuple[datetime, ...]  # logins tried from this address in the last minute, oldest first
    now: datetime

    def address_wait_s(self, per_min: int) -> int:
        """0 when this address may try another login now, else whole seconds until it may."""
        if len(self.attempts) < per_min:
            return 0
        freed = self.attempts[len(self.attempts) - per_min] + timedelta(seconds=ADDRESS_WINDOW_S)
        return max(1, math.ceil((freed - self.now).total_seconds()))


async def login_limits(conn: Conn, ip: str | None) -> LoginLimits:
    row = await conn.fetchrow(q.LOGIN_LIMITS, ip, ADDRESS_WINDOW_S)
    return LoginLimits(tuple(row["attempts"]), row["now"])
