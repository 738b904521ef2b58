"""Timing helpers shared by the benchmark scripts: the best or the median wall time of several runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def _times(fn: Callable[[], object], reps: int) -> list[float]:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def best(fn: Callable[[], object], reps: int = 7) -> float:
    """The fastest of `reps` runs of `fn`, in seconds (the least disturbed by other work)."""
    return min(_times(fn, reps))


def median(fn: Callable[[], object], reps: int) -> float:
    """The median of `reps` runs of `fn`, in seconds."""
    return statistics.median(_times(fn, reps))
