"""The `cpu` board: the execute graph's tasks really run on this machine, and the swimlane is measured.

The sim board says how long a program *would* take on the device; this board runs the same
tasks for real, the way a device runtime does (MPMD: every worker runs whichever task is
ready, each task its own tile ops), so the scheduling, the dependency graph and the task
granularity are exercised on real threads and timed with a real clock:

- one dependency counter per task (its number of `Task.preds`), one ready queue, N worker
  threads (`CPU_0 … CPU_<N-1>`, one lane each; N defaults to `os.cpu_count()`);
- a worker takes a ready task, runs exactly that task's tile ops (its subgraph) against GM
  shared by all workers, stamps start and end, then decrements its successors' counters and
  queues those that reach zero (a task's ready time is its last predecessor's end; the tasks
  without predecessors are ready at 0);
- tasks communicate only through GM and the execute graph orders every conflicting GM
  access, so the values are those of the functional executor bit for bit.

One measured task (one box of the swimlane) is the time its worker spends computing that
task's tile ops and nothing else: no other task's op runs inside it, and the scheduling
(taking the task, releasing its successors) lies outside it. Within the task the tile ops run
as the executor's batched plan of that task alone (`TileExecutor.plan_of`, built once per
program): the task's isomorphic tiles (a task of a leaf holding 8 column tiles of a row block
runs its 8 loads, 8 `exp`s … as one numpy call each, on a view of GM where the tiles lie on a
lattice) — as a device core runs a leaf's tiles back to back, the CPU runs them as one call
rather than paying Python's per-call cost for each. A task whose plan groups nothing (as many
steps as tile ops) runs op by op (`TileExecutor.run_ops`). Either way the values are the
executor's: its batched and op-by-op paths agree bit for bit. A task whose batched run raises a
user error is rerun op by op, so the error reported is the first in the task's program order.

Times are µs of `time.perf_counter` from the start of the run. A task that raises stops the
run: the workers finish what they hold and take nothing new, and the error is re-raised with
the task's id (a `PyptoError` stays one: it is the user's mistake).

Threads and the GIL: numpy releases the GIL inside its kernels, so workers overlap only the
numpy part of their tasks; tasks of small tiles (a few µs per numpy call) gain little from a
second worker, since handing the GIL over costs about as much. Matmul tiles are BLAS calls,
whose result depends on BLAS's thread count (OpenBLAS splits a call differently): the
executor makes every matmul tile's call at one BLAS thread (`pypto.compiler.blas`), and so
does the board — a run with a matmul task holds that scope throughout — so the bytes are the
executor's, and matmul tasks run side by side on the workers, one core each, as a device's
cube cores run their tiles. (Before, BLAS ran each call on every core and the board let one
task at a time call it; on a loaded machine a call's BLAS threads mostly waited for each
other: matmul 2048³ at 256 x 256 tiles took 2.25 s with 1 worker where torch took 0.16 s.) Where
BLAS's thread count cannot be set (not OpenBLAS), one task at a time calls BLAS, as before (a
process-wide lock, taken before the task's start is stamped), so workers do not oversubscribe.
"""

from __future__ import annotations

import contextlib
import os
import platform
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pypto.boards.swimlane import Lane, LaneTask, Swimlane, instance_labels, ready_counters
from pypto.compiler.blas import blas_controlled, one_blas_thread
from pypto.compiler.execute_ir import ExecGraph, Task
from pypto.compiler.manager import Program
from pypto.compiler.tile_exec import GM, TileExecutor
from pypto.compiler.tile_exec import Plan as ExecPlan
from pypto.compiler.tile_ir import TileOp
from pypto.ir.errors import PyptoError
from pypto.reference.kernels import Ctx


class TaskError(RuntimeError):
    """A task raised something other than a user error (a bug, or memory ran out)."""

    def __init__(self, task: int, message: str) -> None:
        super().__init__(message)
        self.task = task


@dataclass(frozen=True)
class _Plan:
    """What every run of one program needs, computed once: each task's tile ops and successors."""

    execute: ExecGraph
    ops: tuple[tuple[TileOp, ...], ...]  # by task id
    succs: tuple[tuple[int, ...], ...]  # by task id
    preds: tuple[int, ...]  # by task id: how many predecessors
    blas: tuple[bool, ...]  # by task id: it calls BLAS (has a matmul tile; the run holds one BLAS thread)
    batched: tuple[ExecPlan | None, ...]  # by task id: its batched plan, None: op by op


