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
import time
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


# A kernel file whose module does a fixed amount of Python work when it runs (`work_kernel`): what the
# benches time under load beside the example kernels, a compile that is CPU-bound by construction.
WORK = """import pypto

N = {n}  # a fixed amount of Python work when the module runs: about {seconds:g} s of CPU on an idle core
s = 0
for i in range(N):
    s += i


@pypto.jit
def work(x: pypto.Tensor([64, 128], pypto.DT_FP32), out: pypto.Tensor([64, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    # edit
    out[:] = pypto.exp(x)
"""
WORK_SECONDS = 2.0


def calibrate(seconds: float) -> int:
    """Loop iterations of WORK's module code that take `seconds` of CPU here (measured now, idle)."""
    n = 2_000_000
    code = compile("s = 0\nfor i in range(N):\n    s += i\n", "<work>", "exec")
    t0 = time.process_time()
    exec(code, {"N": n})
    return int(n * seconds / max(1e-6, time.process_time() - t0))
