"""Pure parts of operations: metric labels and bulk histograms, JSON logs, settings file, DSNs, cutoffs."""

from __future__ import annotations

import io
import logging
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Histogram
from pydantic import ValidationError

from telemetria import fix as reasons
from telemetria import metrics
from telemetria.fix import Fix, Rejected
from telemetria.ingest.rows import NOT_INSTALLED, TRACKER_INACTIVE, IngestResult, Request, plan
from telemetria.ingest.validate import Limits, validate
from telemetria.logs import JsonFormatter, request_id
from telemetria.ops.backup import compare, libpq_target
from telemetria.ops.retention import RetentionError, cutoff_for
from telemetria.settings import Settings, SettingsError

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)
GOOD = Fix(ts=NOW, lat=-10.0, lon=-62.0)


@pytest.mark.parametrize(
    ("fix", "code"),
    [
        (replace(GOOD, ts=NOW + timedelta(hours=1)), "ts_future"),
        (replace(GOOD, ts=NOW - timedelta(days=800)), "ts_too_old"),
        (replace(GOOD, lat=91.0), "lat/lon"),
        (replace(GOOD, lat=0.0, lon=0.0), "lat/lon"),
        (replace(GOOD, speed_kmh=400.0), "speed_kmh"),
        (replace(GOOD, hdop=-1.0), "hdop"),
        (replace(GOOD, satellites=300), "satellites"),
        (replace(GOOD, heading_deg=float("nan")), "heading_deg"),
        (replace(GOOD, driver_id="x" * 500), "driver_id"),
        (replace(GOOD, attributes={str(i): i for i in range(1000)}), "attributes"),
    ],
)
def test_each_check_rejects_with_its_reason_code(fix: Fix, code: str) -> None:
    _, _, bad = validate([GOOD, fix], NOW, Limits())
    assert [(r.index, r.reason) for r in bad] == [(1, code)]
    assert code in reasons.REASONS


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("timestamp: '9999999999999999' is out of range", "ts"),
        ("ts: required, as RFC 3339 text or epoch seconds/milliseconds", "ts"),
        ("lat/lon: required", "lat/lon"),
        ("bearing: 'x' is not a number", "bearing"),
        ("unstorable: DataError: boom", "unstorable"),
        ("someone's-free-text: 123", "other"),
        ("no colon at all", "other"),
    ],
)
def test_a_decoders_rejection_has_the_code_of_the_field_it_names(error: str, code: str) -> None:
    assert Rejected(0, error).reason == code
    assert Rejected(0, error).as_json() == {"index": 0, "error": error}  # the code is not part of the answer


def test_rows_reject_with_their_codes() -> None:
    req = Request(tracker_id=1, indexes=[0], fixes=[GOOD])
    inactive = plan([req], {1: False}, {})
    assert [(r.error, r.reason) for r in inactive.results[0].rejected] == [(TRACKER_INACTIVE, "tracker_inactive")]
    nowhere = plan([req], {1: True}, {})
    assert [(r.error, r.reason) for r in nowhere.results[0].rejected] == [(NOT_INSTALLED, "not_installed")]


def test_rejections_are_counted_by_their_code() -> None:
    def count(reason: str) -> float:
        return REGISTRY.get_sample_value("telemetria_ingest_rejected_total", {"protocol": "t", "reason": reason}) or 0.0

    before = count("hdop"), count("other")
    bad = [Rejected(0, "free text the code is not read from", "hdop"), Rejected(1, "no colon")]
    metrics.observe_ingest("t", 2, IngestResult(rejected=bad))
    assert (count("hdop") - before[0], count("other") - before[1]) == (1.0, 1.0)


def test_bulk_observation_equals_one_observe_per_value() -> None:
    rng = random.Random(7)
    amounts = [rng.choice([0.0, 1.0, 5.0, 1e9]) for _ in range(50)] + [rng.uniform(-5, 5000) for _ in range(500)]
    buckets = (1, 5, 10, 60, 600)
    one, bulk = CollectorRegistry(), CollectorRegistry()
    h1 = Histogram("h", "h", buckets=buckets, registry=one)
    h2 = Histogram("h", "h", buckets=buckets, registry=bulk)
    for a in amounts:
        h1.observe(a)
    metrics.observe_many(h2, amounts)
    metrics.observe_many(h2, [])
    s1 = {
        (s.name, tuple(s.labels.items())): s.value for m in one.collect() for s in m.samples if "created" not in s.name
    }
    s2 = {
        (s.name, tuple(s.labels.items())): s.value for m in bulk.collect() for s in m.samples if "created" not in s.name
    }
    assert s1.keys() == s2.keys()
    for key, value in s1.items():
        assert s2[key] == pytest.approx(value, rel=1e-12), key


