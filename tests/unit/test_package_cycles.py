"""No cycles between telemetria's packages: the floors of the house, each importing only the floors below.

The nodes are telemetria's top-level subpackages (`ingest`, `reports`, ...) and top-level modules
(`metrics`, `db`, ...); a module of one node importing a module of another is an edge. Every import
counts, including those inside functions and under TYPE_CHECKING: a lazy import is still a
dependency a reader has to follow. The graph is read from the source (AST), so nothing is imported.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from pathlib import Path

import telemetria

ROOT = Path(telemetria.__file__).parent

Edges = dict[str, dict[str, list[str]]]  # node -> node it imports -> "module imports module" examples


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """Absolute names of every module (or module attribute) `module` imports."""
    out: list[str] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, node.module] if node.module else base)
            else:
                prefix = node.module or ""
            # `from telemetria import metrics` imports the module telemetria.metrics
            out += [f"{prefix}.{alias.name}" for alias in node.names]
    return out


def _node(name: str) -> str | None:
    """The package or top-level module a telemetria name belongs to; None outside telemetria (or its root)."""
    parts = name.split(".")
    if parts[0] != "telemetria" or len(parts) < 2:
        return None
    top = parts[1]
    if (ROOT / top).is_dir() or (ROOT / f"{top}.py").is_file():
        return top
    return None  # an attribute of telemetria/__init__.py, such as __version__


def package_graph() -> Edges:
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        source = _node(module)
        if source is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name in _imported(tree, module, path.name == "__init__.py"):
            target = _node(name)
            if target is not None and target != source:
                edges[source][target].append(f"{module} imports {name}")
    return edges


def groups(edges: Edges) -> list[set[str]]:
    """The strongly connected groups of more than one node (Tarjan): nodes that all reach each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: set[str] = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(group)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def cycles(edges: Edges) -> list[list[str]]:
    """One cycle (a closed path of nodes) per strongly connected group."""
    return [_a_cycle_in(group, edges) for group in groups(edges)]


def _a_cycle_in(group: set[str], edges: Edges) -> list[str]:
    """The shortest closed path through the group's first node (breadth first within the group)."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, {})):
                if w == start:
                    return [*paths[v], start]
                if w in group and w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {sorted(group)}")  # a strongly connected group has one


def describe(group: set[str], edges: Edges) -> str:
    """The group's members, then one of its cycles with an import that makes each step."""
    cycle = _a_cycle_in(group, edges)
    steps = [f"  {a} -> {b}: {edges[a][b][0]}" for a, b in itertools.pairwise(cycle)]
    return f"{{{', '.join(sorted(group))}}}: " + " -> ".join(cycle) + "\n" + "\n".join(steps)


def test_the_graph_is_read() -> None:
    edges = package_graph()
    # Known, permanent edges: the app wires the ingest routers, ingest stores through db.
    assert "ingest" in edges["app"]
    assert "db" in edges["ingest"]


def test_cycles_are_found_and_named() -> None:
    edges: Edges = {"a": {"b": ["a.x imports b.y"]}, "b": {"c": ["b.y imports c"]}, "c": {"a": ["c imports a"]}}
    assert cycles(edges) == [["a", "b", "c", "a"]]
    assert "a.x imports b.y" in describe(groups(edges)[0], edges)
    assert cycles({"a": {"b": ["a imports b"]}, "b": {}}) == []


def test_no_cycles_between_packages() -> None:
    edges = package_graph()
    found = groups(edges)
    assert not found, "cycles between telemetria's packages:\n" + "\n".join(describe(g, edges) for g in found)
