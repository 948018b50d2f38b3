"""The detector process's lower priority holds across sessions (detector._lower_priority), in a child process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import os
from telemetria.occurrences.detection.detector import _lower_priority
before = os.nice(0)
_lower_priority(7)
try:
    group = open("/proc/self/autogroup").read().split()[-1]
except FileNotFoundError:
    group = "none"  # a kernel without autogroups: the plain nice is what counts
print(os.nice(0) - before, os.getsid(0) == os.getpid(), group)
"""


def test_it_is_niced_and_so_is_its_own_autogroup() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split()
    # Its own nice, a session (and so an autogroup) of its own, and that group's nice: the service's other
    # processes and the database's are in other groups, which a plain nice value would not weigh against.
    assert out == ["7", "True", "7" if Path("/proc/self/autogroup").exists() else "none"]
