"""The HTML pages: each checks the session (else the login page) and the role (else a 403 page), then renders.

Pages carry no data of their own: the JavaScript of each page reads the same JSON API that
scripts use, with the session cookie, so what a page shows is exactly what the API allows.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from telemetria import __version__
from telemetria.auth.guard import authenticate
from telemetria.auth.roles import Perm, Principal, Role
from telemetria.auth.store import is_designated, is_superior_authority
from telemetria.db import DB_ERRORS
from telemetria.http import HttpError
from telemetria.registry import queries as registry_q
from telemetria.settings import Settings
from telemetria.web import nav

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=HERE / "templates")  # autoescapes .html
router = APIRouter(include_in_schema=False)
LOGIN = "/entrar"
HOME = "/mapa"


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a path of this site only (never another host: no open redirect)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return HOME
    parts = urlsplit(target)
    return HOME if parts.scheme or parts.netloc or parts.path == LOGIN else target


def security_headers(settings: Settings) -> dict[str, str]:
    """Headers of every page: scripts only from this site, tiles only from the configured map hosts."""
    hosts = sorted({_origin(url) for layer in settings.map_layers for url in layer.tiles} - {"'self'"})
    csp = "; ".join(
        (
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",  # Leaflet positions markers with inline styles
            f"img-src 'self' data: blob: {' '.join(hosts)}".rstrip(),
            "connect-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'self'",
        )
    )
    return {
        "Content-Security-Policy": csp,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",  # pages show who is logged in
    }


def _origin(url: str) -> str:
    if url.startswith("/"):
        return "'self'"
    parts = urlsplit(url.replace("{s}.", "sub."))
    host = parts.netloc.replace("sub.", "*.", 1) if "{s}." in url else parts.netloc
    return f"{parts.scheme}://{host}"


def _map_config(settings: Settings) -> dict[str, Any]:
    return {
        "layers": [layer.model_dump() for layer in settings.map_layers],
        "online_s": settings.live_online_s,
        "offline_s": settings.live_offline_s,
        "poll_s": settings.live_poll_s,
    }


class Static(StaticFiles):
    """Static files that browsers revalidate (ETag → 304) before each use.

    Page scripts are ES modules importing one another by plain relative URLs, so a version in the
    page's own links would not reach them; revalidating costs a 304 and never runs an old script.
    """

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        resp = super().file_response(*args, **kwargs)
        resp.headers["Cache-Control"] = "no-cache"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        return resp


@cache
def asset_version() -> str:
    """A digest of the static files: their URLs change when they do, so no browser keeps an old script."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted((HERE / "static").rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(HERE).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def render(request: Request, template: str, who: Principal | None, status: int = 200, **ctx: Any) -> Response:
    settings: Settings = request.app.state.settings
    context = {
        "user": who,
        "role_name": nav.ROLE_NAMES.get(who.role.value, who.role.value) if who else "",
        "menu": nav.menu(who) if who else [],
        "current": request.url.path,
        "version": asset_version(),
        **ctx,
    }
    context["config"] = {"map": _map_config(settings), **ctx.get("config", {})}
    if who is not None:
        context["config"]["user"] = {"username": who.username, "role": who.role.value,
                                     "contractor_id": who.scope, "designated": bool(ctx.get("designated")),
                                     "superior_authority": bool(ctx.get("superior_authority")),
                                     "permissions": sorted(p.value for p in Perm if who.can(p))}  # fmt: skip
    resp = templates.TemplateResponse(request, template, context, status_code=status)
    resp.headers.update(security_headers(settings))
    return resp


async def viewer(request: Request) -> Principal | None:
    """The logged-in principal, or None when there is no valid session."""
    try:
        return await authenticate(request)
    except HttpError as e:
        if e.status == 401:
            return None
        raise


async def _who_line(request: Request, who: Principal) -> dict[str, str]:
    """What the header says beside the username: the company for a contractor's users, else the role."""
    if who.scope is None:
        return {}
    try:
        # Its own short acquire, not a Conn dependency: a page opens even when the pool cannot give one.
        async with request.app.state.pool.acquire(timeout=5) as conn:
            name = await conn.fetchval(registry_q.CONTRACTOR_NAME, who.scope)
    except DB_ERRORS:  # the page still opens; its data calls will say what is wrong
        return {}
    return {"role_name": name} if name else {}


async def _open(request: Request, page: nav.Page, template: str, **ctx: Any) -> Response:
    who = await viewer(request)
    if who is None:
        # The page's query goes along (a report's period, a list's filters): after logging in the same view opens.
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"{LOGIN}?next={quote(target, safe='/')}", 303)
    if not who.can(page.perm):
        role = nav.ROLE_NAMES[who.role.value]
        message = f"Seu perfil ({role}) não tem acesso a esta página."
        return render(request, "error.html", who, 403, title="Acesso negado", message=message)
    return render(request, template, who, 200, title=page.title, **await _who_line(request, who),
                  **await _designated(request, who), **ctx)  # fmt: skip


