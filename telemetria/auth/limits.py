"""Login limits that every service process shares, counted in the audit log.

Two limits, and neither depends on whether the username exists, so the answers do not tell
which usernames do (an unknown or inactive user is counted like a wrong password):
- an address may try `login_attempts_per_min` logins a minute, whatever the usernames;
- an account may fail `login_max_failures` times from one address within `login_lockout_s`;
  then that address is locked out of that account until the oldest of those failures is that
  old. Other addresses are not: whoever guesses from addresses of their own cannot lock the
  owner out, and the owner, elsewhere, still logs in. A login from an address clears its count;
  an admin clears all of an account's (`telemetria user unlock`, or a new password).

Every login that reaches a password check is in the audit log with the attempted username and
the client's address (see telemetria/forwarded.py), and all processes, on one host or several,
write to the same log. So the limits are counted there: they hold however many processes answer,
survive restarts, and lifting one is appending an entry. Only the last minutes are read, through
the log's time index.
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
    failures: tuple[datetime, ...]  # this account's failures from this address that count, newest first
    now: datetime

    def address_wait_s(self, per_min: int) -> int:
        """0 when this address may try another login now, else whole seconds until it may."""
        if len(self.attempts) < per_min:
            return 0
        freed = self.attempts[len(self.attempts) - per_min] + timedelta(seconds=ADDRESS_WINDOW_S)
        return _seconds_until(freed, self.now)

    def lockout_wait_s(self, max_failures: int, lockout_s: float, failing_now: bool = False) -> int:
        """0 unless this address is locked out of this account (counting a failure now), else whole seconds left."""
        failures = (self.now, *self.failures) if failing_now else self.failures
        if lockout_s <= 0 or len(failures) < max_failures:
            return 0
        return _seconds_until(failures[max_failures - 1] + timedelta(seconds=lockout_s), self.now)


def _seconds_until(t: datetime, now: datetime) -> int:
    return max(1, math.ceil((t - now).total_seconds()))


async def login_limits(
    conn: Conn, username: str | None, ip: str | None, max_failures: int, lockout_s: float
) -> LoginLimits:
    """The counts for a login of `username` (None: it could not be a username) from `ip`."""
    row = await conn.fetchrow(q.LOGIN_LIMITS, username, ip, ADDRESS_WINDOW_S, lockout_s)
    now = row["now"]
    # Failures count within the lockout window, after the last login from this address and the
    # last time an admin lifted the lockout.
    since = max(t for t in (now - timedelta(seconds=lockout_s), row["last_login"], row["unlocked"]) if t is not None)
    failures = tuple(t for t in row["failures"] if t > since)[:max_failures]
    return LoginLimits(tuple(row["attempts"]), failures, now)
