"""bench.profile reads py-spy's collapsed stacks: below the event loop's entry, own and inclusive, by area."""

from __future__ import annotations

from bench.profile import LOOP_ITSELF, Profile, area, short

ENTRY = (
    'process 7:"python telemetria serve";<module> (telemetria);main (telemetria/cli.py);Runner.run (asyncio/runners.py)'
)
RAW = "\n".join(
    [
        f"{ENTRY};post_fixes (telemetria/ingest/api.py);decode_fix (telemetria/ingest/decode.py) 30",
        f"{ENTRY};post_fixes (telemetria/ingest/api.py) 10",
        f"{ENTRY};Writer._run (telemetria/ingest/writer.py);Connection._do_execute (/v/site-packages/asyncpg/x.py) 50",
        f"{ENTRY} 10",
        "",
        "not a stack line",
    ]
)


def test_stacks_start_below_the_event_loop_and_count_own_and_inclusive_samples() -> None:
    p = Profile.parse(RAW)
    assert p.samples == 100
    assert p.own()["post_fixes (telemetria/ingest/api.py)"] == 10
    assert p.inclusive()["post_fixes (telemetria/ingest/api.py)"] == 40
    assert p.own()[LOOP_ITSELF] == 10
    assert not any("cli.py" in f for f in p.inclusive())


def test_samples_are_grouped_by_the_innermost_frames_package() -> None:
    areas = Profile.parse(RAW).areas()
    assert areas == {"asyncpg": 50, "telemetria.ingest": 40, "asyncio": 10}
    assert area("send (/v/lib/python3.11/site-packages/uvicorn/protocols/http/h.py)").startswith("uvicorn")
    assert short("f (/v/lib/python3.11/site-packages/asyncpg/x.py)") == "f (asyncpg/x.py)"
