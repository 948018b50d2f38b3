"""Servers under test as subprocesses (own process group, always stopped), and CPU time and memory from /proc."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    name: str
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def stop(self) -> None:
        """SIGTERM to the whole group (uvicorn and its workers), SIGKILL if it lingers."""
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        except ProcessLookupError:
            pass


def start_service(workers: int, dsn: str, log: Path, env_extra: dict[str, str] | None = None) -> Server:
    """`telemetria serve` on a free port against the bench database, ready when /readyz says so; `env_extra`: more
    TELEMETRIA_* settings."""
    port = free_port()
    cmd = [str(VENV_BIN / "telemetria"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--workers", str(workers)]
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": dsn, **(env_extra or {})}
    return _start(f"service-{workers}w", cmd, env, port, log)


NOOP_APPS = {"bare": "bench.noop_app:bare", "fastapi": "bench.noop_app:app", "stack": "bench.noop_app:stack"}


def start_noop(kind: str, log: Path, dsn: str | None = None) -> Server:
    """One of bench/noop_app.py's apps ("bare", "fastapi", "stack") under uvicorn with `telemetria serve`'s settings.

    "stack" is the service's own app: it opens a pool on `dsn` (for /readyz); its background jobs stay off.
    """
    port = free_port()
    env = dict(os.environ)
    cmd = [str(VENV_BIN / "python"), "-m", "uvicorn", NOOP_APPS[kind], "--host", "127.0.0.1"]
    if kind == "stack":
        cmd.append("--factory")
        env |= {"TELEMETRIA_ROLLUP_INTERVAL_S": "0", "TELEMETRIA_RETENTION_INTERVAL_S": "0"}
        env |= {"TELEMETRIA_DATABASE_URL": dsn} if dsn else {}
    cmd += ["--port", str(port), "--workers", "1", "--loop", "uvloop", "--http", "httptools", "--no-access-log"]
    cmd += ["--log-level", "info", "--timeout-graceful-shutdown", "10"]
    return _start(f"no-op {kind}", cmd, env, port, log)


def _start(name: str, cmd: list[str], env: dict[str, str], port: int, log: Path) -> Server:
    with log.open("wb") as out:
        # A session of its own: stop() can signal uvicorn's worker processes with it.
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = Server(name, proc, f"http://127.0.0.1:{port}", log)
    try:
        wait_ready(server, timeout_s=30)
    except BaseException:
        server.stop()
        raise
    return server


def wait_ready(server: Server, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.proc.returncode}; see {server.log}")
        try:
            with urllib.request.urlopen(server.url + "/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{server.name} not ready after {timeout_s:.0f} s; see {server.log}")


# --- CPU time ---------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user+system CPU seconds) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS


def tree_cpu(root: int) -> dict[int, float]:
    """CPU seconds of `root` and all its descendants, by pid."""
    stats = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(int(p))) is not None}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, float] = {}
    todo = [root] if root in stats else []
    while todo:
        pid = todo.pop()
        out[pid] = stats[pid][1]
        todo.extend(children.get(pid, []))
    return out


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two tree_cpu() snapshots; processes born in between count whole."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants, summed (a page shared by two counts twice)."""
    return sum(rss(pid) for pid in tree_cpu(root))


def tree_rss_by_role(root: int) -> dict[str, int]:
    """Resident bytes of `root` ("service") and its descendants, summed by role: the module a child runs
    (`python -m telemetria.occurrences.detection.detector ...` counts as "detector"), else "other"."""
    out: dict[str, int] = {}
    for pid in tree_cpu(root):
        role = "service" if pid == root else _role(pid)
        out[role] = out.get(role, 0) + rss(pid)
    return out


def _role(pid: int) -> str:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    if b"-m" in args[:-1]:
        return args[args.index(b"-m") + 1].decode(errors="replace").rsplit(".", 1)[-1]
    return "other"


def rss(pid: int) -> int:
    """Resident bytes of one process (0 once it exited)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0  # exited in between


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return float(sum(f) - idle), float(sum(f))
