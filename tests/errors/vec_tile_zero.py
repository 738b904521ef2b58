"""A tile shape with a 0 entry (a leftover placeholder)."""

import torch

import pypto


@pypto.frontend.jit
def exp_kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32),
               out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(0, 64)  # ERROR: set_vec_tile_shapes: vector tile shape entry 0 is 0; every tile size must be > 0
    out[:] = pypto.exp(x)


def trigger() -> None:
    x = torch.rand(16, 64)
    out = torch.empty(16, 64)
    exp_kernel(x, out)
