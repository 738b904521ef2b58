"""The cpu board: real tasks on worker threads give the functional executor's bytes and a sound swimlane.

Nothing here is timed: the checks are on values (bit for bit), on the schedule's shape (a
lane runs one task at a time, a task starts after its predecessors end, every task runs
once) and on failure (a task that raises stops the run with its id, never a hang).
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import example_records, lowered, param_inputs

import pypto
from pypto.boards.cpu import TaskError, run_cpu
from pypto.boards.swimlane import Swimlane, metrics
from pypto.compiler.tile_exec import TileExecutor
from pypto.ir.errors import PyptoError

RECORDS = example_records()
BY_NAME = dict(RECORDS)
SWEEP = settings(max_examples=25, deadline=None, derandomize=True, database=None)


def _same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str = "") -> None:
    assert got.keys() == want.keys()
    for k in want:
        g, w = got[k], want[k]
        assert g.dtype == w.dtype and g.shape == w.shape, (what, k)
        assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes(), f"{what}: {k} differs"


def _check_schedule(sl: Swimlane, program: pypto.compiler.manager.Program, workers: int) -> None:
    tasks = program.execute.tasks
    assert sl.board == "cpu" and sl.clock.startswith("measured on this machine")
    assert [ln.name for ln in sl.lanes] == [f"CPU_{i}" for i in range(workers)]
    assert {ln.core for ln in sl.lanes} == {"CPU"}
    assert sl.info["workers"] == workers
    assert sorted(t.id for t in sl.tasks) == [t.id for t in tasks], "every task exactly once"
    by_id = {t.id: t for t in sl.tasks}
    for t in tasks:
        box = by_id[t.id]
        assert (box.leaf, box.coord, box.preds) == (t.leaf, t.coord, t.preds)
        assert 0 <= box.lane < workers
        assert 0 <= box.start <= box.end
        assert box.ready is not None and box.ready <= box.start
        for p in t.preds:
            assert by_id[p].end <= box.start, f"task {t.id} started before its predecessor {p} ended"
        if t.preds:
            assert box.ready == max(by_id[p].end for p in t.preds)
    per_lane = defaultdict(list)
    for box in sl.tasks:
        per_lane[box.lane].append((box.start, box.end))
    for spans in per_lane.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert end <= start, "a lane ran two tasks at once"


# ---- values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, record", RECORDS, ids=[n for n, _ in RECORDS])
def test_values_are_the_functional_executors_bit_for_bit(name, record):
    p = record.program
    ex = TileExecutor(p.graph, p.tiles)
    inputs = param_inputs(p.tiles)
    want = ex.run(inputs)
    for workers in (1, 2):
        got, _ = run_cpu(p, inputs, workers, ex)
        _same(got, want, f"{name} with {workers} workers")


def test_without_an_executor_and_with_default_workers():
    p = BY_NAME["softmax.softmax_kernel"].program
    inputs = param_inputs(p.tiles, seed=3)
    got, sl = run_cpu(p, inputs)
    _same(got, TileExecutor(p.graph, p.tiles).run(inputs))
    assert len(sl.lanes) == (os.cpu_count() or 1) == sl.info["workers"]


def test_inputs_are_not_written():
    p = BY_NAME["elementwise.scale_shift_kernel"].program
    inputs = param_inputs(p.tiles)
    before = {k: v.copy() for k, v in inputs.items()}
    run_cpu(p, inputs, 2)
    _same(inputs, before)


@pytest.mark.parametrize("workers", [2, 3])
def test_matmul_tiles_big_enough_for_threaded_blas_are_bit_identical(workers):
    """BLAS's result depends on its thread count: the board must call it as the executor does."""

    @pypto.jit
    def k(a: pypto.Tensor([384, 512], pypto.DT_FP32), b: pypto.Tensor([512, 384], pypto.DT_FP32),
          bias: pypto.Tensor([384], pypto.DT_FP32)) -> pypto.Tensor():
        pypto.set_cube_tile_shapes([64, 128], [64, 128], [64, 128])
        c = pypto.matmul(a, b, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(32, 128)
        return pypto.exp(c * 0.01) + bias

    g = torch.Generator().manual_seed(1)
    _, lw, arrays, _ = lowered(k, torch.randn(384, 512, generator=g), torch.randn(512, 384, generator=g),
                               torch.randn(384, generator=g))
    assert sum(t.core == "AIC" for t in lw.program.execute.tasks) == 9
    want = lw.executor.run(arrays)
    for _ in range(3):
        got, sl = run_cpu(lw.program, arrays, workers, lw.executor)
        _same(got, want, f"matmul, {workers} workers")
        _check_schedule(sl, lw.program, workers)


@SWEEP
@given(rows=st.integers(1, 70), cols=st.sampled_from([8, 40, 64, 200]), tr=st.sampled_from([1, 4, 16, 64]),
       tc=st.sampled_from([16, 32, 64]), op=st.sampled_from(["sum", "amax", "prod", "argmax", "softmax"]),
       dim=st.sampled_from([0, 1]), dt=st.sampled_from([pypto.DT_FP32, pypto.DT_FP16]), seed=st.integers(0, 99))
def test_sweep_reductions_across_tiles(rows, cols, tr, tc, op, dim, dt, seed):
    """Reductions within a tile and across tiles (partials, then a combine in another task)."""
    fn = getattr(pypto, op)

    @pypto.jit
    def k(x: pypto.Tensor()) -> pypto.Tensor():
        pypto.set_vec_tile_shapes(tr, tc)
        return fn(x, dim) if op == "softmax" else fn(x, dim, True)

    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed))
    x = (x * 0.05 + 1 if op == "prod" else x * 3).to(pypto.ir.dtypes.torch_dtype(dt))
    _, lw, arrays, _ = lowered(k, x)
    want = lw.executor.run(arrays)
    got, sl = run_cpu(lw.program, arrays, 2, lw.executor)
    _same(got, want, f"{op} dim={dim} {rows}x{cols} tile {tr}x{tc} {dt}")
    _check_schedule(sl, lw.program, 2)


