"""The occurrences API on the real database: the list, the detail, and the administrative process from `detected`
to `closed` — review, frozen evidence, notification, the contractor's defence, the decision with the fine, close.

Occurrences are inserted here with SQL (the detector's store writes them in production)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import httpx
import orjson
import pypdf
import pytest

from telemetria.app import create_app
from telemetria.auth import store
from telemetria.auth.roles import Role
from telemetria.occurrences.process.evidence import sha256
from tests.conftest import ScratchDb
from tests.db.conftest import People
from tests.db.world import World, make_world

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)  # Monday 2 March 2026, 07:00 local
ITEM_FIELDS = {"id", "kind", "article", "severity", "vehicle_id", "plate", "contractor_id", "driver", "route_id",
               "start", "end", "lat", "lon", "place", "facts", "status", "detected_at", "late"}  # fmt: skip


@pytest.fixture
async def api(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(test_db.settings(rollup_interval_s=0, upfm_brl="2025=4.52,2026=4.71", defense_days=5))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def occurrence(
    conn: asyncpg.Connection,
    w: World,
    n: int = 1,
    *,
    kind: str = "speeding",
    start: datetime = T0,
    minutes: float = 2,
    status: str = "detected",
    severity: str | None = "media",
    article: str | None = "Art. 37, X",
    **fields: Any,
) -> int:
    """An occurrence of vehicle v<n> (contractor c<n>, driver d<n>, route r<n>) as the detector stores it."""
    values = {
        "kind": kind, "vehicle_id": w[f"v{n}"], "contractor_id": w[f"c{n}"], "driver_id": w[f"d{n}"],
        "route_id": w[f"r{n}"], "day": start.astimezone(UTC).date(), "start_ts": start,
        "end_ts": start + timedelta(minutes=minutes), "lat": -10.44, "lon": -62.468, "place": "Av. Brasil",
        "facts": {"max_kmh": 71.0, "limit_kmh": 50, "over_kmh": 21.0, "duration_s": 120, "km": 2.1},
        "article": article, "severity": severity, "status": status, **fields,
    }  # fmt: skip
    cols = ", ".join(values)
    marks = ", ".join(f"${i}" for i in range(1, len(values) + 1))
    oid = await conn.fetchval(f"INSERT INTO occurrences ({cols}) VALUES ({marks}) RETURNING id", *values.values())
    await conn.execute(
        "INSERT INTO occurrence_history (occurrence_id, actor, action, to_status) VALUES ($1, 'detector',"
        " 'detected', 'detected')",
        oid,
    )
    return int(oid)


async def fixes(conn: asyncpg.Connection, w: World, times: list[datetime], n: int = 1) -> None:
    for i, ts in enumerate(times):
        await conn.execute(
            "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh) VALUES ($1, $2, $3, $4, $5, $6)",
            w[f"v{n}"], w[f"t{n}"], ts, -10.44, -62.47 + i * 0.001, 60.0 + i,
        )  # fmt: skip


def auth(w: World, role: str) -> dict[str, str]:
    return w.people.auth(role)


async def post(api: httpx.AsyncClient, w: World, role: str, oid: int, action: str, **kw: Any) -> httpx.Response:
    headers = {**auth(w, role), **kw.pop("headers", {})}
    return await api.post(f"/api/v1/occurrences/{oid}/{action}", headers=headers, **kw)


async def to_notified(api: httpx.AsyncClient, w: World, oid: int) -> None:
    r = await post(api, w, "monitor", oid, "review", json={"decision": "confirm"})
    assert r.status_code == 200, r.text
    r = await post(api, w, "monitor", oid, "notify")
    assert r.status_code == 200, r.text


async def to_decided(
    api: httpx.AsyncClient, w: World, oid: int, penalty: str = "fine", conn: asyncpg.Connection | None = None
) -> httpx.Response:
    """Through notification and defence (with `conn`: no defence, the deadline made past) to the decision."""
    await to_notified(api, w, oid)
    if conn is None:
        r = await post(api, w, "contractor", oid, "defense",
                       json={"text": "O veículo estava em emergência.", "final": True})  # fmt: skip
        assert r.status_code == 201, r.text
    else:
        await conn.execute("UPDATE occurrences SET defense_due = now() - interval '1 hour' WHERE id = $1", oid)
    return await post(api, w, "admin", oid, "decision", json={"penalty": penalty, "motivation": "Art. 42: provado."})


# --- list -------------------------------------------------------------------------------------------------------


async def test_the_list_items_have_exactly_the_contract_fields(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    a = await occurrence(conn, world)
    await occurrence(conn, world, 2, kind="tracker_silent", start=T0 + timedelta(hours=1), status="confirmed")
    await occurrence(conn, world, start=T0 + timedelta(days=3))  # outside the period
    r = await api.get("/api/v1/occurrences", params={"from": "2026-03-02", "to": "2026-03-02"},
                      headers=auth(world, "auditor"))  # fmt: skip
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == 2 and body["items"][0]["id"] == a
    item = body["items"][0]
    assert set(item) == ITEM_FIELDS
    assert item["plate"] == "AAA1A11" and item["driver"] == "Condutor 1" and item["contractor_id"] == world["c1"]
    assert item["start"] == "2026-03-02T11:00:00+00:00" and item["end"] == "2026-03-02T11:02:00+00:00"
    assert item["facts"]["max_kmh"] == 71.0 and item["late"] is False and item["status"] == "detected"

    by = {"kind": "tracker_silent"}, {"status": "detected,confirmed"}, {"vehicle_id": str(world["v2"])}
    counts = []
    for p in by:
        q = {"from": "2026-03-02", **p}
        counts.append((await api.get("/api/v1/occurrences", params=q, headers=auth(world, "monitor"))).json()["total"])
    assert counts == [1, 2, 1]
    r = await api.get("/api/v1/occurrences?from=2026-03-02&status=detected&status=withdrawn",
                      headers=auth(world, "monitor"))  # fmt: skip
    assert r.json()["total"] == 1
    for bad, field in (({"status": "open"}, "status"), ({"kind": "x"}, "kind"), ({"from": "02/03/2026"}, "from"),
                       ({"from": "2026-03-03", "to": "2026-03-02"}, "to")):  # fmt: skip
        r = await api.get("/api/v1/occurrences", params=bad, headers=auth(world, "monitor"))
        assert r.status_code == 422 if field != "from" else r.status_code == 400, (bad, r.text)
        assert field in r.json()["detail"]


async def test_the_list_as_pt_br_csv(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    await occurrence(conn, world)
    r = await api.get("/api/v1/occurrences", params={"from": "2026-03-02", "format": "csv"},
                      headers=auth(world, "auditor"))  # fmt: skip
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.content.startswith("\ufeff".encode())
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig")), delimiter=";"))
    assert rows[0][0] == "ID" and "Início (America/Porto_Velho)" in rows[0]
    line = dict(zip(rows[0], rows[1], strict=True))
    assert line["Tipo"] == "Excesso de velocidade" and line["Placa"] == "AAA1A11"
    assert line["Início (America/Porto_Velho)"] == "02/03/2026 07:00:00" and line["Latitude"] == "-10,440000"
    assert line["Com dados atrasados"] == "Não"
    assert await conn.fetchval("SELECT count(*) FROM audit_log WHERE action = 'export.occurrences'") == 1


async def test_the_occurrence_files_are_in_words_with_local_times(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Issue 36: no code ("detected", "closed", "media") and no JSON in the CSV or the PDF: the severity with its
    article, the state and the measured facts in the Termo's words, times in the municipality's zone."""
    await occurrence(conn, world)
    facts = {"nearest_stop": "Escola Municipal", "nearest_m": 412, "arrived": "2026-03-02T11:05:09Z"}
    await occurrence(conn, world, 2, status="closed", severity="grave", article="Art. 38, IX", facts=facts)
    r = await api.get("/api/v1/occurrences", params={"from": "2026-03-02", "format": "csv"},
                      headers=auth(world, "auditor"))  # fmt: skip
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig")), delimiter=";"))
    lines = [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    first, second = lines
    assert first["Gravidade"] == "média (Art. 37)" and first["Situação"] == "detectada (aguarda revisão)"
    assert first["Fatos medidos"] == (
        "Velocidade máxima: 71,0 km/h; Limite de velocidade: 50,0 km/h; Acima do limite: 21,0 km/h; "
        "Duração: 2 min 00 s; Distância percorrida: 2,10 km"
    )
    assert second["Gravidade"] == "grave (Art. 38)" and second["Situação"] == "encerrada"
    assert "Chegada: 02/03/2026 07:05:09" in second["Fatos medidos"]  # local time, not the stored UTC
    assert "Ponto autorizado mais próximo: Escola Municipal" in second["Fatos medidos"]
    for line in lines:
        assert "{" not in line["Fatos medidos"] and '"' not in line["Fatos medidos"]
        assert line["Situação"] not in ("detected", "closed") and line["Gravidade"] not in ("media", "grave")
    params = {"from": "2026-03-02", "format": "pdf", "status": "closed,detected"}
    r = await api.get("/api/v1/occurrences", params=params, headers=auth(world, "auditor"))
    text = " ".join(pdf_text(r.content).split())
    assert "encerrada" in text and "média (Art. 37)" in text and "Velocidade máxima: 71,0 km/h" in text
    assert "Situações: encerrada, detectada (aguarda revisão)" in text
    assert not re.search(r"\b(detected|closed|media)\b", text) and "max_kmh" not in text


async def test_a_contractor_sees_only_its_own_from_notified_on(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    own_detected = await occurrence(conn, world)
    own_notified = await occurrence(conn, world, start=T0 + timedelta(minutes=30))
    other = await occurrence(conn, world, 2, start=T0 + timedelta(minutes=40))
    await to_notified(api, world, own_notified)
    await to_notified(api, world, other)
    r = await api.get("/api/v1/occurrences?from=2026-03-02", headers=auth(world, "contractor"))
    assert [i["id"] for i in r.json()["items"]] == [own_notified]
    # Filtering by another contractor does not widen the scope.
    r = await api.get(f"/api/v1/occurrences?from=2026-03-02&contractor_id={world['c2']}",
                      headers=auth(world, "contractor"))  # fmt: skip
    assert r.json()["total"] == 0
    for oid in (own_detected, other):
        r = await api.get(f"/api/v1/occurrences/{oid}", headers=auth(world, "contractor"))
        assert r.status_code == 404, r.text
    assert (await api.get(f"/api/v1/occurrences/{own_notified}", headers=auth(world, "contractor"))).status_code == 200


# --- the process ------------------------------------------------------------------------------------------------


async def test_the_whole_process_with_frozen_evidence(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world)
    await fixes(conn, world, [T0 - timedelta(minutes=11), T0 - timedelta(minutes=5), T0, T0 + timedelta(minutes=1),
                              T0 + timedelta(minutes=12), T0 + timedelta(minutes=13)])  # fmt: skip
    proxy = {"X-Forwarded-For": "203.0.113.9"}  # the test client's peer (127.0.0.1) is the trusted proxy
    r = await api.post(f"/api/v1/occurrences/{oid}/review", headers={**auth(world, "monitor"), **proxy},
                       json={"decision": "confirm", "article": "Art. 38, VIII",
                             "reason": "confirmado no mapa"})  # fmt: skip
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["status"] == "confirmed" and d["severity"] == "grave" and d["article"] == "Art. 38, VIII"
    digest = d["evidence_sha256"]
    assert len(digest) == 64
    confirmed = d["history"][-1]
    assert confirmed["action"] == "confirmed" and confirmed["actor"] == "monitor" and confirmed["ip"] == "203.0.113.9"
    assert confirmed["data"]["reclassified"] == {"from": {"article": "Art. 37, X", "severity": "media"},
                                                 "to": {"article": "Art. 38, VIII", "severity": "grave"}}  # fmt: skip
    stored = await conn.fetchrow("SELECT content, sha256 FROM occurrence_evidence WHERE occurrence_id = $1", oid)
    assert stored["sha256"] == digest == sha256(bytes(stored["content"]))
    ev = orjson.loads(stored["content"])
    assert [f["ts"] for f in ev["fixes"]] == [
        (T0 + timedelta(minutes=m)).isoformat() for m in (-5, 0, 1, 12)
    ]  # ± 10 min around [start, end]
    assert ev["facts"]["max_kmh"] == 71.0 and ev["frozen_by"] == "monitor"
    assert ev["occurrence"]["severity"] == "grave" and "history" not in ev["occurrence"]
    assert {(x["kind"], x["item_id"]) for x in ev["registry"]} >= {("vehicle", world["v1"]), ("route", world["r1"])}

    # Late data and registry edits after confirmation change nothing the process rests on.
    await fixes(conn, world, [T0 + timedelta(seconds=30)])
    await conn.execute("UPDATE vehicles SET description = 'editado depois' WHERE id = $1", world["v1"])
    await conn.execute("UPDATE occurrences SET facts = '{\"max_kmh\": 99}' WHERE id = $1", oid)
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await conn.execute("UPDATE occurrence_evidence SET sha256 = $2 WHERE occurrence_id = $1", oid, "0" * 64)
    again = await conn.fetchrow("SELECT content, sha256 FROM occurrence_evidence WHERE occurrence_id = $1", oid)
    assert (bytes(again["content"]), again["sha256"]) == (bytes(stored["content"]), digest)
    r = await api.get(f"/api/v1/occurrences/{oid}", headers=auth(world, "auditor"))
    assert r.json()["evidence_sha256"] == digest

    r = await post(api, world, "monitor", oid, "notify")
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["status"] == "notified" and d["notified_at"] and d["defense_due"]
    notified_at = datetime.fromisoformat(d["notified_at"])
    due = datetime.fromisoformat(d["defense_due"])
    assert due > notified_at + timedelta(days=5) and due.astimezone(UTC).strftime("%H:%M:%S") == "03:59:59"

    r = await post(api, world, "contractor", oid, "defense", json={"text": "O limite era 60 km/h."})
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "defense" and r.json()["defense"]["late"] is False
    assert all("ip" not in h for h in r.json()["history"])  # the servidores' addresses are not the company's
    pdf = b"%PDF-1.4 laudo"
    r = await post(api, world, "contractor", oid, "defense", data={"text": "Segue o laudo.", "final": "true"},
                   files=[("files", ("../../laudo.pdf", pdf, "application/pdf")),
                          ("files", ("foto.html", b"<script>x</script>", "text/html"))])  # fmt: skip
    assert r.status_code == 201, r.text
    atts = r.json()["attachments"]
    assert (atts[0]["filename"], atts[0]["size"], atts[0]["sha256"]) == ("laudo.pdf", len(pdf), sha256(pdf))
    r = await api.get(f"/api/v1/occurrences/{oid}/attachments/{atts[0]['id']}", headers=auth(world, "auditor"))
    assert r.status_code == 200 and r.content == pdf and r.headers["content-type"] == "application/pdf"
    assert r.headers["content-disposition"].startswith("attachment")
    r = await api.get(f"/api/v1/occurrences/{oid}/attachments/{atts[1]['id']}", headers=auth(world, "contractor"))
    assert r.headers["content-type"] == "application/octet-stream"  # never served as a page

    r = await post(api, world, "admin", oid, "decision", json={"penalty": "fine", "motivation": "Excesso provado."})
    assert r.status_code == 409 and r.json()["field"] == "penalty"  # Art. 38: "advertência escrita e multa"
    r = await post(api, world, "admin", oid, "decision",
                   json={"penalty": "warning_and_fine", "motivation": "Excesso provado."})  # fmt: skip
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["status"] == "decided" and d["penalty"] == "warning_and_fine" and d["recurrence_of"] is None
    assert (Decimal(str(d["fine_upfm"])), Decimal(str(d["fine_brl"]))) == (Decimal(30), Decimal("141.30"))
    assert d["final"] is False and d["deadlines"]["appeal_until"]  # the appeal term runs (Lei 14.133 Art. 166)
    r = await post(api, world, "monitor", oid, "close", json={"text": "multa lançada"})
    assert r.status_code == 409 and "definitiva" in r.json()["detail"]
    await conn.execute("UPDATE occurrences SET appeal_due = now() - interval '1 second' WHERE id = $1", oid)
    r = await post(api, world, "monitor", oid, "close", json={"text": "multa lançada"})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["status"] == "closed"
    assert [(h["action"], h["from_status"], h["to_status"]) for h in d["history"]] == [
        ("detected", None, "detected"), ("confirmed", "detected", "confirmed"), ("notified", "confirmed", "notified"),
        ("defense", "notified", "defense"), ("defense", "defense", "defense"), ("decided", "defense", "decided"),
        ("closed", "decided", "closed"),
    ]  # fmt: skip
    assert [h["text"] for h in d["history"]][-2:] == ["Excesso provado.", "multa lançada"]
    assert all(h["ip"] for h in d["history"][1:])
    audited = await conn.fetch("SELECT action FROM audit_log WHERE target = $1 ORDER BY id", f"occurrence:{oid}")
    assert [a["action"] for a in audited] == [
        "occurrence.confirmed", "occurrence.notified", "occurrence.defense", "occurrence.defense", "occurrence.decided",
        "occurrence.closed",
    ]  # fmt: skip
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await conn.execute("DELETE FROM occurrence_history WHERE occurrence_id = $1", oid)


async def test_dismiss_needs_a_reason(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    oid = await occurrence(conn, world)
    for body in ({"decision": "dismiss"}, {"decision": "dismiss", "reason": "  "}):
        r = await post(api, world, "monitor", oid, "review", json=body)
        assert r.status_code == 422 and "reason" in r.json()["detail"], r.text
    r = await post(api, world, "monitor", oid, "review", json={"decision": "dismiss", "reason": "sinal ruim"})
    assert r.status_code == 200 and r.json()["status"] == "dismissed" and r.json()["evidence_sha256"] is None
    assert r.json()["history"][-1]["text"] == "sinal ruim"
    r = await post(api, world, "monitor", oid, "review", json={"decision": "confirm"})
    assert r.status_code == 409 and "situação atual: descartada" in r.json()["detail"]


async def test_confirm_with_another_kinds_classification(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world)
    r = await post(api, world, "monitor", oid, "review", json={"decision": "confirm", "kind": "unauthorized_stop"})
    assert r.status_code == 200, r.text
    assert (r.json()["article"], r.json()["severity"], r.json()["kind"]) == ("Art. 38, IX", "grave", "speeding")


async def test_wrong_transitions_name_the_state(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    oid = await occurrence(conn, world)
    r = await post(api, world, "admin", oid, "decision", json={"penalty": "warning", "motivation": "cedo"})
    detected = "situação atual: detectada (aguarda revisão)"
    assert r.status_code == 409 and detected in r.json()["detail"] and r.json()["state"] == "detected"
    assert (await post(api, world, "monitor", oid, "notify")).json()["detail"].count(detected) == 1
    assert (await post(api, world, "monitor", oid, "close")).status_code == 409
    await post(api, world, "monitor", oid, "review", json={"decision": "confirm"})
    r = await post(api, world, "admin", oid, "decision", json={"penalty": "none", "motivation": "cedo"})
    assert r.status_code == 409 and "situação atual: confirmada" in r.json()["detail"]
    await post(api, world, "monitor", oid, "notify")
    # Notified, no defence yet, deadline running: the decision waits.
    r = await post(api, world, "admin", oid, "decision", json={"penalty": "none", "motivation": "cedo"})
    assert r.status_code == 409 and "situação atual: notificada" in r.json()["detail"] and "prazo" in r.json()["detail"]
    # The contractor trying a servidor's action on its own notified occurrence: 409 naming state and role.
    for action, body in (("review", {"decision": "dismiss", "reason": "não"}), ("notify", None),
                         ("decision", {"penalty": "none", "motivation": "eu decido"}), ("close", None)):  # fmt: skip
        r = await post(api, world, "contractor", oid, action, json=body)
        assert r.status_code == 409, (action, r.text)
        assert "situação atual: notificada" in r.json()["detail"] and "(contratada)" in r.json()["detail"]
    # ... and on another contractor's: 404.
    other = await occurrence(conn, world, 2, start=T0 + timedelta(hours=2))
    await to_notified(api, world, other)
    for action in ("review", "defense", "decision"):
        r = await post(api, world, "contractor", other, action, json={"decision": "confirm", "text": "x"})
        assert r.status_code in (404, 422), r.text
    r = await post(api, world, "contractor", other, "defense", json={"text": "não é nossa"})
    assert r.status_code == 404
    # Defence after the decision: 409.
    await conn.execute("UPDATE occurrences SET defense_due = now() - interval '1 day' WHERE id = $1", oid)
    r = await post(api, world, "admin", oid, "decision", json={"penalty": "warning", "motivation": "sem defesa"})
    assert r.status_code == 200 and r.json()["penalty"] == "warning" and r.json()["fine_brl"] is None
    r = await post(api, world, "contractor", oid, "defense", json={"text": "tarde demais"})
    assert r.status_code == 409 and "situação atual: decidida" in r.json()["detail"]
    # Roles that may not act at all: 403.
    assert (await post(api, world, "auditor", oid, "close")).status_code == 403
    assert (await post(api, world, "admin", other, "defense", json={"text": "pela empresa"})).status_code == 403
    assert (await post(api, world, "monitor", other, "decision",
                       json={"penalty": "none", "motivation": "x"})).status_code == 403  # fmt: skip
    assert (await post(api, world, "monitor", 99999, "notify")).status_code == 404


async def test_bad_input_names_the_field(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    oid = await occurrence(conn, world)
    cases = [
        ("review", {"decision": "maybe"}, "decision"),
        ("review", {"decision": "confirm", "severity": "pesada"}, "severity"),
        ("review", {"decision": "confirm", "extra": 1}, "extra"),
        ("decision", {"penalty": "prison", "motivation": "x"}, "penalty"),
        ("decision", {"penalty": "fine"}, "motivation"),
        ("decision", {"penalty": "fine", "motivation": ""}, "motivation"),
        ("defense", {"txt": "x"}, "text"),
        ("review", {"decision": "confirm", "article": "   "}, "article"),
    ]
    for action, body, field in cases:
        role = "contractor" if action == "defense" else "admin"
        r = await post(api, world, role, oid, action, json=body)
        assert r.status_code == 422 and field in r.json()["detail"], (action, body, r.text)
    r = await post(api, world, "contractor", oid, "defense", content=b"{", headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500
    r = await post(api, world, "contractor", oid, "defense", content=b"x", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    for when in ("9999-12-31", "0001-01-01T00:00+14:00"):  # past the calendar's ends, in UTC or as the day after
        params = {"from": when, "to": "9999-12-31"}
        r = await api.get("/api/v1/occurrences", params=params, headers=auth(world, "admin"))
        assert r.status_code == 400 and r.json()["field"] in ("from", "to"), (when, r.text)
    await to_notified(api, world, oid)
    files = [("files", ("a.txt", b"x", "text/plain"))]  # multipart, which NulGuard does not read
    r = await post(api, world, "contractor", oid, "defense", data={"text": "nul\x00"}, files=files)
    assert r.status_code == 422 and r.json()["field"] == "text", r.text


async def test_what_is_still_going_on_cannot_be_confirmed(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world, kind="tracker_silent", end_ts=None)
    r = await post(api, world, "monitor", oid, "review", json={"decision": "confirm"})
    assert r.status_code == 409 and "em andamento" in r.json()["detail"] and r.json()["state"] == "detected"


async def test_a_late_defence_is_accepted_and_recorded_late(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    await conn.execute("UPDATE occurrences SET defense_due = now() - interval '1 second' WHERE id = $1", oid)
    r = await post(api, world, "contractor", oid, "defense", json={"text": "Chegou tarde, mas chegou."})
    assert r.status_code == 201 and r.json()["defense"]["late"] is True
    assert r.json()["history"][-1]["data"]["late"] is True and r.json()["status"] == "defense"


async def test_a_designated_monitor_decides(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    await post(api, world, "contractor", oid, "defense", json={"text": "defesa", "final": True})
    body = {"penalty": "none", "motivation": "Defesa acolhida."}
    assert (await post(api, world, "monitor", oid, "decision", json=body)).status_code == 403
    r = await api.patch(f"/api/v1/users/{world.people.ids['monitor']}", json={"designated": True},
                        headers=auth(world, "admin"))  # fmt: skip
    assert r.status_code == 200 and r.json()["designated"] is True, r.text
    r = await post(api, world, "monitor", oid, "decision", json=body)
    assert r.status_code == 200 and r.json()["penalty"] == "none", r.text
    assert r.json()["history"][-1]["actor"] == "monitor"
    r = await api.patch(f"/api/v1/users/{world.people.ids['contractor']}", json={"designated": True},
                        headers=auth(world, "admin"))  # fmt: skip
    assert r.status_code == 400 and r.json()["field"] == "designated"
    r = await api.post("/api/v1/users", headers=auth(world, "admin"), json={
        "username": "servidora", "password": "long enough pw", "role": "monitor", "designated": True})  # fmt: skip
    assert r.status_code == 201 and r.json()["designated"] is True
    # A designated monitor who becomes an auditor loses the flag.
    user = await store.change_user(conn, world.people.ids["monitor"], {"role": Role.AUDITOR.value})
    assert user["designated"] is False


async def test_the_kinds_classification(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    r = await api.get("/api/v1/occurrence-kinds", headers=auth(world, "contractor"))
    kinds = {k["kind"]: k for k in r.json()["items"]}
    assert kinds["run_not_made"]["severity"] == "gravissima" and kinds["speeding"]["name"] == "Excesso de velocidade"
    new = {"article": "Art. 38, VIII", "severity": "grave"}
    assert (await api.put("/api/v1/occurrence-kinds/speeding", json=new, headers=auth(world, "monitor"))).status_code \
        == 403  # fmt: skip
    try:
        r = await api.put("/api/v1/occurrence-kinds/speeding", json=new, headers=auth(world, "admin"))
        assert r.status_code == 200 and r.json()["severity"] == "grave" and r.json()["updated_by"] == "admin"
        entry = await conn.fetchrow("SELECT detail FROM audit_log WHERE action = 'occurrence.kind.update'")
        assert entry["detail"]["from"]["severity"] == "media" and entry["detail"]["to"]["severity"] == "grave"
        for bad, field in (({"article": " ", "severity": "grave"}, "article"),
                           ({"article": "x", "severity": "alta"}, "severity")):  # fmt: skip
            r = await api.put("/api/v1/occurrence-kinds/speeding", json=bad, headers=auth(world, "admin"))
            assert r.status_code == 422 and field in r.json()["detail"]
        r = await api.put("/api/v1/occurrence-kinds/flying", json=new, headers=auth(world, "admin"))
        assert r.status_code == 422 and "kind" in r.json()["detail"]
    finally:
        await conn.execute("UPDATE occurrence_kinds SET article = 'Art. 37, X', severity = 'media'"
                           " WHERE kind = 'speeding'")  # fmt: skip


async def test_kinds_name_a_duty_and_only_art_36_to_39_as_infractions(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """GET /occurrence-kinds: {kind, duty, article, severity, fine_allowed}. Art. 9 §1, 15 and 26 are duties; only
    an inciso of Art. 36–39 is an infraction (and only then can a fine follow)."""
    r = await api.get("/api/v1/occurrence-kinds", headers=auth(world, "auditor"))
    kinds = {k["kind"]: k for k in r.json()["items"]}
    assert {"kind", "duty", "article", "severity", "fine_allowed"} <= set(kinds["speeding"])
    assert kinds["over_2h_on_board"] | {"name": None, "updated_at": None, "updated_by": None} == {
        "kind": "over_2h_on_board", "duty": "Art. 9, § 1º", "article": None, "severity": None, "fine_allowed": False,
        "name": None, "updated_at": None, "updated_by": None}  # fmt: skip
    assert (kinds["route_deviation"]["duty"], kinds["route_deviation"]["article"]) == ("Art. 26", "Art. 37, X")
    assert (kinds["tracker_silent"]["article"], kinds["unauthorized_stop"]["article"]) == ("Art. 37, X", "Art. 38, IX")
    for k in kinds.values():
        assert k["article"] is None or k["article"].startswith(("Art. 36,", "Art. 37,", "Art. 38,", "Art. 39,"))
        assert k["fine_allowed"] is (k["article"] is not None)
    admin = auth(world, "admin")
    for bad in ({"article": "Art. 26"}, {"article": "Art. 9, § 1º"}, {"article": "Art. 38, X"},
                {"article": "Art. 37, XI", "severity": "grave"}):  # fmt: skip
        r = await api.put("/api/v1/occurrence-kinds/route_deviation", json=bad, headers=admin)
        assert r.status_code == 422, (bad, r.text)
    r = await api.put("/api/v1/occurrence-kinds/route_deviation", json={"article": None, "duty": "Art. 26"},
                      headers=admin)  # fmt: skip
    assert r.status_code == 200 and r.json()["fine_allowed"] is False and r.json()["severity"] is None
    r = await api.put("/api/v1/occurrence-kinds/over_2h_on_board", json={"article": "Art. 37, XI"}, headers=admin)
    assert r.status_code == 200 and (r.json()["severity"], r.json()["duty"]) == ("media", "Art. 9, § 1º")


async def test_the_termo(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    oid = await occurrence(conn, world)
    r = await api.get(f"/api/v1/occurrences/{oid}/termo.pdf", headers=auth(world, "monitor"))
    assert r.status_code == 409 and "situação atual: detectada (aguarda revisão)" in r.json()["detail"]
    await to_notified(api, world, oid)
    r = await api.get(f"/api/v1/occurrences/{oid}/notificacao.pdf", headers=auth(world, "contractor"))
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf" and r.content.startswith(b"%PDF")
    plate = await conn.fetchval("SELECT plate FROM vehicles WHERE id = $1", world["v1"])
    text = " ".join(pdf_text(r.content).split())
    assert plate in text and "NOTIFICAÇÃO PARA DEFESA PRÉVIA" in text and "À contratada" in text
    assert "dias úteis" in text and "Art. 157" in text
    # The Termo de Comunicação goes to the Secretaria (Art. 34): internal, not the contractor's.
    r = await api.get(f"/api/v1/occurrences/{oid}/termo.pdf", headers=auth(world, "contractor"))
    assert r.status_code == 403
    r = await api.get(f"/api/v1/occurrences/{oid}/termo.pdf", headers=auth(world, "monitor"))
    text = " ".join(pdf_text(r.content).split())
    assert r.status_code == 200 and "À Secretaria Municipal de Educação" in text and "À contratada" not in text
    # The registry edited after the confirmation: the documents still say what the process rests on.
    await conn.execute("UPDATE vehicles SET plate = 'ZZZ9Z99' WHERE id = $1", world["v1"])
    again = await api.get(f"/api/v1/occurrences/{oid}/notificacao.pdf", headers=auth(world, "contractor"))
    text = pdf_text(again.content)
    assert plate in text and "ZZZ9Z99" not in text


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(content)).pages)
