"""The `sim` board: an event-driven model of an Ascend A2/A3 chip running the execute graph.

This is what a tuner reads instead of a real NPU's swimlane, so it models what decides a
kernel's time on the chip, from the figures in one board file (`pypto/target/a2a3.json`):

- **The MPMD runtime.** Every task has a dependency counter (its predecessors in the
  execute graph); a task whose counter reaches zero joins the ready queue of its core type
  (AIC for cube leaves, AIV for vector leaves; MIX for a PyPTO 3 scope with both, which takes a whole
  cluster — one AIC and its two AIVs, all idle — before single-core tasks are placed, and is never
  offered by L2 affinity). `device_sched_mode` 0 hands ready tasks out
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

Speed (issue 19 item 3): with numba installed (the `fast` extra) `_Chip.run_compiled` runs the
model on columns: the execute graph's tasks as arrays (`task_columns`: the columns the compiler
made with the graph, `ExecGraph.columns`, or made from its Task objects for a graph without them;
cached per graph while it lives), the loop compiled (`sim_kernel.run_events`), the swimlane's tasks and
ready counters returned as columns (`swimlane.TaskColumns`, `PointColumns`: objects made only if
a reader asks). Without numba (or with PYPTO_SIM_JIT=0) `_Chip.run` is the same model as one
Python loop with the L2, the bandwidth ledger and the core model's cache lookup written inline,
and no garbage collection during the run. `tests/sim_reference.py` keeps the model written
plainly; tests/test_sim_reference.py checks that both paths' swimlanes are the same, byte for byte.
"""

from __future__ import annotations

import dataclasses
import gc
import heapq
import itertools
import math
import weakref
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from pypto.boards import sim_kernel
from pypto.boards.core_model import SET, WAIT, CoreModel
from pypto.boards.stitch import Stitching
from pypto.boards.stitch import plan as stitch_plan
from pypto.boards.swimlane import (
    Lane,
    LaneTask,
    PointColumns,
    Swimlane,
    TaskColumns,
    instance_labels,
    lane_names,
    lane_task,
    metrics,
)
from pypto.compiler.block_ir import PIPES
from pypto.compiler.execute import exec_columns
from pypto.compiler.execute_ir import ExecGraph
from pypto.compiler.manager import Program
from pypto.compiler.tile_ir import TileGraph
from pypto.target import load as load_board

_END, _RESOLVED, _RELEASE = 0, 1, 2


