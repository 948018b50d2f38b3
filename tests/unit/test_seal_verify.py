"""Reading a track export back and judging it against a seal's lines (pure: the seals are given)."""

from __future__ import annotations

import asyncio
import io
import zipfile
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from telemetria.localtime import LOCAL_TZ, day_bounds
from telemetria.reports.kinds.track import COLUMNS
from telemetria.reports.output import csv
from telemetria.reports.output.report import seals_csv
from telemetria.seals import canonical, table
from telemetria.seals import verify as v
from telemetria.seals.model import SealRef

DAY = date(2026, 3, 2)
D0, D1 = day_bounds(DAY)  # 04:00Z to 04:00Z next day


def _fixes(n: int = 6, start: datetime | None = None) -> list[tuple[datetime, float, float, float | None]]:
    t0 = start or D0 + timedelta(hours=7)
    return [(t0 + timedelta(seconds=30 * i), -10.437512 + i * 1e-4, -62.46683 - i * 1e-4, 40.0 + i / 3 if i != 2
             else None) for i in range(n)]  # fmt: skip


def _row(fix: tuple[datetime, float, float, float | None], tz: ZoneInfo, vid: int = 7) -> dict[str, Any]:
    t, lat, lon, speed = fix
    return {
        "vehicle_id": vid, "plate": "ABC1D23", "time": t.astimezone(tz), "lat": lat, "lon": lon,
        "speed_kmh": None if speed is None else round(speed, 1), "heading_deg": 90, "ignition": "ligada",
        "step_km": 0.01, "km": 0.1, "method": None, "used": True, "received": t.astimezone(tz), "delay_s": 3,
    }  # fmt: skip


def _version(fixes: list[Any], number: int = 1) -> v.Version:
    lines = [canonical.line(*f) for f in fixes]
    return v.Version(number, len(lines), canonical.digest(lines), lines)


def _csv(fixes: list[Any], refs: list[SealRef] | None, tz: ZoneInfo = LOCAL_TZ, vid: int = 7) -> bytes:
    async def body() -> bytes:
        chunks = [c async for c in csv.csv_chunks(COLUMNS, [_row(f, tz, vid) for f in fixes], tz)]
        text = b"".join(chunks)
        return text + (seals_csv(refs, tz).encode() if refs is not None else b"")

    return asyncio.run(body())


def _ref(version: v.Version, start: datetime = D0, end: datetime = D1) -> SealRef:
    ref = SealRef(7, "ABC1D23", DAY, version.number, version.fixes, version.sha256)
    return table.clipped([ref], start, end)[0]


def _judge(data: bytes, versions: list[v.Version]) -> list[v.DayResult]:
    p = v.parse(data)
    return [v.judge(k, p.groups.get(k), p.named.get(k), versions, "") for k in p.keys()]


def test_the_seals_table_is_written_as_the_spec_says() -> None:
    sealed = _version(_fixes())
    text = _csv(_fixes(), [_ref(sealed)]).decode("utf-8-sig")
    lines = text.split("\r\n")
    at = lines.index("")
    assert lines[at + 1] == "Selos diários;Veículo (id);Placa;Dia;Versão;Posições;SHA-256;De (UTC);Até (UTC)"
    assert lines[at + 2] == f"selo;7;ABC1D23;02/03/2026;1;6;{sealed.sha256};2026-03-02T04:00:00Z;2026-03-03T04:00:00Z"
    assert lines[at + 3 :] == [""] and at == 7  # header, six positions, the empty line


