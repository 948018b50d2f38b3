"""An uploaded track file out of its multipart body, then read (pure: runs in the job queue's worker process, so
neither the multipart parsing of a large upload nor the file's reading holds the service's event loop)."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from telemetria.seals import verify

MAX_PARTS = 6


class UploadError(Exception):
    """The body holds no usable `file` field: (message, HTTP status)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message, status)
        self.message, self.status = message, status


def file_of(body: bytes, content_type: str, limit: int) -> bytes:
    """The bytes of the multipart field `file` of `body` (at most `limit`)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=policy.default).parsebytes(head + body)
    if not isinstance(message, EmailMessage) or not message.is_multipart():
        raise UploadError("file: the multipart body could not be read")
    for n, part in enumerate(message.iter_parts()):
        if n >= MAX_PARTS:
            break
        if part.get_param("name", header="content-disposition") == "file" and part.get_filename() is not None:
            data = part.get_payload(decode=True)
            if not isinstance(data, bytes):
                break
            if len(data) > limit:
                raise UploadError(f"file: larger than {limit} bytes; verify it with `telemetria verify FILE`", 413)
            return data
    raise UploadError("file: missing; send the exported track file (CSV or XLSX) as the field 'file'")


def read_upload(body: bytes, content_type: str, limit: int, bounds: verify.Bounds) -> tuple[int, verify.Parsed]:
    """The uploaded file's size and what it says (raises UploadError, or verify.NotAnExport)."""
    data = file_of(body, content_type, limit)
    return len(data), verify.parse(data, bounds)
