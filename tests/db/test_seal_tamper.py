"""THE tamper test (issue 19): a sealed day exported and verified; one digit changed is found, naming its row; a
late fix gives version 2 and the old export still verifies against version 1; partial days, XLSX, the CLI; a
contractor learns nothing of another's vehicle; hostile files are refused with 400."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from defusedxml import ElementTree

from telemetria import formats
from telemetria.cli import verify as cli_verify
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.store import rollup
from telemetria.seals import canonical, verify, verify_api
from tests.conftest import ScratchDb
from tests.db.conftest import People, Tracker, make_people, register

DAY = date(2026, 10, 20)
LATER = datetime.combine(DAY + timedelta(days=3), time(12), LOCAL_TZ)  # the refresher's `now`: the day is closed


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


async def _register(conn: asyncpg.Connection, contractor_id: int, plate: str, unique_id: str) -> Tracker:
    """A vehicle with its tracker, of the contractor (the contractor user verifies only its own vehicles' files)."""
    t = await register(conn, plate, unique_id)
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", contractor_id, t.vehicle_id)
    return t


def _fix(at: datetime, i: int) -> dict[str, Any]:
    speed = None if i % 7 == 3 else 30 + i * 0.35  # some fixes without a speed; speeds with a decimal to round
    return {
        "ts": at.isoformat(),
        "lat": -10.4401234 + i * 1.37e-4,
        "lon": -62.4701234 - i * 0.91e-4,
        "speed_kmh": speed,
    }


def _fixes(n: int = 30, hour: int = 7) -> list[dict[str, Any]]:
    start = datetime.combine(DAY, time(hour), LOCAL_TZ)
    return [_fix(start + timedelta(seconds=30 * i), i) for i in range(n)]


async def _post(client: httpx.AsyncClient, t: Tracker, fixes: list[dict[str, Any]]) -> None:
    r = await client.post("/api/v1/fixes", json={"fixes": fixes}, headers=t.auth)
    assert r.status_code == 200 and not r.json()["rejected"], r.text


async def _seal(pool: asyncpg.Pool) -> None:
    while await rollup.refresh(pool, now=LATER):
        pass


async def _export(client: httpx.AsyncClient, people: People, vid: int, fmt: str = "csv", **window: str) -> bytes:
    params = {"vehicle_id": str(vid), "from": DAY.isoformat(), "to": DAY.isoformat(), "format": fmt, **window}
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return r.content


async def _verify(client: httpx.AsyncClient, people: People, data: bytes, role: str = "contractor") -> dict[str, Any]:
    r = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=people.auth(role))
    assert r.status_code == 200, r.text
    return dict(orjson.loads(r.content))


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""), delimiter=";"))


def _retouch(data: bytes, row: int, column: str) -> bytes:
    """The file with the last digit of one cell changed (row as a spreadsheet numbers it), as a person would."""
    text = data.decode("utf-8-sig")
    lines = text.split("\r\n")
    cells = lines[row - 1].split(";")
    at = lines[0].split(";").index(column)
    last = cells[at][-1]
    cells[at] = cells[at][:-1] + ("1" if last != "1" else "2")
    lines[row - 1] = ";".join(cells)
    return ("\ufeff" + "\r\n".join(lines)).encode()


async def _versions(conn: asyncpg.Connection, vid: int) -> list[tuple[int, str]]:
    rows = await conn.fetch("SELECT version, sha256 FROM day_seals WHERE vehicle_id = $1 AND day = $2", vid, DAY)
    return sorted((r["version"], r["sha256"]) for r in rows)


