"""`POST /api/v1/seals/verify`: does an exported track file (CSV or XLSX) match the daily seals it names?

Any logged-in user may ask (the answer says only whether its rows are the sealed ones, where they first differ,
and the seals' digests, which the public roots cover anyway), in their scope: a contractor's file is judged
only against that contractor's vehicles; another's vehicle is answered as an unknown one, not sealed, with no
seal line, no digest and nothing sealed. The file comes as
the multipart field `file`, at most MAX_FILE_BYTES (and the service's body limit, `TELEMETRIA_MAX_BODY_BYTES`);
the CLI `telemetria verify FILE` has no such cap. Each verification is audited (`seals.verify`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from starlette.datastructures import UploadFile

from telemetria.audit.log import record
from telemetria.auth.guard import authenticate, client_ip
from telemetria.auth.roles import Principal
from telemetria.http import FieldError, json_response
from telemetria.jobs import jobs_of, user_key
from telemetria.seals import verify, verify_store

router = APIRouter(prefix="/api/v1/seals", tags=["seals"])
MAX_FILE_BYTES = 64 * 1024 * 1024
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


async def _file(request: Request) -> bytes:
    """The uploaded file's bytes, or an answer naming `file`."""
    limit = limit_of(request)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "multipart/form-data":
        raise FieldError(
            f"file: send the exported file as multipart/form-data (field 'file'), not {ctype or 'no Content-Type'}",
            "file",
            415,
        )
    form = await request.form(max_files=1, max_fields=5)
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise FieldError("file: missing; send the exported track file (CSV or XLSX) as the field 'file'", "file")
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise FieldError(f"file: larger than {limit} bytes; verify it with `telemetria verify FILE`", "file", 413)
    return data


@router.post("/verify", openapi_extra=VERIFY_DOC)
async def verify_file(request: Request, who: Principal = LOGGED_IN) -> Response:
    """Whether each vehicle-day of an exported track file matches its daily seal, naming the first differing row."""
    data = await _file(request)
    # One turn of the job queue per verification (a 429 "tente novamente em N s" when the user already has one or
    # the queue is full); the file is read in its worker process, within the service's bounds (verify.web_bounds).
    jobs = jobs_of(request)
    async with jobs.turn(user_key(who.user_id)):
        try:
            parsed = await jobs.in_process(verify.parse, data, verify.web_bounds())
        except verify.NotAnExport as e:
            raise FieldError(str(e), "file") from None
        # Not a Conn dependency: the upload is read first, holding no connection. The main pool: rebuilding a
        # version's lines may seal a change the refresher has not reached yet.
        async with request.app.state.pool.acquire() as conn:
            answer = await verify_store.judged(conn, parsed, who.scope)
            detail = {"bytes": len(data), "valid": answer["valid"], "days": len(answer["days"])}
            await record(conn, "seals.verify", who, client_ip(request), None, detail)  # not the file's name
    return json_response(answer)
