"""glibc's allocator told to give large blocks back to the system when they are freed (issue 33, bench.soak).

glibc serves a block of 128 KiB or more with a mapping of its own, unmapped when freed, until the first such block
is freed: from then on its threshold follows the largest block freed (up to 32 MiB), and blocks below it come from
the heap, where freed memory stays resident behind whatever was allocated after it. A service that reads request
bodies of a few hundred kB (a batch of 1,000 fixes is ~100 kB) at a few hundred a second therefore grew its
resident memory by the high-water mark of its bodies in flight, again and again: in bench.soak the service's
process went 263 → 379 MiB in ten minutes with its Python heap flat (tracemalloc: 111 → 115 MiB), and the
detectors 499 → 886 MiB. With the threshold fixed at 128 KiB (which also stops it moving) they went 241 → 300
and 554 → 705 MiB. The cost is a mmap and a munmap per large block, microseconds against the work a body carries.

Set once per process, at its start: the service's (app.build) and each detector's (detection.detector.main). The
operator's MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES naming mmap_threshold wins (glibc has then read it); elsewhere
than glibc (musl, macOS) nothing is done. The job queue's worker processes (jobs.py), which read uploads and
documents of megabytes, set it too.
"""

from __future__ import annotations

import ctypes
import os

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
THRESHOLD = 128 * 1024  # glibc's default first threshold, kept fixed


def give_back_large_blocks(threshold: int = THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes; whether it was set."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "mmap_threshold" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
