"""The procedure of Lei 14.133/2021 that Lei 3.588/2023 Art. 41 points to, on the real database: the defence term,
the decision on the infraction's legal basis, the appeal that suspends the penalty, and recurrence counted only
from final penalties, whatever the order the cases are decided in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria.app import create_app
from telemetria.localtime import LOCAL_TZ
from tests.conftest import ScratchDb
from tests.db.conftest import People
from tests.db.test_occurrences_api import T0, auth, occurrence, post, to_notified
from tests.db.world import World, make_world


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


GRAVE: dict[str, Any] = {"kind": "unauthorized_stop", "severity": "grave", "article": "Art. 38, IX"}


async def past_defense_term(conn: asyncpg.Connection, oid: int) -> None:
    await conn.execute("UPDATE occurrences SET defense_due = now() - interval '1 second' WHERE id = $1", oid)


async def past_appeal_term(conn: asyncpg.Connection, oid: int) -> None:
    await conn.execute("UPDATE occurrences SET appeal_due = now() - interval '1 second' WHERE id = $1", oid)


async def decide(api: httpx.AsyncClient, w: World, oid: int, penalty: str, role: str = "admin") -> httpx.Response:
    return await post(api, w, role, oid, "decision", json={"penalty": penalty, "motivation": "Art. 42: provado."})


async def test_the_decision_waits_for_the_defence_term_or_a_final_defence(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    d = (await api.get(f"/api/v1/occurrences/{oid}", headers=auth(world, "monitor"))).json()
    until = d["deadlines"]["defense_until"]
    assert until == datetime.fromisoformat(d["defense_due"]).astimezone(LOCAL_TZ).date().isoformat()
    r = await decide(api, world, oid, "warning")
    assert r.status_code == 409 and r.json()["defense_until"] == until and r.json()["field"] == "defense_until"
    # In Portuguese for the person, opening with what is wrong and the term's end in local time (issue 36).
    due_local = datetime.fromisoformat(d["defense_due"]).astimezone(LOCAL_TZ)
    assert r.json()["detail"].startswith(f"Ainda no prazo de defesa até {due_local:%d/%m/%Y %H:%M}:"), r.text
    assert r.json()["message"] == r.json()["detail"] and "T03:59" not in r.json()["detail"]
    # A first, short defence does not end the term: the contractor may still replace or complete it.
    r = await post(api, world, "contractor", oid, "defense", json={"text": "Defesa preliminar."})
    assert r.status_code == 201 and r.json()["defense"]["final"] is False
    r = await decide(api, world, oid, "warning")
    assert r.status_code == 409 and r.json()["defense_until"] == until
    r = await post(api, world, "contractor", oid, "defense", json={"text": "Defesa completa.", "final": True})
    assert r.status_code == 201 and r.json()["defense"]["version"] == 2 and r.json()["defense_final"] is True
    r = await post(api, world, "contractor", oid, "defense", json={"text": "Mais uma."})
    assert r.status_code == 409 and "final" in r.json()["detail"]
    r = await decide(api, world, oid, "warning")
    assert r.status_code == 200 and r.json()["penalty"] == "warning"


async def test_the_term_runs_out_without_a_defence(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    await past_defense_term(conn, oid)
    assert (await decide(api, world, oid, "none")).status_code == 200


async def test_the_defence_term_is_15_business_days_of_the_municipality(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Lei 14.133/2021 Art. 157 (15 business days; the setting defense_days, 5 in this app): national, Rondônia
    and municipal holidays are no business days. The municipal ones are kept through the API."""
    r = await api.put("/api/v1/holidays/2030/municipal", headers=auth(world, "admin"),
                      json={"holidays": [{"date": "2030-06-24", "name": "Padroeiro"}]})  # fmt: skip
    assert r.status_code == 200, r.text
    assert [h["date"] for h in r.json()["state"]] == ["2030-01-04", "2030-06-18"]
    assert r.json()["municipal"][0]["name"] == "Padroeiro"
    bad = await api.put("/api/v1/holidays/2030/municipal", headers=auth(world, "admin"),
                        json={"holidays": [{"date": "2031-01-02", "name": "x"}]})  # fmt: skip
    assert bad.status_code == 400 and bad.json()["field"] == "holidays[0].date"
    assert (await api.put("/api/v1/holidays/2030/municipal", headers=auth(world, "auditor"),
                          json={"holidays": []})).status_code == 403  # fmt: skip
    from telemetria.occurrences.process import store as process_store

    cal = await process_store.business_calendar(conn)
    # Notified Friday 14 June 2030: Mon 17, (Tue 18 Rondônia), Wed 19, (Thu 20 Corpus Christi), Fri 21,
    # (Mon 24 municipal), Tue 25, Wed 26
    notified = datetime(2030, 6, 14, 10, tzinfo=LOCAL_TZ)
    assert cal.term_end(notified, 5).date() == date(2030, 6, 26)


