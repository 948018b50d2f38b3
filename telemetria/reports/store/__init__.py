"""The reports' I/O: the SQL (queries.py), the registry a report needs (context.py), one vehicle's fixes
and their analysis per piece of a window (fetch.py), and the rollups with their refresher (rollup.py).

Reads run on the reports pool (a replica when configured); the refresher writes through the main pool.
"""
