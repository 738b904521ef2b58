"""The functional executor: runs the lowered program tile by tile, so what runs is what was compiled.

GM buffers are numpy arrays; each tile op computes one tile with the same numpy kernels
(and the same dtype rules) as the reference interpreter, so a tiled result differs from
the reference only where tiling changes the arithmetic (a reduction summed per tile and
then combined). Tests hold the two within PyPTO's tolerances for every valid tile shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pypto.compiler.tile_ir import Region, TileGraph, TileOp
from pypto.ir.graph import Graph, Node
from pypto.reference.kernels import KERNELS, Ctx

_COMBINE = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}


def _view(bufs: dict[int, np.ndarray], r: Region) -> np.ndarray:
    arr = bufs[r.buffer].reshape(r.layout)
    idx = tuple(slice(o, o + s) for o, s in zip(r.offset, r.shape))
    return arr[idx] if idx else arr[...]  # a 0-d region stays a (writable) view


class TileExecutor:
    def __init__(self, graph: Graph, tiles: TileGraph) -> None:
        self.nodes = graph.by_id()
        self.tiles = tiles

    def run(self, inputs: Mapping[str, np.ndarray], *, fp64: bool = False,
            order: Sequence[int] | None = None) -> dict[str, np.ndarray]:
        """Run every tile op (in program order, or in `order`, a list of op ids)."""
        ctx = Ctx({}, fp64)
        bufs: dict[int, np.ndarray] = {}
        for b in self.tiles.buffers:
            if b.kind == "param":
                bufs[b.id] = np.ascontiguousarray(inputs[b.name]).copy()
            else:
                bufs[b.id] = np.zeros(b.shape, dtype=np.float64 if fp64 and b.dtype.is_float else b.dtype.np)
        vals: dict[int, np.ndarray] = {}
        ops = self.tiles.ops
        if order is not None:
            by_id = {o.id: o for o in ops}
            ops = tuple(by_id[i] for i in order)
        with np.errstate(all="ignore"):
            for op in ops:
                self._op(op, vals, bufs, ctx)
        return {name: _view(bufs, r).copy() for name, r in self.tiles.outputs}  # copy keeps 0-d shapes

    def _op(self, op: TileOp, vals: dict[int, np.ndarray], bufs: dict[int, np.ndarray], ctx: Ctx) -> None:
        kind = op.op
        if kind == "load":
            assert op.region is not None
            vals[op.id] = _view(bufs, op.region).copy()
        elif kind == "store":
            assert op.region is not None
            _view(bufs, op.region)[...] = vals[op.inputs[0]]
        elif kind == "combine":
            fn = _COMBINE[op.attrs["fn"]]
            parts = [ctx.up(vals[i], op.dtype) if op.dtype.is_float else vals[i] for i in op.inputs]
            acc = parts[0]
            for p in parts[1:]:
                acc = fn(acc, p)
            vals[op.id] = ctx.down(acc, op.dtype)
        elif kind == "combine_arg":
            half = len(op.inputs) // 2
            idx = np.stack([vals[i] for i in op.inputs[:half]])
            val = np.stack([vals[i].astype(np.float64) for i in op.inputs[half:]])
            nan = np.isnan(val)
            val = np.where(nan, np.inf if op.attrs["fn"] == "max" else -np.inf, val)  # a NaN wins, as in numpy
            pick = (np.argmax if op.attrs["fn"] == "max" else np.argmin)(val, axis=0)  # first partial wins ties
            vals[op.id] = np.take_along_axis(idx, pick[None], axis=0)[0].astype(op.dtype.np)
        elif kind == "fill":
            vals[op.id] = ctx.down(np.full(op.shape, op.attrs.get("value", 0)), op.dtype)
        elif kind == "arange":
            n = op.shape[0]
            step = op.attrs["step"]
            vals[op.id] = np.arange(op.attrs["first"], op.attrs["first"] + n * step, step)[:n].astype(op.dtype.np)
        elif kind == "bitcast":
            vals[op.id] = np.ascontiguousarray(vals[op.inputs[0]]).view(op.dtype.np)
        elif kind == "expand_clone":
            vals[op.id] = np.broadcast_to(vals[op.inputs[0]], op.shape).copy()
        elif kind == "matmul":
            self._matmul(op, bufs, ctx)
        elif kind in ("amax", "amin") and self.nodes[op.node].op in ("argmax", "argmin"):
            fn = np.max if kind == "amax" else np.min  # an arg-reduction's partial extremum, in its input dtype
            vals[op.id] = fn(vals[op.inputs[0]], axis=op.attrs["dim"], keepdims=op.attrs["keepdim"])
        else:
            node = self.nodes[op.node]
            out = KERNELS[kind](node, [vals[i] for i in op.inputs], ctx)
            if kind in ("argmax", "argmin") and "base" in op.attrs:
                out = out + op.attrs["base"]  # a partial's index within its tile, made global
            vals[op.id] = out

    def _matmul(self, op: TileOp, bufs: dict[int, np.ndarray], ctx: Ctx) -> None:
        node: Node = self.nodes[op.node]
        assert op.region is not None
        out_r = op.region
        a_r, b_r, *extra = op.attrs["inputs"]
        rank = len(out_r.layout)
        rows = slice(out_r.offset[-2], out_r.offset[-2] + op.shape[-2])
        cols = slice(out_r.offset[-1], out_r.offset[-1] + op.shape[-1])
        batch = out_r.offset[:-2]

        def batched(r: Region) -> np.ndarray:
            arr = _view(bufs, r)
            lead = arr.shape[:-2]
            idx = tuple(0 if lead[i] == 1 else batch[len(batch) - len(lead) + i] for i in range(len(lead)))
            return arr[idx + (slice(None), slice(None))]

        a = batched(a_r)
        b = batched(b_r)
        a = a[:, rows] if node.attrs.get("a_trans") else a[rows, :]
        b = b[cols, :] if node.attrs.get("b_trans") else b[:, cols]
        xs = [a, b]
        for r in extra:
            full = np.broadcast_to(_view(bufs, r), out_r.layout)
            xs.append(full[tuple(slice(o, o + 1) for o in batch) + (rows, cols)].reshape(op.shape))
        tile = KERNELS["matmul"](node, xs, ctx)
        _view(bufs, out_r)[...] = tile.reshape(op.shape) if tile.ndim != rank else tile

