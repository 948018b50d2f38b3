"""The two documents of one occurrence, as A4 PDFs (pure: values in, bytes out), kept apart as the law does:

- the Termo de Comunicação (Lei 3.588/2023, Art. 34), addressed to the Secretaria Municipal de Educação "para as
  providências legais e administrativas cabíveis": the finding, its evidence and the duty it breaches;
- the notificação para defesa prévia, addressed to the contractor (Art. 41 and 42; Lei 14.133/2021 Art. 157): the
  infraction it is charged with, the penalty it may bring and the defence term in business days.

Each says who (contractor, vehicle, driver, route), what happened (the kind, its times in the municipality's zone,
the place and the measured facts), under which article and severity, shows a map of the evidence drawn from the
frozen fixes themselves (mapdraw.py: no tile server), the defence deadline (Art. 41–42) and the SHA-256 of the
evidence the process rests on. Every value is set as text (escaped), never as markup. The same inputs give the
same bytes (reportlab's invariant mode), so a Termo can be issued again identical.

Fonts: reportlab's built-in Helvetica (Windows-1252: every Portuguese letter, "º", "ª", "§", "—"), so nothing is
embedded or fetched; a character outside it would print as a box.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import cm
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Image, KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.documents import wording
from telemetria.occurrences.model import DOUBLES_ON_RECURRENCE, UPFM
from telemetria.occurrences.process import infraction
from telemetria.reports.output import mapdraw

MARGIN = 2 * cm
BODY = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=13.5, spaceAfter=4)
SMALL = ParagraphStyle("small", parent=BODY, fontSize=8, leading=10, textColor=colors.HexColor("#444444"))
HEAD = ParagraphStyle(
    "head", parent=BODY, fontName="Helvetica-Bold", fontSize=11, spaceBefore=10, spaceAfter=4, keepWithNext=1
)
TITLE = ParagraphStyle("title", parent=BODY, fontName="Helvetica-Bold", fontSize=15, leading=19, alignment=1)
MUNI = ParagraphStyle("muni", parent=BODY, fontName="Helvetica-Bold", fontSize=12, leading=15)
MONO = ParagraphStyle("mono", parent=BODY, fontName="Courier", fontSize=8.5, leading=11)


class Addressee(StrEnum):
    TERMO = "termo"  # the Termo de Comunicação, to the Secretaria (Art. 34)
    NOTIFICACAO = "notificacao"  # the notificação para defesa prévia, to the contractor (Lei 14.133 Art. 157)


TITLES = {Addressee.TERMO: "Termo de Comunicação", Addressee.NOTIFICACAO: "Notificação para defesa prévia"}


def number(detail: Mapping[str, Any], issued_at: datetime) -> str:
    """The Termo's number: the occurrence's id / the local year it was issued."""
    return f"{detail.get('id', '—')}/{issued_at.astimezone(LOCAL_TZ).year}"


def render(
    detail: Mapping[str, Any],
    evidence: Mapping[str, Any] | None,
    *,
    municipality: str,
    issued_at: datetime,
    deadline: datetime,
    coat_of_arms: bytes | None,
    addressee: Addressee = Addressee.TERMO,
) -> bytes:
    """The document as PDF bytes; optional fields of `detail` and `evidence` may be missing or None."""
    evidence = evidence or {}
    no = number(detail, issued_at)
    out = io.BytesIO()
    doc = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN + 0.6 * cm,
        title=f"{TITLES[addressee]} nº {no}",
        author=municipality,
        creator="Telemetria",
        invariant=1,  # no creation date or random id in the file: the same inputs give the same bytes
    )
    story = _story(detail, evidence, municipality, no, issued_at, deadline, coat_of_arms, doc.width, addressee)
    footer = _Footer(f"{TITLES[addressee]} nº {no}", issued_at)
    doc.build(story, canvasmaker=footer.canvas)
    return out.getvalue()


def _p(text: Any, style: ParagraphStyle = BODY) -> Paragraph:
    return Paragraph(escape(str(text)), style)


def _field(label: str, value: Any) -> Paragraph:
    shown = "—" if value is None or value == "" else str(value)
    return Paragraph(f"<b>{escape(label)}:</b> {escape(shown)}", BODY)


def _story(
    detail: Mapping[str, Any],
    evidence: Mapping[str, Any],
    municipality: str,
    no: str,
    issued_at: datetime,
    deadline: datetime,
    coat_of_arms: bytes | None,
    width: float,
    addressee: Addressee = Addressee.TERMO,
) -> list[Flowable]:
    inf = infraction.maybe(detail.get("article"))
    facts = evidence.get("facts") if evidence.get("facts") is not None else detail.get("facts")
    story: list[Flowable] = [_header(municipality, coat_of_arms, width), Spacer(1, 10)]
    story += [_p(f"{TITLES[addressee].upper()} Nº {no}", TITLE), Spacer(1, 8)]
    if addressee is Addressee.TERMO:
        story.append(_p("À Secretaria Municipal de Educação", HEAD))
        story.append(
            _p(
                "A fiscalização do transporte escolar (Lei 3.588/2023, Art. 32) comunica à Secretaria Municipal de "
                "Educação a irregularidade abaixo, constatada pelo sistema de rastreamento dos veículos, nos "
                "termos do Art. 34, para as providências legais e administrativas cabíveis. Este termo é interno: "
                "a contratada é chamada a se defender por notificação própria, se for aberto processo (Art. 41)."
            )
        )
    else:
        story.append(_p(f"À contratada {detail.get('contractor') or '—'}", HEAD))
        story.append(
            _p(
                f"{municipality} notifica a contratada abaixo identificada da infração que lhe é imputada, apurada "
                "em processo administrativo (Lei 3.588/2023, Art. 41, com o procedimento da Lei 14.133/2021), para "
                "que apresente defesa prévia, querendo, no prazo indicado (Lei 14.133/2021, Art. 157; Lei "
                "3.588/2023, Art. 42: contraditório e ampla defesa)."
            )
        )
    story.append(_p("1. Identificação", HEAD))
    story += [
        _field("Contratada", detail.get("contractor")),
        _field("Veículo (placa)", detail.get("plate")),
        _field("Condutor", detail.get("driver") or "não identificado"),
        _field("Rota", wording.route_text(detail.get("route"))),
        _field("Ocorrência", f"nº {detail.get('id', '—')}, detectada em {wording.when(detail.get('detected_at'))}"),
    ]
    story.append(_p("2. Do fato", HEAD))
    story.append(
        _p(f"{wording.kind_name(detail.get('kind'))}. {wording.KIND_MEANINGS.get(str(detail.get('kind')), '')}")
    )
    story += [
        _field("Início", wording.when(detail.get("start"))),
        _field("Fim", wording.when(detail.get("end")) if detail.get("end") else "em andamento"),
        _field("Local", wording.place_text(detail.get("place"), detail.get("lat"), detail.get("lon"))),
    ]
    story += [_field(label, value) for label, value in wording.fact_lines(facts)]
    if detail.get("late"):
        story.append(_p("Registrada a partir de posições transmitidas com atraso pelo rastreador.", SMALL))
    story.append(_p("Horários no fuso de Porto Velho (America/Porto_Velho, UTC-4).", SMALL))
    story.append(_p("3. Do enquadramento", HEAD))
    story.append(_field("Dever descumprido", f"Lei 3.588/2023, {detail.get('duty') or detail.get('article') or '—'}"))
    if inf is None:
        story.append(
            _p("Constatação sem infração tipificada nos Art. 36 a 39: não enseja advertência nem multa por si só.")
        )
    else:
        story += [
            _field("Infração", f"Lei 3.588/2023, {inf.article}"),
            _field("Natureza da infração", wording.severity_name(inf.severity.value)),
            _field("Penalidade prevista", _penalty(inf)),
        ]
    story.append(_p("4. Mapa da evidência", HEAD))
    story += _map(detail, evidence, width)
    if addressee is Addressee.NOTIFICACAO:
        story.append(_p("5. Do prazo de defesa", HEAD))
        story.append(
            Paragraph(
                "A contratada poderá apresentar defesa escrita, com documentos, pelo sistema até "
                f"<b>{escape(wording.when(deadline))}</b> (horário de Porto Velho), prazo contado em dias úteis "
                "do Município (Lei 14.133/2021, Art. 157: 15 dias úteis; não contam sábados, domingos e feriados "
                "nacionais, estaduais e municipais). Até o fim do prazo, a defesa pode ser substituída ou "
                "complementada, ou declarada final. Da decisão caberá recurso em 15 dias úteis (Art. 166), com "
                "efeito suspensivo (Art. 168).",
                BODY,
            )
        )
    else:
        story.append(_p("5. Das providências", HEAD))
        story.append(
            _p(
                "Cabe à Secretaria decidir as providências: abrir processo administrativo contra a contratada "
                "(Art. 35 e 41), quando houver infração dos Art. 36 a 39, ou rever o planejamento do serviço."
            )
        )
    story.append(_p("6. Integridade da evidência", HEAD))
    story.append(_integrity(detail, evidence))
    story.append(
        KeepTogether(
            [
                Spacer(1, 36),
                _p("_______________________________________________", BODY),
                _p(f"Servidor(a) responsável — {municipality}", SMALL),
                _p(f"Emitido em {wording.when(issued_at)}", SMALL),
            ]
        )
    )
    return story


def _header(municipality: str, coat_of_arms: bytes | None, width: float) -> Flowable:
    text: list[Flowable] = [
        _p(municipality, MUNI),
        _p("Fiscalização do transporte escolar — Lei 3.588/2023", SMALL),
    ]
    if not coat_of_arms:
        return KeepTogether(text)
    reader = ImageReader(io.BytesIO(coat_of_arms))
    w, h = reader.getSize()
    height = 2.0 * cm
    image = Image(io.BytesIO(coat_of_arms), width=height * w / h, height=height)
    table = Table([[image, text]], colWidths=[height * w / h + 8, width - height * w / h - 8])
    table.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "MIDDLE"), ("LEFTPADDING", (0, 0), (-1, -1), 0)]))
    return table


def _penalty(inf: infraction.Infraction) -> str:
    sev = inf.severity
    both = "advertência escrita e multa" if inf.number in (38, 39) else "advertência escrita e/ou multa"
    text = f"{both} de {UPFM[sev]} UPFM (Art. {inf.number})"
    if sev in DOUBLES_ON_RECURRENCE:
        text += ", em dobro na reincidência em 12 meses (parágrafo único)"
    return text


def _map(detail: Mapping[str, Any], evidence: Mapping[str, Any], width: float) -> list[Flowable]:
    fixes = _fixes(evidence.get("fixes") or ())
    start, end = wording.instant(detail.get("start")), wording.instant(detail.get("end"))
    lat, lon = detail.get("lat"), detail.get("lon")
    point = (float(lat), float(lon)) if isinstance(lat, int | float) and isinstance(lon, int | float) else None
    if not fixes and point is None:
        return [_p("Nenhuma posição do veículo no período da ocorrência (± 10 min).", BODY)]
    lats = [f[1] for f in fixes]
    lons = [f[2] for f in fixes]
    inside = [start is not None and t is not None and start <= t <= (end or t) for t, _, _ in fixes]
    drawing = mapdraw.drawing(lats, lons, inside, width=width, height=width * 0.5, point=point)
    legend = (
        f"{len(fixes)} posições de {wording.when(fixes[0][0]) if fixes else '—'} a "
        f"{wording.when(fixes[-1][0]) if fixes else '—'}. Em vermelho, o trecho da ocorrência; círculo verde: "
        "primeira posição; quadrado azul: última; marcador vermelho: local da ocorrência. Desenhado das próprias "
        "posições (sem mapa de fundo)."
    )
    return [drawing, Spacer(1, 4), _p(legend, SMALL)]


def _fixes(raw: Sequence[Any]) -> list[tuple[datetime | None, float, float]]:
    """(time, lat, lon) of the evidence's fixes with valid coordinates, by fix time."""
    out: list[tuple[datetime | None, float, float]] = []
    for f in raw:
        if not isinstance(f, Mapping):
            continue
        lat, lon = f.get("lat"), f.get("lon")
        if isinstance(lat, int | float) and isinstance(lon, int | float) and -90 <= lat <= 90 and -180 <= lon <= 180:
            out.append((wording.instant(f.get("ts")), float(lat), float(lon)))
    return sorted(out, key=lambda f: (f[0] is None, f[0] or datetime.min.replace(tzinfo=LOCAL_TZ)))


