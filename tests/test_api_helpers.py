"""Small public helpers and lenient signatures real PyPTO kernels rely on: `pypto.ceildiv` on ints and
symbolic scalars, `pypto.loop` / `pypto.loop_unroll` keyword arguments they do not read,
`pypto.symbolic_scalar` of a Python bool. Each is checked by running a kernel against torch."""

from __future__ import annotations

import sys

import pytest
import torch

import pypto
from pypto.tracing.scalar import SymbolicScalar

WIDTH = 64


@pytest.mark.parametrize(("a", "b", "want"), [(0, 4, 0), (1, 4, 1), (4, 4, 1), (7, 4, 2), (9, 3, 3), (10, 3, 4)])
def test_ceildiv_of_ints_rounds_up(a: int, b: int, want: int) -> None:
    assert pypto.ceildiv(a, b) == want


def test_ceildiv_of_a_concrete_symbolic_scalar_is_concrete() -> None:
    got = pypto.ceildiv(pypto.symbolic_scalar(7), 4)
    assert isinstance(got, int | SymbolicScalar) and int(got) == 2


@pypto.frontend.jit
def groups_of_four(lens: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
                   x: pypto.Tensor([pypto.DYNAMIC, WIDTH], pypto.DT_FP32),
                   y: pypto.Tensor([pypto.DYNAMIC, WIDTH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, WIDTH)
    n = lens[0]
    for g in pypto.loop(pypto.ceildiv(n, 4), name="LOOP_G", idx_name="g"):
        y[g * 4:g * 4 + 4, :] = pypto.view(x, [4, WIDTH], [g * 4, 0]) * 2.0


@pytest.mark.parametrize("n", [1, 4, 5, 8, 9])
def test_ceildiv_of_a_run_time_value_sizes_a_loop(n: int) -> None:
    x = torch.rand(12, WIDTH)
    y = torch.zeros(12, WIDTH)
    groups_of_four(torch.tensor([n], dtype=torch.int32), x, y)
    done = -(-n // 4) * 4  # whole groups of four rows
    torch.testing.assert_close(y[:done], x[:done] * 2)
    assert torch.all(y[done:] == 0)


@pypto.frontend.jit
def doubled_by_unrolled_loop(x: pypto.Tensor([pypto.DYNAMIC, WIDTH], pypto.DT_FP32),
                             y: pypto.Tensor([pypto.DYNAMIC, WIDTH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, WIDTH)
    for i, f in pypto.loop_unroll(0, x.shape[0], 4, name="L", idx="i", unroll_list=[2, 1]):
        y[i:i + 4 * f, :] = pypto.view(x, [4 * f, WIDTH], [i, 0]) * 2.0


@pypto.frontend.jit
def tripled_by_loop(x: pypto.Tensor([pypto.DYNAMIC, WIDTH], pypto.DT_FP32),
                    y: pypto.Tensor([pypto.DYNAMIC, WIDTH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, WIDTH)
    for i in pypto.loop(0, x.shape[0], 4, name="L", index_name="i", schedule="any"):
        y[i:i + 4, :] = pypto.view(x, [4, WIDTH], [i, 0]) * 3.0


@pytest.mark.parametrize("rows", [4, 8, 12, 16])
def test_loop_unroll_ignores_a_keyword_it_does_not_read_with_a_warning_at_the_users_line(rows: int) -> None:
    x = torch.rand(rows, WIDTH)
    y = torch.zeros(rows, WIDTH)
    with pytest.warns(pypto.PyptoWarning, match=r"ignores the keyword 'idx' \(did you mean 'idx_name'\?\)") as got:
        doubled_by_unrolled_loop.fresh()(x, y)
    torch.testing.assert_close(y, x * 2)
    w = next(w for w in got if "ignores" in str(w.message))
    assert w.filename == __file__ and "loop_unroll(" in open(__file__).read().splitlines()[w.lineno - 1]


def test_loop_ignores_keywords_it_does_not_read() -> None:
    x = torch.rand(8, WIDTH)
    y = torch.zeros(8, WIDTH)
    with pytest.warns(pypto.PyptoWarning, match=r"pypto.loop ignores the keywords 'index_name' \(did you mean "
                                                r"'idx_name'\?\), 'schedule'"):
        tripled_by_loop.fresh()(x, y)
    torch.testing.assert_close(y, x * 3)


@pytest.mark.parametrize(("flag", "want"), [(True, 1), (False, 0)])
def test_symbolic_scalar_of_a_bool_is_its_int(flag: bool, want: int) -> None:
    s = pypto.symbolic_scalar(flag)
    assert s.is_concrete() and s.concrete() == want and bool(s) is flag
    assert pypto.SymbolicScalar(flag).concrete() == want
    assert int(s + 2) == want + 2


@pypto.frontend.jit
def doubled_if(x: pypto.Tensor([8, WIDTH], pypto.DT_FP32), y: pypto.Tensor([8, WIDTH], pypto.DT_FP32), flag):
    pypto.set_vec_tile_shapes(8, WIDTH)
    if pypto.symbolic_scalar(flag):
        y[:] = x * 2.0
    else:
        y[:] = x + 1.0


def test_if_on_the_symbolic_scalar_of_a_bool_argument_takes_its_side() -> None:
    x = torch.rand(8, WIDTH)
    for flag in (True, False, True):
        y = torch.zeros(8, WIDTH)
        doubled_if(x, y, flag)
        torch.testing.assert_close(y, x * 2 if flag else x + 1)


@pypto.frontend.jit
def transposed_with_one_dim(x: pypto.Tensor([8, WIDTH], pypto.DT_FP32), out: pypto.Tensor([WIDTH, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(WIDTH, 8)
    out[:] = pypto.transpose(x, 1)


@pypto.frontend.jit
def exp_with_unknown_keyword(x: pypto.Tensor([8, WIDTH], pypto.DT_FP32), out: pypto.Tensor([8, WIDTH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, WIDTH)
    out[:] = x.exp(approx=True)


@pypto.frontend.jit
def indexed_by_a_tensor(x: pypto.Tensor([8, WIDTH], pypto.DT_FP32), idx: pypto.Tensor([4], pypto.DT_INT32),
                        out: pypto.Tensor([4, WIDTH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, WIDTH)
    out[:] = x[idx]


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(open(__file__).read().splitlines(), 1) if text in line)


def test_a_call_with_a_missing_argument_is_an_error_at_the_line_naming_the_signature() -> None:
    with pytest.raises(pypto.PyptoError, match=r"pypto.transpose\(input, dim0, dim1\): missing a required "
                                               r"argument: 'dim1'") as e:
        transposed_with_one_dim(torch.rand(8, WIDTH), torch.zeros(WIDTH, 8))
    assert f":{_line_of('pypto.transpose(x, 1)')}:" in str(e.value)


def test_a_method_call_with_an_unknown_keyword_names_the_function_signature() -> None:
    with pytest.raises(pypto.PyptoError, match=r"pypto.exp\(input\): got an unexpected keyword argument 'approx'"):
        exp_with_unknown_keyword(torch.rand(8, WIDTH), torch.zeros(8, WIDTH))


def test_indexing_with_a_tensor_names_gather_and_index_select() -> None:
    with pytest.raises(pypto.PyptoError, match=r"indexing with a tensor .*pypto.gather or pypto.index_select") as e:
        indexed_by_a_tensor(torch.rand(8, WIDTH), torch.tensor([1, 2, 3, 0], dtype=torch.int32), torch.zeros(4, WIDTH))
    assert f":{_line_of('out[:] = x[idx]')}:" in str(e.value)


@pypto.frontend.jit
def flagged(x: pypto.Tensor([8, WIDTH], pypto.DT_FP32), y: pypto.Tensor([8, WIDTH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, WIDTH)
    seen = pypto.SymbolicScalar("seen") + 1  # a runtime symbol without a value, as DeepSeek V4's compressor has
    if seen > 0:
        y[:] = x * 2.0


def test_a_named_symbolic_scalar_takes_its_initial_value_and_one_without_is_zero_with_a_warning() -> None:
    """PyPTO's constructor takes a name, with an initial value or without (the device's runtime binds it)."""
    assert pypto.SymbolicScalar("n", 10).concrete() == 10 and int(pypto.SymbolicScalar("n", 3) * 2) == 6
    with pytest.warns(pypto.PyptoWarning, match=r"pypto.SymbolicScalar\('seen'\) has no value: .* this compile "
                                                r"takes 0") as said:
        named = pypto.SymbolicScalar("seen"); line = sys._getframe().f_lineno  # noqa: E702 - the call's own line
    assert named.concrete() == 0
    assert (said[0].filename, said[0].lineno) == (__file__, line)  # at the user's line, not ours
    x, y = torch.rand(8, WIDTH), torch.zeros(8, WIDTH)
    with pytest.warns(pypto.PyptoWarning, match="has no value"):
        flagged(x, y)
    torch.testing.assert_close(y, x * 2)
