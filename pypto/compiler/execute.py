"""The execute graph: every task (a leaf function at concrete tile coordinates) and what it waits for.

A task is one subgraph. Tasks talk only through GM, so dependencies come from GM accesses
in program order: a task that reads a region depends on the last tasks that wrote an
overlapping region (RAW), and a task that writes one depends on earlier readers and
writers of it (WAR, WAW), found through `gm_index` (box overlap, a per-buffer grid of
tile-sized cells), so the build stays near-linear in the number of accesses.
Tasks of a `pypto.loop` iteration belong to that loop's root function. The graph carries its
tasks as columns too (`ExecColumns`: arrays, GM regions interned), made here where every task is
in hand, so that the sim board's first run of a graph reads arrays, not 100k Task objects.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence, Set
from itertools import chain, compress
from operator import attrgetter

import numpy as np

from pypto.compiler.execute_ir import CORE_CODES, ExecColumns, ExecGraph, Task, intern_regions
from pypto.compiler.gm_index import Accesses, Owner, accesses, flatten, reshaped_buffers
from pypto.compiler.manager import PassContext, Program
from pypto.compiler.tile_ir import Region, Subgraph, TileGraph, copy_facts, ops_by_id, take_execute_ahead


def build(tiles: TileGraph, subgraphs: tuple[Subgraph, ...]) -> ExecGraph:
    # by tile op id and by task id (both 0..n-1 in some order): lists, which the native build indexes directly
    # (a task's id as one object, which the GM index and the arrows hold: `gm_index.Owner`)
    task_of: list[Owner] = [None] * (max((o.id for o in tiles.ops), default=-1) + 1)
    for sg in subgraphs:
        key: Owner = sg.id
        for i in sg.ops:
            task_of[i] = key
    n_tasks = max((sg.id for sg in subgraphs), default=-1) + 1
    reads: list[list[Region]] = [[] for _ in range(n_tasks)]
    writes: list[list[Region]] = [[] for _ in range(n_tasks)]
    preds: dict[int, set[Owner]] = defaultdict(set)
    facts = copy_facts(tiles)
    reshaped: Set[int]
    written: Set[int]
    if facts is not None:  # graph partition made these tiles: it knows (copies' buffers: see CopyFacts)
        reshaped, written, first_copy = facts.reshaped, facts.written, facts.first_xfer
        if facts.depends is not None:  # and found the dependencies through the other buffers, as below would
            written = frozenset()  # (so no access is filed again)
    else:
        reshaped, written = reshaped_buffers(tiles.ops, written=True)
        first_copy = len(tiles.buffers)  # none known
    writer: dict[int, Owner] = {}  # a copy's buffer -> the task of its one store
    seen: dict[int, Accesses] = defaultdict(Accesses)
    for op in tiles.ops:
        region = op.region
        if region is None:
            continue
        owner = task_of[op.id]
        if owner is None:
            raise KeyError(f"tile op {op.id} is in no subgraph")
        t: int = owner
        kind = op.op  # `accesses(op)`, its two common cases inline
        if kind == "load":
            reads[t].append(region)
            b = region.buffer
            if b >= first_copy:  # a copy's tile: read after its one write, the only conflict
                w = writer[b]
                if w is not owner:
                    preds[t].add(w)
                continue
            if b not in written:
                continue  # nothing writes this buffer (a read-only parameter): no conflicts
            found = seen[b].visit(flatten(region) if b in reshaped else region, owner, False)  # through a reshape
            if found:
                preds[t] |= found
            continue
        if kind == "store" and region.buffer >= first_copy:  # a copy's one write, before any read of it
            writes[t].append(region)
            writer[region.buffer] = owner
            continue
        for r, is_write in ([(region, True)] if kind == "store" else accesses(op)):
            (writes if is_write else reads)[t].append(r)
            b = r.buffer
            if b not in written:
                continue  # nothing writes this buffer (a read-only parameter): no conflicts
            found = seen[b].visit(flatten(r) if b in reshaped else r, owner, is_write)  # through a reshape
            if found:
                preds[t] |= found
    arrows: Mapping[int, Set[int]] = preds
    if facts is not None and facts.depends is not None:  # partition's arrows, and the copies' found here
        arrows = _joined(facts.depends, preds)
    order = _topological(subgraphs, arrows)
    renumbered = order != list(range(len(order)))  # (else every id stays: no map, no lookups per arrow)
    new_id = {sg_id: k for k, sg_id in enumerate(order)}
    by_id = {sg.id: sg for sg in subgraphs}
    ops = ops_by_id(tiles)
    tasks = []
    leaf, core, instance, coords, task_preds = [], [], [], [], []
    task_reads: list[tuple[Region, ...]] = []
    task_writes: list[tuple[Region, ...]] = []
    # an arrow set -> its sorted tuple, by identity: partition's sets are often one object shared by many tasks (Kimi's
    # block attention, edited: 32 k matmuls, 128 distinct sets of ~256 arrows), sorted once and the tuple shared
    # (every set is alive in `arrows` meanwhile, so no identity is reused)
    sorted_of: dict[int, tuple[int, ...]] = {}
    for sg_id in order:
        sg = by_id[sg_id]
        inst = tiles.instances[sg.instance]
        coord: tuple[int, ...] = ()  # its first compute op's (a loop: a generator is slow compiled)
        for i in sg.ops:
            o = ops[i]
            if o.op != "load" and o.op != "store":
                coord = o.coord
                break
        rs, ws = tuple(reads[sg_id]), tuple(writes[sg_id])
        a = arrows[sg_id]
        ps = sorted_of.get(id(a))  # type: ignore[assignment]
        if ps is None:
            ps = sorted_of[id(a)] = tuple(sorted([new_id[p] for p in a])) if renumbered else tuple(sorted(a))
        tasks.append(Task(new_id[sg_id], sg_id, sg.leaf, sg.core, sg.instance, inst.root, coord, rs, ws, ps))
        leaf.append(sg.leaf)
        core.append(sg.core)
        instance.append(sg.instance)
        coords.append(coord)
        task_preds.append(ps)
        task_reads.append(rs)
        task_writes.append(ws)
    roots = tuple(sorted({-1} | {i.root for i in tiles.instances}))
    return ExecGraph(tuple(tasks), roots, exec_columns(leaf, core, instance, coords, task_preds, task_reads,
                                                       task_writes, first_copy if facts is not None else -1))


def _joined(depends: Mapping[int, Set[int]], more: Mapping[int, set[int]]) -> defaultdict[int, Set[int]]:
    """Each task's arrows of both (a set of `depends` is shared, not copied, where `more` adds none)."""
    out: defaultdict[int, Set[int]] = defaultdict(frozenset, depends)
    for t, ps in more.items():
        base = out.get(t)
        out[t] = ps if base is None else base | ps
    return out


