"""A view window that starts at row 16 of a 16-row tensor (a window that only runs past the end
is fine: its data is the part inside, as PyPTO infers its valid shape)."""

import torch

import pypto


@pypto.frontend.jit
def second_half(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    half = pypto.view(x, [8, 64], [16, 0])  # ERROR: view dim 0: offset 16 is past the tensor's size 16
    out[:] = half


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(8, 64)
    second_half(x, out)
