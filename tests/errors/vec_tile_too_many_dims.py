"""Six tile sizes: PyPTO takes at most 4 (5 with a warning)."""

import torch

import pypto


@pypto.frontend.jit
def add_kernel(x: pypto.Tensor([2, 2, 2, 2, 4, 64], pypto.DT_FP32),
               y: pypto.Tensor([2, 2, 2, 2, 4, 64], pypto.DT_FP32),
               out: pypto.Tensor([2, 2, 2, 2, 4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 1, 1, 1, 4, 64)  # ERROR: set_vec_tile_shapes takes at most 4 tile sizes, got 6
    out[:] = x + y


def trigger() -> None:
    x = torch.rand(2, 2, 2, 2, 4, 64)
    y = torch.rand(2, 2, 2, 2, 4, 64)
    out = torch.empty(2, 2, 2, 2, 4, 64)
    add_kernel(x, y, out)
