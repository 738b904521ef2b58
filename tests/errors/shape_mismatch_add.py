"""Adding a bias whose last dim does not broadcast against the activations."""

import torch

import pypto


@pypto.frontend.jit
def bias_add(x: pypto.Tensor([8, 64], pypto.DT_FP32),
             bias: pypto.Tensor([1, 32], pypto.DT_FP32),
             out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x + bias  # ERROR: add: shapes \[8, 64\] and \[1, 32\] cannot be broadcast \(dim -1: 64 vs 32\)


def trigger() -> None:
    x = torch.rand(8, 64)
    bias = torch.rand(1, 32)
    out = torch.empty(8, 64)
    bias_add(x, bias, out)
