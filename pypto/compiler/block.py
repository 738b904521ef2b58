"""The block stage: each leaf function becomes one core's instruction list.

The tile stage says *what* a task computes (tile ops in a subgraph); a core runs a
straight list of instructions on its pipes, reading and writing on-chip buffers at byte
offsets, with `set_flag / wait_flag` events wherever one pipe must wait for another. This
module makes that list for every leaf function, in the spirit of a PTO-ISA listing, so
the IDE can show what each line of the kernel turns into on the core, where its buffers
sit, and where the pipes synchronize. The execute stage costs these lists.

Three steps, each linear in the block's instructions (a block that spills is lowered and allocated
a second time, in another order: step 2):

1. **Lowering.** The template subgraph's tile ops, in their (topological) order, become
   virtual instructions over virtual values. A matmul tile op becomes its K loop: per L0C
   block of the output tile and per k step, TLOAD of the A / B blocks GM->L1 when the L1
   block changes, TMOV L1->L0A and L1->L0B, TMATMUL accumulating in L0C; then TFIXPIPE
   L0C->GM (bias, scale, relu, cast applied on the way out). With L0 tile = L1 tile in m
   and n (one L0C block) there are exactly `k_steps` TMATMULs.
2. **Allocation.** A linear scan per memory (UB for AIV; L1, L0A, L0B, L0C for AIC; sizes
   from the board), first fit, 32-byte aligned (where that spills, tried again with buffers of
   at most 1/64 of the memory taken from its top end, unless no buffer that small was asked for:
   that would be the same run); a value's buffer is freed after its last
   use, and a same-size elementwise result takes over a dying input's buffer in place. If
   every load buffer can be doubled without spilling, the block is *double-buffered*:
   loads get a ping and a pong half, successive loads into the same region alternate
   halves (so MTE2 of tile i+1 overlaps V of tile i; on AIC, MTE1 of step k+1 overlaps M
   of step k) and consecutive tasks of the leaf alternate too. When something cannot fit,
   the live value used furthest in the future is spilled (TSTORE to a GM spill area, TLOAD
   back before its next use) rather than over-allocating; spills are counted. A block that
   spills in program order is lowered and allocated again in depth-first order from its
   outputs (`block_order`, PyPTO's block scheduler's sort), kept when it spills less.
3. **Synchronization.** Walking the instructions once, every read of a byte range (or GM
   region) written earlier on another pipe (RAW), and every write over one read or
   written earlier on another pipe (WAR/WAW), needs that pipe's instruction finished:
   SET_FLAG(src, dst, ev) right after the producer, WAIT_FLAG before the consumer. A
   vector clock per pipe drops a wait already implied by earlier waits (pipes are in
   order, so waiting for a later instruction covers earlier ones). Event ids are reused
   round-robin per pipe pair, 8 per pair; a ninth outstanding event first waits for the
   oldest.

Opcode table (tile op -> opcode, pipe):

| tile op                         | opcode                                  | pipe |
|---------------------------------|-----------------------------------------|------|
| load (AIV)                      | TLOAD  GM->UB                           | MTE2 |
| store                           | TSTORE UB->GM                           | MTE3 |
| add sub mul div (tile, tile)    | TADD TSUB TMUL TDIV                     | V    |
| the same with a scalar          | TADDS TSUBS TMULS TDIVS (any binary +S) | V    |
| maximum minimum                 | TMAX TMIN (TMAXS TMINS)                 | V    |
| pow floor_div remainder         | TPOW TFLOORDIV TREM                     | V    |
| eq ne gt ge lt le               | TCMP (TCMPS), the comparison noted      | V    |
| logical_and / logical_not       | TAND / TNOT                             | V    |
| where                           | TSEL                                    | V    |
| other unary (exp, log, sqrt …)  | T + NAME (TEXP TLOG TSQRT TRSQRT TABS TRELU …), reciprocal TRECIP | V |
| cast                            | TCAST, the target dtype noted           | V    |
| sum amax amin prod, last dim    | TROWSUM TROWMAX TROWMIN TROWPROD        | V    |
| the same over another dim       | TCOLSUM TCOLMAX TCOLMIN TCOLPROD        | V    |
| argmax / argmin                 | TROWARGMAX TROWARGMIN (TCOL… other dim) | V    |
| combine fn add/max/min/mul      | TADD/TMAX/TMIN/TMUL, one per extra part | V    |
| combine_arg                     | TARGCOMBINE                             | V    |
| topk / topk_merge (merge sort)  | TTOPK (a cut's) / TMRGSORT (two merged) | V    |
| fill / arange                   | TEXPANDS / TCI                          | V    |
| transpose                       | TTRANS                                  | V    |
| gathermask                      | TGATHERMASK, the pattern mode noted     | V    |
| expand_clone                    | TROWEXPAND (last dim) / TCOLEXPAND      | V    |
| clone                           | TCOPY  UB->UB                           | V    |
| bitcast                         | none: the result aliases its input      |      |
| matmul: A/B (and bias) blocks   | TLOAD  GM->L1                           | MTE2 |
| matmul: L1 -> L0A / L0B         | TMOV                                    | MTE1 |
| matmul: one k step              | TMATMUL into L0C                        | M    |
| matmul: result                  | TFIXPIPE L0C->GM                        | FIX  |
| spill / reload                  | TSTORE (FIX from L0C) / TLOAD, "spill"  | MTE3 / MTE2 |
| sync                            | SET_FLAG / WAIT_FLAG                    | src / dst pipe |

The S (scalar) pipe exists in the pipe list but this lowering issues nothing on it.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import heapq
import itertools
import math
import os
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypto.compiler.block_ir import PEAK_LABEL, PIPES, Block, BufferSpan, Instr, Operand
from pypto.compiler.block_order import dfs_order, streamed_loads
from pypto.compiler.manager import PassContext, Program
from pypto.compiler.tile_ir import Buffer, Leaf, Region, Subgraph, TileOp, op_with_id, ops_by_id
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Node
from pypto.ir.ops import OPS
from pypto.ir.source import Loc
from pypto.tracing.tiling import strict_at

EVENTS_PER_PAIR = 8  # the default; the board file's events_per_pipe_pair decides
# a MIX leaf (a PyPTO 3 scope with cube and vector work, 1c2v) uses both: the AIC's and an AIV's memories
MEMORIES = {"AIV": ("UB",), "AIC": ("L1", "L0A", "L0B", "L0C"), "MIX": ("UB", "L1", "L0A", "L0B", "L0C")}
_UNSPILLABLE = frozenset({"L0A", "L0B"})  # no path from L0A/L0B back to GM on A2/A3


# ---- opcodes ----------------------------------------------------------------------------------

_RENAMED = {"reciprocal": "TRECIP", "logical_not": "TNOT", "logical_and": "TAND", "maximum": "TMAX",
            "minimum": "TMIN", "floor_div": "TFLOORDIV", "remainder": "TREM", "where": "TSEL",
            "clone": "TCOPY", "transpose": "TTRANS", "fill": "TEXPANDS", "arange": "TCI",
            "combine_arg": "TARGCOMBINE", "topk_merge": "TMRGSORT"}
_COMPARE = frozenset({"eq", "ne", "gt", "ge", "lt", "le"})
_REDUCE = {"sum": "SUM", "amax": "MAX", "amin": "MIN", "prod": "PROD", "argmax": "ARGMAX", "argmin": "ARGMIN"}
_COMBINE = {"add": "TADD", "max": "TMAX", "min": "TMIN", "mul": "TMUL"}


def _kind(op: str) -> str:
    d = OPS.get(op)
    return d.kind if d is not None else ""


def vector_opcode(o: TileOp, in_shapes: Sequence[tuple[int, ...]]) -> tuple[str, str, bool]:
    """(opcode, note, elementwise) of a vector tile op; elementwise results may be computed in place."""
    a = o.attrs
    kind = _kind(o.op)
    if o.op in _REDUCE:
        rank = len(in_shapes[0]) if in_shapes else len(o.shape)
        d = a.get("dim", -1) % max(1, rank)
        part = f"partial {a['partial']}" if "partial" in a else ""
        return ("TROW" if d == rank - 1 else "TCOL") + _REDUCE[o.op], part, False
    if o.op == "expand_clone":
        src = in_shapes[0] if in_shapes else o.shape
        row = bool(src) and src[-1] == 1 and o.shape[-1] != 1
        return ("TROWEXPAND" if row else "TCOLEXPAND"), "", False
    if o.op == "fill":
        return "TEXPANDS", f"= {a.get('value', 0)}", False
    if o.op == "arange":
        return "TCI", f"from {a.get('first')} step {a.get('step')}", False
    if o.op == "transpose":
        return "TTRANS", f"perm {list(a.get('perm', ()))}", False
    if o.op == "gathermask":
        return "TGATHERMASK", f"pattern {a.get('pattern_mode')}", False
    notes = []
    if o.op in _COMPARE:
        name = "TCMP"
        notes.append(o.op)
    else:
        name = _RENAMED.get(o.op, "T" + o.op.upper())
    if o.op == "cast":
        dt = a.get("dtype")
        notes.append(f"-> {dt.short}" if isinstance(dt, DataType) else "")
    if "scalar" in a and kind == "binary":
        name += "S"
        notes.append(f"{'scalar ' if not a.get('reverse') else 'scalar (reversed) '}{a['scalar']}")
    elementwise = kind in ("unary", "binary", "where") or o.op == "clone"
    return name, " ".join(n for n in notes if n), elementwise


# ---- lowering to virtual instructions ----------------------------------------------------------

def _nbytes(shape: Sequence[int], dtype: DataType, align: int) -> int:
    raw = math.prod(shape) * dtype.nbytes
    return max(align, -(-raw // align) * align)


@dataclass(slots=True)
class _Val:
    id: int
    space: str
    kind: str  # the allocation name's prefix: ub, l1a, l1b, l1bias, l1scale, l0a, l0b, l0c
    shape: tuple[int, ...]
    dtype: DataType
    size: int  # aligned bytes
    root: int  # itself, or the value a bitcast aliases
    load: bool = False  # a load destination: doubled when the block is double-buffered


@dataclass(slots=True)
class _VI:
    opcode: str
    pipe: str
    tile_op: int
    defs: tuple[int, ...] = ()
    uses: tuple[int, ...] = ()
    updates: tuple[int, ...] = ()  # read and written (accumulators)
    gm_src: tuple[Operand, ...] = ()
    gm_dst: tuple[Operand, ...] = ()
    inplace: bool = False
    note: str = ""


def _gm(region: Region, buffers: Sequence[Buffer], align: int, shape: tuple[int, ...] | None = None,
        at: tuple[int, ...] | None = None) -> Operand:
    b = buffers[region.buffer]
    shp = region.shape if shape is None else shape
    return Operand("GM", b.name, 0, _nbytes(shp, b.dtype, 1), shp, b.dtype, -1, region.buffer, region.layout,
                   region.offset if at is None else at)


class _Lowering:
    """Tile ops -> virtual instructions over virtual values (no addresses yet)."""

    def __init__(self, ops: Mapping[int, TileOp], buffers: Sequence[Buffer], align: int,
                 caps: Mapping[str, int] | None = None, fractal: Mapping[str, Any] | None = None) -> None:
        self.ops = ops
        self.buffers = buffers
        self.align = align
        self.caps = dict(caps or {})
        self.fractal = dict(fractal or {})
        self.refits: list[tuple[int, str]] = []  # (tile op, what the L0 step became and why)
        self.vals: list[_Val] = []
        self.vis: list[_VI] = []
        self.of: dict[int, int] = {}  # tile op id -> the value holding its tile
        self.deferred: set[int] = set()  # loads made where their combine takes them (`block_order.streamed_loads`)

    def val(self, space: str, kind: str, shape: tuple[int, ...], dtype: DataType, load: bool = False) -> int:
        v = _Val(len(self.vals), space, kind, shape, dtype, _nbytes(shape, dtype, self.align), len(self.vals), load)
        self.vals.append(v)
        return v.id

    def emit(self, vi: _VI) -> None:
        self.vis.append(vi)

    def inputs(self, o: TileOp) -> tuple[int, ...]:
        missing = [i for i in o.inputs if i not in self.of]
        assert not missing, f"tile op {o.id} reads tile ops {missing} from outside its subgraph"
        return tuple(self.of[i] for i in o.inputs)

    def lower(self, o: TileOp) -> None:
        if o.op == "combine":
            self.combine(o)
            return
        if o.op == "matmul":
            self.matmul(o)
            return
        if o.op == "load":
            assert o.region is not None
            v = self.of[o.id] = self.val("UB", "ub", o.shape, o.dtype, load=True)
            self.emit(_VI("TLOAD", "MTE2", o.id, defs=(v,), gm_src=(_gm(o.region, self.buffers, self.align),)))
            return
        ins = self.inputs(o)
        if o.op == "store":
            assert o.region is not None
            self.emit(_VI("TSTORE", "MTE3", o.id, uses=ins[:1], gm_dst=(_gm(o.region, self.buffers, self.align),)))
            return
        if o.op == "index_select" and o.region is not None:  # the table's rows into the UB, where the index says
            v = self.of[o.id] = self.val("UB", "ub", o.shape, o.dtype, load=True)
            src = _gm(o.region, self.buffers, self.align, o.shape, o.region.offset)
            self.emit(_VI("TLOAD", "MTE2", o.id, defs=(v,), uses=ins, gm_src=(src,), note="rows at the index's places"))
            return
        if o.op == "scatter_update":  # the src tile's rows into the input in GM, each where the index says
            assert o.region is not None
            dst = _gm(o.region, self.buffers, self.align, o.shape, o.region.offset)
            self.emit(_VI("TSTORE", "MTE3", o.id, uses=ins, gm_dst=(dst,), note="rows at the index's places"))
            return
        if o.op == "bitcast":  # the same bytes seen as another dtype: no instruction
            seen = self.vals[ins[0]]
            v = self.val(seen.space, seen.kind, o.shape, o.dtype)
            self.vals[v].root = seen.root
            self.of[o.id] = v
            return
        v = self.of[o.id] = self.val("UB", "ub", o.shape, o.dtype)
        opcode, note, elementwise = vector_opcode(o, [self.ops[i].shape for i in o.inputs])
        self.emit(_VI(opcode, "V", o.id, defs=(v,), uses=ins, inplace=elementwise, note=note))

    def combine(self, o: TileOp) -> None:
        """The first two parts combined, then each further part into that value; a deferred part's TLOAD
        right before the instruction that takes it, so one such part at a time is in the UB."""
        name = _COMBINE[o.attrs["fn"]]

        def part(i: int) -> int:
            if i in self.deferred:
                self.deferred.discard(i)
                self.lower(self.ops[i])
            assert i in self.of, f"tile op {o.id} reads tile op {i} from outside its subgraph"
            return self.of[i]

        first = tuple(part(i) for i in o.inputs[:2])
        v = self.of[o.id] = self.val("UB", "ub", o.shape, o.dtype)
        self.emit(_VI(name, "V", o.id, defs=(v,), uses=first, inplace=True, note="combine"))
        for i in o.inputs[2:]:
            self.emit(_VI(name, "V", o.id, uses=(part(i),), updates=(v,), note="combine"))

    def matmul(self, o: TileOp) -> None:
        a = o.attrs
        out = o.region
        assert out is not None
        a_r, b_r, *extra = a["inputs"]
        bias_r = extra.pop(0) if a.get("has_bias") else None
        scale_r = extra.pop(0) if a.get("has_scale_tensor") else None
        (m0, _m1), ks, (n0, _n1) = a["cube"]
        k0, ka1 = ks[0], ks[1]
        kb1 = ks[2] if len(ks) == 3 else ks[1]
        adt, bdt = self.buffers[a_r.buffer].dtype, self.buffers[b_r.buffer].dtype
        acc = DataType.DT_FP32 if adt.is_float else DataType.DT_INT32
        a_trans, b_trans = bool(a.get("a_trans")), bool(a.get("b_trans"))
        kdim = a_r.shape[-2] if a_trans else a_r.shape[-1]
        steps = int(a["k_steps"])
        fit = fit_l0(m0, k0, n0, adt, bdt, self.caps, self.fractal) if self.caps else (m0, k0, n0)
        if fit != (m0, k0, n0):
            self.refits.append((o.id, f"cube L0 step m={m0} k={k0} n={n0} does not fit L0A/L0B/L0C "
                                      f"({', '.join(f'{s} {self.caps[s]:,} B' for s in ('L0A', 'L0B', 'L0C'))}): "
                                      f"run as m={fit[0]} k={fit[1]} n={fit[2]}"))
            m0, k0, n0 = fit
            steps = -(-kdim // k0)
        mt, nt = o.shape[-2], o.shape[-1]
        at = a.get("at") or out.offset  # the tile's place in the matmul's result (its region may sit elsewhere)
        r0, c0 = at[-2], at[-1]
        batch = tuple(at[:-2])

        def box(r: Region, rows: tuple[int, int], cols: tuple[int, int]) -> Operand:
            lead = r.shape[:-2]
            idx = tuple(0 if lead[i] == 1 else batch[len(batch) - len(lead) + i] for i in range(len(lead)))
            at = tuple(x + y for x, y in zip(r.offset, idx + (rows[0], cols[0])))
            return _gm(r, self.buffers, self.align, (1,) * len(lead) + (rows[1], cols[1]), at)

        def a_box(k: tuple[int, int]) -> Operand:
            return box(a_r, k, (r0, mt)) if a_trans else box(a_r, (r0, mt), k)

        def b_box(k: tuple[int, int]) -> Operand:
            return box(b_r, (c0, nt), k) if b_trans else box(b_r, k, (c0, nt))

        def vector_box(r: Region) -> Operand:  # a bias / scale row broadcast over the tile's columns
            n = r.shape[-1]
            at = r.offset[:-1] + (r.offset[-1] + (c0 if n != 1 else 0),)
            return _gm(r, self.buffers, self.align, (1,) * (len(r.shape) - 1) + (nt if n != 1 else 1,), at)

        side: list[int] = []
        for r, kind, what in ((bias_r, "l1bias", "bias"), (scale_r, "l1scale", "scale")):
            if r is not None:
                src = vector_box(r)
                v = self.val("L1", kind, src.shape, src.dtype)
                self.emit(_VI("TLOAD", "MTE2", o.id, defs=(v,), gm_src=(src,), note=what))
                side.append(v)
        fix = [f"{adt.short}x{bdt.short}->{acc.short}"]
        if acc is not o.dtype:
            fix.append(f"cast -> {o.dtype.short}")
        if bias_r is not None:
            fix.append("+bias")
        if a.get("scale") is not None:
            fix.append(f"*scale {a['scale']}")
        if scale_r is not None:
            fix.append("*scale tensor")
        if a.get("relu"):
            fix.append("relu")
        cur_a: tuple[int, int] | None = None  # (L1 block index, value)
        cur_b: tuple[int, int] | None = None
        for mi in range(0, mt, m0):
            msz = min(m0, mt - mi)
            for ni in range(0, nt, n0):
                nsz = min(n0, nt - ni)
                c: int | None = None
                for s in range(steps):
                    ko = s * k0
                    ksz = min(k0, kdim - ko)
                    if cur_a is None or cur_a[0] != ko // ka1:
                        lo = ko // ka1 * ka1
                        hi = min(kdim, lo + ka1)
                        src = a_box((lo, hi - lo))
                        cur_a = (ko // ka1, self.val("L1", "l1a", (mt, hi - lo), adt, load=True))
                        self.emit(_VI("TLOAD", "MTE2", o.id, defs=(cur_a[1],), gm_src=(src,),
                                      note=f"A k {lo}:{hi}"))
                    if cur_b is None or cur_b[0] != ko // kb1:
                        lo = ko // kb1 * kb1
                        hi = min(kdim, lo + kb1)
                        src = b_box((lo, hi - lo))
                        cur_b = (ko // kb1, self.val("L1", "l1b", (hi - lo, nt), bdt, load=True))
                        self.emit(_VI("TLOAD", "MTE2", o.id, defs=(cur_b[1],), gm_src=(src,),
                                      note=f"B k {lo}:{hi}"))
                    la = self.val("L0A", "l0a", (msz, ksz), adt, load=True)
                    self.emit(_VI("TMOV", "MTE1", o.id, defs=(la,), uses=(cur_a[1],),
                                  note=f"A rows {mi}:{mi + msz} k {ko}:{ko + ksz}"))
                    lb = self.val("L0B", "l0b", (ksz, nsz), bdt, load=True)
                    self.emit(_VI("TMOV", "MTE1", o.id, defs=(lb,), uses=(cur_b[1],),
                                  note=f"B k {ko}:{ko + ksz} cols {ni}:{ni + nsz}"))
                    step = f"k {s + 1}/{steps}"
                    if c is None:
                        c = self.val("L0C", "l0c", (msz, nsz), acc)
                        self.emit(_VI("TMATMUL", "M", o.id, defs=(c,), uses=(la, lb), note=step))
                    else:
                        self.emit(_VI("TMATMUL", "M", o.id, uses=(la, lb), updates=(c,), note=f"{step} acc"))
                assert c is not None
                dst = _gm(out, self.buffers, self.align, o.shape[:-2] + (msz, nsz),
                          out.offset[:-2] + (out.offset[-2] + mi, out.offset[-1] + ni))
                self.emit(_VI("TFIXPIPE", "FIX", o.id, uses=(c, *side), gm_dst=(dst,), note=" ".join(fix)))


def fit_l0(m0: int, k0: int, n0: int, adt: DataType, bdt: DataType, caps: Mapping[str, int],
           fractal: Mapping[str, Any]) -> tuple[int, int, int]:
    """The cube's L0 step as it can run: a set_cube_tile_shapes L0 block over L0A, L0B or L0C (PyPTO
    accepts such shapes) is halved — k first, down to the 32-byte fractal, then n and m down to
    the 16-row fractal — until each operand fits its buffer, as the hardware has to split it."""
    k_unit = int(fractal.get("int8" if adt.nbytes == 1 else "default", 16))
    rows = int(fractal.get("default", 16))

    def halve(v: int, unit: int) -> int:
        return max(unit, v // 2 // unit * unit) if v > unit else v

    while (m0 * k0 * adt.nbytes > caps["L0A"] or n0 * k0 * bdt.nbytes > caps["L0B"]) and k0 > k_unit:
        k0 = halve(k0, k_unit)
    while m0 * k0 * adt.nbytes > caps["L0A"] and m0 > rows:
        m0 = halve(m0, rows)
    while (n0 * k0 * bdt.nbytes > caps["L0B"] or m0 * n0 * 4 > caps["L0C"]) and n0 > rows:
        n0 = halve(n0, rows)
    while m0 * n0 * 4 > caps["L0C"] and m0 > rows:
        m0 = halve(m0, rows)
    return m0, k0, n0


# ---- allocation -------------------------------------------------------------------------------

class _Heap:
    """First-fit over a sorted free list; offsets stay aligned because sizes are. Two-ended
    (`small_on_top`): a buffer of at most 1/64 of the memory is taken from the top instead, so
    small buffers do not split the room big tiles need (gated delta rule's leaf 8: a 512-byte row
    at the bottom left three 64 KiB tiles 1 KiB short of the 192 KiB UB, and one was spilled)."""

    def __init__(self, capacity: int, small_on_top: bool = False) -> None:
        self.capacity = capacity
        self.free: list[tuple[int, int]] = [(0, capacity)] if capacity > 0 else []
        self.peak = 0
        self.small = capacity // 64 if small_on_top else 0
        # whether a buffer small enough to go on top was asked for: until one is, a two-ended heap would have given
        # every buffer where this one did (`allocate` then skips it)
        self.took_small = False
        self._small = capacity // 64

    def take(self, size: int) -> int | None:
        if size <= self._small:
            self.took_small = True
        if size <= self.small:
            for k in range(len(self.free) - 1, -1, -1):
                lo, hi = self.free[k]
                if hi - lo >= size:
                    if hi - lo == size:
                        del self.free[k]
                    else:
                        self.free[k] = (lo, hi - size)
                    self.peak = max(self.peak, hi)
                    return hi - size
            return None
        for k, (lo, hi) in enumerate(self.free):
            if hi - lo >= size:
                if hi - lo == size:
                    del self.free[k]
                else:
                    self.free[k] = (lo + size, hi)
                self.peak = max(self.peak, lo + size)
                return lo
        return None

    def give(self, lo: int, size: int) -> None:
        hi = lo + size
        k = bisect.bisect_left(self.free, (lo, hi))
        if k < len(self.free) and self.free[k][0] == hi:
            hi = self.free.pop(k)[1]
        if k > 0 and self.free[k - 1][1] == lo:
            lo = self.free[k - 1][0]
            k -= 1
            self.free.pop(k)
        self.free.insert(k, (lo, hi))


@dataclass(slots=True)
class _Alloc:
    name: str
    space: str
    offset: int
    unit: int  # bytes of one copy
    copies: int  # 2 when double-buffered
    half: int  # which copy is in use (-1: single)
    start: int
    end: int

    def operand(self, v: _Val) -> Operand:
        off = self.offset + (self.half * self.unit if self.half >= 0 else 0)
        return Operand(self.space, self.name, off, v.size, v.shape, v.dtype, self.half)


class _NoFit(Exception):
    def __init__(self, vi: _VI, space: str, size: int) -> None:
        super().__init__(space)
        self.vi, self.space, self.size = vi, space, size


@dataclass
class _Allocated:
    instrs: list[Instr]
    allocs: list[_Alloc]
    peaks: dict[str, int]
    spills: int
    double: bool
    spill_sites: list[int]  # tile ops at which something was spilled


class _Spilled(Exception):
    """A trial allocation (`_Allocator.trial`) had to spill: its result would be thrown away."""


class _Liveness:
    """Where each value (by root) is read and where it dies in a lowering's instructions: what every allocation of
    that lowering reads (`allocate` tries up to four), made once."""

    def __init__(self, low: _Lowering) -> None:
        vals = low.vals
        self.uses: dict[int, list[int]] = {}  # root -> positions reading it (sorted)
        self.last: dict[int, int] = {}
        for i, vi in enumerate(low.vis):
            for v in vi.defs:
                r = vals[v].root
                self.last[r] = max(self.last.get(r, i), i)
            for v in (*vi.uses, *vi.updates):
                r = vals[v].root
                self.uses.setdefault(r, []).append(i)
                self.last[r] = i
        self.dies: dict[int, list[int]] = {}
        for r, i in self.last.items():
            self.dies.setdefault(i, []).append(r)


class _Allocator:
    def __init__(self, low: _Lowering, capacity: Mapping[str, int], double: bool, trial: bool = False,
                 two_ended: bool = False, live: _Liveness | None = None) -> None:
        self.low = low
        self.trial = trial  # give up at the first spill (`_Spilled`)
        self.vals = low.vals
        self.double = double
        self.heaps = {s: _Heap(c, two_ended) for s, c in capacity.items()}
        self.out: list[Instr] = []
        self.allocs: list[_Alloc] = []
        self.res: dict[int, _Alloc] = {}  # resident root -> its allocation
        # spill candidates per memory, furthest next use first, then largest, then longest resident
        # (what max() over `res` in its order picked): (-next use, -bytes, seq, push, root, alloc), stale
        # entries skipped when popped. A resident's next use changes only where it is used, where it
        # is pinned, so each entry's key is exact until then (`_requeue`). Kept from the first search for a
        # victim on (`queued`), made then of the residents as they are: until then nothing asks for it, and most
        # blocks never spill (qat's per-tensor backward: 680 k entries pushed for none of its 22 blocks' victims)
        self.queue: dict[str, list[tuple[int, int, int, int, int, _Alloc]]] = {sp: [] for sp in capacity}
        self.queued = False
        self.seq: dict[int, int] = {}  # resident root -> when it became resident (`res` order)
        self.nu: dict[int, int] = {}  # resident root -> the key its live queue entry has
        self.count = 0
        self.pushes = 0
        self.spilled: dict[int, int] = {}  # root -> byte offset of its spill slot
        self.slot: dict[int, int] = {}
        self.spill_top = 0
        self.spills = 0
        self.spill_sites: list[int] = []
        self.names: dict[str, int] = {}
        self.last_half: dict[tuple[str, int, int], int] = {}
        live = live if live is not None else _Liveness(low)
        self.uses = live.uses
        self.last = live.last
        self.dies = live.dies

    def root(self, v: int) -> int:
        return self.vals[v].root

    def took_small(self) -> bool:
        """Whether some memory was asked for a buffer a two-ended heap would put on top (`_Heap.took_small`)."""
        return any(h.took_small for h in self.heaps.values())

    def next_use(self, r: int, i: int) -> int:
        pos = self.uses.get(r, [])
        k = bisect.bisect_right(pos, i)
        return pos[k] if k < len(pos) else 1 << 60

    def new_alloc(self, v: _Val, copies: int, i: int, vi: _VI, pinned: set[int] | None) -> _Alloc:
        """Room for `v` (`copies` of it) at instruction `vi` (its `i`th), spilling what `victim` picks while there is
        none; `pinned`: the roots `vi` reads or writes (None: not made yet, then made here if needed)."""
        size = v.size * copies
        heap = self.heaps[v.space]
        while True:
            off = heap.take(size)
            if off is not None:
                break
            if self.trial:  # a spill or no fit: either way this allocation is thrown away
                raise _Spilled
            if pinned is None:
                pinned = self.pinned(vi)
            victim = self.victim(v.space, pinned, i) if v.space not in _UNSPILLABLE else None
            if victim is None:
                raise _NoFit(vi, v.space, size)
            self.spill(victim, vi)
        half = -1
        if copies == 2:
            key = (v.space, off, v.size)
            half = 1 - self.last_half.get(key, 1)
            self.last_half[key] = half
        n = self.names.get(v.kind, 0)
        self.names[v.kind] = n + 1
        a = _Alloc(f"{v.kind}{n}", v.space, off, v.size, copies, half, len(self.out), len(self.out))
        self.allocs.append(a)
        return a

    def put(self, r: int, a: _Alloc, i: int) -> None:
        """`r` is resident in `a` from instruction `i` on."""
        if r not in self.res:
            self.seq[r] = self.count
            self.count += 1
        self.res[r] = a
        self._queue(r, a, i)

    def _queue(self, r: int, a: _Alloc, i: int) -> None:
        if not self.queued:
            return
        nu = self.next_use(r, i)
        self.nu[r] = nu
        self.pushes += 1
        heapq.heappush(self.queue[a.space], (-nu, -a.unit * a.copies, self.seq[r], self.pushes, r, a))

    def _requeue(self, roots: set[int], i: int) -> None:
        """After instruction `i`: the residents it used have their next use further on."""
        for r in roots:
            a = self.res.get(r)
            if a is not None:
                self._queue(r, a, i)

    def victim(self, space: str, pinned: set[int], i: int) -> int | None:
        """The resident of `space` not pinned whose next use after instruction `i` is furthest
        (Belady), the largest of those, the longest resident of those; None if there is none. The
        queue's live entries are exact at `i`: an unpinned resident is not used at `i`. The first search makes the
        queues of the residents as they are: an unpinned one's next use after its last use or placing is its next use
        after `i` (it is not used in between), as the entry `_queue` would have kept says, and the order of live
        entries is that of their (next use, bytes, seq) keys, seq being unique."""
        if not self.queued:
            self.queued = True
            for r, a in self.res.items():
                self._queue(r, a, i)
        q = self.queue[space]
        held = []
        found = None
        while q:
            e = heapq.heappop(q)
            neg_nu, _size, seq, _push, r, a = e
            if self.res.get(r) is not a or self.seq.get(r) != seq or self.nu.get(r) != -neg_nu:
                continue  # stale: released, moved, or re-queued with a later next use
            if r in pinned:
                held.append(e)
                continue
            found = r
            held.append(e)  # spilling releases it: the entry goes stale
            break
        for e in held:
            heapq.heappush(q, e)
        return found

    def release(self, r: int) -> None:
        a = self.res.pop(r)
        self.heaps[a.space].give(a.offset, a.unit * a.copies)

    def spill(self, r: int, vi: _VI) -> None:
        if self.trial:
            raise _Spilled
        v = self.vals[r]
        a = self.res[r]
        if r not in self.slot:
            self.slot[r] = self.spill_top
            self.spill_top += v.size
        dst = Operand("GM", "spill", self.slot[r], v.size, v.shape, v.dtype)
        a.end = len(self.out)
        self.out.append(Instr("TSTORE", "FIX" if v.space == "L0C" else "MTE3", vi.tile_op, (dst,),
                              (a.operand(v),), note="spill"))
        self.spills += 1
        self.spill_sites.append(vi.tile_op)
        self.release(r)
        self.spilled[r] = self.slot[r]

    def reload(self, r: int, i: int, vi: _VI, pinned: set[int] | None) -> None:
        v = self.vals[r]
        a = self.new_alloc(v, 1, i, vi, pinned)
        self.put(r, a, i)
        src = Operand("GM", "spill", self.spilled.pop(r), v.size, v.shape, v.dtype)
        self.out.append(Instr("TLOAD", "MTE2", vi.tile_op, (a.operand(v),), (src,), note="reload"))

    def pinned(self, vi: _VI) -> set[int]:
        """The roots instruction `vi` reads or writes: never spilled while it runs."""
        return {self.root(v) for v in (*vi.defs, *vi.uses, *vi.updates)}

    def run(self) -> _Allocated:
        for i, vi in enumerate(self.low.vis):
            pinned = self.pinned(vi) if self.queued else None  # (until a victim was looked for, made if needed)
            for v in (*vi.updates, *vi.uses):
                if self.root(v) in self.spilled:
                    self.reload(self.root(v), i, vi, pinned)
            read = [self.res[self.root(v)] for v in (*vi.updates, *vi.uses)]
            srcs = [a.operand(self.vals[v]) for a, v in zip(read, (*vi.updates, *vi.uses))]
            taken: set[int] = set()
            for v in vi.defs:
                val = self.vals[v]
                a = None
                if vi.inplace:
                    for u in vi.uses:
                        ru = self.root(u)
                        cand = self.res.get(ru)
                        if cand is not None and ru not in taken and self.last[ru] == i and \
                                cand.space == val.space and cand.unit == val.size:
                            a = cand
                            taken.add(ru)
                            del self.res[ru]
                            break
                if a is None:
                    a = self.new_alloc(val, 2 if self.double and val.load else 1, i, vi, pinned)
                self.put(v, a, i)
            at = len(self.out)
            dst = [self.res[v].operand(self.vals[v]) for v in vi.defs]
            dst += [self.res[self.root(v)].operand(self.vals[v]) for v in vi.updates]
            for a in (*read, *(self.res[v] for v in vi.defs)):
                a.end = at
            dbl = vi.opcode in ("TLOAD", "TMOV") and any(self.res[v].copies == 2 for v in vi.defs)
            self.out.append(Instr(vi.opcode, vi.pipe, vi.tile_op, (*dst, *vi.gm_dst), (*vi.gm_src, *srcs),
                                  None, dbl, vi.note))
            for r in self.dies.get(i, ()):
                if r not in taken and r in self.res:
                    self.release(r)
            if self.queued:  # (since this instruction, maybe: `pinned` not made yet)
                self._requeue(pinned if pinned is not None else self.pinned(vi), i)
        peaks = {s: h.peak for s, h in self.heaps.items()}
        return _Allocated(self.out, self.allocs, peaks, self.spills, self.double, self.spill_sites)


def allocate(low: _Lowering, capacity: Mapping[str, int]) -> _Allocated:
    """Double-buffered when every load buffer can be doubled without a spill, else single. Each
    first fit from the bottom; where that spills, again with small buffers from the top (`_Heap`),
    which a compiler planning its buffers ahead would find: the one that spills less."""
    live = _Liveness(low)
    if any(v.load for v in low.vals):
        for two_ended in (False, True):
            trial = _Allocator(low, capacity, True, trial=True, two_ended=two_ended, live=live)
            try:  # gives up at a spill
                return trial.run()
            except (_NoFit, _Spilled):
                if not trial.took_small():  # the two-ended one would give up where this one did
                    break
    first = _Allocator(low, capacity, False, live=live)
    done = first.run()
    if done.spills and first.took_small():  # (else the two-ended one would be this one)
        again = _Allocator(low, capacity, False, two_ended=True, live=live).run()
        if again.spills < done.spills:
            return again
    return done


# ---- synchronization --------------------------------------------------------------------------

class _Ranges:
    """Who last wrote, and who read since, each byte range of one memory (split on demand). The
    ranges partition the memory in address order; an access finds the ones it meets by bisection
    and replaces just those, so a leaf of many instructions costs what its accesses touch."""

    def __init__(self) -> None:
        self.starts: list[int] = [0]
        # (lo, hi, writer index, writer pipe, {reader pipe: latest reader index}), by address
        self.segs: list[tuple[int, int, int, str, dict[str, int]]] = [(0, 1 << 62, -1, "", {})]

    def access(self, lo: int, hi: int, idx: int, pipe: str, write: bool, hz: dict[str, int]) -> None:
        hi = max(hi, lo + 1)
        segs = self.segs
        first = last = bisect.bisect_right(self.starts, lo) - 1
        out: list[tuple[int, int, int, str, dict[str, int]]] = []
        while last < len(segs) and segs[last][0] < hi:
            s_lo, s_hi, w, wp, rd = segs[last]
            last += 1
            _note_hazards(hz, w, wp, rd, write)
            if s_lo < lo:
                out.append((s_lo, lo, w, wp, rd))
            if not write:
                out.append((max(s_lo, lo), min(s_hi, hi), w, wp, {**rd, pipe: idx}))
            elif s_hi >= hi:
                out.append((lo, hi, idx, pipe, {}))
            if s_hi > hi:
                out.append((hi, s_hi, w, wp, rd))
        segs[first:last] = out
        self.starts[first:last] = [sg[0] for sg in out]


def _note_hazards(hz: dict[str, int], w: int, wp: str, rd: dict[str, int], write: bool) -> None:
    """An access meets a range last written by instr `w` on pipe `wp` and read since by `rd`
    (pipe -> last reader): it must wait for that write (RAW, WAW), and a write also for the
    reads (WAR). `hz` keeps, per pipe, the latest instruction to wait for."""
    if w >= 0:
        hz[wp] = max(hz.get(wp, -1), w)
    if write:
        for p, r in rd.items():
            hz[p] = max(hz.get(p, -1), r)


def _boxes_overlap(a: Operand, b: Operand) -> bool:
    if a.layout != b.layout:
        return True  # the same buffer seen through two reshapes: assume they touch
    return all(x < y + n and y < x + m for x, m, y, n in zip(a.at, a.shape, b.at, b.shape))


_NO_KEYS: list[Any] = []  # a cell no record touches (never appended to)


class _GmAccesses:
    """GM regions of one buffer: accesses with the same box share a record. The records are filed
    per layout in one grid per box shape whose cell is that shape (as `gm_index` files tasks), so an
    access checks the records in the cells its box touches, not every record of the buffer; one
    seen through another layout (a reshape) is assumed to touch it, as before."""

    def __init__(self) -> None:
        self.records: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], list[Any]] = {}
        # layout -> box shape -> cell -> the keys of records whose box touches that cell
        self.grids: dict[tuple[int, ...], dict[tuple[int, ...], dict[tuple[int, ...], list[Any]]]] = {}

    def access(self, op: Operand, idx: int, pipe: str, write: bool, hz: dict[str, int]) -> None:
        records = self.records
        at, shp, lay = op.at, op.shape, op.layout
        for layout, grids in self.grids.items():
            if layout != lay:  # assumed to touch: every record of it
                for grid in grids.values():
                    for keys in grid.values():
                        for key in keys:
                            _w, w, wp, rd = records[key]
                            _note_hazards(hz, w, wp, rd, write)
                continue
            for cell, grid in grids.items():
                lists: Any
                if len(cell) != len(at):
                    lists = grid.values()
                else:
                    spans = _cell_spans(at, shp, cell)
                    if math.prod(len(r) for r in spans) > len(grid):
                        lists = grid.values()
                    else:
                        lists = (grid.get(k, _NO_KEYS) for k in itertools.product(*spans))
                for keys in lists:
                    for key in keys:  # a record filed in several cells may come twice: noting is idempotent
                        probe, w, wp, rd = records[key]
                        if _boxes_overlap(op, probe):
                            _note_hazards(hz, w, wp, rd, write)
        key = (lay, at, shp)
        rec = records.get(key)
        if rec is None:
            cell = tuple(max(1, n) for n in shp)
            grid = self.grids.setdefault(lay, {}).setdefault(cell, {})
            for k in itertools.product(*_cell_spans(at, shp, cell)):
                grid.setdefault(k, []).append(key)
        if write:
            records[key] = [op, idx, pipe, {}]
        elif rec is None:
            records[key] = [op, -1, "", {pipe: idx}]
        else:
            rec[3][pipe] = idx


def _cell_spans(at: tuple[int, ...], shp: tuple[int, ...], cell: tuple[int, ...]) -> list[range]:
    """The cells (per axis) of a grid of `cell`-shaped cells that the box at `at` of `shp` touches."""
    return [range(o // c, (o + max(n, 1) - 1) // c + 1) for o, n, c in zip(at, shp, cell)]


def _access(op: Operand, idx: int, pipe: str, write: bool, ranges: dict[str, _Ranges],
            gm: dict[int, _GmAccesses], hz: dict[str, int]) -> None:
    if op.space == "GM" and op.buffer >= 0:
        gm.setdefault(op.buffer, _GmAccesses()).access(op, idx, pipe, write, hz)
    else:
        key = "SPILL" if op.space == "GM" else op.space
        ranges.setdefault(key, _Ranges()).access(op.offset, op.offset + op.size, idx, pipe, write, hz)


def insert_sync(instrs: Sequence[Instr], events: int = EVENTS_PER_PAIR) -> tuple[list[Instr], list[int]]:
    """The instructions with SET_FLAG / WAIT_FLAG pairs, and each input instruction's new index."""
    ranges: dict[str, _Ranges] = {}
    gm: dict[int, _GmAccesses] = {}
    seen: dict[str, dict[str, int]] = {p: {} for p in PIPES}  # pipe -> what it knows finished, per pipe
    stamp: list[dict[str, int]] = []
    waits: dict[int, list[int]] = {}  # consumer -> producers to wait for
    sets: dict[int, list[int]] = {}  # producer -> consumers (one per consumer pipe)
    for i, ins in enumerate(instrs):
        p = ins.pipe
        hz: dict[str, int] = {}
        for op in ins.srcs:
            _access(op, i, p, False, ranges, gm, hz)
        for op in ins.dst:
            _access(op, i, p, True, ranges, gm, hz)
        known = seen[p]
        for other, j in sorted(hz.items(), key=lambda kv: -kv[1]):
            if other == p or j < 0 or known.get(other, -1) >= j:
                continue  # same pipe (in order) or already implied by an earlier wait
            waits.setdefault(i, []).append(j)
            sets.setdefault(j, []).append(i)
            for k, v in stamp[j].items():
                if v > known.get(k, -1):
                    known[k] = v
        st = dict(known)
        st[p] = i
        stamp.append(st)
    out: list[Instr] = []
    where: list[int] = []
    pending: dict[tuple[str, str], deque[tuple[int, int, int]]] = {}  # pair -> (event, producer, consumer)
    event: dict[tuple[int, int], int] = {}
    waited: set[tuple[int, int]] = set()
    rr: dict[tuple[str, str], int] = {}

    def wait(j: int, i: int) -> None:
        pair = (instrs[j].pipe, instrs[i].pipe)
        out.append(Instr("WAIT_FLAG", pair[1], instrs[i].tile_op, flag=(*pair, event[(j, i)])))
        waited.add((j, i))
        q = pending[pair]
        q.remove((event[(j, i)], j, i))

    for i, ins in enumerate(instrs):
        for j in waits.get(i, ()):
            if (j, i) not in waited:
                wait(j, i)
        where.append(len(out))
        out.append(ins)
        for c in sets.get(i, ()):
            pair = (ins.pipe, instrs[c].pipe)
            q = pending.setdefault(pair, deque())
            if len(q) >= events:
                _, pj, pc = q[0]
                wait(pj, pc)  # all events of the pair outstanding: wait for the oldest now
            busy = {e for e, _, _ in q}
            ev = rr.get(pair, 0)
            while ev in busy:
                ev = (ev + 1) % events
            rr[pair] = (ev + 1) % events
            event[(i, c)] = ev
            q.append((ev, i, c))
            out.append(Instr("SET_FLAG", pair[0], ins.tile_op, flag=(*pair, ev)))
    return out, where


