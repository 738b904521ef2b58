"""The tile level's numbers: one pass over the tile ops (counts, bytes moved, depth and width,
unaligned rows, clones, GM round trips: `pypto.compiler.tile_census`, compiled), duplicate loads
per task, peak memory per buffer, and what each tile-shape call covers (`HealthContext.cfg`) and
which call each leaf uses.

Kept apart from the tile rules (`tile_rules.py`) because the later levels need these facts too:
the tile-shape calls per leaf drive every "use set_*_tile_shapes(...)" suggestion.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypto.analysis.health.context import ConfigUse, HealthContext, call_text, rounded
from pypto.compiler.tile_census import census, duplicate_loads
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
    walk = census(list(ops), list(buffers), h.align)  # (one walk over the tile ops: `pypto.compiler.tile_census`)
    kinds: Counter[str] = Counter(walk.kinds)
    per_node: Counter[int] = Counter(walk.per_node)
    by_id = walk.by_id
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
    # (by shape and dtype first: QAT's per-tensor backward has 271 k buffers of a few of each)
    spaces = Counter((b.shape, b.dtype) for b in buffers if b.kind == "workspace")
    workspace = sum(math.prod(shape) * dt.nbytes * n for (shape, dt), n in spaces.items())
    dup = duplicate_loads(list(h.p.subgraphs or ()), by_id)
    h.stats["tile"] = {
        "ops": n_ops, "op_kinds": dict(kinds.most_common()),
        "loads": kinds["load"], "stores": kinds["store"], "matmuls": kinds["matmul"],
        "compute": n_ops - kinds["load"] - kinds["store"],
        "buffers": len(buffers), "buffer_kinds": dict(buf_kinds), "workspace_bytes": workspace,
        "load_bytes": walk.load_bytes, "store_bytes": walk.store_bytes,
        "max_fan_in": walk.max_in, "max_fan_out": walk.max_out, "depth": walk.depth, "width": walk.width,
        "instances": len(tiles.instances),
        "subgraphs": len(h.p.subgraphs or ()),
        "tail_waste": {str(cid): {"call": call_text(c.tc, c.tc.dims), "waste": rounded(c.waste),
                                  "elements": c.elems, "capacity": c.capacity,
                                  "line": (h.config_where(cid) or h.kernel_where()).line}
                       for cid, c in sorted(h.cfg.items())},
        "unaligned_nodes": len(walk.unaligned_nodes),
        "peak_memory": peaks,
        "clones": sum(v[0] for v in walk.clones.values()), "clone_bytes": sum(v[1] for v in walk.clones.values()),
        "round_trips": sum(v[0] for v in walk.round_trips.values()),
        "round_trip_bytes": sum(v[1] for v in walk.round_trips.values()),
        "duplicate_loads": sum(v[0] for v in dup.values()),
        "duplicate_load_bytes": sum(v[1] for v in dup.values()),
    }
    leaf_configs(h)
    return TileFacts(ops, walk.unaligned_nodes, walk.clones, walk.round_trips, dup)


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
