"""Passing a 1-D vector to a kernel that declares a 2-D input."""

import torch

import pypto


@pypto.frontend.jit
def row_sum(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.sum(x, dim=-1, keepdim=True)


def trigger() -> None:
    row_sum(torch.rand(64), torch.empty(1, 1))  # ERROR: argument 'x' has rank 1 \(shape \[64\]\) but the kernel declares rank 2 or more
