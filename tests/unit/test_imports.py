"""Every module of the service and of the benches imports: a merge that leaves a dangling import fails here,
not in production on the first request that reaches it."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import telemetria

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(telemetria.__path__, "telemetria.")]
    names += [f"bench.{p.stem}" for p in sorted((ROOT / "bench").glob("*.py")) if p.stem != "__init__"]
    return sorted(n for n in names if not n.endswith("__main__"))


def test_the_walk_finds_the_packages() -> None:
    names = _modules()
    assert "telemetria.reports.analysis.engine" in names and "bench.measurements" in names


def test_every_module_imports() -> None:
    failed = []
    for name in _modules():
        try:
            importlib.import_module(name)
        except Exception as e:  # every failure is reported, not just the first
            failed.append(f"{name}: {type(e).__name__}: {e}")
    assert not failed, "\n".join(failed)