def test_an_unaltered_export_is_valid_and_one_changed_digit_names_its_row() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    data = _csv(fixes, [_ref(sealed)])
    [day] = _judge(data, [sealed])
    assert day.valid and day.version == 1 and day.rows == 6 and day.first_difference is None and day.reason is None

    text = data.decode("utf-8-sig")
    lines = text.split("\r\n")
    assert "-10,437212" in lines[4]  # the fourth position: row 5 as a spreadsheet shows it (the header is row 1)
    tampered = text.replace("-10,437212", "-10,437213", 1)
    [day] = _judge(("\ufeff" + tampered).encode(), [sealed])
    assert not day.valid and day.first_difference is not None
    assert day.first_difference.row == 5
    assert day.first_difference.expected == canonical.line(*fixes[3])
    assert day.first_difference.found == canonical.line(fixes[3][0], -10.437213, *fixes[3][2:])
    assert "linha 5" in (day.reason or "")


def test_a_removed_or_added_row_is_a_difference() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    lines = _csv(fixes, [_ref(sealed)]).decode("utf-8-sig").split("\r\n")
    cut = "\r\n".join(lines[:6] + lines[7:]).encode()  # the last position gone
    [day] = _judge(cut, [sealed])
    assert not day.valid and day.first_difference == v.Difference(7, canonical.line(*fixes[5]), None)
    doubled = "\r\n".join(lines[:3] + lines[2:]).encode()  # the second position twice
    [day] = _judge(doubled, [sealed])
    assert day.first_difference is not None and day.first_difference.row == 4
    assert day.first_difference.expected == canonical.line(*fixes[2])


def test_an_inserted_blank_line_changes_nothing() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    lines = _csv(fixes, [_ref(sealed)]).decode("utf-8-sig").split("\r\n")
    [day] = _judge("\r\n".join([*lines[:3], "", *lines[3:]]).encode(), [sealed])
    assert day.valid


def test_a_partial_day_is_compared_inside_its_window_only() -> None:
    fixes = _fixes(10)
    sealed = _version(fixes)
    start, end = fixes[3][0], fixes[7][0]  # [4th, 8th): four positions
    data = _csv(fixes[3:7], [_ref(sealed, start, end)])
    [day] = _judge(data, [sealed])
    assert day.valid and day.rows == 4
    [day] = _judge(_csv(fixes[3:6], [_ref(sealed, start, end)]), [sealed])  # one cut at the window's end
    assert not day.valid and day.first_difference == v.Difference(5, canonical.line(*fixes[6]), None)


def test_a_day_not_sealed_or_a_version_that_does_not_exist() -> None:
    fixes = _fixes()
    [day] = _judge(_csv(fixes, []), [])
    assert not day.valid and "não selado" in (day.reason or "") and day.version is None
    sealed = _version(fixes)
    other = v.Version(3, sealed.fixes, sealed.sha256, sealed.lines)
    [day] = _judge(_csv(fixes, [_ref(sealed)]), [other])
    assert not day.valid and "versão 1" in (day.reason or "") and "não existe" in (day.reason or "")


def test_an_old_export_verifies_against_its_version_and_says_which_matches_when_not() -> None:
    fixes = _fixes()
    v1 = _version(fixes)
    v2 = _version(sorted([*fixes, (fixes[0][0] + timedelta(seconds=10), -10.43, -62.46, 10.0)]), 2)
    [day] = _judge(_csv(fixes, [_ref(v1)]), [v1, v2])
    assert day.valid and day.version == 1
    # Cut while the seal was behind: rows of version 1, named version 2.
    [day] = _judge(_csv(fixes, [_ref(v2)]), [v1, v2])
    assert day.valid and day.version == 1 and day.first_difference is None
    assert "nomeia a versão 2" in (day.reason or "") and "conferem com a versão 1" in (day.reason or "")
    # Rows of neither version: not valid, naming the version the file names.
    [day] = _judge(_csv([*fixes[:3], (fixes[3][0], fixes[3][1] + 0.001, fixes[3][2], fixes[3][3]), *fixes[4:]],
                        [_ref(v2)]), [v1, v2])  # fmt: skip
    assert not day.valid and day.version == 2 and day.first_difference is not None