async def test_art_9_is_a_duty_and_cannot_be_fined_by_itself(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Over 2 h on board (Art. 9 §1) is a finding for the Secretaria: no article of Art. 36–39, so no warning or
    fine (409 naming `article`); it may still be decided without penalty."""
    over: dict[str, Any] = {"kind": "over_2h_on_board", "severity": None, "article": None}
    oid = await occurrence(conn, world, **over)
    await to_notified(api, world, oid)
    await past_defense_term(conn, oid)
    for penalty in ("fine", "warning", "warning_and_fine"):
        r = await decide(api, world, oid, penalty)
        assert r.status_code == 409 and r.json()["field"] == "article", r.text
    d = (await api.get(f"/api/v1/occurrences/{oid}", headers=auth(world, "admin"))).json()
    assert d["fine_allowed"] is False
    # The old classification (a duty article stored as the infraction) is no basis either.
    old = await occurrence(conn, world, kind="over_2h_on_board", severity="grave", article="Art. 9, § 1º")
    await to_notified(api, world, old)
    await past_defense_term(conn, old)
    r = await decide(api, world, old, "fine")
    assert r.status_code == 409 and r.json()["field"] == "article"
    assert (await decide(api, world, old, "none")).status_code == 200


async def test_a_warning_and_a_fine_together(api: httpx.AsyncClient, conn: asyncpg.Connection, world: World) -> None:
    """Art. 36–37: "advertência escrita e/ou multa"; Art. 38–39: "advertência escrita e multa" (Lei 14.133/2021
    Art. 156 §7: a fine may go with a warning)."""
    media = await occurrence(conn, world)
    await to_notified(api, world, media)
    await past_defense_term(conn, media)
    r = await decide(api, world, media, "warning_and_fine")
    assert r.status_code == 200 and r.json()["penalty"] == "warning_and_fine" and r.json()["fine_upfm"] == 20
    grave = await occurrence(conn, world, start=T0 + timedelta(hours=1), **GRAVE)
    await to_notified(api, world, grave)
    await past_defense_term(conn, grave)
    for alone in ("fine", "warning"):
        r = await decide(api, world, grave, alone)
        assert r.status_code == 409 and r.json()["field"] == "penalty"
    r = await decide(api, world, grave, "warning_and_fine")
    assert r.status_code == 200 and r.json()["fine_upfm"] == 30 and r.json()["fine_brl"] == 141.3


async def test_an_appeal_suspends_the_fine_and_is_decided(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Lei 14.133/2021 Art. 166: appeal within 15 business days; Art. 168: it suspends the penalty; the superior
    authority upholds, reforms or annuls, with motivation; only then is the penalty final."""
    oid = await occurrence(conn, world, **GRAVE)
    await to_notified(api, world, oid)
    await past_defense_term(conn, oid)
    r = await decide(api, world, oid, "warning_and_fine")
    d = r.json()
    assert d["final"] is False and d["deadlines"]["appeal_until"] and d["penalty_suspended"] is False
    r = await post(api, world, "contractor", oid, "appeal", json={"text": "Parada para socorrer um aluno."})
    assert r.status_code == 201, r.text
    d = r.json()
    assert d["status"] == "under_appeal" and d["penalty_suspended"] is True and d["final"] is False
    assert (await post(api, world, "contractor", oid, "appeal", json={"text": "de novo"})).status_code == 409
    assert (await post(api, world, "monitor", oid, "close")).status_code == 409
    body = {"outcome": "reformed", "penalty": "warning", "motivation": "Socorro comprovado."}
    r = await post(api, world, "contractor", oid, "appeal-decision", json=body)
    assert r.status_code == 409 and "(contratada)" in r.json()["detail"]  # the module's rule: 409 naming the role
    r = await post(api, world, "admin", oid, "appeal-decision", json=body)
    assert r.status_code == 409 and r.json()["field"] == "penalty"  # Art. 38: warning and fine, or none
    body = {"outcome": "annulled", "motivation": "Socorro comprovado (Art. 26, parágrafo único)."}
    r = await post(api, world, "admin", oid, "appeal-decision", json=body)
    assert r.status_code == 200, r.text
    d = r.json()
    assert (d["status"], d["penalty"], d["fine_upfm"], d["final"], d["appeal_outcome"]) == (
        "decided", "none", None, True, "annulled")  # fmt: skip
    assert d["history"][-1]["action"] == "appeal_decided" and d["history"][-1]["data"]["by"] == "superior"
    assert (await post(api, world, "monitor", oid, "close")).status_code == 200


async def test_the_decider_may_reconsider_within_five_business_days(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    r = await api.patch(f"/api/v1/users/{world.people.ids['monitor']}", json={"designated": True},
                        headers=auth(world, "admin"))  # fmt: skip
    assert r.status_code == 200
    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    await past_defense_term(conn, oid)
    assert (await decide(api, world, oid, "fine", role="monitor")).status_code == 200
    r = await post(api, world, "contractor", oid, "appeal", json={"text": "O limite era outro."})
    assert r.status_code == 201 and r.json()["appeal"]["reconsider_due"]
    upheld = {"outcome": "upheld", "motivation": "Mantida."}
    r = await post(api, world, "monitor", oid, "appeal-decision", json=upheld)
    assert r.status_code == 409 and r.json()["field"] == "outcome"  # upholding is the superior authority's
    await conn.execute("UPDATE occurrences SET reconsider_due = now() - interval '1 second' WHERE id = $1", oid)
    reformed = {"outcome": "reformed", "penalty": "warning", "motivation": "Reconsidero."}
    assert (await post(api, world, "monitor", oid, "appeal-decision", json=reformed)).status_code == 409
    await conn.execute("UPDATE occurrences SET reconsider_due = now() + interval '1 day' WHERE id = $1", oid)
    r = await post(api, world, "monitor", oid, "appeal-decision", json=reformed)
    assert r.status_code == 200 and r.json()["penalty"] == "warning" and r.json()["fine_upfm"] is None
    assert r.json()["history"][-1]["data"]["by"] == "reconsideration" and r.json()["final"] is True


async def _first_and_second(api: httpx.AsyncClient, conn: asyncpg.Connection, w: World, n: int) -> tuple[int, int]:
    first = await occurrence(conn, w, n, start=datetime(2025, 6, 10, 12, tzinfo=UTC), **GRAVE)
    second = await occurrence(conn, w, n, start=T0, **GRAVE)  # within 12 months after the first
    for oid in (first, second):
        await conn.execute("UPDATE occurrences SET status = 'confirmed' WHERE id = $1", oid)
        assert (await post(api, w, "monitor", oid, "notify")).status_code == 200
        await past_defense_term(conn, oid)
    return first, second


async def fine_of(api: httpx.AsyncClient, w: World, oid: int) -> tuple[Any, Any]:
    d = (await api.get(f"/api/v1/occurrences/{oid}", headers=auth(w, "auditor"))).json()
    return d["fine_upfm"], d["recurrence_of"]


async def test_recurrence_is_the_same_in_both_decision_orders(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Art. 38 and 39, sole paragraphs: a grave infraction within 12 months after an earlier one whose penalty is
    final doubles the fine. Contractor 1 has its cases decided in date order, contractor 2 in the other order: the
    same fines. Annulling the earlier one on appeal undoes the doubling."""
    a1, b1 = await _first_and_second(api, conn, world, 1)
    a2, b2 = await _first_and_second(api, conn, world, 2)
    # Contractor 1: the earlier one first, final (its appeal term ran out), then the later one.
    assert (await decide(api, world, a1, "warning_and_fine")).json()["fine_upfm"] == 30
    await past_appeal_term(conn, a1)
    assert (await decide(api, world, b1, "warning_and_fine")).json()["fine_upfm"] == 60
    # Contractor 2: the later one first (no earlier final penalty yet: 30) ...
    assert (await decide(api, world, b2, "warning_and_fine")).json()["fine_upfm"] == 30
    assert (await decide(api, world, a2, "warning_and_fine")).json()["fine_upfm"] == 30
    assert await fine_of(api, world, b2) == (30, None)  # the earlier one's appeal term still runs: not final
    await past_appeal_term(conn, a2)
    assert await fine_of(api, world, b2) == (60, a2)  # ... the same as in the other order once it is final
    assert await fine_of(api, world, b1) == (60, a1)
    hist = (await api.get(f"/api/v1/occurrences/{b2}", headers=auth(world, "auditor"))).json()["history"]
    assert hist[-1]["action"] == "fine_recomputed" and hist[-1]["actor"] == "sistema"
    # Under appeal, an earlier penalty is suspended (Art. 168) and does not count; annulled, it never does.
    await conn.execute("UPDATE occurrences SET appeal_due = now() + interval '1 day' WHERE id = $1", a1)
    r = await post(api, world, "contractor", a1, "appeal", json={"text": "Recurso."})
    assert r.status_code == 201
    assert await fine_of(api, world, b1) == (30, None)
    r = await post(api, world, "admin", a1, "appeal-decision", json={"outcome": "annulled", "motivation": "Nulo."})
    assert r.status_code == 200
    assert await fine_of(api, world, b1) == (30, None)
    assert await fine_of(api, world, b2) == (60, a2)  # another contractor's annulment changes nothing here


async def test_a_defence_is_bounded_and_its_replacements_too(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Issue 33, item 4 (40 defences of 20,000 characters in a second all accepted, an answer of 813 KB): a defence's
    text is bounded, and replacing it keeps each version in the history, up to a bound."""
    from telemetria.occurrences.api import MAX_TEXT
    from telemetria.occurrences.process.store import MAX_DEFENSE_VERSIONS

    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    r = await post(api, world, "contractor", oid, "defense", json={"text": "x" * (MAX_TEXT + 1)})
    assert r.status_code == 422
    for n in range(1, MAX_DEFENSE_VERSIONS + 1):
        r = await post(api, world, "contractor", oid, "defense", json={"text": f"versão {n} " + "y" * (MAX_TEXT - 20)})
        assert r.status_code == 201 and r.json()["defense"]["version"] == n
    r = await post(api, world, "contractor", oid, "defense", json={"text": "mais uma"})
    assert r.status_code == 409 and r.json()["limit"] == MAX_DEFENSE_VERSIONS
    d = await api.get(f"/api/v1/occurrences/{oid}", headers=auth(world, "contractor"))
    defences = [h for h in d.json()["history"] if h["action"] == "defense"]
    assert [h["data"]["version"] for h in defences] == list(range(1, MAX_DEFENSE_VERSIONS + 1))
    assert len(d.content) < (MAX_DEFENSE_VERSIONS + 1) * MAX_TEXT + 20_000  # bounded, whatever is sent


async def test_opening_the_infraction_and_the_art_26_justification(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Confirming opens the infraction on an inciso of Art. 36–39 (the severity follows from it); a kind that is
    a finding only clears it; an Art. 26 sole-paragraph emergency is recorded as the justification that closes
    the finding."""
    monitor = auth(world, "monitor")
    oid = await occurrence(conn, world)
    r = await api.post(f"/api/v1/occurrences/{oid}/review", headers=monitor,
                       json={"decision": "confirm", "severity": "grave"})  # fmt: skip
    assert r.status_code == 422 and r.json()["field"] == "severity"  # Art. 37, X is média
    r = await api.post(f"/api/v1/occurrences/{oid}/review", headers=monitor,
                       json={"decision": "confirm", "article": "Art. 26"})  # fmt: skip
    assert r.status_code == 422 and r.json()["field"] == "article"
    r = await api.post(f"/api/v1/occurrences/{oid}/review", headers=monitor,
                       json={"decision": "confirm", "kind": "over_2h_on_board"})  # fmt: skip
    assert r.status_code == 200 and (r.json()["article"], r.json()["severity"]) == (None, None)
    assert r.json()["fine_allowed"] is False
    other = await occurrence(conn, world, kind="route_deviation", start=T0 + timedelta(hours=1))
    r = await api.post(f"/api/v1/occurrences/{other}/review", headers=monitor,
                       json={"decision": "dismiss", "justification": "emergency_detour"})  # fmt: skip
    assert r.status_code == 200 and r.json()["status"] == "dismissed"
    last = r.json()["history"][-1]
    assert last["data"]["justification"]["basis"] == "Lei 3.588/2023, Art. 26, parágrafo único"
    assert "emergência" in last["text"]


async def test_a_servidor_flagged_superior_authority_judges_appeals_but_not_on_its_own_decision(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    """Lei 14.133/2021 Art. 166, sole paragraph: the superior authority judges the appeal; an admin by default, or a
    servidor flagged `superior_authority` in the users page (audited old → new). Issue 36: before, only admins."""
    admin, monitor = auth(world, "admin"), world.people.ids["monitor"]
    oid = await occurrence(conn, world, **GRAVE)
    await to_notified(api, world, oid)
    await past_defense_term(conn, oid)
    assert (await decide(api, world, oid, "warning_and_fine")).status_code == 200
    assert (await post(api, world, "contractor", oid, "appeal", json={"text": "Não houve parada."})).status_code == 201
    upheld = {"outcome": "upheld", "motivation": "As posições mostram a parada."}
    assert (await post(api, world, "monitor", oid, "appeal-decision", json=upheld)).status_code == 403

    r = await api.patch(f"/api/v1/users/{monitor}", json={"superior_authority": True}, headers=admin)
    assert r.status_code == 200 and r.json()["superior_authority"] is True and r.json()["designated"] is False
    r = await post(api, world, "monitor", oid, "appeal-decision", json=upheld)
    assert r.status_code == 200, r.text
    assert r.json()["history"][-1]["data"]["by"] == "superior" and r.json()["final"] is True
    logged = await conn.fetch("SELECT detail FROM audit_log WHERE action = 'user.update' AND target = $1",
                              f"user:{monitor}")  # fmt: skip
    assert [x["detail"]["changes"] for x in logged] == [{"superior_authority": [False, True]}]

    # Not superior to its own decision: as its decider it may only reconsider (Art. 166).
    r = await api.patch(f"/api/v1/users/{monitor}", json={"designated": True}, headers=admin)
    assert r.status_code == 200
    own = await occurrence(conn, world, start=T0 + timedelta(hours=3), **GRAVE)
    await to_notified(api, world, own)
    await past_defense_term(conn, own)
    assert (await decide(api, world, own, "warning_and_fine", role="monitor")).status_code == 200
    assert (await post(api, world, "contractor", own, "appeal", json={"text": "Recurso."})).status_code == 201
    r = await post(api, world, "monitor", own, "appeal-decision", json=upheld)
    assert r.status_code == 409 and r.json()["field"] == "outcome", r.text

    # Only a servidor may hold it; a role change drops it; revoking is audited too.
    r = await api.patch(f"/api/v1/users/{world.people.ids['contractor']}", json={"superior_authority": True},
                        headers=admin)  # fmt: skip
    assert r.status_code == 400 and r.json()["field"] == "superior_authority"
    r = await api.patch(f"/api/v1/users/{monitor}", json={"superior_authority": False}, headers=admin)
    assert r.status_code == 200 and r.json()["superior_authority"] is False
    new = {"username": "autoridade", "password": "long enough pw", "role": "monitor", "superior_authority": True}
    r = await api.post("/api/v1/users", headers=admin, json=new)
    assert r.status_code == 201 and r.json()["superior_authority"] is True
    r = await api.patch(f"/api/v1/users/{r.json()['id']}", json={"role": "auditor"}, headers=admin)
    assert r.status_code == 200 and r.json()["superior_authority"] is False
