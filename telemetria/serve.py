"""Running the service: one uvicorn process, or several that share the port with SO_REUSEPORT.

uvicorn's own `--workers` hands one listening socket to every process, and the kernel then gives
most new connections to whichever process wakes first: in the ingest bench all 8 connections of
a run landed on one of two workers. With a socket of its own per process, bound with
SO_REUSEPORT, the kernel spreads connections across the processes evenly.

Metrics with several processes: before the first worker starts, PROMETHEUS_MULTIPROC_DIR is
pointed at a new, empty directory of this run (removed when it ends), which every worker
inherits; see telemetria/metrics.py.
"""

from __future__ import annotations

import logging
import logging.config
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import threading
from typing import Any

import uvicorn

from telemetria.logs import log_config
from telemetria.settings import Settings

log = logging.getLogger("telemetria.serve")

APP = "telemetria.app:build"


def uvicorn_config(app: Any = APP, settings: Settings | None = None, **kw: Any) -> uvicorn.Config:
    """The server settings every way of running the service shares (uvloop, httptools, graceful stop).

    Our own middleware writes the access log (without client addresses), so uvicorn's stays off;
    and ours reads X-Forwarded-For (telemetria/forwarded.py), so uvicorn's proxy headers stay off.
    """
    settings = settings or Settings()
    kw.setdefault("factory", app is APP)
    kw.setdefault("log_level", settings.log_level)
    kw.setdefault("log_config", log_config(settings.log_format, kw["log_level"]))
    kw.pop("access_log", None)
    kw.pop("proxy_headers", None)
    return uvicorn.Config(
        app, loop="uvloop", http="httptools", timeout_graceful_shutdown=10, access_log=False, proxy_headers=False, **kw
    )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def _worker(host: str, port: int, settings: Settings) -> None:
    sock = _bind(host, port)
    uvicorn.Server(uvicorn_config(settings=settings)).run(sockets=[sock])


def run(settings: Settings, host: str, port: int, workers: int = 1) -> None:
    """Serve until SIGINT/SIGTERM; with several workers, restart any that dies."""
    if workers == 1:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)  # one process: its metrics live in its memory
        uvicorn.Server(uvicorn_config(settings=settings, host=host, port=port)).run()
        return
    logging.config.dictConfig(log_config(settings.log_format, settings.log_level))
    try:
        _bind(host, port).close()  # fail here, with the reason, if the port is taken
    except OSError as e:
        raise SystemExit(f"telemetria: cannot listen on {host}:{port}: {e.strerror}") from None
    metrics_dir = tempfile.mkdtemp(prefix="telemetria-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir  # inherited by every worker spawned below
    try:
        _supervise(settings, host, port, workers)
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _supervise(settings: Settings, host: str, port: int, workers: int) -> None:
    from telemetria.metrics import mark_process_dead

    ctx = multiprocessing.get_context("spawn")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    procs: dict[int, Any] = {}

    def spawn(i: int) -> None:
        procs[i] = ctx.Process(target=_worker, args=(host, port, settings), name=f"telemetria-{i}")
        procs[i].start()

    for i in range(workers):
        spawn(i)
    log.info("serving on http://%s:%d with %d processes (SO_REUSEPORT)", host, port, workers)
    while not stop.wait(0.5):
        for i, p in list(procs.items()):
            if not p.is_alive():
                log.warning("worker %d (pid %s) exited with %s; starting another", i, p.pid, p.exitcode)
                if p.pid is not None:
                    mark_process_dead(p.pid)
                spawn(i)
    for p in procs.values():
        p.terminate()  # SIGTERM: uvicorn finishes in-flight requests, the writer its queue
    for p in procs.values():
        p.join(15)
        if p.is_alive():
            p.kill()
