"""The boletim as the PDF a Secretaria signs (issue 36); pure.

Not the CSV's one wide table of 28 columns (that stays the CSV's and the XLSX's): a letterhead, the contract
and its contractor, the period, the payment rule in words, a table of totals per route, the run lines without
internal ids, a totals block (payable km, amount, the rule), each month's closing status ("Mês fechado em …
por …, SHA-256 …" or "aberto"), and the signature lines of the fiscal do contrato (Lei 14.133/2021 Art. 117)
and of the secretário.

Its creation date is a true one: the generation time, except when every month the boletim covers is closed,
when it is the last closing's time. A closed month's figures are the frozen bytes (measurement/document.py),
so the PDF of a closed month then names the moment its content was fixed, and its PDF metadata (creation
date, document id: reportlab's invariant mode) are the same on every download. The footer still says who
downloaded it and when.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from telemetria import __version__, formats
from telemetria.contracts.rule import PaymentRule
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.boletim import RouteTotals, route_totals
from telemetria.measurement.document import Computed, _months
from telemetria.measurement.sheet import WORDS
from telemetria.reports.output import csv
from telemetria.reports.output.csv import DATE, INT, TEXT, Column, decimal
from telemetria.reports.output.document import Document, Table

KM3, MONEY, PCT2 = decimal(3), decimal(2), decimal(2)
SIGNATURES = ["Fiscal do contrato", "Secretário(a) Municipal de Educação"]

ROUTE_COLUMNS = [
    Column("Rota", "code"), Column("Km declarado", "declared_km", KM3), Column("Devidas", "runs_due", INT),
    Column("Realizadas", "runs_made", INT), Column("Parciais", "runs_partial", INT),
    Column("Não realizadas", "runs_not_made", INT), Column("Justificadas", "runs_justified", INT),
    Column("Km contratado", "contracted_km", KM3), Column("Km realizado", "realized_km", KM3),
    Column("Km a pagar", "payable_km", KM3), Column("Valor (R$)", "amount", MONEY),
]  # fmt: skip
RUN_COLUMNS = [
    Column("Data", "date", DATE), Column("Rota", "code"), Column("Corrida", "run_no", INT),
    Column("Placa", "plate"), Column("Situação", "status"), Column("Cobertura (%)", "coverage_pct", PCT2),
    Column("Km a pagar", "payable_km", KM3), Column("Valor (R$)", "amount", MONEY),
    Column("Justificativa", "justification", TEXT),
]  # fmt: skip
PARTIAL = {
    "proportional": "paga em proporção à cobertura",
    "declared_km": "paga pelo km declarado da rota",
    "none": "não paga",
}


def rule_words(rule: PaymentRule) -> str:
    """The payment rule as a sentence."""
    made, partial = formats.number(rule.made_min_coverage_pct, 0), formats.number(rule.partial_min_coverage_pct, 0)
    return (
        f"corrida com cobertura ≥ {made} % é realizada e paga pelo km declarado; de {partial} % a menos de {made} % é "
        f"parcial, {PARTIAL[rule.partial_pay]}; abaixo de {partial} % não é paga; km fora da rota "
        f"{'pagos' if rule.off_route_km_paid else 'não pagos'}; corrida justificada "
        f"{'paga pelo km declarado' if rule.justified_paid else 'paga só pelo que cobriu'}"
    )


def _sum(ts: Sequence[RouteTotals], key: str) -> Any:
    return sum((getattr(t, key) for t in ts), Decimal(0) if key.endswith(("km", "amount")) else 0)


def _route_row(t: RouteTotals) -> dict[str, Any]:
    return {str(c.get): getattr(t, str(c.get)) for c in ROUTE_COLUMNS}


def _rows(row: dict[str, Any]) -> Callable[[], list[dict[str, Any]]]:
    return lambda: [row]


def _local(t: datetime) -> str:
    return f"{t.astimezone(LOCAL_TZ):%d/%m/%Y %H:%M}"


def status_lines(c: Computed) -> list[str]:
    """Each month's closing status: closed (when, by whom, the SHA-256 of the frozen content) or open."""
    shut = {s.month: s for s in c.closings}
    out = []
    for m in _months(c.first, c.last):
        if m in shut:
            s = shut[m]
            out.append(f"Mês {m:%m/%Y}: fechado em {_local(s.closed_at)} por {s.closed_by}; SHA-256 {s.sha256}")
        else:
            out.append(f"Mês {m:%m/%Y}: aberto (não fechado): os valores ainda podem mudar até o fechamento")
    return out


