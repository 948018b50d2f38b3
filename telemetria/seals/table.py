"""The seals table every track export ends with: which daily seals (vehicle, day, version, digest) it was cut from.

One row per vehicle-day the export covers that is sealed, with the export's window clipped to that local day
(`De (UTC)`/`Até (UTC)`, ISO 8601 with `Z`): the verifier (seals/verify.py) compares the file's rows of that day
with the seal's canonical lines inside that window. Pure: the track report (reports/kinds/track.py) fetches the
refs and clips them here; the CSV, XLSX, PDF, GeoJSON, GPX and KML writers only write what `cells` gives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from typing import Any

from telemetria.localtime import day_bounds
from telemetria.seals.model import SealRef

CSV_TITLE = "Selos diários"  # the first cell of the CSV's seals header (after the empty line that ends the rows)
CSV_MARK = "selo"  # the first cell of each of its rows
SHEET = "Selos"  # the XLSX sheet
COLUMNS = ("Veículo (id)", "Placa", "Dia", "Versão", "Posições", "SHA-256", "De (UTC)", "Até (UTC)")
KEYS = ("vehicle_id", "plate", "day", "version", "fixes", "sha256", "from", "to")  # a row as `cells` gives it


def iso(t: datetime) -> str:
    """An instant as the table writes it: UTC, to the second, `Z` (`2026-03-02T04:00:00Z`)."""
    if t.tzinfo is None:
        raise ValueError(f"naive datetime in a seals table: {t!r}")
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def clip(day: date, start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """The window [start, end) clipped to the local day `day` (the service's zone), in UTC."""
    d0, d1 = day_bounds(day)
    return max(start, d0).astimezone(UTC), min(end, d1).astimezone(UTC)


def clipped(refs: Iterable[SealRef], start: datetime, end: datetime) -> list[SealRef]:
    """The refs with their `start`/`end` set to the export's window clipped to their day, by vehicle and day."""
    out = []
    for r in refs:
        a, b = clip(r.day, start, end)
        out.append(dataclasses.replace(r, start=a, end=b))
    return sorted(out, key=lambda r: (r.vehicle_id, r.day, r.version))


def whole_day(day: date, start: datetime, end: datetime) -> bool:
    """Whether [start, end) is exactly the local day `day` (then the digest itself is compared too)."""
    d0, d1 = day_bounds(day)
    return start == d0 and end == d1


def cells(ref: SealRef) -> dict[str, Any]:
    """A ref as a row of the table (keys KEYS): the day a date, the window as ISO text."""
    if ref.start is None or ref.end is None:
        raise ValueError(f"a seal named by an export needs its window: {ref!r}")
    return {
        "vehicle_id": ref.vehicle_id, "plate": ref.plate, "day": ref.day, "version": ref.version, "fixes": ref.fixes,
        "sha256": ref.sha256, "from": iso(ref.start), "to": iso(ref.end),
    }  # fmt: skip


def as_json(refs: Sequence[SealRef]) -> list[dict[str, Any]]:
    """The table as GeoJSON's top-level `"seals"` holds it: `date` ISO (as GET /api/v1/seals), the rest as `cells`."""
    out = []
    for r in refs:
        c = cells(r)
        out.append({"vehicle_id": c["vehicle_id"], "plate": c["plate"], "date": r.day.isoformat(),
                    **{k: c[k] for k in ("version", "fixes", "sha256", "from", "to")}})  # fmt: skip
    return out


def as_text(ref: SealRef) -> str:
    """One seal in one line, for GPX's `<desc>`: `12 ABC1D23 2026-03-02 v1 1234 <sha256> 2026-...Z/2026-...Z`."""
    c = cells(ref)
    return f"{c['vehicle_id']} {c['plate']} {ref.day.isoformat()} v{c['version']} {c['fixes']} {c['sha256']} " + (
        f"{c['from']}/{c['to']}"
    )