def test_without_a_seals_table_any_version_over_the_rows_span() -> None:
    fixes = _fixes(10)
    sealed = _version(fixes)
    [day] = _judge(_csv(fixes[2:8], None), [sealed])
    assert day.valid and day.version == 1 and "não nomeia" in (day.reason or "")


def test_times_in_another_zone_are_converted_by_the_header() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    zone = ZoneInfo("America/Sao_Paulo")
    data = _csv(fixes, [_ref(sealed)], tz=zone)
    assert "Data e hora (America/Sao_Paulo)" in data.decode("utf-8-sig")
    [day] = _judge(data, [sealed])
    assert day.valid


def test_rows_are_grouped_by_vehicle_and_local_day() -> None:
    late = D1 - timedelta(minutes=1)  # 23:59 local: the next row is the next local day
    fixes = _fixes(4, start=late)
    p = v.parse(_csv(fixes, []))
    assert sorted(p.groups) == [(7, DAY), (7, DAY + timedelta(days=1))]
    assert [n for n, _ in p.groups[(7, DAY)].rows] == [2, 3]


def test_a_whole_day_also_compares_the_digest() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    lying = v.Version(1, sealed.fixes, "0" * 64, sealed.lines)  # stored lines that do not give the stored digest
    [day] = _judge(_csv(fixes, [_ref(lying)]), [lying])
    assert not day.valid and "não dão o SHA-256" in (day.reason or "")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe",
        b"Placa;Km\r\nABC;1,0\r\n",
        b"PK\x03\x04 not a zip",
        "Veículo (id);Data e hora (Marte/Olimpo);Latitude;Longitude;Velocidade (km/h)\r\n".encode(),
    ],
)
def test_what_is_not_a_track_export_names_file(data: bytes) -> None:
    with pytest.raises(v.NotAnExport, match=r"^file: "):
        v.parse(data)


def test_a_garbled_cell_is_a_difference_not_a_refusal() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    text = _csv(fixes, [_ref(sealed)]).decode("utf-8-sig").replace("-10,437312", "x", 1)
    [day] = _judge(text.encode(), [sealed])
    assert not day.valid and day.first_difference is not None and day.first_difference.row == 4
    assert day.first_difference.found is not None and ";x;" in day.first_difference.found


def test_report_is_valid_only_with_days_all_valid() -> None:
    assert v.report([]) == {
        "valid": False, "verdict": "alterado", "days": [], "reason": "o arquivo não tem posições nem selos"
    }  # fmt: skip
    ok = v.DayResult(7, "ABC1D23", DAY, 1, "a" * 64, 3, True, None, None)
    assert (
        v.report([ok])["valid"]
        and not v.report([ok, v.DayResult(8, "X", DAY, None, None, 1, False, None, "")])["valid"]
    )
    assert v.report([ok])["days"][0] == {
        "date": "2026-03-02", "vehicle_id": 7, "plate": "ABC1D23", "version": 1, "sha256": "a" * 64, "rows": 3,
        "valid": True, "verdict": "autentico", "first_difference": None, "reason": None,
    }  # fmt: skip


def test_the_verdict_is_the_worst_days_word_and_a_difference_is_shown_as_the_file_shows_it() -> None:
    ok = v.DayResult(7, "ABC1D23", DAY, 1, "a" * 64, 3, True, None, None)
    waiting = v.DayResult(7, "ABC1D23", DAY, None, None, 3, False, None, "", v.NOT_SEALED_YET)
    changed = v.DayResult(8, "X", DAY, 1, "b" * 64, 1, False, None, "")
    assert v.report([ok])["verdict"] == "autentico"
    assert v.report([ok, waiting])["verdict"] == "ainda_nao_selado"
    assert v.report([ok, waiting, changed])["verdict"] == "alterado"
    diff = v.Difference(
        12, "2026-12-04T16:00:09Z;-10.437512;-62.466830;40.6\n", "2026-12-04T16:00:09Z;-10.437512;-62.466830;40.7"
    )
    assert diff.as_json()["expected_shown"] == "04/12/2026 12:00:09; -10,437512; -62,466830; 40,6"
    assert diff.as_json()["found_shown"] == "04/12/2026 12:00:09; -10,437512; -62,466830; 40,7"
    assert v.shown("2026-12-04T16:00:09Z;-10.437512;-62.466830;") == "04/12/2026 12:00:09; -10,437512; -62,466830; "
    assert v.shown(None) is None and v.shown("not a line") == "not a line"


