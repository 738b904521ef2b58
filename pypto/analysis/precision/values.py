"""Running a kernel to compare it: every computing node's values, on the reference interpreter or tile by tile.

Both comparisons — a kernel's passes against fp64 (`pypto.analysis.precision.passes`) and two
configurations of a kernel (`pypto.analysis.precision.configs`) — need the same runs: the fp64
reference of a tensor graph (`reference_values`), a tiled program's tiles put back together into
each node's value (`tiled_values`), and each node's source line (`Locator`).

Reference semantics used: the interpreter's `fp64=True` mode keeps every float in fp64,
explicit float casts and assembles into fp16/bf16 buffers included (otherwise the
reference would round wherever the kernel does, and agree with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.analysis.findings import Where
from pypto.compiler.tile_exec import TileExecutor, region_view
from pypto.compiler.tile_ir import TileGraph
from pypto.ir.graph import Graph, Node
from pypto.record import CompileRecord
from pypto.reference.interpreter import Interpreter
from pypto.reference.kernels import Ctx

# ops that only move values: their error is their input's (not compared)
MOVES = frozenset({"param", "carry", "loop", "loop_out", "assume", "view", "assemble", "reshape", "unsqueeze",
                   "transpose", "concat", "expand_clone", "clone", "tensor"})
_TILE_OP_OF = {"full": "fill"}  # a node op whose tiles have another name


@dataclass
class Reference:
    """The fp64 run of a tensor graph: every computing node's values (per occurrence) and the outputs."""

    values: dict[int, list[np.ndarray]]
    outputs: dict[str, np.ndarray]
    order: list[int]  # nodes by first execution


def reference_values(graph: Graph, arrays: Mapping[str, np.ndarray], syms: Mapping[str, int]) -> Reference:
    """Run `graph` on the reference interpreter in fp64 and keep every computing node's values."""
    values: dict[int, list[np.ndarray]] = {}
    order: list[int] = []

    def observe(node: Node, value: Any) -> None:
        if node.op in MOVES:
            return
        got = values.get(node.id)
        if got is None:
            got = values[node.id] = []
            order.append(node.id)
        got.append(np.array(value, copy=True))  # a later assemble may update it in place

    outs = Interpreter(graph, fp64=True, observer=observe).run(arrays, syms)
    return Reference(values, {k: np.array(v, copy=True) for k, v in outs.items()}, order)


class Locator:
    """Node id -> source Where, via the record (a node a pass made: the line it came from)."""

    def __init__(self, record: CompileRecord) -> None:
        self.record = record
        self._cache: dict[int, Where | None] = {}

    def __call__(self, nid: int) -> Where | None:
        if nid not in self._cache:
            try:
                frames = self.record.source_of(nid)
            except KeyError:
                frames = []
            s = frames[0] if frames else None
            self._cache[nid] = None if s is None else Where(s.file, s.line, s.col, s.end_line, s.end_col)
        return self._cache[nid]


def line_of(w: Where | None) -> int:
    """The line number of `w`, 0 when the source is unknown."""
    return w.line if w is not None else 0


@dataclass
class TiledValues:
    """A tiled run's values: per computing node, per instance, the value put back together."""

    values: dict[int, list[tuple[int, np.ndarray]]]  # node -> [(instance, value)], instance order
    done_at: dict[tuple[int, int], int]  # (node, instance) -> index of its last tile op
    order: list[int]  # nodes by first tile op
    outputs: dict[str, np.ndarray]


def _computes(op: Any, node: Node | None) -> bool:
    """Whether tile op `op` computes a tile of its node's value (not a partial, load, store)."""
    if node is None or node.op in MOVES or "partial" in op.attrs:
        return False
    if op.op in ("combine", "combine_arg", "topk_merge"):
        return True
    return bool(op.op == _TILE_OP_OF.get(node.op, node.op))


def tiled_values(graph: Graph, tiles: TileGraph, arrays: Mapping[str, np.ndarray],
                 executor: TileExecutor | None = None) -> TiledValues:
    """Run the tile graph op by op (the executor's reference path) and collect every computing
    node's tiles. A tile's place: its coordinate times the full tile size on each axis (the
    size of the tiles at coordinate 0; tails are smaller and last)."""
    ex = executor if executor is not None and executor.tiles is tiles else TileExecutor(graph, tiles)
    nodes = ex.nodes
    bufs = ex.gm(arrays)
    uses: dict[int, int] = {}
    for o in tiles.ops:
        for i in o.inputs:
            uses[i] = uses.get(i, 0) + 1
    vals: dict[int, np.ndarray] = {}
    parts: dict[tuple[int, int], list[tuple[tuple[int, ...], np.ndarray]]] = {}
    done_at: dict[tuple[int, int], int] = {}
    order: list[int] = []
    seen: set[int] = set()
    ctx = Ctx({}, False)
    with np.errstate(all="ignore"):
        for k, op in enumerate(tiles.ops):
            ex.run_op(op, vals, bufs, ctx)
            node = nodes.get(op.node)
            if _computes(op, node):
                if op.op == "matmul":
                    assert op.region is not None
                    tile = np.array(region_view(bufs, op.region), copy=True)
                else:
                    tile = vals[op.id]
                parts.setdefault((op.node, op.instance), []).append((tuple(op.coord), tile))
                done_at[(op.node, op.instance)] = k
                if op.node not in seen:
                    seen.add(op.node)
                    order.append(op.node)
            for i in op.inputs:
                uses[i] -= 1
                if not uses[i]:
                    vals.pop(i, None)
            if op.id not in uses:
                vals.pop(op.id, None)
    values: dict[int, list[tuple[int, np.ndarray]]] = {}
    for (nid, inst), tl in sorted(parts.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        values.setdefault(nid, []).append((inst, _assemble_tiles(tl)))
    for lst in values.values():
        lst.sort(key=lambda x: x[0])
    return TiledValues(values, done_at, order, ex.outputs(bufs))


def _assemble_tiles(tiles: list[tuple[tuple[int, ...], np.ndarray]]) -> np.ndarray:
    first = tiles[0][1]
    rank = first.ndim
    if rank == 0 or len(tiles) == 1:
        return np.array(tiles[-1][1], copy=True)
    size = [0] * rank
    for coord, t in tiles:
        for a in range(rank):
            if coord[a] == 0:
                size[a] = max(size[a], t.shape[a])
    shape = [0] * rank
    for coord, t in tiles:
        for a in range(rank):
            shape[a] = max(shape[a], coord[a] * size[a] + t.shape[a])
    out = np.zeros(shape, dtype=first.dtype)
    for coord, t in tiles:  # a later tile at the same place (split-k) is the final value
        out[tuple(slice(c * s, c * s + n) for c, s, n in zip(coord, size, t.shape))] = t
    return out


def comparable(got: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The comparable part of a tiled value and the reference's (a tail view's valid part)."""
    if got.shape == want.shape:
        return got, want
    if got.ndim == want.ndim and all(g <= w for g, w in zip(got.shape, want.shape)):
        return got, want[tuple(slice(0, g) for g in got.shape)]
    if got.size == want.size:
        return got.reshape(want.shape), want
    return None
