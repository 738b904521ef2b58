"""The GM dependency index on the access pattern that made Kimi's block attention slow to compile.

A buffer written by 128 tasks in slabs (1, 26, 512), then read whole (128, 26, 512) by many tasks: each
read meets all 128 writers. `Accesses` keeps what a multi-cell read met until the next write to the
buffer (320c166), so the reads after the first cost a set copy each; `Walk` below is the index without
that memory (every read walks the 128 cells and tests each writer), i.e. the index before 320c166.
Both run side by side in one process and must find the same owners. Also `flatten` (a region seen
through another layout, one flat range), whose strides are now made once per layout (322fba8), against
the per-call computation it replaced.

Run: `.venv/bin/python benchmarks/gm_index_bench.py [--readers 4096] [--reps 3]`. Prints wall times
(best of reps, this machine's CPU) and the ratios.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

from pypto.compiler.gm_index import Accesses, flatten
from pypto.compiler.tile_ir import Region

LAYOUT = (128, 26, 512)


class Walk(Accesses):
    """The index without the memory of what reads met: every read walks its cells again."""

    __slots__ = ()

    def conflicts(self, r: Region, write: bool, owner: int = -1) -> set[int]:
        found = self._meets(r, write)
        found.discard(owner)
        return found


def pattern(index: Accesses, readers: int) -> int:
    """128 slab writes, then `readers` whole-buffer reads; the number of dependencies found."""
    for k in range(LAYOUT[0]):
        index.visit(Region(0, LAYOUT, (k, 0, 0), (1, *LAYOUT[1:])), owner=k, write=True)
    whole = Region(0, LAYOUT, (0, 0, 0), LAYOUT)
    return sum(len(index.visit(whole, owner=LAYOUT[0] + j, write=False)) for j in range(readers))


def old_flatten(r: Region) -> Region:
    """`flatten` as it was: the strides made on every call."""
    strides = [math.prod(r.layout[i + 1:]) for i in range(len(r.layout))]
    start = sum(o * s for o, s in zip(r.offset, strides))
    last = sum((o + n - 1) * s for o, n, s in zip(r.offset, r.shape, strides))
    return Region(r.buffer, (math.prod(r.layout),), (start,), (last + 1 - start,))


def best(fn: Callable[[], object], reps: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--readers", type=int, default=4096, help="whole-buffer reads after the slab writes")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    t_walk, n_walk = best(lambda: pattern(Walk(), a.readers), a.reps)
    t_memo, n_memo = best(lambda: pattern(Accesses(), a.readers), a.reps)
    assert n_walk == n_memo == a.readers * LAYOUT[0], (n_walk, n_memo)
    print(f"{LAYOUT[0]} slab writes, {a.readers} whole-buffer reads ({n_memo:,} dependencies found):")
    print(f"  walk every read  {t_walk:7.3f} s")
    print(f"  with the memory  {t_memo:7.3f} s   {t_walk / t_memo:5.1f}x")
    regions = [Region(0, LAYOUT, (k % 128, k % 26, 0), (1, 1, 512)) for k in range(200_000)]
    assert [old_flatten(r) for r in regions[:1000]] == [flatten(r) for r in regions[:1000]]
    t_old, _ = best(lambda: [old_flatten(r) for r in regions], a.reps)
    t_new, _ = best(lambda: [flatten(r) for r in regions], a.reps)
    print(f"flatten, {len(regions):,} regions: per call {t_old:.3f} s, per layout {t_new:.3f} s   "
          f"{t_old / t_new:4.1f}x")


if __name__ == "__main__":
    main()
