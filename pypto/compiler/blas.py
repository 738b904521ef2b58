"""BLAS at one thread while the tiled executor runs matmul tiles: same bytes on every machine, and fast.

numpy's matmul calls OpenBLAS, which splits one call over its own threads, and how it splits
it changes the result's bits (measured: a 256 x 2048 x 256 tile at 1 and 2 threads differs).
So a tile's bytes used to depend on the machine's CPU count, and on a loaded machine a
call's threads wait for one another: 64 calls of a 2048³ matmul at 256 x 256 tiles took
2.2-4.3 s at 2 threads and 0.37-0.44 s at one (2 cores, load ~7). The executor therefore
computes every matmul tile at one BLAS thread, and runs a wave's tiles side by side on its
own threads instead (the cpu board: on its workers) — each call then does what it does on
any machine, and the cores are used by independent tiles rather than by one tile's parts.

OpenBLAS's thread count is process-wide (`openblas_set_num_threads_local` is too, in the
pthreads build numpy ships), so `one_blas_thread()` is a counted scope: the first holder sets
one thread and the last one out restores the count it found. While any holder is inside, a
BLAS call from another thread of the process also runs at one thread (its values are valid
fp32 results, but may differ in the last bits from a run outside the scope). Without OpenBLAS
(another BLAS, or a library that does not export its thread setters) the scope does nothing:
values then depend on that BLAS's threading, as they did before. `PYPTO_BLAS_ONE_THREAD=0`
turns the scope off (BLAS keeps its own count: the values of before, for comparison).
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

_LOCK = threading.Lock()
_holders = 0
_saved = 0
_found: tuple[Callable[[], int], Callable[[int], None]] | None = None
_looked = False
_era = 0  # bumped in a forked child: scopes entered before the fork do not count there

# the exported names of OpenBLAS's getter and setter: scipy-openblas (numpy's wheels), and plain
# OpenBLAS built with 64-bit or 32-bit integers
_NAMES = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
          ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
          ("openblas_get_num_threads", "openblas_set_num_threads"))


def _libraries() -> list[str]:
    """Paths of the OpenBLAS libraries this process has loaded (numpy's first), else those numpy ships."""
    np.dot(np.ones((2, 2)), np.ones((2, 2)))  # numpy's BLAS is loaded by now
    found: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if "openblas" in os.path.basename(path).lower() and path not in found and os.path.exists(path):
                    found.append(path)
    except OSError:
        pass
    if not found:  # not Linux: the library numpy's wheel ships next to it
        here = os.path.dirname(os.path.dirname(np.__file__))
        for pattern in ("numpy.libs/*openblas*", "numpy/.dylibs/*openblas*", "scipy_openblas*/lib/*openblas*"):
            found += sorted(glob.glob(os.path.join(here, pattern)))
    return sorted(found, key=lambda p: "numpy" not in p)  # numpy's own before another's (scipy ships one too)


def _setters() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """OpenBLAS's thread count getter and setter (looked up once), or None."""
    global _found, _looked
    if not _looked:
        _looked = True
        if os.environ.get("PYPTO_BLAS_ONE_THREAD", "1") != "0":
            for path in _libraries():
                try:
                    lib = ctypes.CDLL(path)  # the loaded library itself: dlopen of a loaded path returns it
                except OSError:
                    continue
                for get_name, set_name in _NAMES:
                    get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
                    if get is not None and put is not None:
                        get.restype, get.argtypes = ctypes.c_int, []
                        put.restype, put.argtypes = None, [ctypes.c_int]
                        _found = (get, put)
                        return _found
    return _found


def blas_controlled() -> bool:
    """Whether `one_blas_thread` sets BLAS's thread count in this process (else BLAS runs each call
    on its own threads: callers then make one BLAS call at a time, or the cores are oversubscribed)."""
    with _LOCK:
        return _setters() is not None


def blas_threads() -> int | None:
    """BLAS's thread count now (None: not OpenBLAS, or its setters are not found)."""
    with _LOCK:
        fns = _setters()
        return None if fns is None else fns[0]()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Inside, numpy's BLAS calls run at one thread (a counted, process-wide scope)."""
    global _holders, _saved
    with _LOCK:
        fns = _setters()
        if _holders == 0 and fns is not None:
            _saved = fns[0]()
            if _saved != 1:
                fns[1](1)
        _holders += 1
        era = _era
    try:
        yield
    finally:
        with _LOCK:
            if era == _era:  # (a scope entered before a fork is over in the child already)
                _holders -= 1
                if _holders == 0 and fns is not None and _saved != 1:
                    fns[1](_saved)


def _after_fork() -> None:
    """In a forked child: a fresh lock (another thread may have held it), and no holders — the threads
    that held the scope are not in the child — with BLAS's count as it was before the scope."""
    global _LOCK, _holders, _era
    _LOCK = threading.Lock()
    _era += 1
    if _holders and _found is not None and _saved != 1:
        _found[1](_saved)
    _holders = 0


os.register_at_fork(after_in_child=_after_fork)
