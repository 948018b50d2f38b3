"""The boletim as one pt-BR CSV table: every run line, then each route's total line, then the contract's; pure.

One table (not sections) so that a spreadsheet or a script reads it as is: the first column, `Linha`, says what
a row is (`corrida`, `total da rota`, `total do contrato`). Run lines leave the count columns empty; total
lines leave the run's own columns (date, vehicle, status...) empty. Figures follow the CSV rules of
reports/output/csv.py: km with 3 decimals, R$ with 2, coverage as a percentage with 2, decimal comma.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from telemetria.measurement.boletim import Line, RouteTotals, route_totals
from telemetria.measurement.document import Computed
from telemetria.reports.output.csv import BOOL, DATE, INT, TEXT, Column, decimal

WORDS = {
    "made": "realizada",
    "partial": "parcial",
    "not_made": "não realizada",
    "justified": "justificada",
    "pending": "prevista",
}
# A run made outside its window on its own day (schoolday.py), and the kind of a justification (measurement/api.py).
OFF_SCHEDULE = {"early": "antes da janela", "late": "depois da janela"}
JUSTIFICATION_KINDS = {"nao_realizada": "corrida não realizada", "feito_fora_do_horario": "realizada fora do horário"}
KM3, MONEY, PCT2 = decimal(3), decimal(2), decimal(2)

COLUMNS = [
    Column("Linha", "kind"), Column("Contrato", "contract"), Column("Data", "date", DATE),
    Column("Rota (id)", "route_id", INT), Column("Rota", "code"), Column("Corrida", "run_no", INT),
    Column("Veículo (id)", "vehicle_id", INT), Column("Placa", "plate"), Column("Substituição", "substitution", BOOL),
    Column("Não autorizado", "unauthorized", BOOL), Column("Situação", "status"),
    Column("Cobertura (%)", "coverage_pct", PCT2), Column("Km declarado", "declared_km", KM3),
    Column("Km contratado", "contracted_km", KM3), Column("Km realizado", "realized_km", KM3),
    Column("Km fora da rota", "off_route_km", KM3), Column("Km a pagar", "payable_km", KM3),
    Column("Km não pavimentados (pagos)", "unpaved_km", KM3), Column("Preço por km (R$)", "price_per_km", MONEY),
    Column("Preço por km não pavimentado (R$)", "price_per_km_unpaved", MONEY), Column("Valor (R$)", "amount", MONEY),
    Column("Corridas devidas", "runs_due", INT), Column("Realizadas", "runs_made", INT),
    Column("Parciais", "runs_partial", INT), Column("Não realizadas", "runs_not_made", INT),
    Column("Justificadas", "runs_justified", INT), Column("Previstas (fora dos totais)", "runs_pending", INT),
    Column("Justificativa", "justification", TEXT),
    Column("Fora do horário", "off_schedule", TEXT), Column("Tipo de justificativa", "justification_kind", TEXT),
]  # fmt: skip
_KEYS = [c.get for c in COLUMNS]


def _row(**values: Any) -> dict[str, Any]:
    return {k: values.get(k) for k in _KEYS if isinstance(k, str)}


def _run(c: Computed, ln: Line) -> dict[str, Any]:
    return _row(
        kind="corrida", contract=c.head.number, date=ln.day, route_id=ln.route_id, code=ln.code, run_no=ln.run_no,
        vehicle_id=ln.vehicle_id, plate=ln.plate, substitution=ln.substitution, unauthorized=ln.unauthorized,
        status=WORDS[ln.status], coverage_pct=ln.coverage_pct, declared_km=ln.declared_km,
        contracted_km=ln.contracted_km, realized_km=ln.realized_km, off_route_km=ln.off_route_km,
        payable_km=ln.payable_km, unpaved_km=ln.unpaved_km, price_per_km=ln.price_per_km,
        price_per_km_unpaved=ln.price_per_km_unpaved, amount=ln.amount, justification=ln.justification,
        off_schedule=OFF_SCHEDULE.get(ln.off_schedule or ""),
        justification_kind=JUSTIFICATION_KINDS.get(ln.justification_kind or ""),
    )  # fmt: skip


def _counts(ts: Sequence[RouteTotals]) -> dict[str, Any]:
    keys = ("runs_due", "runs_made", "runs_partial", "runs_not_made", "runs_justified", "runs_pending", "contracted_km",
            "realized_km", "payable_km", "unpaved_km", "amount")  # fmt: skip
    return {k: sum(getattr(t, k) for t in ts) for k in keys}


def rows(computed: Sequence[Computed]) -> Iterator[dict[str, Any]]:
    """Every contract's run lines, then its routes' totals, then its total."""
    for c in computed:
        for ln in c.lines:
            yield _run(c, ln)
        totals = route_totals(c.routes, c.lines)
        for t in totals:
            yield _row(kind="total da rota", contract=c.head.number, route_id=t.route_id, code=t.code,
                       declared_km=t.declared_km, **_counts([t]))  # fmt: skip
        yield _row(kind="total do contrato", contract=c.head.number, **_counts(totals))
