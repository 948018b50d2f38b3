"""A Document as XLSX (issue 19: being written on its own branch; until then the format is refused)."""

from __future__ import annotations

from fastapi.responses import StreamingResponse

from telemetria.http import FieldError
from telemetria.reports.output.document import Document

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def response(doc: Document) -> StreamingResponse:
    raise FieldError(f"format: xlsx is not available yet ({doc.kind})", "format", 400)
