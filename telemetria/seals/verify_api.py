"""`POST /api/v1/seals/verify`: does an exported track file (CSV or XLSX) match the daily seals it names?

Any logged-in user may ask (the answer says only whether its rows are the sealed ones, where they first differ,
and the seals' digests, which the public roots cover anyway), in their scope: a contractor's file is judged
only against that contractor's vehicles; another's vehicle is answered as an unknown one, not sealed, with no
seal line, no digest and nothing sealed. The file comes as
the multipart field `file`, at most MAX_FILE_BYTES (and the service's body limit, `TELEMETRIA_MAX_BODY_BYTES`);
the CLI `telemetria verify FILE` has no such cap. Each verification is audited (`seals.verify`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from telemetria.audit.log import record
from telemetria.auth.guard import authenticate, client_ip
from telemetria.auth.roles import Principal
from telemetria.http import FieldError, HttpError, json_response, overloaded, read_chunks
from telemetria.jobs import jobs_of, user_key
from telemetria.seals import upload, verify, verify_store

router = APIRouter(prefix="/api/v1/seals", tags=["seals"])
MAX_FILE_BYTES = 64 * 1024 * 1024
MULTIPART_OVERHEAD = 64 * 1024  # the multipart framing around the file, at most
LOGGED_IN = Depends(authenticate)

VERIFY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            }
        },
    }
}


def limit_of(request: Request) -> int:
    return min(MAX_FILE_BYTES, int(request.app.state.settings.max_body_bytes))


async def _body(request: Request) -> tuple[list[bytes], str]:
    """The raw multipart body (as it arrived, in pieces) and its Content-Type, or an answer naming `file` (the body
    is parsed off the loop)."""
    limit = limit_of(request)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "multipart/form-data":
        raise FieldError(
            f"file: send the exported file as multipart/form-data (field 'file'), not {ctype or 'no Content-Type'}",
            "file",
            415,
        )
    try:
        body = await read_chunks(request, limit + MULTIPART_OVERHEAD)
    except HttpError as e:
        if e.status != 413:
            raise
        too_large = f"file: larger than {limit} bytes; verify it with `telemetria verify FILE`"
        raise FieldError(too_large, "file", 413) from e
    return body, request.headers.get("content-type", "")


@router.post("/verify", openapi_extra=VERIFY_DOC)
async def verify_file(request: Request, who: Principal = LOGGED_IN) -> Response:
    """Whether each vehicle-day of an exported track file matches its daily seal, naming the first differing row."""
    body, ctype = await _body(request)
    # One turn of the job queue per verification (a 429 "tente novamente em N s" when the user already has one or
    # the queue is full); the multipart body and the file are read in its worker process (seals/upload.py), within
    # the service's bounds (verify.web_bounds): a 12 MB upload parsed on the event loop held trackers' posts.
    jobs = jobs_of(request)
    async with jobs.turn(user_key(who.user_id)):
        # The body goes to the worker through a private folder, not the pool's pipe (seals/upload.py says why);
        # made here, so that whatever happens next (a 4xx, a cancellation) the folder is known and removed.
        folder = upload.new_folder()
        try:
            try:
                await asyncio.to_thread(upload.spool, folder, body)
            except OSError as e:  # a full or read-only temporary folder: the service's state, not the file's
                raise overloaded(f"the file could not be set aside for reading ({e.strerror})") from None
            del body
            answer, size = await _verified(request, who, folder, ctype)
        finally:
            await asyncio.to_thread(upload.discard, folder)
        async with request.app.state.pool.acquire() as conn:
            detail = {"bytes": size, "valid": answer["valid"], "days": len(answer["days"])}
            await record(conn, "seals.verify", who, client_ip(request), None, detail)  # not the file's name
    return json_response(answer)


async def _verified(request: Request, who: Principal, folder: str, ctype: str) -> tuple[dict[str, Any], int]:
    """The verification's answer and the file's size: the file read in a worker, its days looked up here, judged
    in a worker again."""
    jobs = jobs_of(request)
    try:
        read = await jobs.in_process(upload.read_upload, folder, ctype, limit_of(request), verify.web_bounds())
    except upload.UploadError as e:
        raise FieldError(e.message, "file", e.status) from None
    except verify.NotAnExport as e:
        raise FieldError(str(e), "file") from None
    # Not a Conn dependency: the upload is read first, holding no connection. The main pool: rebuilding a
    # version's lines may seal a change the refresher has not reached yet.
    async with request.app.state.pool.acquire() as conn:
        looked = await verify_store.gather(conn, read.keys, read.named, who.scope)
    # The rows compared with the seals' lines in the worker too: 100,000 rows judged here held trackers' posts
    # for half a second (bench.contention --only verify).
    return verify.report(await jobs.in_process(upload.judge_read, folder, looked)), read.size
