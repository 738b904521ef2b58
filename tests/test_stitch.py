"""The sim board's stitching (pypto/boards/stitch.py): root functions of unrolled loops, count mode and the
memory-driven mode of `max_workspace_kb`, against the rules PyPTO's runtime options document."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from support import lowered

import pypto
from pypto.boards.sim import simulate
from pypto.boards.stitch import _chunks, plan, root_workspace
from pypto.boards.swimlane import metrics

ROWS, TILE = 160, 16  # 10 iterations of a loop over row blocks


def _rows_kernel(unroll: list[int] | None, **runtime):  # type: ignore[no-untyped-def]
    """A loop over row blocks, each a matmul whose result the vector cores read back from GM: every iteration
    writes workspace of its own."""
    @pypto.frontend.jit(runtime_options=runtime)
    def k(x: pypto.Tensor([ROWS, 32], pypto.DT_FP32), w: pypto.Tensor([32, 32], pypto.DT_FP32),
          out: pypto.Tensor([ROWS, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(TILE, 32)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        for i in pypto.loop(0, ROWS // TILE, 1, name="ROWS", idx_name="i", unroll_list=unroll):
            part = pypto.view(x, [TILE, 32], [i * TILE, 0])
            pypto.assemble(pypto.exp(pypto.matmul(part, w, pypto.DT_FP32)), [i * TILE, 0], out)
    return k


def _program(unroll: list[int] | None = None, **runtime):  # type: ignore[no-untyped-def]
    x, w = torch.randn(ROWS, 32), torch.randn(32, 32)
    return lowered(_rows_kernel(unroll, **runtime), x, w, torch.empty_like(x))[1].program


def _loop_ranks(program) -> list[int]:  # type: ignore[no-untyped-def]
    """The instance ranks of the loop's iterations (the kernel body's is not one)."""
    ranks = sorted({t.instance for t in program.execute.tasks})
    loops = {i.id for i in program.tiles.instances if i.root != -1}
    return [r for r, inst in enumerate(ranks) if inst in loops]


@given(st.integers(0, 200), st.lists(st.integers(1, 40), min_size=1, max_size=4))
def test_an_unrolled_loops_iterations_are_each_in_one_root_function(n, factors):
    fs = tuple(sorted(set(factors) | {1}, reverse=True))
    sizes = _chunks(n, fs)
    assert sum(sizes) == n and all(1 <= s <= fs[0] for s in sizes)
    assert sizes[:n // fs[0]] == [fs[0]] * (n // fs[0])  # the largest factor's loop covers its whole multiples


@given(st.integers(0, 300), st.lists(st.integers(1, 4), min_size=1, max_size=4))
def test_factors_that_divide_each_other_split_as_loop_unroll_does(n, exponents):
    """[8, 4, 2, 1], [16, 1], [64, 1] (what PyPTO's models write): largest first, each factor's loop over what the
    larger ones left, every root function exactly one factor's iterations."""
    fs = tuple(sorted({2 ** sum(exponents[:k]) for k in range(len(exponents) + 1)}, reverse=True))
    sizes = _chunks(n, fs)
    assert sum(sizes) == n and sizes == sorted(sizes, reverse=True) and set(sizes) <= set(fs)
    left = n
    for f in fs:
        assert sizes.count(f) == left // f
        left %= f


def test_known_splits():
    assert _chunks(10, (4, 1)) == [4, 4, 1, 1]
    assert _chunks(23, (16, 4, 1)) == [16, 4, 1, 1, 1]
    assert _chunks(3, (8, 1)) == [1, 1, 1]


def test_unroll_list_groups_a_loops_iterations_into_root_functions():
    plain, unrolled = _program(), _program([4, 1])
    loop = _loop_ranks(unrolled)
    assert len(loop) == 10
    root = plan(unrolled, {}).root_function
    sizes = [list(root[loop]).count(r) for r in dict.fromkeys(root[loop].tolist())]
    assert sizes == [4, 4, 1, 1]
    assert plan(plain, {}).info["root_functions"] == plan(plain, {}).root_function.max() + 1 >= 10
    # one root function per device task: 4 device tasks for the loop instead of 10
    one = {"stitch_function_max_num": 1}
    assert simulate(unrolled, runtime_options=one).info["device_tasks"] < \
        simulate(plain, runtime_options=one).info["device_tasks"]


def test_count_mode_is_stitch_function_max_num_root_functions_a_device_task():
    program = _program()
    for k in (1, 3, 128):
        s = plan(program, {"stitch_function_max_num": k})
        assert s.info["stitch_mode"] == "count"
        assert (s.window == s.root_function // k).all()


def test_memory_driven_mode_packs_root_functions_by_their_workspace():
    program = _program()
    ranks = sorted({t.instance for t in program.execute.tasks})
    ws = root_workspace(program, ranks, plan(program, {}).root_function)  # (a root function per instance here)
    loop = _loop_ranks(program)
    assert (ws[loop] > 0).all()  # each iteration writes the workspace its matmul's result passes through
    largest = int(ws.max())
    # a budget of about three iterations' workspace: windows of at most that, stitch_function_max_num ignored
    budget_kb = (3 * largest) // 1024 + 1
    s = plan(program, {"stitch_function_max_num": 1, "max_workspace_kb": budget_kb})
    assert s.info["stitch_mode"] == "memory"
    for w in set(s.window.tolist()):
        assert ws[s.window == w].sum() <= budget_kb * 1024
    assert len(set(s.window.tolist())) < len(ranks)  # deeper than one root function a device task
    # the whole kernel in one device task when the budget holds it all
    whole = plan(program, {"stitch_function_max_num": 1, "max_workspace_kb": int(ws.sum()) // 1024 + 1})
    assert set(whole.window.tolist()) == {0}


def test_a_budget_at_or_below_the_largest_root_function_is_count_mode_and_says_so():
    program = _program()
    s = plan(program, {"stitch_function_max_num": 2, "max_workspace_kb": 1})
    assert s.info["stitch_mode"] == "count"
    assert "max_workspace_kb 1 is not above" in s.info["stitch_note"]
    assert (s.window == s.root_function // 2).all()


@pytest.mark.parametrize("jit", ["0", "1"])
def test_the_kernels_own_workspace_budget_stitches_deeper_and_runs_faster(monkeypatch, jit):
    """The kernel's own runtime options reach the board (both of its paths): with a budget that holds the kernel,
    stitch_function_max_num 1 no longer runs one iteration per device task."""
    monkeypatch.setenv("PYPTO_SIM_JIT", jit)
    serial = _program(stitch_function_max_num=1)
    budget = _program(stitch_function_max_num=1, max_workspace_kb=1 << 20)
    a = simulate(serial, runtime_options={"stitch_function_max_num": 1})
    b = simulate(budget, runtime_options={"stitch_function_max_num": 1, "max_workspace_kb": 1 << 20})
    assert a.info["device_tasks"] > 1 and b.info["device_tasks"] == 1
    assert b.info["stitch_mode"] == "memory" and b.info["root_workspace_kb"] >= 1
    assert metrics(b).makespan < metrics(a).makespan


def test_the_bound_of_a_run_over_several_device_tasks_names_them():
    """Lanes idle with no ready task: waiting for predecessors, or for a device task to launch — the why says how
    many ran one after another (a run in one device task is not said to wait for one)."""
    from pypto.boards.profile import bottleneck

    program = _program()
    serial = simulate(program, runtime_options={"stitch_function_max_num": 1})
    bound, why = bottleneck(serial)
    assert bound == "dependency", (bound, why)
    assert f"or for their device task ({serial.info['device_tasks']} ran one after another)" in why
    deep = simulate(program, runtime_options={"stitch_function_max_num": 1, "max_workspace_kb": 1 << 20})
    assert deep.info["device_tasks"] == 1 and "device task" not in bottleneck(deep)[1]


def _fake(tasks, buffers):  # type: ignore[no-untyped-def]
    """A program as `root_workspace` reads it: buffers (bytes, kind), tasks (instance, buffers read, written)."""
    from types import SimpleNamespace as N

    return N(tiles=N(buffers=[N(shape=(nb,), dtype=N(nbytes=1), kind=kind) for nb, kind in buffers]),
             execute=N(columns=None, tasks=[N(id=i, instance=inst, reads=[N(buffer=b) for b in rd],
                                              writes=[N(buffer=b) for b in wr])
                                            for i, (inst, rd, wr) in enumerate(tasks)]))


def test_a_root_functions_workspace_is_its_peak_of_live_buffers():
    """Buffers that die before the next is made share their bytes; one a later root function reads stays live to its
    own root function's end; parameters and outputs are not workspace."""
    buffers = [(100, "workspace"), (100, "workspace"), (50, "local"), (1000, "param"), (30, "workspace")]
    tasks = [
        (0, [3], [0]),  # root 0: writes ws0 (100) from the parameter
        (0, [0], [1]),  # reads ws0 (its last access), writes ws1: both live here, 200
        (0, [1], [2]),  # ws0 dead; ws1 and the local: 150
        (0, [], [4]),   # ws4 (30), read by root 1: live to root 0's end
        (1, [4], [1]),  # root 1 writes ws1 again: ws1 is root 0's (its first writer), not root 1's
    ]
    assert root_workspace(_fake(tasks, buffers), [0, 1], np.array([0, 1])).tolist() == [200, 0]
    # the two instances one root function (an unrolled loop's): its peak, not the sum
    assert root_workspace(_fake(tasks, buffers), [0, 1], np.array([0, 0])).tolist() == [200]
