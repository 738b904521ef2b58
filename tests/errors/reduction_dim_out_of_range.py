"""Reducing over dim 2 of a 2-D tensor."""

import torch

import pypto


@pypto.frontend.jit
def row_max(x: pypto.Tensor([16, 64], pypto.DT_FP32),
            out: pypto.Tensor([16, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.amax(x, dim=2, keepdim=True)  # ERROR: amax: dim=2 is out of range for a tensor of rank 2


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(16, 1)
    row_max(x, out)
