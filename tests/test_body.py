"""Builtin min()/max() in a kernel body follow PyPTO: symbolic with a symbolic scalar, builtin otherwise;
the traced body keeps the user's lines and columns, closures, defaults and shadowing."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
from pypto.frontend.body import traced_body


def _tail_kernel(tile: int):
    @pypto.frontend.jit
    def tail(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        b = x.shape[0]
        for idx in pypto.loop((b + tile - 1) // tile, name="rows", idx_name="idx"):
            off = idx * tile
            end = min(off + tile, b)  # a run-time value: b is dynamic
            first = max(off, 0)
            t = pypto.view(x, [tile, 32], [first, 0], valid_shape=[end - off, 32])
            y[off:off + tile, :] = pypto.exp(t)
    return tail


def test_builtin_min_max_on_a_dynamic_dim_make_a_tail():
    k = _tail_kernel(8)
    for rows in (1, 7, 8, 20, 33):
        x = np.random.default_rng(rows).random((rows, 32), dtype=np.float32)
        y = np.zeros_like(x)
        k(x, y)
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert k.compile_count == 1  # min(off + tile, b) stayed symbolic: one trace serves every batch size


def test_builtin_min_max_on_plain_values_stay_builtin():
    @pypto.frontend.jit
    def plain(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(min(8, 16), max([16, 32]))
        y[:] = x * float(min(2, 3)) + max(1, 0, key=abs)

    x = np.ones((8, 32), np.float32)
    y = np.zeros_like(x)
    plain(x, y)
    assert np.allclose(y, 3.0)
    assert pypto.min(3, 4) == 3 and pypto.max(3, 4) == 4


def test_the_traced_body_keeps_lines_and_columns_of_errors():
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        n = min(x.shape[0], 8)
        y[:] = pypto.exp(x) + pypto.view(x, [n, 16], [0, 0])  # shapes disagree

    x = np.ones((8, 32), np.float32)
    with pytest.raises(pypto.PyptoError) as e:
        bad(x, np.zeros_like(x))
    line = bad.fn.__code__.co_firstlineno + 4
    assert e.value.line == line
    text = open(__file__).read().splitlines()[line - 1]
    assert e.value.col == text.index("pypto.exp(x) + pypto.view")


def test_a_shadowed_min_is_left_alone():
    def min(a, b):  # noqa: A001 - the user's own min
        return a

    @pypto.frontend.jit
    def own(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = x * float(min(3, 2))

    assert traced_body(own.fn) is own.fn
    x = np.ones((8, 32), np.float32)
    y = np.zeros_like(x)
    own(x, y)
    assert np.allclose(y, 3.0)


def test_a_body_without_min_or_max_is_traced_as_it_is():
    @pypto.frontend.jit
    def none(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
        y[:] = x

    assert traced_body(none.fn) is none.fn


@pypto.frontend.jit
def module_level(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
                 y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    b = x.shape[0]
    for idx in pypto.loop((b + 7) // 8, name="rows", idx_name="idx"):
        end = min(idx * 8 + 8, b)
        t = pypto.view(x, [8, 32], [idx * 8, 0], valid_shape=[end - idx * 8, 32])
        y[idx * 8:idx * 8 + 8, :] = t + 1.0


def test_a_module_level_kernel_is_rewritten_too():
    assert traced_body(module_level.fn) is not module_level.fn
    x = np.ones((13, 32), np.float32)
    y = np.zeros_like(x)
    module_level(x, y)
    assert np.allclose(y, 2.0)


@pypto.frontend.jit
def branch_error(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(2, name="L", idx_name="i"):
        if i == 0:
            y[:] = x + 1.0
        else:
            y[:] = x + pypto.view(x, [4, 32], [0, 0])  # shapes disagree: the error points here


def test_an_error_inside_a_runtime_branch_points_at_its_line():
    x = np.ones((8, 32), np.float32)
    with pytest.raises(pypto.PyptoError) as e:
        branch_error(x, np.zeros_like(x))
    line = branch_error.fn.__code__.co_firstlineno + 7
    assert e.value.line == line, str(e.value)


def _first_or_rest(out, x, idx):  # type: ignore[no-untyped-def]
    """A plain helper (no decorator) with an `if` on a run-time value: a branch of the program."""
    if idx == 0:
        out[idx:idx + 1, :] = x[idx:idx + 1, :] * 2.0  # HELPER_THEN
    else:
        out[idx:idx + 1, :] = x[idx:idx + 1, :] + 1.0


def _through(out, x, idx):  # type: ignore[no-untyped-def]
    _first_or_rest(out, x, idx)  # a helper calling a helper


@pypto.frontend.jit
def helper_branch(x: pypto.Tensor([4, 64], pypto.DT_FP32), out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for idx in pypto.loop(4):
        _through(out, x, idx)


def test_an_if_inside_a_plain_helper_is_a_runtime_branch_too():
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    out = np.zeros((4, 64), np.float32)
    helper_branch(x, out)
    want = x + 1.0
    want[0] = x[0] * 2.0
    np.testing.assert_allclose(out, want, rtol=1e-6)
    ck = next(iter(helper_branch.cache.values()))
    sides = [n for n in ck.graph.walk() if n.op == "loop" and n.attrs.get("branch")]
    assert sorted(n.attrs["branch"] for n in sides) == ["else", "then"]
    # the helper's lines are kept: the then side's write points at its own line
    then_line = next(k for k, t in enumerate(open(__file__).read().splitlines(), 1) if t.endswith("# HELPER_THEN"))
    then = next(n for n in sides if n.attrs["branch"] == "then")
    assert any(m.loc.span is not None and m.loc.span.line == then_line for m in then.body.walk())  # type: ignore[union-attr]


def test_library_functions_and_builtins_are_called_as_they_are():
    from pypto.frontend.body import user_call

    assert user_call(np.zeros) is np.zeros and user_call(len) is len
    assert user_call(traced_body) is traced_body  # pypto's own
    assert user_call(_through) is not _through and user_call(_through) is user_call(_through)  # once per function


def test_an_assert_on_a_dynamic_dim_is_a_run_time_assertion_and_one_known_now_is_checked_now():
    """PyPTO's parser emits an `assert` on a value only known at run time as a run-time assertion (DeepSeek V4's
    `assert mix_hc == hc_fn.shape[0]` on a DYNAMIC dim), and checks one it can evaluate now: so does the traced body,
    which does not check the run-time one (before, `bool()` of the symbolic test was refused at the line)."""
    rows = pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)

    @pypto.frontend.jit
    def checked(x: rows, y: rows):
        assert x.shape[0] == y.shape[0], "rows differ"  # both dynamic: at run time
        assert x.shape[1] == 32, f"columns are {x.shape[1]}"  # known now: checked now
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = pypto.exp(x)

    x = np.random.default_rng(0).random((16, 32), dtype=np.float32)
    y = np.zeros_like(x)
    checked(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)

    @pypto.frontend.jit
    def wrong(x: rows, y: rows):
        assert x.shape[1] == 64, f"columns are {x.shape[1]}"  # known now, and false
        y[:] = pypto.exp(x)

    with pytest.raises(Exception, match="columns are 32"):
        wrong(x, y)
