"""One walk over a tile graph's ops for the health report's tile level, compiled with the compiler's hot modules.

The health report's tile level (`pypto.analysis.health.tile`) counts what the tile graph does: ops per kind and per
tensor node, depth and width, fan-in and fan-out, bytes loaded and stored, nodes with unaligned rows, clones, GM round
trips (a region stored and loaded back in the same loop iteration) and loads repeated within one subgraph. It is a
loop over every tile op (Kimi's block attention: 246 k), the largest part of the report: 0.3 of its 0.4 s in Python,
the forked child that makes it the last to finish an edit's job. Here, typed for mypyc (`pypto.native`), it reads the
ops' native fields directly. The facts are what the Python loop made, in the same order (the report's dicts and
sets iterate as they did).
"""

from __future__ import annotations

import math
from typing import Any

from pypto.compiler.tile_ir import Buffer, Region, Subgraph, TileOp


class Census:
    """What `census` found; see the module doc."""

    def __init__(self) -> None:
        self.by_id: list[Any] = []  # the tile ops by id (None at an unused id)
        self.kinds: dict[str, int] = {}  # op -> count, in order of first use
        self.per_node: dict[int, int] = {}  # tensor node -> tile ops, in order of first use
        self.max_in = 0
        self.max_out = 0
        self.depth = 0  # the longest chain of ops, counted in ops
        self.width = 0  # the most ops at one depth
        self.load_bytes = 0
        self.store_bytes = 0
        self.unaligned_nodes: set[int] = set()
        self.clones: dict[int, list[int]] = {}  # clone node -> [tiles, bytes]
        self.round_trips: dict[int, list[Any]] = {}  # storing node -> [tiles, bytes, reading nodes, buffer kinds]


def census(ops: list[TileOp], buffers: list[Buffer], align: int) -> Census:
    """The facts of `ops` (in program order; ids 0..n-1 in some order) over `buffers`, rows aligned to `align`
    bytes."""
    c = Census()
    size = 0
    for o in ops:
        if o.id >= size:
            size = o.id + 1
    by_id: list[Any] = [None] * size
    # levels and uses as objects: a list typed `int` would make an int object at each store (mypyc boxes them)
    level: list[Any] = [0] * size
    uses: list[Any] = [0] * size
    kinds = c.kinds
    per_node: dict[Any, Any] = {}
    max_in = 0
    load_bytes = 0
    store_bytes = 0
    info: dict[tuple[tuple[int, ...], int], tuple[int, bool]] = {}
    unaligned = c.unaligned_nodes
    clones = c.clones
    stored: dict[Any, tuple[int, int]] = {}  # region stored (not to a workspace) -> (storing node, instance)
    round_trips = c.round_trips
    for o in ops:
        oid: Any = o.id
        by_id[oid] = o
        op = o.op
        kinds[op] = kinds.get(op, 0) + 1
        node: Any = o.node
        per_node[node] = per_node.get(node, 0) + 1
        ins = o.inputs
        lv: Any = 0
        if ins:
            if len(ins) > max_in:
                max_in = len(ins)
            for i in ins:
                uses[i] += 1
                li = level[i]
                if li >= lv:
                    lv = li + 1
        level[oid] = lv
        shape = o.shape
        key = (shape, id(o.dtype))
        got = info.get(key)
        if got is None:
            width = o.dtype.nbytes
            nb = math.prod(shape) * width
            unal = len(shape) > 0 and shape[-1] != 1 and (shape[-1] * width) % align != 0
            got = (nb, unal)
            info[key] = got
        if got[1] and op != "matmul":
            unaligned.add(node)
        if op == "load":
            load_bytes += got[0]
            r = o.region
            if r is not None and stored:
                src = stored.get(_where(r))
                if src is not None and src[0] >= 0 and src[1] == o.instance:  # across iterations, GM is the only way
                    rt = round_trips.get(src[0])
                    if rt is None:
                        rt = [0, 0, set(), set()]
                        round_trips[src[0]] = rt
                    rt[0] += 1
                    rt[1] += got[0]
                    rt[2].add(node)
                    rt[3].add(buffers[r.buffer].kind)
        elif op == "store":
            store_bytes += got[0]
            r = o.region
            if r is not None and buffers[r.buffer].kind != "workspace":
                stored[_where(r)] = (o.node, o.instance)
        elif op == "clone":
            cl = clones.get(node)
            if cl is None:
                cl = [0, 0]
                clones[node] = cl
            cl[0] += 1
            cl[1] += got[0]
    c.by_id = by_id
    c.per_node = per_node
    c.max_in = max_in
    c.max_out = max(uses) if uses else 0
    c.load_bytes = load_bytes
    c.store_bytes = store_bytes
    at: dict[Any, int] = {}  # ops per depth
    deepest = -1
    for o in ops:
        lv = level[o.id]
        at[lv] = at.get(lv, 0) + 1
        if lv > deepest:
            deepest = lv
    c.depth = deepest + 1 if ops else 0
    c.width = max(at.values()) if at else 0
    return c


def _where(r: Region) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    return (r.buffer, r.offset, r.shape, r.layout)


def duplicate_loads(subgraphs: list[Subgraph], by_id: list[Any]) -> dict[int, list[Any]]:
    """Per reading node: [extra loads, their bytes, buffer ids, tasks]: the same GM region loaded again within one
    subgraph."""
    out: dict[int, list[Any]] = {}
    for sg in subgraphs:
        seen: set[Any] = set()
        for oid in sg.ops:
            o: TileOp = by_id[oid]
            r = o.region
            if o.op != "load" or r is None:
                continue
            key = _where(r)
            if key in seen:
                d = out.get(o.node)
                if d is None:
                    d = [0, 0, set(), set()]
                    out[o.node] = d
                d[0] += 1
                d[1] += math.prod(o.shape) * o.dtype.nbytes
                d[2].add(r.buffer)
                d[3].add(sg.id)
            else:
                seen.add(key)
    return out