# ---- the pass ---------------------------------------------------------------------------------

def build_block(leaf: Leaf, subgraph: Subgraph, ops: Mapping[int, TileOp], buffers: Sequence[Buffer],
                nodes: Mapping[int, Node], board: Mapping[str, Any]) -> tuple[Block, list[tuple[str, Loc, str]]]:
    """The block of one leaf function (from its template subgraph) and its diagnostics."""
    align = int(board.get("alignment_bytes", 32))
    caps = {s: int(board["buffers_bytes"][s]) for s in MEMORIES[leaf.core]}
    def lowered(order: Sequence[int], streamed: frozenset[int] = frozenset()) -> _Lowering:
        low = _Lowering(ops, buffers, align, caps, board.get("cube_fractal_elements"))
        low.deferred = set(streamed)
        for oid in order:
            if oid not in streamed:
                low.lower(ops[oid])
        return low

    low = lowered(subgraph.ops)
    over: list[tuple[str, Loc]] = []
    room = dict(caps)
    while True:
        try:
            done = allocate(low, room)
            break
        except _NoFit as e:
            # PyPTO compiles it; the board cannot hold it: modelled as if the buffer were as large as
            # needed (the hardware would have to split the tile), and said so at the op's line
            o = ops[e.vi.tile_op]
            node = nodes.get(o.node)
            if strict_at(node.loc if node else None):  # the advisor's candidates, where not tolerated
                raise PyptoError(f"{node.op if node else o.op}: {e.vi.opcode} needs {e.size} bytes of {e.space} at "
                                 f"once, more than the {caps[e.space]}-byte {e.space}; use smaller tiles",
                                 node.loc if node else Loc()) from None
            unit = "slice" if node is not None and node.scope is not None else "tile"  # PyPTO 3: slices are tiles
            over.append((f"{node.op if node else o.op}: {e.vi.opcode} needs {e.size:,} bytes of {e.space} at once "
                         f"with its operands, more than the board's {caps[e.space]:,}-byte {e.space}: the sim models "
                         f"it as if it fit (on the chip the {unit} would have to be split); use smaller {unit}s",
                         node.loc if node else Loc()))
            room[e.space] = max(2 * room[e.space], e.size)
    if done.spills:  # program order holds too much at once: PyPTO's depth-first order, where it spills less
        order = dfs_order(subgraph.ops, ops)
        streamed = streamed_loads(order, ops)
        if order != list(subgraph.ops) or streamed:
            again = lowered(order, streamed)
            with contextlib.suppress(_NoFit):
                other = allocate(again, room)
                if other.spills < done.spills:
                    low, done = again, other
    instrs, where = insert_sync(done.instrs, int(board.get("events_per_pipe_pair", EVENTS_PER_PAIR)))
    spans = tuple(BufferSpan(a.name, a.space, a.offset, a.unit * a.copies, where[a.start], where[a.end],
                             a.copies == 2) for a in done.allocs)
    notes: list[tuple[str, Loc, str]] = [(f"leaf {leaf.id}: {m}", loc, "block.over-capacity") for m, loc in over[:1]]
    for oid, message in low.refits[:1]:
        node = nodes.get(ops[oid].node)
        notes.append((f"leaf {leaf.id}: {message}", node.loc if node else Loc(), "block.l0-split"))
    if done.spills:
        node = nodes.get(ops[done.spill_sites[0]].node)
        notes.append((f"leaf {leaf.id} spills {done.spills} buffer(s) to GM: its live tiles exceed "
                      f"{', '.join(f'{s} {c:,} B' for s, c in caps.items())}", node.loc if node else Loc(),
                      "block.spill"))
    block = Block(leaf.id, leaf.core, leaf.count, subgraph.id, tuple(instrs), spans,
                  tuple((s, done.peaks.get(s, 0)) for s in caps), tuple(caps.items()), done.double, done.spills)
    return block, notes


