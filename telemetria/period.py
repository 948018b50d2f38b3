"""Periods people ask for: `from` and `to` name the first and the last day, minute or second included.

One rule for every period of the service (reports, history, audit log, file names): `to` is
inclusive at the precision it is written in, so it becomes the exclusive instant that follows what
it names: a date → the next midnight, `HH:MM` → the next minute, `HH:MM:SS` → the next second,
a fraction → the next microsecond. "Até 23/11" and "até 23/11 23:59" therefore both end at
24/11 00:00, and a day's last minute is never lost. Inside, a period is the half-open [start, end).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from telemetria.http import FieldError

_TIME = re.compile(r"[T ](\d{2})(:\d{2})?(:\d{2})?([.,]\d+)?")
_STEPS = (timedelta(hours=1), timedelta(minutes=1), timedelta(seconds=1), timedelta(microseconds=1))


def instant(text: str, tz: ZoneInfo, field: str, *, end: bool = False) -> datetime:
    """An RFC 3339 instant, a local date-time or a date, in UTC; as `end`, the instant after what it names.

    In UTC because Python compares and subtracts two datetimes of the same zone by their wall
    clocks: in a zone with daylight saving, a 23 h day would measure 24 h.
    """
    text = text.strip()
    try:
        if len(text) <= 10:
            d = date.fromisoformat(text)
            return datetime.combine(d + timedelta(days=1 if end else 0), time(), tz).astimezone(UTC)
        value = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise FieldError(
            f"{field}: {text!r} is not a date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM)", field
        ) from None
    except OverflowError:  # the day after 9999-12-31
        raise FieldError(f"{field}: {text!r} is out of the range of dates", field) from None
    try:
        at = (value if value.tzinfo else value.replace(tzinfo=tz)).astimezone(UTC)
        return at + _precision(text) if end else at
    except OverflowError:  # 0001-01-01T00:00+14:00 in UTC, or the instant after 9999-12-31T23:59
        raise FieldError(f"{field}: {text!r} is out of the range of dates", field) from None


def _precision(text: str) -> timedelta:
    """The unit of the last time field written: an hour, a minute, a second or a microsecond."""
    m = _TIME.search(text, 10)
    if m is None:
        return timedelta(days=1)
    return _STEPS[sum(g is not None for g in m.groups()) - 1]


def last_included(start: datetime, end: datetime, tz: ZoneInfo) -> tuple[str, str]:
    """The period [start, end) as people read it, in zone `tz`: (first, last included), ISO-like.

    Whole days are dates (`2026-11-23`); otherwise minutes (`2026-11-23T08:00`), or seconds when
    the ends are not whole minutes. The last one is the day, minute or second before `end`.
    """
    a, b = start.astimezone(tz), end.astimezone(tz)
    if a.time() == time() and b.time() == time():
        return a.date().isoformat(), (b - timedelta(days=1)).date().isoformat()
    if a.second == a.microsecond == b.second == b.microsecond == 0:
        return f"{a:%Y-%m-%dT%H:%M}", f"{b - timedelta(minutes=1):%Y-%m-%dT%H:%M}"
    return f"{a:%Y-%m-%dT%H:%M:%S}", f"{b - timedelta(seconds=1):%Y-%m-%dT%H:%M:%S}"
