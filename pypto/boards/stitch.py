"""Which root-function instances the runtime stitches into each device task: the sim board's model of
`stitch_function_max_num`, `max_workspace_kb` and `pypto.loop(..., unroll_list=[...])`.

PyPTO's machine runtime runs a kernel as device tasks, one after another, each a stitch of root
functions (the kernel body, or one iteration of a `pypto.loop`); the sim board models the stitching and
launch costs (`pypto.boards.sim`). This module decides what goes into each device task, in instance order:

- **Root functions.** A loop with `unroll_list` runs its body `n` times in one root function (PyPTO's
  "step becomes step * n"): the consecutive iterations of one run of that loop (the same indices of the
  loops around it) are grouped largest factor first, each factor over what the larger ones left, as
  `pypto.loop_unroll` splits its range. Only the grouping is modelled: the tasks are partition's, so a
  fusion PyPTO makes across the `n` bodies is not.
- **Count mode** (`max_workspace_kb` 0, PyPTO's default): `stitch_function_max_num` root functions to
  a device task.
- **Memory-driven mode** (`max_workspace_kb` above the largest root function's workspace): PyPTO derives
  the stitch depth from the workspace budget and `stitch_function_max_num` no longer bounds it, so a
  device task takes consecutive root functions while their workspace sums to at most `max_workspace_kb`.
  A root function's workspace here is the peak of its live workspace and local buffers, its tasks in
  id order (`root_workspace`; PyPTO's own allocator orders and packs them its own way). A budget at or below the largest
  root function's workspace is one PyPTO refuses (its message: the value must exceed that minimum): count
  mode, and the run's info says why (`stitch_note`).

Not modelled: `device_sched_parallelism` (a `parallel=True` loop's iterations scheduled at once; inside a device
task the graph's own arrows decide what overlaps), and the first device task PyPTO's case study of gated delta
rule says `stitch_function_max_num` still sizes in memory-driven mode (to start the device early).

The run's info carries the mode (`stitch_mode`), the root functions (`root_functions`) and, when the
kernel set a budget, the largest root function's workspace (`root_workspace_kb`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_STITCH = 1024  # PyPTO's largest stitch_function_max_num


@dataclass(frozen=True)
class Stitching:
    """Per instance rank (the graph's instances in id order): its root function and its device task's
    window (`sim.device_tasks` then moves a task that waits on a later window into that one)."""

    root_function: np.ndarray
    window: np.ndarray
    stitch_max: int
    info: dict[str, Any] = field(default_factory=dict)


def unroll_factors(program: Any) -> dict[int, tuple[int, ...]]:
    """Each loop node with an `unroll_list`: its factors, largest first, 1 always among them."""
    out: dict[int, tuple[int, ...]] = {}
    for node in program.graph.walk():
        factors = node.attrs.get("unroll_list") if node.op == "loop" else None
        if factors:
            out[node.id] = tuple(sorted({int(f) for f in factors if int(f) > 0} | {1}, reverse=True))
    return out


def _chunks(n: int, factors: Sequence[int]) -> list[int]:
    """The sizes of the root functions `n` iterations make, largest factor first (`pypto.loop_unroll`'s rule:
    each factor's remainder is of the whole range)."""
    out: list[int] = []
    lo = 0
    for f in factors:  # (the last is 1: every iteration is covered)
        end = max(lo, n - n % f)
        while lo < end:
            out.append(min(f, end - lo))
            lo += out[-1]
    return out


def root_functions(instances: Sequence[Any], factors: dict[int, tuple[int, ...]]) -> np.ndarray:
    """Per instance (in order), the number of its root function: an instance of an unrolled loop shares one with
    the iterations it is unrolled with (consecutive, of one run of the loop), any other instance is its own."""
    out = np.empty(len(instances), dtype=np.int64)
    k = 0
    i = 0
    while i < len(instances):
        inst = instances[i]
        f = factors.get(inst.root)
        if not f:
            out[i] = k
            k, i = k + 1, i + 1
            continue
        j = i + 1  # the run of this loop: the same loop, the same outer indices
        while j < len(instances) and instances[j].root == inst.root and instances[j].index[:-1] == inst.index[:-1]:
            j += 1
        for size in _chunks(j - i, f):
            out[i:i + size] = k
            k, i = k + 1, i + size
    return out


def _accesses(exe: Any, ranks: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every GM access of the execute graph's tasks: (task id, its instance rank, buffer, whether a write)."""
    ec = exe.columns
    if ec is not None and len(ec.leaf) == len(exe.tasks):
        n = len(ec.leaf)
        task_rank = np.searchsorted(np.asarray(ranks, dtype=np.int64), ec.instance)
        ids = np.arange(n)
        task = np.concatenate([np.repeat(ids, np.diff(ec.rd_ptr)), np.repeat(ids, np.diff(ec.wr_ptr))])
        buffer = ec.reg_buffer[np.concatenate([ec.rd_reg, ec.wr_reg])]
        write = np.concatenate([np.zeros(len(ec.rd_reg), dtype=bool), np.ones(len(ec.wr_reg), dtype=bool)])
        return task, task_rank[task], buffer, write
    rank_of = {inst: r for r, inst in enumerate(ranks)}
    rows = [(t.id, rank_of[t.instance], r.buffer, w) for t in exe.tasks
            for w, regions in ((False, t.reads), (True, t.writes)) for r in regions]
    cols = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return (np.array(cols[0], dtype=np.int64), np.array(cols[1], dtype=np.int64), np.array(cols[2], dtype=np.int64),
            np.array(cols[3], dtype=bool))


def _workspace_bytes(buffers: Sequence[Any]) -> np.ndarray:
    """Each buffer's bytes when it is a workspace or a local (else 0), each dtype's size asked once."""
    size: dict[int, int] = {}
    out = [0] * len(buffers)
    for i, b in enumerate(buffers):
        if b.kind == "workspace" or b.kind == "local":
            d = b.dtype
            nb = size.get(id(d))
            if nb is None:
                nb = size[id(d)] = d.nbytes
            out[i] = math.prod(b.shape) * nb
    return np.array(out, dtype=np.int64)


def root_workspace(program: Any, ranks: Sequence[int], root: np.ndarray) -> np.ndarray:
    """Bytes of workspace each root function needs (`root`: the root function of each instance rank of `ranks`, the
    instances the tasks run, in order): the peak, over its tasks in id order, of the workspace and local buffers
    it owns that are live — owned by the root function of the lowest instance writing the buffer, live from its
    first write there to its last access there, or to the root function's end when a later one reads it."""
    tiles, exe = program.tiles, program.execute
    nbytes = _workspace_bytes(tiles.buffers)
    task, rank, buffer, write = _accesses(exe, ranks)
    big = np.iinfo(np.int64).max
    owner = np.full(len(nbytes), big, dtype=np.int64)  # each buffer's first writing instance rank
    np.minimum.at(owner, buffer[write], rank[write])
    at_owner = rank == owner[buffer]
    first = np.full(len(nbytes), big, dtype=np.int64)  # its first write there, its last access there
    np.minimum.at(first, buffer[write & at_owner], task[write & at_owner])
    last = np.full(len(nbytes), -1, dtype=np.int64)
    np.maximum.at(last, buffer[at_owner], task[at_owner])
    later = np.zeros(len(nbytes), dtype=bool)  # read by a later instance: live to its root function's end
    later[buffer[rank > owner[buffer]]] = True
    used = np.flatnonzero((owner < big) & (nbytes > 0))
    n_roots = int(root.max()) + 1 if len(root) else 0
    if not len(used):
        return np.zeros(n_roots, dtype=np.int64)
    # allocations at 2 * first write, frees at 2 * last access + 1 (after it) or at the end: per root function,
    # the running sum's peak (each root function's events sum to zero, so the running sum starts each at zero)
    where = root[owner[used]]
    time = np.concatenate([2 * first[used], np.where(later[used], big, 2 * last[used] + 1)])
    amount = np.concatenate([nbytes[used], -nbytes[used]])
    group = np.concatenate([where, where])
    order = np.lexsort((time, group))
    running = np.cumsum(amount[order])
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    peak = np.zeros(n_roots, dtype=np.int64)
    peak[group[order][starts]] = np.maximum.reduceat(running, starts)
    return peak


def task_instances(exe: Any) -> list[int]:
    """The instances the execute graph's tasks run, in id order (the sim board's instance ranks)."""
    ec = exe.columns
    if ec is not None and len(ec.leaf) == len(exe.tasks):
        return np.unique(ec.instance).tolist()  # type: ignore[no-any-return]
    return sorted({t.instance for t in exe.tasks})


def plan(program: Any, options: dict[str, Any]) -> Stitching:
    """The stitching of `program`'s execute graph under the runtime options (module doc)."""
    instances_of = {inst.id: inst for inst in program.tiles.instances}
    ranks = task_instances(program.execute)
    instances = [instances_of[i] for i in ranks]
    factors = unroll_factors(program)
    root = root_functions(instances, factors)
    n_roots = int(root.max()) + 1 if len(root) else 0
    stitch_max = max(1, int(options.get("stitch_function_max_num", 128)))
    budget_kb = int(options.get("max_workspace_kb", 0) or 0)
    info: dict[str, Any] = {"stitch_mode": "count", "root_functions": n_roots}
    window = root // stitch_max
    if budget_kb > 0 and n_roots:
        per_root = root_workspace(program, ranks, root)
        largest = float(per_root.max())
        info["max_workspace_kb"] = budget_kb
        info["root_workspace_kb"] = math.ceil(largest / 1024)
        if budget_kb * 1024 > largest:
            info["stitch_mode"] = "memory"
            window = root_windows_by_bytes(per_root, budget_kb * 1024)[root]
        else:
            info["stitch_note"] = (f"max_workspace_kb {budget_kb} is not above the largest root function's workspace "
                                   f"({info['root_workspace_kb']} KB): stitched by stitch_function_max_num")
    return Stitching(root, window.astype(np.int64), stitch_max, info)


def root_windows_by_bytes(per_root: np.ndarray, budget: float) -> np.ndarray:
    """Per root function, its device task: consecutive root functions while their bytes sum to at most `budget`
    (one that alone reaches it still gets a device task of its own)."""
    out = np.empty(len(per_root), dtype=np.int64)
    window, used = 0, 0.0
    for r, b in enumerate(per_root.tolist()):
        if used and used + b > budget:
            window, used = window + 1, 0.0
        out[r] = window
        used += b
    return out
