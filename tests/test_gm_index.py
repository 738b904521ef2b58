"""The GM dependency index (`pypto.compiler.gm_index.Accesses`): the owners an access conflicts with
are exactly those a scan of every earlier access finds (RAW, WAR, WAW on overlapping boxes; two
reads never conflict), over random boxes of several shapes, aligned or not, some with an empty
extent, many of them repeats — also when writes are rare, so that the index's memory of what a box's
read meets is used and must be forgotten at the next write."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.compiler.gm_index import Accesses, overlap
from pypto.compiler.tile_ir import Region


def _boxes(rng: np.random.Generator, n: int, sizes: tuple[int, ...] = (1, 4, 8, 16), rank: int = 2) -> list[Region]:
    out = []
    for _ in range(n):
        shape = tuple(int(x) for x in rng.choice(sizes, size=rank))
        kind = rng.random()
        if kind < 0.8:  # aligned to its own shape, or but on one axis
            at = [int(rng.integers(0, 64 // max(s, 1))) * s for s in shape]
            if kind >= 0.6:
                axis = int(rng.integers(0, rank))
                at[axis] = int(rng.integers(0, 64 - shape[axis] + 1))
        else:
            at = [int(rng.integers(0, 64 - s + 1)) for s in shape]
        out.append(Region(0, (64,) * rank, tuple(at), shape))
    return out


# rank 2 (the common one) over four seeds; the other ranks' one-cell paths (spelled out per rank) over two
@pytest.mark.parametrize(("seed", "rank"), [(s, 2) for s in range(4)] + [(s, r) for r in (1, 3, 4) for s in range(2)])
@pytest.mark.parametrize("use_visit", [True, False])
@pytest.mark.parametrize("write_share", [0.25, 0.03])
# (an empty extent: a box that meets the accesses `overlap` says it meets, at a cell's start or inside it)
@pytest.mark.parametrize("sizes", [(1, 4, 8, 16), (8,), (0, 4, 8)], ids=["shapes", "one-shape", "empty-extents"])
def test_conflicts_are_those_of_a_scan_of_every_earlier_access(seed, rank, use_visit, write_share, sizes):
    rng = np.random.default_rng(seed)
    # few distinct boxes: the same regions are read and written again and again; of one shape, one grid (the
    # one-cell paths of `visit` and `conflicts`, spelled out per rank) met by unaligned boxes too
    pool = _boxes(rng, 24, sizes, rank)
    index = Accesses()
    earlier: list[tuple[Region, int, bool]] = []
    for k in range(600):
        r = pool[int(rng.integers(0, len(pool)))]
        owner, write = int(rng.integers(0, 40)), bool(rng.random() < write_share)
        want = {o for other, o, w in earlier if (write or w) and o != owner and overlap(r, other)}
        if use_visit:
            got = index.visit(r, owner, write)
        else:
            got = index.conflicts(r, write, owner)
            index.add(r, owner, write)
        assert got == want, k
        earlier.append((r, owner, write))


def test_a_write_forgets_what_reads_met_on_every_path():
    """A read that straddles cells is remembered; a later aligned write of the grid's own shape (the
    one-cell path of `visit`) must make the same read meet it."""
    index = Accesses()
    tile, straddle = (8, 8), Region(0, (64, 64), (4, 4), (8, 8))
    assert index.visit(Region(0, (64, 64), (0, 0), tile), owner=1, write=True) == set()
    assert index.visit(straddle, owner=2, write=False) == {1}
    assert index.visit(Region(0, (64, 64), (8, 8), tile), owner=3, write=True) == {2}  # WAR on the straddle
    assert index.visit(straddle, owner=4, write=False) == {1, 3}
    assert index.conflicts(straddle, False, owner=3) == {1}
