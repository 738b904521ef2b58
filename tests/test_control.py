"""Control flow PyPTO kernels use: loop_unroll, unroll_list, and `if` on run-time values (runtime branches)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto
import pypto.record

W = 32


def _unrolled(unroll_list):
    @pypto.frontend.jit
    def unrolled(x: pypto.Tensor([pypto.DYNAMIC, W], pypto.DT_FP32),
                 y: pypto.Tensor([pypto.DYNAMIC, W], pypto.DT_FP32)):
        b = x.shape[0]
        for idx, factor in pypto.loop_unroll(0, b, 1, name="rows", idx_name="r", unroll_list=unroll_list):
            pypto.set_vec_tile_shapes(factor, W)
            t = pypto.view(x, [factor, W], [idx, 0])
            y[idx:idx + factor, :] = t * 2.0 + float(factor)
    return unrolled


def _expected(x, unroll_list):
    """PyPTO's loop_unroll: factors largest first, each over what the larger ones left, the
    remainder taken of the whole range."""
    out = np.zeros_like(x)
    n, lo = x.shape[0], 0
    for f in sorted(set(unroll_list) | {1}, reverse=True):
        left = n % f
        for i in range(lo, n - left, f):
            out[i:i + f] = x[i:i + f] * 2.0 + f
        lo = n - left
    return out


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 40), factors=st.sampled_from([[4, 2, 1], [8, 4, 2], [2], [16, 4]]))
def test_loop_unroll_over_random_dynamic_sizes(rows, factors):
    k = _unrolled(factors)
    x = np.random.default_rng(rows).random((rows, W), dtype=np.float32)
    y = np.zeros_like(x)
    k(x, y)
    np.testing.assert_allclose(y, _expected(x, factors), rtol=1e-6)


def test_loop_unroll_is_one_loop_per_factor_named_as_pypto_names_them():
    k = _unrolled([4, 2])
    x = np.ones((11, W), np.float32)
    ck = k.compile(x, np.zeros_like(x))
    loops = [n for n in ck.graph.nodes if n.op == "loop"]
    assert [n.attrs["name"] for n in loops] == ["rows_LoopUnroll4", "rows_LoopUnroll2", "rows_LoopUnroll1"]
    assert k.compile_count == 1


def test_loop_accepts_unroll_list_as_a_recorded_hint():
    @pypto.frontend.jit
    def hinted(x: pypto.Tensor([16, W], pypto.DT_FP32), y: pypto.Tensor([16, W], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, W)
        for i in pypto.loop(0, 16, 4, name="L", idx_name="i", unroll_list=[4, 2, 1]):
            y[i:i + 4, :] = pypto.view(x, [4, W], [i, 0]) + 1.0

    x = np.ones((16, W), np.float32)
    y = np.zeros_like(x)
    hinted(x, y)
    assert np.allclose(y, 2.0)
    loop = next(n for n in hinted.compile(x, y).graph.nodes if n.op == "loop")
    assert loop.attrs["unroll_list"] == (4, 2, 1)


@pypto.frontend.jit
def cumulative(x: pypto.Tensor([pypto.DYNAMIC, W], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, W], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, W)
    for i in pypto.loop(0, x.shape[0], 1, name="rows", idx_name="i"):
        if i == 0:
            out[i:i + 1, :] = x[i:i + 1, :]
        else:
            out[i:i + 1, :] = x[i:i + 1, :] + out[i - 1:i, :]


@pytest.mark.parametrize("rows", [1, 2, 9])
def test_an_if_on_the_loop_index_is_a_runtime_branch(rows):
    x = np.random.default_rng(rows).random((rows, W), dtype=np.float32)
    out = np.zeros_like(x)
    cumulative(x, out)
    np.testing.assert_allclose(out, np.cumsum(x, axis=0), rtol=1e-5)


def test_both_sides_are_in_the_graph_and_only_the_taken_one_runs():
    x = np.ones((5, W), np.float32)
    record = pypto.record.compile_record(cumulative, {"x": x, "out": np.zeros_like(x)})
    loops = {n.attrs["name"]: n for n in record.program.graph.nodes if n.op == "loop"}
    rows = loops["rows"]
    sides = {n.attrs["branch"]: n for n in rows.body.nodes if n.op == "loop"}
    assert set(sides) == {"then", "else"} and sides["then"].attrs["condition"] == "i == 0"
    tiles = record.program.tiles
    runs = {side: sorted(dict(i.index)["i"] for i in tiles.instances if i.root == n.id) for side, n in sides.items()}
    assert runs == {"then": [0], "else": [1, 2, 3, 4]}  # one instance per iteration that took the side


@pypto.frontend.function
def first_or_rest(x, out, i):
    if i == 0:  # a run-time branch inside a helper: @pypto.frontend.function gives it the kernel's meaning
        out[i:i + 1, :] = x[i:i + 1, :] * 2.0
    else:
        out[i:i + 1, :] = x[i:i + 1, :] + 1.0


@pypto.frontend.jit
def with_helper(x: pypto.Tensor([pypto.DYNAMIC, W], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, W], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, W)
    for i in pypto.loop(0, x.shape[0], 1, name="rows", idx_name="i"):
        first_or_rest(x, out, i)


def test_a_runtime_branch_inside_a_frontend_function_helper():
    x = np.random.default_rng(3).random((5, W), dtype=np.float32)
    out = np.zeros_like(x)
    with_helper(x, out)
    want = x + 1.0
    want[0] = x[0] * 2.0
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pypto.jit
def _phis(x: pypto.Tensor([4, 64], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
          out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    flag = n[0]
    y = x * 2.0
    if flag > 3:  # both sides give z; y only on this side, but y had a value before
        y = pypto.exp(x)
        z = x + 1.0
    else:
        z = x - 1.0
    w = x * 0.0
    if flag > 5:  # no else: w keeps its value when not taken
        w = w + x + 10.0
    out[:] = y + z + w


@pytest.mark.parametrize("flag", [0, 4, 9])
def test_a_name_a_runtime_if_assigns_holds_the_value_of_the_side_that_ran(flag):
    """After an `if` on a run-time value a name is a phi (as DeepSeek V4's compressor writes
    `state = update(state, …)` in both sides): the taken side's value, else its value before."""
    import torch

    x, out = torch.randn(4, 64), torch.empty(4, 64)
    _phis(x, torch.tensor([flag], dtype=torch.int32), out)
    y = x.exp() if flag > 3 else x * 2
    z = x + 1 if flag > 3 else x - 1
    w = x + 10 if flag > 5 else x * 0
    assert torch.allclose(out, y + z + w, atol=1e-5)


