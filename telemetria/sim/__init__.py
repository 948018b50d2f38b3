"""A deterministic fleet simulator: rural grid routes near Jaru, 1 Hz ground truth, tracker uploads, HTTP runner."""

from telemetria.sim.motion import MotionParams, drive
from telemetria.sim.outbox import Backoff, Outbox, Outcome, TrackerBuffer, classify, parse_retry_after
from telemetria.sim.roads import JARU, Grid, Route, RouteStop, make_grid, make_route
from telemetria.sim.runner import FleetStats, SimClock, run_fleet
from telemetria.sim.tracker import TrackerLog, TrackerParams, Upload, track
from telemetria.sim.truth import Detour, Episode, Stop, Truth, off_route_runs, speeding_episodes, stationary_runs
from telemetria.sim.vehicle import SimRun, simulate_vehicle, vehicle_route

__all__ = [
    "JARU",
    "Backoff",
    "Detour",
    "Episode",
    "FleetStats",
    "Grid",
    "MotionParams",
    "Outbox",
    "Outcome",
    "Route",
    "RouteStop",
    "SimClock",
    "SimRun",
    "Stop",
    "TrackerBuffer",
    "TrackerLog",
    "TrackerParams",
    "Truth",
    "Upload",
    "classify",
    "drive",
    "make_grid",
    "make_route",
    "off_route_runs",
    "parse_retry_after",
    "run_fleet",
    "simulate_vehicle",
    "speeding_episodes",
    "stationary_runs",
    "track",
    "vehicle_route",
]