def created_at(computed: Sequence[Computed], now: datetime) -> datetime:
    """The PDF's creation date: the last closing's when every month covered is closed, else `now`."""
    closings = [s for c in computed for s in c.closings]
    every = all({s.month for s in c.closings} >= set(_months(c.first, c.last)) for c in computed)
    return max(s.closed_at for s in closings) if computed and closings and every else now


def document(
    computed: list[Computed], first: date, last: date, generated_by: str, now: datetime | None = None
) -> Document:
    """The boletim as the PDF's Document (see the module's docstring)."""
    now = now or datetime.now(UTC)
    query: list[tuple[str, str]] = [("Período", f"{first:%d/%m/%Y} a {last:%d/%m/%Y}")]
    tables: list[Table] = []
    summary: list[tuple[str, str]] = []
    for c in computed:
        head = c.head
        query.append(("Contrato", f"{head.number}, contratada {head.contractor}, vigência "
                                  f"{head.valid_from:%d/%m/%Y} a {head.valid_to:%d/%m/%Y}"))  # fmt: skip
        for lo, hi, terms in c.terms:
            when = f"de {lo:%d/%m/%Y} a {hi:%d/%m/%Y}"
            query.append(("Preço por km", f"R$ {formats.number(terms.price_per_km, 2)} {when}"))
            query.append(("Regra de pagamento", f"{rule_words(terms.rule)} ({when})"))
        totals = route_totals(c.routes, c.lines)
        total_row = {
            "code": "Total do contrato",
            "declared_km": None,
            **{str(col.get): _sum(totals, str(col.get)) for col in ROUTE_COLUMNS[2:]},
        }
        tables.append(Table(f"Contrato {head.number}: totais por rota", ROUTE_COLUMNS,
                            [_route_row(t) for t in totals], _rows(total_row)))  # fmt: skip
        runs = [
            {"date": ln.day, "code": ln.code, "run_no": ln.run_no, "plate": ln.plate or "",
             "status": WORDS[ln.status] + (" (substituto)" if ln.substitution else ""),
             "coverage_pct": ln.coverage_pct, "payable_km": ln.payable_km, "amount": ln.amount,
             "justification": ln.justification}
            for ln in c.lines
        ]  # fmt: skip
        tables.append(Table(f"Contrato {head.number}: corridas", RUN_COLUMNS, runs))
        km, amount = (
            formats.grouped(formats.number(_sum(totals, k), n)) for k, n in (("payable_km", 3), ("amount", 2))
        )
        summary.append((f"Contrato {head.number}: km a pagar", f"{km} km"))  # as the table's cells: 3.134,100
        summary.append((f"Contrato {head.number}: valor a pagar", f"R$ {amount}"))
        if c.terms:
            summary.append((f"Contrato {head.number}: regra", rule_words(c.terms[-1][2].rule)))
        summary.extend((f"Contrato {head.number}", line) for line in status_lines(c))
    if not tables:
        tables.append(Table("Totais por rota", ROUTE_COLUMNS, []))
    query.append(("Fuso horário", LOCAL_TZ.key))
    query.append(("Versão", f"Telemetria {__version__}"))
    stem = csv.export_filename("boletim_de_medicao", first, last).removesuffix(".csv")
    return Document(
        kind="measurement", title="Boletim de medição", filename=stem, tz=LOCAL_TZ, query=query,
        generated_by=generated_by, generated_at=now, tables=tables, summary=summary, signatures=SIGNATURES,
        created_at=created_at(computed, now),
    )  # fmt: skip
