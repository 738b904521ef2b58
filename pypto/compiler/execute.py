"""The execute graph: every task (a leaf function at concrete tile coordinates) and what it waits for.

A task is one subgraph. Tasks talk only through GM, so dependencies come from GM accesses
in program order: a task that reads a region depends on the last tasks that wrote an
overlapping region (RAW), and a task that writes one depends on earlier readers and
writers of it (WAR, WAW), found through `gm_index` (box overlap, a per-buffer grid of
tile-sized cells), so the build stays near-linear in the number of accesses.
Tasks of a `pypto.loop` iteration belong to that loop's root function.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import defaultdict

from pypto.compiler.execute_ir import ExecGraph, Task
from pypto.compiler.gm_index import Accesses, accesses, flatten, reshaped_buffers
from pypto.compiler.manager import PassContext, Program
from pypto.compiler.tile_ir import Region, Subgraph, TileGraph


def build(tiles: TileGraph, subgraphs: tuple[Subgraph, ...]) -> ExecGraph:
    task_of: dict[int, int] = {}
    for sg in subgraphs:
        task_of.update(dict.fromkeys(sg.ops, sg.id))
    reads: dict[int, list[Region]] = defaultdict(list)
    writes: dict[int, list[Region]] = defaultdict(list)
    preds: dict[int, set[int]] = defaultdict(set)
    reshaped, written = reshaped_buffers(tiles.ops, written=True)
    seen: dict[int, Accesses] = defaultdict(Accesses)
    for op in tiles.ops:
        region = op.region
        if region is None:
            continue
        t = task_of[op.id]
        kind = op.op  # `accesses(op)`, its two common cases inline
        if kind == "load":
            reads[t].append(region)
            b = region.buffer
            if b not in written:
                continue  # nothing writes this buffer (a read-only parameter): no conflicts
            found = seen[b].visit(flatten(region) if b in reshaped else region, t, False)  # through a reshape
            if found:
                preds[t] |= found
            continue
        for r, is_write in ([(region, True)] if kind == "store" else accesses(op)):
            (writes if is_write else reads)[t].append(r)
            b = r.buffer
            if b not in written:
                continue  # nothing writes this buffer (a read-only parameter): no conflicts
            found = seen[b].visit(flatten(r) if b in reshaped else r, t, is_write)  # through a reshape
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
