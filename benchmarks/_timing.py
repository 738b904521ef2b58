"""Timing helper shared by the benchmark scripts: best wall time of several runs."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(fn: Callable[[], object], reps: int = 7) -> float:
    """The fastest of `reps` runs of `fn`, in seconds (the least disturbed by other work)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
