"""The sim board's event loop on arrays, compiled with numba: why the board reaches 1M tasks/s.

`sim._Chip.run` is the model as one Python loop; at about 5 µs per task it is the interpreter's
own cost (three heap events, an L2 LRU and a bandwidth ledger per task), which no rewriting in
Python removes (issue 19 item 3). This is the same loop over integer and float columns — tasks'
leaves, core types, predecessor / successor / region lists as CSR offsets — with the L2 LRU as a
doubly linked list over interned GM regions, the event heap and the ready queues as arrays and
the core model's pipe run (`core_model.CoreModel.simulate`, durations only) written inline, so
numba compiles it to machine code. Every arithmetic step is the Python model's, in the same
order, so the floats are the same bits: `sim.py` checks each pipe run's duration against
`CoreModel` (which also makes the per-pipe profiles) and tests/test_sim_reference.py compares
the swimlanes byte for byte with the reference model.

numba is optional (`pip install pypto-ide[fast]`; the dev extra has it): without it, or with
`PYPTO_SIM_JIT=0`, the board runs `_Chip.run`; until the compiled functions are loaded, a small
graph runs there too while a thread loads them (`mode`). numba is imported on the first compiled run (not
with pypto), and its machine code is cached on disk (`cache=True`): a fresh process loads it in
about 0.1 s; the very first run after an install or a change of this file compiles it (10-20 s).
The functions are plain Python until `compiled()` wraps them.
"""

from __future__ import annotations

import atexit
import importlib.util
import math
import os
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

_END, _RESOLVED, _RELEASE = 0, 1, 2
_WORK, _SET, _WAIT = 0, 1, 2
DENSE_SQ = 256  # slowdown steps (2 % each, up to 1.02 ** 256 = 160x) in a table, more in a dict

_NUMBA = importlib.util.find_spec("numba") is not None  # imported on first use: it takes 0.1-0.4 s
_JITTED: SimpleNamespace | None = None


_READY = False  # the compiled functions have run in this process (loaded or compiled)
_WARMING: threading.Thread | None = None


def available() -> bool:
    """Whether the compiled loop can be used: numba is installed and `PYPTO_SIM_JIT` is not "0"."""
    return mode() != "off"


def mode() -> str:
    """"off" (no numba, or PYPTO_SIM_JIT=0: the Python loop), "on" (PYPTO_SIM_JIT=1: the compiled
    loop, loaded or compiled on the spot), else "auto": the compiled loop once it is loaded in this
    process or for a big graph; a small graph meanwhile runs the Python loop (a few ms) while a
    thread loads the compiled one (0.1-0.4 s from numba's cache; 10-20 s the first time after an
    install), so that the first answer does not wait for numba."""
    env = os.environ.get("PYPTO_SIM_JIT", "")
    if not _NUMBA or env == "0" or _FORKED_MID_LOAD:
        return "off"
    return "on" if env == "1" else "auto"


_FORKED_MID_LOAD = False  # forked while a thread was loading: numba's compiler lock may be held for ever


def _after_fork_in_child() -> None:
    """A process forked (the language server's workers fork a child per job from a template that has
    profiled a warm-up kernel) while the loading thread ran did not get that thread, maybe with
    numba's compiler lock held: it keeps the Python loop. One forked after the load has the
    compiled functions already, at no cost."""
    global _WARMING, _FORKED_MID_LOAD
    if _WARMING is not None and not _READY:
        _FORKED_MID_LOAD = True
    _WARMING = None


os.register_at_fork(after_in_child=_after_fork_in_child)


def ready() -> bool:
    """Whether the compiled functions are loaded in this process."""
    return _READY


def mark_ready() -> None:
    global _READY
    _READY = True


def warm_in_background(run: Callable[[], object]) -> None:
    """Once per process: `run` (a compiled board run on a small graph) in a daemon thread, which
    loads or compiles the functions; `ready()` is true after it. The process waits for it at exit
    (`atexit`): a thread still inside LLVM when the interpreter tears down can abort the process
    ("terminate called without an active exception", seen in CI once, numba's cache cold), and a
    compile cut short writes no cache, so the next short-lived process would start it again."""
    global _WARMING
    if _WARMING is not None or _READY:
        return

    def warm() -> None:
        try:
            run()
        except Exception:  # noqa: BLE001 - the board then keeps its Python loop for small graphs
            return
        mark_ready()

    _WARMING = threading.Thread(target=warm, name="pypto-sim-jit", daemon=True)
    _WARMING.start()
    atexit.register(finish_loading)


