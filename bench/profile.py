"""Where the service's CPU goes under ingest load: py-spy samples `telemetria serve` while wrk drives it.

    .venv/bin/python -m bench.profile [--duration S]

Creates its own database, registers a fleet, runs the service (1 worker) and, for each load
(single fixes at 32 and 128 connections, 1,000-fix batches at 8), samples the service process
from outside with py-spy (non-blocking, 200 Hz) while wrk runs. Prints, per load, the figures
wrk saw while sampled, how busy the service's thread was, the share of samples by area (the
innermost frame's package) and the top frames by own and by inclusive samples. The database's
and wrk's CPU are not in it: the bench's CPU columns show those.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType

from bench import procs
from bench.benchdb import BenchDb, postmaster_pid
from bench.ingest import BATCH_FIXES, FLEET_SIZE, Windows
from bench.phases import Context, http_phase
from bench.table import num
from bench.table import render as table
from bench.wrk import ensure_wrk
from telemetria.settings import Settings

RATE_HZ = 200
LOADS = (("single", 32, 1), ("single", 128, 1), ("batch", 8, BATCH_FIXES))
TOP = 12
WINDOW = timedelta(minutes=15)

# The innermost frame's file decides the area; the first prefix that matches wins.
AREAS = (
    ("telemetria/ingest/", "telemetria.ingest"),
    ("telemetria/", "telemetria (middleware, metrics, http)"),
    ("asyncpg/", "asyncpg"),
    ("uvicorn/", "uvicorn (HTTP protocol, ASGI)"),
    ("starlette/", "starlette"),
    ("fastapi/", "fastapi"),
    ("prometheus_client/", "prometheus_client"),
    ("asyncio/", "asyncio"),
    ("uvloop/", "asyncio"),
    ("logging/", "logging"),
)


# Every frame of the event loop's thread sits under asyncio's Runner.run; the frames above it (the CLI,
# uvicorn's start-up) are on every stack and say nothing, so stacks start below it.
LOOP_ITSELF = "(the event loop itself: uvloop's C code, callbacks)"


@dataclass
class Profile:
    """Collapsed stacks (outermost first, from below the event loop's entry) and their sample counts."""

    stacks: Counter[tuple[str, ...]] = field(default_factory=Counter)

    @classmethod
    def parse(cls, raw: str) -> Profile:
        """py-spy's `--format raw` output: `process N:"cmd";frame (file);frame (file) count` per line."""
        p = cls()
        for line in raw.splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = tuple(f for f in stack.split(";") if not f.startswith(("process ", "thread ")))
            loop = [
                i for i, f in enumerate(frames) if f.startswith("Runner.run (") and f.endswith("asyncio/runners.py)")
            ]
            if loop:
                frames = frames[loop[-1] + 1 :] or (LOOP_ITSELF,)
            if frames:
                p.stacks[frames] += int(count)
        return p

    @property
    def samples(self) -> int:
        return sum(self.stacks.values())

    def own(self) -> Counter[str]:
        """Samples whose innermost frame is this one (time spent in it or in C code it called)."""
        out: Counter[str] = Counter()
        for frames, n in self.stacks.items():
            out[frames[-1]] += n
        return out

    def inclusive(self) -> Counter[str]:
        """Samples with this frame anywhere on the stack."""
        out: Counter[str] = Counter()
        for frames, n in self.stacks.items():
            for f in set(frames):
                out[f] += n
        return out

    def areas(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for frames, n in self.stacks.items():
            out[area(frames[-1])] += n
        return out


def area(frame: str) -> str:
    if frame == LOOP_ITSELF:
        return "asyncio"
    path = frame[frame.rfind("(") + 1 : -1] if frame.endswith(")") else frame
    path = path.replace("\\", "/")
    return next((name for prefix, name in AREAS if prefix in path), "other")


def short(frame: str) -> str:
    """`func (…/site-packages/pkg/mod.py)` → `func (pkg/mod.py)`."""
    name, _, path = frame.partition(" (")
    for cut in ("site-packages/", "lib/python3.11/", "/work/"):
        if cut in path:
            path = path.split(cut, 1)[1]
    return f"{name} ({path}" if path else name


def render(title: str, figures: str, p: Profile, seconds: float) -> str:
    total = max(1, p.samples)
    busy = p.samples / (RATE_HZ * seconds)
    lines = [
        f"{title}: {figures}; {num(p.samples)} samples of the busy service thread in {seconds:g} s ({busy:.0%} busy)"
    ]
    lines.append(
        table(["area (innermost frame)", "share"], [[a, f"{n / total:.0%}"] for a, n in p.areas().most_common()])
    )
    lines.append("")
    own = [[short(f), f"{n / total:.1%}"] for f, n in p.own().most_common(TOP)]
    lines.append(table(["top frames by own samples", "share"], own))
    lines.append("")
    incl = [[short(f), f"{n / total:.0%}"] for f, n in p.inclusive().most_common(TOP + 8)]
    lines.append(table(["top frames by inclusive samples", "share"], incl))
    return "\n".join(lines)


def sample(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    py_spy = shutil.which("py-spy", path=str(procs.VENV_BIN)) or shutil.which("py-spy")
    if py_spy is None:
        raise RuntimeError("py-spy is not installed: ./dev setup installs the dev extras")
    cmd = [py_spy, "record", "--pid", str(pid), "--duration", str(round(seconds)), "--rate", str(RATE_HZ)]
    cmd += ["--format", "raw", "--nolineno", "--nonblocking", "--subprocesses", "--output", str(out)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def profile_all(ctx: Context, seconds: float) -> list[str]:
    windows = Windows()
    server = procs.start_service(1, ctx.db.dsn, ctx.log_dir / "service.log")
    out = []
    try:
        http_phase(ctx, server, "warm-up", 1, 32, 1, 2, windows.take(), WINDOW)
        for kind, conns, per in LOADS:
            raw = ctx.log_dir / f"py-spy-{kind}-c{conns}.txt"
            spy = sample(server.proc.pid, seconds, raw)
            r = http_phase(ctx, server, kind, 1, conns, per, seconds, windows.take(), WINDOW)
            _, err = spy.communicate(timeout=60)
            if spy.returncode != 0:
                raise RuntimeError(f"py-spy failed: {err.decode()[-1000:]}")
            what = f"{'single fixes' if per == 1 else f'{per:,}-fix batches'}, {conns} connections"
            figures = f"{num(r.req_per_s)} 2xx/s, {num(r.rows_per_s)} fixes/s, p99 {r.p99_ms:.1f} ms (while sampled)"
            if r.problems or not r.clean:
                figures += f"; NOT CLEAN: {r.problems or r.non_2xx or r.socket_errors}"
            out.append(render(what, figures, Profile.parse(raw.read_text()), seconds))
            print(out[-1].splitlines()[0], file=sys.stderr, flush=True)
    finally:
        server.stop()
    return out


def measure(seconds: float) -> str:
    settings = Settings()
    db = BenchDb.for_this_run(settings)
    wrk = ensure_wrk()
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-profile-"))
    print(f"profile: database {db.name}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        ctx = Context.with_fleet(wrk, db, FLEET_SIZE, log_dir, postmaster_pid(settings))
        parts = profile_all(ctx, seconds)
    finally:
        asyncio.run(db.drop())
    head = (
        f"telemetria ingest profile   {datetime.now(UTC):%Y-%m-%d %H:%M UTC}   py-spy {RATE_HZ} Hz, non-blocking,"
        f" `telemetria serve` 1 worker; {seconds:g} s per load\n"
        "share = of the samples taken while the service's thread was busy (idle waits are not sampled); own = the"
        " innermost Python frame, C code it calls included (orjson, httptools, asyncpg's protocol)"
    )
    return "\n\n".join([head, *parts])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=10, help="seconds sampled per load (default 10)")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    print(measure(args.duration))
    return 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
