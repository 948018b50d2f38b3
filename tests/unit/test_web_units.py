"""Pure parts of the web system: where a login may send the browser, freshness, page headers, the menu."""

from __future__ import annotations

import pytest

from telemetria.auth.roles import Perm, Principal, Role
from telemetria.live.status import Freshness, freshness
from telemetria.settings import MapLayer, Settings
from telemetria.web import nav
from telemetria.web.pages import safe_next, security_headers


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (None, "/mapa"),
        ("", "/mapa"),
        ("/historico", "/historico"),
        ("/relatorios/km?from=2026-11-01", "/relatorios/km?from=2026-11-01"),
        ("https://evil.example/", "/mapa"),
        ("//evil.example/x", "/mapa"),
        ("/\\evil.example", "/mapa"),
        ("javascript:alert(1)", "/mapa"),
        ("/entrar", "/mapa"),
    ],
)
def test_after_login_only_paths_of_this_site(target: str | None, expected: str) -> None:
    assert safe_next(target) == expected


@pytest.mark.parametrize(
    ("age", "state"),
    [(None, Freshness.NEVER), (-3.0, Freshness.ONLINE), (0.0, Freshness.ONLINE), (60.0, Freshness.ONLINE),
     (60.5, Freshness.LATE), (600.0, Freshness.LATE), (601.0, Freshness.OFFLINE)],
)  # fmt: skip
def test_freshness_against_the_30_s_rule(age: float | None, state: Freshness) -> None:
    assert freshness(age, 60.0, 600.0) is state


def test_pages_allow_scripts_from_this_site_only_and_images_from_the_map_hosts() -> None:
    layers = [
        MapLayer(name="Ruas", tiles=["https://{s}.tiles.example.org/{z}/{x}/{y}.png"]),
        MapLayer(name="Foto", tiles=["https://img.example.gov.br/wmts/{z}/{y}/{x}", "/tiles/{z}/{x}/{y}.png"]),
    ]
    csp = security_headers(Settings(map_layers=layers))["Content-Security-Policy"]
    parts = dict(p.split(" ", 1) for p in csp.split("; "))
    assert parts["script-src"] == "'self'"
    assert parts["img-src"] == "'self' data: blob: https://*.tiles.example.org https://img.example.gov.br"
    assert parts["frame-ancestors"] == "'none'"


def test_a_tile_url_must_be_a_template() -> None:
    with pytest.raises(ValueError, match="tile URL"):
        MapLayer(name="x", tiles=["ftp://example.org/tiles"])


def _who(role: Role) -> Principal:
    return Principal(1, "u", role, 7 if role is Role.CONTRACTOR else None, "session")


def test_the_menu_shows_a_role_only_the_pages_it_may_open() -> None:
    for role in Role:
        shown = {p.path for _, pages in nav.menu(_who(role)) for p in pages}
        assert shown == {p.path for p in nav.PAGES if _who(role).can(p.perm)}
    contractor = {p.path for _, pages in nav.menu(_who(Role.CONTRACTOR)) for p in pages}
    assert "/mapa" in contractor and "/cadastro/veiculos" not in contractor and "/usuarios" not in contractor
    assert all(p.perm in Perm for p in nav.PAGES)
