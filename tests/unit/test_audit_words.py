"""The audit log in words (telemetria/audit/words.py, issue 36): no codes, old → new values, local times, and a
boletim's dates read as days, not as UTC midnights."""

from __future__ import annotations

from datetime import UTC, datetime

from telemetria.audit.words import describe, detail_text, period_text


def test_a_boletim_export_of_november_reads_as_the_days_of_november() -> None:
    # The boletim's export keeps dates (first and last day); read as UTC instants they showed "31/10/2026 20:00".
    text = detail_text("export.measurement", {"format": "pdf", "from": "2026-11-01", "to": "2026-11-30",
                                              "contracts": [1]})  # fmt: skip
    assert text == "arquivo PDF; período 01/11/2026 a 30/11/2026; contratos nº 1"


def test_a_report_window_in_utc_instants_reads_as_its_local_days() -> None:
    assert period_text("2026-11-23T04:00:00+00:00", "2026-11-24T04:00:00+00:00") == "23/11/2026"
    assert period_text("2026-11-01T04:00:00+00:00", "2026-12-01T04:00:00+00:00") == "01/11/2026 a 30/11/2026"
    assert period_text("2026-11-23T10:00:00+00:00", "2026-11-23T12:30:00+00:00") == "23/11/2026 06:00 a 08:29"


def test_closing_a_month_names_the_contract_and_the_month_not_codes() -> None:
    words = describe({"at": datetime(2026, 12, 1, 13, 5, 9, tzinfo=UTC), "action": "measurement.close",
                      "target": "contract:1", "detail": {"month": "2026-11", "sha256": "ab" * 32},
                      "role": "admin"})  # fmt: skip
    assert words == {"when": "01/12/2026 09:05:09", "what": "Mês do boletim de medição fechado",
                     "on": "Contrato nº 1", "details": f"mês: novembro de 2026; SHA-256 {'ab' * 32}",
                     "role_name": "Administrador"}  # fmt: skip


def test_a_decision_says_the_penalty_in_words_and_leaves_out_what_is_null() -> None:
    detail = {"from": "defense", "to": "decided", "penalty": "warning", "fine_upfm": None, "fine_brl": None,
              "recurrence_of": None}  # fmt: skip
    text = detail_text("occurrence.decided", detail)
    assert text == "situação: em defesa → decidida; penalidade: advertência escrita"
    fine = detail_text("occurrence.decided", {"from": "notified", "to": "decided", "penalty": "fine",
                                              "fine_upfm": "20", "fine_brl": "1234.5"})  # fmt: skip
    assert fine == "situação: notificada → decidida; penalidade: multa; multa de 20 UPFM; R$ 1.234,50"


def test_a_justification_without_a_run_number_writes_no_null() -> None:
    text = detail_text("registry.run_justification.create", {"date": "2026-11-10", "run_no": None, "id": 7})
    assert text == "dia 10/11/2026; registro nº 7"
    assert "null" not in text and "None" not in text
    said = detail_text("registry.run_justification.create",
                       {"date": "2026-11-10", "run_no": 2, "id": 7, "reason": "ponte caída na RO-133"})  # fmt: skip
    assert "motivo: ponte caída na RO-133" in said  # the reason is logged and shown (issue 36)


def test_a_users_change_shows_old_and_new_values_and_never_a_password() -> None:
    text = detail_text("user.update", {"fields": ["designated"], "changes": {"designated": [False, True]}})
    assert text == "designação (decide ocorrências, Art. 42): não designado → designado"
    role = detail_text("user.update", {"fields": ["role"], "changes": {"role": ["monitor", "admin"]}})
    assert role == "perfil: Servidor → Administrador"
    password = detail_text("user.update", {"fields": ["password"], "changes": {}})
    assert password == "campos alterados: senha"
    both = detail_text("user.update", {"fields": ["active", "full_name"], "changes": {"active": [True, False]}})
    assert both == "situação: ativo → inativo; campos alterados: nome completo"
    old = detail_text("registry.vehicle.update", {"fields": ["plate", "capacity"]})  # entries of before: names only
    assert old == "campos alterados: placa, lotação"


def test_every_known_action_and_target_has_words() -> None:
    cases = [
        ("registry.school_year.update", "school_year:2026"),
        ("registry.contract.create", "contract:3"),
        ("export.occurrences", None),
        ("occurrence.notified", "occurrence:9"),
        ("auth.login_failed", None),
        ("registry.route_assignment.delete", "route_assignment:4"),
    ]
    for code, target in cases:
        words = describe({"at": "2026-12-05T12:00:00Z", "action": code, "target": target, "detail": {}})
        assert "." not in words["what"] and "_" not in words["what"], words
        assert ":" not in words["on"], words
