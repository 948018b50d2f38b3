"""The frozen evidence's canonical bytes and digest (pure): the same evidence always gives the same SHA-256."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import orjson
import pytest

from telemetria.occurrences.process.evidence import build, canonical, sha256, span

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
FIXES = [
    {"ts": T0, "lat": -10.44, "lon": -62.47, "speed_kmh": 61.5, "received_at": T0 + timedelta(seconds=2),
     "extra": "not evidence"},
]  # fmt: skip
REGISTRY = [{"id": 7, "kind": "vehicle", "item_id": 3, "valid_from": date(2026, 2, 1), "data": {"b": 1, "a": 2}}]
OCCURRENCE = {
    "id": 1, "kind": "speeding", "start": T0, "end": T0 + timedelta(minutes=2), "facts": {"max_kmh": 61.5},
    "fine_brl": Decimal("94.20"), "history": [{"action": "detected"}], "attachments": [], "evidence_sha256": None,
}  # fmt: skip


def test_canonical_bytes_do_not_depend_on_key_order_or_zone() -> None:
    a = canonical({"b": 1, "a": {"y": T0, "x": [Decimal("1.50"), date(2026, 3, 2)]}})
    later_zone = T0.astimezone(timezone(timedelta(hours=-4)))
    b = canonical({"a": {"x": [Decimal("1.50"), date(2026, 3, 2)], "y": later_zone}, "b": 1})
    assert a == b == b'{"a":{"x":["1.50","2026-03-02"],"y":"2026-03-02T11:00:00+00:00"},"b":1}'
    assert sha256(a) == hashlib.sha256(a).hexdigest() and len(sha256(a)) == 64


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError):
        canonical({"at": datetime(2026, 3, 2, 11, 0)})


def test_the_document_has_the_spec_shape() -> None:
    doc = build(OCCURRENCE, FIXES, REGISTRY, frozen_by="monitor", frozen_at=T0 + timedelta(days=1))
    assert set(doc) == {"occurrence", "fixes", "facts", "registry", "frozen_at", "frozen_by"}
    assert "history" not in doc["occurrence"] and "evidence_sha256" not in doc["occurrence"]
    assert doc["fixes"] == [{k: FIXES[0][k] for k in ("ts", "lat", "lon", "speed_kmh", "received_at")}]
    assert doc["facts"] == {"max_kmh": 61.5}
    (reg,) = doc["registry"]
    assert reg == {"kind": "vehicle", "item_id": 3, "valid_from": date(2026, 2, 1), "version": 7,
                   "digest": hashlib.sha256(b'{"a":2,"b":1}').hexdigest()}  # fmt: skip
    parsed = orjson.loads(canonical(doc))
    assert parsed["occurrence"]["fine_brl"] == "94.20" and parsed["frozen_at"] == "2026-03-03T11:00:00+00:00"


def test_a_changed_fix_changes_the_digest() -> None:
    one = canonical(build(OCCURRENCE, FIXES, REGISTRY, frozen_by="m", frozen_at=T0))
    moved = [{**FIXES[0], "lat": -10.4401}]
    assert sha256(one) != sha256(canonical(build(OCCURRENCE, moved, REGISTRY, frozen_by="m", frozen_at=T0)))
    assert one == canonical(build(OCCURRENCE, [dict(FIXES[0])], REGISTRY, frozen_by="m", frozen_at=T0))


def test_the_fixes_span_ten_minutes_either_side() -> None:
    assert span(T0, T0 + timedelta(minutes=2)) == (T0 - timedelta(minutes=10), T0 + timedelta(minutes=12))
    assert span(T0, None) == (T0 - timedelta(minutes=10), T0 + timedelta(minutes=10))
