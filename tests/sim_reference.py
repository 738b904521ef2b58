"""The sim board's straightforward model, kept as the reference the fast one is checked against.

This is `pypto/boards/sim.py` and `pypto/boards/core_model.py` as they were at commit b9c58e1
(before the fast event loop of issue 19), copied verbatim but for these lines and the merged
imports: one event at a time through small functions, the L2 an OrderedDict, every task's pipe
run looked up in a cache. `tests/test_sim_reference.py` checks that the board's swimlanes equal
this model's, byte for byte as JSON; `benchmarks/sim_bench.py` times both side by side.
It is test code: nothing in `pypto` imports it.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypto.boards.stitch import Stitching
from pypto.boards.stitch import plan as stitch_plan
from pypto.boards.swimlane import Lane, LaneTask, Swimlane, instance_labels, lane_names, ready_counters
from pypto.compiler.block_ir import PIPES, Block, Instr, Operand
from pypto.compiler.execute_ir import ExecGraph
from pypto.compiler.manager import Program
from pypto.compiler.tile_ir import TileGraph
from pypto.target import load as load_board

_ADD_CLASS = frozenset({
    "TADD", "TSUB", "TMUL", "TMAX", "TMIN", "TADDS", "TSUBS", "TMULS", "TMAXS", "TMINS", "TCMP", "TCMPS", "TSEL",
    "TAND", "TNOT", "TOR", "TABS", "TNEG", "TRELU", "TCAST", "TCOPY", "TEXPANDS", "TCI", "TROWEXPAND", "TCOLEXPAND",
    "TTRANS", "TARGCOMBINE"})
_PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}

# instruction kinds in a compiled program
_WORK, _SET, _WAIT = 0, 1, 2


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
    kind: int  # _WORK | _SET | _WAIT
    occ_miss: float
    occ_hit: float
    lat_miss: float
    lat_hit: float
    gm: int  # 0: no GM access; 1: a GM read (its miss part slows down under HBM contention); 2: a GM write
    flag: tuple[str, str, int] | None = None


class CoreModel:
    """Costs the instructions of a program's blocks once, then runs a leaf for given (h, s)."""

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
        self.programs = [tuple(self._step(i) for i in b.instrs) for b in blocks]
        self.profiles: list[dict[str, list[tuple[float, float]]]] = []
        self._cache: dict[tuple[int, int, int], tuple[float, int]] = {}
        self._hbm: dict[int, tuple[float, float, float, float]] = {}

    # ---- costing one instruction

    def _step(self, ins: Instr) -> Step:
        pipe = _PIPE_INDEX[ins.pipe]
        sync = float(self._vec.get("sync_cycles", 1))
        if ins.opcode == "SET_FLAG":
            return Step(pipe, _SET, sync, sync, 0.0, 0.0, 0, ins.flag)
        if ins.opcode == "WAIT_FLAG":
            return Step(pipe, _WAIT, sync, sync, 0.0, 0.0, 0, ins.flag)
        bpc, mem = self._bpc, self._mem
        src_gm = next((s for s in ins.srcs if s.space == "GM"), None)
        dst_gm = next((d for d in ins.dst if d.space == "GM"), None)
        if src_gm is not None:  # TLOAD GM -> UB / L1
            n = padded_bytes(src_gm, self.align)
            return Step(pipe, _WORK, n / bpc["GM->local"], n / bpc["L2->local"], float(mem["gm_read_latency"]),
                        float(mem["l2_hit_latency"]), 1)
        if dst_gm is not None:  # TSTORE UB -> GM, TFIXPIPE L0C -> GM
            n = padded_bytes(dst_gm, self.align)
            rate = bpc["L0C->GM"] if any(s.space == "L0C" for s in ins.srcs) else bpc["UB->GM"]
            occ = n / rate
            return Step(pipe, _WORK, occ, occ, float(mem["gm_write_latency"]), float(mem["gm_write_latency"]), 2)
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
        return Step(pipe, _WORK, cycles, cycles, 0.0, 0.0, 0)

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
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._simulate(leaf, hq / 10, 1.02 ** sq)
        return hit

    def _simulate(self, leaf: int, h: float, s: float) -> tuple[float, int]:
        free = [0.0] * len(PIPES)  # when each pipe can issue its next instruction
        done = [0.0] * len(PIPES)  # when everything each pipe issued has completed
        flags: dict[tuple[str, str, int], float] = {}
        busy: list[list[list[float]]] = [[] for _ in PIPES]
        miss = 1.0 - h
        for st in self.programs[leaf]:
            p = st.pipe
            if st.kind == _SET:
                t = max(free[p], done[p]) + st.occ_miss
                free[p] = t
                assert st.flag is not None
                flags[st.flag] = t
                continue
            if st.kind == _WAIT:
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
        self.profiles.append(profile)
        return duration, len(self.profiles) - 1

    def instruction_cycles(self, leaf: int) -> list[tuple[Instr, str, float]]:
        """(instruction, pipe, uncontended busy cycles) of each working instruction of one task of
        `leaf` (GM reads missing L2; flags left out): what a per-line cost view adds up."""
        return [(ins, PIPES[st.pipe], st.occ_miss) for st, ins in zip(self.programs[leaf], self.blocks[leaf].instrs)
                if st.kind == _WORK]

    def pipe_cycles(self, leaf: int) -> dict[str, float]:
        """Uncontended busy cycles per pipe of one task of `leaf` (all GM reads missing L2)."""
        out: dict[str, float] = {}
        for st in self.programs[leaf]:
            if st.kind == _WORK:
                out[PIPES[st.pipe]] = out.get(PIPES[st.pipe], 0.0) + st.occ_miss
        return out

    def hbm_occupancy(self, leaf: int) -> tuple[float, float, float, float]:
        """(read cycles, read bytes, write cycles, write bytes) a task of `leaf` streams to and
        from GM, uncontended and missing L2 (padded bytes)."""
        cached = self._hbm.get(leaf)
        if cached is None:
            rc = rb = wc = wb = 0.0
            for st, ins in zip(self.programs[leaf], self.blocks[leaf].instrs):
                if st.gm == 1:
                    rc += st.occ_miss
                    rb += sum(padded_bytes(o, self.align) for o in ins.srcs if o.space == "GM")
                elif st.gm == 2:
                    wc += st.occ_miss
                    wb += sum(padded_bytes(o, self.align) for o in ins.dst if o.space == "GM")
            cached = self._hbm[leaf] = (rc, rb, wc, wb)
        return cached

