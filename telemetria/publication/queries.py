"""All SQL of the public area: the school year in force, the routes in force, route names."""

from __future__ import annotations

# The school year in force on $1: the latest to have begun (between two years, the one just ended).
YEAR_IN_FORCE = """
SELECT year, start_date, end_date FROM school_years WHERE start_date <= $1 ORDER BY start_date DESC LIMIT 1"""

# The active routes of school year $2 as their registry versions in force on local day $1 stand (0011).
ROUTES_IN_FORCE = """
SELECT v.item_id AS route_id, v.data
FROM registry_versions_in_force v
WHERE v.kind = 'route' AND v.data IS NOT NULL AND v.during @> $1::date
  AND (v.data ->> 'school_year')::int = $2 AND coalesce((v.data ->> 'active')::boolean, true)
ORDER BY v.data ->> 'code', v.item_id"""

ROUTE_NAMES = "SELECT id, name FROM routes WHERE id = ANY ($1::int[])"

# What the itineraries are computed from, as one cheap lookup: the registry generation (bumped by every edit of
# routes, stops and assignments, 0007) and the school years' dates; with the year in force on $1 (NULL: none).
# A revalidation (If-None-Match) costs this.
DATA_VERSION = """
SELECT g.n, coalesce((SELECT md5(string_agg(y.year || ':' || y.start_date || ':' || y.end_date, ',' ORDER BY y.year))
                      FROM school_years y), '') AS years,
       (SELECT y.year FROM school_years y WHERE y.start_date <= $1 ORDER BY y.start_date DESC LIMIT 1) AS year
FROM report_generation g"""
