"""The GM dependency index (`pypto.compiler.gm_index.Accesses`): the owners an access conflicts with
are exactly those a scan of every earlier access finds (RAW, WAR, WAW on overlapping boxes; two
reads never conflict), over random boxes of several shapes, aligned or not, many of them repeats."""

from __future__ import annotations

import numpy as np
import pytest

from pypto.compiler.gm_index import Accesses, overlap
from pypto.compiler.tile_ir import Region


def _boxes(rng: np.random.Generator, n: int) -> list[Region]:
    out = []
    for _ in range(n):
        shape = tuple(int(x) for x in rng.choice([1, 4, 8, 16], size=2))
        if rng.random() < 0.6:  # aligned to its own shape
            at = tuple(int(rng.integers(0, 64 // s)) * s for s in shape)
        else:
            at = tuple(int(rng.integers(0, 64 - s + 1)) for s in shape)
        out.append(Region(0, (64, 64), at, shape))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("use_visit", [True, False])
def test_conflicts_are_those_of_a_scan_of_every_earlier_access(seed, use_visit):
    rng = np.random.default_rng(seed)
    pool = _boxes(rng, 24)  # few distinct boxes: the same regions are read and written again and again
    index = Accesses()
    earlier: list[tuple[Region, int, bool]] = []
    for k in range(600):
        r = pool[int(rng.integers(0, len(pool)))]
        owner, write = int(rng.integers(0, 40)), bool(rng.random() < 0.25)
        want = {o for other, o, w in earlier if (write or w) and o != owner and overlap(r, other)}
        if use_visit:
            got = index.visit(r, owner, write)
        else:
            got = index.conflicts(r, write, owner)
            index.add(r, owner, write)
        assert got == want, k
        earlier.append((r, owner, write))
