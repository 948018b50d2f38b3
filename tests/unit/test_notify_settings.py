"""Which notifications the settings ask for, their retry schedule and the refusals of half-made configurations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from telemetria.app import create_app
from telemetria.occurrences.model import Kind
from telemetria.occurrences.notify import outbox as notify
from telemetria.settings import Settings


def test_kinds_all_or_listed_and_an_unknown_one_stops_the_start() -> None:
    assert notify.kinds(Settings(notify_kinds="")) == []
    assert notify.kinds(Settings(notify_kinds=" speeding, run_not_made ,")) == ["speeding", "run_not_made"]
    assert notify.kinds(Settings(notify_kinds="all")) == [k.value for k in Kind]
    with pytest.raises(ValueError, match="TELEMETRIA_NOTIFY_KINDS: unknown kinds speeding2"):
        create_app(Settings(notify_kinds="speeding2"))


def test_channels_follow_what_is_configured() -> None:
    assert notify.channels(Settings()) == []
    mail = {"smtp_host": "smtp.x", "smtp_from": "t@x", "notify_email_to": "a@x"}
    hook = {"webhook_url": "https://h.x/in", "webhook_secret": "k"}
    assert notify.channels(Settings(**mail)) == ["email"]  # type: ignore[arg-type]
    assert notify.channels(Settings(**hook)) == ["webhook"]  # type: ignore[arg-type]
    assert notify.channels(Settings(**mail, **hook)) == ["email", "webhook"]  # type: ignore[arg-type]
    assert notify.channels(Settings(**mail, **hook, notify_interval_s=0)) == []  # type: ignore[arg-type]
    assert notify.channels(Settings(smtp_host="smtp.x")) == []  # nobody to write to


def test_retry_doubles_up_to_an_hour() -> None:
    waits = [notify.retry_delay(n) for n in range(1, 10)]
    assert waits[:4] == [timedelta(minutes=m) for m in (1, 2, 4, 8)]
    assert waits[-1] == timedelta(hours=1) and waits == sorted(waits)


def test_link_is_absolute_with_the_public_url() -> None:
    assert notify.link(Settings(), 12) == "/ocorrencias/12"
    assert notify.link(Settings(public_url="https://t.x/"), 12) == "https://t.x/ocorrencias/12"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"webhook_url": "https://h.x/in"}, "needs TELEMETRIA_WEBHOOK_SECRET"),
        ({"webhook_url": "ftp://h.x/in", "webhook_secret": "k"}, "starts with https:// or http://"),
        ({"smtp_host": "smtp.x", "notify_email_to": "a@x"}, "needs TELEMETRIA_SMTP_FROM"),
        ({"notify_email_to": "a@x, not an address"}, "not e-mail addresses: not an address"),
        ({"coat_of_arms_path": "/nonexistent/brasao.png"}, "is not a file"),
        ({"smtp_tls": "tls"}, "smtp_tls"),
    ],
)
def test_half_made_configurations_are_refused(values: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(**values)  # type: ignore[arg-type]