def _offsets(lengths: list[int]) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


_BUFFER = attrgetter("buffer")


def exec_columns(leaf: list[int], core: list[str], instance: list[int], coord: list[tuple[int, ...]],
                 preds: list[tuple[int, ...]], reads: Sequence[tuple[Region, ...]],
                 writes: Sequence[tuple[Region, ...]], first_copy: int = -1) -> ExecColumns:
    """The columns of tasks 0..n-1 given field by field (`ExecColumns`). `first_copy` >= 0: buffers from
    it on are copies' (`CopyFacts`), each accessed as one region, whose id follows from its buffer
    (array work: only the other regions are interned one by one)."""
    pred_len = list(map(len, preds))
    regions = list(chain(chain.from_iterable(reads), chain.from_iterable(writes)))
    if first_copy < 0:
        ids, reg_buffer, reg_elems = intern_regions(regions)
        reg = np.array(ids, dtype=np.int64)
    else:
        reg, reg_buffer, reg_elems = _copy_ids(regions, first_copy)
    nrd = sum(map(len, reads))
    return ExecColumns(
        np.array(leaf, dtype=np.int64), np.array([CORE_CODES.get(c, -1) for c in core], dtype=np.int64),
        np.array(instance, dtype=np.int64), _offsets(pred_len),
        _flat(preds, sum(pred_len)),
        _offsets(list(map(len, reads))), reg[:nrd],
        _offsets(list(map(len, writes))), reg[nrd:],
        reg_buffer, reg_elems,
        coord, preds, instance)


