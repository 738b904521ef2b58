"""The worker's memory prefault (`server.prefault`, `server/prefault.c`): a job's child faults in what the last job
used, and the objects made after it are the same objects, in pages already mapped.

Each check runs in a forked process of its own: the arena allocator it installs is the process's for good."""

from __future__ import annotations

import os
import resource
import shutil
import sysconfig
from collections.abc import Callable

import pytest

from server import prefault
from server.prefault import Demand, Prefault

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the prefault runs in forked job processes")


def in_fork(check: Callable[[], object]) -> object:
    """`check()`'s result (a repr-able value) from a forked child, or the child's exception as a string."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            out = repr(check())
        except BaseException as e:  # noqa: BLE001 - said to the test
            out = repr(f"raised {type(e).__name__}: {e}")
        os.write(write, out.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the check's process died: status {status}"
    return eval(data)  # noqa: S307 - our own child's repr


def _compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


def test_the_extension_is_built_where_a_compiler_is():
    """`make setup` builds it (tools/build_prefault.py): a machine with a C compiler must not silently lose it."""
    if not _compiler():
        pytest.skip("no C compiler on this machine: the jobs run without the prefault (as documented)")
    assert prefault.extension() is not None, f"not built in {prefault.BUILD} (make setup runs tools/build_prefault.py)"


needs_extension = pytest.mark.skipif(prefault.extension() is None,
                                     reason="the prefault extension is not built (no C compiler: make setup)")


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _objects(n: int) -> list[tuple[int, str]]:
    return [(i, str(i)) for i in range(n)]


@needs_extension
def test_objects_made_after_a_prefault_are_the_same_in_pages_already_mapped():
    def check() -> tuple[object, ...]:
        ext = prefault.extension()
        assert ext is not None
        before = _objects(50_000)  # arenas of the allocator it replaces: freed through it below
        assert ext.reserve(256 << 20)
        left = 1
        while left:
            left = ext.populate(prefault.CHUNK)
        f0 = _faults()
        made = _objects(400_000)  # ~60 MB of small objects: arenas from the region
        faults = _faults() - f0
        arenas, _ = ext.demand()
        del before  # arenas from before the reserve go back to the allocator that made them
        again = _objects(400_000)
        del made
        return faults, arenas, again[123_456], len(again), ext.demand()[0] - arenas

    faults, arenas, sample, n, grew = in_fork(check)  # type: ignore[misc]
    assert sample == (123_456, "123456") and n == 400_000
    assert arenas >= 40 << 20, "the objects' arenas were not handed out of the region"
    assert faults < 2_000, f"{faults} page faults making objects in memory faulted in ahead (~15,000 without)"
    assert grew < arenas, "freed arenas are handed out again before new ones"


@needs_extension
def test_without_a_prefault_the_same_objects_fault_their_pages():
    """The figure the test above compares with: the same objects, the allocator only counting."""
    def check() -> tuple[int, int]:
        ext = prefault.extension()
        assert ext is not None
        assert not ext.reserve(0)  # counting only: no region
        f0 = _faults()
        _objects(400_000)
        return _faults() - f0, ext.demand()[0]

    faults, arenas = in_fork(check)  # type: ignore[misc]
    assert faults > 5_000
    assert arenas >= 40 << 20, "arenas made by the allocator it replaced are counted too"


@needs_extension
def test_a_child_faults_in_what_the_last_job_used_and_stops_for_its_job():
    demand = Demand()

    def first_job() -> tuple[int, int]:
        p = Prefault(demand, 4 << 30)
        done = p.fault_in(stop=lambda: False)  # nothing noted yet: nothing ahead
        keep = [_objects(600_000), [{i: i} for i in range(20_000)]]  # arenas (above SMALL), malloc'd tables
        p.measure()
        assert keep
        return done

    assert in_fork(first_job) == (0, 0)
    arenas, heap = demand.read()
    assert arenas >= prefault.SMALL and heap > 0

    def next_job() -> tuple[tuple[int, int], int]:
        p = Prefault(demand, 4 << 30)
        done = p.fault_in(stop=lambda: False)
        f0 = _faults()
        _objects(300_000)
        return done, _faults() - f0

    (done_arenas, done_heap), faults = in_fork(next_job)  # type: ignore[misc]
    assert done_arenas >= arenas and done_heap >= heap - prefault.HEAP_BLOCK
    assert faults < 2_000

    def job_already_here() -> tuple[int, int]:
        return Prefault(demand, 4 << 30).fault_in(stop=lambda: True)

    assert in_fork(job_already_here) == (0, 0), "a job waiting stops the prefault before its first chunk"

    def capped() -> tuple[int, int]:
        return Prefault(demand, 16 << 20).fault_in(stop=lambda: False)  # at most half a 16 MiB limit

    assert in_fork(capped) == (0, 0) or sum(in_fork(capped)) <= 8 << 20  # type: ignore[arg-type]


def test_the_demand_decays_by_half_a_job_and_follows_a_bigger_one():
    d = Demand()
    d.write(800, 400)
    d.write(100, 100)
    assert d.read() == (400, 200)
    d.write(1000, 10)
    assert d.read() == (1000, 100)


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(prefault.OFF, "0")
    p = Prefault(Demand(), 4 << 30)
    assert p.ext is None and p.fault_in(stop=lambda: False) == (0, 0)
    p.measure()  # a no-op
