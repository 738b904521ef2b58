"""`gc_paused`: the collector is paused inside, enabled after; what was made inside joins the oldest
generation unless something is frozen already (the worker's template stays frozen)."""

from __future__ import annotations

import gc

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