# ---- the schedule -------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("name", ["softmax.softmax_kernel", "attention.attention_kernel", "rope.rope_kernel"])
def test_lanes_run_one_task_at_a_time_after_its_predecessors(name, workers):
    p = BY_NAME[name].program
    _, sl = run_cpu(p, param_inputs(p.tiles), workers)
    _check_schedule(sl, p, workers)


def test_the_swimlane_round_trips_and_its_metrics_are_sound():
    p = BY_NAME["attention.attention_kernel"].program
    _, sl = run_cpu(p, param_inputs(p.tiles), 2)
    doc = sl.to_json()
    back = Swimlane.from_json(doc)
    assert back.to_json() == doc
    assert (back.board, back.clock, back.lanes) == (sl.board, sl.clock, sl.lanes)
    assert [(t.id, t.lane, t.leaf, t.coord, t.preds) for t in back.tasks] == \
        [(t.id, t.lane, t.leaf, t.coord, t.preds) for t in sl.tasks]
    m = metrics(sl)
    assert m.makespan > 0
    assert 0.0 <= m.utilization <= 1.0 + 1e-9
    assert all(0.0 <= u <= 1.0 + 1e-9 for u in m.lane_utilization)
    assert 0.0 < m.critical_path_us <= m.makespan + 1e-6
    assert "ReadyCount_CPU" in sl.counters and "ReadyCount_Total" in sl.counters
    assert all(v >= 0 for _, v in sl.counters["ReadyCount_Total"])


def test_bad_worker_counts():
    p = BY_NAME["rope.rope_kernel"].program
    with pytest.raises(ValueError, match="workers"):
        run_cpu(p, param_inputs(p.tiles), 0)


# ---- failures -----------------------------------------------------------------------------------

def _finishes(fn, *args):
    """Run `fn(*args)` on a thread; the exception it raised (None), or a failure if it hangs."""
    caught: list[BaseException | None] = [None]

    def target():
        try:
            fn(*args)
        except BaseException as e:  # handed back to the test
            caught[0] = e

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(timeout=120)
    assert not th.is_alive(), "run_cpu hung"
    return caught[0]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_user_error_in_a_task_is_a_pypto_error_naming_the_task(workers):
    @pypto.jit
    def k(x: pypto.Tensor([64, 64], pypto.DT_INT32), y: pypto.Tensor([64, 64], pypto.DT_INT32),
          out: pypto.Tensor([64, 64], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x // y

    x = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
    y = np.ones((64, 64), dtype=np.int32)
    y[37, 5] = 0  # row 37: the tile of rows 32..39
    _, lw, arrays, _ = lowered(k, x, y, np.zeros_like(x))
    err = _finishes(run_cpu, lw.program, arrays, workers, lw.executor)
    assert isinstance(err, PyptoError), err
    assert "integer division by zero" in err.message
    failing = [t for t in lw.program.execute.tasks if t.coord and t.coord[0] == 4]
    assert any(f"task {t.id} " in err.message for t in failing), err.message


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_an_internal_error_in_a_task_stops_the_run_and_names_the_task(monkeypatch, workers):
    p = BY_NAME["softmax.softmax_kernel"].program
    ex = TileExecutor(p.graph, p.tiles)
    bad = p.execute.tasks[len(p.execute.tasks) // 2]
    bad_op = p.subgraphs[bad.subgraph].ops[0]
    ran: list[int] = []
    real, real_plan = ex.run_ops, ex.run_plan
    by_id = {o.id: o for o in p.tiles.ops}
    bad_ops = {(o.node, o.instance, o.coord, o.op) for o in (by_id[i] for i in p.subgraphs[bad.subgraph].ops)}

    def run_ops(ops, bufs, ctx):  # a task run op by op
        if ops[0].id == bad_op:
            raise MemoryError("no more memory")
        ran.append(ops[0].id)
        real(ops, bufs, ctx)

    def run_plan(plan, memory, ctx):  # a task run as its batched plan (its ops renumbered)
        if {(o.node, o.instance, o.coord, o.op) for st in plan.steps for o in st.ops} == bad_ops:
            raise MemoryError("no more memory")
        ran.append(-1)
        real_plan(plan, memory, ctx)

    monkeypatch.setattr(ex, "run_ops", run_ops)
    monkeypatch.setattr(ex, "run_plan", run_plan)
    err = _finishes(run_cpu, p, param_inputs(p.tiles), workers, ex)
    assert isinstance(err, TaskError), err
    assert err.task == bad.id
    assert f"task {bad.id} " in str(err) and "MemoryError: no more memory" in str(err)
    assert isinstance(err.__cause__, MemoryError)
    assert len(ran) < len(p.execute.tasks)
