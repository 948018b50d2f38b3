-- The named places of an imported extract (issue 20: "each fix's road and the locality"): OSM nodes tagged
-- place=city|town|village|hamlet|suburb|... with a name, clipped as the ways were. Reports say a road, a trip's
-- start or a stop is near the nearest within 5 km (telemetria/roads/steps.py). They belong to their network and
-- go with its ways when it is superseded.
CREATE TABLE road_localities (
    network_id bigint NOT NULL REFERENCES road_networks (id) ON DELETE CASCADE,
    idx        integer NOT NULL,           -- the order of the file
    osm_id     bigint NOT NULL,
    kind       text NOT NULL,              -- the place=* value
    name       text NOT NULL CHECK (btrim(name) <> ''),
    lat        float8 NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon        float8 NOT NULL CHECK (lon BETWEEN -180 AND 180),
    PRIMARY KEY (network_id, idx)
);
ALTER TABLE road_networks ADD COLUMN localities integer NOT NULL DEFAULT 0;
