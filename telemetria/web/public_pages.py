"""The public area's pages (no login): itineraries and map, monthly service, daily seal roots.

Like every page they carry no data of their own: their scripts read the public JSON API (/public/...). While
`public_enabled` is off every /publico address answers a 404 page, as if the area did not exist.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from telemetria.settings import Settings
from telemetria.web.pages import render

router = APIRouter(include_in_schema=False)

# The public area's pages: path, title, template (also the links of its header).
PAGES = (
    ("/publico", "Itinerários do transporte escolar", "public_itineraries.html"),
    ("/publico/servico", "Serviço prestado por mês", "public_service.html"),
    ("/publico/selos", "Selos diários das posições", "public_seals.html"),
)
CACHE_CONTROL = "public, max-age=300"  # nothing on them is anyone's: they show no one logged in


def _page(request: Request, path: str) -> Response:
    settings: Settings = request.app.state.settings
    if not settings.public_enabled:
        return render(request, "error.html", None, 404, title="Página não encontrada",
                      message="Esta página não existe.")  # fmt: skip
    title, template = next((t, tpl) for p, t, tpl in PAGES if p == path)
    ctx: dict[str, Any] = {"municipality": settings.municipality_name, "public_pages": PAGES,
                           "precision_m": settings.public_boarding_precision_m}  # fmt: skip
    resp = render(request, template, None, 200, title=title, **ctx)
    resp.headers["Cache-Control"] = CACHE_CONTROL
    return resp


@router.get("/publico")
async def itineraries_page(request: Request) -> Response:
    return _page(request, "/publico")


@router.get("/publico/servico")
async def service_page(request: Request) -> Response:
    return _page(request, "/publico/servico")


@router.get("/publico/selos")
async def seals_page(request: Request) -> Response:
    return _page(request, "/publico/selos")


@router.get("/publico/{rest:path}")
async def unknown_page(rest: str, request: Request) -> Response:
    """Any other /publico address: the 404 page, whether the area is on or off (never the login page)."""
    return render(request, "error.html", None, 404, title="Página não encontrada", message="Esta página não existe.")