def test_clip_and_whole_day() -> None:
    assert table.clip(DAY, D0 - timedelta(days=3), D1 + timedelta(days=3)) == (D0, D1)
    assert table.whole_day(DAY, D0, D1) and not table.whole_day(DAY, D0, D1 - timedelta(seconds=1))
    assert table.iso(D0) == "2026-03-02T04:00:00Z" and D0.astimezone(UTC).hour == 4


def _workbook(fixes: list[Any], refs: list[SealRef], tz: ZoneInfo = LOCAL_TZ) -> bytes:
    """A workbook laid out as the XLSX export is (rec-spec: "Consulta", the data sheet, "Selos"), typed cells."""
    import openpyxl

    wb = openpyxl.Workbook()
    query = wb.active
    assert query is not None
    query.title = "Consulta"
    query.append(["Trajetória"])
    query.append(["Período", "02/03/2026 a 02/03/2026"])
    data = wb.create_sheet("Trajetória")
    data.append([f"{c.header} ({tz.key})" if c.kind.zoned else c.header for c in COLUMNS])
    for f in fixes:
        r = _row(f, tz)
        data.append([r["vehicle_id"], r["plate"], r["time"].replace(tzinfo=None), r["lat"], r["lon"], r["speed_kmh"],
                     r["heading_deg"], r["ignition"], r["step_km"], r["km"], None, "Sim",
                     r["received"].replace(tzinfo=None), r["delay_s"]])  # fmt: skip
    seals = wb.create_sheet("Selos")
    seals.append(list(table.COLUMNS))
    for ref in refs:
        c = table.cells(ref)
        seals.append([c["vehicle_id"], c["plate"], datetime(ref.day.year, ref.day.month, ref.day.day), c["version"],
                      c["fixes"], c["sha256"], c["from"], c["to"]])  # fmt: skip
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_a_workbook_is_read_by_its_typed_cells_and_a_changed_cell_names_its_row() -> None:
    fixes = _fixes()
    sealed = _version(fixes)
    data = _workbook(fixes, [_ref(sealed)])
    p = v.parse(data)
    assert p.kind == "xlsx" and p.zone == "America/Porto_Velho" and list(p.named) == [(7, DAY)]
    [day] = _judge(data, [sealed])
    assert day.valid and day.rows == 6

    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(data))
    wb["Trajetória"]["E4"] = -62.466931  # the longitude of the third position, one digit changed
    out = io.BytesIO()
    wb.save(out)
    [day] = _judge(out.getvalue(), [sealed])
    assert not day.valid and day.first_difference is not None and day.first_difference.row == 4
    assert day.first_difference.expected == canonical.line(*fixes[2])


def test_a_workbook_with_no_track_sheet_is_not_an_export() -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    sheet = wb.active
    assert sheet is not None
    sheet.append(["Placa", "Km"])
    out = io.BytesIO()
    wb.save(out)
    with pytest.raises(v.NotAnExport, match=r"^file: not a track export"):
        v.parse(out.getvalue())


# Hostile files: never an exception other than NotAnExport (the API's 400 naming `file`), never a 500.

HEAD = "\ufeffVeículo (id);Placa;Data e hora ({zone});Latitude;Longitude;Velocidade (km/h)\r\n"
GOOD = "7;ABC1D23;02/03/2026 07:00:00;-10,437512;-62,466830;40,0\r\n"


