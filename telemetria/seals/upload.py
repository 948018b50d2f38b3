"""An uploaded track file out of its multipart body, read, then judged (pure: runs in the job queue's worker
processes, so that neither the multipart parsing of a large upload, nor the file's reading, nor the comparison of
its rows with the seals' lines holds the service's event loop; the loop only reads the database in between).

The body and the read file travel through a private folder of their own (`spool`), not through the pool's pipes:
a 12 MB body pickled to a worker, and the read file's pickle sent back to the service and out again, were copies
of megabytes made by the service's threads while holding the GIL, each one a pause of the event loop that a
tracker's post waited behind (bench.contention)."""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass
from datetime import date
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


BODY, READ = "body", "read.pickle"
PREFIX = "telemetria-verify-"
STALE_S = 24 * 3600.0  # a folder this old was left by a process killed mid-way (no verification lasts a day)


def new_folder() -> str:
    """A new private folder (0700) in the system's temporary folder for one verification: its path."""
    return tempfile.mkdtemp(prefix=PREFIX)


def spool(folder: str, chunks: list[bytes]) -> None:
    """The body's pieces written as one file in `folder`. Called in a thread, where each write releases the GIL."""
    with open(os.path.join(folder, BODY), "wb") as f:
        f.writelines(chunks)


def discard(folder: str) -> None:
    """A verification's folder and what the worker wrote in it, removed."""
    shutil.rmtree(folder, ignore_errors=True)


def sweep(now: float, older_than_s: float = STALE_S) -> int:
    """Verifications' folders older than `older_than_s` (left by a process killed mid-way), removed; how many.
    At the service's start (app.py), in a thread."""
    gone = 0
    with os.scandir(tempfile.gettempdir()) as entries:
        for entry in entries:
            if not entry.name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                old = now - entry.stat(follow_symlinks=False).st_mtime > older_than_s
            except OSError:
                continue
            if old:
                discard(entry.path)
                gone += 1
    return gone


@dataclass(frozen=True, slots=True)
class Read:
    """An upload read in a worker: what the event loop needs to look the file's days up (small). The whole read
    file stays in the folder, pickled there by the worker for the next step (`judge_read`), so that its rows are
    never unpickled in the service's process; it is made there and only ever read back by this module, never taken
    from a client."""

    size: int
    keys: list[tuple[int, date]]
    named: dict[tuple[int, date], verify.Named]


def read_upload(folder: str, content_type: str, limit: int, bounds: verify.Bounds) -> Read:
    """The uploaded file's size, its vehicle-days and what it says (raises UploadError, or verify.NotAnExport)."""
    with open(os.path.join(folder, BODY), "rb") as f:
        body = f.read()
    data = file_of(body, content_type, limit)
    del body
    parsed = verify.parse(data, bounds)
    with open(os.path.join(folder, READ), "wb") as f:
        pickle.dump(parsed, f, pickle.HIGHEST_PROTOCOL)
    return Read(len(data), parsed.keys(), parsed.named)


def judge_read(folder: str, looked: list[verify.Looked]) -> list[verify.DayResult]:
    """The file of `read_upload` judged against what the database said of each of its days."""
    with open(os.path.join(folder, READ), "rb") as f:
        parsed: verify.Parsed = pickle.load(f)  # our own worker's file (read_upload), never a client's
    return verify.judge_all(parsed, looked)
