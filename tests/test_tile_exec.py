"""The batched tile executor: the same bytes as the unbatched (reference) one, and it batches.

Batched runs stack isomorphic, independent tile ops into one numpy call; nothing about a
tile's arithmetic changes, so every comparison here is exact: dtype, shape and every byte.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import example_records, lowered, param_inputs

import pypto
from pypto.compiler.tile_exec import TileExecutor
from pypto.frontend.jit import JitKernel, Lowered

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SWEEP = settings(max_examples=40, deadline=None, derandomize=True, database=None)




RECORDS = example_records()






def _same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str = "") -> None:
    assert got.keys() == want.keys()
    for k in want:
        g, w = got[k], want[k]
        assert g.dtype == w.dtype and g.shape == w.shape, (what, k, g.dtype, w.dtype, g.shape, w.shape)
        assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(w).tobytes(), f"{what}: {k} differs"


def _check(ex: TileExecutor, arrays: dict[str, np.ndarray], what: str = "", fp64: bool = False) -> dict:
    want = ex.run(arrays, fp64=fp64, batched=False)
    got = ex.run(arrays, fp64=fp64)
    _same(got, want, what)
    return got


def _members_per_step(ex: TileExecutor) -> list[int]:
    return [len(s.ops) for s in ex.plan().steps]


# ---- every example ----------------------------------------------------------------------------

@pytest.mark.parametrize("fp64", [False, True], ids=["fp32", "fp64"])
@pytest.mark.parametrize("name, record", RECORDS, ids=[n for n, _ in RECORDS])
def test_batched_equals_unbatched_on_every_example(name, record, fp64):
    p = record.program
    ex = TileExecutor(p.graph, p.tiles)
    _check(ex, param_inputs(p.tiles), name, fp64)
    steps = ex.plan().steps
    assert sorted(o.id for s in steps for o in s.ops) == sorted(o.id for o in p.tiles.ops), "each op runs once"
    assert len(steps) <= len(p.tiles.ops)


def test_the_examples_batch():
    """Over all examples, a group holds many tile ops on average (the softmax example: ~1000)."""
    ops = steps = 0
    for _, record in RECORDS:
        ex = TileExecutor(record.program.graph, record.program.tiles)
        ops += len(record.program.tiles.ops)
        steps += len(ex.plan().steps)
    assert ops >= 20 * steps


def test_the_tasks_of_one_leaf_run_as_one_group_per_op():
    @pypto.jit
    def k(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 256)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(64, 256)
    lw, arrays = _lower(k, x, torch.empty_like(x))
    p = lw.program
    assert len(p.leaves) == 1 and p.leaves[0].count == 8  # 8 isomorphic tasks ...
    ex = TileExecutor(p.graph, p.tiles)
    _check(ex, arrays)
    template = p.subgraphs[p.leaves[0].template]
    assert _members_per_step(ex) == [8] * len(template.ops)  # ... each op of the leaf runs once for all 8
    np.testing.assert_allclose(ex.run(arrays)["out"], torch.softmax(x, -1).numpy(), rtol=1e-6, atol=1e-7)


# ---- sweeps: shapes with tails, tile shapes, dtypes -------------------------------------------

FLOATS = {"fp32": pypto.DT_FP32, "fp16": pypto.DT_FP16, "bf16": pypto.DT_BF16}
TORCH = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "int32": torch.int32}


def _rand(shape: list[int], dt: str, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dt == "int32":
        return torch.randint(-50, 50, shape, generator=g, dtype=torch.int32)
    return (torch.randn(shape, generator=g) * 3).to(TORCH[dt])


@SWEEP
@given(rows=st.integers(1, 70), cols=st.sampled_from([8, 40, 64, 200]), tr=st.sampled_from([1, 4, 16, 64]),
       tc=st.sampled_from([16, 32, 64]), dt=st.sampled_from(["fp32", "fp16", "bf16"]), seed=st.integers(0, 99))
def test_sweep_softmax(rows, cols, tr, tc, dt, seed):
    row = pypto.Tensor([pypto.DYNAMIC, cols], FLOATS[dt])

    @pypto.jit
    def k(x: row, out: row):
        pypto.set_vec_tile_shapes(tr, tc)
        out[:] = pypto.softmax(x, -1) + pypto.amax(x, -1, keepdim=True) * 0.5

    x = _rand([rows, cols], dt, seed)
    lw, arrays = _lower(k, x, torch.empty_like(x))
    _check(TileExecutor(lw.program.graph, lw.program.tiles), arrays, f"softmax {rows}x{cols} tile {tr}x{tc} {dt}")


@SWEEP
@given(rows=st.integers(1, 70), cols=st.sampled_from([8, 40, 64, 200]), tr=st.sampled_from([1, 4, 16, 64]),
       tc=st.sampled_from([16, 32, 64]), dt=st.sampled_from(["fp32", "fp16", "bf16", "int32"]),
       seed=st.integers(0, 99))
def test_sweep_elementwise_with_broadcast(rows, cols, tr, tc, dt, seed):
    """Binary ops, a lower-rank operand (a row, broadcast over rows), a column, where, unary ops."""
    dtype = FLOATS.get(dt, pypto.DT_INT32)

    if dt == "int32":
        @pypto.jit
        def k(x: pypto.Tensor([rows, cols], dtype), b: pypto.Tensor([cols], dtype),
              c: pypto.Tensor([rows, 1], dtype), out: pypto.Tensor([rows, cols], dtype)):
            pypto.set_vec_tile_shapes(tr, tc)
            out[:] = pypto.where(x > b, x * 3 - c, (x + b) // 4) % 7 + pypto.maximum(x, c)
    else:
        @pypto.jit
        def k(x: pypto.Tensor([rows, cols], dtype), b: pypto.Tensor([cols], dtype),
              c: pypto.Tensor([rows, 1], dtype), out: pypto.Tensor([rows, cols], dtype)):
            pypto.set_vec_tile_shapes(tr, tc)
            out[:] = pypto.where(x > b, pypto.exp(x * 0.25) - c, pypto.sigmoid(x + b)) / (1.0 + pypto.abs(c))

    x, b, c = _rand([rows, cols], dt, seed), _rand([cols], dt, seed + 1), _rand([rows, 1], dt, seed + 2)
    lw, arrays = _lower(k, x, b, c, torch.empty_like(x))
    _check(TileExecutor(lw.program.graph, lw.program.tiles), arrays, f"elementwise {rows}x{cols} {tr}x{tc} {dt}")


@SWEEP
@given(rows=st.integers(1, 70), cols=st.sampled_from([8, 40, 64, 200]), tr=st.sampled_from([1, 4, 16, 64]),
       tc=st.sampled_from([16, 32, 64]), dt=st.sampled_from(["fp32", "fp16", "int32"]),
       op=st.sampled_from(["sum", "amax", "amin", "prod", "argmax", "argmin"]), dim=st.sampled_from([0, 1]),
       keepdim=st.booleans(), seed=st.integers(0, 99))
def test_sweep_reductions(rows, cols, tr, tc, dt, op, dim, keepdim, seed):
    """Reductions along either axis, across several tiles (partials and a combine) or within one."""
    fn = getattr(pypto, op)

    @pypto.jit
    def k(x: pypto.Tensor()) -> pypto.Tensor():
        pypto.set_vec_tile_shapes(tr, tc)
        return fn(x, dim, keepdim)

    x = _rand([rows, cols], dt, seed)
    if op == "prod" and dt != "int32":
        x = (x.float() * 0.05 + 1).to(x.dtype)
    lw, arrays = _lower(k, x)
    _check(TileExecutor(lw.program.graph, lw.program.tiles), arrays, f"{op} dim={dim} {rows}x{cols} {tr}x{tc} {dt}")


# ---- loops, GM hazards, matmul, the other tile kinds ------------------------------------------

def test_independent_loop_iterations_run_together():
    """Root-function instances that touch disjoint rows share the groups of their tile ops."""
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        for i in pypto.loop(0, x.shape[0], 4, name="LOOP_rows", idx_name="i"):
            v = x[i:i + 4, :]
            out[i:i + 4, :] = pypto.exp(v - pypto.amax(v, -1, keepdim=True))

    x = torch.randn(48, 64)
    lw, arrays = _lower(k, x, torch.empty_like(x))
    ex = TileExecutor(lw.program.graph, lw.program.tiles)
    got = _check(ex, arrays)
    np.testing.assert_allclose(got["out"], torch.exp(x - x.amax(-1, keepdim=True)).numpy(), rtol=1e-6)
    instances = [{o.instance for o in s.ops} for s in ex.plan().steps]
    assert len(lw.program.tiles.instances) == 13  # the kernel body and 12 iterations
    assert all(len(i) == 12 for i in instances), "every group spans all 12 iterations"


def test_a_loop_carried_value_keeps_the_iterations_in_order():
    """Each iteration reads what the previous one wrote: one wave after another, exact sequential sums."""
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([1, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32)
        for i in pypto.loop(0, x.shape[0], 1, name="LOOP_acc", idx_name="i"):
            out[:] = out * 0.5 + x[i:i + 1, :]

    x = torch.randn(20, 64)
    out = torch.randn(1, 64)
    lw, arrays = _lower(k, x, out)
    ex = TileExecutor(lw.program.graph, lw.program.tiles)
    got = _check(ex, arrays)
    want = out.numpy().copy()
    for i in range(20):
        want = want * np.float32(0.5) + x.numpy()[i:i + 1]
    np.testing.assert_array_equal(got["out"], want)
    assert ex.plan().waves >= 20 * 2


def test_overlapping_windows_of_one_buffer_read_before_they_are_overwritten():
    """out[4:36] = out[0:32] * 2 + 1: tiles read rows that other tiles of the same op write (WAR), on a
    grid (4 rows) finer than the tiles (8 rows)."""
    @pypto.jit
    def k(x: pypto.Tensor([40, 64], pypto.DT_FP32), out: pypto.Tensor([40, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x
        out[4:36, :] = out[0:32, :] * 2.0 + 1.0

    x = torch.randn(40, 64)
    lw, arrays = _lower(k, x, torch.empty_like(x))
    got = _check(TileExecutor(lw.program.graph, lw.program.tiles), arrays)
    want = x.numpy().copy()
    want[4:36] = want[0:32] * np.float32(2) + np.float32(1)
    np.testing.assert_array_equal(got["out"], want)


def test_matmul_then_vector_epilogue():
    @pypto.jit
    def k(a: pypto.Tensor([96, 256], pypto.DT_FP16), b: pypto.Tensor([256, 128], pypto.DT_FP16),
          bias: pypto.Tensor([128], pypto.DT_FP32), out: pypto.Tensor([96, 128], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 128], [32, 32])
        pypto.set_vec_tile_shapes(16, 32)
        c = pypto.matmul(a, b, pypto.DT_FP32)
        out[:] = pypto.relu(c + bias) * 0.5

    a, b, bias = torch.randn(96, 256).half(), torch.randn(256, 128).half(), torch.randn(128)
    lw, arrays = _lower(k, a, b, bias, torch.empty(96, 128))
    assert lw.program.tiles.count("matmul") == 12
    got = _check(TileExecutor(lw.program.graph, lw.program.tiles), arrays)
    want = torch.relu(a.float() @ b.float() + bias) * 0.5
    np.testing.assert_allclose(got["out"], want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["transpose", "expand_clone", "arange", "full", "bitcast", "cast", "argmax3d"])
def test_other_tile_kinds(case):
    x = torch.randn(24, 96)

    @pypto.jit
    def k(x: pypto.Tensor([24, 96], pypto.DT_FP32)) -> pypto.Tensor():
        pypto.set_vec_tile_shapes(2, 8, 32)
        if case == "transpose":
            return pypto.transpose(x, 0, 1) * 2.0
        if case == "expand_clone":
            return pypto.expand_clone(x[0:1, :], [24, 96]) + x
        if case == "arange":
            return pypto.arange(0, 96, 1, dtype=pypto.DT_FP32) * 0.5 + x
        if case == "full":
            return pypto.full([24, 96], 1.5) - x
        if case == "bitcast":
            return pypto.view(x, [16, 64], [8, 32], dtype=pypto.DT_INT32) + 1
        if case == "cast":
            return pypto.cast(x * 100.0, pypto.DT_INT32) // 3
        return pypto.argmax(pypto.reshape(x, [4, 6, 96]), 1, True)

    lw, arrays = _lower(k, x)
    _check(TileExecutor(lw.program.graph, lw.program.tiles), arrays, case)


def test_an_error_is_the_one_program_order_meets_first():
    @pypto.jit
    def k(x: pypto.Tensor([32, 64], pypto.DT_INT32), y: pypto.Tensor([32, 64], pypto.DT_INT32)) -> pypto.Tensor():
        pypto.set_vec_tile_shapes(8, 32)
        return x // y

    x = torch.randint(-9, 9, (32, 64), dtype=torch.int32)
    y = torch.randint(1, 9, (32, 64), dtype=torch.int32)
    y[20, 40] = 0
    lw, arrays = _lower(k, x, y)
    ex = TileExecutor(lw.program.graph, lw.program.tiles)
    with pytest.raises(pypto.PyptoError) as unbatched:
        ex.run(arrays, batched=False)
    with pytest.raises(pypto.PyptoError) as batched:
        ex.run(arrays)
    assert str(batched.value) == str(unbatched.value)
    assert "division by zero" in str(batched.value)


def test_values_are_freed_after_their_last_consumer():
    @pypto.jit
    def k(x: pypto.Tensor([256, 256], pypto.DT_FP32), out: pypto.Tensor([256, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = pypto.exp(x) * 2.0 + x

    x = torch.randn(256, 256)
    lw, arrays = _lower(k, x, torch.empty_like(x))
    ex = TileExecutor(lw.program.graph, lw.program.tiles)
    _check(ex, arrays)
    whole, tile = x.numel() * 4, 16 * 32 * 4
    ops = lw.program.tiles.ops
    kept = sum(int(np.prod(o.shape)) * o.dtype.nbytes for o in ops if o.op not in ("store", "matmul"))
    assert kept == 5 * whole  # x loaded for exp and again for +x, exp, *2, +: keeping every value
    ex.run(arrays, batched=False)  # program order is op by op over all tiles: one tensor's tiles live
    assert ex.peak_bytes <= whole + 4 * tile
    ex.run(arrays)  # exp(x), its double and x loaded again for the add (just in time), at once
    assert ex.peak_bytes <= 3 * whole
    plan = ex.plan()
    freed = [b for s in plan.steps for b in s.free]
    makers = [s.id for s in plan.steps if s.kind != "store" and s.ops[0].op != "matmul"]
    assert sorted(freed) == makers, "every value is freed, once"
    at = {b: s.id for s in plan.steps for b in s.free}
    for s in plan.steps:
        for spec in s.inputs:
            srcs = [spec.src] if spec.mode != "mixed" else [src for src, _, _ in spec.parts]
            assert all(at[src] >= s.id for src in srcs), "freed after its last consumer"


def test_order_runs_unbatched_in_that_order():
    _, record = next((n, r) for n, r in RECORDS if n.startswith("softmax"))
    p = record.program
    ex = TileExecutor(p.graph, p.tiles)
    arrays = param_inputs(p.tiles)
    by_task = [oid for t in p.execute.tasks for oid in p.subgraphs[t.subgraph].ops]
    _same(ex.run(arrays, order=by_task), ex.run(arrays))


def test_the_jit_call_runs_batched():
    """`kernel(...)` goes through the executor's default (batched) path and its plan is kept."""
    @pypto.jit
    def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.sigmoid(x) * x

    x = torch.randn(64, 64)
    out = torch.empty_like(x)
    k(x, out)
    np.testing.assert_allclose(out.numpy(), (torch.sigmoid(x) * x).numpy(), rtol=1e-6, atol=1e-7)
    lw, _ = _lower(k, x, out)
    assert lw.executor is not None and lw.executor._plan is not None


