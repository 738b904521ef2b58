"""Writing the first half of the columns into the whole output."""

import torch

import pypto


@pypto.frontend.jit
def first_half(x: pypto.Tensor([8, 64], pypto.DT_FP32),
               out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = x[:, 0:32]  # ERROR: assigning shape \[8, 32\] to a slice of shape \[8, 64\] \(dim 1: 32 vs 64\)


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    first_half(x, out)
