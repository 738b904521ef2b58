"""A loaded machine for the benchmarks' `--load N`: N busy-loop processes beside the measurement.

Each is a plain Python `while` loop in its own process at normal priority (what a compile or a
second test suite beside the IDE looks like to the scheduler). They are killed when the
measurement ends (`busy_loops` is a context manager: killed in its `finally`), and each also
stops by itself after `seconds` (a benchmark killed by a signal leaves no loop spinning for long).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

_LOOP = ("import time\n"
         "end = time.monotonic() + {seconds}\n"
         "while time.monotonic() < end:\n"
         "    for _ in range(100000):\n"
         "        pass\n")


@contextlib.contextmanager
def busy_loops(n: int, seconds: float = 1800.0) -> Iterator[list[int]]:
    """Start `n` CPU-bound processes for the duration of the block; their pids."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(max(0, n)):
            procs.append(subprocess.Popen([sys.executable, "-c", _LOOP.format(seconds=float(seconds))],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def loadavg() -> str:
    """The 1-minute load average (what `uptime` shows first), or '?' where /proc has none."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def cores() -> int:
    return os.cpu_count() or 1