def _text(*rows: str, zone: str = "America/Porto_Velho") -> bytes:
    return (HEAD.format(zone=zone) + "".join(rows)).encode()


def test_a_vehicle_id_of_thousands_of_digits_is_not_an_id() -> None:
    huge = "9" * 5000  # int() refuses more than 4300 digits with a ValueError
    with pytest.raises(v.NotAnExport, match=r"^file: row 2: a position needs its vehicle id"):
        v.parse(_text(f"{huge};ABC1D23;02/03/2026 07:00:00;-10,437512;-62,466830;40,0\r\n"))
    p = v.parse(_text(GOOD, f"{huge};ABC1D23;02/03/2026 07:00:30;-10,437512;-62,466830;40,0\r\n"))
    assert list(p.groups) == [(7, DAY)] and len(p.groups[(7, DAY)].rows) == 2  # kept with the row before it
    seal = f"selo;{huge};ABC1D23;02/03/2026;1;1;{'a' * 64};2026-03-02T04:00:00Z;2026-03-03T04:00:00Z\r\n"
    with pytest.raises(v.NotAnExport, match=r"^file: row 4: not a row of the seals table"):
        v.parse(_text(GOOD, "\r\n", seal))
    assert v._int("1" * 18) == 111111111111111111 and v._int("1" * 19) is None


@pytest.mark.parametrize(
    ("zone", "when"),
    [("Asia/Tokyo", "01/01/0001 00:00:00"), ("America/Porto_Velho", "31/12/9999 23:59:59"),
     ("UTC", "01/01/0001 00:00:00"), ("UTC", "31/12/9999 23:59:59")],
)  # fmt: skip
def test_times_at_the_edges_of_the_calendar_are_rows_that_cannot_be_read(zone: str, when: str) -> None:
    row = f"7;ABC1D23;{when};-10,437512;-62,466830;40,0\r\n"
    with pytest.raises(v.NotAnExport, match=r"^file: row 2: a position needs its vehicle id and its time"):
        v.parse(_text(row, zone=zone))
    first = "7;ABC1D23;02/03/2026 16:00:00;-10,437512;-62,466830;40,0\r\n"  # 07:00Z or later in every zone here
    p = v.parse(_text(first, row, zone=zone))
    [key] = p.keys()
    group = p.groups[key]
    assert [n for n, _ in group.rows] == [2, 3] and group.rows[1][1].startswith(f"{when};")
    [day] = [v.judge(key, group, None, [_version(_fixes(1))], "")]
    assert not day.valid


@pytest.mark.parametrize(
    "cells",
    ["31/12/9999;1;1;{sha};9999-12-31T04:00:00Z;9999-12-31T23:59:59Z",
     "01/01/0001;1;1;{sha};0001-01-01T00:00:00Z;0001-01-02T00:00:00Z",
     "02/03/2026;1;1;{sha};2026-03-02T04:00:00Z;9999-12-31T23:59:59Z"],
)  # fmt: skip
def test_seals_named_at_the_edges_of_the_calendar_are_not_seals(cells: str) -> None:
    seal = f"selo;7;ABC1D23;{cells.format(sha='a' * 64)}\r\n"
    with pytest.raises(v.NotAnExport, match=r"^file: row 4: not a row of the seals table"):
        v.parse(_text(GOOD, "\r\n", seal))


