"""The load generator: wrk (C, one thread) driving bench/fixes.lua, and its output parsed."""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bench.keys import Run

LUA_SCRIPT = Path(__file__).with_name("fixes.lua")
# One wrk thread: on 2 cores every cycle wrk spends is taken from the server it measures.
WRK_THREADS = 1
_UNITS_US = {"us": 1.0, "ms": 1_000.0, "s": 1_000_000.0, "m": 60_000_000.0}


@dataclass(slots=True)
class WrkResult:
    requests: int = 0  # answered
    duration_s: float = 0.0
    generated: int = 0  # built by request(); the ones not answered were cut off when wrk stopped
    statuses: dict[int, int] = field(default_factory=dict)
    accepted: int = 0  # fixes the 2xx bodies say were stored
    duplicates: int = 0  # fixes the 2xx bodies say were already stored
    rejected: int = 0  # fixes the 2xx bodies list as rejected
    runs: list[Run] = field(default_factory=list)  # each request number's outcome (bench/keys.py)
    miscounted: int = 0  # 2xx answers whose body did not report all their fixes stored
    unidentified: int = 0  # answers that did not echo the request id fixes.lua sent
    socket_errors: dict[str, int] = field(default_factory=dict)
    p50_ms: float = 0.0
    p90_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    cpu_s: float = 0.0  # wrk's own user+system time

    @property
    def ok(self) -> int:
        return sum(n for code, n in self.statuses.items() if 200 <= code < 300)

    @property
    def non_2xx(self) -> dict[int, int]:
        return {code: n for code, n in sorted(self.statuses.items()) if not 200 <= code < 300}

    @property
    def ok_per_s(self) -> float:
        """2xx answers a second: throughput counts nothing else."""
        return self.ok / self.duration_s if self.duration_s else 0.0


def ensure_wrk() -> str:
    """Path of wrk, installing Debian's package when it is missing (a bench-only tool)."""
    found = shutil.which("wrk")
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "wrk"], check=False, env=env, capture_output=True)
    found = shutil.which("wrk")
    if not found:
        subprocess.run([*sudo, "apt-get", "update", "-qq"], check=False, capture_output=True)
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "wrk"], check=False, env=env, capture_output=True)
        found = shutil.which("wrk")
    if not found:
        raise RuntimeError("wrk is not installed and `apt-get install wrk` failed")
    return found


def wrk_version(wrk: str) -> str:
    out = subprocess.run([wrk, "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).splitlines()[0].split(" Copyright")[0].strip()


def run_wrk(
    wrk: str,
    url: str,
    *,
    connections: int,
    duration_s: float,
    tokens_file: Path,
    fixes_per_request: int,
    base_ms: int,
    step_ms: int,
    log: Path,
    script: Path = LUA_SCRIPT,
) -> WrkResult:
    """Run wrk for `duration_s` at `connections` with `script` (fixes.lua, or traccar.lua for the gateway's
    bodies: the same arguments and output); its full output is kept in `log`."""
    args = [
        wrk,
        f"-t{WRK_THREADS}",
        f"-c{connections}",
        f"-d{max(1, round(duration_s))}s",
        "--timeout",
        "30s",  # a slow 1,000-fix batch is a latency figure, not an error
        "--latency",
        "-s",
        str(script),
        url,
        "--",
        str(tokens_file),
        str(fixes_per_request),
        str(base_ms),
        str(step_ms),
        str(WRK_THREADS),
    ]
    # wrk is the only child reaped while it runs, so the children's rusage delta is its CPU time.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or "BENCH summary" not in proc.stdout:
        raise RuntimeError(f"wrk failed (exit {proc.returncode}), see {log}:\n{proc.stderr[-2000:]}")
    result = parse(proc.stdout)
    result.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def parse(out: str) -> WrkResult:
    """wrk's summary with --latency, plus the BENCH lines of fixes.lua."""
    r = WrkResult()
    for line in out.splitlines():
        f = line.split()
        if f[:2] == ["BENCH", "summary"]:
            r.requests, r.duration_s = int(f[2]), int(f[3]) / 1e6
        elif f[:2] == ["BENCH", "errors"]:
            names = ("connect", "read", "write", "status", "timeout")
            r.socket_errors = {n: int(v) for n, v in zip(names, f[2:7], strict=True) if n != "status" and int(v)}
        elif f[:2] == ["BENCH", "generated"]:
            r.generated = int(f[2])
        elif f[:2] == ["BENCH", "body"]:
            r.accepted, r.duplicates, r.rejected = int(f[2]), int(f[3]), int(f[4])
        elif f[:2] == ["BENCH", "status"]:
            r.statuses[int(f[2])] = int(f[3])
        elif f[:2] == ["BENCH", "run"]:
            r.runs.append(Run(int(f[2]), int(f[3]), int(f[4])))
        elif f[:2] == ["BENCH", "miscounted"]:
            r.miscounted += 1
        elif f[:2] == ["BENCH", "unidentified"]:
            r.unidentified = int(f[2])
        elif f[:2] == ["BENCH", "latency_us"]:
            r.max_ms = int(f[5]) / 1000
    # The percentiles as wrk --latency prints them ("Latency Distribution").
    # wrk pads latencies of a second or more with a trailing blank ("1.52s "): allow trailing spaces.
    dist = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)\s*$", out, re.MULTILINE))
    r.p50_ms, r.p90_ms, r.p99_ms = (_ms(dist.get(p, "0us")) for p in ("50", "90", "99"))
    if sum(r.statuses.values()) != r.requests:
        raise RuntimeError(f"wrk answered {r.requests} requests but the script saw {sum(r.statuses.values())}")
    if r.runs:
        _check_runs(r)
    return r


def _check_runs(r: WrkResult) -> None:
    """The runs must tile 0..n without gaps and agree with the answer counts (a parse or script bug otherwise)."""
    g = 0
    for run in r.runs:
        if run.g0 != g or run.count <= 0:
            raise RuntimeError(f"wrk runs do not tile the request numbers at {run}")
        g = run.end
    answered = sum(run.count for run in r.runs if run.status > 0)
    if answered + r.unidentified != r.requests:
        raise RuntimeError(f"wrk answered {r.requests} requests; runs name {answered}, {r.unidentified} unnamed")


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError(f"unparseable wrk latency {text!r}")
    return float(m.group(1)) * _UNITS_US[m.group(2)] / 1000
