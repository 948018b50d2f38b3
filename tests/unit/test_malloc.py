"""telemetria/malloc.py: freed large blocks leave the process's resident memory (a fresh interpreter each, since
the setting is the process's)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from telemetria import malloc

PROBE = """
import ctypes, os, sys
from telemetria import malloc
if sys.argv[1] == "set":
    assert malloc.give_back_large_blocks()
def rss_mib():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
first = bytearray(8 << 20)  # an 8 MiB block freed: glibc's threshold would follow it up to 8 MiB
del first
before = rss_mib()
bodies = [bytearray(1 << 20) for _ in range(64)]  # 64 MiB of 1 MiB blocks, as request bodies in flight
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
later = libc.malloc(300 * 1024)  # something allocated after them and still alive
ctypes.memset(later, 1, 300 * 1024)
del bodies
print(rss_mib() - before)
"""


def _retained_mib(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", PROBE, mode], check=True, capture_output=True, text=True, env=env)
    return int(out.stdout.strip())


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator")
def test_freed_bodies_leave_the_resident_memory_once_the_threshold_is_fixed() -> None:
    assert _retained_mib("default") >= 48  # glibc's moving threshold: the 64 MiB freed stay resident
    assert _retained_mib("set") <= 8


def test_the_operators_own_threshold_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert malloc.give_back_large_blocks() is False
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=65536")
    assert malloc.give_back_large_blocks() is False
