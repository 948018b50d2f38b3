"""The Termo de Comunicação PDF: what a reader finds in it (text extracted with pypdf), its map and its pages."""

from __future__ import annotations

import io
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pypdf
import pytest
from PIL import Image

from telemetria.occurrences.documents import termo
from telemetria.reports.output import mapdraw

T0 = datetime(2026, 3, 10, 11, 40, tzinfo=UTC)  # 07:40 in Porto Velho
SHA = "3f" * 32


def fixes(n: int = 60) -> list[dict[str, Any]]:
    return [
        {
            "ts": (T0 + timedelta(seconds=30 * i)).isoformat(),
            "lat": -10.44 + 0.0009 * i,
            "lon": -62.47 + 0.0006 * i + 0.002 * math.sin(i / 5),
            "speed_kmh": 50.0 + (25 if 20 <= i <= 28 else 0),
            "received_at": (T0 + timedelta(seconds=30 * i + 2)).isoformat(),
        }
        for i in range(n)
    ]


def detail(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": 42,
        "kind": "speeding",
        "article": "Art. 37, X",
        "severity": "media",
        "vehicle_id": 7,
        "plate": "ABC1D23",
        "contractor_id": 3,
        "contractor": "Transportes São João Ltda",
        "driver": "João da Conceição",
        "route_id": 5,
        "route": {"code": "R-07", "name": "Linha Açaí"},
        "start": (T0 + timedelta(minutes=10)).isoformat(),
        "end": (T0 + timedelta(minutes=14)).isoformat(),
        "lat": -10.44 + 0.0009 * 24,
        "lon": -62.47 + 0.0006 * 24,
        "place": "Av. Padre Adolpho Rohl, nº 1200",
        "facts": {"max_kmh": 75.4, "limit_kmh": 60, "over_kmh": 15.4, "duration_s": 245, "km": 3.1},
        "status": "notified",
        "detected_at": (T0 + timedelta(minutes=15)).isoformat(),
        "late": False,
        "notified_at": (T0 + timedelta(days=1)).isoformat(),
        "defense_due": None,
        "evidence_sha256": SHA,
    }
    d.update(over)
    return d


def evidence(**over: Any) -> dict[str, Any]:
    e: dict[str, Any] = {
        "occurrence": detail(),
        "fixes": fixes(),
        "facts": detail()["facts"],
        "registry": [],
        "frozen_at": (T0 + timedelta(hours=3)).isoformat(),
        "frozen_by": "monitor",
    }
    e.update(over)
    return e


def render(
    d: dict[str, Any] | None = None,
    e: dict[str, Any] | None = None,
    arms: bytes | None = None,
    addressee: termo.Addressee = termo.Addressee.NOTIFICACAO,
) -> bytes:
    return termo.render(
        detail() if d is None else d,
        evidence() if e is None else e,
        municipality="Prefeitura Municipal de Jaru",
        issued_at=T0 + timedelta(days=1, hours=2),  # 11/03/2026 09:40 local
        deadline=datetime(2026, 3, 18, 23, 59, 59, tzinfo=UTC) + timedelta(hours=4),  # 18/03 23:59:59 local
        coat_of_arms=arms,
        addressee=addressee,
    )


def text_of(pdf: bytes) -> tuple[str, pypdf.PdfReader]:
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    return "\n".join(page.extract_text() for page in reader.pages), reader


def test_the_termo_says_who_what_when_where_which_article_and_until_when() -> None:
    pdf = render()
    assert pdf.startswith(b"%PDF-")
    text, reader = text_of(pdf)
    box = reader.pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (595, 842)  # A4
    for expected in (
        "Prefeitura Municipal de Jaru",
        "NOTIFICAÇÃO PARA DEFESA PRÉVIA Nº 42/2026",
        "À contratada Transportes São João Ltda",
        "Transportes São João Ltda",
        "ABC1D23",
        "João da Conceição",
        "R-07 — Linha Açaí",
        "Excesso de velocidade",
        "Início: 10/03/2026 07:50:00",  # 11:50 UTC in Porto Velho (UTC-4)
        "Fim: 10/03/2026 07:54:00",
        "Av. Padre Adolpho Rohl, nº 1200",
        "Velocidade máxima: 75,4 km/h",
        "Limite de velocidade: 60,0 km/h",
        "Duração: 4 min 05 s",
        "Art. 37, X",
        "média",
        "20 UPFM",
        "18/03/2026 23:59:59",
        f"SHA-256: {SHA}",
        "gerado por Telemetria em 11/03/2026 09:40:00",
        "página 1 de",
    ):
        assert expected in text, expected
    flat = " ".join(text.split())
    assert "15 dias úteis" in flat and "Art. 157" in flat and "advertência escrita e/ou multa de 20 UPFM" in flat


