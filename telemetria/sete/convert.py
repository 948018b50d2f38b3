"""SETE's records to our registry's values (pure): EPSG:3857 shapes to WGS84 lines, schools to stops.

Each SETE item becomes an `Item`: the values the import compares and writes (`values`, JSON-comparable),
what only SETE knows and the import keeps beside them (`extra`: timetables, CNH number and validity), or
why it cannot be registered here (`skip`). Pupils' records are never read into an item; a route's shape
is taken without its points (SETE draws pupils' homes there).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Any

import orjson
from pydantic import ValidationError
from pyproj import Transformer

from telemetria.registry import schemas
from telemetria.registry.geocheck import RouteFileError, RouteGeometry, StopIn
from telemetria.registry.routefile import parse_route_file
from telemetria.registry.routes import exact_km

# SETE's vehicle types (frota-cadastrar-view.html, `tipoVeiculo`) onto ours; the rest is "outro".
VEHICLE_KINDS = {1: "onibus", 2: "micro-onibus", 3: "van", 4: "van"}  # 4: Kombi, a van
SHIFTS = (("turno_matutino", "matutino"), ("turno_vespertino", "vespertino"), ("turno_noturno", "noturno"))
TIMES = ("hora_ida_inicio", "hora_ida_termino", "hora_volta_inicio", "hora_volta_termino")


@dataclass
class Item:
    kind: str  # 'route' | 'vehicle' | 'driver'
    key: str  # SETE's id (a driver: a digest of the CPF, which is never written outside the drivers table)
    label: str
    values: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    skip: str | None = None
    row: dict[str, Any] = field(default_factory=dict)  # the registry row a new item is inserted as
    geo: RouteGeometry | None = None  # a route's line and stops, as `values` digests them


@cache
def _to_wgs84() -> Transformer:
    return Transformer.from_crs("EPSG:3857", "EPSG:4326", always_xy=True)


def mercator_to_lonlat(x: float, y: float) -> tuple[float, float]:
    """EPSG:3857 metres to (lon, lat) degrees."""
    lon, lat = _to_wgs84().transform(x, y)
    return float(lon), float(lat)


def route_line(shape_text: str) -> RouteGeometry:
    """A SETE shape (GeoJSON FeatureCollection text in EPSG:3857) as a checked WGS84 line; its points dropped.

    Several line features are read as one line when they join end to start, else the longest is taken.
    """
    try:
        doc = orjson.loads(shape_text)
    except orjson.JSONDecodeError as e:
        raise RouteFileError("shape", f"not GeoJSON text ({e})") from None
    feats = doc.get("features") if isinstance(doc, dict) else None
    if not isinstance(feats, list):
        feats = [doc]  # a bare geometry or Feature
    parts: list[list[list[float]]] = []
    for f in feats:
        geom = f.get("geometry") if isinstance(f, dict) and f.get("type") == "Feature" else f
        kind = geom.get("type") if isinstance(geom, dict) else None
        coords = geom.get("coordinates") if isinstance(geom, dict) else None
        if kind == "LineString":
            parts.append(_project(coords))
        elif kind == "MultiLineString" and isinstance(coords, list):
            parts.extend(_project(c) for c in coords)
    if not parts:
        raise RouteFileError("shape", "SETE's shape holds no line")
    try:
        return _parsed({"type": "MultiLineString", "coordinates": parts})
    except RouteFileError:
        if len(parts) == 1:
            raise
        longest = max(parts, key=lambda p: _parsed({"type": "LineString", "coordinates": p}).length_m)
        return _parsed({"type": "LineString", "coordinates": longest})


def _parsed(geometry: dict[str, Any]) -> RouteGeometry:
    return parse_route_file(orjson.dumps(geometry), "geojson")


def _project(coords: Any) -> list[list[float]]:
    if not isinstance(coords, list):
        raise RouteFileError("shape", "a line's coordinates are not an array")
    out = []
    for c in coords:
        if not (isinstance(c, list) and len(c) >= 2 and all(isinstance(v, int | float) for v in c[:2])):
            raise RouteFileError("shape", f"not an (x, y) position: {str(c)[:40]}")
        out.append(list(mercator_to_lonlat(float(c[0]), float(c[1]))))
    return out


def school_stop(raw: dict[str, Any]) -> StopIn | None:
    """A route's school as its `school` stop (positions in SETE are WGS84 degrees, as text); None without one."""
    try:
        lat, lon = float(raw["loc_latitude"]), float(raw["loc_longitude"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180) or (lat, lon) == (0.0, 0.0):
        return None
    name = str(raw.get("nome") or f"Escola {raw.get('id_escola')}").strip()[:150]
    if inep := raw.get("mec_co_entidade"):
        name = f"{name} (INEP {inep})"
    return StopIn(name=name, lat=lat, lon=lon, kind="school")


def route_item(raw: dict[str, Any], school_year: int) -> Item:
    rid = str(raw.get("id_rota"))
    name = str(raw.get("nome") or f"Rota {rid}").strip()
    item = Item("route", rid, name)
    shifts = [ours for key, ours in SHIFTS if str(raw.get(key, "")).upper() == "S"]
    item.extra = {
        "shifts": shifts,
        "timetable": {k: raw[k] for k in TIMES if raw.get(k)},
        "tempo_min": raw.get("tempo"),
        "schools": [
            {"id_escola": s.get("id_escola"), "inep": s.get("mec_co_entidade"), "nome": s.get("nome")}
            for s in raw.get("_escolas", [])
        ],
        "vehicles": [v.get("id_veiculo") for v in raw.get("_veiculos", []) if isinstance(v, dict)],
        "drivers": len(raw.get("_motoristas", [])),
    }
    if "_alunos" in raw:
        item.extra["pupils"] = raw["_alunos"]  # a count, asked for; never who they are
    km = raw.get("km")
    try:
        fields = schemas.RouteFields.model_validate({
            "code": f"SETE-{rid}", "name": name, "school_year": school_year,
            "shift": shifts[0] if len(shifts) == 1 else None,  # several: kept in extra.shifts, set by hand here
            "declared_km": float(km) if km not in (None, "", 0, "0") else None,
        })  # fmt: skip
    except (ValidationError, ValueError) as e:
        item.skip = f"route fields refused: {_first(e)}"
        return item
    if raw.get("_shape") is None:
        item.skip = "no shape in SETE: draw the route there (or import its file here)"
        return item
    try:
        line = route_line(raw["_shape"])
    except RouteFileError as e:
        item.skip = f"shape: {e}"
        return item
    stops = [s for s in (school_stop(x) for x in raw.get("_escolas", [])) if s is not None]
    item.geo = RouteGeometry(line.coords, line.length_m, stops, name)
    item.row = fields.model_dump(exclude={"effective_from"})
    item.values = {
        "code": fields.code, "name": fields.name, "shift": fields.shift,
        "declared_km": None if fields.declared_km is None else f"{exact_km(fields.declared_km):f}",
        "geometry": line_digest(line.coords), "stops": stops_digest(stops),
    }  # fmt: skip
    return item


def vehicle_item(raw: dict[str, Any]) -> Item:
    vid = str(raw.get("id_veiculo"))
    plate = str(raw.get("placa") or "")
    item = Item("vehicle", vid, plate or f"veículo {vid}")
    item.extra = {k: raw.get(k) for k in ("tipo", "origem", "modelo", "ano") if raw.get(k) is not None}
    try:
        kind = VEHICLE_KINDS.get(int(raw.get("tipo") or 0), "outro")
        capacity = int(raw["capacidade"]) if raw.get("capacidade") else None
        v = schemas.VehicleIn.model_validate({"plate": plate, "capacity": capacity, "kind": kind})
    except (ValidationError, ValueError) as e:
        item.skip = f"vehicle refused: {_first(e)}"
        return item
    item.label = v.plate
    item.values = {"plate": v.plate, "capacity": v.capacity, "kind": v.kind}
    item.row = v.model_dump(exclude={"effective_from"})
    return item


def driver_item(raw: dict[str, Any]) -> Item:
    cpf = "".join(ch for ch in str(raw.get("cpf") or "") if ch.isdigit())
    item = Item("driver", cpf_key(cpf), f"{str(raw.get('nome') or '').strip()} ({mask_cpf(cpf)})")
    validity = raw.get("data_validade_cnh")
    item.extra = {"cnh": raw.get("cnh"), "cnh_valid_until": validity}
    try:
        if validity and date.fromisoformat(str(validity)[:10]) < date.today():
            item.extra["cnh_expired"] = True
    except ValueError:
        item.extra["cnh_valid_until"] = None
    letters = "".join(c.upper() for c in "abcde" if str(raw.get(f"tem_cnh_{c}", "")).upper() == "S")
    category = "E" if "E" in letters else "D" if "D" in letters else letters
    if "A" in letters and category in ("D", "E"):
        category = "A" + category
    try:
        d = schemas.DriverIn(name=str(raw.get("nome") or ""), cpf=cpf, cnh_category=category or "-")
    except (ValidationError, ValueError) as e:
        item.skip = f"driver refused: {_first(e)}"
        return item
    item.values = {"name": d.name, "cnh_category": d.cnh_category}
    item.row = d.model_dump()  # the CPF goes into drivers.cpf only: never into the link or the report
    return item


def cpf_key(cpf: str) -> str:
    """The link's key for a driver: a digest, so the CPF is not copied into another table."""
    return hashlib.sha256(f"sete-cpf:{cpf}".encode()).hexdigest()[:32]


def mask_cpf(cpf: str) -> str:
    """As the registry masks it (registry/queries.py SELECT_DRIVERS): ***.456.789-**."""
    return f"***.{cpf[3:6]}.{cpf[6:9]}-**" if len(cpf) == 11 else "***"


def line_digest(coords: list[tuple[float, float]] | list[list[float]]) -> str:
    """A route line compared at 1e-6 degrees (~0.1 m): float noise is not a change."""
    rounded = [[round(float(x), 6), round(float(y), 6)] for x, y in coords]
    return hashlib.sha256(orjson.dumps(rounded)).hexdigest()[:24]


def stops_digest(stops: list[StopIn]) -> str:
    rows = [[s.name, round(s.lat, 6), round(s.lon, 6), s.kind] for s in stops]
    return hashlib.sha256(orjson.dumps(rows)).hexdigest()[:24]


def _first(e: Exception) -> str:
    if isinstance(e, ValidationError):
        err = e.errors()[0]
        return f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    return str(e)
