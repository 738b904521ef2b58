"""Inside one simulated core: a leaf's instruction list run on concurrent, in-order pipes.

The block stage gives every leaf function its instruction list with `SET_FLAG / WAIT_FLAG`
events between pipes. This model runs that list the way the core does: each pipe (MTE2,
MTE1, M, V, FIX, MTE3, S) issues its instructions in program order, one at a time; a
`WAIT_FLAG` holds its pipe until the matching `SET_FLAG` fired; a `SET_FLAG` fires once
everything its pipe issued before has completed. Data movement occupies its pipe for
`bytes / bandwidth` cycles and completes a latency later (a GM read ~1,400 cycles, a hit in
L2 ~50), so a double-buffered leaf overlaps the load of tile i+1 with the compute of tile i
exactly as far as its flags allow.

Per instruction costs (cycles; every figure from the board file, `pypto/target/a2a3.json`):
- TLOAD from GM: occupancy padded bytes / `GM->local` (a miss) or / `L2->local` (a hit),
  latency `gm_read_latency` / `l2_hit_latency`. Rows are padded to 32-byte blocks, so an
  unaligned last dim moves (and computes) more bytes than it uses.
- TSTORE / TFIXPIPE to GM: padded bytes / `UB->GM` (`L0C->GM`), latency `gm_write_latency`.
- TMOV L1->L0A / L0B: bytes / `L1->L0A` / `L1->L0B` plus the fitted L1_TO_L0A fixed part.
- TMATMUL: ceil(m/16) * ceil(k/kf) * ceil(n/16) cube cycles (kf = 32 bytes / element size:
  16 for fp16) plus the fitted A_MUL_B fixed part.
- Vector instructions: PyPTO's fitted per-tile-op latency `(a * bytes * 1e-6 + b) * 2000 + 1`
  with (a, b) of ADD (simple elementwise), EXP (transcendental, division) or ROWSUMLINE
  (reductions), over the largest operand's bytes — in 256-byte repeats row by row when the
  rows are not 32-byte aligned (the spec's `ceil(bytes/256)` per instruction, per row).
- SET_FLAG / WAIT_FLAG: 1 cycle on their pipe.

A task's cost depends on two things the chip decides: the share `h` of its GM reads that
hit L2, and the slowdown `s` >= 1 of its HBM traffic under contention (HBM reads and all
writes take `s` times longer to stream). `CoreModel.run(leaf, h, s)` returns the duration
and the per-pipe busy intervals (as fractions of the duration, for pipe sub-lanes); results
are cached per (leaf, h, s) after quantizing h to 0.1 and s to 2 % steps.
"""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypto.compiler.block_ir import PIPES, Block, Instr, Operand

_ADD_CLASS = frozenset({
    "TADD", "TSUB", "TMUL", "TMAX", "TMIN", "TADDS", "TSUBS", "TMULS", "TMAXS", "TMINS", "TCMP", "TCMPS", "TSEL",
    "TAND", "TNOT", "TOR", "TABS", "TNEG", "TRELU", "TCAST", "TCOPY", "TEXPANDS", "TCI", "TROWEXPAND", "TCOLEXPAND",
    "TTRANS", "TARGCOMBINE"})
_PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}

# instruction kinds in a compiled program
WORK, SET, WAIT = 0, 1, 2


