"""A 1-entry tile shape used for a 2-D op: reported at the call, naming the first op it applies to."""

import torch

import pypto


@pypto.frontend.jit
def square(x: pypto.Tensor([16, 64], pypto.DT_FP32),
           out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64)  # ERROR: tile shape has 1 dim, mul output has 2: set_vec_tile_shapes\(64,\)
    y = x * x
    out[:] = y


def trigger() -> None:
    x = torch.rand(16, 64)
    out = torch.empty(16, 64)
    square(x, out)