def finish_loading() -> None:
    """Wait for the loading thread, if one runs. A process that forks calls this first: a child
    forked while the thread imports numba or compiles can wait for ever on a lock the thread held
    (an import's module lock, numba's compiler lock), since the thread is not in the child."""
    if _WARMING is not None:
        _WARMING.join()


def compiled() -> SimpleNamespace:
    """The functions below compiled (`device_of`, `successors`, `run_events`, `ready_level`, and `swimlane.metrics`'
    `waiting_intervals`, `lane_waits`, `critical_path`): numba imported and
    each function wrapped on the first call, the helpers first so that the loop calls them as
    compiled code; machine code is loaded from numba's on-disk cache, or compiled (seconds) once."""
    global _JITTED
    with _COMPILING:  # once: the loading thread and a big graph's run may both come here first
        if _JITTED is None:
            _JITTED = _compile()
    return _JITTED


_COMPILING = threading.Lock()


def _compile() -> SimpleNamespace:
    """`compiled`'s work, under its lock (wrapping a function twice would wrap a wrapper)."""
    import numba
    from numba.typed import Dict

    jit = numba.njit(cache=True, nogil=True)
    g = globals()
    g["Dict"], g["_I64"] = Dict, numba.types.int64
    for name in ("_heap_push", "_heap_pop", "_pipe_run", "_covered"):
        g[name] = jit(g[name])
    return SimpleNamespace(**{name: jit(g[name]) for name in (
        "device_of", "successors", "run_events", "ready_level", "waiting_intervals", "lane_waits",
        "critical_path")})


Dict: Any = None  # numba.typed.Dict and numba's int64 type, set by `compiled`
_I64: Any = None


def device_of(window: np.ndarray, pred_ptr: np.ndarray, pred_idx: np.ndarray) -> np.ndarray:  # pragma: no cover
    """`sim.device_tasks` on columns: each task's device task is its instance's window, raised to
    the latest of its predecessors' (the same depth-first walk, in task id order). When every
    predecessor precedes its task (the compiler's execute graphs), that walk is one forward pass:
    taken until a predecessor that does not, then the walk from the start."""
    n = window.shape[0]
    device = window.copy()
    forward = True
    for tid in range(n):
        for k in range(pred_ptr[tid], pred_ptr[tid + 1]):
            p = pred_idx[k]
            if p >= tid:
                forward = False
                break
            if device[p] > device[tid]:
                device[tid] = device[p]
        if not forward:
            break
    if forward:
        return device
    device = window.copy()
    done = np.zeros(n, dtype=np.bool_)
    stack = np.empty(max(1, pred_idx.shape[0] + n), dtype=np.int64)
    for start in range(n):
        top = 0
        stack[0] = start
        top = 1
        while top > 0:
            tid = stack[top - 1]
            if done[tid]:
                top -= 1
                continue
            pushed = False
            for k in range(pred_ptr[tid], pred_ptr[tid + 1]):
                p = pred_idx[k]
                if not done[p]:
                    if top >= stack.shape[0]:
                        grown = np.empty(stack.shape[0] * 2, dtype=np.int64)
                        grown[:top] = stack[:top]
                        stack = grown
                    stack[top] = p
                    top += 1
                    pushed = True
            if pushed:
                continue
            for k in range(pred_ptr[tid], pred_ptr[tid + 1]):
                p = pred_idx[k]
                if device[p] > device[tid]:
                    device[tid] = device[p]
            done[tid] = True
            top -= 1
    return device


