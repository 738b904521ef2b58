"""Reshaping [16, 64] (1024 elements) to [16, 32, 4] (2048 elements)."""

import torch

import pypto


@pypto.frontend.jit
def split_heads(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                out: pypto.Tensor([16, 32, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 16, 64)
    out[:] = pypto.reshape(x, [16, 32, 4])  # ERROR: reshape \[16, 64\] \(1024 elements\) to \[16, 32, 4\] \(2048 elements\)


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(16, 32, 4)
    split_heads(x, out)
