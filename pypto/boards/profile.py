"""Running a lowered program on a board, and what a swimlane says about it.

`run_board(program, board)` runs it on the `sim` board (the model of the A2/A3 chip; times
simulated) or the `cpu` board (this machine's cores; times measured). `bottleneck(swimlane)`
names what bounds the run. `write_run_files` is `runtime_debug_mode`'s swimlane files.
A CompileRecord with its run is `pypto.record.profile`, one layer up.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pypto.boards.sim import simulate
from pypto.boards.swimlane import Swimlane, TaskColumns, lanes_ran, metrics
from pypto.boards.trace import write_trace

BOARDS = ("sim", "cpu")
_PIPE_BOUND = {"MTE2": "memory", "MTE3": "memory", "FIX": "memory", "V": "vector", "M": "cube", "MTE1": "cube"}
# A critical path under this share of the makespan is not what keeps lanes waiting (`bottleneck`)
SHORT_CHAIN = 0.1
# A run is bound by a pipe only when that pipe fills most of the task time; below this share the busiest
# pipe mostly waits too (for GM latency, for flags from the other pipes): the run is latency-bound, and a
# label naming the pipe would send the user to make the wrong work cheaper (softmax at (1, 4, 1, 64): V
# busiest at 30 % of task time, each task 5.6x its V cycles).
PIPE_BOUND_SHARE = 0.5


def run_board(program: Any, board: str = "sim", inputs: Mapping[str, np.ndarray] | None = None,
              runtime_options: Mapping[str, Any] | None = None, workers: int | None = None,
              board_file: str = "a2a3") -> tuple[dict[str, np.ndarray] | None, Swimlane]:
    """(outputs, swimlane) of a lowered program on `board`; `sim` computes no values (the
    functional executor does), `cpu` needs the inputs and returns the outputs it computed."""
    if board == "sim":
        return None, simulate(program, board_file, runtime_options)
    if board == "cpu":
        from pypto.boards.cpu import run_cpu  # start-up time: the cpu board (threads, BLAS) loads when asked

        if inputs is None:
            raise ValueError("the cpu board runs the kernel: it needs its inputs")
        return run_cpu(program, inputs, workers)
    raise ValueError(f"unknown board {board!r}; one of {', '.join(BOARDS)}")


def pipe_busy(sl: Swimlane) -> dict[str, float]:
    """µs each pipe was busy, summed over the sim board's tasks (empty for other boards): per profile,
    its tasks' total time times the share of it each pipe is busy (from the columns when the board gave
    them: no object per task)."""
    tasks = sl.tasks
    n = len(sl.pipe_profiles)
    if isinstance(tasks, TaskColumns):
        _, start, end, _, _ = tasks.columns()
        profile = tasks.profile_column()
        ran = profile >= 0
        total = np.bincount(profile[ran], weights=(end - start)[ran], minlength=n).tolist()
        used = np.bincount(profile[ran], minlength=n).tolist()
    else:
        total, used = [0.0] * n, [0] * n
        for t in tasks:
            if t.profile >= 0:
                total[t.profile] += t.duration
                used[t.profile] += 1
    out: dict[str, float] = {}
    for k, prof in enumerate(sl.pipe_profiles):
        if used[k]:
            for pipe, spans in prof.items():
                out[pipe] = out.get(pipe, 0.0) + sum(b - a for a, b in spans) * total[k]
    return out


def bottleneck(sl: Swimlane) -> tuple[str, str]:
    """(bound, why): what limits the run — scheduling (lanes waited with tasks ready longer than with none, or at
    least half as long while the critical path is under `SHORT_CHAIN` of the makespan), dependency, latency, memory,
    vector or cube
    (the last four from the sim board's pipes: a pipe bounds the run when it is busy at least
    `PIPE_BOUND_SHARE` of the task time, else the pipes wait on each other: latency; "compute" on
    boards without pipes)."""
    m = metrics(sl)
    if not sl.tasks or m.makespan <= 0:
        return "none", "no tasks ran"
    lanes_used = lanes_ran(sl)
    idle = m.makespan * len(lanes_used) - m.busy
    # a critical path this short cannot explain lanes waiting with nothing ready: the producers they wait for were
    # held back, and when the scheduler held ready tasks for half as long it is what bounds the run (Kimi's block
    # attention: AIV lanes idle behind AIC tasks that the AICPU dispatches no faster than they run; its critical
    # path 0.4 % of the makespan, "dependency"-bound before)
    held = m.critical_share < SHORT_CHAIN and 2 * m.wait_scheduler >= m.wait_dependency
    if idle > m.busy and (m.wait_scheduler > m.wait_dependency or held):
        return "scheduling", (f"lanes waited {m.wait_scheduler:,.1f} µs with ready tasks (scheduler) against "
                              f"{m.busy:,.1f} µs of work: tasks are too small or too many")
    if m.critical_share > 0.8 and len(m.critical_path) > 1:
        return "dependency", (f"the critical path is {m.critical_share:.0%} of the makespan: "
                              f"the tasks wait on each other")
    if idle > m.busy:
        devices = int(sl.info.get("device_tasks", 0) or 0)
        also = f" or for their device task ({devices} ran one after another)" if devices > 1 else ""
        return "dependency", (f"lanes idle {idle / (idle + m.busy):.0%} of the time waiting for predecessors{also}; "
                              f"only {m.utilization:.0%} utilized")
    busy = pipe_busy(sl)
    if not busy:
        return "compute", f"lanes {m.utilization:.0%} utilized"
    pipe = max(busy, key=lambda p: busy[p])
    share = busy[pipe] / m.busy
    if share < PIPE_BOUND_SHARE:
        return "latency", (f"no pipe is busy most of the task time (the busiest, {pipe}, {share:.0%}): the pipes "
                           f"wait on each other inside each task (GM latency, flags)")
    return _PIPE_BOUND.get(pipe, "compute"), f"the {pipe} pipe is busiest ({share:.0%} of task time)"


def write_run_files(program: Any, directory: Path, runtime_options: Mapping[str, Any] | None = None) \
        -> tuple[Swimlane, list[Path]]:
    """Simulate `program` and write the swimlane files PyPTO's `runtime_debug_mode=1` writes:
    `merged_swimlane.json`, plus `trace.json` (Chrome trace) and `swimlane.json` (ours)."""
    sl = simulate(program, "a2a3", runtime_options)
    directory.mkdir(parents=True, exist_ok=True)
    files = [write_trace(sl, directory / "merged_swimlane.json", None, "merged"),
             write_trace(sl, directory / "trace.json", None, "chrome")]
    (directory / "swimlane.json").write_text(json.dumps(sl.to_json()))
    files.append(directory / "swimlane.json")
    return sl, files
