"""The `sim` board: an event-driven model of an Ascend A2/A3 chip running the execute graph.

This is what a tuner reads instead of a real NPU's swimlane, so it models what decides a
kernel's time on the chip, from the figures in one board file (`pypto/target/a2a3.json`):

- **The MPMD runtime.** Every task has a dependency counter (its predecessors in the
  execute graph); a task whose counter reaches zero joins the ready queue of its core type
  (AIC for cube leaves, AIV for vector leaves). `device_sched_mode` 0 hands ready tasks out
  first-in first-out; mode 1 (L2 affinity) first offers a freed core the tasks its own last
  task made ready (their inputs are the freshest lines in L2), then falls back to FIFO. Modes 2
  (fair across scheduler threads) and 3 (fair + L2 affinity) are modelled as 0 and 1: the
  threads here already serve their cores in turn, so fairness adds nothing to model.
- **The AICPU scheduler.** `sched_threads` scheduler threads, each owning every
  `sched_threads`-th core, are serial servers: dispatching a task costs
  `schedule + submit` cycles of its core's thread, a completion `completion + resolve`
  cycles, after which the successors' counters drop. A core waits while its thread is busy
  — the scheduling overhead that many small tasks pay.
- **Root-function stitching.** Root-function instances (the kernel body, each
  `pypto.loop` iteration) are stitched into device tasks of at most
  `stitch_function_max_num` instances. Stitching a device task costs `stitch_cycles` plus
  `stitch_function_cycles` per instance in it, on the control AICPU thread, one device task
  after another (while earlier ones run); a device task launches when the previous one has
  finished and it is stitched, and its first tasks wait `device_task_cycles` for the launch.
  The swimlane's info gives both of PyPTO's figures: `kernel_us`, the device tasks' own
  time (launch to last end, summed), and `end_to_end_us`, from the start of stitching to
  the last end. The three costs are fitted to PyPTO's published GLM attention figures
  (benchmarks/sim_bench.py prints the model beside them).
- **The cores.** 24 AIC and 48 AIV cores; a task's duration comes from running its leaf's
  instruction list on the core's pipes (`core_model.py`: concurrent in-order pipes ordered
  by the leaf's flags, so double buffering overlaps loads with compute).
- **Memory.** A chip-wide L2 (an LRU over GM regions, `l2_bytes`): a task's reads of
  regions in L2 are hits (faster, shorter latency, no HBM traffic). HBM bandwidth
  (`hbm_GBps * hbm_efficiency`) is shared: a task starting while others stream is slowed
  down by the chip's demand over the bandwidth (its share is fixed when it starts).

Time is in cycles at `clock_ghz` inside; the swimlane is in µs and labelled simulated.
Deterministic: no clocks, no randomness, ties broken by core and task ids.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from typing import Any

from pypto.boards.core_model import CoreModel
from pypto.boards.swimlane import Lane, LaneTask, Swimlane, instance_labels, lane_names, ready_counters
from pypto.compiler.execute_ir import ExecGraph
from pypto.compiler.manager import Program
from pypto.compiler.tile_ir import TileGraph
from pypto.target import load as load_board

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


def device_tasks(exe: ExecGraph, stitch_max: int) -> list[int]:
    """Each task's device task: root-function instances in order, `stitch_max` to a device task."""
    instances = sorted({t.instance for t in exe.tasks})
    window = {inst: k // max(1, stitch_max) for k, inst in enumerate(instances)}
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
    stitch_max = int(opts.get("stitch_function_max_num", 128))
    if mode not in (0, 1, 2, 3):
        raise ValueError(f"device_sched_mode {mode}: PyPTO's modes are 0 (FIFO), 1 (L2 affinity), 2 (fair), 3 (both)")
    return _Chip(exe, blocks, tiles, bd, mode, stitch_max).run()


class _Chip:
    def __init__(self, exe: ExecGraph, blocks: Sequence[Any], tiles: TileGraph, board: Mapping[str, Any],
                 mode: int, stitch_max: int) -> None:
        self.exe, self.board, self.mode, self.stitch_max = exe, board, mode, stitch_max
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
        device = device_tasks(exe, self.stitch_max)
        ndev = max(device, default=-1) + 1
        left_in_device = [0] * ndev
        for d in device:
            left_in_device[d] += 1
        parked: list[list[int]] = [[] for _ in range(ndev)]  # ready but their device task not started
        released = [False] * ndev
        functions = [0] * ndev  # root-function instances per device task
        for _inst, d in {(t.instance, device[t.id]) for t in exe.tasks}:
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
                "device_sched_mode": self.mode, "stitch_function_max_num": self.stitch_max,
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
