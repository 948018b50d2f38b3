"""Reports: figures derived from the fixes by fix time, for screens (JSON), auditors (CSV) and GIS tools.

    api.py       HTTP edge: the routes `GET /api/v1/reports/<kind>`, exports audited, ReportError → 404
    request.py   HTTP edge: the query parameters every report takes (window, zone, vehicles, knobs)
    model.py     value types: Window, Selection, Vehicle, Route, Point, Assignment, SpeedZone, Context, ReportError
    knobs.py     ReportParams: the knobs of every derivation, and their defaults
    analysis/    pure: fixes → facts (cleaning, distance, stops, trips, episodes, limits, places, schedule runs)
    kinds/       one module per report kind: km, summary, events (speeding, stops, trips, route-deviation),
                 track, reporting, schedule
    output/      how a built report leaves: JSON, pt-BR CSV, GeoJSON/GPX/KML
    store/       I/O: SQL (queries.py), loading the registry (context.py), fixes (fetch.py), rollups (rollup.py)

Dependencies point one way: api → kinds → store → analysis → model, knobs; output is used by kinds and api.
analysis/, model.py and knobs.py import no I/O, no HTTP and no settings (tests/unit/test_reports_layers.py).
"""
