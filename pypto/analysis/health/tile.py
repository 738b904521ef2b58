"""The tile level's numbers: one pass over the tile ops (counts, bytes moved, depth and width,
unaligned rows, clones, GM round trips), duplicate loads per task, peak memory per buffer, and
what each tile-shape call covers (`HealthContext.cfg`) and which call each leaf uses.

Kept apart from the tile rules (`tile_rules.py`) because the later levels need these facts too:
the tile-shape calls per leaf drive every "use set_*_tile_shapes(...)" suggestion.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypto.analysis.health.context import ConfigUse, HealthContext, call_text, rounded
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.graph import Node, TensorType
from pypto.ir.ops import OPS

_NO_TILES_OF_THEIR_OWN = frozenset({"view", "tensor", "reshape", "unsqueeze", "concat"})


@dataclass
class TileFacts:
    """What the tile pass found for the tile rules, beyond `h.stats["tile"]`."""

    ops: Sequence[Any]  # the tile ops, in program order
    unaligned_nodes: set[int]  # nodes with a (non-matmul) tile whose rows are not a multiple of the alignment
    clones: Mapping[int, list[int]]  # clone node -> [tiles, bytes]
    round_trips: Mapping[int, list[Any]]  # storing node -> [tiles, bytes, reading nodes, buffer kinds]
    duplicates: Mapping[int, list[Any]]  # reading node -> [extra loads, bytes, buffer ids, tasks]


def _eval_shape(t: TensorType | None, env: Mapping[str, int]) -> tuple[int, ...] | None:
    if t is None:
        return None
    try:
        return tuple(S.evaluate(d, dict(env)) for d in t.shape)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _vec_dtypes(types: Iterable[TensorType | None]) -> set[int]:
    return {t.dtype.nbytes for t in types if t is not None and t.dtype is not DataType.DT_BOOL}


def iteration_shape(h: HealthContext, n: Node) -> tuple[int, ...] | None:
    """The shape an op's tiles cover (its input for a reduction, the copied source for a copy)."""
    kind = OPS[n.op].kind if n.op in OPS else ""
    if kind == "reduce" and n.inputs:
        src = h.nodes.get(n.inputs[0])
        return _eval_shape(src.type if src is not None else None, h.env)
    if n.op == "assemble" and len(n.inputs) > 1:
        src = h.nodes.get(n.inputs[1])
        return _eval_shape(src.type if src is not None else None, h.env)
    if n.op == "transpose" or kind in ("unary", "binary", "where", "create") or n.op in (
            "clone", "expand_clone", "matmul", "full", "arange", "cast"):
        return _eval_shape(n.type, h.env)
    return None


def tile_stats(h: HealthContext) -> TileFacts:
    """The tile graph's stats (`h.stats["tile"]`), `h.cfg`, `h.leaf_cfg`, `h.tile_ops_of` and `h.by_id`;
    returns what the tile rules need besides."""
    tiles = h.p.tiles
    assert tiles is not None
    ops = tiles.ops
    buffers = tiles.buffers
    n_ops = len(ops)
    # tile op ids are 0..n-1 in some order; arrays indexed by id, filled in program (topological) order
    size = max((o.id for o in ops), default=-1) + 1
    by_id: list[Any] = [None] * size
    level = [0] * size
    uses = [0] * size
    kinds: Counter[str] = Counter(o.op for o in ops)
    per_node: Counter[int] = Counter(o.node for o in ops)
    max_in = 0
    load_bytes = store_bytes = 0
    info: dict[tuple[tuple[int, ...], int], tuple[int, bool]] = {}
    unaligned_nodes: set[int] = set()
    clones: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    stored: dict[Any, tuple[int, int]] = {}  # region stored (not to a workspace) -> (storing node, instance)
    round_trips: dict[int, list[Any]] = {}
    align = h.align
    for o in ops:
        by_id[o.id] = o
        ins = o.inputs
        lv = 0
        if ins:
            if len(ins) > max_in:
                max_in = len(ins)
            for i in ins:
                uses[i] += 1
                li = level[i]
                if li >= lv:
                    lv = li + 1
        level[o.id] = lv
        key = (o.shape, id(o.dtype))
        got = info.get(key)
        if got is None:
            nb = math.prod(o.shape) * o.dtype.nbytes
            unal = bool(o.shape) and o.shape[-1] != 1 and (o.shape[-1] * o.dtype.nbytes) % align != 0
            got = info[key] = (nb, unal)
        op = o.op
        if got[1] and op != "matmul":
            unaligned_nodes.add(o.node)
        if op == "load":
            load_bytes += got[0]
            r = o.region
            if r is not None and stored:
                src, inst = stored.get((r.buffer, r.offset, r.shape, r.layout), (-1, -1))
                if src >= 0 and inst == o.instance:  # across loop iterations, GM is the only way
                    rt = round_trips.setdefault(src, [0, 0, set(), set()])
                    rt[0] += 1
                    rt[1] += got[0]
                    rt[2].add(o.node)
                    rt[3].add(buffers[r.buffer].kind)
        elif op == "store":
            store_bytes += got[0]
            r = o.region
            if r is not None and buffers[r.buffer].kind != "workspace":
                stored[(r.buffer, r.offset, r.shape, r.layout)] = (o.node, o.instance)
        elif op == "clone":
            cl = clones[o.node]
            cl[0] += 1
            cl[1] += got[0]
    width = Counter(level) if size == n_ops else Counter(level[o.id] for o in ops)
    h.tile_ops_of = per_node
    h.by_id = by_id
    gather_configs(h, per_node)
    # memory per type (blocks)
    peaks: dict[str, dict[str, Any]] = {}
    for b in h.p.blocks or ():
        caps = dict(b.capacity_bytes)
        for space, peak in b.peak_bytes:
            cur = peaks.get(space)
            if cur is None or peak > cur["peak_bytes"]:
                peaks[space] = {"peak_bytes": peak, "capacity_bytes": caps.get(space, 0),
                                "share": rounded(peak / caps[space]) if caps.get(space) else 0.0, "leaf": b.leaf}
    buf_kinds = Counter(b.kind for b in buffers)
    workspace = sum(math.prod(b.shape) * b.dtype.nbytes for b in buffers if b.kind == "workspace")
    dup = duplicate_loads(h, by_id)
    h.stats["tile"] = {
        "ops": n_ops, "op_kinds": dict(kinds.most_common()),
        "loads": kinds["load"], "stores": kinds["store"], "matmuls": kinds["matmul"],
        "compute": n_ops - kinds["load"] - kinds["store"],
        "buffers": len(buffers), "buffer_kinds": dict(buf_kinds), "workspace_bytes": workspace,
        "load_bytes": load_bytes, "store_bytes": store_bytes,
        "max_fan_in": max_in, "max_fan_out": max(uses, default=0),
        "depth": (max(level) + 1) if level else 0, "width": max(width.values(), default=0),
        "instances": len(tiles.instances),
        "subgraphs": len(h.p.subgraphs or ()),
        "tail_waste": {str(cid): {"call": call_text(c.tc, c.tc.dims), "waste": rounded(c.waste),
                                  "elements": c.elems, "capacity": c.capacity,
                                  "line": (h.config_where(cid) or h.kernel_where()).line}
                       for cid, c in sorted(h.cfg.items())},
        "unaligned_nodes": len(unaligned_nodes),
        "peak_memory": peaks,
        "clones": sum(v[0] for v in clones.values()), "clone_bytes": sum(v[1] for v in clones.values()),
        "round_trips": sum(v[0] for v in round_trips.values()),
        "round_trip_bytes": sum(v[1] for v in round_trips.values()),
        "duplicate_loads": sum(v[0] for v in dup.values()),
        "duplicate_load_bytes": sum(v[1] for v in dup.values()),
    }
    leaf_configs(h)
    return TileFacts(ops, unaligned_nodes, clones, round_trips, dup)