def _rezip(data: bytes, change: Any, added: dict[str, bytes] | None = None) -> bytes:
    """The workbook with each part's bytes passed through `change(name, bytes)`, and the parts `added`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, change(info.filename, src.read(info.filename)))
        for name, part in (added or {}).items():
            dst.writestr(name, part)
    return out.getvalue()


SHEET = "xl/worksheets/sheet2.xml"  # the data sheet (after "Consulta")
PLATE = b'<c r="B2" t="inlineStr"><is><t>ABC1D23</t></is></c>'  # the first position's plate


def _shared(data: bytes, strings: list[str], index: int) -> bytes:
    """The workbook with a sharedStrings.xml of `strings` and the first position's plate naming string `index`."""
    table_xml = "".join(f"<si><t>{x}</t></si>" for x in strings)
    xml = (
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        f'count="{len(strings)}" uniqueCount="{len(strings)}">{table_xml}</sst>'
    ).encode()
    override = (
        b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
    )

    def change(name: str, part: bytes) -> bytes:
        if name == "[Content_Types].xml":
            return part.replace(b"</Types>", override)
        if name == SHEET:
            assert PLATE in part
            return part.replace(PLATE, f'<c r="B2" t="s"><v>{index}</v></c>'.encode())
        return part

    return _rezip(data, change, {"xl/sharedStrings.xml": xml})


def test_a_damaged_workbook_is_not_an_export_whatever_openpyxl_raises() -> None:
    fixes = _fixes()
    data = _workbook(fixes, [_ref(_version(fixes))])
    assert v.parse(data).kind == "xlsx"
    shared = _shared(data, ["ABC1D23"], 0)
    assert v.parse(shared).groups[(7, DAY)].plate == "ABC1D23"  # a workbook whose text is in shared strings reads

    def truncated(name: str, part: bytes) -> bytes:  # the data sheet's XML cut in the middle of its rows
        return part[: len(part) * 2 // 3] if name == SHEET else part

    for bad in (_rezip(data, truncated), _shared(data, ["ABC1D23"], 99999)):  # ParseError, IndexError in iter_rows
        with pytest.raises(v.NotAnExport, match=r"^file: not a track export.*not a workbook it can read"):
            v.parse(bad)


def test_every_record_counts_against_the_row_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v, "MAX_ROWS", 10)
    assert v.parse(_text(GOOD, "\r\n" * 8)).last_row == 10  # the header, a position and eight blank rows
    for body in (_text(GOOD, "\r\n" * 9), _text("\r\n" * 20), ("\r\n" * 20).encode()):
        with pytest.raises(v.NotAnExport, match=r"^file: more than 10 rows in one file"):
            v.parse(body)
    title = ";".join(["Selos diários", *table.COLUMNS]) + "\r\n"
    seal = f"X;02/03/2026;1;1;{'a' * 64};2026-03-02T04:00:00Z;2026-03-03T04:00:00Z\r\n"
    seals = [f"selo;{vid};{seal}" for vid in range(7)]
    assert len(v.parse(_text(GOOD, "\r\n", title, *seals[:6])).named) == 6  # ten records
    with pytest.raises(v.NotAnExport, match=r"^file: more than 10 rows"):
        v.parse(_text(GOOD, "\r\n", title, *seals))  # the seals table's rows count too
    with pytest.raises(v.NotAnExport, match=r"^file: more than 10 rows"):
        v.parse(_workbook(_fixes(10), []))  # the header and ten positions


