"""The execute graph's task order (`pypto.compiler.execute._topological`): Kahn's algorithm, lowest subgraph id
first; when every dependency is on a lower id the order is the ids' own, found without the heap — the same order."""

from __future__ import annotations

from collections import defaultdict

import pytest

from pypto.compiler.execute import _topological
from pypto.compiler.tile_ir import Subgraph


def _subgraphs(n: int) -> tuple[Subgraph, ...]:
    return tuple(Subgraph(i, "AIV", 0, (), 0) for i in range(n))


def _kahn(n: int, preds: dict[int, set[int]]) -> list[int]:
    """The order by its definition: repeatedly the lowest id whose dependencies are all placed."""
    done: list[int] = []
    while len(done) < n:
        done.append(min(i for i in range(n) if i not in done and preds.get(i, set()) <= set(done)))
    return done


@pytest.mark.parametrize("arrows", [
    {1: {0}, 2: {0, 1}, 4: {3}},  # every arrow to a lower id: the ids' order
    {0: {3}, 1: {0}, 2: {4}},  # arrows to higher ids: renumbered
    {},
])
def test_the_order_is_kahns_lowest_id_first(arrows: dict[int, set[int]]) -> None:
    preds: defaultdict[int, set[int]] = defaultdict(set, {t: set(ps) for t, ps in arrows.items()})
    assert _topological(_subgraphs(5), preds) == _kahn(5, arrows)


def test_a_cycle_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="cycle"):
        _topological(_subgraphs(2), defaultdict(set, {0: {1}, 1: {0}}))
