"""The pure analysis of reports imports no I/O, no HTTP and no settings, however indirectly.

An AST walk over the imports of reports/analysis/, reports/model.py and reports/knobs.py, followed
transitively through telemetria's own modules (package `__init__`s included, since importing a module
runs them). Third-party imports are looked at but not followed: what counts is which of them we reach.
"""

from __future__ import annotations

import ast
from pathlib import Path

import telemetria

ROOT = Path(telemetria.__file__).parent
PURE = ("telemetria.reports.analysis", "telemetria.reports.model", "telemetria.reports.knobs")
FORBIDDEN = (
    # I/O
    "asyncpg", "telemetria.db", "telemetria.deps", "telemetria.reports.store",
    # HTTP
    "fastapi", "starlette", "uvicorn", "httpx", "telemetria.http", "telemetria.reports.api",
    "telemetria.reports.request", "telemetria.reports.output",
    # settings
    "pydantic_settings", "telemetria.settings",
)  # fmt: skip


def _path(module: str) -> Path | None:
    """The source file of one of telemetria's modules, None for anything else."""
    parts = module.split(".")
    if parts[0] != "telemetria":
        return None
    base = ROOT.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imports(module: str) -> set[str]:
    """Every module `module` imports (anywhere in it), and the packages whose `__init__` that runs."""
    path = _path(module)
    assert path is not None, module
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            # `from pkg import mod` imports a module when `mod` is one.
            found.update(f"{base}.{a.name}" for a in node.names if _path(f"{base}.{a.name}") is not None)
    parents = {".".join(m.split(".")[:i]) for m in found for i in range(1, m.count(".") + 1)}
    return found | parents


def reach(start: str) -> dict[str, list[str]]:
    """Every module reachable from `start` by imports, with one chain of imports that leads to it."""
    chains: dict[str, list[str]] = {start: [start]}
    todo = [start]
    while todo:
        module = todo.pop()
        for imported in sorted(_imports(module)):
            if imported not in chains:
                chains[imported] = [*chains[module], imported]
                if _path(imported) is not None:
                    todo.append(imported)
    return chains


def _pure_modules() -> list[str]:
    analysis = ROOT / "reports" / "analysis"
    modules = [f"telemetria.reports.analysis.{p.stem}" for p in sorted(analysis.glob("*.py")) if p.stem != "__init__"]
    return ["telemetria.reports.analysis", *modules, "telemetria.reports.model", "telemetria.reports.knobs"]


def _offences(start: str) -> list[str]:
    return [
        " → ".join(chain)
        for module, chain in sorted(reach(start).items())
        if any(module == f or module.startswith(f + ".") for f in FORBIDDEN)
    ]


def test_the_pure_analysis_reaches_no_io_http_or_settings() -> None:
    modules = _pure_modules()
    assert len(modules) > 10  # the walk sees the whole subpackage
    offences = [o for m in modules for o in _offences(m)]
    assert not offences, "the pure analysis must not import I/O, HTTP or settings:\n" + "\n".join(offences)


def test_the_walk_sees_what_the_edge_imports() -> None:
    """The check above can fail: from the HTTP edge, the same walk reaches the database and FastAPI."""
    reached = reach("telemetria.reports.api")
    assert {"fastapi", "asyncpg", "telemetria.db", "telemetria.reports.analysis.engine"} <= reached.keys()
    assert _offences("telemetria.reports.kinds.km")  # kinds read through store/, so they are not pure


def test_submodule_and_package_imports_are_followed() -> None:
    # `from telemetria.reports.analysis import perfix` names the module perfix, not only the package.
    assert "telemetria.reports.analysis.perfix" in _imports("telemetria.reports.analysis.engine")
    assert "telemetria.reports" in _imports("telemetria.reports.analysis.engine")  # its __init__ runs too