async def test_a_sealed_day_exported_tampered_and_sealed_again(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    t = await _register(conn, people.contractor_id, "SEL1A23", "seal-tamper-1")
    fixes = _fixes()
    await _post(client, t, fixes)
    await _seal(pool)
    [(version, sha)] = await _versions(conn, t.vehicle_id)
    assert version == 1

    old = await _export(client, people, t.vehicle_id)
    rows = _rows(old)
    blank = rows.index([])
    assert blank == len(fixes) + 1  # the header, the positions, then the empty line that ends them
    assert rows[blank + 1] == [
        "Selos diários", "Veículo (id)", "Placa", "Dia", "Versão", "Posições", "SHA-256", "De (UTC)", "Até (UTC)"
    ]  # fmt: skip
    assert rows[blank + 2] == [
        "selo", str(t.vehicle_id), "SEL1A23", "20/10/2026", "1", str(len(fixes)), sha, "2026-10-20T04:00:00Z",
        "2026-10-21T04:00:00Z",
    ]  # fmt: skip

    answer = await _verify(client, people, old)
    assert answer["valid"] is True
    [day] = answer["days"]
    assert day == {
        "date": DAY.isoformat(), "vehicle_id": t.vehicle_id, "plate": "SEL1A23", "version": 1, "sha256": sha,
        "rows": len(fixes), "valid": True, "verdict": "autentico", "first_difference": None, "reason": None,
    }  # fmt: skip

    # One digit of one coordinate changed: invalid, naming that row with the line expected and the line found.
    tampered = _retouch(old, 12, "Longitude")
    answer = await _verify(client, people, tampered)
    assert answer["valid"] is False
    diff = answer["days"][0]["first_difference"]
    assert diff["row"] == 12
    sealed_fix = fixes[10]  # row 12: the 11th position
    ts = datetime.fromisoformat(sealed_fix["ts"])
    assert diff["expected"] == canonical.line(ts, sealed_fix["lat"], sealed_fix["lon"], sealed_fix["speed_kmh"]).strip()
    assert diff["found"] != diff["expected"] and diff["found"].split(";")[1] == diff["expected"].split(";")[1]
    assert "linha 12" in answer["days"][0]["reason"]

    # A late fix into the sealed day: the refresh seals version 2; the old export still verifies, against 1.
    late = _fix(datetime.combine(DAY, time(7), LOCAL_TZ) + timedelta(seconds=45), 99)
    await _post(client, t, [late])
    await _seal(pool)
    versions = await _versions(conn, t.vehicle_id)
    assert [v for v, _ in versions] == [1, 2] and versions[0][1] == sha and versions[1][1] != sha
    answer = await _verify(client, people, old)
    assert answer["valid"] is True and answer["days"][0]["version"] == 1

    # A new export names version 2 and verifies against it; it does not pass for version 1's file.
    new = await _export(client, people, t.vehicle_id)
    named = _rows(new)[-1]
    assert named[0] == "selo" and named[4] == "2" and named[6] == versions[1][1] and named[5] == str(len(fixes) + 1)
    answer = await _verify(client, people, new, role="auditor")
    assert answer["valid"] is True and answer["days"][0]["version"] == 2 and answer["days"][0]["rows"] == 31
    assert new != old


async def test_a_partial_day_verifies_inside_its_window(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    t = await _register(conn, people.contractor_id, "SEL2A23", "seal-tamper-2")
    await _post(client, t, _fixes(120))  # 07:00 to 07:59:30
    await _seal(pool)
    window = {"from": f"{DAY}T07:20", "to": f"{DAY}T07:29"}  # to the minute, its last minute included
    part = await _export(client, people, t.vehicle_id, **window)
    rows = _rows(part)
    assert rows[-1][7:] == ["2026-10-20T11:20:00Z", "2026-10-20T11:30:00Z"]  # the window, clipped to the day
    answer = await _verify(client, people, part)
    assert answer["valid"] is True and answer["days"][0]["rows"] == 20
    # The window's last position cut: the line the seal has there is missing.
    lines = part.decode("utf-8-sig").split("\r\n")
    cut = ("\ufeff" + "\r\n".join(lines[:20] + lines[21:])).encode()  # rows 2..21 are the positions
    answer = await _verify(client, people, cut)
    diff = answer["days"][0]["first_difference"]
    assert answer["valid"] is False and diff["row"] == 21 and diff["found"] is None
    assert diff["expected"].startswith("2026-10-20T11:29:30Z;")


async def test_a_day_not_sealed_and_files_that_are_not_track_exports(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = await _register(conn, people.contractor_id, "SEL3A23", "seal-tamper-3")
    await _post(client, t, _fixes(10))
    data = await _export(client, people, t.vehicle_id)  # the day is not closed: nothing sealed, no seal named
    assert _rows(data)[-1][0] == "Selos diários"
    answer = await _verify(client, people, data)
    assert answer["valid"] is False and answer["days"][0]["valid"] is False
    assert "não selado" in answer["days"][0]["reason"]

    km = await client.get(
        "/api/v1/reports/km", params={"from": str(DAY), "to": str(DAY), "format": "csv"}, headers=people.auth("auditor")
    )
    for body in (km.content, b"\x00\x01binary", b"PK\x03\x04broken zip"):
        r = await client.post("/api/v1/seals/verify", files={"file": ("x.csv", body)}, headers=people.auth("monitor"))
        assert r.status_code == 400 and r.json()["field"] == "file", r.text
    r = await client.post("/api/v1/seals/verify", files={"other": ("x.csv", data)}, headers=people.auth("monitor"))
    assert r.status_code == 400 and r.json()["field"] == "file"
    r = await client.post("/api/v1/seals/verify", content=data, headers=people.auth("monitor"))
    assert r.status_code == 415 and r.json()["field"] == "file"
    monkeypatch.setattr(verify_api, "MAX_FILE_BYTES", 1024)
    r = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=people.auth("monitor"))
    assert r.status_code == 413 and r.json()["field"] == "file"
    assert (await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)})).status_code == 401


