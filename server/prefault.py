"""A job's memory faulted in while its process waits for the job (`server.worker`).

Each job runs in a process forked for it, so every page its compile touches is new to it, and the kernel zeroes
and maps each one on first touch: a production kernel's lowering spent a sixth of its time there (gated delta
rule: ~130 k page faults, ~0.3 s of ~2 s; Kimi's block attention ~170 k, 0.4-0.5 s). The process is forked ahead
of its job and waits for it; in that wait it now faults in as much memory as the worker's last job used, for the
two allocators a compile's objects come from (`server/prefault.c`: pymalloc's arenas, glibc's heap), a chunk at
a time, and stops as soon as the job arrives (`stop`). The job's objects are then made in pages already mapped.
What the job used is measured for the next one (`Demand`, kept in memory the worker's template shares with its
children): the arenas it was handed, and the heap's bytes in use where it holds the most (`sample`: its interim
answer, and its end).

The extension is built by `tools/build_prefault.py` (`make setup`) into `build/prefault/`; without it (no C
compiler, another platform) nothing here does anything and the jobs run as before. It changes where memory
comes from, never what is computed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import mmap
import os
import struct
import types
from collections.abc import Callable
from pathlib import Path

BUILD = Path(__file__).resolve().parent.parent / "build" / "prefault"
CHUNK = 32 << 20  # bytes faulted in between two looks for the job (~10 ms)
HEAP_BLOCK = 8 << 20  # the extension's heap block
SMALL = 64 << 20  # a last job that used less: nothing is faulted in ahead (a small kernel's job)
MOST = 2 << 30  # at most this much ahead, and at most half the job's memory limit
OFF = "PYPTO_IDE_PREFAULT"  # "0" in the environment the worker pool starts with: no prefault (benchmarks compare)
_FORMAT = "qq"  # (arena bytes, heap bytes) of the last job

_module: types.ModuleType | None | bool = False  # False: not looked for yet


def extension() -> types.ModuleType | None:
    """The built extension, or None (not built, or not loadable here)."""
    global _module
    if _module is False:
        _module = None
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = BUILD / f"_prefault{suffix}"
            if path.is_file():
                try:
                    spec = importlib.util.spec_from_file_location("_prefault", path)
                    assert spec is not None and spec.loader is not None
                    mod = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(mod)
                    _module = mod
                except (ImportError, OSError):
                    _module = None
                break
    return _module if isinstance(_module, types.ModuleType) else None


class Demand:
    """What a template's jobs used, in memory the template and its children share (a job's child writes it, the
    next child reads it): the arena bytes pymalloc was handed and the most heap bytes in use at once — of the last
    job, or half of what was noted before when that is more (a big kernel's edit after a small job of another kernel
    still finds its memory; after a run of small jobs, a child no longer holds a big one's)."""

    def __init__(self) -> None:
        self._shared = mmap.mmap(-1, struct.calcsize(_FORMAT))  # anonymous and shared: inherited by every fork

    def read(self) -> tuple[int, int]:
        arenas, heap = struct.unpack_from(_FORMAT, self._shared)
        return int(arenas), int(heap)

    def write(self, arenas: int, heap: int) -> None:
        """Note a job's use (the decaying maximum above)."""
        was_arenas, was_heap = self.read()
        struct.pack_into(_FORMAT, self._shared, 0, max(0, arenas, was_arenas // 2), max(0, heap, was_heap // 2))


class Prefault:
    """In a job's child, before its job: `fault_in` what the last job used (until `stop()`), then `measure` after
    the job, for the next one. Every step is a no-op without the extension."""

    def __init__(self, demand: Demand | None, memory_limit: int) -> None:
        self.demand = demand
        self.memory_limit = memory_limit
        self.ext = extension() if demand is not None and os.environ.get(OFF) != "0" else None
        self.heap_before = 0

    def fault_in(self, stop: Callable[[], bool]) -> tuple[int, int]:
        """Map and touch, a chunk at a time until `stop()` says the job is here, the arena and heap bytes the last
        job used (none below SMALL; at most MOST and half the memory limit); returns what it faulted in."""
        ext = self.ext
        if ext is None or self.demand is None:
            return 0, 0
        self.heap_before = int(ext.watch())  # the heap's bytes in use before the job (the template's)
        arenas, heap = self.demand.read()
        cap = min(MOST, self.memory_limit // 2) if self.memory_limit > 0 else MOST
        if arenas + heap < SMALL:
            arenas = heap = 0
        arenas, heap = min(arenas, cap), min(heap, max(0, cap - arenas))
        done_arenas = done_heap = 0
        if ext.reserve(arenas):  # (every job's arenas are counted from here, for `measure`)
            left = arenas
            while left > 0 and not stop():
                left = ext.populate(CHUNK)
            done_arenas = arenas - left
        try:
            while done_heap < heap and not stop() and ext.heap_grow():
                done_heap += HEAP_BLOCK
        finally:
            ext.heap_release()  # freed, and kept by glibc (the extension told it so) for the job's mallocs
        return done_arenas, done_heap

    def sample(self) -> None:
        """Count the heap's bytes in use now towards the job's most (where it holds the most: its interim answer,
        its record made; glibc's figure is a walk of its free lists, so it is not asked on a timer)."""
        if self.ext is not None:
            self.ext.demand()

    def measure(self) -> None:
        """After the job: what it used, for the next job's child of this template."""
        if self.ext is None or self.demand is None:
            return
        arenas, heap_peak = self.ext.demand()
        self.demand.write(int(arenas), int(heap_peak) - self.heap_before)