def _update(state, x):  # type: ignore[no-untyped-def]
    return state + x


@pypto.jit
def _both_sides_update(x: pypto.Tensor([4, 64], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
                       out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    state = x * 1.0
    if n[0] > 3:
        state = _update(state, x * 2.0)
    else:  # traced after the `then` side, it starts from `state` as it was before the `if`
        state = _update(state, x * 3.0)
    out[:] = state


@pytest.mark.parametrize("flag", [0, 9])
def test_each_side_of_a_runtime_if_starts_from_the_values_before_it(flag):
    import torch

    x, out = torch.randn(4, 64), torch.empty(4, 64)
    _both_sides_update(x, torch.tensor([flag], dtype=torch.int32), out)
    assert torch.allclose(out, x * (3 if flag > 3 else 4), atol=1e-5)


@pypto.jit
def _sides_differ_unused(x: pypto.Tensor([8, 64], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
                         out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * 1.0
    if n[0] > 0:
        tmp = x * 2.0  # different shapes on the two sides, and not used after the `if`: fine
        out[:] = tmp
    else:
        tmp = x[0:4, :] * 3.0
        out[0:4, :] = tmp


@pytest.mark.parametrize("flag", [0, 1])
def test_a_name_whose_sides_differ_in_shape_is_fine_when_unused_after_the_if(flag):
    import torch

    x, out = torch.randn(8, 64), torch.empty(8, 64)
    _sides_differ_unused(x, torch.tensor([flag], dtype=torch.int32), out)
    want = x * 2 if flag else torch.cat([x[:4] * 3, x[4:]])
    assert torch.allclose(out, want, atol=1e-6)


@pypto.jit
def _nested(x: pypto.Tensor([4, 64], pypto.DT_FP32), n: pypto.Tensor([2], pypto.DT_INT32),
            out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    if n[0] > 3:
        kv = x * 2.0  # made on the outer `then` side only
        out[:] = kv
    else:  # starts with `kv` unbound again; the inner if's phi must not reach into the outer `then`
        if n[1] > 0:
            kv = x * 3.0
        else:
            kv = x * 4.0
        out[:] = kv


@pytest.mark.parametrize("flags", [(5, 0), (0, 1), (0, 0)])
def test_an_if_nested_in_the_else_side_of_another(flags):
    """DeepSeek V4's compressor: an inner if in the outer else side assigns a name the outer then
    side made (it used to reach an internal error in the verify pass)."""
    import torch

    x, out = torch.randn(4, 64), torch.empty(4, 64)
    _nested(x, torch.tensor(flags, dtype=torch.int32), out)
    want = x * (2 if flags[0] > 3 else 3 if flags[1] > 0 else 4)
    assert torch.allclose(out, want, atol=1e-6)
