"""The execute graph's task order (`pypto.compiler.execute._topological`): Kahn's algorithm, lowest subgraph id
first; when every dependency is on a lower id the order is the ids' own, found without the heap — the same order;
when a few are on higher ids, a scan in id order with a heap only for the tasks it passed before they were ready."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from pypto.compiler.execute import _topological
from pypto.compiler.tile_ir import Subgraph


def _subgraphs(n: int | list[int]) -> tuple[Subgraph, ...]:
    return tuple(Subgraph(i, "AIV", 0, (), 0) for i in (range(n) if isinstance(n, int) else n))


def _kahn(n: int | list[int], preds: dict[int, set[int]]) -> list[int]:
    """The order by its definition: repeatedly the lowest id whose dependencies are all placed."""
    ids = list(range(n)) if isinstance(n, int) else n
    done: list[int] = []
    while len(done) < len(ids):
        done.append(min(i for i in ids if i not in done and preds.get(i, set()) <= set(done)))
    return done


@pytest.mark.parametrize("arrows", [
    {1: {0}, 2: {0, 1}, 4: {3}},  # every arrow to a lower id: the ids' order
    {0: {3}, 1: {0}, 2: {4}},  # arrows to higher ids: renumbered
    {},
])
def test_the_order_is_kahns_lowest_id_first(arrows: dict[int, set[int]]) -> None:
    preds: defaultdict[int, set[int]] = defaultdict(set, {t: set(ps) for t, ps in arrows.items()})
    assert _topological(_subgraphs(5), preds) == _kahn(5, arrows)


@pytest.mark.parametrize("ids", [list(range(40)), [3 * i + 1 for i in range(40)], list(range(39, -1, -1))])
def test_the_order_is_kahns_on_random_acyclic_graphs_whatever_the_ids(ids: list[int]) -> None:
    """Ids each its position, sparse ids, ids listed backwards; arrows both ways (acyclic: from a random order)."""
    rng = random.Random(len(ids) + ids[0])
    for _ in range(20):
        rank = ids[:]
        rng.shuffle(rank)
        arrows = {t: {p for p in rank[:k] if rng.random() < 0.1} for k, t in enumerate(rank)}
        preds: defaultdict[int, set[int]] = defaultdict(set, {t: ps for t, ps in arrows.items() if ps})
        assert _topological(_subgraphs(ids), preds) == _kahn(ids, arrows)


def test_a_cycle_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="cycle"):
        _topological(_subgraphs(2), defaultdict(set, {0: {1}, 1: {0}}))
    with pytest.raises(RuntimeError, match=r"cycle through subgraphs \[4, 6\]"):
        _topological(_subgraphs([2, 4, 6]), defaultdict(set, {4: {6}, 6: {4}}))


def test_the_order_is_kahns_when_a_few_arrows_come_from_higher_ids() -> None:
    """Ids each its position, most arrows from lower ids and a few from higher ones (gated delta rule's graph): the
    scan in id order takes most tasks, a heap the ones that became ready after the scan passed them."""
    rng = random.Random(7)
    n = 300
    for _ in range(10):
        rank = list(range(n))
        for _ in range(15):  # a few tasks moved later than their ids: their arrows come from higher ids
            i, j = sorted(rng.sample(range(n), 2))
            rank.insert(j, rank.pop(i))
        arrows = {t: {p for p in rank[max(0, k - 6):k] if rng.random() < 0.5} for k, t in enumerate(rank)}
        preds: defaultdict[int, set[int]] = defaultdict(set, {t: ps for t, ps in arrows.items() if ps})
        assert any(max(ps) > t for t, ps in preds.items())  # (so not the ids' own order)
        assert _topological(_subgraphs(n), preds) == _kahn(n, arrows)
