"""The functional executor: runs the lowered program tile by tile, so what runs is what was compiled.

GM buffers are numpy arrays; each tile op computes one tile with the same numpy kernels
(and the same dtype rules) as the reference interpreter, so a tiled result differs from
the reference only where tiling changes the arithmetic (a reduction summed per tile and
then combined). Tests hold the two within PyPTO's tolerances for every valid tile shape.

Two ways to run, same values bit for bit:

- **Unbatched** (`run(..., batched=False)`, or any `order=`): one numpy call per tile op,
  in program order (or the order given). This is the reference implementation.
- **Batched** (the default): isomorphic, mutually independent tile ops run as one numpy
  call on stacked tiles of shape `[n, *tile_shape]`. A plan, built once per executor,
  gives every tile op a *wave* (level): one more than its producers' and than the GM
  accesses it must follow in program order (a load after the last overlapping store, a
  store after earlier overlapping loads and stores — tracked per buffer on the grid of
  the greatest common divisor of its regions' starts and ends, so no false dependency
  arises, except conservatively across a reshape). Loads, fills and aranges then move
  as late as their consumers and later stores allow, so a value is loaded just before
  it is needed. The plan works on the tile graph alone (what the executor is built
  from), one tile op at a time: the corresponding ops of independent tasks of one leaf
  function have the same kind, shapes and depth, so they land in one group. Within a
  wave, ops are grouped by what
  decides their arithmetic — kind, tensor node, tile shape, dtype, input shapes and
  dtypes, attributes other than positions — which also puts together the tiles of
  independent loop iterations. GM buffers other than parameters are slots of one
  stacked array per shape and dtype (an arena), so a group of loads is one gather even
  across the per-tile workspaces of copy insertion: a strided view of the arena's tiles
  on the lattice of their offsets, fancy-indexed by tile; a group of stores is one
  scatter. When the group is every tile of that lattice in row-major order (a *full*
  window: x's tiles, the output's), the strided view itself is the group's value, not a
  copy — unless a later step writes that arena, since the view must keep its values —
  and its batch axes are the lattice's (`[*grid, *tile_shape]`); a full group of stores is
  one assignment into the view. A compute group runs its kernel once on the stacked
  inputs, with leading batch axes (reduction `dim`s and transpose `perm`s shift by their
  number; lower-rank broadcast operands get unit axes after them): those of an input taken
  whole, so a chain from a full load keeps the load's lattice. An input is the producer
  group's stacked array itself when the members line up (reshaped to the step's batch
  axes), else a slice or gather of it. Matmuls and aranges run per tile inside the batched
  schedule; a wave's matmul tiles (independent, writing disjoint GM) run side by side on up
  to `threads` threads. Every matmul tile — batched, op by op, on the cpu board — is one
  BLAS call at one BLAS thread (`pypto.compiler.blas`): OpenBLAS's result depends on how many
  threads split a call, so the bytes no longer depend on the machine's CPU count, and the
  cores go to independent tiles instead of to one tile's parts (on a loaded 2-core machine,
  2048³ at 256 x 256 tiles: 0.58 s -> about torch's time). Per-tile arithmetic is
  unchanged — every kernel is elementwise over the batch axes — so results equal the
  unbatched ones exactly (tested on every example and on sweeps of shapes and tile shapes).
  A user error raised by a kernel (an integer division by zero …) reruns the program
  unbatched, so the error reported is the one program order meets first.
- **Segments** (in the batched run): whole groups of one member count that read each other
  whole — a full load, kernels, a full store — from a step that moves 4 MB or more, run
  together chunk by chunk (`Plan.order`, `Segment`): a chunk of members (values of about
  `chunk_bytes`, 2 MB: they stay in cache, and numpy allocates them without mmap's page
  faults) goes through every step before the next, at the place of the first step outside
  that needs one of the segment's values or GM it touches; steps reading a segment's value
  in another order, and any GM order between steps, close it first. Chunks are independent,
  so they run on up to `threads` threads (default: one per CPU; numpy releases the GIL in
  its loops), handed out one at a time. A value steps outside the segment read is assembled
  whole; the others live one chunk at a time. A chunk is whole tiles, so the bytes are the
  unbatched ones. An elementwise step whose kernel is one ufunc on operands of its compute and
  result dtype (float32 sub, exp, div …) writes each chunk into one buffer of the thread's, with
  `out=` (`_into`): a fresh chunk-sized value per step per chunk is what glibc's malloc gives back
  to the OS and page-faults in again (softmax 4096² at 8 x 4096 tiles: 0.067 s -> 0.018 s).

A runtime that schedules tasks itself (the cpu board) takes fresh GM from `gm` (or
`memory`, with the arenas), runs each task's tile ops against it with `run_ops` (the
unbatched path) or as the task's own batched plan (`plan_of`, `run_plan`; `retarget` moves
one task's plan to another task of its leaf), and reads the kernel's outputs with `outputs`.

Memory: a tile's value (a stacked group, when batched) is freed after its last consumer
in run order (`peak_bytes` tells the most held at once in the last run; a view of GM holds
none). A parameter no op writes is read in place; one that is written is copied once and
returned without another copy — or, when no op reads it and its writes tile it exactly (an
output written whole), it starts from `np.empty_like`: its input values are never seen.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pypto.compiler.blas import blas_controlled, one_blas_thread
from pypto.compiler.tile_ir import Buffer, Region, TileGraph, TileOp
from pypto.ir.dtypes import FP8, DataType
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph, Node
from pypto.ir.ops import OPS
from pypto.reference.kernels import KERNELS, Ctx, index_positions, top_order

_COMBINE = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}
_POSITION_ATTRS = frozenset({"partial", "base", "first", "inputs"})  # where a tile is, not what it computes
_REDUCE = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin"})
_ELEMENTWISE = frozenset(k for k, d in OPS.items() if d.kind in ("unary", "binary", "where")) | {"clone"}
_OWN = frozenset({"combine", "combine_arg", "fill", "bitcast", "expand_clone", "transpose"})
_FP8_NP = frozenset(d.np for d in FP8)
_LAST_AXIS = frozenset({"gathermask"})  # kernels that pick along the last axis: any leading axes batch
_BATCHABLE = _OWN | _REDUCE | _ELEMENTWISE | _LAST_AXIS  # every other kind (matmul, arange, …) runs tile by tile
# elementwise kinds whose kernel (`pypto.reference.kernels`) is exactly this ufunc on float operands
# of the compute dtype: a segment's chunk runs them with `out=` (`TileExecutor._into`)
_INTO_UNARY = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
               "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
               "tanh": np.tanh, "neg": np.negative, "abs": np.abs}
_INTO_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
                "maximum": np.maximum, "minimum": np.minimum}


def region_view(bufs: Mapping[int, np.ndarray], r: Region) -> np.ndarray:
    """Region `r` of GM `bufs` (buffer id -> array) as a writable view of its buffer."""
    arr = bufs[r.buffer].reshape(r.layout)
    idx = tuple(slice(o, o + s) for o, s in zip(r.offset, r.shape))
    return arr[idx] if idx else arr[...]  # a 0-d region stays a (writable) view


def _flat(r: Region) -> tuple[int, int]:
    """The region as one range of its flat buffer (conservative: covers the rows between)."""
    strides = [math.prod(r.layout[i + 1:]) for i in range(len(r.layout))]
    start = sum(o * s for o, s in zip(r.offset, strides))
    last = sum((o + n - 1) * s for o, n, s in zip(r.offset, r.shape, strides))
    return start, last + 1


def _gm_accesses(op: TileOp) -> list[tuple[Region, bool]]:
    """The GM regions a tile op reads (False) and writes (True)."""
    if op.region is None:
        return []
    if op.op == "load":
        return [(op.region, False)]
    if op.op == "store":
        return [(op.region, True)]
    if op.op == "matmul":
        return [(r, False) for r in op.attrs["inputs"]] + [(op.region, True)]
    if op.op == "index_select":  # rows of its region, where the index says
        return [(op.region, False)]
    # scatter_update: rows of its region, in place: the rows it does not write keep their values (read)
    return [(op.region, False), (op.region, True)]


def _merge_sort_step(op: TileOp, xs: list[np.ndarray]) -> np.ndarray:
    """A step of a merge-sort top-k (`tile_expand.Expander.merge_sort`): a partial (`topk` with a
    `base`: one cut's top k, its indices made global) or a merge (`topk_merge` of two partials'
    values, and their indices for an indices result: ties go to the lower index, as the whole row's)."""
    a = op.attrs
    if op.op == "topk":
        (x,) = xs
        d = a["dim"] % x.ndim
        idx = top_order(x, d, a["k"], a["largest"])
        if a["part"] == "indices":
            return (idx + a["base"]).astype(np.int32)
        return np.take_along_axis(x, idx, axis=d)
    d = a["dim"] % xs[0].ndim
    v = np.concatenate(xs[:2], axis=d)
    ties = np.concatenate(xs[2:], axis=d) if len(xs) == 4 else None
    top = top_order(v, d, a["k"], a["largest"], ties)
    if ties is not None and a["part"] == "indices":
        return np.take_along_axis(ties, top, axis=d).astype(np.int32)
    return np.take_along_axis(v, top, axis=d)


def _attr_key(attrs: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a tile op's attributes say about its arithmetic (not its position), hashable."""
    key = tuple((k, v) for k, v in attrs.items() if k not in _POSITION_ATTRS)
    try:
        hash(key)
    except TypeError:
        return tuple(sorted((k, repr(v)) for k, v in key))
    return key


def _shift(d: Any, nb: int = 1) -> Any:
    """An axis of a tile, as an axis of the stacked tiles (`nb` leading batch axes)."""
    return d + nb if isinstance(d, int) and d >= 0 else d


# ---- the batched plan ---------------------------------------------------------------------------

class _Cells:
    """Per cell of one GM buffer: the wave of its last write, of its latest read, and (for
    the backward pass) of its next write. Cells are the grid of the gcd of all its
    regions' starts and ends, so every region is an exact union of cells (no false
    dependency); a buffer seen through several layouts is tracked flat (conservatively:
    a region covers the rows between). `index[k]` is region k's cells: a tuple of ints
    (one cell), of slices (a box, numpy-tracked), or None (empty)."""

    NONE = np.iinfo(np.int64).max

    def __init__(self, regions: Sequence[Region]) -> None:
        self.dense = False  # numpy arrays when some region spans several cells, else dicts
        self.write: Any = {}
        self.read: Any = {}
        self.next_write: Any = {}
        r0 = regions[0]
        if all(r == r0 for r in regions):  # the common workspace: one tile, stored and loaded whole
            self.index: list[Any] = [None if 0 in r0.shape else ()] * len(regions)
            return
        if len({r.layout for r in regions}) > 1:
            boxes = [((a,), (b,)) for a, b in map(_flat, regions)]
            layout: tuple[int, ...] = (math.prod(regions[0].layout),)
        else:
            boxes = [(r.offset, tuple(o + n for o, n in zip(r.offset, r.shape))) for r in regions]
            layout = regions[0].layout
        grid = tuple(math.gcd(*(lo[a] for lo, _ in boxes), *(hi[a] for _, hi in boxes)) or 1
                     for a in range(len(layout)))
        self.index = []
        for lo, hi in boxes:
            if any(h <= o for o, h in zip(lo, hi)):
                self.index.append(None)
            elif all(h - o == g for o, h, g in zip(lo, hi, grid)):
                self.index.append(tuple(o // g for o, g in zip(lo, grid)))
            else:
                self.index.append(tuple(slice(o // g, h // g) for o, h, g in zip(lo, hi, grid)))
                self.dense = True
        if self.dense:
            shape = tuple(-(-n // g) for n, g in zip(layout, grid))
            self.write = np.full(shape, -1, dtype=np.int64)
            self.read = np.full(shape, -1, dtype=np.int64)
            self.next_write = np.full(shape, self.NONE, dtype=np.int64)

    def after(self, idx: Any, write: bool) -> int:
        """The wave an access must come after: the last write (RAW, WAW) and, for a write,
        the latest read (WAR)."""
        if not self.dense:
            w = self.write.get(idx, -1)
            return max(w, self.read.get(idx, -1)) if write else w
        w = int(self.write[idx].max())
        return max(w, int(self.read[idx].max())) if write else w

    def record(self, idx: Any, write: bool, wave: int) -> None:
        if write:
            self.write[idx] = wave  # later than every earlier access of these cells
        elif not self.dense:
            if self.read.get(idx, -1) < wave:
                self.read[idx] = wave
        else:
            r = self.read[idx]
            if isinstance(r, np.ndarray):
                np.maximum(r, wave, out=r)
            elif r < wave:
                self.read[idx] = wave

    def record_next_write(self, idx: Any, wave: int) -> None:
        if not self.dense:
            if wave < self.next_write.get(idx, self.NONE):
                self.next_write[idx] = wave
            return
        nw = self.next_write[idx]
        if isinstance(nw, np.ndarray):
            np.minimum(nw, wave, out=nw)
        elif wave < nw:
            self.next_write[idx] = wave

    def before(self, idx: Any) -> int:
        """The wave of the next write to these cells (a read must come before it)."""
        if not self.dense:
            return int(self.next_write.get(idx, self.NONE))
        return int(self.next_write[idx].min())


@dataclass(slots=True)
class StepInput:
    """How a group's input at one position is gathered from its producers' stacked values.
    `rows` index the producer's batch axes: one array of member positions, or (a producer
    with several batch axes) one array per axis."""

    mode: str  # "direct" (the producer group's array) | "slice" | "take" | "mixed"
    src: int  # producer group (direct / slice / take)
    start: int = 0  # slice
    rows: Any = None  # take
    parts: tuple[tuple[int, np.ndarray, Any], ...] = ()  # mixed: (group, member positions, rows)
    shape: tuple[int, ...] | None = None  # reshape to this (the step's batch axes, unit axes for
    # broadcasting, the tile), None: as is


@dataclass(slots=True)
class _Window:
    """The regions of a group of loads or stores: one arena (buffers of one shape and
    dtype, stacked), one layout, one tile shape. Seen with a leading buffer axis, the
    regions' starts lie on a lattice (`base` + k * `step`), so a strided view of the arena
    holds every candidate tile and `idx` picks the group's, in member order."""

    arena: int
    layout: tuple[int, ...]  # with the arena's buffer axis first
    base: tuple[int, ...]
    step: tuple[int, ...]
    grid: tuple[int, ...]
    shape: tuple[int, ...]
    idx: tuple[np.ndarray, ...]
    full: bool  # the members are every tile of the lattice, in row-major order, none overlapping:
    # the strided view itself is the group's value (batch axes `grid`), and a store is one assignment

    @staticmethod
    def of(regions: Sequence[Region], slot: Mapping[int, tuple[int, int]], count: int) -> _Window:
        r0 = regions[0]
        offs = np.array([(slot[r.buffer][1],) + r.offset for r in regions], dtype=np.int64)
        base = offs.min(axis=0)
        rel = offs - base
        step = tuple(int(np.gcd.reduce(rel[:, a])) or 1 for a in range(rel.shape[1]))
        k = rel // np.array(step, dtype=np.int64)
        grid = tuple(int(g) + 1 for g in k.max(axis=0))
        idx = tuple(k[:, a].copy() for a in range(k.shape[1]))
        extent = (1,) + r0.shape
        full = (len(regions) == math.prod(grid) and all(g == 1 or s >= e for g, s, e in zip(grid, step, extent))
                and bool((np.ravel_multi_index(idx, grid) == np.arange(len(regions))).all()))
        return _Window(slot[r0.buffer][0], (count,) + r0.layout, tuple(int(v) for v in base), step, grid, r0.shape,
                       idx, full)

    def tiles(self, arenas: Sequence[np.ndarray]) -> np.ndarray:
        arr = arenas[self.arena].reshape(self.layout)
        sub = arr[tuple(slice(b, None) for b in self.base)]
        strides = tuple(s * k for s, k in zip(sub.strides, self.step)) + sub.strides[1:]
        if sub.dtype in _FP8_NP:  # numpy cannot rebuild fp8 from its array interface ('<f1'): stride the bytes
            return as_strided(sub.view(np.uint8), self.grid + self.shape, strides).view(sub.dtype)
        return as_strided(sub, self.grid + self.shape, strides)

    def load(self, arenas: Sequence[np.ndarray], view: bool) -> np.ndarray:
        """The tiles, stacked: `[n, *shape]` gathered, or for a full lattice `[*grid, *shape]`,
        a view of GM when `view` (the plan says nothing writes the arena from here on)."""
        if not self.full:
            n = len(self.idx[0])
            if n > 1 and n * math.prod(self.shape) * arenas[self.arena].itemsize > REPEAT_BYTES \
                    and all(bool((i == i[0]).all()) for i in self.idx):
                # every member loads the same tile (an index op's whole-cache operand, once per
                # loop iteration): one copy, seen n times (read-only), not n copies
                one = self.tiles(arenas)[tuple(i[:1] for i in self.idx)]
                return np.broadcast_to(one, (n,) + one.shape[1:])
            return self.tiles(arenas)[self.idx]
        t = self.tiles(arenas)
        return t if view else t.copy()

    def store(self, arenas: Sequence[np.ndarray], x: np.ndarray) -> None:
        """Write `x` (`[*grid, *shape]` for a full lattice, else `[n, *shape]`) into the tiles."""
        if self.full:
            self.tiles(arenas)[...] = x
        else:
            self.tiles(arenas)[self.idx] = x


@dataclass(slots=True)
class Step:
    """One group: tile ops of one wave that compute alike, run together."""

    id: int  # also the id of its stacked value
    kind: str  # "load" | "store" | "batch" (one kernel call) | "each" (tile by tile)
    ops: tuple[TileOp, ...]
    inputs: tuple[StepInput, ...] = ()
    window: _Window | None = None  # load / store
    node: Node | None = None  # the node the kernel sees (axes shifted for the batch axes)
    base: np.ndarray | None = None  # arg-reductions: each partial's offset along the reduced axis
    free: tuple[int, ...] = ()  # stacked values dead after this step
    batch: tuple[int, ...] = ()  # the leading batch axes of its value (and its inputs): `(n,)`, or
    # a full load's (or store's) lattice, whose members are its row-major order
    view: bool = False  # a load whose value is a view of GM, not a copy (nothing writes there later)


@dataclass(frozen=True, slots=True)
class GM:
    """One run's GM: the arenas (buffers of one shape and dtype stacked) and each buffer as a
    view of its arena (buffer id -> array)."""

    arenas: list[np.ndarray]
    bufs: dict[int, np.ndarray]


@dataclass(slots=True)
class Segment:
    """Steps of one member count run chunk by chunk: each chunk (a range of members, a multiple of
    `grain`) goes through every step in turn while it is in cache, and the chunks are independent
    (each step reads its segment inputs whole-group and in member order, and no step's GM access
    depends on another's), so they may run on several threads. A member's value that a step
    outside the segment reads is assembled whole (`keep`); the others live one chunk at a time."""

    steps: tuple[Step, ...]
    n: int  # members of each step
    grain: int  # a chunk's member count is a multiple of this (each step's batch axes slice evenly)
    chunk: int  # members per chunk
    inside: frozenset[int]  # step ids of the segment
    keep: frozenset[int]  # step ids whose value is assembled whole, for steps outside


@dataclass
class Plan:
    """The batched schedule: groups in wave order (a topological order of the groups), and the
    order they run in: a step (its index), or a segment of steps run chunk by chunk."""

    steps: list[Step]
    waves: int
    order: list[int | Segment] = dataclasses.field(default_factory=list)


class TileExecutor:
    """Runs a tile graph on numpy arrays; `run` is batched unless told otherwise."""

    def __init__(self, graph: Graph, tiles: TileGraph) -> None:
        self.nodes = graph.by_id()
        self.tiles = tiles
        self._uses: dict[int, int] | None = None
        self._plan: Plan | None = None
        self.peak_bytes = 0  # the most bytes of tile values alive at once in the last run
        self.threads = os.cpu_count() or 1  # a batched run's segments use up to this many threads
        self.chunk_bytes = CHUNK_BYTES  # read when the plan is built
        # a parameter no op writes is read in place, never copied
        self._written = {o.region.buffer for o in tiles.ops
                         if o.op in ("store", "matmul", "scatter_update") and o.region is not None}
        self._blas = any(o.op == "matmul" for o in tiles.ops)  # runs BLAS: at one thread (`pypto.compiler.blas`)
        self._own = {b.id for b in tiles.buffers if b.kind == "param" and b.id in self._written}
        self._fresh = _overwritten(tiles, self._own)  # written params whose input values nothing sees
        # GM: each parameter is an arena of its own; the other buffers of one shape and dtype
        # share one (slots of a stacked array), so the loads of many workspaces are one gather
        self._arenas: list[list[Buffer]] = []
        self._slot: dict[int, tuple[int, int]] = {}  # buffer id -> (arena, slot)
        shared: dict[tuple[tuple[int, ...], DataType], int] = {}
        for b in tiles.buffers:
            aid = len(self._arenas) if b.kind == "param" else shared.setdefault((b.shape, b.dtype), len(self._arenas))
            if aid == len(self._arenas):
                self._arenas.append([])
            self._slot[b.id] = (aid, len(self._arenas[aid]))
            self._arenas[aid].append(b)

    # ---- running ------------------------------------------------------------------------------

    def run(self, inputs: Mapping[str, np.ndarray], *, fp64: bool = False,
            order: Sequence[int] | None = None, batched: bool = True) -> dict[str, np.ndarray]:
        """Run every tile op: batched (the default), or one by one in program order or in
        `order` (a list of op ids; it implies unbatched)."""
        if batched and order is None:
            try:
                return self._run(inputs, fp64, None, True)
            except PyptoError:
                pass  # report the error the program-order run meets first
        return self._run(inputs, fp64, order, False)

    def plan(self) -> Plan:
        """The batched schedule (built on first use, then kept)."""
        if self._plan is None:
            self._plan = self.plan_of(self.tiles.ops)
        return self._plan

    def plan_of(self, ops: Sequence[TileOp]) -> Plan:
        """The batched schedule of `ops` alone, in this order as program order, every input of
        each produced among them (the whole program, or one task's subgraph). The plan indexes
        its tile ops by id: a few scattered ops (one task's) are renumbered 0 … n-1 first, so the
        plan's tile ops are then copies of `ops` with local ids and inputs."""
        if _renumbers(ops):
            pos = {o.id: k for k, o in enumerate(ops)}
            ops = tuple(TileOp(k, o.op, o.node, o.instance, o.coord, o.shape, o.dtype, tuple(pos[i] for i in o.inputs),
                                o.region, o.attrs) for k, o in enumerate(ops))
        enabled = gc.isenabled()
        gc.disable()  # the plan allocates many small tuples and frees none: collecting only costs
        try:
            return self._build_plan(ops)
        finally:
            if enabled:
                gc.enable()

    def run_plan(self, plan: Plan, memory: GM, ctx: Ctx) -> None:
        """Run a plan (of `plan_of`) against GM `memory`. As `run_ops`, its tile values stay
        local to the call; the caller sets numpy's error state and orders conflicting GM
        accesses of calls in parallel threads."""
        self._run_batched(plan, memory.arenas, memory.bufs, ctx)

    def _run(self, inputs: Mapping[str, np.ndarray], fp64: bool, order: Sequence[int] | None,
             batched: bool) -> dict[str, np.ndarray]:
        ctx = Ctx({}, fp64)
        arenas, bufs = self._alloc(inputs, fp64)
        with np.errstate(all="ignore"), one_blas_thread() if self._blas else contextlib.nullcontext():
            if batched:
                self.peak_bytes = self._run_batched(self.plan(), arenas, bufs, ctx, self.threads)
            else:
                self._run_ops(bufs, ctx, order)
        return self.outputs(bufs)

    def _alloc(self, inputs: Mapping[str, np.ndarray], fp64: bool) -> tuple[list[np.ndarray], dict[int, np.ndarray]]:
        arenas: list[np.ndarray] = []
        bufs: dict[int, np.ndarray] = {}
        for group in self._arenas:
            b = group[0]
            if b.kind == "param":
                arr = np.ascontiguousarray(inputs[b.name])
                if b.id in self._fresh:
                    arr = np.empty_like(arr)  # every element is written before the kernel's end, none read
                elif b.id in self._written:
                    arr = arr.copy()
                arenas.append(arr[None])
            else:
                arenas.append(np.zeros((len(group),) + b.shape,
                                       dtype=np.float64 if fp64 and b.dtype.is_float else b.dtype.np))
            for k, member in enumerate(group):
                bufs[member.id] = arenas[-1][k, ...]  # a view, also for 0-d buffers
        return arenas, bufs

    # ---- GM and single tasks, for runtimes that schedule the tasks themselves (the cpu board)

    def gm(self, inputs: Mapping[str, np.ndarray], *, fp64: bool = False) -> dict[int, np.ndarray]:
        """Fresh GM for one run, buffer id -> array: parameters from `inputs` (copied when
        written), every other buffer zeroed."""
        return self._alloc(inputs, fp64)[1]

    def memory(self, inputs: Mapping[str, np.ndarray], *, fp64: bool = False) -> GM:
        """Fresh GM for one run as `gm` makes it, with the arenas `run_plan` reads and writes."""
        return GM(*self._alloc(inputs, fp64))

    def outputs(self, bufs: Mapping[int, np.ndarray]) -> dict[str, np.ndarray]:
        """The kernel's outputs from GM after a run, keyed as `run` returns them."""
        # a written parameter's arena is this run's own copy: hand it out; other buffers share
        # arenas with workspaces (and unwritten parameters are the caller's): copy
        return {name: region_view(bufs, r) if r.buffer in self._own else region_view(bufs, r).copy()
                for name, r in self.tiles.outputs}

    def run_ops(self, ops: Sequence[TileOp], bufs: Mapping[int, np.ndarray], ctx: Ctx) -> None:
        """Run `ops` one by one, in this order, against GM `bufs` (the op-by-op path). Tile
        values stay local to the call, so calls for different tasks may run in parallel
        threads: they share only GM, and the caller orders conflicting accesses. numpy's
        error state is per thread: the caller sets it."""
        vals: dict[int, np.ndarray] = {}
        for op in ops:
            self.run_op(op, vals, bufs, ctx)

    def _run_ops(self, bufs: dict[int, np.ndarray], ctx: Ctx, order: Sequence[int] | None) -> None:
        """The reference: one tile op at a time."""
        if self._uses is None:
            uses: dict[int, int] = {}
            for o in self.tiles.ops:
                for i in o.inputs:
                    uses[i] = uses.get(i, 0) + 1
            self._uses = uses
        left = dict(self._uses)
        vals: dict[int, np.ndarray] = {}
        ops = self.tiles.ops
        if order is not None:
            by_id = {o.id: o for o in ops}
            ops = tuple(by_id[i] for i in order)
        live = peak = 0
        for op in ops:
            self.run_op(op, vals, bufs, ctx)
            out = vals.get(op.id)
            if out is not None:
                live += out.nbytes
                peak = max(peak, live)
                if op.id not in left:
                    live -= vals.pop(op.id).nbytes  # nothing reads it
            for i in op.inputs:
                left[i] -= 1
                if not left[i]:
                    live -= vals.pop(i).nbytes
        self.peak_bytes = peak

    def run_op(self, op: TileOp, vals: dict[int, np.ndarray], bufs: Mapping[int, np.ndarray], ctx: Ctx) -> None:
        """Run one tile op (the op-by-op path): its inputs from `vals` (tile op id -> value), its
        value into `vals`, loads, stores and matmuls against GM `bufs`."""
        kind = op.op
        if kind == "load":
            assert op.region is not None
            vals[op.id] = region_view(bufs, op.region).copy()
        elif kind == "store":
            assert op.region is not None
            region_view(bufs, op.region)[...] = vals[op.inputs[0]]
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
        elif kind == "scatter_update":
            self._scatter(op, vals, bufs)
        elif kind == "index_select" and op.region is not None:  # the table's rows read from GM
            node = self.nodes[op.node]
            vals[op.id] = KERNELS[kind](node, [region_view(bufs, op.region), vals[op.inputs[0]]], ctx)
        elif kind == "topk_merge" or (kind == "topk" and "base" in op.attrs):
            vals[op.id] = _merge_sort_step(op, [vals[i] for i in op.inputs])
        elif kind in ("amax", "amin") and self.nodes[op.node].op in ("argmax", "argmin"):
            fn = np.max if kind == "amax" else np.min  # an arg-reduction's partial extremum, in its input dtype
            vals[op.id] = fn(vals[op.inputs[0]], axis=op.attrs["dim"], keepdims=op.attrs["keepdim"])
        else:
            node = self.nodes[op.node]
            out = KERNELS[kind](node, [vals[i] for i in op.inputs], ctx)
            if kind in ("argmax", "argmin") and "base" in op.attrs:
                out = out + op.attrs["base"]  # a partial's index within its tile, made global
            vals[op.id] = out

    def _matmul(self, op: TileOp, bufs: Mapping[int, np.ndarray], ctx: Ctx) -> None:
        node: Node = self.nodes[op.node]
        assert op.region is not None
        out_r = op.region
        a_r, b_r, *extra = op.attrs["inputs"]
        rank = len(out_r.layout)
        # the tile's place in the matmul's result (`at`); its output region may sit elsewhere (a
        # result written straight into `out[...]` at an offset)
        at = op.attrs.get("at") or out_r.offset
        rows = slice(at[-2], at[-2] + op.shape[-2])
        cols = slice(at[-1], at[-1] + op.shape[-1])
        batch = tuple(at[:-2])

        def batched(r: Region) -> np.ndarray:
            arr = region_view(bufs, r)
            lead = arr.shape[:-2]
            idx = tuple(0 if lead[i] == 1 else batch[len(batch) - len(lead) + i] for i in range(len(lead)))
            return arr[idx + (slice(None), slice(None))]

        a = batched(a_r)
        b = batched(b_r)
        a = a[:, rows] if node.attrs.get("a_trans") else a[rows, :]
        b = b[cols, :] if node.attrs.get("b_trans") else b[:, cols]
        xs = [a, b]
        for r in extra:
            full = np.broadcast_to(region_view(bufs, r), out_r.layout)
            xs.append(full[tuple(slice(o, o + 1) for o in batch) + (rows, cols)].reshape(op.shape))
        with one_blas_thread():  # (counted: a no-op inside a run's scope)
            tile = KERNELS["matmul"](node, xs, ctx)
        region_view(bufs, out_r)[...] = tile.reshape(op.shape) if tile.ndim != rank else tile

    def _scatter(self, op: TileOp, vals: Mapping[int, np.ndarray], bufs: Mapping[int, np.ndarray]) -> None:
        """A src tile's rows into its input in GM where its window of the index says (`Expander.scatter_update`):
        2-D, src row `i * s + j` goes to row `index[i, j]`; 4-D ([blocks, block_size, 1, d]), `src[i, j, 0]` to
        block `index[i, j] // block_size`, slot `% block_size`."""
        assert op.region is not None
        node = self.nodes[op.node]
        src, index = vals[op.inputs[0]], vals[op.inputs[1]]
        out = region_view(bufs, op.region)
        if out.ndim == 2:  # the tile's rows from `base` in its index window (whole index rows when it spans several)
            rows = src.reshape(-1, src.shape[-1])
            pos = index.reshape(-1)[op.attrs["base"]:op.attrs["base"] + len(rows)]
            out[index_positions(node, pos, out.shape[0])] = rows[:len(pos)]
        else:  # the index window is the src tile's [b, s] corner (src rows past the index's are a view's padding)
            rows = src[:index.shape[0], :index.shape[1]].reshape(-1, src.shape[-1])
            slots = index_positions(node, index.reshape(-1), out.shape[0] * out.shape[1])
            out[slots // out.shape[1], slots % out.shape[1], 0] = rows

    # ---- batched ------------------------------------------------------------------------------

    def _run_batched(self, plan: Plan, arenas: Sequence[np.ndarray], bufs: Mapping[int, np.ndarray],
                     ctx: Ctx, threads: int = 1) -> int:
        """Run `plan` (segments' chunks on up to `threads` threads); the most bytes of tile values
        it held at once."""
        vals: dict[int, np.ndarray] = {}
        live = peak = 0
        steps = plan.steps
        views = [st.view for st in steps]
        for item in plan.order or range(len(steps)):
            if isinstance(item, Segment):
                self._run_segment(item, vals, arenas, ctx, threads)
                ran: Sequence[Step] = item.steps
            else:
                st = steps[item]
                ran = (st,)
                xs = [self._gather(spec, vals, len(st.ops)) for spec in st.inputs]
                if st.kind == "load":
                    assert st.window is not None
                    vals[st.id] = st.window.load(arenas, st.view)
                elif st.kind == "store":
                    assert st.window is not None
                    st.window.store(arenas, xs[0])
                elif st.kind == "batch":
                    vals[st.id] = self._batch(st, xs, ctx)
                else:
                    self._each(st, xs, vals, bufs, ctx, threads)
            for st in ran:
                if st.id in vals and not st.view:  # a view of GM holds no memory of its own
                    live += _held(vals[st.id])
                    peak = max(peak, live)
            for st in ran:
                for b in st.free:
                    v = vals.pop(b, None)  # (a segment's value that only its own steps read never was)
                    if v is not None and not views[b]:
                        live -= _held(v)
        return peak

    def _run_segment(self, seg: Segment, vals: dict[int, np.ndarray], arenas: Sequence[np.ndarray], ctx: Ctx,
                     threads: int) -> None:
        """Run a segment chunk by chunk: its inputs from outside gathered whole first, the
        values steps outside read assembled whole."""
        ext: dict[tuple[int, int], np.ndarray] = {}
        for st in seg.steps:
            for j, spec in enumerate(st.inputs):
                if spec.mode != "direct" or spec.src not in seg.inside:
                    ext[st.id, j] = self._gather(spec, vals, seg.n)
        outs: dict[int, np.ndarray] = {}
        bounds = [(lo, min(lo + seg.chunk, seg.n)) for lo in range(0, seg.n, seg.chunk)]
        mine: dict[int, np.ndarray] = {}  # this thread's scratch (`_into`), reused chunk after chunk
        self._chunk(seg, *bounds[0], ext, outs, arenas, ctx, mine)  # the first alone: it allocates `outs`
        rest = iter(bounds[1:])
        if threads > 1 and len(bounds) > 2:
            # each thread takes the next chunk when it is done with one (on a loaded machine a
            # thread that waits for a core takes fewer); the caller works too
            lock = threading.Lock()

            def part(scratch: dict[int, np.ndarray]) -> None:
                with np.errstate(all="ignore"):  # (numpy's error state is per thread)
                    while True:
                        with lock:
                            b = next(rest, None)
                        if b is None:
                            return
                        self._chunk(seg, *b, ext, outs, arenas, ctx, scratch)

            helpers = [_pool().submit(part, {}) for _ in range(min(threads, len(bounds) - 1) - 1)]
            try:
                part(mine)
            finally:
                for f in helpers:
                    f.result()
        else:
            for lo, hi in rest:
                self._chunk(seg, lo, hi, ext, outs, arenas, ctx, mine)
        for st in seg.steps:
            if st.id in seg.keep:
                if st.kind == "load":
                    assert st.window is not None
                    vals[st.id] = st.window.load(arenas, st.view)
                else:
                    vals[st.id] = outs[st.id]

    def _chunk(self, seg: Segment, lo: int, hi: int, ext: Mapping[tuple[int, int], np.ndarray],
               outs: dict[int, np.ndarray], arenas: Sequence[np.ndarray], ctx: Ctx,
               scratch: dict[int, np.ndarray]) -> None:
        """Members lo … hi-1 of every step of a segment, in step order. A chunk's values die with
        it (kept ones are copied into `outs`, stores into GM), so an elementwise step writes into
        the calling thread's `scratch` buffer for that step (`_into`): no fresh allocation per
        chunk."""
        cv: dict[int, np.ndarray] = {}
        for st in seg.steps:
            rows = _rows(st.batch, lo, hi)
            a = _chunk_axis(st.batch)
            lead = st.batch[:a] + ((hi - lo) // math.prod(st.batch[a + 1:]),) + st.batch[a + 1:]
            xs = []
            for j, spec in enumerate(st.inputs):
                x = ext.get((st.id, j))
                if x is not None:
                    xs.append(x[rows])
                else:
                    x = cv[spec.src]
                    xs.append(x if spec.shape is None else x.reshape(lead + spec.shape[len(st.batch):]))
            if st.kind == "load":
                assert st.window is not None
                cv[st.id] = st.window.tiles(arenas)[rows]  # nothing writes there before the segment ends
                continue
            if st.kind == "store":
                assert st.window is not None
                st.window.tiles(arenas)[rows] = xs[0]
                continue
            v = self._into(st, xs, ctx, scratch)
            if v is None:
                v = self._batch(st, xs, ctx, lead, None if st.base is None else st.base[rows])
            cv[st.id] = v
            if st.id in seg.keep:
                out = outs.get(st.id)
                if out is None:
                    out = outs[st.id] = np.empty(st.batch + v.shape[len(lead):], dtype=v.dtype)
                out[rows] = v

    @staticmethod
    def _into(st: Step, xs: list[np.ndarray], ctx: Ctx, scratch: dict[int, np.ndarray]) -> np.ndarray | None:
        """An elementwise step whose kernel is one ufunc on operands already of its compute and
        result dtype (the common float32 case): that ufunc, written into `scratch`'s buffer for the
        step — the kernel's call but for `out=`, so the same bytes. None when the kernel must run.
        (A fresh chunk-sized value per step per chunk is what glibc's malloc hands back to the OS
        and page-faults in again: softmax 4096² at 8 x 4096 tiles spent most of its time so.)"""
        op = st.ops[0]
        fn = _INTO_UNARY.get(op.op) if len(xs) == 1 else _INTO_BINARY.get(op.op) if len(xs) == 2 else None
        if fn is None or not op.dtype.is_float:
            return None
        assert st.node is not None and st.node.type is not None
        dt = st.node.type.dtype
        want = ctx.compute_dtype(dt)
        if not dt.is_float or want != (np.dtype(np.float64) if ctx.fp64 else dt.np) \
                or any(x.dtype != want for x in xs):
            return None
        shape = xs[0].shape if len(xs) == 1 else np.broadcast_shapes(xs[0].shape, xs[1].shape)
        n = math.prod(shape)
        buf = scratch.get(st.id)
        if buf is None or buf.size < n or buf.dtype != want:
            buf = scratch[st.id] = np.empty(n, dtype=want)
        out = buf[:n].reshape(shape)
        fn(*xs, out=out)
        return out

    @staticmethod
    def _gather(spec: StepInput, vals: dict[int, np.ndarray], n: int) -> np.ndarray:
        if spec.mode == "direct":
            x = vals[spec.src]
        elif spec.mode == "slice":
            x = vals[spec.src][spec.start:spec.start + n]
        elif spec.mode == "take":
            x = vals[spec.src][spec.rows]
        else:
            first, rows0 = vals[spec.parts[0][0]], spec.parts[0][2]
            x = np.empty((n,) + first.shape[len(rows0) if isinstance(rows0, tuple) else 1:], dtype=first.dtype)
            for src, at, rows in spec.parts:
                x[at] = vals[src][rows]
        return x if spec.shape is None else x.reshape(spec.shape)

    def _each(self, st: Step, xs: list[np.ndarray], vals: dict[int, np.ndarray], bufs: Mapping[int, np.ndarray],
              ctx: Ctx, threads: int = 1) -> None:
        """A group whose kind has no batched form: tile by tile, through the reference path. A wave's
        matmul tiles are independent BLAS calls (one BLAS thread each) writing disjoint GM: they run
        side by side on up to `threads` threads (not when BLAS's thread count cannot be set: each
        call then runs on all of BLAS's threads already)."""
        if st.ops[0].op == "matmul" and threads > 1 and len(st.ops) > 1 and blas_controlled():
            self._matmuls(st.ops, bufs, ctx, threads)
            return
        outs = []
        for k, op in enumerate(st.ops):
            local = {i: x[k] for i, x in zip(op.inputs, xs)}
            self.run_op(op, local, bufs, ctx)
            if op.id in local:
                outs.append(local[op.id])
        if outs:
            vals[st.id] = np.stack(outs)

    def _matmuls(self, ops: Sequence[TileOp], bufs: Mapping[int, np.ndarray], ctx: Ctx, threads: int) -> None:
        """Independent matmul tiles on up to `threads` threads, each taking the next tile when done
        with one (on a loaded machine a thread that waits for a core takes fewer); the caller works
        too. Each tile is the op-by-op path's call, so its bytes are the same."""
        lock = threading.Lock()
        rest = iter(ops)

        def part() -> None:
            with np.errstate(all="ignore"), one_blas_thread():  # (numpy's error state is per thread)
                while True:
                    with lock:
                        op = next(rest, None)
                    if op is None:
                        return
                    self._matmul(op, bufs, ctx)

        helpers = [_pool().submit(part) for _ in range(min(threads, len(ops)) - 1)]
        try:
            part()
        finally:
            for f in helpers:
                f.result()

    def _batch(self, st: Step, xs: list[np.ndarray], ctx: Ctx, lead: tuple[int, ...] | None = None,
               base: np.ndarray | None = None) -> np.ndarray:
        """One kernel call for the whole group (or for a chunk of it: its batch axes `lead`, its
        arg-reduction offsets `base`); the tile ops' semantics as in `run_op`, with leading
        batch axes."""
        op = st.ops[0]
        kind = op.op
        if lead is None:
            lead, base = st.batch, st.base
        if kind == "combine":
            fn = _COMBINE[op.attrs["fn"]]
            parts = [ctx.up(x, op.dtype) if op.dtype.is_float else x for x in xs]
            acc = parts[0]
            for p in parts[1:]:
                acc = fn(acc, p)
            return ctx.down(acc, op.dtype)
        if kind == "combine_arg":
            half = len(xs) // 2
            idx = np.stack(xs[:half])
            val = np.stack([x.astype(np.float64) for x in xs[half:]])
            val = np.where(np.isnan(val), np.inf if op.attrs["fn"] == "max" else -np.inf, val)
            pick = (np.argmax if op.attrs["fn"] == "max" else np.argmin)(val, axis=0)
            return np.take_along_axis(idx, pick[None], axis=0)[0].astype(op.dtype.np)
        if kind == "fill":
            return ctx.down(np.full(lead + op.shape, op.attrs.get("value", 0)), op.dtype)
        if kind == "bitcast":
            return np.ascontiguousarray(xs[0]).view(op.dtype.np)
        if kind == "expand_clone":
            return np.broadcast_to(xs[0], lead + op.shape).copy()
        assert st.node is not None
        if kind in ("amax", "amin") and self.nodes[op.node].op in ("argmax", "argmin"):
            fn = np.max if kind == "amax" else np.min
            return fn(xs[0], axis=_shift(op.attrs["dim"], len(lead)), keepdims=op.attrs["keepdim"])
        out = KERNELS[kind](st.node, xs, ctx)
        if base is not None:
            out = out + base.astype(out.dtype)  # each partial's index within its tile, made global
        return out

    # ---- the plan -----------------------------------------------------------------------------

    @staticmethod
    def _waves(ops: Sequence[TileOp]) -> list[int]:
        """Each tile op's wave (indexed by op id): after its producers and after the GM
        accesses it must follow in program order."""
        top = max((o.id for o in ops), default=-1) + 1
        by_buffer: dict[int, list[tuple[int, Region, bool]]] = {}
        written: set[int] = set()
        for o in ops:
            if o.region is None:
                continue
            for r, w in _gm_accesses(o):
                by_buffer.setdefault(r.buffer, []).append((o.id, r, w))
                if w:
                    written.add(r.buffer)
        tracked: dict[int, list[tuple[_Cells, Any, bool]]] = {}  # op id -> (cells, index, is a write)
        for b in written:  # a buffer nothing writes needs no tracking
            acc = by_buffer[b]
            cells = _Cells([r for _, r, _ in acc])
            for (oid, _, w), idx in zip(acc, cells.index):
                if idx is not None:
                    tracked.setdefault(oid, []).append((cells, idx, w))
        wave = [0] * top
        first_use = [-1] * top  # the earliest wave that reads an op's value
        for o in ops:
            lv = 0
            for i in o.inputs:
                if wave[i] >= lv:
                    lv = wave[i] + 1
            acc_t = tracked.get(o.id)
            if acc_t is not None:
                for c, idx, w in acc_t:
                    after = c.after(idx, w)
                    if after >= lv:
                        lv = after + 1
                for c, idx, w in acc_t:
                    c.record(idx, w, lv)
            wave[o.id] = lv
            for i in o.inputs:
                if first_use[i] < 0 or lv < first_use[i]:
                    first_use[i] = lv
        # sources (loads, fills, aranges) move to just before their first consumer, and a
        # load stays before the next write over what it reads
        for o in reversed(ops):
            acc_t = tracked.get(o.id)
            if o.inputs or o.op not in ("load", "fill", "arange"):
                for c, idx, w in acc_t or ():
                    if w:
                        c.record_next_write(idx, wave[o.id])
            elif first_use[o.id] >= 0:
                late = first_use[o.id] - 1
                for c, idx, _ in acc_t or ():
                    late = min(late, c.before(idx) - 1)
                wave[o.id] = max(wave[o.id], late)
        return wave

    def _build_plan(self, ops: Sequence[TileOp]) -> Plan:
        wave = self._waves(ops)
        top = len(wave)
        made: list[Any] = [None] * top  # each op's value: (tile shape, dtype id)
        attr_keys: dict[int, tuple[Any, ...]] = {}
        groups: dict[tuple[Any, ...], list[TileOp]] = {}
        for o in ops:
            kind = o.op
            sig = made[o.id] = (o.shape, id(o.dtype))  # dtypes are enum singletons: id hashes fast
            ins = tuple(made[i] for i in o.inputs)
            if kind in ("load", "store"):
                assert o.region is not None
                r = o.region
                key: tuple[Any, ...] = (wave[o.id], kind, self._slot[r.buffer][0], r.layout, r.shape, sig, ins)
            elif kind == "matmul":
                key = (wave[o.id], kind)
            else:
                ak = attr_keys.get(id(o.attrs))
                if ak is None:  # the tiles of one tensor op mostly share their attribute dict
                    ak = _attr_key(o.attrs)
                    attr_keys[id(o.attrs)] = ak
                key = (wave[o.id], kind, o.node, sig, ak, ins)
            groups.setdefault(key, []).append(o)
        ordered = sorted(groups.values(), key=lambda g: (wave[g[0].id], g[0].id))
        group_of = np.full(top, -1, dtype=np.int64)
        row_of = np.full(top, -1, dtype=np.int64)
        steps: list[Step] = []
        shifted: dict[tuple[int, int], Node] = {}
        for sid, members in enumerate(ordered):
            mids = np.fromiter((o.id for o in members), dtype=np.int64, count=len(members))
            group_of[mids] = sid
            row_of[mids] = np.arange(len(members))
            steps.append(self._step(sid, tuple(members), group_of, row_of, steps, shifted))
        self._views(steps)
        order = self._segments(steps)
        # each value is freed after the last step that reads it runs: in run order (a segment's
        # steps run together, where the segment stands), by that item's last step
        pos = [0] * len(steps)
        frees_at: list[int] = []  # by run position: the step whose `free` lists what dies there
        for k, item in enumerate(order):
            members = item.steps if isinstance(item, Segment) else (steps[item],)
            for st in members:
                pos[st.id] = k
            frees_at.append(max(st.id for st in members))
        last_at: dict[int, int] = {}
        for st in steps:
            for spec in st.inputs:
                for src in ([spec.src] if spec.mode != "mixed" else [p[0] for p in spec.parts]):
                    last_at[src] = max(last_at.get(src, -1), pos[st.id])
        frees: dict[int, list[int]] = {}
        for st in steps:
            if st.kind == "store" or st.ops[0].op in ("matmul", "scatter_update"):
                continue  # makes no value
            frees.setdefault(frees_at[last_at.get(st.id, pos[st.id])], []).append(st.id)
        for st in steps:
            st.free = tuple(frees.get(st.id, ()))
        return Plan(steps, max(wave, default=-1) + 1, order)

    def _segments(self, steps: list[Step]) -> list[int | Segment]:
        """The run order: each step in plan order, except that steps of one member count that
        read each other whole (a load of a full lattice, kernels, a full store) and are big
        enough to gain from it gather into segments, each run where the first step that needs
        one of its values (or GM it touches) comes. A step joins an open segment only if all it
        waits for in open segments is whole-group values of that segment (no GM order)."""
        # what each step waits for: its inputs' producers, and GM: per arena, a read waits for
        # the last write, a write for the last write and the reads since
        deps: list[dict[int, bool]] = []  # step -> {earlier step: is it a whole-group value read}
        last_write: dict[int, int] = {}
        reads: dict[int, list[int]] = {}
        for st in steps:
            d: dict[int, bool] = {}
            for spec in st.inputs:
                if spec.mode == "mixed":
                    for src, _, _ in spec.parts:
                        d[src] = False
                else:
                    d[spec.src] = d.get(spec.src, True) and spec.mode == "direct"
            for arena, write in self._arena_accesses(st):
                w = last_write.get(arena)
                if w is not None:
                    d[w] = False
                if write:
                    for r in reads.pop(arena, ()):
                        d[r] = False
                    last_write[arena] = st.id
                else:
                    reads.setdefault(arena, []).append(st.id)
            deps.append(d)
        order: list[int | Segment] = []
        open_: dict[int, list[Step]] = {}  # member count -> the open segment's steps
        where: dict[int, int] = {}  # step id -> member count of the open segment holding it
        users: dict[int, set[int]] = {}  # step id -> steps that read its value
        for st in steps:
            for spec in st.inputs:
                for src in ([spec.src] if spec.mode != "mixed" else [p[0] for p in spec.parts]):
                    users.setdefault(src, set()).add(st.id)

        def close(n: int) -> None:
            members = open_.pop(n)
            for m in members:
                del where[m.id]
            if len(members) == 1:
                order.append(members[0].id)
                return
            inside = frozenset(m.id for m in members)
            grain = 1
            for m in members:
                grain = math.lcm(grain, _unit(m.batch))
            widest = max(tile_bytes[m.id] for m in members)
            chunk = max(grain, (self.chunk_bytes // max(widest, 1)) // grain * grain)
            keep = frozenset(m.id for m in members if users.get(m.id, set()) - inside)
            order.append(Segment(tuple(members), n, grain, chunk, inside, keep))

        # a member's largest tile among what a step reads and writes
        tile_bytes = [_member_bytes(st) for st in steps]
        for st in steps:
            for spec in st.inputs:
                for src in ([spec.src] if spec.mode != "mixed" else [p[0] for p in spec.parts]):
                    tile_bytes[st.id] = max(tile_bytes[st.id], _member_bytes(steps[src]))
        for st in steps:
            n = len(st.ops)
            waits = {where[d]: None for d in deps[st.id] if d in where}
            # a segment starts at a step big enough to gain from chunks (two at least); any step of
            # a kind that chunks and of its member count may join it
            joins = (self._chunkable(st) and (n in open_ or tile_bytes[st.id] * n >= 2 * self.chunk_bytes)
                     and all(where[d] == n and whole for d, whole in deps[st.id].items() if d in where))
            for m in waits:
                if not (joins and m == n):
                    close(m)
            if joins:
                open_.setdefault(n, []).append(st)
                where[st.id] = n
            else:
                order.append(st.id)
        for n in list(open_):
            close(n)
        return order

    def _arena_accesses(self, st: Step) -> list[tuple[int, bool]]:
        """The arenas a step reads (False) and writes (True)."""
        if st.window is not None:
            return [(st.window.arena, st.kind == "store")]
        acc: list[tuple[int, bool]] = []
        if st.kind == "each":
            for o in st.ops:
                for r, w in _gm_accesses(o):
                    acc.append((self._slot[r.buffer][0], w))
        return acc

    @staticmethod
    def _chunkable(st: Step) -> bool:
        """Whether a step may run chunk by chunk: a full load or store, or a kernel."""
        return st.kind != "each" and len(st.ops) >= 2 and (st.window is None or st.window.full)

    def _step(self, sid: int, members: tuple[TileOp, ...], group_of: np.ndarray, row_of: np.ndarray,
              steps: list[Step], shifted: dict[tuple[int, int], Node]) -> Step:
        op = members[0]
        kind = op.op
        n = len(members)
        if kind == "load":
            window = self._window(members)
            return Step(sid, "load", members, window=window, batch=window.grid if window.full else (n,))
        # (a bitcast of 0-d tiles would reinterpret the batch axis)
        batch = kind in _BATCHABLE and not (kind == "bitcast" and not op.shape)
        window = self._window(members) if kind == "store" else None
        srcs_rows = []
        for j in range(len(op.inputs)):
            prods = np.fromiter((o.inputs[j] for o in members), dtype=np.int64, count=n)
            srcs_rows.append((group_of[prods], row_of[prods]))
        # the step's batch axes: a full store's lattice; else those of an input taken whole (so a
        # chain of whole groups keeps the lattice of the load it started from); else one axis
        lead: tuple[int, ...] = (n,)
        if window is not None:
            lead = window.grid if window.full else (n,)
        elif batch:
            for srcs, rows in srcs_rows:
                src0 = int(srcs[0])
                if (n == len(steps[src0].ops) and len(steps[src0].batch) > len(lead) and (srcs == src0).all()
                        and (rows == np.arange(n)).all()):
                    lead = steps[src0].batch
        inputs = []
        target = op.region.shape if window is not None and op.region is not None else op.shape
        for srcs, rows in srcs_rows:
            src0 = int(srcs[0])
            src_shape = steps[src0].ops[0].shape
            pad = (1,) * (len(target) - len(src_shape)) if (batch or window is not None) else ()
            want = lead + pad + src_shape
            flat = None if lead == (n,) and not pad else want  # the shape of a gather from a flat producer
            if (srcs == src0).all():
                src_lead = steps[src0].batch
                if n == len(steps[src0].ops) and (rows == np.arange(n)).all():
                    spec = StepInput("direct", src0, shape=None if src_lead == lead and not pad else want)
                elif len(src_lead) > 1:
                    spec = StepInput("take", src0, rows=np.unravel_index(rows, src_lead), shape=want)
                elif (np.diff(rows) == 1).all():
                    spec = StepInput("slice", src0, start=int(rows[0]), shape=flat)
                else:
                    spec = StepInput("take", src0, rows=rows, shape=flat)
            else:
                parts = []
                for src in np.unique(srcs):
                    at = np.nonzero(srcs == src)[0]
                    src_lead = steps[int(src)].batch
                    part_rows = rows[at] if len(src_lead) == 1 else np.unravel_index(rows[at], src_lead)
                    parts.append((int(src), at, part_rows))
                spec = StepInput("mixed", -1, parts=tuple(parts), shape=flat)
            inputs.append(spec)
        if window is not None:
            return Step(sid, "store", members, tuple(inputs), window=window, batch=lead)
        if not batch:
            return Step(sid, "each", members, tuple(inputs), batch=(n,))
        node = self.nodes[op.node]
        nb = len(lead)
        if kind in _REDUCE or kind == "transpose":
            node = shifted.get((node.id, nb)) or shifted.setdefault((node.id, nb), _shifted(node, nb))
        base = None
        if kind in ("argmax", "argmin") and "base" in op.attrs:
            base = np.array([o.attrs["base"] for o in members]).reshape(lead + (1,) * len(op.shape))
        return Step(sid, "batch", members, tuple(inputs), node=node, base=base, batch=lead)

    def _views(self, steps: Sequence[Step]) -> None:
        """Mark each full load a view of GM (not a copy) when nothing writes its arena after it, so
        GM under the view keeps its values while the value and anything made from it lives."""
        last_write: dict[int, int] = {}
        for st in steps:
            if st.kind == "store":
                assert st.window is not None
                last_write[st.window.arena] = st.id
            elif st.kind == "each":
                for o in st.ops:
                    if o.op in ("matmul", "scatter_update") and o.region is not None:
                        last_write[self._slot[o.region.buffer][0]] = st.id
        for st in steps:
            if st.kind == "load" and st.window is not None and st.window.full:
                st.view = last_write.get(st.window.arena, -1) < st.id

    def retarget(self, plan: Plan, like: Sequence[TileOp], ops: Sequence[TileOp]) -> Plan | None:
        """`plan` (of `plan_of(like)`) for `ops`, a task of the same leaf: the same steps with
        `ops`' tile ops and windows, or None when `ops` is not `like` moved in GM — the same
        kinds, shapes, dtypes and wiring, each buffer of `like` standing for one of `ops`'s with
        every region on it shifted by one offset (so the same accesses overlap: the plan's waves
        hold), and the same windows being full lattices of the same grids."""
        if len(ops) != len(like):
            return None
        at_like = {o.id: k for k, o in enumerate(like)}
        at_ops = {o.id: k for k, o in enumerate(ops)}
        buffer: dict[int, int] = {}
        shift: dict[int, tuple[int, ...]] = {}
        for a, b in zip(like, ops):
            if (a.op != b.op or a.op == "matmul" or a.shape != b.shape or a.dtype is not b.dtype
                    or [at_like[i] for i in a.inputs] != [at_ops[i] for i in b.inputs]):
                return None
            ra, rb = a.region, b.region
            if ra is None or rb is None:
                if ra is not rb:
                    return None
                continue
            if ra.layout != rb.layout or ra.shape != rb.shape or buffer.setdefault(ra.buffer, rb.buffer) != rb.buffer:
                return None
            d = tuple(y - x for x, y in zip(ra.offset, rb.offset))
            if shift.setdefault(ra.buffer, d) != d:
                return None
        if len(set(buffer.values())) != len(buffer):
            return None
        steps: list[Step] = []
        shifted: dict[int, Node] = {}
        at = {o.id: k for k, o in enumerate(like)} if not _renumbers(like) else None  # else: ids are positions
        for st in plan.steps:
            members = tuple(ops[o.id if at is None else at[o.id]] for o in st.ops)
            window, node, base = st.window, st.node, st.base
            if window is not None:
                window = self._window(members)
                if window.full != st.window.full or window.full and window.grid != st.window.grid:
                    return None
            if node is not None and members[0].node != node.id:
                node = self.nodes[members[0].node]
                if len(st.batch) and (members[0].op in _REDUCE or members[0].op == "transpose"):
                    node = shifted.get(node.id) or shifted.setdefault(node.id, _shifted(node, len(st.batch)))
            if base is not None:
                base = np.array([o.attrs["base"] for o in members]).reshape(base.shape)
            steps.append(dataclasses.replace(st, ops=members, window=window, node=node, base=base, view=False))
        self._views(steps)
        order: list[int | Segment] = [
            item if isinstance(item, int) else dataclasses.replace(item, steps=tuple(steps[m.id] for m in item.steps))
            for item in plan.order]
        return Plan(steps, plan.waves, order)

    def _window(self, ops: Sequence[TileOp]) -> _Window:
        regions = []
        for o in ops:
            assert o.region is not None
            regions.append(o.region)
        return _Window.of(regions, self._slot, len(self._arenas[self._slot[regions[0].buffer][0]]))




CHUNK_BYTES = 1 << 21  # a segment chunk's largest value (measured: 256 KB chunks pay Python's cost per
# call 8 times as often for little cache gain; 2 MB ones keep a chunk's values in L3 and out of mmap)
def _held(x: np.ndarray) -> int:
    """The bytes a stacked value holds: one member's for a tile seen n times (`_Window.load`)."""
    return x.nbytes // x.shape[0] if x.ndim and x.shape[0] > 1 and x.strides[0] == 0 else x.nbytes


REPEAT_BYTES = 1 << 26  # a load whose members all read one tile is one copy seen n times past this
# many stacked bytes (a whole-cache operand of index_select in a loop: 128 x 128 MB stacked before)
_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads segments' chunks run on (made on first use, one per CPU; a forked child,
    which has the pool's object but not its threads, makes its own)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="pypto-exec"))
        return _POOL[0]


def _forget_pool() -> None:
    global _POOL_LOCK
    _POOL.clear()
    _POOL_LOCK = threading.Lock()  # (it may have been held by a thread that does not exist here)


os.register_at_fork(after_in_child=_forget_pool)


def _overwritten(tiles: TileGraph, params: set[int]) -> set[int]:
    """The buffers of `params` that no tile op reads and whose writes tile them exactly (regions of
    one shape on one layout at distinct multiples of it, as many as fill it): their input values
    are never seen, so a run need not copy them in."""
    read: set[int] = set()
    writes: dict[int, list[Region]] = {}
    for o in tiles.ops:
        for r, w in _gm_accesses(o):
            if w:
                writes.setdefault(r.buffer, []).append(r)
            else:
                read.add(r.buffer)
    out = set()
    for b in params - read:
        rs = writes.get(b, [])
        if not rs:
            continue
        r0 = rs[0]
        if 0 not in r0.shape and (all(r.layout == r0.layout and r.shape == r0.shape for r in rs)
                and all(o % n == 0 and o + n <= d for r in rs for o, n, d in zip(r.offset, r.shape, r.layout))
                and len({r.offset for r in rs}) == len(rs) and len(rs) * math.prod(r0.shape) == math.prod(r0.layout)):
            out.add(b)
    return out


def _renumbers(ops: Sequence[TileOp]) -> bool:
    """Whether `plan_of` renumbers these ops (a few scattered ones) before planning."""
    return bool(ops) and max(o.id for o in ops) >= 2 * len(ops) + 64


def _unit(batch: tuple[int, ...]) -> int:
    """Members per index of a value's chunk axis (its first axis longer than 1)."""
    a = _chunk_axis(batch)
    return math.prod(batch[a + 1:])


def _chunk_axis(batch: tuple[int, ...]) -> int:
    return next((a for a, g in enumerate(batch) if g > 1), len(batch) - 1)


def _member_bytes(st: Step) -> int:
    """Bytes of one member's tile (of the region, for loads and stores)."""
    op = st.ops[0]
    shape = op.region.shape if st.window is not None and op.region is not None else op.shape
    return math.prod(shape) * op.dtype.nbytes


def _rows(batch: tuple[int, ...], lo: int, hi: int) -> tuple[slice, ...]:
    """Members lo … hi-1 of a value with batch axes `batch`, as a slice of its chunk axis."""
    a = _chunk_axis(batch)
    u = math.prod(batch[a + 1:])
    return (slice(None),) * a + (slice(lo // u, hi // u),)


def _shifted(node: Node, nb: int) -> Node:
    """The node as the kernel must see it for stacked tiles: axes `nb` further right."""
    attrs = dict(node.attrs)
    if "dim" in attrs:
        attrs["dim"] = _shift(attrs["dim"], nb)
    if "perm" in attrs:
        perm = tuple(attrs["perm"])
        attrs["perm"] = tuple(range(nb)) + tuple(p % len(perm) + nb for p in perm)
    return dataclasses.replace(node, attrs=attrs)
