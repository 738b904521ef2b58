"""The execute graph: every task (a leaf function at concrete tile coordinates) and what it waits for.

A task is one subgraph. Tasks talk only through GM, so dependencies come from GM accesses
in program order: a task that reads a region depends on the last tasks that wrote an
overlapping region (RAW), and a task that writes one depends on earlier readers and
writers of it (WAR, WAW). Overlap is exact box intersection when two accesses see the
buffer with the same layout (a conservative flat-range test across reshapes), looked up
through per-buffer row buckets so the build stays near-linear in the number of accesses.
Tasks of a `pypto.loop` iteration belong to that loop's root function.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable

from pypto.compiler.execute_ir import ExecGraph, Task
from pypto.compiler.manager import PassContext, Program
from pypto.compiler.tile_ir import Region, Subgraph, TileGraph, TileOp


def _flat(r: Region) -> tuple[int, int]:
    strides = [math.prod(r.layout[i + 1:]) for i in range(len(r.layout))]
    start = sum(o * s for o, s in zip(r.offset, strides))
    last = sum((o + n - 1) * s for o, n, s in zip(r.offset, r.shape, strides))
    return start, last + 1


def _flatten(r: Region) -> Region:
    """The region as one flat range of its buffer (conservative: covers the rows between)."""
    start, end = _flat(r)
    return Region(r.buffer, (math.prod(r.layout),), (start,), (end - start,))


def _overlap(a: Region, b: Region) -> bool:
    return all(oa < ob + nb and ob < oa + na for oa, na, ob, nb in zip(a.offset, a.shape, b.offset, b.shape))


class _Accesses:
    """Earlier accesses of one buffer in a grid whose cell is the first access's shape
    (a tile), so an access only meets the accesses in the cells its box touches."""

    def __init__(self) -> None:
        self.cell: tuple[int, ...] | None = None
        self.cells: dict[tuple[int, ...], list[tuple[Region, int, bool]]] = defaultdict(list)

    def _keys(self, r: Region) -> Iterable[tuple[int, ...]]:
        cell = self.cell
        if cell is None:
            cell = self.cell = tuple(max(1, n) for n in r.shape)
        if r.shape == cell:  # the common case: a whole tile, in one cell when aligned
            first = tuple(o // c for o, c in zip(r.offset, cell))
            if all(o == k * c for o, k, c in zip(r.offset, first, cell)):
                return (first,)
        spans = [range(o // c, (o + max(n, 1) - 1) // c + 1) for o, n, c in zip(r.offset, r.shape, cell)]
        return itertools.product(*spans)

    def visit(self, r: Region, task: int, write: bool) -> set[int]:
        """The earlier tasks this access conflicts with; then record the access."""
        found: set[int] = set()
        for k in self._keys(r):
            cell = self.cells[k]
            for other, t, was_write in cell:
                if (write or was_write) and t != task and t not in found and _overlap(r, other):
                    found.add(t)
            cell.append((r, task, write))
        return found


def build(tiles: TileGraph, subgraphs: tuple[Subgraph, ...]) -> ExecGraph:
    task_of: dict[int, int] = {}
    for sg in subgraphs:
        for oid in sg.ops:
            task_of[oid] = sg.id
    reads: dict[int, list[Region]] = defaultdict(list)
    writes: dict[int, list[Region]] = defaultdict(list)
    preds: dict[int, set[int]] = defaultdict(set)
    accesses = [(op, r, w) for op in tiles.ops if op.region is not None for r, w in _accesses(op)]
    layouts: dict[int, set[tuple[int, ...]]] = defaultdict(set)
    written: set[int] = set()
    for _, r, w in accesses:
        layouts[r.buffer].add(r.layout)
        if w:
            written.add(r.buffer)
    reshaped = {b for b, seen_as in layouts.items() if len(seen_as) > 1}
    seen: dict[int, _Accesses] = defaultdict(_Accesses)
    for op, r, is_write in accesses:
        t = task_of[op.id]
        (writes if is_write else reads)[t].append(r)
        if r.buffer not in written:
            continue  # nothing writes this buffer (a read-only parameter): no conflicts
        found = seen[r.buffer].visit(_flatten(r) if r.buffer in reshaped else r, t, is_write)  # through a reshape
        if found:
            preds[t] |= found
    order = _topological(subgraphs, preds)
    new_id = {sg_id: k for k, sg_id in enumerate(order)}
    by_id = {sg.id: sg for sg in subgraphs}
    ops = {o.id: o for o in tiles.ops}
    tasks = []
    for sg_id in order:
        sg = by_id[sg_id]
        inst = tiles.instances[sg.instance]
        coord = next((ops[i].coord for i in sg.ops if ops[i].op not in ("load", "store")), ())
        tasks.append(Task(new_id[sg_id], sg_id, sg.leaf, sg.core, sg.instance, inst.root, coord,
                          tuple(reads[sg_id]), tuple(writes[sg_id]), tuple(sorted(new_id[p] for p in preds[sg_id]))))
    roots = tuple(sorted({-1} | {i.root for i in tiles.instances}))
    return ExecGraph(tuple(tasks), roots)


def _accesses(op: TileOp) -> list[tuple[Region, bool]]:
    """The GM regions a tile op reads (False) and writes (True)."""
    if op.op == "load" and op.region is not None:
        return [(op.region, False)]
    if op.op == "store" and op.region is not None:
        return [(op.region, True)]
    if op.op == "matmul" and op.region is not None:
        return [(r, False) for r in op.attrs["inputs"]] + [(op.region, True)]
    return []


def _topological(subgraphs: tuple[Subgraph, ...], preds: dict[int, set[int]]) -> list[int]:
    """Kahn's algorithm, lowest subgraph id first; a cycle is a partition bug."""
    succs: dict[int, list[int]] = defaultdict(list)
    indeg = {sg.id: len(preds[sg.id]) for sg in subgraphs}
    for t, ps in preds.items():
        for p in ps:
            succs[p].append(t)
    ready = [i for i, d in indeg.items() if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        t = heapq.heappop(ready)
        order.append(t)
        for s in succs[t]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, s)
    if len(order) != len(subgraphs):
        stuck = sorted(i for i, d in indeg.items() if d > 0)[:5]
        raise RuntimeError(f"the task graph has a cycle through subgraphs {stuck}")
    return order


def execute_graph(p: Program, ctx: PassContext) -> Program:
    """Every task (leaf at tile coordinates), its GM reads and writes, and its dependencies."""
    assert p.tiles is not None and p.subgraphs is not None
    return dataclasses.replace(p, execute=build(p.tiles, p.subgraphs))
