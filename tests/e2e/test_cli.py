"""The CLI as an operator uses it: local database lifecycle, registering and moving trackers."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.e2e.conftest import cli


def test_local_database_lifecycle(fresh_cluster_env: dict[str, str]) -> None:
    env = fresh_cluster_env
    status = cli(env, "db", "status", check=False)
    assert status.returncode == 3 and json.loads(status.stdout)["running"] is False
    assert "started" in cli(env, "db", "start").stdout
    assert "already running" in cli(env, "db", "start").stdout
    assert json.loads(cli(env, "db", "status").stdout)["running"] is True
    assert "applied: 0001" in cli(env, "migrate").stdout
    assert "up to date" in cli(env, "migrate").stdout
    url = cli(env, "db", "url").stdout.strip()
    assert url.startswith("postgresql:///telemetria?host=") and env["TELEMETRIA_DB_PORT"] in url
    assert cli(env, "db", "stop").stdout.strip() == "stopped"
    assert cli(env, "db", "status", check=False).returncode == 3


def test_invalid_settings_are_refused_naming_the_variable(db_env: dict[str, str]) -> None:
    proc = cli({**db_env, "TELEMETRIA_RETENTION_DAYS": "365"}, "migrate", check=False)
    assert proc.returncode == 2
    assert "TELEMETRIA_RETENTION_DAYS" in proc.stderr and "2 years" in proc.stderr


def test_register_move_and_post(db_env: dict[str, str], server: str) -> None:
    env = db_env
    v = json.loads(cli(env, "vehicle", "add", "--plate", "jru-4e21", "--prefix", "07").stdout)
    assert v["plate"] == "JRU4E21"
    cli(env, "vehicle", "add", "--plate", "JRU4E22")
    t = json.loads(cli(env, "tracker", "add", "--unique-id", "359000000000777", "--vehicle", "JRU4E21").stdout)
    assert len(t["token"]) >= 40 and t["since"] is None
    dup = cli(env, "vehicle", "add", "--plate", "JRU4E21", check=False)
    assert dup.returncode == 1 and "already exists" in dup.stderr
    bad = cli(env, "vehicle", "add", "--plate", "12", check=False)
    assert bad.returncode == 1 and "not a Brazilian plate" in bad.stderr

    auth = {"Authorization": f"Bearer {t['token']}"}
    fixes = [{"ts": f"2026-01-10T08:0{i}:00-04:00", "lat": -10.43, "lon": -62.47 + i * 0.001} for i in range(6)]
    r = httpx.post(f"{server}/api/v1/fixes", json={"fixes": fixes[:3]}, headers=auth)
    assert r.json()["accepted"] == 3
    moved = json.loads(
        cli(
            env, "tracker", "move", "--unique-id", "359000000000777", "--to", "JRU4E22", "--at", "2026-01-10T08:01:30"
        ).stdout
    )
    assert moved["from_vehicle"] == "JRU4E21" and moved["fixes_reattributed"] == 1
    r = httpx.post(f"{server}/api/v1/fixes", json={"fixes": fixes}, headers=auth)
    assert r.json() == {"accepted": 3, "duplicates": 3, "rejected": []}
    listed = {x["unique_id"]: x for x in json.loads(cli(env, "tracker", "list").stdout)}
    assert listed["359000000000777"]["vehicle"] == "JRU4E22"

    cli(env, "tracker", "deactivate", "--unique-id", "359000000000777")
    r = httpx.post(f"{server}/api/v1/fixes", json=fixes[0], headers=auth)
    assert r.status_code == 401


def test_simulate_command_posts_to_the_server(db_env: dict[str, str], server: str) -> None:
    proc = cli(
        db_env,
        "simulate",
        "--vehicles",
        "2",
        "--interval",
        "10",
        "--speedup",
        "60",
        "--duration",
        "3",
        "--url",
        server,
        "--fleet",
        "CLI",
    )
    assert "2 vehicles" in proc.stdout and "errors=0" in proc.stdout, proc.stdout + proc.stderr
    plates = {v["plate"]: v for v in json.loads(cli(db_env, "vehicle", "list").stdout)}
    assert {"CLI1A00", "CLI1A01"} <= plates.keys()
    assert plates["CLI1A00"]["tracker"] == "cli-0001"


def test_first_admin_tokens_and_route_import(db_env: dict[str, str], server: str) -> None:
    """What docs/api.md tells an operator to do on a new installation."""
    env = {**db_env, "TELEMETRIA_PASSWORD": "senha do coordenador"}
    user = json.loads(cli(env, "user", "add", "--username", "coordenacao", "--role", "admin").stdout)
    assert user["role"] == "admin" and "password_hash" not in user
    short = cli(
        {**env, "TELEMETRIA_PASSWORD": "curta"}, "user", "add", "--username", "x", "--role", "monitor", check=False
    )
    assert short.returncode == 1 and "password" in short.stderr
    token = cli(env, "token", "create", "--username", "coordenacao").stdout.strip()
    assert token.startswith("tlm_")
    route_file = Path(__file__).parent.parent / "payloads" / "routes" / "track_segments.gpx"
    route = json.loads(cli(env, "route", "import", str(route_file), "--code", "623", "--declared-km", "5.6").stdout)
    assert route["stops_count"] == 4 and abs(route["length_m"] - 5435.5) < 1
    bad = cli(env, "route", "import", str(route_file.with_name("bad_one_point.gpx")), "--code", "X", check=False)
    assert bad.returncode == 1 and "at least 2" in bad.stderr
    r = httpx.get(f"{server}/api/v1/routes", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and r.json()["items"][0]["code"] == "623"
    login = httpx.post(
        f"{server}/api/v1/auth/login", json={"username": "coordenacao", "password": "senha do coordenador"}
    )
    assert login.status_code == 200 and "telemetria_session" in login.cookies
    # The last active admin cannot be deactivated (auth/store.py): a second one first.
    cli(env, "user", "add", "--username", "vice.coordenacao", "--role", "admin")
    cli(env, "user", "deactivate", "--username", "coordenacao")
    assert httpx.get(f"{server}/api/v1/routes", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_an_admin_lifts_a_lockout_from_the_command_line(db_env: dict[str, str], clean: None, server: str) -> None:
    """The way back in for an owner who locked their own address out (or shares it with the attacker)."""
    env = {**db_env, "TELEMETRIA_PASSWORD": "uma senha comprida"}
    cli(env, "user", "add", "--username", "secretaria", "--role", "admin")

    def login(password: str) -> int:
        r = httpx.post(f"{server}/api/v1/auth/login", json={"username": "secretaria", "password": password})
        return r.status_code

    assert [login("not the password") for _ in range(5)] == [401] * 4 + [429]
    assert login("uma senha comprida") == 429
    unlocked = json.loads(cli(env, "user", "unlock", "--username", "secretaria").stdout)
    assert unlocked["username"] == "secretaria"
    assert login("uma senha comprida") == 200
    unknown = cli(env, "user", "unlock", "--username", "ninguem", check=False)
    assert unknown.returncode == 1 and "no user 'ninguem'" in unknown.stderr


def test_the_designated_servidor_from_the_command_line(db_env: dict[str, str], clean: None) -> None:
    """The flag that lets a monitor decide occurrences (Art. 42); only servidores may carry it."""
    env = {**db_env, "TELEMETRIA_PASSWORD": "uma senha comprida"}
    added = cli(env, "user", "add", "--username", "servidora", "--role", "monitor", "--designated")
    assert json.loads(added.stdout)["designated"] is True
    assert json.loads(cli(env, "user", "undesignate", "--username", "servidora").stdout)["designated"] is False
    assert json.loads(cli(env, "user", "designate", "--username", "servidora").stdout)["designated"] is True
    bad = cli(env, "user", "add", "--username", "tce", "--role", "auditor", "--designated", check=False)
    assert bad.returncode == 1 and "designated" in bad.stderr


def test_retention_command_names_its_cutoff_and_refuses_under_two_years(db_env: dict[str, str]) -> None:
    out = json.loads(cli(db_env, "retention", "run", "--dry-run").stdout)
    assert out["dry_run"] is True and out["retention_days"] == 731 and out["cutoff"]
    assert "public.fixes" in [h["hypertable"] for h in out["hypertables"]]
    refused = cli({**db_env, "TELEMETRIA_RETENTION_DAYS": "729"}, "retention", "run", check=False)
    assert refused.returncode == 2
    assert "TELEMETRIA_RETENTION_DAYS" in refused.stderr and "Art. 15" in refused.stderr


def test_a_second_service_on_a_taken_port_says_so_plainly(db_env: dict[str, str], server: str) -> None:
    port = server.rsplit(":", 1)[1]
    for command in (("demo",), ("serve",)):
        proc = cli(db_env, *command, "--host", "127.0.0.1", "--port", port, check=False)
        assert proc.returncode == 1, proc.stderr
        assert "already in use" in proc.stderr.lower() and f"--port {int(port) + 1}" in proc.stderr
        assert "Traceback" not in proc.stderr and "{" not in proc.stderr  # a sentence, not a JSON traceback
