"""A Document as PDF (issue 19: being written on its own branch; until then the format is refused)."""

from __future__ import annotations

from fastapi.responses import StreamingResponse

from telemetria.http import FieldError
from telemetria.reports.output.document import Document

MEDIA_TYPE = "application/pdf"


def response(doc: Document) -> StreamingResponse:
    raise FieldError(f"format: pdf is not available yet ({doc.kind})", "format", 400)
