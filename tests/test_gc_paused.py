"""`gc_paused`: the collector is paused inside, enabled after; what was made inside joins the oldest
generation unless something is frozen already (the worker's template stays frozen, and is not counted)."""

from __future__ import annotations

import gc

import pytest

from pypto.compiler import pipeline
from pypto.compiler.pipeline import gc_paused


def test_gc_paused_leaves_the_collector_enabled_and_cycles_collectable() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        cycle: list[object] = []
        cycle.append(cycle)
        kept = [[] for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert kept[0] == []
    del cycle
    assert gc.collect() >= 1  # the cycle made inside is still found by a full collection


def test_gc_paused_keeps_what_someone_else_froze_frozen() -> None:
    template = [[] for _ in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            made = [[] for _ in range(1000)]
        assert gc.get_freeze_count() == frozen  # not released (a forked job would walk, and copy, its pages)
        assert gc.isenabled() and made and template
    finally:
        gc.unfreeze()


def test_a_process_that_keeps_its_frozen_generation_is_never_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's template froze its objects for good (`keep_frozen`): `gc_paused` neither counts them
    (`gc.get_freeze_count` walks every frozen object, on every pipeline run of a job) nor releases them."""
    def walked() -> int:
        raise AssertionError("the frozen generation was counted")

    monkeypatch.setattr(pipeline, "_kept_frozen", False)
    pipeline.keep_frozen()
    monkeypatch.setattr(gc, "get_freeze_count", walked)
    gc.freeze()
    try:
        assert pipeline.frozen()
        with pipeline.gc_paused():
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_process_that_keeps_its_frozen_generation_freezes_what_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a worker's job (`keep_frozen`) what a pause made is frozen too: no young collection after it walks
    the 10^5-10^6 objects a compile made. Refcounting still frees them."""
    import weakref

    class Made:
        pass

    monkeypatch.setattr(pipeline, "_kept_frozen", False)
    pipeline.keep_frozen()
    try:
        with pipeline.gc_paused():
            made = [Made() for _ in range(1000)]
        assert all(gc.is_tracked(m) for m in made[:1]) and gc.get_freeze_count() >= 1000
        assert not any(o is made[0] for o in gc.get_objects(generation=0))  # not in the young generation
        gone = weakref.ref(made[-1])
        made.clear()
        assert gone() is None  # freed by refcounting all the same
    finally:
        gc.unfreeze()
