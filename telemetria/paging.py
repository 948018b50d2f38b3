"""Pagination shared by every list endpoint: `?limit=&offset=` in, `{items, total, limit, offset}` out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Query

MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class Page:
    limit: int
    offset: int

    def answer(self, items: list[dict[str, Any]], total: int) -> dict[str, Any]:
        return {"items": items, "total": total, "limit": self.limit, "offset": self.offset}


def page(
    limit: int = Query(50, ge=1, le=MAX_LIMIT, description="rows per page"),
    offset: int = Query(0, ge=0, le=100_000_000, description="rows to skip"),
) -> Page:
    return Page(limit, offset)


def split_total(rows: list[Any]) -> tuple[list[dict[str, Any]], int]:
    """Rows that carry `count(*) OVER () AS total` → (plain dicts without it, the total)."""
    total = rows[0]["total"] if rows else 0
    return [{k: v for k, v in r.items() if k != "total"} for r in rows], total