class _L2:
    """The shared L2 as an LRU over GM regions (exact region identity), in bytes. A task touches
    a region (read or written): a region in `lines` is a hit and moves to the end; a new one is
    added at the end and the oldest are evicted while `used` exceeds `capacity` (`_Chip.run`
    does this inline)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        self.lines: OrderedDict[tuple[Any, ...], int] = OrderedDict()




def device_tasks(exe: ExecGraph, window: Mapping[int, int]) -> list[int]:
    """Each task's device task: its instance's window (`stitch.plan`: root functions in order, so many to a device
    task).
    A task that waits on a later instance's task (the kernel body's code after a loop, which reads
    what the loop's iterations wrote) goes with the latest device task it waits on: that code is a
    root function of its own in PyPTO, stitched after the loop's (without this, a device task would
    wait on one that is released only after it ends)."""
    device = [window[t.instance] for t in exe.tasks]
    preds = [t.preds for t in exe.tasks]
    done = [False] * len(device)
    for start in range(len(device)):  # each task after its predecessors (depth first, no recursion)
        stack = [start]
        while stack:
            tid = stack[-1]
            if done[tid]:
                stack.pop()
                continue
            todo = [p for p in preds[tid] if not done[p]]
            if todo:
                stack.extend(todo)
                continue
            for p in preds[tid]:
                if device[p] > device[tid]:
                    device[tid] = device[p]
            done[tid] = True
            stack.pop()
    return device


@dataclasses.dataclass(frozen=True)
class _Columns:
    """An execute graph's tasks as the columns the compiled loop reads (`sim_kernel.run_events`):
    int64 arrays, lists of CSR offsets and entries for predecessors, successors (in the order
    the Python loop lists them) and the GM regions read and written (interned: one id per
    distinct (buffer, offset, shape, layout), `reg_nbytes` its bytes), and the tasks' coords,
    predecessor tuples and instances for the swimlane: the graph's `ExecColumns` and what the
    board derives from them."""

    leaf: np.ndarray
    core: np.ndarray  # 0: AIC, 1: AIV, 2: MIX
    instance: np.ndarray
    instance_rank: np.ndarray  # the instance's position among the graph's instances, in order
    pred_ptr: np.ndarray
    pred_idx: np.ndarray
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    rd_ptr: np.ndarray
    rd_reg: np.ndarray
    wr_ptr: np.ndarray
    wr_reg: np.ndarray
    reg_nbytes: np.ndarray
    elem_bytes: tuple[int, ...]
    coord: Sequence[tuple[int, ...]]
    preds: Sequence[tuple[int, ...]]
    instances: Sequence[int]


# execute graph id -> (a weak reference to it, its columns): reading 100k Task objects costs more
# than simulating them, and a graph is simulated many times (boards, runtime options, the advisor)
_COLUMNS: dict[int, tuple[weakref.ref[ExecGraph], _Columns]] = {}


def _offsets(lengths: list[int]) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def task_columns(exe: ExecGraph, elem_bytes: Sequence[int]) -> _Columns | None:
    """The columns of `exe`'s tasks (made once per execute graph and buffer sizes, then cached while
    the graph lives): from the graph's own (`ExecGraph.columns`, which the compiler makes with the
    tasks) or, for a graph without them, from the Task objects; None when task ids are not their
    positions or a core type is not AIC / AIV (the Python loop then runs)."""
    eb = tuple(elem_bytes)
    hit = _COLUMNS.get(id(exe))
    if hit is not None and hit[0]() is exe and hit[1].elem_bytes == eb:
        return hit[1]
    tasks = exe.tasks
    n = len(tasks)
    ec = exe.columns
    if ec is None or len(ec.leaf) != n:
        if list(map(attrgetter("id"), tasks)) != list(range(n)):
            return None
        # every field read by C-level maps (attrgetter), no Python loop per task
        ec = exec_columns(*(list(map(attrgetter(f), tasks))
                            for f in ("leaf", "core", "instance", "coord", "preds", "reads", "writes")))
    if n and (int(ec.core.min()) < 0 or int(ec.core.max()) > 2):  # another core type: the Python loop
        return None
    pred_idx = ec.pred_idx
    # successors: each predecessor's dependants in task order, as the Python loop appends them
    succ_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pred_idx, minlength=n), out=succ_ptr[1:])
    if sim_kernel.available():  # counted in one pass, compiled
        succ_idx = sim_kernel.compiled().successors(ec.pred_ptr, pred_idx, succ_ptr)
    else:
        succ_idx = np.repeat(np.arange(n, dtype=np.int64), np.diff(ec.pred_ptr))[np.argsort(pred_idx, kind="stable")]
    reg_nbytes = ec.reg_elems * np.array(eb, dtype=np.int64)[ec.reg_buffer]
    cols = _Columns(
        ec.leaf, ec.core, ec.instance,
        np.unique(ec.instance, return_inverse=True)[1].astype(np.int64).reshape(-1),  # instance ranks
        ec.pred_ptr, pred_idx, succ_ptr, succ_idx, ec.rd_ptr, ec.rd_reg, ec.wr_ptr, ec.wr_reg,
        reg_nbytes, eb, ec.coord, ec.preds, ec.instances)
    key = id(exe)
    _COLUMNS[key] = (weakref.ref(exe, lambda _ref, key=key: _COLUMNS.pop(key, None)), cols)  # type: ignore[misc]
    return cols


def _program_columns(core: CoreModel) -> tuple[np.ndarray, ...]:
    """The core model's costed instruction lists as columns: offsets per leaf, then per step its
    pipe, kind, occupancies, latencies, GM access and flag number (-1 none)."""
    steps = [st for prog in core.programs for st in prog]
    flags: dict[Any, int] = {}
    flag = [-1 if st.kind not in (SET, WAIT) else flags.setdefault(st.flag, len(flags)) for st in steps]
    ptr = _offsets([len(prog) for prog in core.programs])
    return (ptr, np.array([st.pipe for st in steps], dtype=np.int64),
            np.array([st.kind for st in steps], dtype=np.int64),
            np.array([st.occ_miss for st in steps], dtype=np.float64),
            np.array([st.occ_hit for st in steps], dtype=np.float64),
            np.array([st.lat_miss for st in steps], dtype=np.float64),
            np.array([st.lat_hit for st in steps], dtype=np.float64),
            np.array([st.gm for st in steps], dtype=np.int64), np.array(flag, dtype=np.int64),
            np.int64(len(flags)))


_SLOWDOWN = np.array([1.02 ** k for k in range(4096)], dtype=np.float64)  # as `CoreModel.run` computes them


# In "auto" mode (sim_kernel.mode), a graph this big waits for the compiled loop to load (0.1-0.4 s)
# rather than run the Python loop (~5-10 µs per task)
_LOAD_NOW_TASKS = 20_000


def _warm(chip: _Chip) -> None:
    """A compiled run and its metrics: every compiled function loaded (or compiled)."""
    swimlane = chip.run_compiled()
    if swimlane is not None:
        metrics(swimlane)


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
    collecting = gc.isenabled()
    gc.disable()  # the run allocates a few objects per task and frees none: collections would only rescan the program
    try:
        jit = sim_kernel.mode()
        if jit == "on" or (jit == "auto" and (sim_kernel.ready() or len(exe.tasks) >= _LOAD_NOW_TASKS)):
            swimlane = _Chip(exe, blocks, tiles, bd, mode, stitching).run_compiled()
            if swimlane is not None:
                return swimlane
        elif jit == "auto":  # load the compiled loop for the next runs, on this graph, in a thread
            sim_kernel.warm_in_background(lambda: _warm(_Chip(exe, blocks, tiles, bd, mode, stitching)))
        return _Chip(exe, blocks, tiles, bd, mode, stitching).run()
    finally:
        if collecting:
            gc.enable()


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

    def clusters(self) -> list[tuple[int, int, int]]:
        """Per cluster, lowest first: its AIC lane and its two AIV lanes (AIC_c with AIV_2c and AIV_2c+1,
        A2/A3's 1 cube + 2 vector cores): where a MIX task runs."""
        aic = [i for i, ln in enumerate(self.lanes) if ln.core == "AIC"]
        aiv = [i for i, ln in enumerate(self.lanes) if ln.core == "AIV"]
        return [(aic[c], aiv[2 * c], aiv[2 * c + 1]) for c in range(min(len(aic), len(aiv) // 2))]

    def run_compiled(self) -> Swimlane | None:
        """`run` on columns, by `sim_kernel.run_events`: the same swimlane, tasks as columns
        (`TaskColumns`). None where it does not apply (task ids not their positions, a pipe run's
        duration not the core model's): the caller then runs `run`."""
        exe, core = self.exe, self.core
        cols = task_columns(exe, self.elem_bytes)
        if cols is None:
            return None
        n = len(cols.leaf)
        window = self.stitching.window[cols.instance_rank]
        device = sim_kernel.compiled().device_of(window, cols.pred_ptr, cols.pred_idx) if n else window
        ndev = int(device.max()) + 1 if n else 0
        # (root function, device task) pairs
        pairs = np.unique(self.stitching.root_function[cols.instance_rank] * ndev + device)
        functions = np.bincount(pairs % ndev, minlength=ndev).tolist() if n else []  # root functions per device task
        stitched = np.array(list(itertools.accumulate(
            self.stitch_cost + self.stitch_per_function * k for k in functions)), dtype=np.float64)
        lane_core = np.array([{"AIC": 0, "AIV": 1}.get(ln.core, -1) for ln in self.lanes], dtype=np.int64)
        clusters = np.array(self.clusters(), dtype=np.int64).reshape(-1, 3)
        if n and int(cols.core.max()) == 2 and not len(clusters):
            raise ValueError("MIX tasks need clusters of one AIC and two AIV cores; the board has none")
        nleaf = len(core.programs)
        hbm_of = np.array([core.hbm_occupancy(leaf) for leaf in range(nleaf)], dtype=np.float64).reshape(nleaf, 4)
        prog = _program_columns(core)
        start, end, ready_at = np.zeros(n), np.zeros(n), np.zeros(n)
        ready_order = np.zeros(n, dtype=np.int64)
        lane_of, profile = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        held = np.full((n, 2), -1, dtype=np.int64)
        launched, finished = np.zeros(ndev), np.zeros(ndev)
        runs = np.zeros((n + 1, 4))
        stats = np.zeros(4)
        nruns = sim_kernel.compiled().run_events(
            cols.leaf, cols.core, np.diff(cols.pred_ptr), cols.succ_ptr, cols.succ_idx, cols.rd_ptr, cols.rd_reg,
            cols.wr_ptr, cols.wr_reg, cols.reg_nbytes, device, stitched, lane_core, clusters, hbm_of, *prog, len(PIPES),
            self.threads, self.dispatch_cost, self.complete_cost, self.launch_cost, self.mode in (1, 3),
            self.l2.capacity, self.bucket, self.hbm * self.bucket, math.log(1.02), _SLOWDOWN, sim_kernel.DENSE_SQ,
            start, end, ready_at, ready_order, lane_of, held, profile, launched, finished, runs, stats)
        if nruns < 0:
            raise RuntimeError("the simulated runtime stopped with tasks never ready (a dependency cycle)")
        for row in range(nruns):  # the core model runs each distinct pipe run once more, for its profile
            leaf, hq, sq = (int(x) for x in runs[row, :3])
            cost = core.runs[(leaf, hq, sq)] = core.simulate(leaf, hq / 10, 1.02 ** sq)
            if cost != (float(runs[row, 3]), row):
                return None
        self.l2_hits, self.l2_misses, self.l2.used = int(stats[0]), int(stats[1]), int(stats[3])
        last_end = float(stats[2])
        us = 1e-3 / self.clock_ghz
        start_us, end_us, ready_us = start * us, end * us, ready_at * us
        info = {"board": str(self.board.get("name", "")), "clock_ghz": self.clock_ghz,
                "device_sched_mode": self.mode, "stitch_function_max_num": self.stitching.stitch_max,
                **self.stitching.info,
                "device_tasks": ndev, "l2_hit_bytes": self.l2_hits, "l2_miss_bytes": self.l2_misses,
                "cycles": last_end, "end_to_end_us": last_end * us,
                "kernel_us": sum(f - s for s, f in zip(launched.tolist(), finished.tolist())) * us}
        task_core = lane_core[lane_of] if n else np.zeros(0, int)
        mix = held[:, 0] >= 0
        tasks: Sequence[LaneTask]
        if n and bool(mix.any()):  # MIX tasks: their held lanes, a ready counter of their own, tasks as objects
            task_core[mix] = 2
            info["mix_tasks"] = int(mix.sum())
            counters = _ready_series(ready_us, ready_order, start_us, task_core, ("AIC", "AIV", "MIX"))
            label = self.instance_labels
            tasks = tuple(map(lane_task, range(n), lane_of.tolist(), start_us.tolist(), end_us.tolist(),
                              cols.leaf.tolist(), cols.coord, cols.preds, ready_us.tolist(), profile.tolist(),
                              [label[i] for i in cols.instances],
                              [(a, b) if a >= 0 else () for a, b in held.tolist()]))
        else:
            counters = _ready_series(ready_us, ready_order, start_us, task_core, ("AIC", "AIV"))
            tasks = TaskColumns(n, lane_of, start_us, end_us, cols.leaf, cols.coord, cols.preds, ready_us, profile,
                                self.instance_labels, cols.instances, cols.pred_ptr, cols.pred_idx)
        sim_kernel.mark_ready()
        return Swimlane("sim", f"simulated ({self.board.get('name', 'board')} model, {self.clock_ghz} GHz)",
                        self.lanes, tasks, counters, tuple(core.profiles), info)

    def run(self) -> Swimlane:
        # One loop, everything inlined: this runs once per task and event (issue 19 item 3;
        # tests/sim_reference.py is the same model written plainly, and the swimlanes agree byte for byte).
        exe, core, threads = self.exe, self.core, self.threads
        tasks = exe.tasks
        n = len(tasks)
        succs: list[list[int]] = [[] for _ in range(n)]
        indeg = [0] * n
        leaf_of = [0] * n
        core_of = [0] * n  # 0: AIC, 1: AIV, 2: MIX (a cluster's AIC and its two AIVs at once)
        core_index = {"AIC": 0, "AIV": 1, "MIX": 2}
        for t in tasks:
            tid = t.id
            preds = t.preds
            indeg[tid] = len(preds)
            for p in preds:
                succs[p].append(tid)
            leaf_of[tid] = t.leaf
            core_of[tid] = core_index[t.core]
        ranks = sorted({t.instance for t in tasks})
        window = dict(zip(ranks, self.stitching.window.tolist(), strict=True))
        root_function = dict(zip(ranks, self.stitching.root_function.tolist(), strict=True))
        device = device_tasks(exe, window)
        ndev = max(device, default=-1) + 1
        left_in_device = [0] * ndev
        for d in device:
            left_in_device[d] += 1
        parked: list[list[int]] = [[] for _ in range(ndev)]  # ready but their device task not started
        released = [False] * ndev
        functions = [0] * ndev  # root functions per device task
        for _root, d in {(root_function[t.instance], device[t.id]) for t in tasks}:
            functions[d] += 1
        stitched = list(itertools.accumulate(  # one after another on the stitch thread
            self.stitch_cost + self.stitch_per_function * k for k in functions))
        launched = [0.0] * ndev
        finished = [0.0] * ndev
        launch_cost, dispatch_cost, complete_cost = self.launch_cost, self.dispatch_cost, self.complete_cost

        ready_q: tuple[deque[int], deque[int], deque[int]] = (deque(), deque(), deque())
        affinity = self.mode in (1, 3)
        affine: list[deque[int]] = [deque() for _ in self.lanes]
        taken = [False] * n
        idle: tuple[list[int], list[int]] = ([], [])
        lane_core = [core_index.get(ln.core, -1) for ln in self.lanes]
        for i, c in enumerate(lane_core):
            if c >= 0:
                idle[c].append(i)
        clusters = self.clusters()  # per cluster: its AIC lane and its two AIV lanes (for MIX tasks)
        held_by: dict[int, tuple[int, int]] = {}  # a running MIX task's AIC lane -> the AIV lanes it holds
        held_of: dict[int, tuple[int, int]] = {}  # MIX task -> the AIV lanes it held
        order = (2, 0, 1) if 2 in core_of else (0, 1)
        if order[0] == 2 and not clusters:
            raise ValueError("MIX tasks need clusters of one AIC and two AIV cores; the board has none")
        thread_free = [0.0] * threads
        ready_at = [0.0] * n
        start = [0.0] * n
        end = [0.0] * n
        lane_of = [-1] * n
        profile = [-1] * n
        dispatched = 0

        # the task's cost: L2, HBM ledger and the core's pipe run, as `_cost`, `_reserve` and
        # `CoreModel.run` were (tests/sim_reference.py)
        lines = self.l2.lines
        l2_used, l2_capacity = self.l2.used, self.l2.capacity
        move_to_end, popitem = lines.move_to_end, lines.popitem
        elem_bytes = self.elem_bytes
        prod, log = math.prod, math.log
        log102 = math.log(1.02)
        hbm_of = [core.hbm_occupancy(leaf) for leaf in range(len(core.programs))]
        run_cache = core.runs
        core_run = core.run
        width, ledger = self.bucket, self.ledger
        capacity = self.hbm * width
        l2_hits = l2_misses = 0

        heappush, heappop = heapq.heappush, heapq.heappop
        events: list[tuple[float, int, int, int, int]] = []
        seq = 0
        if ndev:
            heappush(events, (stitched[0] + launch_cost, seq, _RELEASE, 0, 0))
            seq += 1
        for t in tasks:
            if indeg[t.id] == 0:
                parked[device[t.id]].append(t.id)
        last_end = 0.0
        while events:
            now, _, kind, a, b = heappop(events)
            if kind == _RELEASE:
                released[a] = True
                launched[a] = now - launch_cost
                for tid in parked[a]:
                    ready_at[tid] = now
                    ready_q[core_of[tid]].append(tid)
                parked[a].clear()
            elif kind == _END:
                th = b % threads
                tf = thread_free[th]
                t0 = (now if now > tf else tf) + complete_cost
                thread_free[th] = t0
                heappush(events, (t0, seq, _RESOLVED, a, b))
                seq += 1
                if now > last_end:
                    last_end = now
                d = device[a]
                if now > finished[d]:
                    finished[d] = now
                continue  # nothing was freed or made ready: no lane can take a task now
            else:  # _RESOLVED: the core is free, the successors' counters drop
                heappush(idle[lane_core[b]], b)
                if held_by:
                    pair = held_by.pop(b, None)
                    if pair is not None:  # a MIX task ended: its cluster's AIV lanes are free too
                        heappush(idle[1], pair[0])
                        heappush(idle[1], pair[1])
                for sc in succs[a]:
                    indeg[sc] -= 1
                    if indeg[sc] == 0:
                        d = device[sc]
                        if not released[d]:
                            parked[d].append(sc)
                            continue
                        ready_at[sc] = now
                        ready_q[core_of[sc]].append(sc)
                        if affinity and core_of[sc] != 2:
                            affine[b].append(sc)
                d = device[a]
                left_in_device[d] -= 1
                if left_in_device[d] == 0 and d + 1 < ndev:
                    st = stitched[d + 1]
                    heappush(events, ((st if st > now else now) + launch_cost, seq, _RELEASE, d + 1, 0))
                    seq += 1
            # dispatch: MIX tasks first (FIFO), each on the lowest cluster whose AIC and both AIVs are idle;
            # then each idle lane, lowest first, takes a ready task of its core type
            for c in order:
                free_lanes = idle[c] if c < 2 else idle[0]
                rq = ready_q[c]
                while free_lanes:
                    if c == 2:
                        if not rq:
                            break
                        cl = next((cl for cl in clusters if cl[0] in idle[0] and cl[1] in idle[1]
                                   and cl[2] in idle[1]), None)
                        if cl is None:
                            break
                        for i, ln in ((0, cl[0]), (1, cl[1]), (1, cl[2])):
                            idle[i].remove(ln)
                            heapq.heapify(idle[i])
                        lane = cl[0]
                        tid = rq.popleft()
                        held_by[lane] = held_of[tid] = (cl[1], cl[2])
                    elif affinity:
                        while rq and taken[rq[0]]:
                            rq.popleft()
                        if not rq:
                            break
                        lane = heappop(free_lanes)
                        q = affine[lane]
                        tid = -1
                        while q:
                            tid = q.popleft()
                            if not taken[tid]:
                                break
                            tid = -1
                        if tid < 0:
                            while rq:
                                tid = rq.popleft()
                                if not taken[tid]:
                                    break
                    else:
                        if not rq:
                            break
                        lane = heappop(free_lanes)
                        tid = rq.popleft()
                    taken[tid] = True
                    dispatched += 1
                    th = lane % threads
                    tf = thread_free[th]
                    t0 = (now if now > tf else tf) + dispatch_cost
                    thread_free[th] = t0
                    # -- the cost of task `tid` starting at t0
                    t = tasks[tid]
                    hit = miss = 0
                    for r in t.reads:
                        nb = prod(r.shape) * elem_bytes[r.buffer]
                        key = (r.buffer, r.offset, r.shape, r.layout)
                        if key in lines:
                            move_to_end(key)
                            hit += nb
                        else:
                            lines[key] = nb
                            l2_used += nb
                            while l2_used > l2_capacity and lines:
                                l2_used -= popitem(last=False)[1]
                            miss += nb
                    for r in t.writes:
                        key = (r.buffer, r.offset, r.shape, r.layout)
                        if key in lines:
                            move_to_end(key)
                        else:
                            nb = prod(r.shape) * elem_bytes[r.buffer]
                            lines[key] = nb
                            l2_used += nb
                            while l2_used > l2_capacity and lines:
                                l2_used -= popitem(last=False)[1]
                    l2_hits += hit
                    l2_misses += miss
                    leaf = leaf_of[tid]
                    h = hit / (hit + miss) if hit + miss else 0.0
                    rc, rb, wc, wb = hbm_of[leaf]
                    cycles = rc * (1 - h) + wc  # streaming HBM, uncontended
                    if cycles <= 0:
                        s = 1.0
                    else:  # reserve the HBM bytes in the chip-wide ledger from t0 (`_reserve`)
                        nbytes = rb * (1 - h) + wb
                        rate = nbytes / cycles
                        tt, left = t0, nbytes
                        while True:
                            k = int(tt // width)
                            if len(ledger) <= k:
                                ledger.extend([0.0] * (k + 1 - len(ledger)))
                            span = (k + 1) * width - tt
                            room = capacity - ledger[k]
                            stream = rate * span
                            if stream < room:
                                room = stream
                            if room >= left:
                                ledger[k] += left
                                took = tt + left * span / room - t0
                                s = (took if took > cycles else cycles) / cycles
                                break
                            if room > 0:
                                ledger[k] += room
                                left -= room
                            tt = (k + 1) * width
                    hq = round(h * 10) if hit else 0
                    sq = round(log(s if s > 1.0 else 1.0) / log102) if s != 1.0 else 0
                    cost = run_cache.get((leaf, hq, sq))
                    if cost is None:
                        cost = core_run(leaf, h, s)
                    dur, prof = cost
                    start[tid], end[tid], lane_of[tid], profile[tid] = t0, t0 + dur, lane, prof
                    heappush(events, (t0 + dur, seq, _END, tid, lane))
                    seq += 1
        self.l2.used = l2_used
        self.l2_hits, self.l2_misses = l2_hits, l2_misses
        if dispatched < n:
            raise RuntimeError("the simulated runtime stopped with tasks never ready (a dependency cycle)")
        us = 1e-3 / self.clock_ghz
        label = self.instance_labels
        start_us, end_us, ready_us = ((np.array(x, dtype=np.float64) * us).tolist() for x in (start, end, ready_at))
        lane_tasks = tuple(map(lane_task, [t.id for t in tasks], lane_of, start_us, end_us, leaf_of,
                               [t.coord for t in tasks], [t.preds for t in tasks], ready_us, profile,
                               [label[t.instance] for t in tasks], [held_of.get(t.id, ()) for t in tasks]))
        info = {"board": str(self.board.get("name", "")), "clock_ghz": self.clock_ghz,
                "device_sched_mode": self.mode, "stitch_function_max_num": self.stitching.stitch_max,
                **self.stitching.info,
                "device_tasks": ndev, "l2_hit_bytes": self.l2_hits, "l2_miss_bytes": self.l2_misses,
                "cycles": last_end, "end_to_end_us": last_end * us,
                "kernel_us": sum(f - s for s, f in zip(launched, finished)) * us}
        task_core = np.array(lane_core, dtype=np.int64)[np.array(lane_of, dtype=np.int64)] if n else np.zeros(0, int)
        if held_of:  # MIX tasks: a ready counter of their own
            task_core[np.array(sorted(held_of), dtype=np.int64)] = 2
            info["mix_tasks"] = len(held_of)
        counters = _ready_counters(np.array(ready_us, dtype=np.float64), np.array(start_us, dtype=np.float64),
                                   task_core, ("AIC", "AIV", "MIX"))
        return Swimlane("sim", f"simulated ({self.board.get('name', 'board')} model, {self.clock_ghz} GHz)",
                        self.lanes, lane_tasks, counters, tuple(self.core.profiles), info)


def _ready_series(ready: np.ndarray, ready_order: np.ndarray, start: np.ndarray, core: np.ndarray,
                  core_names: Sequence[str]) -> dict[str, Sequence[tuple[float, float]]]:
    """`_ready_counters`' series (the same points) from the tasks in the order they became ready
    (their ready times ascending: no sort) and the start times sorted once; series as columns
    (`PointColumns`)."""
    by_start = np.argsort(start, kind="stable")
    start_sorted, start_core = start[by_start], core[by_start]
    ready_sorted, ready_core = ready[ready_order], core[ready_order]
    if len(ready_sorted) > 1 and bool((ready_sorted[1:] < ready_sorted[:-1]).any()):
        return dict(_ready_counters(ready, start, core, core_names))  # not in time order: sort them
    out: dict[str, Sequence[tuple[float, float]]] = {}
    series = {f"ReadyCount_{name}": c for c, name in enumerate(core_names) if (core == c).any()}
    if len(core):
        series["ReadyCount_Total"] = -1
    ready_level = sim_kernel.compiled().ready_level
    for name in sorted(series):
        c = series[name]
        if c < 0:
            times, level = ready_level(ready_sorted, start_sorted)
        else:
            times, level = ready_level(ready_sorted[ready_core == c], start_sorted[start_core == c])
        out[name] = PointColumns(times, level)
    return out


def _ready_counters(ready: np.ndarray, start: np.ndarray, core: np.ndarray,
                    core_names: Sequence[str]) -> dict[str, list[tuple[float, float]]]:
    """`swimlane.ready_counters` from columns (the same series, value for value): per core type
    and in total, the tasks ready and not yet started over time: +1 at each task's ready time,
    -1 at its start, sorted by time (a start before a ready at the same time), one point per
    time (the level after all its events)."""
    out: dict[str, list[tuple[float, float]]] = {}
    series = {f"ReadyCount_{name}": core == c for c, name in enumerate(core_names) if (core == c).any()}
    if len(core):
        series["ReadyCount_Total"] = np.ones(len(core), dtype=bool)
    for name in sorted(series):
        pick = series[name]
        times = np.concatenate((ready[pick], start[pick]))
        step = np.concatenate((np.ones(int(pick.sum()), np.int64), -np.ones(int(pick.sum()), np.int64)))
        order = np.lexsort((step, times))
        times, level = times[order], np.cumsum(step[order])
        last = np.append(times[1:] != times[:-1], True)  # the last event at each time
        out[name] = list(zip(times[last].tolist(), level[last].astype(np.float64).tolist()))
    return out