async def test_timed_report_records_duration_and_outcome() -> None:
    def count(outcome: str) -> float:
        labels = {"report": "unit_test_report", "outcome": outcome}
        return REGISTRY.get_sample_value("telemetria_report_duration_seconds_count", labels) or 0.0

    @metrics.timed_report("unit_test_report")
    async def report(fail: bool) -> int:
        if fail:
            raise ValueError("boom")
        return 42

    ok0, err0 = count("ok"), count("error")
    assert await report(False) == 42
    with pytest.raises(ValueError):
        await report(True)
    assert (count("ok"), count("error")) == (ok0 + 1, err0 + 1)


def test_json_log_lines_carry_the_request_id() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("telemetria.test_json_logs")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        token = request_id.set("abc-123")
        try:
            logger.warning("flush of %d requests failed", 3)
        finally:
            request_id.reset(token)
        logger.warning("outside a request")
    finally:
        logger.removeHandler(handler)
    first, second = (orjson.loads(line) for line in stream.getvalue().splitlines())
    assert first["msg"] == "flush of 3 requests failed" and first["request_id"] == "abc-123"
    assert first["level"] == "warning" and first["logger"] == "telemetria.test_json_logs" and "ts" in first
    assert "request_id" not in second


def test_settings_file_is_read_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / "telemetria.env"
    env.write_text("# production\nTELEMETRIA_PORT=9001\nTELEMETRIA_WORKERS=4\nOTHER_TOOL=x\n")
    monkeypatch.setenv("TELEMETRIA_ENV_FILE", str(env))
    monkeypatch.setenv("TELEMETRIA_WORKERS", "2")
    s = Settings()
    assert (s.port, s.workers) == (9001, 2)

    env.write_text("TELEMETRIA_PROT=9001\n")
    with pytest.raises(SettingsError, match="TELEMETRIA_PROT"):
        Settings()
    env.write_text("TELEMETRIA_RETENTION_DAYS=700\n")
    with pytest.raises(ValidationError, match="2 years"):
        Settings()
    monkeypatch.setenv("TELEMETRIA_ENV_FILE", str(tmp_path / "missing.env"))
    with pytest.raises(SettingsError, match="not a file"):
        Settings()


def test_retention_under_two_years_is_refused_everywhere() -> None:
    with pytest.raises(ValidationError, match=r"Art\. 15"):
        Settings(retention_days=729)
    now = datetime(2026, 6, 15, 12, tzinfo=UTC)
    assert cutoff_for(now, 730) == now - timedelta(days=730)
    with pytest.raises(RetentionError, match="2 years"):
        cutoff_for(now, 729)


def test_passwords_go_to_the_environment_not_the_command_line() -> None:
    assert libpq_target("postgresql:///db?host=/run/pg&port=5433&user=telemetria") == (
        "postgresql:///db?host=/run/pg&port=5433&user=telemetria",
        {},
    )
    assert libpq_target("postgresql://app:s%3Acret@db:5432/telemetria?sslmode=require") == (
        "postgresql://app@db:5432/telemetria?sslmode=require",
        {"PGPASSWORD": "s:cret"},
    )
    assert libpq_target("postgresql://db/t?user=u&password=pw") == ("postgresql://db/t?user=u", {"PGPASSWORD": "pw"})


def test_manifest_comparison_names_each_difference() -> None:
    manifest: dict[str, Any] = {
        "tables": {"public.fixes": 10, "public.vehicles": 2},
        "time_ranges": {"public.fixes": {"column": "ts", "min": "a", "max": "b"}},
        "versions": {"schema_migrations": [1, 2]},
    }
    same = {
        "tables": dict(manifest["tables"]),
        "time_ranges": manifest["time_ranges"],
        "versions": manifest["versions"],
    }
    assert compare(manifest, same) == []
    other = {**same, "tables": {"public.fixes": 9, "public.vehicles": 2, "public.extra": 0}}
    problems = compare(manifest, other)
    assert any("public.fixes: 9 rows, manifest says 10" in p for p in problems)
    assert any("public.extra" in p for p in problems)


def test_cached_metric_children_count_in_the_series_labels_names() -> None:
    def requests() -> float:
        labels = {"protocol": "cached", "status": "418"}
        return REGISTRY.get_sample_value("telemetria_ingest_requests_total", labels) or 0.0

    def fixes(outcome: str) -> float:
        labels = {"protocol": "cached", "outcome": outcome}
        return REGISTRY.get_sample_value("telemetria_ingest_fixes_total", labels) or 0.0

    before = requests(), fixes("accepted"), fixes("rejected")
    for _ in range(2):  # the second time from the cache
        metrics.observe_request("cached", 418)
        metrics.observe_ingest("cached", 3, IngestResult(accepted=2, rejected=[Rejected(2, "hdop: x")]))
    after = requests(), fixes("accepted"), fixes("rejected")
    assert [a - b for a, b in zip(after, before, strict=True)] == [2.0, 4.0, 2.0]
    assert REGISTRY.get_sample_value("telemetria_ingest_batch_fixes_count", {"protocol": "cached"}) == 2.0
