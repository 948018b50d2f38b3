"""Running the service: one uvicorn process, or several that share the port with SO_REUSEPORT.

uvicorn's own `--workers` hands one listening socket to every process, and the kernel then gives
most new connections to whichever process wakes first: in the ingest bench all 8 connections of
a run landed on one of two workers. With a socket of its own per process, bound with
SO_REUSEPORT, the kernel spreads connections across the processes evenly.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import threading
from typing import Any

import uvicorn

log = logging.getLogger("telemetria.serve")

APP = "telemetria.app:build"


def uvicorn_config(app: Any = APP, **kw: Any) -> uvicorn.Config:
    """The server settings every way of running the service shares (uvloop, httptools, graceful stop)."""
    kw.setdefault("factory", app is APP)
    kw.setdefault("log_level", "info")
    return uvicorn.Config(app, loop="uvloop", http="httptools", timeout_graceful_shutdown=10, **kw)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def _worker(host: str, port: int, access_log: bool) -> None:
    sock = _bind(host, port)
    uvicorn.Server(uvicorn_config(access_log=access_log)).run(sockets=[sock])


def run(host: str, port: int, workers: int = 1, access_log: bool = False) -> None:
    """Serve until SIGINT/SIGTERM; with several workers, restart any that dies."""
    if workers == 1:
        uvicorn.Server(uvicorn_config(host=host, port=port, access_log=access_log)).run()
        return
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(message)s")
    try:
        _bind(host, port).close()  # fail here, with the reason, if the port is taken
    except OSError as e:
        raise SystemExit(f"telemetria: cannot listen on {host}:{port}: {e.strerror}") from None
    ctx = multiprocessing.get_context("spawn")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    procs: dict[int, Any] = {}

    def spawn(i: int) -> None:
        procs[i] = ctx.Process(target=_worker, args=(host, port, access_log), name=f"telemetria-{i}")
        procs[i].start()

    for i in range(workers):
        spawn(i)
    log.info("serving on http://%s:%d with %d processes (SO_REUSEPORT)", host, port, workers)
    while not stop.wait(0.5):
        for i, p in list(procs.items()):
            if not p.is_alive():
                log.warning("worker %d (pid %s) exited with %s; starting another", i, p.pid, p.exitcode)
                spawn(i)
    for p in procs.values():
        p.terminate()  # SIGTERM: uvicorn finishes in-flight requests, the writer its queue
    for p in procs.values():
        p.join(15)
        if p.is_alive():
            p.kill()
