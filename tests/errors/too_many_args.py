"""Passing an extra scale tensor the kernel does not take."""

import torch

import pypto


@pypto.frontend.jit
def relu_kernel(x: pypto.Tensor([32, 64], pypto.DT_FP32),
                out: pypto.Tensor([32, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.relu(x)


def trigger() -> None:
    x = torch.randn(32, 64)
    scale = torch.ones(32, 64)
    out = torch.empty(32, 64)
    relu_kernel(x, scale, out)  # ERROR: relu_kernel\(x, out\): too many positional arguments