def build_blocks(p: Program, board: Mapping[str, Any]) -> tuple[tuple[Block, ...], list[tuple[str, Loc, str]]]:
    assert p.tiles is not None and p.subgraphs is not None and p.leaves is not None
    ops = ops_by_id(p.tiles)
    subgraphs = {sg.id: sg for sg in p.subgraphs}
    nodes = p.graph.by_id()
    blocks = []
    notes: list[tuple[str, Loc, str]] = []
    for leaf in p.leaves:
        b, n = build_block(leaf, subgraphs[leaf.template], ops, p.tiles.buffers, nodes, board)
        blocks.append(b)
        notes += n
    return tuple(blocks), notes


def block_schedule(p: Program, ctx: PassContext) -> Program:
    """Each leaf function becomes its core's instruction list: buffers allocated, pipes synchronized."""
    blocks, notes = build_blocks(p, ctx.board)
    for message, loc, rule in notes:
        ctx.report("warning", message, loc, rule=rule)
    return dataclasses.replace(p, blocks=blocks)


# ---- the listing ------------------------------------------------------------------------------

def _span(node: Node | None) -> tuple[str, int] | None:
    if node is None or node.loc.span is None:
        return None
    return os.path.basename(node.loc.span.file), node.loc.span.line


def _gm_text(op: Operand) -> str:
    if op.buffer < 0:
        return f"gm spill[+{op.offset:,}:{op.size:,} B]"
    dims = ",".join(str(a) if n == 1 else f"{a}:{a + n}" for a, n in zip(op.at, op.shape))
    return f"gm {op.name}[{dims}]"


