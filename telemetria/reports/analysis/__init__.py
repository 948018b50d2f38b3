"""The pure analysis: one vehicle's fixes (a `Track`) and the day's registry → every derived fact.

    track.py     the fixes as arrays in fix-time order
    clean.py     which fixes may be used, which stand still
    distance.py  distance per segment: along the route, else the chord
    stops.py     stops, trips, authorized points, time on board
    episodes.py  speeding (CTB Art. 218) and route deviation (Art. 26)
    limits.py    the speed limit that applies at each fix
    engine.py    the pipeline in order: `analyze` → `Analysis`
    places.py    where a fix was, in words
    events.py    each event kind's rows of an analysis, neutral (as rollups keep them)
    facts.py     the additive figures of an analysis (km, counts) that km, summary and rollups add up
    schedule.py  route runs: points served, passed or skipped against the schedule
    runs.py      a route's runs of a day (window, stretch of the line) and the coverage an analysis shows
    days.py      a window cut into local days

May import: the standard library, numpy/shapely/pyproj, telemetria.geo, telemetria.fix, telemetria.localtime,
reports.model and reports.knobs. Never I/O (asyncpg, telemetria.db, store/), HTTP (fastapi, starlette,
telemetria.http) or settings: tests/unit/test_reports_layers.py fails if it does, transitively.
"""
