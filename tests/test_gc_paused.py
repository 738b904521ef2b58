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
