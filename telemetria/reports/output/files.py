"""A built report as a Document (for XLSX and PDF): the query described, who asked, when, by which method."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from fastapi.responses import StreamingResponse

from telemetria import __version__, formats
from telemetria.auth.roles import Principal
from telemetria.jobs import Jobs
from telemetria.period import last_included
from telemetria.reports.model import Context, Selection, Window
from telemetria.reports.output import pdf, xlsx
from telemetria.reports.output.document import Document, Table
from telemetria.reports.output.report import FILE_STEMS, TITLES, Report, filename
from telemetria.settings import Settings

MAX_PLATES = 40  # the query sheet names this many vehicles, then says how many more
METHOD = (
    "Derivado por hora da posição (não por ordem de chegada): km ao longo da rota registrada onde o veículo "
    "a percorre, pelas estradas da malha viária importada fora dela (quando há uma em vigor), em linha reta "
    "entre posições no resto; posições inválidas ou saltos impossíveis descartados."
)


# The report header's keys (Report.header) and their values as the "Consulta" sheet shows them.
LABELS = {"by": "Agrupamento", "unauthorized_only": "Somente paradas fora de pontos autorizados"}
VALUES = {("by", "vehicle"): "por veículo", ("by", "day"): "por veículo e dia"}


def label(key: str) -> str:
    """A header key in Portuguese; an unknown one readable as it is (`max_gap_s` → `max gap s`)."""
    return LABELS.get(key, key.replace("_", " "))


def _when(t: datetime, tz: Any) -> str:
    d = t.astimezone(tz)
    return f"{d:%d/%m/%Y %H:%M:%S}"


def _period(win: Window) -> str:
    first, last = last_included(win.start, win.end, win.tz)
    if "T" not in first:
        a, b = (datetime.fromisoformat(x) for x in (first, last))
        return f"{a:%d/%m/%Y} a {b:%d/%m/%Y}"
    return f"{_when(win.start, win.tz)} a {_when(win.end, win.tz)} (exclusive)"


def _plates(plates: Sequence[str]) -> str:
    shown = ", ".join(plates[:MAX_PLATES])
    more = len(plates) - MAX_PLATES
    return shown + (f" e mais {more}" if more > 0 else "") if plates else "nenhum"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "sim" if v else "não"
    if isinstance(v, float):
        return formats.number(v, 3)
    if isinstance(v, datetime):
        return f"{v:%d/%m/%Y %H:%M:%S}"
    return str(v)


def query_lines(
    win: Window, ctx: Context, sel: Selection, header: dict[str, Any], generation: int | None = None
) -> list[tuple[str, str]]:
    """The query as people read it: period, zone, vehicles, filters, the report's own parameters, versions."""
    lines = [("Período", _period(win)), ("Fuso horário", win.tz.key)]
    lines.append((f"Veículos ({len(ctx.vehicles)})", _plates([v.plate for v in ctx.vehicles])))
    if sel.contractor_id is not None:
        lines.append(("Contratada (id)", str(sel.contractor_id)))
    if sel.route_id is not None:
        lines.append(("Rota (id)", str(sel.route_id)))
    for key, value in header.items():
        if isinstance(value, str | int | float | bool | datetime):
            shown = VALUES.get((key, value), None) if isinstance(value, str) else None
            lines.append((label(key), shown or _value(value)))
    for n in ctx.networks_used(win.local_days()):
        since = datetime.fromisoformat(n["effective_from"]) if "effective_from" in n else None
        lines.append((
            "Malha viária (OpenStreetMap)",
            f"{n.get('source', n['network_id'])}, em vigor desde {since:%d/%m/%Y}, SHA-256 {n.get('sha256', '')}"
            if since else str(n["network_id"]),
        ))  # fmt: skip
    lines.append(("Método", METHOD))
    lines.append(("Versão", f"Telemetria {__version__}; cadastro na geração {generation or ctx.generation}"))
    return lines


def who_line(who: Principal) -> str:
    return f"{who.username} ({who.role.value})"


def letterhead(settings: Settings | None) -> dict[str, Any]:
    """The Document's fields naming the municipality (for the PDF's header), from the settings."""
    if settings is None:
        return {}
    return {"municipality": settings.municipality_name, "coat_of_arms_path": settings.coat_of_arms_path}


def document_of(
    report: Report, ctx: Context, sel: Selection, who: Principal, now: datetime | None = None,
    settings: Settings | None = None,
) -> Document:  # fmt: skip
    """The Document of a built report: its rows (and CSV totals) as the first table, the rest as it says."""
    main = Table(TITLES.get(report.kind, report.kind), report.columns, report.rows, report.totals)
    stem = filename(report, "x")[: -len(".x")]
    return Document(
        kind=report.kind,
        title=TITLES.get(report.kind, FILE_STEMS.get(report.kind, report.kind)),
        filename=stem,
        tz=report.window.tz,
        query=query_lines(report.window, ctx, sel, report.header),
        generated_by=who_line(who),
        generated_at=now or datetime.now(UTC),
        tables=[main],
        extra=report.extra,
        drawing=report.drawing or report.gis,
        seals=report.seals,
        **letterhead(settings),
    )


def respond(doc: Document, fmt: str, jobs: Jobs | None = None) -> StreamingResponse:
    """The document as an XLSX workbook or a PDF (drawn in `jobs`' process pool when given)."""
    if fmt == "xlsx":
        return xlsx.response(doc)
    if fmt == "pdf":
        return pdf.response(doc, jobs)
    raise ValueError(f"not a document format: {fmt!r}")
