"""Tile expansion: every tensor op becomes tile ops, by the tile shapes in force at its line.

The tensor graph is walked once with the concrete values of the dynamic dims. Loops are
unrolled into root-function instances (one per iteration). Each value has a placement:
in GM (a region of a buffer — parameters, `pypto.tensor` locals, views and assembles are
regions, never copies) or as tiles (the output grid of a vector op). A consumer tile
that lines up with a producer tile uses it directly; one that does not (another tiling,
another root function, a reshape) reads it back from GM, after the producer's tiles are
stored to a workspace. Tails are smaller tiles; broadcast inputs use their single tile;
a reduction whose axis spans several tiles makes one partial per tile and one combine.
Matmul results go to GM (A2/A3 has no L0C -> UB path).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pypto.compiler import stamp
from pypto.compiler.tile_ir import Buffer, Instance, Region, TileGraph, TileOp
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError, window_message
from pypto.ir.graph import Graph, Node
from pypto.ir.ops import GATHERMASK_PATTERNS, OPS
from pypto.reference.kernels import valid_common_shape, view_extent
from pypto.tracing.tiling import whole_slice

COMBINE = {"sum": "add", "amax": "max", "amin": "min", "prod": "mul"}
ELEMENTWISE_KINDS = ("unary", "binary", "where")
DEFAULT_CUBE = ((128, 128), (64, 64), (128, 128))
# the most bytes of one tile of a copy the compiler adds where no vec tile shape is in force (a loop's carried
# value copied into a buffer of its own): a third of the A2/A3 UB, so the copy's loads double-buffer. A whole
# [1, 128, 512] fp32 state in one tile (DeepSeek V4's compressor, a run-time `if`) was a 133 % UB Error of ours.
COPY_TILE_BYTES = 65_536


@dataclass
class Tiles:
    instance: int
    shape: tuple[int, ...]
    tile: tuple[int, ...]
    ids: dict[tuple[int, ...], int]  # tile coordinates -> tile op id
    at: dict[tuple[int, ...], int] = field(init=False)  # tile offset -> tile op id

    def __post_init__(self) -> None:
        if len(self.tile) == 2 and all(len(c) == 2 for c in self.ids):  # the common rank, spelled out
            a, b = self.tile
            self.at = {(c[0] * a, c[1] * b): tid for c, tid in self.ids.items()}
            return
        self.at = {tuple(c * t for c, t in zip(coord, self.tile)): tid for coord, tid in self.ids.items()}


@dataclass
class InGM:
    region: Region
    seen: int | None = None  # a view: how many writes its buffer had when it was taken

Placement = Tiles | InGM


Cell = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # (coord, offset, tile shape)
GRIDS_KEPT = 1024  # distinct (shape, tile) grids of at most SMALL_GRID tiles kept (gated delta rule cuts 59)
SMALL_GRID = 64
_GRIDS: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[Cell, ...]] = {}


def grid(shape: tuple[int, ...], tile: tuple[int, ...]) -> Iterable[Cell]:
    """(coord, offset, tile shape) of every tile of `shape` cut by `tile` (tails smaller). A small grid is made once
    per (shape, tile) and kept (its tuples are shared by the tile ops made from it: they are immutable): a loop's
    iterations cut the same few shapes again and again, and making the grid cost more than using it (gated delta
    rule cuts 59 distinct grids 50,176 times, 4 tiles each on average: its tile expansion 1.89 -> 1.30 s)."""
    key = (shape, tile)
    known = _GRIDS.get(key)
    if known is not None:
        return known
    cells = _grid(shape, tile)
    if math.prod(max(1, -(-s // t)) for s, t in zip(shape, tile)) > SMALL_GRID:
        return cells
    if len(_GRIDS) >= GRIDS_KEPT:
        _GRIDS.clear()
    known = _GRIDS[key] = tuple(cells)
    return known


def _grid(shape: tuple[int, ...], tile: tuple[int, ...]) -> Iterator[Cell]:
    counts = [max(1, math.ceil(s / t)) for s, t in zip(shape, tile)]
    offsets = [[c * t for c in range(n)] for n, t in zip(counts, tile)]
    sizes = [[min(t, s - o) for o in offs] for offs, t, s in zip(offsets, tile, shape)]
    # three products over the axes, in step: coordinates, offsets and shapes of the same tiles
    return zip(itertools.product(*(range(n) for n in counts)), itertools.product(*offsets), itertools.product(*sizes))


class Expander:
    def __init__(self, graph: Graph, bindings: Mapping[str, int]) -> None:
        self.graph = graph
        self.env = dict(bindings)
        self.place: dict[int, Placement] = {}
        self.ops: list[TileOp] = []
        self.buffers: list[Buffer] = []
        self.instances: list[Instance] = [Instance(0, -1, ())]
        self.notes: list[tuple[str, Node]] = []  # (message, node): diagnostics for the pass
        self.warnings: list[tuple[str, Node]] = []  # (message, node): warnings for the pass
        self.writes: dict[int, list[tuple[Node, Region]]] = {}  # buffer -> assembles into it, in order
        self._stale_noted: set[tuple[int, int]] = set()
        self._untiled_noted: set[int] = set()
        self._clipped_noted: set[int] = set()
        self.loop_outs: dict[int, list[Node]] = {}
        self.matmul_tiles: dict[int, list[int]] = {}  # a matmul's workspace buffer -> its tile ops
        self.uses: dict[int, int] = {}  # value -> how many inputs (and outputs) name it
        for _, v in graph.outputs:
            self.uses[v] = self.uses.get(v, 0) + 1
        for m in graph.walk():
            for v in (*m.inputs, *(v for _, v in (m.body.outputs if m.body is not None else ()))):
                self.uses[v] = self.uses.get(v, 0) + 1
        for m in graph.walk():
            if m.op == "loop_out":
                self.loop_outs.setdefault(m.inputs[0], []).append(m)
        self.last_user: dict[int, int] = {}
        _last_users(graph, self.last_user)
        self.path: dict[int, tuple[int, ...]] = {}  # node -> its index in its graph, after its loops'
        _paths(graph, (), self.path)
        self.types = {m.id: m.type for m in graph.walk() if m.type is not None}
        self.sharers: dict[int, list[int]] = {}  # buffer -> values a reshape placed on it (no copy)
        # what an iteration of an innermost loop did besides making tile ops and buffers (`pypto.compiler.stamp`
        # reads it to stamp the next iterations): None outside one
        self.journal: list[tuple[Any, ...]] | None = None
        self.clips = 0  # view windows clipped to their input so far (noted once per view, counted each time)
        self.stale = 0  # stale-view candidates met so far (warned once per pair, counted each time)
        self.bodies: dict[int, stamp.Body | None] = {}  # loop node id -> its body's form (None: not stamped)

    # ---- helpers --------------------------------------------------------------------------------

    def shape(self, n: Node) -> tuple[int, ...]:
        assert n.type is not None
        return tuple(S.evaluate(d, self.env) for d in n.type.shape)

    def shape_of(self, value: int) -> tuple[int, ...]:
        p = self.place[value]
        return p.shape if isinstance(p, Tiles) else p.region.shape

    def new(self, op: str, node: Node, inst: int, coord: tuple[int, ...], shape: tuple[int, ...],
            dtype: DataType, inputs: tuple[int, ...] = (), region: Region | None = None,
            attrs: dict[str, Any] | None = None) -> int:
        tid = len(self.ops)
        self.ops.append(TileOp(tid, op, node.id, inst, coord, shape, dtype, inputs, region, attrs or None))
        return tid

    def buffer(self, shape: tuple[int, ...], dtype: DataType, kind: str, name: str, node: int) -> Region:
        bid = len(self.buffers)
        self.buffers.append(Buffer(bid, shape, dtype, kind, name, node))
        return Region(bid, shape, (0,) * len(shape), shape)

    def tile_of(self, n: Node, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The vec tile applied to an op of this shape: the config's leading entries, one per axis (PyPTO
        reads entry i for axis i; a config with more entries than the op's rank leaves its last ones unused)."""
        if n.tile is None or self.graph.tile_configs[n.tile].kind != "vec":
            if n.id not in self._untiled_noted and len(shape) > 0:
                self._untiled_noted.add(n.id)
                self.notes.append((f"no set_vec_tile_shapes in force for {n.op}: one tile covers the whole "
                                   f"{list(shape)} tensor", n))
            return tuple(max(1, s) for s in shape)
        dims = tuple(self.graph.tile_configs[n.tile].dims)
        if len(dims) < len(shape):  # a copy of a higher-rank source (a reshape's input): one row per leading index
            dims = (1,) * (len(shape) - len(dims)) + dims
        return dims[:len(shape)]

    def owns(self, value: int, node: Node) -> bool:
        """Whether `node` may write into `value`'s buffer in place: it is the value's last user in
        the value's own graph (a value read again later, or by every iteration of a loop it is
        not carried by, keeps its data: common subexpression elimination merges equal `full`s
        that different assembles then fill, e.g. two `fillpad`s of the same shape)."""
        if self.last_user.get(value) != node.id or node.inputs.count(value) != 1:
            return False
        p = self.place[value]
        return isinstance(p, Tiles) or all(v == value or self.dead_after(v, node)
                                           for v in self.sharers.get(p.region.buffer, ()))

    def dead_after(self, value: int, node: Node) -> bool:
        """Whether nothing reads `value` once `node` has run (conservative: a loop that reads it
        and holds `node` reads it again). A value of a loop body that does not hold `node` is
        dead: that loop ran before."""
        last = self.last_user.get(value)
        if last is None:
            return True
        if last == -1 or last == node.id:
            return False
        a, b = self.path[last], self.path[node.id]
        if len(b) < len(a) or b[:len(a) - 1] != a[:-1]:
            return True
        return a[-1] < b[len(a) - 1]

    def writable(self, value: int, node: Node, inst: int) -> Region:
        """Where `node` may write `value`'s data: its own GM when it owns it, else a fresh copy."""
        if self.owns(value, node):
            return self.gm(value, node)
        p = self.place[value]
        dtype = self.ops[next(iter(p.ids.values()))].dtype if isinstance(p, Tiles) \
            else self.buffers[p.region.buffer].dtype
        copy = self.buffer(self.shape_of(value), dtype, "workspace", f"cp{value}", node.id)
        self.copy_into(value, copy, node, inst)
        return copy

    def materialize(self, value: int, node: Node) -> InGM:
        """Store a value's tiles into a fresh GM workspace (once) and place it there."""
        p = self.place[value]
        if isinstance(p, InGM):
            return p
        dtype = self.ops[next(iter(p.ids.values()))].dtype
        region = self.buffer(p.shape, dtype, "workspace", f"ws{value}", value)
        for coord, tid in p.ids.items():
            t = self.ops[tid]
            off = tuple(c * s for c, s in zip(coord, p.tile))
            self.new("store", node, p.instance, coord, t.shape, dtype, (tid,), region.sub(off, t.shape))
        placed = InGM(region)
        self.place[value] = placed
        return placed

    def gm(self, value: int, node: Node) -> Region:
        placed = self.materialize(value, node)
        if placed.seen is not None:
            self.check_stale_view(value, placed, node)
        return placed.region

    def check_stale_view(self, value: int, placed: InGM, node: Node) -> None:
        """A view taken before its buffer was written through another name: the device reads
        the new data (a view is an alias), the reference semantics the old (SSA). Say so."""
        r = placed.region
        for writer, w in self.writes.get(r.buffer, [])[placed.seen:]:
            overlap = w.layout != r.layout or all(
                a < b + m and b < a + n for a, n, b, m in zip(r.offset, r.shape, w.offset, w.shape))
            if overlap:
                self.stale += 1
            if overlap and (value, writer.id) not in self._stale_noted:
                self._stale_noted.add((value, writer.id))
                line = writer.loc.span.line if writer.loc.span else "?"
                self.warnings.append((f"{node.op} reads a view of {self.buffers[r.buffer].name!r} taken before line "
                                      f"{line} wrote into it: on the device the view sees the new data; take "
                                      f"the view after the write, or clone it first", node))

    def tile_for(self, value: int, off: tuple[int, ...], shp: tuple[int, ...], node: Node, inst: int) -> int:
        """A tile op holding exactly [off, off + shp) of `value` in root instance `inst`."""
        p = self.place[value]
        if p.__class__ is InGM and p.seen is None:
            region = p.region  # what self.gm gives, without its calls
        else:
            if isinstance(p, Tiles) and p.instance == inst:
                tid = p.at.get(off)
                if tid is not None and self.ops[tid].shape == shp:
                    return tid
            region = self.gm(value, node)
        if len(off) == 2 == len(shp):
            coord: tuple[int, ...] = (off[0] // max(1, shp[0]), off[1] // max(1, shp[1]))
        else:
            coord = tuple(o // max(1, s) for o, s in zip(off, shp))
        tid = len(self.ops)
        self.ops.append(TileOp(tid, "load", node.id, inst, coord, shp, self.buffers[region.buffer].dtype, (),
                                region.sub(off, shp)))
        return tid

    def check_window(self, node: Node, region: Region, off: tuple[int, ...], shp: tuple[int, ...], what: str) -> None:
        for axis, (o, s, n) in enumerate(zip(off, shp, region.shape)):
            if o < 0 or o + s > n:
                raise PyptoError(window_message(what, axis, off, shp, n), node.loc)

    # ---- the walk -----------------------------------------------------------------------------

    def run(self) -> TileGraph:
        self.block(self.graph, 0)
        outputs = []
        for name, v in self.graph.outputs:
            outputs.append((name, self.output(name, v)))
        return TileGraph(tuple(self.buffers), tuple(self.ops), tuple(self.instances), tuple(outputs))

    def output(self, name: str, value: int) -> Region:
        params = {p.attrs["name"]: p for p in self.graph.params()}
        node = self.graph.by_id()[value]
        if name in params:
            target = self.place[params[name].id]
            assert isinstance(target, InGM)
            p = self.place[value]
            if not (isinstance(p, InGM) and p.region == target.region):
                self.copy_into(value, target.region, node, 0)
            return target.region
        p = self.materialize(value, node)
        if p.region.whole:
            return p.region
        out = self.buffer(p.region.shape, self.buffers[p.region.buffer].dtype, "output", name, value)
        self.copy_into(value, out, node, 0)
        return out

    def copy_into(self, value: int, target: Region, node: Node, inst: int) -> None:
        """Write all of `value` into `target` (same shape), tile by tile."""
        p = self.place[value]
        if isinstance(p, Tiles) and p.instance == inst:
            ops, tile, nid = self.ops, p.tile, node.id
            for coord, tid in p.ids.items():
                if len(coord) == 2 == len(tile):
                    off: tuple[int, ...] = (coord[0] * tile[0], coord[1] * tile[1])
                else:
                    off = tuple(c * t for c, t in zip(coord, tile))
                made = ops[tid]
                ops.append(TileOp(len(ops), "store", nid, inst, coord, made.shape, made.dtype, (tid,),
                                   target.sub(off, made.shape)))  # self.new(...), inline
            return
        src = self.gm(value, node)
        tile = self.tile_of(node, src.shape) if node.tile is not None \
            else copy_tile(src.shape, self.buffers[src.buffer].dtype.nbytes)
        for coord, off, shp in grid(src.shape, tile):
            lt = self.new("load", node, inst, coord, shp, self.buffers[src.buffer].dtype, (), src.sub(off, shp))
            self.new("store", node, inst, coord, shp, self.buffers[src.buffer].dtype, (lt,), target.sub(off, shp))

    def block(self, g: Graph, inst: int) -> None:
        for n in g.nodes:
            self.node(n, inst)

    def node(self, n: Node, inst: int) -> None:
        try:
            self._node(n, inst)
        except S.ReadOutOfRange as e:
            raise PyptoError(e.message, n.loc) from None

    def _node(self, n: Node, inst: int) -> None:
        op = n.op
        kind = OPS[op].kind
        if op == "param":
            shape = self.shape(n)
            self.place[n.id] = InGM(self.buffer(shape, n.type.dtype, "param", n.attrs["name"], n.id))  # type: ignore[union-attr]
        elif op == "assume":
            a, b = S.evaluate(n.attrs["lhs"], self.env), S.evaluate(n.attrs["rhs"], self.env)
            if a != b:
                raise PyptoError(f"{n.attrs.get('what', 'shape check')}: {S.to_str(n.attrs['lhs'])} = {a} but "
                                 f"{S.to_str(n.attrs['rhs'])} = {b} in this call", n.loc)
        elif op == "loop":
            self.loop(n, inst)
        elif op in ("carry", "loop_out"):
            pass  # placed by loop()
        elif kind in ELEMENTWISE_KINDS or op in ("clone", "expand_clone"):
            self.elementwise(n, inst)
        elif kind == "reduce":
            self.reduce(n, inst)
        elif op == "gathermask":
            self.gathermask(n, inst)
        elif kind == "index":
            self.index_op(n, inst)
        elif op == "transpose":
            self.transpose(n, inst)
        elif op == "matmul":
            self.matmul(n, inst)
        elif op == "view":
            self.view(n, inst)
        elif op == "assemble":
            self.assemble(n, inst)
        elif op in ("reshape", "unsqueeze"):
            self.reshape(n, inst)
        elif op == "concat":
            self.concat(n, inst)
        elif op == "tensor":
            self.place[n.id] = InGM(self.buffer(self.shape(n), n.attrs["dtype"], "local", n.name or f"t{n.id}", n.id))
        elif op in ("full", "arange"):
            self.create(n, inst)
        else:
            raise PyptoError(f"{op} has no tile lowering yet", n.loc)

    # ---- lowerings --------------------------------------------------------------------------------

    def elementwise(self, n: Node, inst: int) -> None:
        assert n.type is not None
        in_shapes = [self.shape_of(v) for v in n.inputs]
        # a tail view (valid_shape) is smaller than its declared type: the data decides (the part
        # every operand has, where a tail view meets a whole tensor)
        shape = valid_common_shape(in_shapes) if in_shapes and n.op != "expand_clone" else self.shape(n)
        tile = self.tile_of(n, shape)
        ids = {}
        rank = len(shape)
        # per input: its leading axes skipped (k) and which of its axes follow the output's (not broadcast)
        plans = []
        for v, vs in zip(n.inputs, in_shapes):
            k = rank - len(vs)
            kept = tuple(not (vs[i] == 1 and shape[i + k] != 1) for i in range(len(vs)))
            plans.append((v, k, kept, k == 0 and all(kept)))
        ops, place, op, nid, dtype, attrs = self.ops, self.place, n.op, n.id, n.type.dtype, n.attrs or None
        for coord, off, shp in grid(shape, tile):
            srcs = []
            for v, k, kept, aligned in plans:
                if aligned:
                    p = place[v]  # tile_for, its common case inline: the input's tile at the same place
                    if p.__class__ is Tiles and p.instance == inst:
                        tid = p.at.get(off)
                        if tid is not None and ops[tid].shape == shp:
                            srcs.append(tid)
                            continue
                    srcs.append(self.tile_for(v, off, shp, n, inst))
                    continue
                if k == 0 and len(kept) == 2:  # the common case of the comprehensions below, spelled out
                    k0, k1 = kept
                    roff: tuple[int, ...] = (off[0] if k0 else 0, off[1] if k1 else 0)
                    rshp: tuple[int, ...] = (shp[0] if k0 else 1, shp[1] if k1 else 1)
                else:
                    roff = tuple([off[i + k] if keep else 0 for i, keep in enumerate(kept)])
                    rshp = tuple([shp[i + k] if keep else 1 for i, keep in enumerate(kept)])
                srcs.append(self.tile_for(v, roff, rshp, n, inst))
            tid = ids[coord] = len(ops)
            ops.append(TileOp(tid, op, nid, inst, coord, shp, dtype, tuple(srcs), None, attrs))
        self.place[n.id] = Tiles(inst, shape, tile, ids)

    def index_op(self, n: Node, inst: int) -> None:
        """gather / scatter / topk: tiles cut every axis but `dim`, which each tile holds whole (as
        PyPTO requires), so positions along it are the tensor's own. Each input's tile is the same
        window on the other axes, clipped to that input's extent. index_select (its API page): the
        tile cuts the result on every axis, `dim` by cutting the index; the table stays in GM, each
        tile op reading the rows its index window names."""
        assert n.type is not None
        if n.op == "scatter_update":
            self.scatter_update(n, inst)
            return
        if n.op == "topk" and self.merge_sort(n, inst):
            return
        d = n.attrs["dim"]
        shapes = [self.shape_of(v) for v in n.inputs]
        if n.op == "gather":
            shape = shapes[1]
        elif n.op == "topk":
            shape = tuple(n.attrs["k"] if i == d else s for i, s in enumerate(shapes[0]))
        elif n.op == "index_select":
            shape = tuple(shapes[1][0] if i == d else s for i, s in enumerate(shapes[0]))
        else:
            shape = shapes[0]
        tile = self.tile_of(n, shape)
        if n.op != "index_select":  # its tile cuts the result on every axis, `dim` by cutting the index
            tile = tuple(max(1, shape[i]) if i == d else t for i, t in enumerate(tile))

        def window(vs: tuple[int, ...], off: tuple[int, ...], shp: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
            o = tuple(0 if i == d else min(off[i], s) for i, s in enumerate(vs))
            z = tuple(s if i == d else max(0, min(off[i] + shp[i], s) - o[i]) for i, s in enumerate(vs))
            return o, z

        ids = {}
        for coord, off, shp in grid(shape, tile):
            if n.op == "gather":
                woff, wshp = window(shapes[0], off, shp)
                srcs = [self.tile_for(n.inputs[0], woff, wshp, n, inst),
                        self.tile_for(n.inputs[1], off, shp, n, inst)]
            elif n.op == "topk":
                woff, wshp = window(shapes[0], off, shp)
                srcs = [self.tile_for(n.inputs[0], woff, wshp, n, inst)]
            elif n.op == "index_select":  # the table's rows read from GM where this tile's window of the index
                woff, wshp = window(shapes[0], off, shp)  # says (a whole-table tile was 128 MB "in the UB")
                table = self.gm(n.inputs[0], n).sub(woff, wshp)
                index = self.tile_for(n.inputs[1], (off[d],), (shp[d],), n, inst)
                ids[coord] = self.new(n.op, n, inst, coord, shp, n.type.dtype, (index,), table, n.attrs)
                continue
            else:
                base = self.tile_for(n.inputs[0], off, shp, n, inst)
                io, iz = window(shapes[1], off, shp)
                if 0 in iz:  # no index reaches this tile: it is the input's
                    ids[coord] = self.new("clone", n, inst, coord, shp, n.type.dtype, (base,), None, {})
                    continue
                srcs = [base, self.tile_for(n.inputs[1], io, iz, n, inst)]
                srcs += [self.tile_for(v, io, iz, n, inst) for v in n.inputs[2:]]
            ids[coord] = self.new(n.op, n, inst, coord, shp, n.type.dtype, tuple(srcs), None, n.attrs)
        self.place[n.id] = Tiles(inst, shape, tile, ids)

    def merge_sort(self, n: Node, inst: int) -> bool:
        """PyPTO's top-k by merge sort (its default; its API page): the vec tile cuts `dim` too, at
        least `k` wide. Each cut's top-k is a partial (its indices made global by `base`), and
        partials merge pairwise (`topk_merge`, a tree) into the k largest (smallest): among equal
        values the lower index first, as the whole row's top-k, so the result is the same. A
        whole 64k-row tile was DeepSeek V3.2's lightning indexer's 138 % UB Error. False where the
        tile holds `dim` whole, is narrower than k, or the algorithm is radix select: one op."""
        assert n.type is not None
        d, k, part = n.attrs["dim"], n.attrs["k"], n.attrs.get("part")
        vshape = self.shape_of(n.inputs[0])
        vtile = self.tile_of(n, vshape)
        width = vtile[d]
        if width >= vshape[d] or width < k or n.attrs.get("algo") == "radix_select":
            return False
        shape = tuple(k if i == d else s for i, s in enumerate(vshape))
        tile = tuple(k if i == d else t for i, t in enumerate(vtile))
        common = {"dim": d, "largest": n.attrs.get("largest", True)}
        ids = {}
        for coord, off, shp in grid(shape, tile):
            vals, idxs = [], []
            for j, start in enumerate(range(0, vshape[d], width)):
                ioff = tuple(start if i == d else o for i, o in enumerate(off))
                ishp = tuple(min(width, vshape[d] - start) if i == d else s for i, s in enumerate(shp))
                src = self.tile_for(n.inputs[0], ioff, ishp, n, inst)
                pshp = tuple(min(k, ishp[d]) if i == d else s for i, s in enumerate(shp))
                at = {**common, "k": pshp[d], "partial": j, "base": start}
                vals.append(self.new("topk", n, inst, coord, pshp, self.ops[src].dtype, (src,), None,
                                     {**at, "part": "values"}))
                if part == "indices":
                    idxs.append(self.new("topk", n, inst, coord, pshp, n.type.dtype, (src,), None,
                                         {**at, "part": "indices"}))
            level = 0
            while len(vals) > 1:  # one level of the tree: neighbours merge, an odd one out waits
                nv, ni = [], []
                level += 1
                for i in range(0, len(vals) - 1, 2):
                    a, b = self.ops[vals[i]], self.ops[vals[i + 1]]
                    mshp = tuple(min(k, x + y) if ax == d else x
                                 for ax, (x, y) in enumerate(zip(a.shape, b.shape)))
                    pair = (vals[i], vals[i + 1])
                    at = {**common, "k": mshp[d]} if len(vals) == 2 else {**common, "k": mshp[d], "partial": level}
                    if part != "indices" or len(vals) > 2:
                        nv.append(self.new("topk_merge", n, inst, coord, mshp, a.dtype, pair, None,
                                           {**at, "part": "values", **({"partial": level} if idxs else {})}))
                    if idxs:
                        ni.append(self.new("topk_merge", n, inst, coord, mshp, n.type.dtype,
                                           pair + (idxs[i], idxs[i + 1]), None, {**at, "part": "indices"}))
                if len(vals) % 2:
                    nv.append(vals[-1])
                    ni += idxs[-1:]
                if not nv:  # the last merge of an indices node: its values are not needed
                    nv = ni[:1]
                vals, idxs = nv, ni
            ids[coord] = idxs[0] if part == "indices" else vals[0]
        self.place[n.id] = Tiles(inst, shape, tile, ids)
        return True

    def scatter_update(self, n: Node, inst: int) -> None:
        """PyPTO's scatter_update works in place on GM (its API page): the input and the result stay in
        GM and are not tiled; the vec tile cuts `src` ([tileS, d], or [tileB, tileS, 1, d]; d is never
        cut) and each src tile goes to the UB with its window of `index`, whose rows it writes into the
        input where the index says. So one tile op per src tile reads those two tiles and writes the
        input's GM (its region: the whole input, as the rows it writes are known only at run time).
        The input is written where it lies when this node is its last reader, else into a copy (as
        `assemble`)."""
        assert n.type is not None
        dst, index, src = n.inputs
        target = self.writable(dst, n, inst)
        ishape, sshape = self.shape_of(index), self.shape_of(src)
        tile = self.tile_of(n, sshape)
        tile = tile[:-1] + (max(1, sshape[-1]),)
        for coord, off, shp in grid(sshape, tile):
            ioff: tuple[int, ...]
            ishp: tuple[int, ...]
            # the index entries the tile's rows have (src rows past them, a view's padding, are not written, as
            # the reference), and `base`: where the tile's first row is in its index window, flattened
            base = 0
            if len(sshape) == 2:  # src rows i * s + j: one row of index, or the whole rows the tile spans
                s = max(1, ishape[1])
                rows = min(shp[0], ishape[0] * s - off[0])
                if rows <= 0:
                    continue
                first, last = off[0] // s, (off[0] + rows - 1) // s
                if first == last:
                    ioff, ishp = (first, off[0] % s), (1, rows)
                else:
                    ioff, ishp, base = (first, 0), (last - first + 1, s), off[0] % s
            else:  # src [b, s, 1, d]: index [b, s] at the same place
                ioff, ishp = off[:2], (min(shp[0], ishape[0] - off[0]), min(shp[1], ishape[1] - off[1]))
                if min(ishp) <= 0:
                    continue
            srcs = (self.tile_for(src, off, shp, n, inst), self.tile_for(index, ioff, ishp, n, inst))
            self.new("scatter_update", n, inst, coord, shp, n.type.dtype, srcs, target, {**n.attrs, "base": base})
        written = (n, target)
        self.writes.setdefault(target.buffer, []).append(written)
        if self.journal is not None:
            self.journal.append(("write", target.buffer, written))
        self.place[n.id] = InGM(target)

    def gathermask(self, n: Node, inst: int) -> None:
        """PyPTO's gathermask: the vec tile cuts the input (its last entry a multiple of the pattern's
        stride, checked when traced); each input tile gives the output tile at the same coordinate,
        its last axis divided by the stride."""
        assert n.type is not None
        (v,) = n.inputs
        stride = GATHERMASK_PATTERNS[n.attrs["pattern_mode"]][1]
        declared = tuple(S.evaluate(d, self.env) for d in self.types[v].shape)
        if declared[-1] % stride:
            raise PyptoError(f"gathermask: pattern_mode {n.attrs['pattern_mode']} needs the last axis to be a "
                             f"multiple of {stride}; it is {declared[-1]} in this call", n.loc)
        vshape = self.shape_of(v)
        tile = self.tile_of(n, vshape)
        oshape = vshape[:-1] + (vshape[-1] // stride,)
        otile = tile[:-1] + (max(1, tile[-1] // stride),)
        ids = {}
        for coord, off, shp in grid(vshape, tile):
            oshp = shp[:-1] + (shp[-1] // stride,)
            if oshp[-1] == 0:  # a valid part's short tail: it keeps nothing
                continue
            src = self.tile_for(v, off, shp, n, inst)
            ids[coord] = self.new("gathermask", n, inst, coord, oshp, n.type.dtype, (src,), None, n.attrs)
        self.place[n.id] = Tiles(inst, oshape, otile, ids)

    def reduce(self, n: Node, inst: int) -> None:
        assert n.type is not None
        (v,) = n.inputs
        vshape = self.shape_of(v)
        tile = self.tile_of(n, vshape)
        d, keep = n.attrs["dim"], n.attrs.get("keepdim", False)
        steps = max(1, math.ceil(vshape[d] / tile[d]))
        if n.op not in COMBINE and n.op not in ("argmax", "argmin"):
            raise PyptoError(f"{n.op} has no tile lowering (the tensor stage decomposes it)", n.loc)
        oshape = tuple(1 if i == d else s for i, s in enumerate(vshape)) if keep else vshape[:d] + vshape[d + 1:]
        otile = tuple(1 if i == d else t for i, t in enumerate(tile)) if keep else tile[:d] + tile[d + 1:]
        ids = {}
        ops, nid, dtype = self.ops, n.id, n.type.dtype
        for coord, off, shp in grid(oshape, otile):
            ioff = list(off) if keep else list(off[:d]) + [0] + list(off[d:])
            ishp = list(shp) if keep else list(shp[:d]) + [0] + list(shp[d:])
            parts, values = [], []
            for k in range(steps):
                ioff[d] = k * tile[d]
                ishp[d] = min(tile[d], vshape[d] - ioff[d])
                src = self.tile_for(v, tuple(ioff), tuple(ishp), n, inst)
                attrs = {**n.attrs, "partial": k, "base": ioff[d]} if steps > 1 else n.attrs
                tid = len(ops)
                ops.append(TileOp(tid, n.op, nid, inst, coord, shp, dtype, (src,), None, attrs or None))
                parts.append(tid)
                if n.op in ("argmax", "argmin") and steps > 1:  # the partial extrema pick the winner
                    extremum = "amax" if n.op == "argmax" else "amin"
                    values.append(self.new(extremum, n, inst, coord, shp, self.ops[src].dtype, (src,), None,
                                           {"dim": d, "keepdim": keep, "partial": k}))
            if steps == 1:
                ids[coord] = parts[0]
            elif values:
                ids[coord] = self.new("combine_arg", n, inst, coord, shp, n.type.dtype, tuple(parts + values), None,
                                      {"fn": "max" if n.op == "argmax" else "min"})
            else:
                ids[coord] = self.new("combine", n, inst, coord, shp, n.type.dtype, tuple(parts), None,
                                      {"fn": COMBINE[n.op]})
        self.place[n.id] = Tiles(inst, oshape, otile, ids)

    def transpose(self, n: Node, inst: int) -> None:
        assert n.type is not None
        perm = n.attrs["perm"]
        ishape = self.shape_of(n.inputs[0])
        shape = tuple(ishape[p] for p in perm)
        tile = self.tile_of(n, shape)
        inv = [0] * len(perm)
        for i, p in enumerate(perm):
            inv[p] = i
        ids = {}
        for coord, off, shp in grid(shape, tile):
            src = self.tile_for(n.inputs[0], tuple(off[inv[j]] for j in range(len(perm))),
                                tuple(shp[inv[j]] for j in range(len(perm))), n, inst)
            ids[coord] = self.new("transpose", n, inst, coord, shp, n.type.dtype, (src,), None, n.attrs)
        self.place[n.id] = Tiles(inst, shape, tile, ids)

    def matmul(self, n: Node, inst: int) -> None:
        assert n.type is not None
        shape = self.shape(n)
        if n.tile is not None and self.graph.tile_configs[n.tile].kind == "cube":
            m, k, nn, _ = self.graph.tile_configs[n.tile].dims
        else:
            m, k, nn = DEFAULT_CUBE
            self.notes.append((f"no set_cube_tile_shapes in force for matmul: using m={list(m)}, k={list(k)}, "
                               f"n={list(nn)}", n))
        regions = [self.gm(v, n) for v in n.inputs]
        # an operand that is a tail view (valid_shape) has fewer rows or columns than its type:
        # the data decides, as for every other op, and the result has only the valid part
        a_r, b_r = regions[0], regions[1]
        rows = a_r.shape[-1] if n.attrs.get("a_trans") else a_r.shape[-2]
        cols = b_r.shape[-2] if n.attrs.get("b_trans") else b_r.shape[-1]
        shape = shape[:-2] + (min(shape[-2], rows), min(shape[-1], cols))
        out = self.buffer(shape, n.type.dtype, "workspace", f"mm{n.id}", n.id)
        tile = (1,) * (len(shape) - 2) + (m[1], nn[1])
        a_shape = regions[0].shape
        kdim = a_shape[-2] if n.attrs.get("a_trans") else a_shape[-1]
        made = self.matmul_tiles[out.buffer] = []
        # one object per value the tiles share: the record document writes each once (`_attrs_columns`)
        inputs, k_steps, cube = tuple(regions), math.ceil(kdim / k[0]), (tuple(m), tuple(k), tuple(nn))
        for coord, off, shp in grid(shape, tile):
            made.append(self.new("matmul", n, inst, coord, shp, n.type.dtype, (), out.sub(off, shp),
                                 {**n.attrs, "inputs": inputs, "at": tuple(off), "k_steps": k_steps, "cube": cube}))
        self.place[n.id] = InGM(out)

    def view(self, n: Node, inst: int) -> None:
        src = self.gm(n.inputs[0], n)
        valid = n.attrs.get("valid_shape")
        off = tuple(S.evaluate(d, self.env) for d in n.attrs["offsets"])
        shp = tuple(S.evaluate(d, self.env) for d in (valid if valid is not None else n.attrs["shape"]))
        if self.journal is not None:
            self.journal.append(("window", n.id, src.shape, shp, valid is None))
        if valid is None:  # the data is the part of the window inside the input
            inside = view_extent(n, off, shp, src.shape)
            if inside != shp:
                self.clips += 1
            if inside != shp and n.id not in self._clipped_noted:
                self._clipped_noted.add(n.id)
                self.notes.append((f"view window {list(shp)} at {list(off)} runs past its input ({list(src.shape)} "
                                   f"in this call): its data is the {list(inside)} inside (PyPTO's inferred "
                                   f"valid shape)", n))
            shp = inside
        self.check_window(n, src, off, shp, "view")
        region = src.sub(off, shp)
        dt = n.attrs.get("dtype")
        if dt is not None and dt is not self.buffers[src.buffer].dtype:
            self.bitcast(n, inst, region, dt)
            return
        self.place[n.id] = InGM(region, len(self.writes.get(region.buffer, [])))

    def bitcast(self, n: Node, inst: int, region: Region, dt: DataType) -> None:
        """A view as another dtype: the window's bytes read as `dt`, row by row. The tile cuts the
        leading dims (the vec tile's, or `copy_tile`'s where none is in force) and holds rows whole,
        so no element straddles two tiles; it was one whole-window tile (DeepSeek V3.2's sparse
        attention: a [2048, 64] bf16 view of int8 rows, 256 KiB, a 133 % UB Error of ours)."""
        shp, was = region.shape, self.buffers[region.buffer].dtype
        if shp and shp[-1] * was.nbytes % dt.nbytes:
            raise PyptoError(f"view as {dt.name}: its data is {list(shp)} {was.name} in this call, whose rows "
                             f"are not a whole number of {dt.name}", n.loc)
        out = shp[:-1] + (shp[-1] * was.nbytes // dt.nbytes,) if shp else shp
        tile = self.tile_of(n, out) if n.tile is not None else copy_tile(out, dt.nbytes)
        tile = tile[:-1] + out[-1:]
        ids = {}
        for coord, off, part in grid(out, tile):
            rows = part[:-1] + shp[-1:]  # the same rows of the window, in its own dtype
            start = off[:-1] + (0,) if off else off
            loaded = self.new("load", n, inst, coord, rows, was, (), region.sub(start, rows))
            ids[coord] = self.new("bitcast", n, inst, coord, part, dt, (loaded,), None, {"dtype": dt})
        self.place[n.id] = Tiles(inst, out, tile, ids)

    def assemble(self, n: Node, inst: int) -> None:
        dst, src = n.inputs
        target = self.writable(dst, n, inst)
        off = tuple(S.evaluate(d, self.env) for d in n.attrs["offsets"])
        shp = self.shape_of(src)
        self.check_window(n, target, off, shp, "assemble")
        if self.journal is not None:
            self.journal.append(("window", n.id, target.shape, shp, False))
        if not self.retarget(src, target.sub(off, shp)):
            self.copy_into(src, target.sub(off, shp), n, inst)
        written = (n, target.sub(off, shp))
        self.writes.setdefault(target.buffer, []).append(written)
        if self.journal is not None:
            self.journal.append(("write", target.buffer, written))
        self.place[n.id] = InGM(target)

    def retarget(self, value: int, target: Region) -> bool:
        """`out[...] = matmul(...)`: when the matmul's result is used only here, its tiles write
        straight into the target (TFIXPIPE to the output) instead of a workspace copied after. Only the result
        as the matmul made it, whole: a view or reshape of it (DeepSeek V4's compressor assembles a [1, 2, 1024]
        view of a reshaped [128, 1024] result per loop iteration) shares its workspace but is a part of it, in
        another layout, and other uses may read the rest (it retargeted every tile of the matmul into the one
        window, with offsets of the wrong rank: an internal error in graph_partition, until 2026-12-05)."""
        p = self.place[value]
        if not isinstance(p, InGM):
            return False
        made = self.matmul_tiles.get(p.region.buffer)
        mm = self.buffers[p.region.buffer]
        whole = mm.shape
        if made is None or self.uses.get(value, 0) != 1 or self.uses.get(mm.node, 0) != 1 \
                or len(target.shape) != len(p.region.shape) \
                or p.region.layout != whole or p.region.shape != whole or any(p.region.offset) \
                or self.buffers[target.buffer].dtype is not self.buffers[p.region.buffer].dtype:
            return False
        for tid in made:
            o = self.ops[tid]
            assert o.region is not None
            self.ops[tid] = TileOp(o.id, o.op, o.node, o.instance, o.coord, o.shape, o.dtype, o.inputs,
                                   target.sub(o.region.offset, o.region.shape), o.attrs)
        del self.matmul_tiles[p.region.buffer]
        if self.journal is not None:
            self.journal.append(("retarget", min(made, default=len(self.ops))))
        self.place[value] = InGM(target)
        return True

    def reshape(self, n: Node, inst: int) -> None:
        src = self.gm(n.inputs[0], n)
        shape = self.shape(n)
        valid = n.attrs.get("valid_shape")
        part = tuple(S.evaluate(d, self.env) for d in valid) if valid is not None else shape
        if valid is not None and math.prod(src.shape) == math.prod(part) != math.prod(shape):
            shape = part  # the input is only its valid part already (a tail view): that part, reshaped
        elif math.prod(src.shape) != math.prod(shape):
            # the input is its valid part, smaller than its type (a padded view): the whole type is
            # reshaped, its padding zero (PyPTO leaves it undefined)
            declared = tuple(S.evaluate(d, self.env) for d in self.types[n.inputs[0]].shape)
            if math.prod(declared) != math.prod(shape) or any(a > b for a, b in zip(src.shape, declared)):
                raise PyptoError(f"reshape: the input holds {list(src.shape)} in this call, which cannot be "
                                 f"seen as {list(shape)}", n.loc)
            padded = self.buffer(declared, self.buffers[src.buffer].dtype, "workspace", f"pad{n.id}", n.id)
            self.copy_into(n.inputs[0], padded.sub((0,) * len(declared), src.shape), n, inst)
            src = padded
        if not src.whole:
            assert n.type is not None
            copy = self.buffer(src.shape, n.type.dtype, "workspace", f"rs{n.id}", n.id)
            self.copy_into(n.inputs[0], copy, n, inst)
            src = copy
        else:  # the input's buffer, seen with another shape: a write into either must spare the other
            self.sharers.setdefault(src.buffer, []).extend((n.inputs[0], n.id))
            if self.journal is not None:
                self.journal.append(("share", src.buffer, (n.inputs[0], n.id)))
        self.place[n.id] = InGM(Region(src.buffer, shape, (0,) * len(shape), part))  # the leading window holds data

    def concat(self, n: Node, inst: int) -> None:
        assert n.type is not None
        shape = self.shape(n)
        out = self.buffer(shape, n.type.dtype, "workspace", f"cat{n.id}", n.id)
        d = n.attrs["dim"]
        at = 0
        for v in n.inputs:
            vs = self.shape_of(v)
            self.copy_into(v, out.sub(tuple(at if i == d else 0 for i in range(len(shape))), vs), n, inst)
            at += vs[d]
        self.place[n.id] = InGM(out)

    def create(self, n: Node, inst: int) -> None:
        assert n.type is not None
        valid = n.attrs.get("valid_shape") if n.op == "full" else None
        # a full with valid_shape holds only its valid part (as the reference does): an assemble of
        # it writes that part, so a window whose declared shape runs past the destination is fine
        shape = tuple(S.evaluate(d, self.env) for d in valid) if valid is not None else self.shape(n)
        tile = self.tile_of(n, shape)
        ids = {}
        for coord, off, shp in grid(shape, tile):
            attrs = dict(n.attrs)
            if n.op == "arange":
                attrs["first"] = n.attrs["start"] + off[0] * n.attrs["step"]
            ids[coord] = self.new("fill" if n.op == "full" else "arange", n, inst, coord, shp, n.type.dtype,
                                  (), None, attrs)
        self.place[n.id] = Tiles(inst, shape, tile, ids)

    def loop(self, n: Node, inst: int) -> None:
        body = n.body
        assert body is not None
        a = n.attrs
        start, stop, step = (S.evaluate(a[k], self.env) for k in ("start", "stop", "step"))
        carried = [self.writable(v, n, inst) for v in n.inputs]
        carry_ids = [c.id for c in body.nodes if c.op == "carry"]
        if n.id not in self.bodies:
            self.bodies[n.id] = stamp.Body.of(n) if stamp.ENABLED else None
        form = self.bodies[n.id]
        stamper = stamp.Stamper(self, form) if form is not None else None
        for i in range(start, stop, step):
            self.env[a["index"]] = i
            child = Instance(len(self.instances), n.id, self.instances[inst].index + ((a["index"], i),))
            self.instances.append(child)
            if stamper is not None:
                made = stamper.stamp(child.id, carried)
                if made is not None:  # the iteration before, moved (see pypto.compiler.stamp)
                    carried = made
                    continue
                stamper.begin(carried)
            for cid, held in zip(carry_ids, carried):
                self.place[cid] = InGM(held)
            self.block(body, child.id)
            carried = [self.gm(v, n) for _, v in body.outputs]
            if stamper is not None:
                stamper.end(child.id, carried)
        self.env.pop(a["index"], None)
        for out in self.loop_outs.get(n.id, []):
            self.place[out.id] = InGM(carried[out.attrs["index"]])


def copy_tile(shape: tuple[int, ...], nbytes: int) -> tuple[int, ...]:
    """The tile of a copy made where no vec tile shape is in force: the whole value when it fits
    `COPY_TILE_BYTES`, else its leading dims halved (the first first; never the last, which keeps
    the rows' alignment) until it does or only the last is left."""
    tile = [max(1, d) for d in shape]
    size = math.prod(tile) * nbytes
    while size > COPY_TILE_BYTES:
        lead = next((i for i in range(len(tile) - 1) if tile[i] > 1), None)
        if lead is None:
            break
        tile[lead] = (tile[lead] + 1) // 2
        size = math.prod(tile) * nbytes
    return tuple(tile)


def _paths(g: Graph, at: tuple[int, ...], out: dict[int, tuple[int, ...]]) -> None:
    for i, n in enumerate(g.nodes):
        out[n.id] = (*at, i)
        if n.body is not None:
            _paths(n.body, (*at, i), out)


def _last_users(g: Graph, out: dict[int, int]) -> None:
    """Per value: the node of its own graph that reads it last (a loop reading it in its body
    counts as the loop), or -1 when the graph returns it."""
    defined = {n.id for n in g.nodes}
    for n in g.nodes:
        reads = set(n.inputs)
        if n.body is not None:
            reads |= {v for m in n.body.walk() for v in m.inputs}
            reads |= {v for m in n.body.walk() if m.body is not None for _, v in m.body.outputs}
            reads |= {v for _, v in n.body.outputs}
            _last_users(n.body, out)
        for v in reads & defined:
            out[v] = n.id
    for _, v in g.outputs:
        if v in defined:
            out[v] = -1


def expand(graph: Graph, bindings: Mapping[str, int]) -> tuple[TileGraph, list[tuple[str, Node]],
                                                              list[tuple[str, Node]]]:
    """The tile graph, info notes and warnings (diagnostics for the pass)."""
    ex = Expander(graph, bindings)
    return ex.run(), ex.notes, ex.warnings


def fit_vec_configs(graph: Graph, bindings: Mapping[str, int], ub_bytes: int) -> tuple[Graph, list[tuple[str, Node]]]:
    """The graph with each vector tile config that cannot fit the UB halved until it does, and a note
    per refit. PyPTO accepts a vector tile over the UB (its own kernels use them); the hardware has
    to run it in smaller pieces, which is what the tile stage then does: the leading tile dims are
    halved (never the last, which keeps its alignment). A config is judged by its largest single
    tile (the output's or an input's, as the tile rules judge it), a size no partition can avoid;
    an op whose tiles fit one by one but not together is the partition's to report."""
    need: dict[int, tuple[int, Node]] = {}
    types = {n.id: n.type for n in graph.walk()}
    for n in graph.walk():
        if n.tile is None or n.type is None or graph.tile_configs[n.tile].kind != "vec" or not OPS[n.op].vector:
            continue
        shape = n.type.shape
        dims = graph.tile_configs[n.tile].dims
        tile = tuple(dims[:len(shape)])
        elems = 1
        for d, t in zip(shape, tile):
            elems *= min(_concrete(d, bindings), t)
        width = max([n.type.dtype.nbytes, *(t.dtype.nbytes for i in n.inputs if (t := types.get(i)) is not None)])
        if elems * width > need.get(n.tile, (0, n))[0]:
            need[n.tile] = (elems * width, n)
    configs = list(graph.tile_configs)
    notes: list[tuple[str, Node]] = []
    for cid, (nbytes, node) in need.items():
        if nbytes <= ub_bytes or whole_slice(configs[cid].dims):
            continue  # fits; or PyPTO 3's one tile per slice, which halving its placeholder would not change
        halved = list(configs[cid].dims)
        size = nbytes
        while size > ub_bytes:
            lead = next((i for i in range(len(halved) - 1) if halved[i] > 1), None)
            if lead is None:
                break
            halved[lead] = (halved[lead] + 1) // 2
            size = (size + 1) // 2
        notes.append((f"vector tile {list(configs[cid].dims)} is {nbytes:,} bytes for {node.op}, "
                      f"more than the {ub_bytes:,}-byte UB: run as tiles of {halved}", node))
        configs[cid] = dataclasses.replace(configs[cid], dims=tuple(halved))
    if not notes:
        return graph, notes
    return dataclasses.replace(graph, tile_configs=tuple(configs)), notes


def _concrete(d: Any, bindings: Mapping[str, int]) -> int:
    try:
        return int(S.evaluate(d, bindings))  # type: ignore[arg-type]  # (it reads it)
    except KeyError:  # a loop index: bounded by the tile
        return 1 << 62

