"""Deployment files (no Docker engine on these machines): valid YAML, names that exist, versions that match."""

from __future__ import annotations

import glob
import re
import tomllib
from pathlib import Path

import yaml

from telemetria.forwarded import parse_trusted
from telemetria.serve import uvicorn_config
from telemetria.settings import Settings
from tests.deployment import compose_app_env, compose_gateway, nginx_forwarded_for_variable

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {f"TELEMETRIA_{name.upper()}" for name in Settings.model_fields}


def test_compose_runs_the_service_on_timescaledb_2_19_pg15() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    db, app = compose["services"]["db"], compose["services"]["app"]
    assert re.fullmatch(r"timescale/timescaledb:2\.19\.\d+-pg15", db["image"])
    assert "healthcheck" in db and app["depends_on"]["db"]["condition"] == "service_healthy"
    assert app["build"] == "."
    unknown = {k for k in app["environment"] if k.startswith("TELEMETRIA_")} - FIELDS
    assert not unknown, unknown
    assert app["environment"]["TELEMETRIA_DATABASE_URL"].endswith("@db:5432/telemetria")
    assert all(p.startswith("127.0.0.1:") for p in app["ports"])  # only a local reverse proxy reaches it


def test_compose_believes_forwarded_headers_from_the_host_proxy_only() -> None:
    """Connections through the published port arrive from the network's gateway: that address, nothing wider."""
    trusted = parse_trusted(compose_app_env()["TELEMETRIA_FORWARDED_ALLOW_IPS"])
    assert trusted == parse_trusted(compose_gateway())
    assert all(net.num_addresses == 1 for net in trusted)
    assert nginx_forwarded_for_variable() in ("$remote_addr", "$proxy_add_x_forwarded_for")


def test_uvicorn_does_not_rewrite_the_client_address_before_the_app_does() -> None:
    """uvicorn's proxy headers take the leftmost X-Forwarded-For when all is trusted; forwarded.py decides."""
    assert uvicorn_config(settings=Settings(), log_config=None).proxy_headers is False


def test_dockerfile_names_real_settings_and_endpoints() -> None:
    text = (ROOT / "Dockerfile").read_text()
    names = set(re.findall(r"\bTELEMETRIA_[A-Z_]+", text))
    assert names and names <= FIELDS, names - FIELDS
    assert "/healthz" in text and "USER telemetria" in text and "postgresql-client-15" in text


def test_the_package_data_carries_every_web_file() -> None:
    """The Docker image installs a wheel: a page script or template the package-data globs miss is a broken page."""
    package = ROOT / "telemetria"
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["telemetria"]
    # Expanded the way setuptools does: a glob relative to the package, `*` never crossing a folder.
    shipped = {Path(p) for pattern in patterns for p in glob.glob(pattern, root_dir=package)}
    web = {
        p.relative_to(package)
        for p in (package / "web").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }
    assert web - shipped == set()
