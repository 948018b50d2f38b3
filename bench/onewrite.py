"""The answer written once (telemetria/onewrite.py) against uvicorn's two writes, on the bare no-op.

    .venv/bin/python -m bench.onewrite [--pairs N] [--duration S] [--conns C]

No database. Serves bench/noop_app.py's bare route (orjson parse, 40-byte JSON answer) under uvicorn
with uvloop, once with uvicorn's httptools protocol and once with `OneWriteHttpTools`, alternating
(which goes first alternates too, so a burst of load from other work on the machine hits both alike),
and drives each with wrk (one thread, a single-fix POST). Prints req/s of every run, the medians and
their ratio, and the server's CPU time per request (user + system, from /proc: the steadier figure when
other work shares the machine). Exits 1 if the one-write protocol costs more than 3 % more CPU per
request than uvicorn's (the reverted first attempt served about 12 % fewer requests).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.procs import free_port
from bench.wrk import ensure_wrk

BODY = '{"ts":"2026-12-01T10:00:00.000Z","lat":-10.43,"lon":-62.47,"speed_kmh":40.0,"heading_deg":90}'
LUA = f"""
wrk.method = "POST"
wrk.body = '{BODY}'
wrk.headers["Content-Type"] = "application/json"
"""
SERVE = """
import sys, uvicorn
from telemetria.onewrite import OneWriteHttpTools
http = OneWriteHttpTools if sys.argv[1] == "one" else "httptools"
uvicorn.run("bench.noop_app:bare", host="127.0.0.1", port=int(sys.argv[2]), loop="uvloop", http=http,
            access_log=False, log_level="warning")
"""
PROTOCOLS = {"two": "uvicorn httptools (head, then body)", "one": "onewrite.OneWriteHttpTools"}


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(kind: str, wrk: str, lua: Path, conns: int, duration_s: float) -> tuple[float, float]:
    """req/s and the server's CPU µs per request of one run."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVE, kind, str(port)], start_new_session=True)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        cmd = [wrk, "-t1", f"-c{conns}", f"-d{duration_s:g}s", "-s", str(lua), f"http://127.0.0.1:{port}/api/v1/fixes"]
        cpu = _cpu_s(proc.pid)
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        cpu = _cpu_s(proc.pid) - cpu
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if "Non-2xx" in out:
        raise RuntimeError(f"non-2xx answers from the {kind} server:\n{out}")
    rate, count = re.search(r"Requests/sec:\s+([\d.]+)", out), re.search(r"(\d+) requests in", out)
    if rate is None or count is None:
        raise RuntimeError(f"no request count in wrk's output:\n{out}")
    return float(rate.group(1)), cpu * 1e6 / max(int(count.group(1)), 1)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=5, help="alternating pairs of runs (default 5)")
    p.add_argument("--duration", type=float, default=5, help="seconds per run (default 5)")
    p.add_argument("--conns", type=int, default=32, help="wrk connections (default 32)")
    args = p.parse_args()
    wrk = ensure_wrk()
    got: dict[str, list[float]] = {"two": [], "one": []}
    cpu: dict[str, list[float]] = {"two": [], "one": []}
    with tempfile.TemporaryDirectory() as tmp:
        lua = Path(tmp) / "post.lua"
        lua.write_text(LUA)
        for i in range(args.pairs):
            for kind in ("two", "one") if i % 2 == 0 else ("one", "two"):
                rate, us = run(kind, wrk, lua, args.conns, args.duration)
                got[kind].append(rate)
                cpu[kind].append(us)
                print(f"pair {i + 1}  {kind}  {rate:>9,.0f} req/s  {us:5.1f} µs CPU/request", flush=True)
    medians = {k: statistics.median(v) for k, v in got.items()}
    cpu_medians = {k: statistics.median(v) for k, v in cpu.items()}
    for kind, label in PROTOCOLS.items():
        print(
            f"{label:<40} median {medians[kind]:>9,.0f} req/s, {cpu_medians[kind]:5.1f} µs server CPU a request"
            f"  ({', '.join(f'{x:,.0f}' for x in got[kind])})"
        )
    ratio, cpu_ratio = medians["one"] / medians["two"], cpu_medians["one"] / cpu_medians["two"]
    print(
        f"one write / two writes: {ratio:.3f} req/s, {cpu_ratio:.3f} CPU a request"
        f"  ({args.pairs} pairs, {args.conns} connections, {args.duration:g} s each)"
    )
    # CPU per request is the steadier figure on a shared machine: the verdict is on it.
    return 0 if cpu_ratio <= 1.03 else 1


if __name__ == "__main__":
    sys.exit(main())
