"""How a built report leaves: `Report` and its JSON stream (report.py), pt-BR CSV (csv.py), GeoJSON, GPX
and KML (gis.py). Everything streams in chunks, so an export of any size runs in bounded memory.

May import the model and the standard library; report.py wraps the streams in Starlette responses.
"""
