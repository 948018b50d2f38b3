"""`telemetria simulate-osm` and `telemetria roads import|status` as an operator runs them, as real processes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from tests.e2e.conftest import cli


@pytest.fixture
def no_roads(db_env: dict[str, str]) -> Iterator[None]:
    """No network before the test, and none left after it: other tests of the run expect the service without roads."""

    async def truncate() -> None:
        conn = await asyncpg.connect(db_env["TELEMETRIA_DATABASE_URL"])
        try:
            await conn.execute("TRUNCATE road_networks, road_ways RESTART IDENTITY CASCADE")
        finally:
            await conn.close()

    asyncio.run(truncate())
    yield
    asyncio.run(truncate())


def test_import_the_simulated_roads_and_refuse_bad_files(
    db_env: dict[str, str], no_roads: None, tmp_path: Path
) -> None:
    env = db_env
    none = json.loads(cli(env, "roads", "status").stdout)
    assert none["network"] is None and "no road network imported" in none["message"]
    pbf = tmp_path / "jaru.osm.pbf"
    wrote = json.loads(cli(env, "simulate-osm", "--out", str(pbf), "--seed", "4").stdout)
    assert wrote["ways"] == 1200 and pbf.stat().st_size > 1000

    proc = cli(env, "roads", "import", str(pbf), "--progress-every", "500")
    loaded = json.loads(proc.stdout)
    assert loaded["ways"] == 1200 and loaded["source"] == pbf.name and len(loaded["sha256"]) == 64
    assert loaded["km"] > 4000 and loaded["named_km"] == loaded["km"]  # every simulated road has a name or ref
    assert 0 < loaded["paved_km"] < loaded["km"]
    assert abs(loaded["paved_km"] + loaded["unpaved_km"] - loaded["km"]) < 0.002
    assert "roads: 500 highway ways scanned, 499 drivable" in proc.stderr
    assert (
        "roads: 500 of 1200 roads read, 499 kept" in proc.stderr
        and "roads: 1200 of 1200 roads read, 1200 kept" in proc.stderr
    )
    status = json.loads(cli(env, "roads", "status").stdout)
    assert status["network"] == loaded

    # as an operator types it, without `=`: the leading minus sign does not make it an option
    box = json.loads(cli(env, "roads", "import", str(pbf), "--bbox", "-62.50,-10.47,-62.44,-10.40").stdout)
    assert box["id"] > loaded["id"] and 0 < box["ways"] < 50 and box["bbox"] == [-62.50, -10.47, -62.44, -10.40]

    png = tmp_path / "map.osm.pbf"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    garbage = tmp_path / "garbage.osm"
    garbage.write_bytes(bytes(range(256)) * 8)
    empty = tmp_path / "empty.osm.pbf"
    empty.write_bytes(b"")
    cut = tmp_path / "cut.osm.pbf"
    cut.write_bytes(pbf.read_bytes()[: pbf.stat().st_size // 2])
    refusals = [
        ([str(png)], "is not an OpenStreetMap file (.osm.pbf or .osm XML): it looks like a PNG image"),
        ([str(garbage)], "is not an OpenStreetMap file"),
        ([str(empty)], "is empty (0 bytes)"),
        ([str(cut)], "is damaged or truncated"),
        ([str(tmp_path / "nowhere.osm.pbf")], "does not exist"),
        ([str(pbf), "--bbox=-60.5,-10.5,-60.4,-10.4"], "no road of"),
        ([str(pbf), "--bbox=-62,-10,-63,-11"], "west (-62) must be less than east (-63)"),
        ([str(pbf), "--bbox", "-62.5,-10.5"], "is not four numbers W,S,E,N"),
        ([str(pbf), "--polygon", str(png)], "is not GeoJSON"),
    ]
    for args, said in refusals:
        proc = cli(env, "roads", "import", *args, check=False)
        assert proc.returncode == 1, (args, proc.stderr)
        assert proc.stderr.strip().splitlines()[-1].startswith("telemetria: ") and said in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
        assert json.loads(cli(env, "roads", "status").stdout)["network"] == box  # the network in use is kept
