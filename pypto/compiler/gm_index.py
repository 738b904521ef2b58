"""Which earlier GM accesses a region meets: the index behind every through-GM dependency.

Tasks (and, before them, the partition's subgraphs) talk only through GM, so "does this access
depend on that one" is "do their boxes overlap, and is one of them a write". Checking every
earlier access makes a kernel of n tiles cost n²; this index files each access in a grid per
access shape, whose cell is that shape (a tile), so an access meets only the accesses in the
cells its box touches — one cell for an aligned tile — and building dependencies stays
near-linear, also when a loop's tails and unrolled variants access the buffer in other shapes.
Two views of one buffer through different reshapes (`layout`s) are compared as flat ranges of
the buffer (conservative: the range covers the rows in between).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Set
from typing import Any, Literal, overload

from pypto.compiler.tile_ir import Region, TileOp


def flatten(r: Region) -> Region:
    """The region as one flat range of its buffer (conservative: covers the rows between)."""
    layout = r.layout
    known = _FLAT.get(layout)
    if known is None:
        known = _FLAT[layout] = (tuple(math.prod(layout[i + 1:]) for i in range(len(layout))), (math.prod(layout),))
    strides, size = known
    start = last = 0
    for o, n, s in zip(r.offset, r.shape, strides):
        start += o * s
        last += (o + n - 1) * s
    return Region(r.buffer, size, (start,), (last + 1 - start,))


# layout -> (its strides, its flat layout): a kernel has a few layouts and 10^5 accesses through them
_FLAT: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int]]] = {}


def overlap(a: Region, b: Region) -> bool:
    return all(oa < ob + nb and ob < oa + na for oa, na, ob, nb in zip(a.offset, a.shape, b.offset, b.shape))


def accesses(op: TileOp) -> list[tuple[Region, bool]]:
    """The GM regions a tile op reads (False) and writes (True)."""
    if op.op == "load" and op.region is not None:
        return [(op.region, False)]
    if op.op == "store" and op.region is not None:
        return [(op.region, True)]
    if op.op == "matmul" and op.region is not None:
        return [(r, False) for r in op.attrs["inputs"]] + [(op.region, True)]
    if op.region is not None:  # rows where an index says at run time: index_select reads, scatter_update writes
        return [(op.region, op.op != "index_select")]
    return []


@overload
def reshaped_buffers(ops: Iterable[TileOp]) -> set[int]: ...
@overload
def reshaped_buffers(ops: Iterable[TileOp], written: Literal[True]) -> tuple[set[int], set[int]]: ...


def reshaped_buffers(ops: Iterable[TileOp], written: bool = False) -> set[int] | tuple[set[int], set[int]]:
    """The buffers seen through more than one layout (their accesses are compared flat); with
    `written`, also the buffers some op writes (a buffer only read has no GM conflicts)."""
    layouts: dict[int, set[tuple[int, ...]]] = defaultdict(set)
    writes: set[int] = set()
    last: tuple[int, tuple[int, ...]] | None = None  # the last (buffer, layout) filed: runs of tiles repeat it
    for op in ops:
        r = op.region
        if r is None:
            continue
        kind = op.op
        if kind == "load":
            if last is None or r.buffer != last[0] or r.layout is not last[1]:
                layouts[r.buffer].add(r.layout)
                last = (r.buffer, r.layout)
        elif kind == "store" or kind == "scatter_update":
            layouts[r.buffer].add(r.layout)
            writes.add(r.buffer)
        elif kind == "matmul":
            for x in op.attrs["inputs"]:
                layouts[x.buffer].add(x.layout)
            layouts[r.buffer].add(r.layout)
            writes.add(r.buffer)
    reshaped = {b for b, seen_as in layouts.items() if len(seen_as) > 1}
    return (reshaped, writes) if written else reshaped


# An owner (an int: a task's id, a subgraph's) is typed `Any` here, and so are the sets and lists that hold owners:
# the native build keeps an `int` unboxed and makes a new int object each time it puts one into a set or list, where
# an object is stored as it is. So every cell, set and list holds the one object the caller passed for an owner (as the
# Python build does), not an object per entry: glm's fused attention, 2.2 M tile ops, made ~4 M ints more natively.
Owner = Any


class _Cell:
    """What was filed in one cell of a grid. An access of exactly the cell's box (a tile of the grid's shape,
    aligned to it: nearly every one — glm's fused attention: 2.1 M of 2.1 M; gated delta rule: all) is kept as its
    owner alone, the first of each side inline (None: none) and the rest in a list: its box is the cell's, so no
    region is kept. Any other access that touches the cell (unaligned, smaller, straddling cells) is kept as
    (region, owner). Writes and reads apart: a read conflicts only with writes."""

    __slots__ = ("w", "r", "ws", "rs", "xw", "xr")

    def __init__(self) -> None:
        self.w: Owner = None  # the first exact write's owner
        self.r: Owner = None  # the first exact read's owner
        self.ws: list[Owner] | None = None  # the later exact writes' owners
        self.rs: list[Owner] | None = None  # the later exact reads' owners
        self.xw: list[tuple[Region, Owner]] | None = None  # the other writes
        self.xr: list[tuple[Region, Owner]] | None = None  # the other reads

    def file(self, r: Region, owner: Owner, write: bool, exact: bool) -> None:
        if exact:
            if write:
                if self.w is None:
                    self.w = owner
                elif self.ws is None:
                    self.ws = [owner]
                else:
                    self.ws.append(owner)
            elif self.r is None:
                self.r = owner
            elif self.rs is None:
                self.rs = [owner]
            else:
                self.rs.append(owner)
        elif write:
            if self.xw is None:
                self.xw = [(r, owner)]
            else:
                self.xw.append((r, owner))
        elif self.xr is None:
            self.xr = [(r, owner)]
        else:
            self.xr.append((r, owner))

    def meet(self, r: Region, write: bool, whole: bool, found: set[Owner]) -> None:
        """Add to `found` the owners of what is filed here that an access of `r` conflicts with (a write meets writes
        and reads, a read only writes). `whole`: `r`'s box overlaps the cell's (then every exact access meets it)."""
        if whole:
            if self.w is not None:
                found.add(self.w)
                if self.ws is not None:
                    found.update(self.ws)
            if write and self.r is not None:
                found.add(self.r)
                if self.rs is not None:
                    found.update(self.rs)
        if self.xw is not None:
            for other, o in self.xw:
                if o not in found and overlap(r, other):
                    found.add(o)
        if write and self.xr is not None:
            for other, o in self.xr:
                if o not in found and overlap(r, other):
                    found.add(o)


def _meets_cell(off: tuple[int, ...], shp: tuple[int, ...], key: tuple[int, ...], cell: tuple[int, ...]) -> bool:
    """Whether the box at `off` of shape `shp` overlaps cell `key` of grid `cell` (as `overlap` would find it with an
    access of exactly that cell's box): always, for a box with no empty extent in a cell its span touches."""
    for o, n, k, c in zip(off, shp, key, cell):
        lo = k * c
        if not (o < lo + c and lo < o + n):
            return False
    return True


class Accesses:
    """Earlier accesses of one buffer (each by an owner: a task, a subgraph), filed in one grid per
    access shape whose cell is that shape: a tile meets only the same-shaped accesses in the one
    cell it covers when aligned, and the few of each other shape (a loop's tail, an unrolled
    variant) in the cells its box touches. A grid whose cells the box would touch outnumber its
    accesses is scanned whole instead, so a big box against small tiles costs what they number.
    A cell (`_Cell`) keeps its writes and its reads apart: a read conflicts only with writes, so the many
    reads of one region (a loop-invariant value every tile loads) are not scanned by each other; and an
    access of exactly its box as its owner alone (no region, no overlap test).
    What a read meets depends only on the writes filed, so the owners a box's read meets are kept
    until the next write: the many reads of one big box (every task reading a whole buffer that
    many tasks wrote in slabs) cost one walk, then a copy each."""

    __slots__ = ("grids", "_reads_meet")

    def __init__(self) -> None:
        # access shape -> cell -> what is filed there (a new cell made where one is filed: `defaultdict`)
        self.grids: dict[tuple[int, ...], dict[tuple[int, ...], _Cell]] = {}
        # (offset, shape) of a multi-cell read -> every owner it meets (owner filter not applied);
        # emptied by each write
        self._reads_meet: dict[tuple[tuple[int, ...], tuple[int, ...]], frozenset[Owner]] = {}

    @staticmethod
    def _spans(r: Region, cell: tuple[int, ...]) -> list[range]:
        return [range(o // c, (o + (n or 1) - 1) // c + 1) for o, n, c in zip(r.offset, r.shape, cell)]  # n >= 0

    def conflicts(self, r: Region, write: bool, owner: Owner = None) -> Set[int]:
        """The other owners of earlier accesses this one conflicts with (RAW, WAR, WAW). Read it, do not change
        it: the reads of a box since its buffer's last write get the one frozenset the first one's walk kept (Kimi's
        block attention: 32 k matmuls read one whole buffer that 256 tasks wrote; 128 distinct sets)."""
        known = self._reads_meet.get((r.offset, r.shape)) if not write else None
        met: Set[Owner] = self._meets(r, write) if known is None else known
        return met if owner not in met else met - {owner}

    def _meets(self, r: Region, write: bool) -> Set[Owner]:
        """Every owner of an earlier access this one conflicts with, its own included: a new set, or the frozenset a
        read that walked cells keeps for the reads of its box until the next write."""
        found: set[Owner] = set()
        off, shp = r.offset, r.shape
        multi = False
        two = len(off) == 2
        full = 0 not in shp  # no empty extent: the box overlaps every cell its span touches
        key: tuple[int, ...] | None
        for cell, grid in self.grids.items():
            if shp == cell and two:  # the common case, inline: a tile of this grid's shape, aligned to it
                a, b = off
                c, d = cell
                key = (a // c, b // d) if a % c == 0 and b % d == 0 else None
            else:  # a tile of this shape aligned, or a smaller box inside one cell (a row of a tile)
                key = _inside(off, shp, cell)
            if key is not None:  # one cell holds the whole box
                cv = grid.get(key)
                if cv is not None:
                    cv.meet(r, write, full or _meets_cell(off, shp, key, cell), found)
                continue
            multi = True
            spans = self._spans(r, cell)
            if math.prod(len(s) for s in spans) > len(grid):
                for k, cv in grid.items():  # (a cell outside the box's span meets it only through `overlap`)
                    cv.meet(r, write, _meets_cell(off, shp, k, cell), found)
            else:
                for k in itertools.product(*spans):
                    cv = grid.get(k)
                    if cv is not None:
                        cv.meet(r, write, full or _meets_cell(off, shp, k, cell), found)
        if multi and not write:  # worth keeping: it walked cells or whole grids
            kept = self._reads_meet[(off, shp)] = frozenset(found)
            return kept
        return found

    def add(self, r: Region, owner: Owner, write: bool) -> None:
        if write and self._reads_meet:
            self._reads_meet.clear()
        shp = r.shape
        cell = shp if 0 not in shp else tuple(max(1, n) for n in shp)
        grid = self.grids.get(cell)
        if grid is None:
            grid = self.grids[cell] = defaultdict(_Cell)
        off = r.offset
        if len(off) == 2 and cell is shp:  # _inside(off, shp, cell), inline for the common rank
            a, b = off
            c, d = shp
            key: tuple[int, ...] | None = (a // c, b // d) if a % c == 0 and b % d == 0 else None
        else:
            key = _inside(off, shp, cell)
        if key is not None:  # one cell holds it: exactly its box when of the grid's shape (no empty extent)
            grid[key].file(r, owner, write, cell is shp)
            return
        for k in itertools.product(*self._spans(r, cell)):
            grid[k].file(r, owner, write, False)

    def visit(self, r: Region, owner: Owner, write: bool) -> Set[int]:
        """`conflicts`, then record the access."""
        shp, grids = r.shape, self.grids
        if len(grids) <= 1 and 0 not in shp:  # the common case, both steps at once: one grid, one cell
            grid = grids.get(shp)
            if grid is not None or not grids:
                off = r.offset
                key: tuple[int, ...] | None
                if len(off) == 2:  # _inside(off, shp, shp), inline
                    a, b = off
                    c, d = shp
                    key = (a // c, b // d) if a % c == 0 and b % d == 0 else None
                else:
                    key = _inside(off, shp, shp)
                if key is not None:  # exactly the cell's box: it meets every access filed there
                    found: set[Owner] = set()
                    if grid is None:
                        grid = grids[shp] = defaultdict(_Cell)
                    cv = grid[key]
                    cv.meet(r, write, True, found)
                    found.discard(owner)
                    if write and self._reads_meet:
                        self._reads_meet.clear()
                    cv.file(r, owner, write, True)
                    return found
        met = self.conflicts(r, write, owner)
        self.add(r, owner, write)
        return met


def _inside(off: tuple[int, ...], shp: tuple[int, ...], cell: tuple[int, ...]) -> tuple[int, ...] | None:
    """The one cell of grid `cell` that holds the whole box at `off` of shape `shp` (what `Accesses._spans`
    would give as its only cell): a box of the cell's shape aligned to the grid, or a smaller one that crosses no
    cell's edge; None otherwise. Spelled out for ranks 1 to 3 (Kimi's block attention: 229 k rank-3 lookups)."""
    if len(off) == 2:
        a, b = off
        n, m = shp
        c, d = cell
        i, j = a // c, b // d
        return (i, j) if (a + (n or 1) - 1) // c == i and (b + (m or 1) - 1) // d == j else None
    if len(off) == 3:
        a, b, e = off
        n, m, q = shp
        x, y, z = cell
        i, j, k = a // x, b // y, e // z
        return (i, j, k) if (a + (n or 1) - 1) // x == i and (b + (m or 1) - 1) // y == j \
            and (e + (q or 1) - 1) // z == k else None
    out = []
    for o, n, c in zip(off, shp, cell):
        k = o // c
        if (o + (n or 1) - 1) // c != k:
            return None
        out.append(k)
    return tuple(out)