def successors(pred_ptr: np.ndarray, pred_idx: np.ndarray, succ_ptr: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Each task's dependants in task order, as CSR items over `succ_ptr` (the predecessors counted per task):
    what a stable argsort of `pred_idx` gives, in one pass over the arrows instead of a sort (Kimi's block
    attention after its tile edit: 8.4 M arrows)."""
    n = pred_ptr.shape[0] - 1
    fill = succ_ptr[:-1].copy()
    out = np.empty(pred_idx.shape[0], dtype=np.int64)
    for tid in range(n):
        for k in range(pred_ptr[tid], pred_ptr[tid + 1]):
            p = pred_idx[k]
            out[fill[p]] = tid
            fill[p] += 1
    return out


def _heap_push(h_time: np.ndarray, h_seq: np.ndarray, h_kind: np.ndarray, h_a: np.ndarray, h_b: np.ndarray,
               size: int, time: float, seq: int, kind: int, a: int, b: int) -> int:  # pragma: no cover
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        pt = h_time[parent]
        if pt < time or (pt == time and h_seq[parent] < seq):
            break
        h_time[i], h_seq[i], h_kind[i], h_a[i], h_b[i] = pt, h_seq[parent], h_kind[parent], h_a[parent], h_b[parent]
        i = parent
    h_time[i], h_seq[i], h_kind[i], h_a[i], h_b[i] = time, seq, kind, a, b
    return size + 1


def _heap_pop(h_time: np.ndarray, h_seq: np.ndarray, h_kind: np.ndarray, h_a: np.ndarray, h_b: np.ndarray,
              size: int) -> int:  # pragma: no cover
    """Removes the root (the caller read it first); returns the new size."""
    size -= 1
    time, seq, kind, a, b = h_time[size], h_seq[size], h_kind[size], h_a[size], h_b[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        r = c + 1
        if r < size and (h_time[r] < h_time[c] or (h_time[r] == h_time[c] and h_seq[r] < h_seq[c])):
            c = r
        ct = h_time[c]
        if time < ct or (time == ct and seq < h_seq[c]):
            break
        h_time[i], h_seq[i], h_kind[i], h_a[i], h_b[i] = ct, h_seq[c], h_kind[c], h_a[c], h_b[c]
        i = c
    if size > 0:
        h_time[i], h_seq[i], h_kind[i], h_a[i], h_b[i] = time, seq, kind, a, b
    return size


def _pipe_run(leaf: int, h: float, s: float, prog_ptr: np.ndarray, st_pipe: np.ndarray, st_kind: np.ndarray,
              st_occ_miss: np.ndarray, st_occ_hit: np.ndarray, st_lat_miss: np.ndarray, st_lat_hit: np.ndarray,
              st_gm: np.ndarray, st_flag: np.ndarray, nflags: int, npipes: int) -> float:  # pragma: no cover
    """`CoreModel.simulate`'s duration (the same steps, in the same order)."""
    free = np.zeros(npipes)
    done = np.zeros(npipes)
    flags = np.zeros(max(1, nflags))
    miss = 1.0 - h
    for k in range(prog_ptr[leaf], prog_ptr[leaf + 1]):
        p = st_pipe[k]
        kind = st_kind[k]
        if kind == _SET:
            t = (free[p] if free[p] >= done[p] else done[p]) + st_occ_miss[k]
            free[p] = t
            flags[st_flag[k]] = t
            continue
        if kind == _WAIT:
            f = flags[st_flag[k]]
            free[p] = (free[p] if free[p] >= f else f) + st_occ_miss[k]
            continue
        g = st_gm[k]
        if g == 1:
            occ = h * st_occ_hit[k] + miss * st_occ_miss[k] * s
            lat = h * st_lat_hit[k] + miss * st_lat_miss[k]
        elif g == 2:
            occ, lat = st_occ_miss[k] * s, st_lat_miss[k]
        else:
            occ, lat = st_occ_miss[k], st_lat_miss[k]
        start = free[p]
        end = start + occ
        free[p] = end
        if end + lat > done[p]:
            done[p] = end + lat
    duration = 1.0
    mf = free[0]
    md = done[0]
    for p in range(1, npipes):
        if free[p] > mf:
            mf = free[p]
        if done[p] > md:
            md = done[p]
    # max(max(free), max(done), 1.0): the first of equal values, as Python's max
    duration = mf
    if md > duration:
        duration = md
    if 1.0 > duration:
        duration = 1.0
    return duration


def run_events(  # noqa: PLR0913, PLR0915 - one loop on purpose: a call per task costs more than the model
        leaf_of: np.ndarray, core_of: np.ndarray, indeg: np.ndarray, succ_ptr: np.ndarray, succ_idx: np.ndarray,
        rd_ptr: np.ndarray, rd_reg: np.ndarray, wr_ptr: np.ndarray, wr_reg: np.ndarray, reg_nbytes: np.ndarray,
        device: np.ndarray, stitched: np.ndarray, lane_core: np.ndarray, clusters: np.ndarray, hbm_of: np.ndarray,
        prog_ptr: np.ndarray, st_pipe: np.ndarray, st_kind: np.ndarray, st_occ_miss: np.ndarray,
        st_occ_hit: np.ndarray, st_lat_miss: np.ndarray, st_lat_hit: np.ndarray, st_gm: np.ndarray,
        st_flag: np.ndarray, nflags: int, npipes: int,
        threads: int, dispatch_cost: float, complete_cost: float, launch_cost: float, affinity: bool,
        l2_capacity: int, width: float, capacity: float, log102: float, s_table: np.ndarray, dense_sq: int,
        start: np.ndarray, end: np.ndarray, ready_at: np.ndarray, ready_order: np.ndarray, lane_of: np.ndarray,
        held: np.ndarray, profile: np.ndarray, launched: np.ndarray, finished: np.ndarray, runs: np.ndarray,
        stats: np.ndarray,
) -> int:  # pragma: no cover - compiled; tests/test_sim_reference.py checks it against the reference
    """`sim._Chip.run`'s loop. Fills start/end/ready_at/lane_of/profile per task, the task ids in
    the order they became ready (`ready_order`: their ready times in order), launched/finished
    per device task, `runs` (leaf, hq, sq, cycles) per distinct pipe run in first-use order (its
    row is the task's profile index; at least as many rows as tasks) and `stats` (l2 hit bytes,
    l2 miss bytes, last end, l2 used); returns the number of distinct runs, or -1 when tasks were never dispatched.
    `s_table[k]` is `1.02 ** k` as Python computes it (the quantized HBM slowdown); runs with a
    slowdown step under `dense_sq` are found in a table, the others in a dict. A MIX task (core 2) takes the
    first cluster (`clusters`: rows of its AIC lane and two AIV lanes) whose three lanes are idle, before
    single-core tasks are offered the lanes; `held` gets the AIV lanes it held (-1: none)."""
    n = leaf_of.shape[0]
    nlanes = lane_core.shape[0]
    ndev = stitched.shape[0]
    indeg = indeg.copy()
    # device tasks
    left_in_device = np.zeros(ndev, dtype=np.int64)
    for t in range(n):
        left_in_device[device[t]] += 1
    parked_head = np.full(ndev, -1, dtype=np.int64)  # parked tasks: a linked list per device task, in order
    parked_tail = np.full(ndev, -1, dtype=np.int64)
    parked_next = np.full(n, -1, dtype=np.int64)
    released = np.zeros(ndev, dtype=np.bool_)
    # ready queues (each task enters its core type's once) and L2-affinity queues (linked per lane)
    rq = np.empty((3, n + 1), dtype=np.int64)  # AIC, AIV, MIX
    rq_head = np.zeros(3, dtype=np.int64)
    rq_tail = np.zeros(3, dtype=np.int64)
    first_c = 0  # the ready queues offered the lanes: MIX (2) first when the graph has MIX tasks
    for t in range(n):
        if core_of[t] == 2:
            first_c = -1
            break
    aff_head = np.full(nlanes, -1, dtype=np.int64)
    aff_tail = np.full(nlanes, -1, dtype=np.int64)
    aff_next = np.full(n, -1, dtype=np.int64)
    taken = np.zeros(n, dtype=np.bool_)
    idle = np.zeros(nlanes, dtype=np.bool_)
    idle_count = np.zeros(2, dtype=np.int64)
    for i in range(nlanes):
        c = lane_core[i]
        if c >= 0:
            idle[i] = True
            idle_count[c] += 1
    thread_free = np.zeros(threads)
    # L2: an LRU over region ids (a doubly linked list, oldest at the head)
    nreg = reg_nbytes.shape[0]
    in_l2 = np.zeros(nreg, dtype=np.bool_)
    l2_prev = np.full(nreg, -1, dtype=np.int64)
    l2_next = np.full(nreg, -1, dtype=np.int64)
    l2_head = -1
    l2_tail = -1
    l2_used = 0
    l2_hits = 0
    l2_misses = 0
    ledger = np.zeros(1024)
    ledger_len = 0
    # pipe runs: their row by (leaf * 11 + hq, sq), in a table for small sq, else a dict
    run_row = np.full((hbm_of.shape[0] * 11, dense_sq), -1, dtype=np.int32)
    run_of = Dict.empty(key_type=_I64, value_type=_I64)
    nruns = 0
    # events
    cap = 2 * n + ndev + 2
    h_time = np.empty(cap)
    h_seq = np.empty(cap, dtype=np.int64)
    h_kind = np.empty(cap, dtype=np.int64)
    h_a = np.empty(cap, dtype=np.int64)
    h_b = np.empty(cap, dtype=np.int64)
    size = 0
    seq = 0
    if ndev:
        size = _heap_push(h_time, h_seq, h_kind, h_a, h_b, size, stitched[0] + launch_cost, seq, _RELEASE, 0, 0)
        seq += 1
    for t in range(n):
        if indeg[t] == 0:
            d = device[t]
            if parked_tail[d] < 0:
                parked_head[d] = t
            else:
                parked_next[parked_tail[d]] = t
            parked_tail[d] = t
    last_end = 0.0
    dispatched = 0
    nready = 0
    while size:
        now, kind, a, b = h_time[0], h_kind[0], h_a[0], h_b[0]
        size = _heap_pop(h_time, h_seq, h_kind, h_a, h_b, size)
        if kind == _RELEASE:
            released[a] = True
            launched[a] = now - launch_cost
            tid = parked_head[a]
            while tid >= 0:
                ready_at[tid] = now
                ready_order[nready] = tid
                nready += 1
                c = core_of[tid]
                rq[c, rq_tail[c]] = tid
                rq_tail[c] += 1
                tid = parked_next[tid]
            parked_head[a] = -1
            parked_tail[a] = -1
        elif kind == _END:
            th = b % threads
            tf = thread_free[th]
            t0 = (now if now > tf else tf) + complete_cost
            thread_free[th] = t0
            size = _heap_push(h_time, h_seq, h_kind, h_a, h_b, size, t0, seq, _RESOLVED, a, b)
            seq += 1
            if now > last_end:
                last_end = now
            d = device[a]
            if now > finished[d]:
                finished[d] = now
            continue
        else:  # _RESOLVED
            idle[b] = True
            idle_count[lane_core[b]] += 1
            if held[a, 0] >= 0:  # a MIX task: its cluster's AIV lanes are free too
                idle[held[a, 0]] = True
                idle[held[a, 1]] = True
                idle_count[1] += 2
            for k in range(succ_ptr[a], succ_ptr[a + 1]):
                sc = succ_idx[k]
                indeg[sc] -= 1
                if indeg[sc] == 0:
                    d = device[sc]
                    if not released[d]:
                        if parked_tail[d] < 0:
                            parked_head[d] = sc
                        else:
                            parked_next[parked_tail[d]] = sc
                        parked_tail[d] = sc
                        continue
                    ready_at[sc] = now
                    ready_order[nready] = sc
                    nready += 1
                    c = core_of[sc]
                    rq[c, rq_tail[c]] = sc
                    rq_tail[c] += 1
                    if affinity and c != 2:
                        if aff_tail[b] < 0:
                            aff_head[b] = sc
                        else:
                            aff_next[aff_tail[b]] = sc
                        aff_tail[b] = sc
            d = device[a]
            left_in_device[d] -= 1
            if left_in_device[d] == 0 and d + 1 < ndev:
                st = stitched[d + 1]
                size = _heap_push(h_time, h_seq, h_kind, h_a, h_b, size, (st if st > now else now) + launch_cost,
                                  seq, _RELEASE, d + 1, 0)
                seq += 1
        # dispatch: MIX tasks first, each on the lowest cluster whose three lanes are idle; then each idle
        # lane, lowest first, takes a ready task of its core type
        for ci in range(first_c, 2):
            c = 2 if ci < 0 else ci
            while idle_count[0 if c == 2 else c] > 0:
                if c == 2:
                    if rq_head[2] == rq_tail[2]:
                        break
                    cl = -1
                    for j in range(clusters.shape[0]):
                        if idle[clusters[j, 0]] and idle[clusters[j, 1]] and idle[clusters[j, 2]]:
                            cl = j
                            break
                    if cl < 0:
                        break
                    lane = clusters[cl, 0]
                    idle[lane] = False
                    idle[clusters[cl, 1]] = False
                    idle[clusters[cl, 2]] = False
                    idle_count[0] -= 1
                    idle_count[1] -= 2
                    tid = rq[2, rq_head[2]]
                    rq_head[2] += 1
                    held[tid, 0] = clusters[cl, 1]
                    held[tid, 1] = clusters[cl, 2]
                    taken[tid] = True
                    dispatched += 1
                else:
                    if affinity:
                        while rq_head[c] < rq_tail[c] and taken[rq[c, rq_head[c]]]:
                            rq_head[c] += 1
                        if rq_head[c] == rq_tail[c]:
                            break
                    else:
                        if rq_head[c] == rq_tail[c]:
                            break
                    lane = 0
                    while not (idle[lane] and lane_core[lane] == c):
                        lane += 1
                    idle[lane] = False
                    idle_count[c] -= 1
                    if affinity:
                        tid = -1
                        while aff_head[lane] >= 0:
                            tid = aff_head[lane]
                            aff_head[lane] = aff_next[tid]
                            if aff_head[lane] < 0:
                                aff_tail[lane] = -1
                            if not taken[tid]:
                                break
                            tid = -1
                        if tid < 0:
                            while rq_head[c] < rq_tail[c]:
                                tid = rq[c, rq_head[c]]
                                rq_head[c] += 1
                                if not taken[tid]:
                                    break
                    else:
                        tid = rq[c, rq_head[c]]
                        rq_head[c] += 1
                    taken[tid] = True
                    dispatched += 1
                th = lane % threads
                tf = thread_free[th]
                t0 = (now if now > tf else tf) + dispatch_cost
                thread_free[th] = t0
                # -- the cost of task `tid` starting at t0: L2
                hit = 0
                miss = 0
                for k in range(rd_ptr[tid], rd_ptr[tid + 1]):
                    r = rd_reg[k]
                    nb = reg_nbytes[r]
                    if in_l2[r]:
                        if r != l2_tail:  # move to the end
                            pr, nx = l2_prev[r], l2_next[r]
                            if pr >= 0:
                                l2_next[pr] = nx
                            else:
                                l2_head = nx
                            l2_prev[nx] = pr
                            l2_prev[r] = l2_tail
                            l2_next[r] = -1
                            l2_next[l2_tail] = r
                            l2_tail = r
                        hit += nb
                    else:
                        in_l2[r] = True
                        l2_prev[r] = l2_tail
                        l2_next[r] = -1
                        if l2_tail >= 0:
                            l2_next[l2_tail] = r
                        else:
                            l2_head = r
                        l2_tail = r
                        l2_used += nb
                        while l2_used > l2_capacity and l2_head >= 0:
                            old = l2_head
                            l2_head = l2_next[old]
                            if l2_head >= 0:
                                l2_prev[l2_head] = -1
                            else:
                                l2_tail = -1
                            in_l2[old] = False
                            l2_used -= reg_nbytes[old]
                        miss += nb
                for k in range(wr_ptr[tid], wr_ptr[tid + 1]):
                    r = wr_reg[k]
                    if in_l2[r]:
                        if r != l2_tail:
                            pr, nx = l2_prev[r], l2_next[r]
                            if pr >= 0:
                                l2_next[pr] = nx
                            else:
                                l2_head = nx
                            l2_prev[nx] = pr
                            l2_prev[r] = l2_tail
                            l2_next[r] = -1
                            l2_next[l2_tail] = r
                            l2_tail = r
                    else:
                        nb = reg_nbytes[r]
                        in_l2[r] = True
                        l2_prev[r] = l2_tail
                        l2_next[r] = -1
                        if l2_tail >= 0:
                            l2_next[l2_tail] = r
                        else:
                            l2_head = r
                        l2_tail = r
                        l2_used += nb
                        while l2_used > l2_capacity and l2_head >= 0:
                            old = l2_head
                            l2_head = l2_next[old]
                            if l2_head >= 0:
                                l2_prev[l2_head] = -1
                            else:
                                l2_tail = -1
                            in_l2[old] = False
                            l2_used -= reg_nbytes[old]
                l2_hits += hit
                l2_misses += miss
                leaf = leaf_of[tid]
                h = hit / (hit + miss) if hit + miss else 0.0
                rc, rb, wc, wb = hbm_of[leaf, 0], hbm_of[leaf, 1], hbm_of[leaf, 2], hbm_of[leaf, 3]
                cycles = rc * (1 - h) + wc
                if cycles <= 0:
                    s = 1.0
                else:  # reserve the HBM bytes in the chip-wide ledger from t0
                    nbytes = rb * (1 - h) + wb
                    rate = nbytes / cycles
                    tt, left = t0, nbytes
                    while True:
                        kb = int(tt // width)
                        if ledger_len <= kb:
                            if ledger.shape[0] <= kb:
                                grown = np.zeros(max(2 * ledger.shape[0], kb + 1))
                                grown[:ledger_len] = ledger[:ledger_len]
                                ledger = grown
                            ledger_len = kb + 1
                        span = (kb + 1) * width - tt
                        room = capacity - ledger[kb]
                        stream = rate * span
                        if stream < room:
                            room = stream
                        if room >= left:
                            ledger[kb] += left
                            took = tt + left * span / room - t0
                            s = (took if took > cycles else cycles) / cycles
                            break
                        if room > 0:
                            ledger[kb] += room
                            left -= room
                        tt = (kb + 1) * width
                hq = round(h * 10) if hit else 0
                sq = round(math.log(s if s > 1.0 else 1.0) / log102) if s != 1.0 else 0
                row = -1
                if sq < dense_sq:
                    row = run_row[leaf * 11 + hq, sq]
                else:
                    key = (leaf * 11 + hq) * 1048576 + sq
                    if key in run_of:
                        row = run_of[key]
                if row < 0:
                    row = nruns
                    if sq < dense_sq:
                        run_row[leaf * 11 + hq, sq] = row
                    else:
                        run_of[(leaf * 11 + hq) * 1048576 + sq] = row
                    slow = s_table[sq] if sq < s_table.shape[0] else math.pow(1.02, sq)
                    dur = _pipe_run(leaf, hq / 10, slow, prog_ptr, st_pipe, st_kind, st_occ_miss,
                                    st_occ_hit, st_lat_miss, st_lat_hit, st_gm, st_flag, nflags, npipes)
                    runs[row, 0], runs[row, 1], runs[row, 2], runs[row, 3] = leaf, hq, sq, dur
                    nruns += 1
                dur = runs[row, 3]
                start[tid] = t0
                end[tid] = t0 + dur
                lane_of[tid] = lane
                profile[tid] = row
                size = _heap_push(h_time, h_seq, h_kind, h_a, h_b, size, t0 + dur, seq, _END, tid, lane)
                seq += 1
    stats[0], stats[1], stats[2], stats[3] = l2_hits, l2_misses, last_end, l2_used
    if dispatched < n:
        return -1
    return nruns


def ready_level(ready: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Tasks ready and not started over time, from their ready and start times each in ascending
    order: one point per distinct time, the level after all its events (+1 per ready, -1 per
    start), as `sim._ready_counters` sorts and sums them."""
    nr, ns = ready.shape[0], start.shape[0]
    times = np.empty(nr + ns)
    level = np.empty(nr + ns)
    i = j = k = 0
    cur = 0
    while i < nr or j < ns:
        if j >= ns or (i < nr and ready[i] <= start[j]):
            t = ready[i]
        else:
            t = start[j]
        while i < nr and ready[i] == t:
            cur += 1
            i += 1
        while j < ns and start[j] == t:
            cur -= 1
            j += 1
        times[k] = t
        level[k] = cur
        k += 1
    return times[:k], level[:k]



# ---- swimlane metrics on columns (`swimlane.metrics` of a TaskColumns swimlane, the same floats)

def waiting_intervals(times: np.ndarray,
                      step: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """`swimlane._waiting_intervals` from its events sorted by (time, step): the disjoint intervals
    when the level is above zero and the running sum of their lengths."""
    m = times.shape[0]
    starts = np.empty(m)
    ends = np.empty(m)
    ns = ne = 0
    level = 0
    for k in range(m):
        if level == 0 and step[k] > 0:
            starts[ns] = times[k]
            ns += 1
        level += step[k]
        if level == 0:
            ends[ne] = times[k]
            ne += 1
    cum = np.empty(min(ns, ne) + 1)
    cum[0] = 0.0
    for k in range(min(ns, ne)):
        cum[k + 1] = cum[k] + ends[k] - starts[k]
    return starts[:ns], ends[:ne], cum


def _covered(starts: np.ndarray, ends: np.ndarray, cum: np.ndarray, x: float) -> float:  # pragma: no cover
    k = np.searchsorted(starts, x, side="right")
    if k == 0:
        return 0.0
    e = ends[k - 1]
    return cum[k - 1] + (x if x < e else e) - starts[k - 1]


def lane_waits(order: np.ndarray, lane_ptr: np.ndarray, lanes: np.ndarray, lane_core: np.ndarray,
               start: np.ndarray, end: np.ndarray, t0: float, t1: float, w_starts: np.ndarray, w_ends: np.ndarray,
               w_cum: np.ndarray, w_ptr: np.ndarray) -> tuple[float, float]:  # pragma: no cover
    """`swimlane.metrics`' idle time split (wait_dep, wait_sched): for each lane in `lanes` (in
    order), its tasks `order[lane_ptr[l]:lane_ptr[l + 1]]` by start, against its core type's
    waiting intervals (`w_*[w_ptr[c]:w_ptr[c + 1]]`, cum with one more entry per core)."""
    wait_dep = 0.0
    wait_sched = 0.0
    for li in range(lanes.shape[0]):
        i = lanes[li]
        c = lane_core[i]
        s = w_starts[w_ptr[c]:w_ptr[c + 1]]
        e = w_ends[w_ptr[c]:w_ptr[c + 1]]
        cum = w_cum[w_ptr[c] + c:w_ptr[c + 1] + c + 1]
        cursor = t0
        for k in range(lane_ptr[i], lane_ptr[i + 1] + 1):
            last = k == lane_ptr[i + 1]
            a = cursor
            b = t1 if last else start[order[k]]
            if b > a:
                sched = _covered(s, e, cum, b) - _covered(s, e, cum, a)
                wait_sched += sched
                wait_dep += (b - a) - sched
            if not last:
                en = end[order[k]]
                if en > cursor:
                    cursor = en
    return wait_dep, wait_sched


def critical_path(order: np.ndarray, start: np.ndarray, end: np.ndarray, pred_ptr: np.ndarray,
                  pred_idx: np.ndarray) -> tuple[np.ndarray, float, int]:  # pragma: no cover
    """`swimlane.longest_chain` without placeholders, tasks visited in `order` (by start, end, id):
    the longest chain of durations (task ids, first to last), its length, and how many arrows it
    could not follow (a predecessor not visited before its task: back in time, itself, no task)."""
    n = start.shape[0]
    best = np.zeros(n)
    has = np.zeros(n, dtype=np.bool_)
    back = np.full(n, -1, dtype=np.int64)
    ignored = 0
    for k in range(n):
        t = order[k]
        top = 0.0
        arg = -1
        for q in range(pred_ptr[t], pred_ptr[t + 1]):
            p = pred_idx[q]
            if p < 0 or p >= n or not has[p]:
                ignored += 1
                continue
            v = best[p]
            if v > top:
                top = v
                arg = p
        best[t] = top + (end[t] - start[t])
        has[t] = True
        back[t] = arg
    last = 0
    for t in range(1, n):
        if best[t] > best[last]:
            last = t
    length = 1
    t = last
    while back[t] >= 0:
        t = back[t]
        length += 1
    path = np.empty(length, dtype=np.int64)
    t = last
    for k in range(length - 1, -1, -1):
        path[k] = t
        t = back[t]
    return path, best[last], ignored