# ---- sim.py


_END, _RESOLVED, _RELEASE = 0, 1, 2


class _L2:
    """The shared L2 as an LRU over GM regions (exact region identity), in bytes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        self.lines: OrderedDict[tuple[Any, ...], int] = OrderedDict()

    def access(self, key: tuple[Any, ...], nbytes: int) -> bool:
        """Touch a region (read or written); whether it was in L2."""
        lines = self.lines
        if key in lines:
            lines.move_to_end(key)
            return True
        lines[key] = nbytes
        self.used += nbytes
        while self.used > self.capacity and lines:
            self.used -= lines.popitem(last=False)[1]
        return False


def device_tasks(exe: ExecGraph, window: Mapping[int, int]) -> list[int]:
    """Each task's device task: its instance's window (`pypto.boards.stitch.plan`, tested on its own)."""
    return [window[t.instance] for t in exe.tasks]


def simulate(program: Program, board: Mapping[str, Any] | str = "a2a3",
             runtime_options: Mapping[str, Any] | None = None) -> Swimlane:
    """The simulated swimlane of a lowered program (execute and block stages done)."""
    bd = load_board(board) if isinstance(board, str) else board
    opts = dict(runtime_options or {})
    exe, blocks, tiles = program.execute, program.blocks, program.tiles
    if exe is None or blocks is None or tiles is None:
        raise ValueError("the sim board needs a program lowered through the execute stage")
    mode = int(opts.get("device_sched_mode", 0))
    stitching = stitch_plan(program, opts)
    if mode not in (0, 1, 2, 3):
        raise ValueError(f"device_sched_mode {mode}: PyPTO's modes are 0 (FIFO), 1 (L2 affinity), 2 (fair), 3 (both)")
    return _Chip(exe, blocks, tiles, bd, mode, stitching).run()


class _Chip:
    def __init__(self, exe: ExecGraph, blocks: Sequence[Any], tiles: TileGraph, board: Mapping[str, Any],
                 mode: int, stitching: Stitching) -> None:
        self.exe, self.board, self.mode, self.stitching = exe, board, mode, stitching
        self.core = CoreModel(blocks, board)
        self.elem_bytes = [b.dtype.nbytes for b in tiles.buffers]
        self.instance_labels = instance_labels(tiles)
        cores = board["cores"]
        self.lanes: tuple[Lane, ...] = lane_names(cores)
        self.lane_base = {"AIC": 0, "AIV": int(cores["AIC"])}
        cpu = board["aicpu"]
        self.threads = int(cpu["sched_threads"])
        self.dispatch_cost = float(cpu["schedule_cycles"]) + float(cpu["submit_cycles"])
        self.complete_cost = float(cpu["completion_cycles"]) + float(cpu["resolve_cycles"])
        self.stitch_cost = float(cpu["stitch_cycles"])
        self.stitch_per_function = float(cpu.get("stitch_function_cycles", 0.0))
        self.launch_cost = float(cpu.get("device_task_cycles", 0.0))
        mem = board["memory"]
        self.hbm = float(mem["hbm_GBps"]) * float(mem["hbm_efficiency"]) / float(board["clock_ghz"])  # B/cycle
        self.l2 = _L2(int(mem["l2_bytes"]))
        self.clock_ghz = float(board["clock_ghz"])
        self.l2_hits = self.l2_misses = 0  # bytes
        self.bucket = 1000.0  # cycles per bandwidth-ledger bucket
        self.ledger: list[float] = []  # HBM bytes reserved per bucket

    def run(self) -> Swimlane:
        exe = self.exe
        n = len(exe.tasks)
        succs: list[list[int]] = [[] for _ in range(n)]
        indeg = [0] * n
        for t in exe.tasks:
            indeg[t.id] = len(t.preds)
            for p in t.preds:
                succs[p].append(t.id)
        ranks = sorted({t.instance for t in exe.tasks})
        root_function = dict(zip(ranks, self.stitching.root_function.tolist(), strict=True))
        device = device_tasks(exe, dict(zip(ranks, self.stitching.window.tolist(), strict=True)))
        ndev = max(device, default=-1) + 1
        left_in_device = [0] * ndev
        for d in device:
            left_in_device[d] += 1
        parked: list[list[int]] = [[] for _ in range(ndev)]  # ready but their device task not started
        released = [False] * ndev
        functions = [0] * ndev  # root functions per device task
        for _root, d in {(root_function[t.instance], device[t.id]) for t in exe.tasks}:
            functions[d] += 1
        stitched = list(itertools.accumulate(  # one after another on the stitch thread
            self.stitch_cost + self.stitch_per_function * k for k in functions))
        launched = [0.0] * ndev
        finished = [0.0] * ndev

        ready_q: dict[str, deque[int]] = {"AIC": deque(), "AIV": deque()}
        affine: list[deque[int]] = [deque() for _ in self.lanes]
        taken = [False] * n
        idle: dict[str, list[int]] = {"AIC": [], "AIV": []}
        for i, ln in enumerate(self.lanes):
            if ln.core in idle:
                idle[ln.core].append(i)
        thread_free = [0.0] * self.threads
        ready_at = [0.0] * n
        start = [0.0] * n
        end = [0.0] * n
        lane_of = [-1] * n
        profile = [-1] * n
        events: list[tuple[float, int, int, int, int]] = []
        seq = 0

        def push(time: float, kind: int, a: int, b: int = 0) -> None:
            nonlocal seq
            heapq.heappush(events, (time, seq, kind, a, b))
            seq += 1

        def make_ready(tid: int, now: float, lane: int) -> None:
            d = device[tid]
            if not released[d]:
                parked[d].append(tid)
                return
            ready_at[tid] = now
            task = exe.tasks[tid]
            ready_q[task.core].append(tid)
            if lane >= 0 and self.mode in (1, 3):
                affine[lane].append(tid)

        def pick(lane: int, core: str) -> int:
            q = affine[lane]
            while q:
                tid = q.popleft()
                if not taken[tid]:
                    return tid
            rq = ready_q[core]
            while rq:
                tid = rq.popleft()
                if not taken[tid]:
                    return tid
            return -1

        def has_ready(core: str) -> bool:
            rq = ready_q[core]
            while rq and taken[rq[0]]:
                rq.popleft()
            return bool(rq)

        def dispatch(now: float) -> None:
            for core in ("AIC", "AIV"):
                free_lanes = idle[core]
                while free_lanes and has_ready(core):
                    lane = heapq.heappop(free_lanes)
                    tid = pick(lane, core)
                    taken[tid] = True
                    th = lane % self.threads
                    t0 = max(thread_free[th], now) + self.dispatch_cost
                    thread_free[th] = t0
                    dur, prof = self._cost(tid, t0)
                    start[tid], end[tid], lane_of[tid], profile[tid] = t0, t0 + dur, lane, prof
                    push(t0 + dur, _END, tid, lane)

        def release(d: int, now: float) -> None:
            released[d] = True
            launched[d] = now - self.launch_cost
            for tid in parked[d]:
                make_ready(tid, now, -1)
            parked[d].clear()

        if ndev:
            push(stitched[0] + self.launch_cost, _RELEASE, 0)
        for t in exe.tasks:
            if indeg[t.id] == 0:
                parked[device[t.id]].append(t.id)
        last_end = 0.0
        while events:
            now, _, kind, a, b = heapq.heappop(events)
            if kind == _RELEASE:
                release(a, now)
            elif kind == _END:
                th = b % self.threads
                t0 = max(thread_free[th], now) + self.complete_cost
                thread_free[th] = t0
                push(t0, _RESOLVED, a, b)
                last_end = max(last_end, now)
                finished[device[a]] = max(finished[device[a]], now)
            else:  # _RESOLVED: the core is free, the successors' counters drop
                heapq.heappush(idle[self.lanes[b].core], b)
                for s in succs[a]:
                    indeg[s] -= 1
                    if indeg[s] == 0:
                        make_ready(s, now, b)
                d = device[a]
                left_in_device[d] -= 1
                if left_in_device[d] == 0 and d + 1 < ndev:
                    push(max(now, stitched[d + 1]) + self.launch_cost, _RELEASE, d + 1)
            dispatch(now)
        if any(not tk for tk in taken):
            raise RuntimeError("the simulated runtime stopped with tasks never ready (a dependency cycle)")
        us = 1e-3 / self.clock_ghz
        label = self.instance_labels
        tasks = tuple(LaneTask(t.id, lane_of[t.id], start[t.id] * us, end[t.id] * us, t.leaf, t.coord, t.preds,
                               ready_at[t.id] * us, profile[t.id], label[t.instance]) for t in exe.tasks)
        info = {"board": str(self.board.get("name", "")), "clock_ghz": self.clock_ghz,
                "device_sched_mode": self.mode, "stitch_function_max_num": self.stitching.stitch_max,
                **self.stitching.info,
                "device_tasks": ndev, "l2_hit_bytes": self.l2_hits, "l2_miss_bytes": self.l2_misses,
                "cycles": last_end, "end_to_end_us": last_end * us,
                "kernel_us": sum(f - s for s, f in zip(launched, finished)) * us}
        return Swimlane("sim", f"simulated ({self.board.get('name', 'board')} model, {self.clock_ghz} GHz)",
                        self.lanes, tasks, ready_counters(tasks, self.lanes), tuple(self.core.profiles), info)

    def _cost(self, tid: int, now: float) -> tuple[float, int]:
        """(duration in cycles, pipe profile) of a task starting at `now`: its reads looked up in
        L2, its HBM traffic reserved in the bandwidth ledger."""
        t = self.exe.tasks[tid]
        hit = miss = 0
        access, size = self.l2.access, self.elem_bytes
        for r in t.reads:
            nb = math.prod(r.shape) * size[r.buffer]
            if access((r.buffer, r.offset, r.shape, r.layout), nb):
                hit += nb
            else:
                miss += nb
        for r in t.writes:
            access((r.buffer, r.offset, r.shape, r.layout), math.prod(r.shape) * size[r.buffer])
        self.l2_hits += hit
        self.l2_misses += miss
        h = hit / (hit + miss) if hit + miss else 0.0
        rc, rb, wc, wb = self.core.hbm_occupancy(t.leaf)
        cycles = rc * (1 - h) + wc  # streaming HBM, uncontended
        if cycles <= 0:
            return self.core.run(t.leaf, h, 1.0)
        served = self._reserve(now, rb * (1 - h) + wb, cycles)
        return self.core.run(t.leaf, h, served / cycles)

    def _reserve(self, now: float, nbytes: float, cycles: float) -> float:
        """Reserve `nbytes` of HBM bandwidth from `now` in the chip-wide ledger, at most
        `nbytes / cycles` per cycle (the core's own streaming rate); the cycles the transfer
        takes (at least `cycles`). Earlier reservations keep theirs: a later task streams in
        what is left, so the chip never moves more than its bandwidth."""
        rate = nbytes / cycles
        width, ledger = self.bucket, self.ledger
        capacity = self.hbm * width
        t, left = now, nbytes
        while True:
            k = int(t // width)
            while len(ledger) <= k:
                ledger.append(0.0)
            span = (k + 1) * width - t
            room = min(capacity - ledger[k], rate * span)
            if room >= left:
                ledger[k] += left
                return max(cycles, t + left * span / room - now)
            if room > 0:
                ledger[k] += room
                left -= room
            t = (k + 1) * width
