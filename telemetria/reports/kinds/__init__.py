"""One module per report kind: the rows, the CSV columns and the footer of `GET /api/v1/reports/<kind>`.

    km.py         km           km per vehicle (or per day) and the group total
    summary.py    summary      per vehicle: km, driving time, trips, speeds, alert counts, drivers
    events.py     speeding, stops, trips, route-deviation: the episodes of each vehicle
    track.py      track        every position, the places passed, totals (and the drawing for GIS files)
    reporting.py  reporting    per vehicle and day: did the tracker report every 30 s
    schedule.py   schedule     each route run against its schedule

Each builds an output.report.Report from (conn, ctx, win, params). Kinds read through store/ (rollups,
fixes, drivers) and derive through analysis/; they see no HTTP request and raise no HTTP error.
"""