async def _designated(request: Request, who: Principal) -> dict[str, bool]:
    """A monitor flagged as the designated servidor decides occurrences, one flagged as the superior authority
    judges appeals: the pages offer it the decision, or the appeal's judgement."""
    if who.role is not Role.MONITOR:
        return {}
    try:
        async with request.app.state.pool.acquire(timeout=5) as conn:
            return {"designated": await is_designated(conn, who.user_id),
                    "superior_authority": await is_superior_authority(conn, who.user_id)}  # fmt: skip
    except DB_ERRORS:  # the page still opens; the API decides in the end
        return {}


PAGE = {p.path: p for p in nav.PAGES}


@router.get("/favicon.ico")
async def favicon() -> Response:
    """The site's icon (browsers ask for it on every site; a 404 clutters logs and consoles)."""
    return FileResponse(HERE / "static" / "favicon.ico", media_type="image/x-icon",
                        headers={"Cache-Control": "public, max-age=86400"})  # fmt: skip


@router.get("/")
async def home(request: Request) -> Response:
    who = await viewer(request)
    return RedirectResponse(nav.home(who) if who else LOGIN, 303)


@router.get(LOGIN)
async def login_page(request: Request, next: str | None = None) -> Response:
    who = await viewer(request)
    if who is not None:
        return RedirectResponse(safe_next(next) if next else nav.home(who), 303)
    # Without a `next`, the front door: it sends each role to its own home once logged in.
    return render(request, "login.html", None, title="Entrar", config={"next": safe_next(next) if next else "/"})


@router.get("/mapa")
async def live_page(request: Request) -> Response:
    return await _open(request, PAGE["/mapa"], "live.html")


@router.get("/historico")
async def history_page(request: Request) -> Response:
    return await _open(request, PAGE["/historico"], "history.html")


@router.get("/relatorios/{kind}")
async def report_page(kind: str, request: Request) -> Response:
    page = PAGE.get(f"/relatorios/{kind}")
    if page is None:
        return await _not_found(request)
    return await _open(request, page, "report.html", config={"report": kind})


@router.get("/verificar")
async def verify_page(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    return await _open(request, PAGE["/verificar"], "verify.html", config={"public_enabled": settings.public_enabled})


@router.get("/cadastro/{entity}")
async def registry_page(entity: str, request: Request) -> Response:
    page = PAGE.get(f"/cadastro/{entity}")
    if page is None:
        return await _not_found(request)
    return await _open(request, page, "registry.html", config={"entity": entity})


@router.get("/contratos")
async def contracts_page(request: Request) -> Response:
    return await _open(request, PAGE["/contratos"], "contracts.html")


@router.get("/calendario-escolar")
async def calendar_page(request: Request) -> Response:
    return await _open(request, PAGE["/calendario-escolar"], "calendar.html")


@router.get("/boletim")
async def boletim_page(request: Request) -> Response:
    return await _open(request, PAGE["/boletim"], "boletim.html")


@router.get("/painel")
async def day_page(request: Request) -> Response:
    return await _open(request, PAGE["/painel"], "day.html")


@router.get("/ocorrencias")
async def occurrences_page(request: Request) -> Response:
    return await _open(request, PAGE["/ocorrencias"], "occurrences.html")


@router.get("/ocorrencias/{occurrence_id}")
async def occurrence_page(occurrence_id: str, request: Request) -> Response:
    if not occurrence_id.isdecimal() or not 0 < int(occurrence_id) < 2**63:
        return await _not_found(request)
    page = nav.Page(request.url.path, f"Ocorrência nº {int(occurrence_id)}", Perm.READ, "")
    return await _open(request, page, "occurrence.html", config={"occurrence_id": int(occurrence_id)})


@router.get("/fiscalizacao/classificacao")
async def kinds_page(request: Request) -> Response:
    return await _open(request, PAGE["/fiscalizacao/classificacao"], "kinds.html")


@router.get("/administracao/upfm")
async def upfm_page(request: Request) -> Response:
    return await _open(request, PAGE["/administracao/upfm"], "upfm.html")


@router.get("/usuarios")
async def users_page(request: Request) -> Response:
    return await _open(request, PAGE["/usuarios"], "registry.html", config={"entity": "usuarios"})


@router.get("/gateways-traccar")
async def gateways_page(request: Request) -> Response:
    return await _open(request, PAGE["/gateways-traccar"], "registry.html", config={"entity": "gateways"})


@router.get("/auditoria")
async def audit_page(request: Request) -> Response:
    return await _open(request, PAGE["/auditoria"], "audit.html")


async def _not_found(request: Request) -> Response:
    who = await viewer(request)
    if who is None:
        return RedirectResponse(LOGIN, 303)
    return render(request, "error.html", who, 404, title="Página não encontrada",
                  message="Esta página não existe. Use o menu para escolher outra.")  # fmt: skip
