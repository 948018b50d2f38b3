"""Plain-text tables: right-aligned numbers, left-aligned words, one header rule."""

from __future__ import annotations

from collections.abc import Sequence


def render(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]
    left = [all(not _numeric(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        out = [c.ljust(w) if lf else c.rjust(w) for c, w, lf in zip(cells, widths, left, strict=True)]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def _numeric(cell: str) -> bool:
    c = cell.strip().rstrip("%x").replace(",", "").replace(".", "", 1).lstrip("+-")
    return c.isdigit() or cell.strip() in ("-", "n/a")


def num(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f}%"


def ms(x: float) -> str:
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"