def _integrity(detail: Mapping[str, Any], evidence: Mapping[str, Any]) -> Flowable:
    sha = detail.get("evidence_sha256") or "—"
    frozen = ""
    if evidence.get("frozen_at"):
        frozen = f" em {wording.when(evidence.get('frozen_at'))}"
        if evidence.get("frozen_by"):
            frozen += f" por {evidence.get('frozen_by')}"
    return KeepTogether(
        [
            _p(
                "As posições, os cálculos e as versões do cadastro em que este termo se baseia foram congelados"
                f"{frozen}. Qualquer alteração posterior muda a impressão digital SHA-256 abaixo:"
            ),
            _p(f"SHA-256: {sha}", MONO),
        ]
    )


class _Footer:
    """Page numbers ("página N de M") and the issue stamp on every page: pages are kept until the count is known."""

    def __init__(self, title: str, issued_at: datetime) -> None:
        self.line = f"{title} — gerado por Telemetria em {wording.when(issued_at)}"

    def canvas(self, *args: Any, **kwargs: Any) -> Canvas:
        return _NumberedCanvas(self.line, *args, **kwargs)


class _NumberedCanvas(Canvas):
    def __init__(self, line: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._line = line
        self._pages: list[dict[str, Any]] = []

    def showPage(self) -> None:
        self._pages.append(dict(self.__dict__))
        self._startPage()  # type: ignore[attr-defined]  # reportlab's own way to begin the next page

    def save(self) -> None:
        total = len(self._pages)
        for n, state in enumerate(self._pages, 1):
            self.__dict__.update(state)
            self.setFont("Helvetica", 7.5)
            self.setFillColor(colors.HexColor("#555555"))
            self.drawString(MARGIN, MARGIN * 0.6, self._line)
            self.drawRightString(A4[0] - MARGIN, MARGIN * 0.6, f"página {n} de {total}")
            super().showPage()
        super().save()
