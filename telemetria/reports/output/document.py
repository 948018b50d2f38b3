"""A report as a document, whatever the file: the query described, its tables, a map, the seals it was cut from.

XLSX (output/xlsx.py) and PDF (output/pdf.py) are written from a Document; reports/api.py builds one from a
Report (output/files.py), the boletim and the occurrence list build theirs. The first table holds exactly the
rows of the CSV (same columns, same order, totals included); later tables are what the CSV cannot hold.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from telemetria.reports.output.csv import Column
from telemetria.reports.output.gis import Place, Segment
from telemetria.seals.model import SealRef

Rows = AsyncIterable[dict[str, Any]] | Iterable[dict[str, Any]]
Drawing = Callable[[], Awaitable[tuple[list[Segment], list[Place]]]]


@dataclass(eq=False)
class Table:
    """One table: a sheet of the workbook, a section of the PDF."""

    title: str  # the sheet's name and the section's heading, in Portuguese ("Posições", "Totais")
    columns: Sequence[Column]
    rows: Rows
    totals: Callable[[], list[dict[str, Any]]] | None = None  # closing rows, known once the rows ran


@dataclass(eq=False)
class Document:
    kind: str  # the report's kind ("km", "track", "measurement", "occurrences")
    title: str  # what it is, for people ("Km rodados")
    filename: str  # without the extension: "km_rodados_2026-03-01_2026-03-31"
    tz: ZoneInfo  # the zone its times are shown in
    query: list[tuple[str, str]]  # the query, as label and value, in order ("Período", "01/03/2026 a ...")
    generated_by: str  # "maria (monitor)"
    generated_at: datetime  # aware
    tables: list[Table]  # tables[0]: the CSV's rows
    extra: Callable[[], list[Table]] | None = None  # tables known only once tables[0] ran (the track's places)
    drawing: Drawing | None = None  # the map of the PDF (track, trips, deviations, occurrences)
    seals: Callable[[], Awaitable[list[SealRef]]] | None = None  # the daily seals a track was cut from
    notes: list[str] = field(default_factory=list)  # lines said under the query (how a figure is measured)
    # The PDF's letterhead (settings municipality_name and coat_of_arms_path: files.letterhead()).
    municipality: str = ""
    coat_of_arms_path: Path | None = None
    # The PDF's closing block (the boletim's: measurement/signed.py): label and value lines after the tables,
    # then a signature line per name; and the date the PDF names as its creation (None: generated_at).
    summary: list[tuple[str, str]] = field(default_factory=list)
    signatures: list[str] = field(default_factory=list)
    created_at: datetime | None = None