def test_the_termo_goes_to_the_secretaria_and_names_the_duty() -> None:
    """Art. 34: the Termo de Comunicação is addressed to the Secretaria, for its measures; it gives no defence term
    (that is the notificação's). A finding without an infraction (Art. 9 §1) names its duty and no penalty."""
    text, _ = text_of(render(addressee=termo.Addressee.TERMO))
    assert "TERMO DE COMUNICAÇÃO Nº 42/2026" in text and "À Secretaria Municipal de Educação" in text
    assert "providências" in text and "18/03/2026 23:59:59" not in text and "À contratada" not in text
    over = detail(kind="over_2h_on_board", duty="Art. 9, § 1º", article=None, severity=None)
    text, _ = text_of(render(d=over, addressee=termo.Addressee.TERMO))
    flat = " ".join(text.split())
    assert "Dever descumprido: Lei 3.588/2023, Art. 9, § 1º" in flat and "UPFM" not in flat
    assert "não enseja advertência nem multa" in flat


def test_the_map_is_drawn_from_the_fixes_with_the_occurrence_highlighted() -> None:
    with_map = render()
    without = render(e=evidence(fixes=[]), d=detail(lat=None, lon=None))
    pages = pypdf.PdfReader(io.BytesIO(with_map)).pages
    content = b"".join(c.get_data() for p in pages if (c := p.get_contents()) is not None)
    # a path of 60 fixes: at least 59 line segments in the page content, and the highlighted one in red
    assert len(re.findall(rb" l\b", content)) >= 59
    assert b".776471 .156863 .156863 RG" in content  # mapdraw.HIGHLIGHT as a stroke colour
    assert "2 km" in text_of(with_map)[0] or "1 km" in text_of(with_map)[0]  # the scale bar's label
    text, _ = text_of(without)
    assert "Nenhuma posição do veículo" in text


def test_the_map_frame_keeps_scale_and_north() -> None:
    lats = [-10.0, -10.0, -10.009]  # ~1 km south of the first point
    lons = [-62.0, -61.99, -62.0]  # ~1.095 km east
    f = mapdraw.frame(lats, lons, 400, 300, margin=10)
    assert f.xs[1] > f.xs[0] and f.ys[2] < f.ys[0]  # east is right, north is up
    east_pt, south_pt = f.xs[1] - f.xs[0], f.ys[0] - f.ys[2]
    assert east_pt * f.metres_per_pt == pytest.approx(1095.5, rel=0.005)
    assert south_pt * f.metres_per_pt == pytest.approx(1000.8, rel=0.005)
    assert all(10 - 1e-6 <= x <= 390 + 1e-6 for x in f.xs) and all(10 - 1e-6 <= y <= 290 + 1e-6 for y in f.ys)
    metres, pts = mapdraw.scale_bar(f.metres_per_pt, 100)
    assert metres in (100, 200, 500, 1000) and pts <= 100 and pts * f.metres_per_pt == pytest.approx(metres)
    one = mapdraw.frame([-10.0], [-62.0], 100, 100)
    assert (one.xs, one.ys, one.metres_per_pt) == ((50.0,), (50.0,), 0.0)


def test_coat_of_arms_is_optional_and_drawn_when_given() -> None:
    png = io.BytesIO()
    Image.new("RGB", (60, 80), (30, 90, 160)).save(png, "PNG")
    with_arms = render(arms=png.getvalue())
    reader = pypdf.PdfReader(io.BytesIO(with_arms))
    assert len(list(reader.pages[0].images)) == 1
    assert len(list(pypdf.PdfReader(io.BytesIO(render())).pages[0].images)) == 0
    assert "Prefeitura Municipal de Jaru" in text_of(with_arms)[0]


def test_the_same_inputs_give_the_same_bytes() -> None:
    assert render() == render()


def test_long_texts_wrap_and_paginate_and_markup_is_text() -> None:
    long_place = " ".join(f"trecho{i} da estrada vicinal Linha 621" for i in range(400))
    d = detail(place=long_place, contractor="<b>Cooperativa & Cia</b> " + "Transporte Escolar " * 30)
    pdf = render(d=d)
    text, reader = text_of(pdf)
    assert len(reader.pages) >= 3
    assert "trecho0 da" in text and "trecho399 da" in text  # nothing cut
    assert "<b>Cooperativa & Cia</b>" in text  # set as text, not as markup
    total = len(reader.pages)
    assert f"página {total} de {total}" in reader.pages[-1].extract_text()


def test_missing_optional_fields_still_render() -> None:
    bare = {"id": 9, "kind": "run_not_made", "article": "Art. 39, I", "severity": "gravissima", "plate": "XYZ9A88"}
    text, _ = text_of(render(d=bare, e={}))
    assert "XYZ9A88" in text and "Corrida não realizada" in text and "Art. 39, I" in text
    assert "advertência escrita e multa de 40 UPFM" in text and "em dobro na reincidência" in text
    assert "Condutor: não identificado" in text and "SHA-256: —" in text
    unknown = detail(
        kind="new_kind", severity=None, facts={"odd": 1}, end=None, start=datetime(2026, 3, 10, 12, tzinfo=UTC)
    )
    text, _ = text_of(render(d=unknown, e=evidence(facts=None)))
    assert "new_kind" in text and "odd: 1" in text and "Fim: em andamento" in text and "10/03/2026 08:00:00" in text
