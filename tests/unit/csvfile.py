"""The CSV file of reports/output/csv.py built synchronously, for tests that check rows without an event loop."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import tzinfo
from typing import Any

from telemetria.reports.output.csv import BOM, CHUNK_CHARS, Chunker, ColumnSpec, CsvFormatter


def iter_csv_chunks(
    columns: Iterable[ColumnSpec], rows: Iterable[Any], tz: tzinfo, chunk_chars: int = CHUNK_CHARS
) -> Iterator[bytes]:
    """The same file as csv_chunks, built the same way (header, lines, chunks), without awaiting."""
    fmt = CsvFormatter(columns, tz)
    buf = Chunker(chunk_chars)
    buf.add(BOM + fmt.header())
    for row in rows:
        if chunk := buf.add(fmt.line(row)):
            yield chunk
    if tail := buf.flush():
        yield tail