def _operand_text(op: Operand, full: bool) -> str:
    if not op.on_chip:
        return _gm_text(op)
    name = op.name + ("" if op.half < 0 else ".ping" if op.half == 0 else ".pong")
    if not full:
        return name
    return f"{name}[{','.join(map(str, op.shape))}]:{op.dtype.short}"


def listing(block: Block, program: Program, nodes: Mapping[int, Node] | None = None) -> str:
    """The block as text: a header with provenance and memory use, then one line per instruction. `nodes`: the
    program's tensor nodes by id, when the caller has them (a listing of every leaf: `CompileRecord.listings`)."""
    nodes = program.graph.by_id() if nodes is None else nodes
    tiles = program.tiles
    leaf = program.leaves[block.leaf] if program.leaves is not None else None
    by_line: dict[tuple[str, int], list[str]] = {}
    for nid in (leaf.nodes if leaf is not None else ()):
        node = nodes.get(nid)
        at = _span(node)
        if at is not None and node is not None:
            names = by_line.setdefault(at, [])
            if node.op not in names:
                names.append(node.op)
    parts, last_file = [], None
    for (file, line), names in sorted(by_line.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        parts.append(f"{file if file != last_file else ''}:{line} {'/'.join(names)}")
        last_file = file
    where = f"  ({', '.join(parts)})" if parts else ""
    lines = [f"leaf {block.leaf} · {block.core} · {block.tasks} task{'s' if block.tasks != 1 else ''} · "
             f"{program.graph.name}{where}"]
    caps = dict(block.capacity_bytes)
    mem = " · ".join(f"{s} peak {b:,} B of {caps.get(s, 0):,}" for s, b in block.peak_bytes) + f" ({PEAK_LABEL})"
    lines.append(f"  {mem} · {'double-buffered' if block.double_buffered else 'single-buffered'} · "
                 f"{block.spills} spill{'s' if block.spills != 1 else ''}")
    width = len(str(max(0, len(block.instrs) - 1)))
    for k, ins in enumerate(block.instrs):
        if ins.flag is not None:
            src, dst, ev = ins.flag
            lines.append(f"  {k:>{width}}  {ins.opcode:<10}{src} -> {dst}  ev{ev}")
            continue
        dst = ", ".join(_operand_text(op, True) for op in ins.dst)
        srcs = ", ".join(_operand_text(op, False) for op in ins.srcs)
        comment = ""
        o = op_with_id(tiles, ins.tile_op) if tiles is not None else None
        if o is not None:
            node = nodes.get(o.node)
            at = _span(node)
            comment = f"; t{o.id} {node.op if node else o.op}" + (f"  {at[0]}:{at[1]}" if at else "")
        note = f"  [{ins.note}]" if ins.note else ""
        lines.append(f"  {k:>{width}}  {ins.opcode:<10}{dst:<26} <- {srcs:<28} {ins.pipe:<5} {comment}{note}")
    if block.buffers:
        lines.append("  buffers:")
        for b in block.buffers:
            lines.append(f"    {b.name:<9} {b.space:<4} @{b.offset:>7,} {b.size:>8,} B"
                         f"{' x2' if b.double else '   '}  live {b.start}..{b.end}")
    return "\n".join(lines)