_PLANS: weakref.WeakKeyDictionary[TileExecutor, _Plan] = weakref.WeakKeyDictionary()
_PLANS_LOCK = threading.Lock()
_BLAS = threading.Lock()  # without control of BLAS's threads: one task at a time calls it
_BATCH_FROM = 4  # a task runs batched from this many tile ops per distinct one (measured on softmax 4096²:
# at 2 per distinct op, 8 x 2048 tiles, batching tasks made the board 1.5x slower; at 32 x 32 tiles, ~300
# tile ops in a task, it is faster)


def _plan(program: Program, executor: TileExecutor) -> _Plan:
    eg = program.execute
    assert eg is not None and program.subgraphs is not None and program.tiles is not None
    with _PLANS_LOCK:
        plan = _PLANS.get(executor)
        if plan is not None and plan.execute is eg:
            return plan
    if [t.id for t in eg.tasks] != list(range(len(eg.tasks))):
        raise ValueError("the execute graph's task ids are not 0 … n-1 in order")
    by_op = {o.id: o for o in program.tiles.ops}
    by_sg = {sg.id: sg for sg in program.subgraphs}
    if sorted(i for t in eg.tasks for i in by_sg[t.subgraph].ops) != sorted(by_op):
        raise ValueError("the tasks do not run every tile op exactly once")
    succs: list[list[int]] = [[] for _ in eg.tasks]
    for t in eg.tasks:
        for p in t.preds:
            succs[p].append(t.id)
    ops = tuple(tuple(by_op[i] for i in by_sg[t.subgraph].ops) for t in eg.tasks)
    leaves: dict[int, tuple[tuple[TileOp, ...], ExecPlan]] = {}
    plan = _Plan(eg, ops, tuple(tuple(s) for s in succs), tuple(len(t.preds) for t in eg.tasks),
                 tuple(any(o.op == "matmul" for o in task_ops) for task_ops in ops),
                 tuple(_task_plan(executor, task_ops, leaves.get(t.leaf), leaves, t.leaf)
                       for t, task_ops in zip(eg.tasks, ops)))
    with _PLANS_LOCK:
        _PLANS[executor] = plan
    return plan


def _task_plan(executor: TileExecutor, ops: tuple[TileOp, ...], template: tuple[tuple[TileOp, ...], ExecPlan] | None,
               templates: dict[int, tuple[tuple[TileOp, ...], ExecPlan]], leaf: int) -> ExecPlan | None:
    """A task's batched plan, or None (op by op) when it would not pay: a step of a plan costs a
    few times a tile op's Python overhead, so a task is batched when it has at least `_BATCH_FROM`
    times as many tile ops as distinct ones and its plan has at most half as many steps as tile
    ops (not when its ops read a tile value made outside it, which the op-by-op path allows).
    The first batched task of a leaf has its plan built (`plan_of`); the leaf's other tasks take
    it moved to their own GM (`retarget`) when they are that task moved, else build their own."""
    if len(ops) < _BATCH_FROM * len({(o.op, o.node, o.shape) for o in ops}):
        return None
    ids = {o.id for o in ops}
    if any(i not in ids for o in ops for i in o.inputs):
        return None
    plan = executor.retarget(template[1], template[0], ops) if template is not None else None
    if plan is None:
        plan = executor.plan_of(ops)
        if template is None:
            templates[leaf] = (ops, plan)
    return plan if 2 * len(plan.steps) <= len(ops) else None