async def test_the_gis_files_name_their_seals(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    t = await _register(conn, people.contractor_id, "SEL4A23", "seal-tamper-4")
    await _post(client, t, _fixes(10))
    await _seal(pool)
    [(_, sha)] = await _versions(conn, t.vehicle_id)
    doc = orjson.loads(await _export(client, people, t.vehicle_id, "geojson"))
    assert doc["seals"] == [
        {"vehicle_id": t.vehicle_id, "plate": "SEL4A23", "date": "2026-10-20", "version": 1, "fixes": 10,
         "sha256": sha, "from": "2026-10-20T04:00:00Z", "to": "2026-10-21T04:00:00Z"},
    ]  # fmt: skip
    gpx = ElementTree.fromstring(await _export(client, people, t.vehicle_id, "gpx"))
    desc = gpx.find("{http://www.topografix.com/GPX/1/1}metadata/{http://www.topografix.com/GPX/1/1}desc")
    assert desc is not None and f"SEL4A23 2026-10-20 v1 10 {sha}" in (desc.text or "")
    kml = ElementTree.fromstring(await _export(client, people, t.vehicle_id, "kml"))
    values = [e.text or "" for e in kml.iter("{http://www.opengis.net/kml/2.2}value")]
    assert any(sha in v for v in values)


async def test_the_cli_says_so_in_the_pages_three_words_and_exits_by_the_answer(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, test_db: ScratchDb,
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`telemetria verify` answers as /verificar does (issue 36): autêntico, ainda não selado (exit 3, not an
    alteration), alterado with the first differing row as the file shows it (local time, decimal comma), in
    Portuguese; a file that is no track export, or cannot be read, is said so in Portuguese (exit 2)."""
    t = await _register(conn, people.contractor_id, "SEL5A23", "seal-tamper-5")
    fixes = _fixes(10)
    await _post(client, t, fixes)
    await _seal(pool)
    good = tmp_path / "trajetoria.csv"
    good.write_bytes(await _export(client, people, t.vehicle_id))
    bad = tmp_path / "alterado.csv"
    bad.write_bytes(_retouch(good.read_bytes(), 5, "Latitude"))
    # A second vehicle's day posted after the sealing: its export verifies, but its day is not sealed yet.
    u = await _register(conn, people.contractor_id, "SEL5B23", "seal-tamper-5b")
    await _post(client, u, _fixes(4))
    fresh = tmp_path / "hoje.csv"
    fresh.write_bytes(await _export(client, people, u.vehicle_id))
    foreign = tmp_path / "outro.csv"
    foreign.write_bytes(b"Placa;Km\r\n")
    settings = test_db.settings()
    said = {}
    for path, status in ((good, 0), (bad, 1), (fresh, 3), (foreign, 2), (tmp_path / "nenhum.csv", 2)):
        with pytest.raises(SystemExit) as exited:
            # The command runs its own event loop: off this test's loop, as a terminal would.
            await _in_thread(cli_verify.cmd_verify, settings, path)
        said[path.name] = capsys.readouterr()
        assert exited.value.code == status, (path, said[path.name])

    good_out = said["trajetoria.csv"].out.splitlines()
    assert good_out[0] == "AUTÊNTICO: O arquivo confere com os selos: 1 dia verificado, nenhuma diferença."
    assert good_out[1] == f"  20/10/2026 SEL5A23 (veículo {t.vehicle_id}), versão 1 do selo, 10 linhas: autêntico"

    fresh_out = said["hoje.csv"].out.splitlines()
    assert fresh_out[0].startswith("AINDA NÃO SELADO: O dia ainda não foi selado") and "amanhã" in fresh_out[0]
    assert "As linhas conferem com os dados guardados hoje" in fresh_out[0]
    day_u = f"  20/10/2026 SEL5B23 (veículo {u.vehicle_id})"
    assert fresh_out[1].startswith(f"{day_u}, sem selo, 4 linhas: ainda não selado")

    bad_out = said["alterado.csv"].out.splitlines()
    day_t = f"  20/10/2026 SEL5A23 (veículo {t.vehicle_id})"
    assert bad_out[0].startswith("ALTERADO: 1 de 1 dia difere dos selos")
    assert bad_out[1].startswith(f"{day_t}, versão 1 do selo, 10 linhas: alterado")
    assert bad_out[2] == "    linha 5 do arquivo"
    sealed = fixes[3]  # row 5: the 4th position, 07:01:30 local
    line = canonical.line(datetime.fromisoformat(sealed["ts"]), sealed["lat"], sealed["lon"], sealed["speed_kmh"])
    expected = verify.shown(line)
    assert expected is not None and expected.startswith("20/10/2026 07:01:30; -10,")  # as the file shows it
    assert bad_out[3] == f"      esperado (selo):      {expected}"
    found = bad_out[4].removeprefix("      encontrado (arquivo): ")
    assert found.startswith("20/10/2026 07:01:30; -10,") and found != expected
    assert "Z;" not in said["alterado.csv"].out and "T07" not in said["alterado.csv"].out  # never the raw UTC line

    assert said["outro.csv"].err.startswith("telemetria: arquivo: não é um arquivo de trajetória exportado")
    assert said["nenhum.csv"].err.startswith("telemetria: arquivo: não foi possível ler")
    for out in said.values():
        assert "VÁLIDO" not in out.out and "not a track" not in out.err and "cannot read" not in out.err


async def _in_thread(cmd: Any, settings: Any, path: Path) -> None:
    import argparse
    import asyncio

    await asyncio.to_thread(cmd, settings, argparse.Namespace(file=path, json=False))


async def test_an_xlsx_export_verifies_and_a_changed_cell_is_found(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    import openpyxl

    t = await _register(conn, people.contractor_id, "SEL6A23", "seal-tamper-6")
    fixes = _fixes(12)
    await _post(client, t, fixes)
    await _seal(pool)
    [(_, sha)] = await _versions(conn, t.vehicle_id)
    book = await _export(client, people, t.vehicle_id, "xlsx")
    wb = openpyxl.load_workbook(io.BytesIO(book))
    assert wb.sheetnames[0] == "Consulta" and "Selos" in wb.sheetnames
    selos = list(wb["Selos"].iter_rows(values_only=True))
    assert selos[1][5] == sha and selos[1][3] == 1
    answer = await _verify(client, people, book)
    assert answer["valid"] is True and answer["days"][0]["rows"] == 12 and answer["days"][0]["sha256"] == sha

    data = wb.worksheets[1]
    head = [c.value for c in data[1]]
    col = head.index("Latitude") + 1
    cell = data.cell(row=7, column=col)  # the sixth position
    assert isinstance(cell.value, float)
    cell.value = cell.value + 1e-6  # one digit of the sixth decimal
    out = io.BytesIO()
    wb.save(out)
    answer = await _verify(client, people, out.getvalue())
    diff = answer["days"][0]["first_difference"]
    assert answer["valid"] is False and diff["row"] == 7
    ts = datetime.fromisoformat(fixes[5]["ts"])
    assert diff["expected"] == canonical.line(ts, fixes[5]["lat"], fixes[5]["lon"], fixes[5]["speed_kmh"]).strip()


async def test_a_file_cut_before_a_late_fix_was_sealed_verifies_against_the_version_its_rows_are(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    t = await _register(conn, people.contractor_id, "SEL7A23", "seal-tamper-7")
    await _post(client, t, _fixes(10))
    await _seal(pool)
    await _post(client, t, [_fix(datetime.combine(DAY, time(7), LOCAL_TZ) + timedelta(seconds=15), 50)])
    data = await _export(client, people, t.vehicle_id)  # the late fix is a row; the refresher has not sealed it
    assert _rows(data)[-1][4] == "1"  # so the file names version 1, whose lines it does not have
    answer = await _verify(client, people, data)
    [day] = answer["days"]
    # Verifying sealed the pending change first: the rows are version 2's, which is what the answer says.
    assert day["valid"] is True and day["version"] == 2 and day["first_difference"] is None
    assert "nomeia a versão 1" in day["reason"] and "conferem com a versão 2" in day["reason"]
    assert [v for v, _ in await _versions(conn, t.vehicle_id)] == [1, 2]


async def test_a_contractor_learns_nothing_of_another_contractors_vehicle(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    t = await _register(conn, people.other_contractor_id, "SEL8A23", "seal-tamper-8")
    await _post(client, t, _fixes(10))
    await _seal(pool)
    [(_, sha)] = await _versions(conn, t.vehicle_id)
    # A late fix the refresher has not sealed: verifying in scope would seal it (version 2), out of scope must not.
    await _post(client, t, [_fix(datetime.combine(DAY, time(7), LOCAL_TZ) + timedelta(seconds=15), 50)])
    data = await _export(client, people, t.vehicle_id)
    tampered = _retouch(data, 5, "Latitude")
    unknown = data.replace(f"\r\n{t.vehicle_id};".encode(), b"\r\n999999;").replace(
        f"selo;{t.vehicle_id};".encode(), b"selo;999999;"
    )  # the same file naming a vehicle that does not exist
    answers = [await _verify(client, people, body) for body in (data, tampered, unknown)]
    for answer in answers:
        [day] = answer["days"]
        assert answer["valid"] is False and day["valid"] is False and "não selado" in day["reason"]
        assert day["first_difference"] is None and day["sha256"] is None and day["version"] is None
        assert sha.encode() not in orjson.dumps(answer) and b"expected" not in orjson.dumps(answer)
    other, _, nobody = (a["days"][0] for a in answers)
    assert {**other, "vehicle_id": 999999} == nobody  # answered exactly as an unknown vehicle
    assert [v for v, _ in await _versions(conn, t.vehicle_id)] == [1]  # nothing sealed for the outsider

    # Its own contractor (and the staff) are answered in full: that verification seals the pending fix.
    # (The move dated the sealed day: a contractor is answered for the days it had the vehicle, issue 33.)
    async with conn.transaction():
        await conn.execute("SELECT set_config('telemetria.effective_from', $1, true)", DAY.isoformat())
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
    answer = await _verify(client, people, tampered)
    assert answer["days"][0]["first_difference"]["expected"] is not None and answer["days"][0]["sha256"]
    assert [v for v, _ in await _versions(conn, t.vehicle_id)] == [1, 2]


async def test_hostile_files_are_refused_naming_file_never_a_500(
    client: httpx.AsyncClient, people: People, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = "\ufeffVeículo (id);Placa;Data e hora ({zone});Latitude;Longitude;Velocidade (km/h)\r\n"
    good = "7;ABC1D23;20/10/2026 07:00:00;-10,437512;-62,466830;40,0\r\n"
    refused = [
        head.format(zone="America/Porto_Velho") + "9" * 5000 + ";X;20/10/2026 07:00:00;-10,4;-62,4;1,0\r\n",
        head.format(zone="Asia/Tokyo") + "7;X;01/01/0001 00:00:00;-10,4;-62,4;1,0\r\n",
        head.format(zone="America/Porto_Velho") + "7;X;31/12/9999 23:59:59;-10,4;-62,4;1,0\r\n",
        head.format(zone="America/Porto_Velho") + good + "\r\n" * 10,
    ]
    answered = [
        head.format(zone="America/Porto_Velho") + good + "9" * 5000 + ";X;20/10/2026 07:00:30;-10,4;-62,4;1,0\r\n",
        head.format(zone="America/Porto_Velho") + good.replace("7;", f"{2**31 + 5};", 1),  # no such vehicle id
        head.format(zone="Asia/Tokyo") + good + "7;X;01/01/0001 00:00:00;-10,4;-62,4;1,0\r\n",
    ]
    monkeypatch.setattr(verify, "MAX_ROWS", 8)  # the last refused file: ten records
    for body in refused:
        r = await client.post(
            "/api/v1/seals/verify", files={"file": ("t.csv", body.encode())}, headers=people.auth("monitor")
        )
        assert r.status_code == 400 and r.json()["field"] == "file", r.text
    for body in answered:
        answer = await _verify(client, people, body.encode(), role="monitor")
        assert answer["valid"] is False and "não selado" in answer["days"][0]["reason"]


async def test_the_answer_in_three_words(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    """Issue 36: autêntico (matches a seal); ainda não selado (no seal yet, the rows match the data stored now: try
    again tomorrow), not "não válido"; alterado (the first differing row, both sides as the file shows them)."""
    t = await _register(conn, people.contractor_id, "SEL9A23", "seal-words-9")
    fixes = _fixes(10)
    await _post(client, t, fixes)
    data = await _export(client, people, t.vehicle_id)  # the day not closed yet: no seal
    answer = await _verify(client, people, data)
    assert answer["verdict"] == "ainda_nao_selado" and answer["days"][0]["verdict"] == "ainda_nao_selado"
    assert "tente novamente amanhã" in answer["days"][0]["reason"]
    assert "conferem com os dados guardados hoje" in answer["days"][0]["reason"]
    # Not sealed, and a row changed: altered, not "not sealed yet".
    changed = await _verify(client, people, _retouch(data, 5, "Longitude"))
    assert changed["verdict"] == "alterado" and changed["days"][0]["first_difference"]["row"] == 5

    await _seal(pool)
    answer = await _verify(client, people, data)
    assert answer["verdict"] == "autentico" and answer["days"][0]["verdict"] == "autentico"
    answer = await _verify(client, people, _retouch(data, 5, "Latitude"))
    assert answer["verdict"] == "alterado"
    diff = answer["days"][0]["first_difference"]
    fix = fixes[3]  # row 5: the 4th position, at 07:01:30 local (11:01:30 UTC)
    assert diff["row"] == 5 and diff["expected"].startswith("2026-10-20T11:01:30Z;")
    lat, lon = (formats.number(fix[k], 6) for k in ("lat", "lon"))
    speed = "" if fix["speed_kmh"] is None else formats.number(fix["speed_kmh"], 1)
    assert diff["expected_shown"] == f"20/10/2026 07:01:30; {lat}; {lon}; {speed}"
    assert diff["found_shown"].startswith("20/10/2026 07:01:30; ") and diff["found_shown"] != diff["expected_shown"]
    assert "T" not in diff["expected_shown"] and "Z" not in diff["found_shown"]
