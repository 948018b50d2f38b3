-- The municipality's roads imported from OpenStreetMap (issue 20; telemetria/roads/store.py, docs/roads.md).
-- One row per import: the file's name and digest, the clip it was read with, its totals. The network in use is the
-- one row with current = true; an import inserts its network and ways, then flips `current` to it in the same
-- transaction, so a failed import leaves the previous network in use. Replaced networks keep their row (which
-- file, when, by whom: what reports computed before were based on) but lose their ways.
CREATE TABLE road_networks (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source      text NOT NULL,            -- the file's name as given to `telemetria roads import`
    sha256      text NOT NULL,            -- of the file's bytes
    bbox        float8[] CHECK (bbox IS NULL OR cardinality(bbox) = 4),  -- W, S, E, N the import was clipped to
    polygon     jsonb,                    -- or the GeoJSON geometry it was clipped to; both NULL: the whole file
    imported_at timestamptz NOT NULL DEFAULT now(),
    imported_by text NOT NULL,            -- the operating-system user who ran the import
    ways        int NOT NULL DEFAULT 0,
    km          float8 NOT NULL DEFAULT 0,  -- length of every way kept
    named_km    float8 NOT NULL DEFAULT 0,  -- of them, with a name or ref
    paved_km    float8 NOT NULL DEFAULT 0,  -- of them, paved (roads/model.py is_paved)
    current     boolean NOT NULL DEFAULT false,
    replaced_at timestamptz
);
-- At most one network in use: a second import racing the first fails on this rather than leaving two.
CREATE UNIQUE INDEX road_networks_one_current ON road_networks (current) WHERE current;

-- The ways of a network, as the matcher indexes them: idx 0..n-1 in file order. Vertices as parallel arrays (OSM
-- node ids shared between ways are where roads connect). Plain table, no hypertable: written once per import.
CREATE TABLE road_ways (
    network_id bigint NOT NULL REFERENCES road_networks (id) ON DELETE CASCADE,
    idx        int NOT NULL,
    osm_id     bigint NOT NULL,
    highway    text NOT NULL,
    name       text,
    ref        text,
    surface    text,
    oneway     boolean NOT NULL,          -- true: drivable only in the order of its vertices (oneway=-1 is reversed)
    paved      boolean NOT NULL,
    node_ids   bigint[] NOT NULL,
    lat        float8[] NOT NULL,
    lon        float8[] NOT NULL,
    min_lat    float8 NOT NULL,
    min_lon    float8 NOT NULL,
    max_lat    float8 NOT NULL,
    max_lon    float8 NOT NULL,
    length_m   float8 NOT NULL,
    PRIMARY KEY (network_id, idx),
    CHECK (cardinality(node_ids) >= 2 AND cardinality(lat) = cardinality(node_ids)
           AND cardinality(lon) = cardinality(node_ids))
);
-- The ways near a stretch of fixes (load_ways with a bbox): a range on longitude narrows a municipality's ways to a
-- band; latitude is checked on those rows. A GiST box index would need PostGIS or a cube type; this needs nothing.
CREATE INDEX road_ways_bbox ON road_ways (network_id, min_lon, max_lon, min_lat, max_lat);
