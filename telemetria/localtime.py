"""Local time at the edges: naive date-times people type are in the municipality's zone (no DST in Rondônia)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BeforeValidator

LOCAL_TZ = ZoneInfo("America/Porto_Velho")  # UTC−4 all year


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """The instants a local day (the service's zone: the rollups', the seals') starts and ends."""
    start = datetime.combine(day, time(), LOCAL_TZ)
    return start, datetime.combine(day + timedelta(days=1), time(), LOCAL_TZ)


def as_local(value: Any) -> Any:
    """A date (its midnight) or a naive date-time → aware, in LOCAL_TZ; anything else passes through."""
    if isinstance(value, str) and value.strip():
        text = value.strip().replace("z", "Z")
        try:
            value = datetime.fromisoformat(text) if len(text) > 10 else date.fromisoformat(text)
        except ValueError:
            return value  # pydantic says what is wrong with it
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=LOCAL_TZ)
    if isinstance(value, date):
        return datetime.combine(value, time(), LOCAL_TZ)
    return value


# An instant given as RFC 3339 with an offset, or as local date / date-time without one.
LocalDateTime = Annotated[AwareDatetime, BeforeValidator(as_local)]
