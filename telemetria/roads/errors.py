"""The roads domain's one error: what went wrong with an OSM file or an import, in plain words naming the file."""

from __future__ import annotations


class RoadsError(ValueError):
    """An OSM file that cannot be read or holds no roads, a malformed --bbox or --polygon, an empty import.

    The command line prints the message as it is (`telemetria: <message>`) and exits 1; the network in use stays.
    """