def padded_bytes(op: Operand, align: int = 32) -> int:
    """Bytes moved or computed for an operand: each row padded to whole `align`-byte blocks."""
    if not op.shape:
        return max(align, op.dtype.nbytes)
    row = op.shape[-1] * op.dtype.nbytes
    rows = math.prod(op.shape[:-1])
    return rows * (-(-row // align) * align)


def vector_bytes(op: Operand, align: int = 32) -> int:
    """Bytes a vector instruction processes for an operand: the whole tile in 256-byte repeats
    when its rows are 32-byte aligned; row by row, each row rounded up to whole repeats, when
    they are not (an unaligned row cannot share a repeat with the next)."""
    if not op.shape:
        return max(align, op.dtype.nbytes)
    row = op.shape[-1] * op.dtype.nbytes
    if row % align == 0:
        return math.prod(op.shape) * op.dtype.nbytes
    return math.prod(op.shape[:-1]) * (-(-row // 256) * 256)


def _fitted(ab: Sequence[float], nbytes: int) -> float:
    a, b = ab
    return (a * nbytes * 1e-6 + b) * 2000 + 1


@dataclass(frozen=True, slots=True)
class Step:
    """One instruction, costed: occupancy and latency for an L2 miss and for a hit (they are
    equal for instructions that do not read GM)."""

    pipe: int
    kind: int  # WORK | SET | WAIT
    occ_miss: float
    occ_hit: float
    lat_miss: float
    lat_hit: float
    gm: int  # 0: no GM access; 1: a GM read (its miss part slows down under HBM contention); 2: a GM write
    flag: tuple[str, str, int] | None = None


class _Costed:
    """One block's costed instructions, its pipe runs so far ((h, s) -> (cycles, profile)) and its GM traffic
    (`CoreModel.hbm_occupancy`): they depend on the block and the board's figures only."""

    __slots__ = ("steps", "runs", "hbm")

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.steps = steps
        self.runs: dict[tuple[float, float], tuple[float, dict[str, list[tuple[float, float]]]]] = {}
        self.hbm: tuple[float, float, float, float] | None = None


# Each block's `_Costed`, by the block (its id, checked by a weak reference: a block of 10^4 instructions hashes
# slowly) and the board figures they read. The sim board, the record's per-line costs and the health report (and
# its stitching check's second run) each make a `CoreModel` of one program's blocks: QAT's per-tensor backward has
# 170 k instructions, ~1 s to cost each time and ~1 s to run its leaves. An entry goes with its block.
_COSTED: dict[int, tuple[weakref.ref[Block], str, _Costed]] = {}


def _costed(block: Block, figures: str, step: Callable[[Instr], Step]) -> _Costed:
    key = id(block)
    hit = _COSTED.get(key)
    if hit is not None and hit[0]() is block and hit[1] == figures:
        return hit[2]
    made = _Costed(tuple(map(step, block.instrs)))

    def forget(ref: weakref.ref[Block]) -> None:
        entry = _COSTED.get(key)
        if entry is not None and entry[0] is ref:
            del _COSTED[key]

    _COSTED[key] = (weakref.ref(block, forget), figures, made)
    return made


class CoreModel:
    """Costs the instructions of a program's blocks once (`_costed`: once per block in a process), then runs a leaf
    for given (h, s)."""

    def __init__(self, blocks: Sequence[Block], board: Mapping[str, Any]) -> None:
        self.board = board
        self.blocks = blocks
        bpc = board["bytes_per_cycle"]
        mem = board["memory"]
        self.align = int(board.get("alignment_bytes", 32))
        self._bpc = bpc
        self._mem = mem
        self._vec = board["vector"]
        self._cube = board["cube"]
        figures = json.dumps([self.align, bpc, mem, self._vec, self._cube], sort_keys=True)  # a copy, as text
        self._costed = [_costed(b, figures, self._step) for b in blocks]
        self.programs = [c.steps for c in self._costed]
        self.profiles: list[dict[str, list[tuple[float, float]]]] = []
        # (leaf, L2 hit tenths, HBM slowdown step) -> (cycles, profile index): each run once; the sim
        # board reads it inline (its hot loop), `run` fills it
        self.runs: dict[tuple[int, int, int], tuple[float, int]] = {}

    # ---- costing one instruction

    def _step(self, ins: Instr) -> Step:
        pipe = _PIPE_INDEX[ins.pipe]
        sync = float(self._vec.get("sync_cycles", 1))
        if ins.opcode == "SET_FLAG":
            return Step(pipe, SET, sync, sync, 0.0, 0.0, 0, ins.flag)
        if ins.opcode == "WAIT_FLAG":
            return Step(pipe, WAIT, sync, sync, 0.0, 0.0, 0, ins.flag)
        bpc, mem = self._bpc, self._mem
        src_gm = next((s for s in ins.srcs if s.space == "GM"), None)
        dst_gm = next((d for d in ins.dst if d.space == "GM"), None)
        if src_gm is not None:  # TLOAD GM -> UB / L1
            n = padded_bytes(src_gm, self.align)
            return Step(pipe, WORK, n / bpc["GM->local"], n / bpc["L2->local"], float(mem["gm_read_latency"]),
                        float(mem["l2_hit_latency"]), 1)
        if dst_gm is not None:  # TSTORE UB -> GM, TFIXPIPE L0C -> GM
            n = padded_bytes(dst_gm, self.align)
            rate = bpc["L0C->GM"] if any(s.space == "L0C" for s in ins.srcs) else bpc["UB->GM"]
            occ = n / rate
            return Step(pipe, WORK, occ, occ, float(mem["gm_write_latency"]), float(mem["gm_write_latency"]), 2)
        if ins.opcode == "TMATMUL":
            return self._flat(pipe, self._matmul(ins))
        if ins.pipe == "MTE1":  # TMOV L1 -> L0A / L0B
            dst = ins.dst[0] if ins.dst else None
            n = padded_bytes(dst, self.align) if dst is not None else 0
            rate = bpc["L1->L0B"] if dst is not None and dst.space == "L0B" else bpc["L1->L0A"]
            fixed = _fitted(self._cube["fitted"]["L1_TO_L0A"], 0)
            return self._flat(pipe, n / rate + fixed)
        if ins.pipe == "FIX":  # L0C -> L1
            n = max((padded_bytes(s, self.align) for s in ins.srcs), default=0)
            return self._flat(pipe, n / bpc["L0C->UB"])
        if ins.pipe == "V":
            n = max((vector_bytes(o, self.align) for o in (*ins.dst, *ins.srcs) if o.on_chip), default=self.align)
            fitted = self._vec["fitted"]
            if ins.opcode.startswith(("TROW", "TCOL")) and ins.opcode not in _ADD_CLASS:
                ab = fitted["ROWSUMLINE"]
            elif ins.opcode in _ADD_CLASS:
                ab = fitted["ADD"]
            else:
                ab = fitted["EXP"]
            return self._flat(pipe, _fitted(ab, n))
        return self._flat(pipe, sync)  # anything else: a scalar step

    @staticmethod
    def _flat(pipe: int, cycles: float) -> Step:
        return Step(pipe, WORK, cycles, cycles, 0.0, 0.0, 0)

    def _matmul(self, ins: Instr) -> float:
        c = self._cube
        out = ins.dst[0] if ins.dst else None
        a = next((s for s in ins.srcs if s.space == "L0A"), None)
        if out is None or a is None or len(out.shape) < 2 or len(a.shape) < 2:
            return float(c.get("fixed_cycles", 1))
        m, n = out.shape[-2], out.shape[-1]
        k = a.shape[-1]
        kf = max(1, int(c["fractal_k_bytes"]) // a.dtype.nbytes)
        cycles = math.ceil(m / c["fractal_m"]) * math.ceil(k / kf) * math.ceil(n / c["fractal_n"])
        return cycles + _fitted(c["fitted"]["A_MUL_B"], 0)

    # ---- running a leaf

    def run(self, leaf: int, h: float, s: float) -> tuple[float, int]:
        """(duration in cycles, profile index) of one task of `leaf` whose GM reads hit L2 with
        share `h` and whose HBM traffic is slowed down `s` times."""
        hq = round(h * 10)
        sq = round(math.log(max(s, 1.0)) / math.log(1.02))
        key = (leaf, hq, sq)
        hit = self.runs.get(key)
        if hit is None:
            hit = self.runs[key] = self.simulate(leaf, hq / 10, 1.02 ** sq)
        return hit

    def simulate(self, leaf: int, h: float, s: float) -> tuple[float, int]:
        """Leaf `leaf`'s pipe run at GM hit rate `h` and slowdown `s` (not looked up in `runs`): (cycles, its
        profile's row, a new one)."""
        costed = self._costed[leaf]
        done = costed.runs.get((h, s))
        if done is None:
            done = costed.runs[(h, s)] = self._pipes(leaf, h, s)
        self.profiles.append(done[1])
        return done[0], len(self.profiles) - 1

    def _pipes(self, leaf: int, h: float, s: float) -> tuple[float, dict[str, list[tuple[float, float]]]]:
        free = [0.0] * len(PIPES)  # when each pipe can issue its next instruction
        done = [0.0] * len(PIPES)  # when everything each pipe issued has completed
        flags: dict[tuple[str, str, int], float] = {}
        busy: list[list[list[float]]] = [[] for _ in PIPES]
        miss = 1.0 - h
        for st in self.programs[leaf]:
            p = st.pipe
            if st.kind == SET:
                t = max(free[p], done[p]) + st.occ_miss
                free[p] = t
                assert st.flag is not None
                flags[st.flag] = t
                continue
            if st.kind == WAIT:
                assert st.flag is not None
                free[p] = max(free[p], flags.get(st.flag, 0.0)) + st.occ_miss
                continue
            if st.gm == 1:
                occ = h * st.occ_hit + miss * st.occ_miss * s
                lat = h * st.lat_hit + miss * st.lat_miss
            elif st.gm == 2:
                occ, lat = st.occ_miss * s, st.lat_miss
            else:
                occ, lat = st.occ_miss, st.lat_miss
            start = free[p]
            end = start + occ
            free[p] = end
            if end + lat > done[p]:
                done[p] = end + lat
            spans = busy[p]
            if spans and spans[-1][1] >= start - 1e-9:
                spans[-1][1] = end
            else:
                spans.append([start, end])
        duration = max(max(free), max(done), 1.0)
        profile = {PIPES[i]: [(a / duration, b / duration) for a, b in spans] for i, spans in enumerate(busy) if spans}
        return duration, profile

    def instruction_cycles(self, leaf: int) -> list[tuple[Instr, str, float]]:
        """(instruction, pipe, uncontended busy cycles) of each working instruction of one task of
        `leaf` (GM reads missing L2; flags left out): what a per-line cost view adds up."""
        return [(ins, PIPES[st.pipe], st.occ_miss) for st, ins in zip(self.programs[leaf], self.blocks[leaf].instrs)
                if st.kind == WORK]

    def pipe_cycles(self, leaf: int) -> dict[str, float]:
        """Uncontended busy cycles per pipe of one task of `leaf` (all GM reads missing L2)."""
        out: dict[str, float] = {}
        for st in self.programs[leaf]:
            if st.kind == WORK:
                out[PIPES[st.pipe]] = out.get(PIPES[st.pipe], 0.0) + st.occ_miss
        return out

    def hbm_occupancy(self, leaf: int) -> tuple[float, float, float, float]:
        """(read cycles, read bytes, write cycles, write bytes) a task of `leaf` streams to and
        from GM, uncontended and missing L2 (padded bytes)."""
        cached = self._costed[leaf].hbm
        if cached is None:
            rc = rb = wc = wb = 0.0
            for st, ins in zip(self.programs[leaf], self.blocks[leaf].instrs):
                if st.gm == 1:
                    rc += st.occ_miss
                    rb += sum(padded_bytes(o, self.align) for o in ins.srcs if o.space == "GM")
                elif st.gm == 2:
                    wc += st.occ_miss
                    wb += sum(padded_bytes(o, self.align) for o in ins.dst if o.space == "GM")
            cached = self._costed[leaf].hbm = (rc, rb, wc, wb)
        return cached
