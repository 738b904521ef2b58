"""Forgetting the output tensor of an in-place kernel."""

import torch

import pypto


@pypto.frontend.jit
def residual_add(x: pypto.Tensor([32, 64], pypto.DT_FP32),
                 residual: pypto.Tensor([32, 64], pypto.DT_FP32),
                 out: pypto.Tensor([32, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x + residual


def trigger() -> None:
    x = torch.randn(32, 64)
    residual = torch.randn(32, 64)
    residual_add(x, residual)  # ERROR: residual_add\(x, residual, out\): missing a required argument: 'out'