def test_a_csv_is_read_as_a_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are read one by one: a refusal at the cap comes before the rest of the file is split into records."""
    seen = []
    real = v._counted

    def spy(rows: Any, most: int) -> Any:
        for n, cells in real(rows, most):
            seen.append(n)
            yield n, cells

    monkeypatch.setattr(v, "_counted", spy)
    monkeypatch.setattr(v, "MAX_ROWS", 5)
    with pytest.raises(v.NotAnExport):
        v.parse(_text(GOOD, "\r\n" * 100_000, 'x;"unclosed'))  # a csv.Error further on is never reached
    assert seen == [1, 2, 3, 4, 5]


def test_a_file_names_at_most_max_days_vehicle_days(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v, "MAX_DAYS", 3)
    rows = [f"{vid};ABC1D23;0{d}/03/2026 07:00:00;-10,437512;-62,466830;40,0\r\n" for vid in (7, 8) for d in (1, 2)]
    assert len(v.parse(_text(*rows[:3])).keys()) == 3
    with pytest.raises(v.NotAnExport, match=r"^file: more than 3 vehicle-days in one file"):
        v.parse(_text(*rows))
    seal = f"selo;9;XYZ;02/03/2026;1;1;{'a' * 64};2026-03-02T04:00:00Z;2026-03-03T04:00:00Z\r\n"
    with pytest.raises(v.NotAnExport, match=r"^file: more than 3 vehicle-days"):
        v.parse(_text(*rows[:3], "\r\n", seal))  # a seal named for a vehicle-day without rows counts too


def test_a_workbook_that_unpacks_too_far_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    fixes = _fixes()
    data = _workbook(fixes, [_ref(_version(fixes))])
    v.parse(data)
    monkeypatch.setattr(v, "XLSX_RATIO", 1)  # deflated parts unpack to more than the upload's size
    with pytest.raises(v.NotAnExport, match=r"^file: the workbook unpacks to more than \d+ bytes"):
        v.parse(data)
    monkeypatch.setattr(v, "XLSX_RATIO", 30)
    monkeypatch.setattr(v, "MAX_XLSX_UNPACKED", 1000)
    with pytest.raises(v.NotAnExport, match=r"^file: the workbook unpacks to more than 1000 bytes"):
        v.parse(data)
    monkeypatch.setattr(v, "MAX_XLSX_UNPACKED", 256 * 1024 * 1024)
    shared = _shared(data, ["ABC1D23", "x" * 40], 0)
    v.parse(shared)
    monkeypatch.setattr(v, "MAX_SHARED_STRINGS", 50)
    v.parse(data)  # no shared strings at all
    with pytest.raises(v.NotAnExport, match=r"^file: the workbook's shared strings unpack to more than 50 bytes"):
        v.parse(shared)


def test_a_day_without_versions_says_nothing_of_a_seal() -> None:
    """Unknown vehicle, another contractor's, or a day not sealed: the file's own seal claim is not echoed."""
    fixes = _fixes()
    data = _csv(fixes, [_ref(_version(fixes))])
    [day] = _judge(data, [])
    assert not day.valid and day.version is None and day.sha256 is None and day.first_difference is None
    assert day.as_json()["sha256"] is None and "não selado" in (day.reason or "")


def test_a_sheet_declaring_every_cell_is_read_as_wide_and_long_as_its_cells() -> None:
    """A dimension of A1:XFD1048576 would pad each row to 16,384 cells and add a million empty rows."""
    fixes = _fixes()
    data = _workbook(fixes, [_ref(_version(fixes))])

    def declared(name: str, part: bytes) -> bytes:
        return (
            part.replace(b'<dimension ref="A1:N7" />', b'<dimension ref="A1:XFD1048576" />') if name == SHEET else part
        )

    wide = _rezip(data, declared)
    with zipfile.ZipFile(io.BytesIO(wide)) as z:
        assert b"A1:XFD1048576" in z.read(SHEET)
    p = v.parse(wide)
    assert p.last_row == 7 and len(p.groups[(7, DAY)].rows) == 6


def test_a_day_not_sealed_yet_whose_file_misses_positions_that_arrived_since_is_not_altered() -> None:
    """Store and forward (Art. 15 §3): after today's export, positions of its period may still arrive. The file's
    rows are then the stored lines in order with some missing: the day is open, not altered. A changed or extra
    row is still an alteration."""
    from telemetria.seals.verify import arrived_since

    stored = ["a", "b", "c", "d"]
    assert arrived_since([(1, "a"), (2, "c"), (3, "d")], stored)  # "b" arrived after the export
    assert not arrived_since([(1, "a"), (2, "b"), (3, "c"), (4, "d")], stored)  # the same: first_difference says so
    assert not arrived_since([(1, "a"), (2, "x"), (3, "d")], stored)  # a row changed
    assert not arrived_since([(1, "c"), (2, "a")], stored)  # out of order
    assert not arrived_since([(1, "a"), (2, "e")], stored)  # a row the data never had