def gather_configs(h: HealthContext, tile_ops_of: Mapping[int, int]) -> None:
    """Per tile-shape call: the nodes using it, their tile grids' elements and capacity, and the
    extents of each axis (with and without a tail)."""
    for nid, count in tile_ops_of.items():
        n = h.nodes.get(nid)
        if n is None or n.tile is None or count == 0 or n.op in _NO_TILES_OF_THEIR_OWN:
            continue
        tc = h.configs.get(n.tile)
        if tc is None:
            continue
        shape = iteration_shape(h, n)
        if not shape:
            continue
        if tc.kind == "vec":
            dims = tuple(tc.dims)
            if n.op == "matmul" or len(dims) < len(shape):
                continue
            tiles = [(i, d, dims[i]) for i, d in enumerate(shape)]  # entry i tiles axis i
            c = h.cfg.setdefault(tc.id, ConfigUse(tc))
            c.nbytes |= _vec_dtypes([n.type, *(h.nodes[i].type for i in n.inputs if i in h.nodes)])
        else:
            if n.op != "matmul" or len(shape) < 2:
                continue
            m, _k, nn, _split = tc.dims
            tiles = [(0, shape[-2], m[-1]), (2, shape[-1], nn[-1])]
            c = h.cfg.setdefault(tc.id, ConfigUse(tc))
        c.nodes.append(nid)
        elems, cap = 1, 1
        for j, d, t in tiles:
            elems *= d
            cap *= d if d <= t else math.ceil(d / t) * t
            c.axes[j].add(d)
            if d > t and d % t:
                c.tails[j].add(d)
        c.elems += elems
        c.capacity += cap


def duplicate_loads(h: HealthContext, by_id: Sequence[Any]) -> dict[int, list[Any]]:
    """Per reading node: [extra loads, their bytes, buffer ids, tasks]: the same GM region loaded
    again within one subgraph."""
    out: dict[int, list[Any]] = {}
    for sg in h.p.subgraphs or ():
        seen: set[Any] = set()
        for oid in sg.ops:
            o = by_id[oid]
            if o.op != "load" or o.region is None:
                continue
            r = o.region
            key = (r.buffer, r.offset, r.shape, r.layout)
            if key in seen:
                d = out.get(o.node)
                if d is None:
                    d = out[o.node] = [0, 0, set(), set()]
                d[0] += 1
                d[1] += math.prod(o.shape) * o.dtype.nbytes
                d[2].add(r.buffer)
                d[3].add(sg.id)
            else:
                seen.add(key)
    return out


def leaf_configs(h: HealthContext) -> None:
    """Each leaf's tile-shape call: the one most of its nodes use (vec for AIV, cube for AIC)."""
    kind_of = {"AIV": "vec", "AIC": "cube"}
    for lf in h.p.leaves or ():
        votes: Counter[int] = Counter()
        for nid in lf.nodes:
            n = h.nodes.get(nid)
            if n is not None and n.tile is not None and n.tile in h.configs and \
                    h.configs[n.tile].kind == kind_of.get(lf.core, "vec"):
                votes[n.tile] += 1
        h.leaf_cfg[lf.id] = votes.most_common(1)[0][0] if votes else None
        cid = h.leaf_cfg[lf.id]
        if cid is not None and cid in h.cfg:
            h.cfg[cid].tasks += lf.count
