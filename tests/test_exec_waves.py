"""Whole waves on views (issue 19 item 4): a group of loads that is every tile of a lattice of GM is
a strided view of GM, not a gather, unless something writes that GM later; a full group of stores
is one assignment; the cpu board runs each task's isomorphic tiles as one call.

Every comparison is exact (the batched path equals the op-by-op path byte for byte), and each test
also shows the case it guards is the one it claims: a view where a copy is needed gives other bytes.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs
from support import example_records, lowered, param_inputs

import pypto
from pypto.boards.cpu import run_cpu
from pypto.compiler.blas import blas_threads, one_blas_thread
from pypto.compiler.tile_exec import Segment, TileExecutor
from pypto.compiler.tile_ir import TileOp
from pypto.ir.dtypes import DataType
from pypto.ir.graph import Node, TensorType
from pypto.reference.kernels import KERNELS, Ctx

SWEEP = settings(max_examples=40, deadline=None, derandomize=True, database=None)


def _same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert got.keys() == want.keys()
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape
        assert np.ascontiguousarray(got[k]).tobytes() == np.ascontiguousarray(want[k]).tobytes(), k


def _executor(kernel: pypto.JitKernel, *args: torch.Tensor):
    _, lw, arrays, _ = lowered(kernel, *args)
    return lw.program, TileExecutor(lw.program.graph, lw.program.tiles), arrays


def test_a_whole_lattice_of_loads_is_a_view_of_gm():
    """softmax at 16 x 64 tiles over 128 x 256: x's tiles are loaded as one strided view of x (batch
    axes: the 8 x 4 lattice), whole groups keep those axes, and the values are the op-by-op ones."""
    @pypto.jit
    def k(x: pypto.Tensor([128, 256], pypto.DT_FP32), out: pypto.Tensor([128, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(128, 256)
    p, ex, arrays = _executor(k, x, torch.empty_like(x))
    plan = ex.plan()
    views = [st for st in plan.steps if st.view]
    assert views, "some load is a view"
    assert any(len(st.batch) > 1 for st in plan.steps if st.kind == "batch"), "a lattice reaches a kernel"
    assert any(st.window is not None and st.window.full for st in plan.steps if st.kind == "store")
    loaded = views[0].window.load(ex.memory(arrays).arenas, True)
    assert loaded.base is not None, "a view, not a copy"
    _same(ex.run(arrays), ex.run(arrays, batched=False))
    np.testing.assert_allclose(ex.run(arrays)["out"], torch.softmax(x, -1).numpy(), rtol=1e-6, atol=1e-7)


def test_a_load_of_gm_written_later_is_a_copy():
    """x is read once, for `u = x + t` after a long chain on y, and zeroed in place (the store waits
    only for x's load, not for `u`): the loaded tiles must be a copy, and a view would see the zeros."""
    t2 = pypto.Tensor([64, 128], pypto.DT_FP32)

    @pypto.jit
    def k(x: t2, y: t2, out: t2):
        pypto.set_vec_tile_shapes(16, 64)
        t = pypto.exp(pypto.exp(pypto.exp(y * 0.01) * 0.01) * 0.01)
        u = x + t
        x[:] = pypto.zeros([64, 128], dtype=pypto.DT_FP32)
        out[:] = u

    x, y = torch.randn(64, 128), torch.randn(64, 128)
    p, ex, arrays = _executor(k, x, y, torch.empty_like(x))
    want = ex.run(arrays, batched=False)
    np.testing.assert_array_equal(want["x"], 0)
    plan = ex.plan()
    x_buffer = next(b.id for b in p.tiles.buffers if b.name == "x")
    loads = [st for st in plan.steps if st.kind == "load" and st.window is not None and st.window.full]
    full = [st for st in loads if st.ops[0].region.buffer == x_buffer]
    assert full and not any(st.view for st in full), "x's tiles: a copy"
    assert any(st.view for st in loads if st not in full), "y's (never written): a view"
    _same(ex.run(arrays), want)
    for st in full:  # what the rule prevents: a view sees the zeros written before `x + t` runs
        st.view = True
    try:
        got = ex.run(arrays)
    finally:
        for st in full:
            st.view = False
    assert got["out"].tobytes() != want["out"].tobytes()


def test_reductions_transposes_and_arg_reductions_on_a_lattice():
    """Dims and perms shift by the number of batch axes (the lattice's 3), not by one."""
    @pypto.jit
    def k(x: pypto.Tensor([64, 96], pypto.DT_FP32)) -> tuple[pypto.Tensor(), pypto.Tensor(), pypto.Tensor()]:
        pypto.set_vec_tile_shapes(16, 32)
        y = pypto.exp(x * 0.5)
        return pypto.sum(y, 0, True), pypto.argmax(y, 1, False), pypto.transpose(y, 0, 1) * 2.0

    x = torch.randn(64, 96)
    p, ex, arrays = _executor(k, x)
    assert any(len(st.batch) == 3 for st in ex.plan().steps if st.kind == "batch")
    got = ex.run(arrays)
    _same(got, ex.run(arrays, batched=False))
    y = np.exp(x.numpy() * np.float32(0.5))
    values = list(got.values())
    np.testing.assert_allclose(values[0], y.sum(0, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(values[1], y.argmax(1))
    np.testing.assert_array_equal(values[2], y.T * np.float32(2))


def test_the_cpu_board_runs_a_tasks_tiles_as_one_call():
    """softmax 128 x 256 at 4 x 32 tiles: each of the 32 tasks holds 8 column tiles of 2 row blocks (66
    tile ops); it runs as a batched plan, built for the leaf's first task and moved to the others'
    GM. The board's bytes are the executor's, with one worker and with two."""
    @pypto.jit
    def k(x: pypto.Tensor([128, 256], pypto.DT_FP32), out: pypto.Tensor([128, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(128, 256)
    p, ex, arrays = _executor(k, x, torch.empty_like(x))
    want = ex.run(arrays)
    for workers in (1, 2):
        got, sl = run_cpu(p, arrays, workers, ex)
        _same(got, want)
        assert len(sl.tasks) == len(p.execute.tasks)
    by_id = {o.id: o for o in p.tiles.ops}
    tasks = [tuple(by_id[i] for i in p.subgraphs[t.subgraph].ops) for t in p.execute.tasks]
    first = ex.plan_of(tasks[0])
    assert 4 * len(first.steps) <= len(tasks[0])
    for ops in tasks[1:]:
        moved = ex.retarget(first, tasks[0], ops)
        assert moved is not None and len(moved.steps) == len(first.steps)
        gm, own = ex.memory(arrays), ex.memory(arrays)
        for a, b in zip(gm.arenas, own.arenas):
            b[...] = a  # (an output written whole starts uninitialised)
        ex.run_plan(moved, gm, Ctx({}))
        ex.run_plan(ex.plan_of(ops), own, Ctx({}))
        assert all(a.tobytes() == b.tobytes() for a, b in zip(gm.arenas, own.arenas)), "as its own plan"


def test_a_plan_is_not_moved_to_a_task_that_is_not_its_leafs_task_moved():
    """retarget refuses a task whose accesses of one buffer are not all shifted alike (here: one of
    its 16 loads of x reads another task's tile), since the plan's GM order would not hold for it."""
    @pypto.jit
    def k(x: pypto.Tensor([128, 256], pypto.DT_FP32), out: pypto.Tensor([128, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(128, 256)
    p, ex, _ = _executor(k, x, torch.empty_like(x))
    by_id = {o.id: o for o in p.tiles.ops}
    tasks = [tuple(by_id[i] for i in p.subgraphs[t.subgraph].ops) for t in p.execute.tasks]
    plan = ex.plan_of(tasks[0])
    assert ex.retarget(plan, tasks[0], tasks[1]) is not None
    swapped = list(tasks[1])
    loads = [k for k, o in enumerate(swapped) if o.op == "load"]
    other = next(o for o in tasks[2] if o.op == "load")
    o = swapped[loads[0]]
    swapped[loads[0]] = TileOp(o.id, o.op, o.node, o.instance, o.coord, o.shape, o.dtype, o.inputs, other.region,
                               o.attrs)
    assert ex.retarget(plan, tasks[0], tuple(swapped)) is None


def test_an_output_is_copied_in_unless_every_element_is_written():
    """`out` written whole (its tiles tile it) starts from fresh memory, since its input values are
    never seen; written in part, the rest keeps the caller's values (here 7)."""
    t = pypto.Tensor([64, 128], pypto.DT_FP32)

    @pypto.jit
    def whole(x: t, out: t):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x * 2.0

    @pypto.jit
    def part(x: t, out: t):
        pypto.set_vec_tile_shapes(16, 64)
        out[0:40, :] = x[0:40, :] * 2.0

    x = torch.randn(64, 128)
    for k, rows in ((whole, 64), (part, 40)):
        out = torch.full((64, 128), 7.0)
        _, ex, arrays = _executor(k, x, out)
        for batched in (True, False):
            got = ex.run(arrays, batched=batched)["out"]
            np.testing.assert_array_equal(got[:rows], x.numpy()[:rows] * np.float32(2))
            np.testing.assert_array_equal(got[rows:], 7.0)


# ---- segments: chains of whole groups run chunk by chunk, on threads ------------------------------

RECORDS = example_records()


def _chunked(ex: TileExecutor, chunk_bytes: int = 2048, threads: int = 2) -> TileExecutor:
    ex.chunk_bytes, ex.threads = chunk_bytes, threads  # tiny chunks: every example's chains form segments
    return ex


@pytest.mark.parametrize("name, record", RECORDS, ids=[n for n, _ in RECORDS])
def test_segments_equal_the_op_by_op_run_on_every_example(name, record):
    p = record.program
    ex = _chunked(TileExecutor(p.graph, p.tiles))
    arrays = param_inputs(p.tiles)
    _same(ex.run(arrays), ex.run(arrays, batched=False))
    plan = ex.plan()
    ran = [st.id for item in plan.order for st in (item.steps if isinstance(item, Segment) else (plan.steps[item],))]
    assert sorted(ran) == list(range(len(plan.steps))), "each step runs once"


def test_the_examples_form_segments():
    """Over the examples, with tiny chunks, many steps run in segments of several chunks."""
    inside = 0
    for _, record in RECORDS:
        ex = _chunked(TileExecutor(record.program.graph, record.program.tiles))
        inside += sum(len(item.steps) for item in ex.plan().order if isinstance(item, Segment) and item.chunk < item.n)
    assert inside >= 50


def test_a_segment_keeps_what_later_steps_read_and_frees_the_rest():
    """softmax 256 x 512 at 8 x 512, 64 KB chunks: one segment (load, amax, sub, exp, sum, div, store)
    holding nothing whole, on one thread and on two, with the op-by-op bytes."""
    @pypto.jit
    def k(x: pypto.Tensor([256, 512], pypto.DT_FP32), out: pypto.Tensor([256, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 512)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(256, 512)
    p, ex, arrays = _executor(k, x, torch.empty_like(x))
    want = ex.run(arrays, batched=False)
    for threads in (1, 2):
        ex = _chunked(TileExecutor(p.graph, p.tiles), 1 << 16, threads)
        segments = [item for item in ex.plan().order if isinstance(item, Segment)]
        assert len(segments) == 1 and len(segments[0].steps) == len(ex.plan().steps)
        assert segments[0].chunk == 4 and not segments[0].keep  # 4 tiles of 16 KB per chunk: 8 chunks
        _same(ex.run(arrays), want)
        assert ex.peak_bytes == 0  # no value is held whole


@pytest.mark.parametrize("dt, fp64, kernel", [("fp32", False, ()), ("fp32", True, ("sub",)),
                                              ("bf16", False, ())])
def test_a_segments_elementwise_steps_write_into_one_buffer_per_thread(monkeypatch, dt, fp64, kernel):
    """softmax 256 x 512 at 8 x 512, 64 KB chunks (8 of them): sub, exp and div are each one ufunc
    call per chunk into a buffer of the thread's, reused chunk after chunk, not a kernel call that
    allocates a fresh chunk-sized value (which glibc's malloc returns to the OS and page-faults in
    again: softmax 4096² at 8 x 4096 took 3.4x torch's time for it). The op-by-op bytes, in fp32
    and fp64 (where sub's operands are x in fp32 and a max in fp64: the kernel converts them), and
    in bf16 (the lowering computes in fp32 between casts). Returned arrays stay valid after a later
    run."""
    dtype, tdt = {"fp32": (pypto.DT_FP32, torch.float32), "bf16": (pypto.DT_BF16, torch.bfloat16)}[dt]

    @pypto.jit
    def k(x: pypto.Tensor([256, 512], dtype), out: pypto.Tensor([256, 512], dtype)):
        pypto.set_vec_tile_shapes(8, 512)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(256, 512).to(tdt)
    p, ex, arrays = _executor(k, x, torch.empty_like(x))
    want = ex.run(arrays, fp64=fp64, batched=False)
    calls: list[str] = []
    for kind in ("sub", "exp", "div"):
        def spy(node, xs, ctx, kind=kind, fn=KERNELS[kind]):
            calls.append(kind)
            return fn(node, xs, ctx)
        monkeypatch.setitem(KERNELS, kind, spy)
    for threads in (1, 2):
        ex = _chunked(TileExecutor(p.graph, p.tiles), 1 << 16, threads)
        (segment,) = [item for item in ex.plan().order if isinstance(item, Segment)]
        assert segment.n // segment.chunk == 8
        calls.clear()
        first = ex.run(arrays, fp64=fp64)
        assert sorted(calls) == sorted(kernel * 8), calls
        kept = {n: a.copy() for n, a in first.items()}
        second = ex.run(arrays, fp64=fp64)
        _same(first, want)
        _same(second, want)
        _same(first, kept)
        assert not any(np.shares_memory(first[n], second[n]) for n in first)


@SWEEP
@given(rows=hs.integers(1, 70), cols=hs.sampled_from([8, 40, 64, 200]), tr=hs.sampled_from([1, 4, 16]),
       tc=hs.sampled_from([16, 32, 64]), dt=hs.sampled_from(["fp32", "fp16", "int32"]),
       op=hs.sampled_from(["sum", "amax", "argmax", "argmin"]), dim=hs.sampled_from([0, 1]),
       chunk=hs.sampled_from([64, 512, 4096]), threads=hs.sampled_from([1, 2]), seed=hs.integers(0, 99))
def test_sweep_segments(rows, cols, tr, tc, dt, op, dim, chunk, threads, seed):
    """Elementwise chains with broadcast operands and reductions (partials, combines, arg offsets)
    across tails, run in segments of any chunk size: the op-by-op bytes."""
    fn = getattr(pypto, op)
    dtype = {"fp32": pypto.DT_FP32, "fp16": pypto.DT_FP16, "int32": pypto.DT_INT32}[dt]

    @pypto.jit
    def k(x: pypto.Tensor([rows, cols], dtype), b: pypto.Tensor([cols], dtype)) -> tuple[pypto.Tensor(),
                                                                                         pypto.Tensor()]:
        pypto.set_vec_tile_shapes(tr, tc)
        y = pypto.maximum(x * 3 - b, x + b)
        return y, fn(y, dim, True)

    g = torch.Generator().manual_seed(seed)
    if dt == "int32":
        x, b = (torch.randint(-50, 50, s, generator=g, dtype=torch.int32) for s in ([rows, cols], [cols]))
    else:
        x, b = ((torch.randn(s, generator=g) * 3).to(torch.float16 if dt == "fp16" else torch.float32)
                for s in ([rows, cols], [cols]))
    p, ex, arrays = _executor(k, x, b)
    ex = _chunked(ex, chunk, threads)
    _same(ex.run(arrays), ex.run(arrays, batched=False))


# ---- matmul: every tile at one BLAS thread, a wave's tiles side by side ---------------------------

def _matmul_executor(m: int = 512, k: int = 1024, n: int = 512, tile: int = 256):
    @pypto.jit
    def mm(a: pypto.Tensor([m, k], pypto.DT_FP32), b: pypto.Tensor([k, n], pypto.DT_FP32)) -> pypto.Tensor():
        pypto.set_cube_tile_shapes([tile // 2, tile], [tile // 2, tile], [tile // 2, tile])
        return pypto.matmul(a, b, pypto.DT_FP32)

    g = torch.Generator().manual_seed(7)
    return _executor(mm, torch.randn(m, k, generator=g), torch.randn(k, n, generator=g))


def test_a_wave_of_matmul_tiles_on_threads_equals_the_op_by_op_run():
    """The wave's tiles run on 2 threads (one BLAS thread each) and give the op-by-op run's bytes,
    which are each tile's product at one BLAS thread — of contiguous copies of its operands, though
    the kernel now hands BLAS views of A's rows and B's columns; the cpu board's, with 1 and 2
    workers, too."""
    p, ex, arrays = _matmul_executor()
    plan = ex.plan()
    assert [(s.kind, len(s.ops)) for s in plan.steps] == [("each", 4)]  # one wave of 2 x 2 tiles
    ex.threads = 2
    want = ex.run(arrays, batched=False)
    for _ in range(3):  # the threads take tiles in whatever order: the bytes never change
        _same(ex.run(arrays), want)
    for workers in (1, 2):
        _same(run_cpu(p, arrays, workers, ex)[0], want)
    a, b = arrays["a"], arrays["b"]
    with one_blas_thread():
        tiles = [[np.matmul(a[i:i + 256].copy(), b[:, j:j + 256].copy()) for j in (0, 256)] for i in (0, 256)]
    assert np.block(tiles).tobytes() == np.ascontiguousarray(next(iter(want.values()))).tobytes()


@pytest.mark.skipif((blas_threads() or 1) < 2, reason="needs OpenBLAS at 2 or more threads")
def test_the_tiles_bytes_do_not_depend_on_blas_threads():
    """What the scope guards: the executor's bytes for a 256 x 1024 x 256 tile are the one-thread
    ones whatever BLAS's count outside (2 or more here). Where BLAS at that count gives other bytes
    than at one thread (OpenBLAS splits the sum over threads on some CPUs, not on others: a property
    of the machine), the test tells the two apart; where it gives the same bytes, it checks what it
    can and skips, naming the premise."""
    p, ex, arrays = _matmul_executor()
    a, b = arrays["a"][:256], arrays["b"][:, :256]
    many = np.matmul(a, b)
    with one_blas_thread():
        one = np.matmul(a, b)
    got = next(iter(ex.run(arrays).values()))
    assert np.ascontiguousarray(got[:256, :256]).tobytes() == one.tobytes()
    assert np.matmul(a, b).tobytes() == many.tobytes()  # the count outside is restored
    if many.tobytes() == one.tobytes():
        pytest.skip(f"BLAS gives the same bytes at {blas_threads()} threads as at one on this machine: "
                    "the executor's bytes cannot be told apart from the many-thread ones here")


def test_the_blas_scope_is_counted_and_restores_the_count():
    before = blas_threads()
    if before is None:
        pytest.skip("no OpenBLAS thread setter in this process")
    with one_blas_thread():
        assert blas_threads() == 1
        with one_blas_thread():
            assert blas_threads() == 1
        assert blas_threads() == 1  # the inner scope's exit leaves the outer one's count
    assert blas_threads() == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_inside_the_blas_scope_starts_outside_it():
    """A child forked while a scope is held (by this thread, or by one the child does not have) gets
    BLAS's count back and a lock it can take; the scope entered before the fork ends harmlessly there."""
    before = blas_threads()
    if before is None:
        pytest.skip("no OpenBLAS thread setter in this process")
    with one_blas_thread():
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code, never return into pytest
            ok = blas_threads() == before
            with one_blas_thread():
                ok = ok and blas_threads() == 1
            ok = ok and blas_threads() == before
    if pid == 0:
        os._exit(0 if ok and blas_threads() == before else 1)  # the scope from before the fork ended: no change
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert blas_threads() == before


@pytest.mark.parametrize("threads", ["one", "blas's own"])
def test_the_matmul_kernel_takes_views_without_changing_bytes(threads):
    """The matmul kernel gives BLAS a view it takes as it is (rows of A, a column block of B, their
    transposes) instead of a copy: the same bytes as on contiguous copies. A view BLAS cannot take
    (a stride along both axes) is still copied."""
    g = np.random.default_rng(3)
    big_a, big_b = g.standard_normal((300, 700), dtype=np.float32), g.standard_normal((700, 500), dtype=np.float32)
    cases = {"rows x column block": (big_a[100:196], big_b[:, 40:120]),
             "transposed views": (big_b[:, 10:106].T, big_a[20:100].T),
             "strided both ways": (big_a[0:192:2, 0:640:2], big_b[0:640:2, 0:80])}
    kernel = KERNELS["matmul"]
    ctx = Ctx({})
    scope = one_blas_thread() if threads == "one" else contextlib.nullcontext()
    with scope:
        for what, (a, b) in cases.items():
            mm = Node(0, "matmul", (0, 1), TensorType((a.shape[0], b.shape[1]), DataType.DT_FP32))
            got = kernel(mm, [a, b], ctx)
            want = kernel(mm, [np.ascontiguousarray(a), np.ascontiguousarray(b)], ctx)
            assert got.tobytes() == want.tobytes(), what


def test_without_control_of_blas_threads_matmuls_run_one_at_a_time_and_agree():
    """PYPTO_BLAS_ONE_THREAD=0 (as where BLAS is not OpenBLAS): BLAS keeps its own thread count, the
    executor runs a wave's tiles one by one, the board one matmul task at a time, and the bytes of the
    batched run, the op-by-op run and the board still agree."""
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import numpy as np, torch, pypto
        from support import lowered
        from pypto.boards.cpu import run_cpu
        from pypto.compiler.blas import blas_controlled

        @pypto.jit
        def mm(a: pypto.Tensor([512, 1024], pypto.DT_FP32),
               b: pypto.Tensor([1024, 512], pypto.DT_FP32)) -> pypto.Tensor():
            pypto.set_cube_tile_shapes([128, 256], [128, 256], [128, 256])
            return pypto.matmul(a, b, pypto.DT_FP32)

        g = torch.Generator().manual_seed(7)
        _, lw, arrays, _ = lowered(mm, torch.randn(512, 1024, generator=g), torch.randn(1024, 512, generator=g))
        ex = lw.executor
        ex.threads = 2
        want = ex.run(arrays, batched=False)
        runs = [ex.run(arrays), run_cpu(lw.program, arrays, 2, ex)[0]]
        same = all(r[k].tobytes() == want[k].tobytes() for r in runs for k in want)
        print("controlled" if blas_controlled() else "free", "same" if same else "differ")
    """)
    env = {**os.environ, "PYPTO_BLAS_ONE_THREAD": "0"}
    tests = str(pathlib.Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", code, tests], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["free", "same"]
