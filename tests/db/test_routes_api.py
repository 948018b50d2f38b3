"""Routes from JSON and from GeoJSON/GPX/KML uploads, their stops and assignments, and speed zones."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.db.conftest import People
from tests.db.world import LINE, ZONE

ROUTES = Path(__file__).parent.parent / "payloads" / "routes"
TRACED_M = 5435.5  # the sample route, measured geodesically once and checked against a haversine estimate


@pytest.mark.parametrize(
    ("name", "points", "stops"),
    [
        ("collection_line_stops.geojson", 35, 5),
        ("feature_linestring.geojson", 35, 0),
        ("track_segments.gpx", 35, 4),
        ("route_rte_gpx10.gpx", 6, 0),
        ("document_folder_ns.kml", 35, 3),
        ("no_namespace.kml", 35, 2),
    ],
)
async def test_import_a_route_file(
    client: httpx.AsyncClient, people: People, name: str, points: int, stops: int
) -> None:
    body = (ROUTES / name).read_bytes()
    r = await client.post(
        "/api/v1/routes",
        files={"file": (name, body)},
        data={"code": "623", "school_year": "2026", "shift": "matutino", "declared_km": "5.6"},
        headers=people.auth("monitor"),
    )
    assert r.status_code == 201, r.text
    route = r.json()
    assert len(route["geometry"]["coordinates"]) == points
    assert len(route["stops"]) == stops == route["stops_count"]
    assert route["length_m"] == pytest.approx(TRACED_M, abs=0.5)
    assert route["declared_vs_traced_pct"] == pytest.approx(100 * (5600 - TRACED_M) / TRACED_M, abs=0.01)
    assert route["name"] and route["speed_limit_kmh"] == 60 and route["deviation_tolerance_m"] == 100
    again = await client.get(f"/api/v1/routes/{route['id']}", headers=people.auth("auditor"))
    assert again.json() == route


@pytest.mark.parametrize(
    ("name", "field", "words"),
    [
        ("bad_one_point.gpx", "geometry", "at least 2"),
        ("bad_out_of_range.geojson", "coordinates[3].lat", "outside"),
        ("bad_swapped.geojson", "coordinates[0]", "swapped"),
        ("bad_not_xml.gpx", "file", "XML"),
        ("bad_billion_laughs.kml", "file", "entity"),
        ("bad_empty.gpx", "file", "empty"),
        ("bad_polygon.geojson", "geometry", "Polygon"),
    ],
)
async def test_bad_route_files_are_refused_naming_the_problem(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection, name: str, field: str, words: str
) -> None:
    r = await client.post(
        "/api/v1/routes",
        files={"file": (name, (ROUTES / name).read_bytes())},
        data={"code": "X1"},
        headers=people.auth("monitor"),
    )
    assert r.status_code == 400, r.text
    assert r.json()["field"] == field and words in r.json()["detail"]
    assert await conn.fetchval("SELECT count(*) FROM routes") == 0


async def test_upload_without_a_file_or_with_a_wrong_content_type(client: httpx.AsyncClient, people: People) -> None:
    h = people.auth("monitor")
    r = await client.post("/api/v1/routes", files={"other": ("a.txt", b"x")}, data={"code": "X"}, headers=h)
    assert r.status_code == 400 and r.json()["field"] == "file"
    r = await client.post("/api/v1/routes", content=b"<gpx/>", headers={**h, "Content-Type": "text/plain"})
    assert r.status_code == 415
    r = await client.post("/api/v1/routes", content=b"{not json", headers={**h, "Content-Type": "application/json"})
    assert r.status_code == 422


async def test_route_from_json_with_stops(client: httpx.AsyncClient, people: People) -> None:
    h = people.auth("monitor")
    body = {
        "code": "101", "name": "Linha 101 - Setor Rural", "speed_limit_kmh": 50, "geometry": LINE,
        "stops": [
            {"name": "Garagem", "lat": -10.44, "lon": -62.47, "kind": "garage", "scheduled_time": "06:00"},
            {"name": "Escola Municipal", "lat": -10.435, "lon": -62.465, "kind": "school", "scheduled_time": "06:40"},
        ],
    }  # fmt: skip
    r = await client.post("/api/v1/routes", json=body, headers=h)
    assert r.status_code == 201, r.text
    route = r.json()
    assert route["speed_limit_kmh"] == 50 and route["length_m"] == pytest.approx(1100, rel=0.01)
    assert [(s["seq"], s["kind"], s["scheduled_time"]) for s in route["stops"]] == [
        (1, "garage", "06:00:00"),
        (2, "school", "06:40:00"),
    ]
    dup = await client.post("/api/v1/routes", json=body, headers=h)
    assert dup.status_code == 409 and dup.json()["field"] == "code"
    # Replacing the stops keeps the line.
    stops = {"stops": [{"name": "Ponto 1", "lat": -10.4401, "lon": -62.468}]}
    r = await client.put(f"/api/v1/routes/{route['id']}/stops", json=stops, headers=h)
    assert [s["name"] for s in r.json()["stops"]] == ["Ponto 1"] and r.json()["geometry"] == route["geometry"]
    far = {"stops": [{"name": "Lisboa", "lat": 38.7, "lon": -9.1}]}
    r = await client.put(f"/api/v1/routes/{route['id']}/stops", json=far, headers=h)
    assert r.status_code == 400 and r.json()["field"].startswith("stops[0]")


@pytest.mark.parametrize(
    ("geometry", "field"),
    [
        ({"type": "LineString", "coordinates": [[-62.47, -10.44]]}, "geometry"),
        ({"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.47, 91]]}, "coordinates[1].lat"),
        ({"type": "LineString", "coordinates": [[-62.47, -10.44], [-61.0, -10.44]]}, "coordinates"),
        ({"type": "LineString", "coordinates": "garbage"}, "coordinates"),
        ({"type": "Point", "coordinates": [-62.47, -10.44]}, "geometry"),
    ],
)
async def test_route_geometry_is_checked(
    client: httpx.AsyncClient, people: People, geometry: dict[str, object], field: str
) -> None:
    r = await client.post(
        "/api/v1/routes", json={"code": "B", "name": "B", "geometry": geometry}, headers=people.auth("admin")
    )
    assert r.status_code == 400, r.text
    assert r.json()["field"].startswith(field), r.json()


async def test_route_assignments_by_weekday(client: httpx.AsyncClient, people: People) -> None:
    h = people.auth("monitor")
    v = (await client.post("/api/v1/vehicles", json={"plate": "RTE1A23"}, headers=h)).json()
    route = (
        await client.post("/api/v1/routes", json={"code": "9", "name": "Nove", "geometry": LINE}, headers=h)
    ).json()
    body = {"route_id": route["id"], "vehicle_id": v["id"], "valid_from": "2026-02-02", "valid_to": "2026-12-18",
            "weekdays": [1, 3, 5]}  # fmt: skip
    r = await client.post("/api/v1/route-assignments", json=body, headers=h)
    assert r.status_code == 201 and r.json()["weekdays"] == [1, 3, 5]

    async def on(day: str) -> int:
        return int((await client.get(f"/api/v1/route-assignments?on={day}", headers=h)).json()["total"])

    assert (await on("2026-03-02"), await on("2026-03-03"), await on("2027-03-01")) == (1, 0, 0)  # Mon, Tue, next year
    deleted = await client.delete(f"/api/v1/route-assignments/{r.json()['id']}", headers=h)
    assert deleted.status_code == 200 and await on("2026-03-02") == 0


async def test_speed_zones(client: httpx.AsyncClient, people: People) -> None:
    h = people.auth("monitor")
    r = await client.post(
        "/api/v1/speed-zones", json={"name": "Escola Jaru", "limit_kmh": 30, "geometry": ZONE}, headers=h
    )
    assert r.status_code == 201 and r.json()["geometry"]["type"] == "Polygon"
    bow = {"type": "Polygon", "coordinates": [[[-62.47, -10.44], [-62.46, -10.43], [-62.46, -10.44], [-62.47, -10.43],
                                               [-62.47, -10.44]]]}  # fmt: skip
    bad = await client.post("/api/v1/speed-zones", json={"name": "Laço", "limit_kmh": 30, "geometry": bow}, headers=h)
    assert bad.status_code == 400 and bad.json()["field"] == "geometry" and "elf-intersection" in bad.json()["detail"]
    off = await client.patch(f"/api/v1/speed-zones/{r.json()['id']}", json={"active": False}, headers=h)
    assert off.json()["active"] is False
    assert (await client.get("/api/v1/speed-zones?active=true", headers=h)).json()["total"] == 0