class _Run:
    """One run's shared state; every field below the lock is guarded by `cond`."""

    def __init__(self, plan: _Plan, executor: TileExecutor, memory: GM) -> None:
        self.plan = plan
        self.executor = executor
        self.memory = memory
        self.ctx = Ctx({})
        # BLAS at one thread: matmul tasks side by side; else (its count cannot be set) BLAS runs each
        # call on every core, and one task at a time calls it
        self.blas_lock: contextlib.AbstractContextManager[object] = (
            contextlib.nullcontext() if blas_controlled() else _BLAS)
        n = len(plan.ops)
        self.cond = threading.Condition()
        self.left = list(plan.preds)  # unresolved predecessors per task
        self.ready: deque[int] = deque(i for i in range(n) if not self.left[i])
        self.running = 0  # tasks taken and not finished: while some run, more may become ready
        self.unfinished = n
        self.failure: tuple[int, BaseException] | None = None
        self.t0 = time.perf_counter()
        self.ready_at = [0.0] * n
        self.start = [0.0] * n
        self.end = [0.0] * n
        self.lane = [-1] * n

    def work(self, lane: int) -> None:
        """One worker thread (lane `CPU_<lane>`): take a ready task, run it, release its successors."""
        plan, cond, ready, left = self.plan, self.cond, self.ready, self.left
        with np.errstate(all="ignore"):  # numpy's error state is per thread (as the executor runs)
            while True:
                with cond:
                    while not ready and self.running and self.failure is None:
                        cond.wait()
                    if self.failure is not None or not ready:
                        return  # failed, done, or (a cycle) stuck: nothing is ready and nothing runs
                    tid = ready.popleft()
                    self.running += 1
                try:
                    with self.blas_lock if plan.blas[tid] else contextlib.nullcontext():
                        start = time.perf_counter()
                        self._task(tid)
                        end = time.perf_counter()
                except BaseException as e:  # handed to the caller, which re-raises it
                    with cond:
                        if self.failure is None:
                            self.failure = (tid, e)
                        cond.notify_all()
                    return
                with cond:
                    self.start[tid] = round((start - self.t0) * 1e6, 3)  # ns: what the clock resolves,
                    self.end[tid] = round((end - self.t0) * 1e6, 3)  # and what the JSON keeps exactly
                    self.lane[tid] = lane
                    released = 0
                    for s in plan.succs[tid]:
                        left[s] -= 1
                        if self.end[tid] > self.ready_at[s]:
                            self.ready_at[s] = self.end[tid]  # ready: when its last predecessor ended
                        if not left[s]:
                            ready.append(s)
                            released += 1
                    self.running -= 1
                    self.unfinished -= 1
                    if not ready and not self.running:
                        cond.notify_all()  # nothing more will come: everyone waiting leaves
                    elif released > 1:
                        cond.notify(released - 1)  # this worker takes one itself


    def _task(self, tid: int) -> None:
        """Compute task `tid`'s tile ops (what one box of the swimlane measures)."""
        batched = self.plan.batched[tid]
        if batched is None:
            self.executor.run_ops(self.plan.ops[tid], self.memory.bufs, self.ctx)
            return
        try:
            self.executor.run_plan(batched, self.memory, self.ctx)
        except PyptoError:  # report the error the task's program order meets first
            self.executor.run_ops(self.plan.ops[tid], self.memory.bufs, self.ctx)
            raise


def _raise(task: Task, e: BaseException) -> None:
    where = f"task {task.id} (leaf {task.leaf}, coord {task.coord})"
    if isinstance(e, PyptoError):
        raise PyptoError(f"{where}: {e.message}", e.loc, rule=e.rule) from e
    raise TaskError(task.id, f"cpu board: {where} raised {type(e).__name__}: {e}") from e


def run_cpu(program: Program, inputs: Mapping[str, np.ndarray], workers: int | None = None,
            executor: TileExecutor | None = None) -> tuple[dict[str, np.ndarray], Swimlane]:
    """Run `program`'s tasks on `workers` threads (default: one per CPU); the kernel's
    outputs, keyed as `TileExecutor.run` returns them, and the measured swimlane."""
    if program.tiles is None or program.execute is None:
        raise ValueError("the program is not lowered to an execute graph")
    n = workers if workers is not None else os.cpu_count() or 1
    if n < 1:
        raise ValueError(f"workers must be at least 1, not {n}")
    ex = executor if executor is not None else TileExecutor(program.graph, program.tiles)
    plan = _plan(program, ex)
    run = _Run(plan, ex, ex.memory(inputs))
    threads = [threading.Thread(target=run.work, args=(i,), name=f"pypto-cpu-{i}", daemon=True) for i in range(n)]
    try:
        with one_blas_thread() if any(plan.blas) else contextlib.nullcontext():
            for th in threads:
                th.start()
            for th in threads:
                th.join()
    except BaseException as e:  # Ctrl-C while waiting: the workers take nothing more
        with run.cond:
            run.failure = run.failure or (-1, e)
            run.cond.notify_all()
        raise
    tasks = plan.execute.tasks
    if run.failure is not None:
        tid, e = run.failure
        _raise(tasks[tid], e)
    if run.unfinished:
        raise RuntimeError(f"cpu board: {run.unfinished} tasks never became ready (a cycle in the execute graph)")
    lanes = tuple(Lane(f"CPU_{i}", "CPU") for i in range(n))
    label = instance_labels(program.tiles)
    boxes = tuple(LaneTask(t.id, run.lane[t.id], run.start[t.id], run.end[t.id], t.leaf, t.coord, t.preds,
                           run.ready_at[t.id], name=label[t.instance]) for t in tasks)
    clock = f"measured on this machine ({platform.processor() or platform.machine()}, {n} worker threads)"
    sl = Swimlane("cpu", clock, lanes, boxes, ready_counters(boxes, lanes),
                  info={"workers": n, "tasks": len(tasks), "cpu_count": os.cpu_count()})
    return ex.outputs(run.memory.bufs), sl
