"""`telemetria token`: the expiry is chosen at creation (a year by default, a date, or `never`) and shown."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.e2e.conftest import cli


def test_token_create_and_list_show_the_expiry(db_env: dict[str, str]) -> None:
    env = {**db_env, "TELEMETRIA_PASSWORD": "senha do script de exportação"}
    cli(env, "user", "add", "--username", "exportador", "--role", "auditor")
    made = cli(env, "token", "create", "--username", "exportador", "--name", "tce")
    token = made.stdout.strip()
    assert token.startswith("tlm_") and "\n" not in token  # stdout is the token alone, for scripts
    expires = datetime.fromisoformat(made.stderr.split()[1])
    assert made.stderr.startswith("expires ") and abs(expires - datetime.now(UTC) - timedelta(days=365)) < timedelta(
        minutes=5
    )
    dated = json.loads(
        cli(env, "token", "create", "--username", "exportador", "--expires", "2031-03-02", "--json").stdout
    )
    assert datetime.fromisoformat(dated["expires_at"]) == datetime(2031, 3, 2, 4, tzinfo=UTC)  # local midnight
    never = json.loads(cli(env, "token", "create", "--username", "exportador", "--expires", "never", "--json").stdout)
    assert never["expires_at"] is None and never["token"].startswith("tlm_")
    past = cli(env, "token", "create", "--username", "exportador", "--expires", "2020-01-01", check=False)
    assert past.returncode != 0 and "expires_at" in past.stderr and "tlm_" not in past.stdout
    listed = json.loads(cli(env, "token", "list", "--username", "exportador").stdout)
    assert [t["expires_at"] is None for t in listed] == [False, False, True]
    assert all("expired" in t and "token" not in t for t in listed)
