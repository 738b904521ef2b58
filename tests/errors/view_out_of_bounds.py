"""A view window [8, 24) on an axis of size 16."""

import torch

import pypto


@pypto.frontend.jit
def second_half(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    half = pypto.view(x, [16, 64], [8, 0])  # ERROR: view dim 0: window \[8, 24\) runs past the tensor's size 16
    out[:] = half


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(16, 64)
    second_half(x, out)