def _flat(preds: list[tuple[int, ...]], count: int) -> np.ndarray:
    """The predecessor tuples end to end, as int64: each distinct tuple object made an array once and the arrays
    joined when tasks share a few (`build` shares a sorted tuple among the tasks of one arrow set: Kimi's block
    attention, edited, 8.4 M arrows in 128 tuples), else read in one pass."""
    distinct = {id(p): p for p in preds}
    if not preds or len(distinct) * 8 > len(preds):  # mostly distinct: one pass over them all is cheaper
        return np.fromiter(chain.from_iterable(preds), dtype=np.int64, count=count)
    arrays = {k: np.array(p, dtype=np.int64) for k, p in distinct.items()}
    return np.concatenate([arrays[id(p)] for p in preds])


def _copy_ids(regions: list[Region], first_copy: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`intern_regions(regions)` (ids as an array) where every region of a buffer >= `first_copy` is the
    same: those are numbered by buffer, the others interned, and all renumbered in order of first
    appearance by array work."""
    n = len(regions)
    buffers = np.fromiter(map(_BUFFER, regions), dtype=np.int64, count=n)
    is_copy = buffers >= first_copy
    if not is_copy.any():
        ids, reg_buffer, reg_elems = intern_regions(regions)
        return np.array(ids, dtype=np.int64), reg_buffer, reg_elems
    ids, other_buffer, other_elems = intern_regions(compress(regions, (~is_copy).tolist()))
    k = len(other_buffer)
    copy_buffers, at = np.unique(buffers[is_copy], return_index=True)  # each copy's buffer, once
    where = np.flatnonzero(is_copy)
    prov = np.empty(n, dtype=np.int64)  # provisional ids: the others' first, then the copies' by buffer
    prov[~is_copy] = ids
    prov[is_copy] = k + np.searchsorted(copy_buffers, buffers[is_copy])
    m = k + len(copy_buffers)
    first = np.full(m, n, dtype=np.int64)
    np.minimum.at(first, prov, np.arange(n, dtype=np.int64))
    order = np.argsort(first, kind="stable")  # provisional ids in order of first appearance
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m, dtype=np.int64)
    copy_elems = np.array([math.prod(regions[i].shape) for i in where[at].tolist()], dtype=np.int64)
    return (rank[prov], np.concatenate([other_buffer, copy_buffers])[order],
            np.concatenate([other_elems, copy_elems])[order])


def _topological(subgraphs: tuple[Subgraph, ...], preds: Mapping[int, Set[int]]) -> list[int]:
    """Kahn's algorithm, lowest subgraph id first; a cycle is a partition bug. When the subgraphs are numbered
    0..n-1 and every dependency is on a lower number (the common case: Kimi's block attention, 4.2 M arrows),
    that order is 0..n-1 (by induction: each next number is ready, and the lowest), found without the heap."""
    n = len(subgraphs)
    ids = [sg.id for sg in subgraphs]
    at: dict[int, int] | None = None  # id -> position, unless each id is its position (lists indexed by id)
    for k, sg_id in enumerate(ids):
        if sg_id != k:
            at = {sg_id: k for k, sg_id in enumerate(ids)}
            break
    if at is None and _lower(preds):
        return ids
    indeg = [len(preds.get(sg_id, ())) for sg_id in ids]
    succs: list[list[int]] = [[] for _ in ids]
    for t, ps in preds.items():
        for p in ps:
            succs[p if at is None else at[p]].append(t)
    if at is None:
        order = _lowest_ready_first(succs, indeg)
    else:
        ready = [sg_id for sg_id, d in zip(ids, indeg) if d == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            t = heapq.heappop(ready)
            order.append(t)
            for s in succs[at[t]]:
                k = at[s]
                left = indeg[k] = indeg[k] - 1
                if left == 0:
                    heapq.heappush(ready, s)
    if len(order) != n:
        stuck = sorted(sg_id for sg_id, d in zip(ids, indeg) if d > 0)[:5]
        raise RuntimeError(f"the task graph has a cycle through subgraphs {stuck}")
    return order


def _lowest_ready_first(succs: list[list[int]], indeg: list[int]) -> list[int]:
    """Kahn's order of tasks 0..n-1, the lowest ready task first (`indeg`: each one's arrows in, counted down here),
    with a heap only for the tasks that became ready after a scan in id order passed them: most arrows come from
    lower numbers, so most tasks are taken by the scan (gated delta rule: 76 k tasks, a few hundred arrows from a
    higher number). The ready tasks are those in the heap and those at or past the scan that have no arrow left in:
    the lowest of them is the heap's top or the scan's next ready task, as a heap of every ready task would give."""
    n = len(indeg)
    order: list[int] = []
    late: list[int] = []  # ready tasks below the scan
    scan = 0  # the tasks from here on have not been passed by the scan
    while True:
        while scan < n and indeg[scan] > 0:
            scan += 1
        if late and (scan >= n or late[0] < scan):
            t = heapq.heappop(late)
        elif scan < n:
            t = scan
            scan += 1
        else:
            return order
        order.append(t)
        for s in succs[t]:
            left = indeg[s] = indeg[s] - 1
            if left == 0 and s < scan:
                heapq.heappush(late, s)


def _lower(preds: Mapping[int, Set[int]]) -> bool:
    """Whether every task's arrows come from lower numbers; each set's highest found once (a set many tasks share is
    one object: `build`)."""
    top: dict[int, int] = {}
    for t, ps in preds.items():
        if ps:
            m = top.get(id(ps))
            if m is None:
                m = top[id(ps)] = max(ps)
            if m >= t:
                return False
    return True


def with_leaves(graph: ExecGraph, subgraphs: tuple[Subgraph, ...]) -> ExecGraph:
    """`graph` with each task's leaf function that of its subgraph in `subgraphs`: `build(tiles, subgraphs)` when
    `graph` is `build(tiles, s)` of subgraphs `s` that differ from these in their leaves only (`leaf_functions`
    builds the graph beside merging the leaves, before it knows them)."""
    leaf_of = {sg.id: sg.leaf for sg in subgraphs}
    tasks = tuple([Task(t.id, t.subgraph, leaf_of[t.subgraph], t.core, t.instance, t.root, t.coord, t.reads, t.writes,
                        t.preds) for t in graph.tasks])
    columns = graph.columns
    if columns is not None:
        columns = dataclasses.replace(columns, leaf=np.fromiter(map(_LEAF, tasks), dtype=np.int64, count=len(tasks)))
    return dataclasses.replace(graph, tasks=tasks, columns=columns)


_LEAF = attrgetter("leaf")


def execute_graph(p: Program, ctx: PassContext) -> Program:
    """Every task (leaf at tile coordinates), its GM reads and writes, and its dependencies (built beside the leaf
    functions when they were merged in a forked child: then only given their leaves here)."""
    assert p.tiles is not None and p.subgraphs is not None
    ahead = take_execute_ahead(p.tiles, p.subgraphs)
    graph = build(p.tiles, p.subgraphs) if ahead is None else with_leaves(ahead, p.subgraphs)
    return dataclasses.replace(p, execute=graph)
