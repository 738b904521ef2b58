"""A Python `if` on a tensor comparison: the values are only known on the device."""

import torch

import pypto


@pypto.frontend.jit
def clamp_negative(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                   out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    if x < 0:  # ERROR: the truth value of a tensor is only known at run time; use pypto\.where
        out[:] = x * 0.0
    else:
        out[:] = x


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    clamp_negative(x, out)
