"""Passing a 3-D batch to a kernel that declares a 2-D input: PyPTO reads a DYNAMIC annotation as
the leading dims, so the argument's dim 1 (8) meets the declared 64."""

import torch

import pypto


@pypto.frontend.jit
def row_sum(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.sum(x, dim=-1, keepdim=True)


def trigger() -> None:
    x = torch.rand(2, 8, 64)
    out = torch.empty(2, 8, 1)
    row_sum(x, out)  # ERROR: argument 'x' has dim 1 = 8 but the kernel declares 64 \(the annotation's 2 dims are the leading dims of this rank-3 argument\)
