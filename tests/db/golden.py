"""Report bytes pinned per rules' version (issue 37: speed work must not change a figure).

A test computes its answers, names them and calls `check(path, answers)`: their SHA-256 must be the ones stored in
`path` (tests/data/reports_golden/*.json) with the `ANALYSIS_VERSION` (reports/knobs.py) that gave them. A change
of the rules that changes a figure must bump the version (which outdates every stored rollup); after such a bump,
write the new digests with TELEMETRIA_WRITE_GOLDEN=1 and say in the commit what changed and why.
"""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from telemetria.reports import knobs

DIR = Path(__file__).resolve().parents[1] / "data" / "reports_golden"
# The nine reports (issue 5), each over the whole period and the whole fleet, as the API answers them in JSON.
REPORTS: tuple[tuple[str, dict[str, str]], ...] = (
    ("km", {}), ("km-by-day", {"by": "day"}), ("summary", {}), ("trips", {}), ("stops", {}), ("speeding", {}),
    ("route-deviation", {}), ("track", {}), ("reporting", {}), ("schedule", {}),
)  # fmt: skip


async def reports(
    client: httpx.AsyncClient, headers: dict[str, str], first: date, last: date
) -> tuple[dict[str, bytes], dict[str, Any] | None]:
    """Every report over first..last, JSON, and the km report's `vehicle_days` (where the days came from, rollups
    or fixes: left out of the bytes, it is what the comparisons vary)."""
    out, sources = {}, None
    for name, extra in REPORTS:
        path = "/api/v1/reports/" + name.removesuffix("-by-day")
        params = {"from": first.isoformat(), "to": last.isoformat(), **extra}
        r = await client.get(path, params=params, headers=headers)
        assert r.status_code == 200, (name, r.text)
        doc = orjson.loads(r.content)
        if name == "km":
            sources = doc["vehicle_days"]
        doc.pop("vehicle_days", None)
        out[name] = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    return out, sources


def check(path: Path, answers: dict[str, bytes]) -> None:
    """`answers` (name → bytes) against the digests pinned in `path` for this ANALYSIS_VERSION."""
    got = {name: hashlib.sha256(body).hexdigest() for name, body in answers.items()}
    if os.environ.get("TELEMETRIA_WRITE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"analysis_version": knobs.ANALYSIS_VERSION, "sha256": got}
        path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    want = orjson.loads(path.read_bytes())
    assert sorted(want["sha256"]) == sorted(got), f"{path.name}: other answers than those pinned: write the golden"
    changed = sorted(name for name in got if got[name] != want["sha256"][name])
    if want["analysis_version"] == knobs.ANALYSIS_VERSION:
        assert not changed, f"{changed}: figures changed without a new ANALYSIS_VERSION (reports/knobs.py)"
    else:
        assert changed, f"a new ANALYSIS_VERSION that changes no answer of {path.name}: write the golden again"
        pytest.fail(f"ANALYSIS_VERSION {knobs.ANALYSIS_VERSION} (golden: {want['analysis_version']}): write the golden")
