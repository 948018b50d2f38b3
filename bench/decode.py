"""Decoding our JSON API's bodies: the typed msgspec path against the general path and pydantic, per fix.

    .venv/bin/python -m bench.decode [--repeat N]

Pure CPU, no database, no server. Three ways to turn the same bodies (one fix; 1,000 fixes in
`{"fixes": [...]}`, with the fields a tracker usually sends) into `Fix | Rejected` items:

- general: orjson into dicts, then `decode_fix` per item (what ingest did before msgspec);
- typed: `decode_body`, msgspec's compiled decoder into structs, then one `Fix` per struct (ingest now);
- msgspec alone: only the typed parse into structs (no `Fix` built), the part the library does;
- pydantic: a TypeAdapter over a TypedDict of the same fields (pydantic-core, also compiled), for comparison;
  it would still need the `Fix` built from its dicts, which is not counted here.

Prints µs per fix for each and the ratio general ÷ typed, best of N repetitions (so the figures are this
machine's least-disturbed, which matters on a shared machine). Exits 1 if the typed path is not faster
than the general one on both bodies.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NotRequired

import orjson
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from telemetria.ingest.decode import _typed, decode_body, decode_items, parse_body

T0 = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)


class _FixDict(TypedDict):
    ts: datetime
    lat: float
    lon: float
    speed_kmh: NotRequired[float | None]
    heading_deg: NotRequired[float | None]
    altitude_m: NotRequired[float | None]
    accuracy_m: NotRequired[float | None]
    hdop: NotRequired[float | None]
    satellites: NotRequired[int | None]
    ignition: NotRequired[bool | None]
    odometer_m: NotRequired[float | None]
    driver_id: NotRequired[str | None]
    valid: NotRequired[bool]


class _BatchDict(TypedDict):
    fixes: list[_FixDict]


def fixes(n: int) -> list[dict[str, Any]]:
    return [
        {
            "ts": (T0 + timedelta(seconds=10 * i)).isoformat(),
            "lat": -10.43 + i * 1e-5,
            "lon": -62.47 - i * 1e-5,
            "speed_kmh": 42.5,
            "heading_deg": 181.0,
            "accuracy_m": 4.0,
            "satellites": 9,
            "ignition": True,
        }
        for i in range(n)
    ]


def best_us_per_fix(fn: Callable[[bytes], object], body: bytes, n_fixes: int, repeat: int) -> float:
    loops = max(1, 20_000 // n_fixes)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            fn(body)
        best = min(best, time.perf_counter() - start)
    return best / loops / n_fixes * 1e6


def general(body: bytes) -> object:
    items, batch = parse_body(body, 10_000)
    return decode_items(items), batch


def typed(body: bytes) -> object:
    return decode_body(body, 10_000)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.decode", description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=7, help="repetitions, the best is kept (default 7)")
    args = p.parse_args(argv)
    one_fix = TypeAdapter(_FixDict)
    batch = TypeAdapter(_BatchDict)
    bodies: dict[str, tuple[bytes | None, int, TypeAdapter[Any]]] = {
        "one fix": (orjson.dumps(fixes(1)[0]), 1, one_fix),
        "1,000 fixes": (None, 1_000, batch),
    }
    head = ["general µs/fix", "typed µs/fix", "msgspec alone", "pydantic µs/fix", "general ÷ typed"]
    print(f"{'body':12} " + " ".join(f"{h:>15}" for h in head))
    ok = True
    for name, (body, n, adapter) in bodies.items():
        body = body or orjson.dumps({"fixes": fixes(n)})
        assert general(body) == typed(body)
        g = best_us_per_fix(general, body, n, args.repeat)
        t = best_us_per_fix(typed, body, n, args.repeat)
        ms = best_us_per_fix(_typed, body, n, args.repeat)
        pd = best_us_per_fix(adapter.validate_json, body, n, args.repeat)
        print(f"{name:12} {g:15.2f} {t:15.2f} {ms:15.2f} {pd:15.2f} {g / t:14.2f}×")
        ok = ok and t < g
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