def _lower(kernel: JitKernel, *args: torch.Tensor) -> tuple[Lowered, dict[str, np.ndarray]]:
    _, lw, arrays, _ = lowered(kernel, *args)
    return lw, arrays


def test_a_loop_reading_one_whole_cache_holds_one_copy_of_it():
    """index_select keeps its input whole in a tile, so a loop of lookups into one cache loads that
    cache once per iteration: the batched load is one copy seen 64 times, not 64 copies (DeepSeek V4's
    sparse attention looked up a 128 MB cache 128 times: 16 GB)."""
    @pypto.jit
    def k(cache: pypto.Tensor([4096, 256], pypto.DT_FP32), idx: pypto.Tensor([64, 8], pypto.DT_INT32),
          out: pypto.Tensor([512, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 256)
        for i in pypto.loop(64):
            rows = pypto.reshape(pypto.view(idx, [1, 8], [i, 0]), [8])
            out[i * 8:(i + 1) * 8, :] = pypto.index_select(cache, 0, rows)

    g = torch.Generator().manual_seed(5)
    cache = torch.randn(4096, 256, generator=g)
    idx = torch.randint(0, 4096, (64, 8), generator=g, dtype=torch.int32)
    lw, arrays = _lower(k, cache, idx, torch.zeros(512, 256))
    ex = TileExecutor(lw.program.graph, lw.program.tiles)
    got = _check(ex, arrays)
    assert torch.equal(torch.from_numpy(got["out"]), torch.index_select(cache, 0, idx.flatten().long()))
    assert ex.peak_bytes < 4 * cache.numel() * 4  # 64 stacked copies were 64 x 4 MB
