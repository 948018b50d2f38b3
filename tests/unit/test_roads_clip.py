"""The --bbox and --polygon options of `telemetria roads import`: what is accepted and what is refused, in words."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from telemetria.roads.clip import Clip, load_polygon, parse_bbox
from telemetria.roads.errors import RoadsError


def test_a_bbox_is_parsed() -> None:
    assert parse_bbox("-62.9,-10.8,-62.0,-10.0") == (-62.9, -10.8, -62.0, -10.0)
    assert parse_bbox(" -62.9 , -10.8, -62 , -10 ") == (-62.9, -10.8, -62.0, -10.0)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("-62.9,-10.8,-62.0", "is not four numbers W,S,E,N"),
        ("-62.9,-10.8,-62.0,-10.0,1", "is not four numbers"),
        ("a,b,c,d", "is not four numbers"),
        ("", "is not four numbers"),
        ("-62.0,-10.8,-62.9,-10.0", "west (-62) must be less than east (-62.9)"),
        ("-62.9,-10.0,-62.0,-10.8", "south (-10) must be less than north (-10.8)"),
        ("-62.9,-10.8,-62.9,-10.0", "west (-62.9) must be less than east (-62.9)"),
        ("-190,-10.8,-62.0,-10.0", "longitudes W and E must lie within -180..180"),
        ("-62.9,-95,-62.0,-10.0", "latitudes S and N must lie within -90..90"),
        ("-62.9,nan,-62.0,-10.0", "not a finite number"),
        ("-62.9,-10.8,inf,-10.0", "not a finite number"),
    ],
)
def test_a_malformed_bbox_is_refused(text: str, said: str) -> None:
    with pytest.raises(RoadsError) as e:
        parse_bbox(text)
    assert said in str(e.value) and repr(text) in str(e.value)


def test_clip_keeps_a_way_with_any_vertex_inside() -> None:
    clip = Clip(bbox=(-62.5, -10.5, -62.4, -10.4))
    assert clip.keeps((-10.6, -10.45), (-62.45, -62.45))  # second vertex inside
    assert not clip.keeps((-10.6, -10.6), (-62.45, -62.3))
    assert Clip().keeps((0.0, 1.0), (0.0, 1.0))


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"not json", "is not GeoJSON"),
        (orjson.dumps({"type": "Point", "coordinates": [-62.4, -10.4]}), "holds no GeoJSON Polygon or MultiPolygon"),
        (orjson.dumps({"type": "FeatureCollection", "features": []}), "holds 0 features"),
        (orjson.dumps({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 0], [0, 0]]]}), "encloses no area"),
        (orjson.dumps({"type": "Polygon", "coordinates": [[[0, 0], [1]]]}), "is malformed"),
        (orjson.dumps({"type": "Polygon", "coordinates": [[[0, 0], [200, 0], [200, 1], [0, 0]]]}), "outside longitude"),
    ],
)
def test_a_bad_polygon_file_is_refused(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "jaru.geojson"
    path.write_bytes(content)
    with pytest.raises(RoadsError) as e:
        load_polygon(path)
    assert said in str(e.value) and str(path) in str(e.value)


def test_a_missing_polygon_file(tmp_path: Path) -> None:
    with pytest.raises(RoadsError, match="does not exist"):
        load_polygon(tmp_path / "nowhere.geojson")
