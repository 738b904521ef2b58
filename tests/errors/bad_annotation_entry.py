"""A shape annotation with a string entry, on the second parameter's line."""

import torch

import pypto


@pypto.frontend.jit
def add_one(x: pypto.Tensor([8, 64], pypto.DT_FP32),
            out: pypto.Tensor([8, "64"], pypto.DT_FP32)):  # ERROR: parameter 'out': shape entry 1 is '64'
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x + 1.0


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    add_one(x, out)
