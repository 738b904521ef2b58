"""A fixed 16-row window of a DYNAMIC input that has only 10 rows at run time: on the device
it would read past the end, so it is an error at the view's line (a tail needs valid_shape)."""

import torch

import pypto


@pypto.frontend.jit
def head16(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
           out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x[0:16, :] * 2.0  # ERROR: window \[0, 16\) on dim 0 runs past the input, which has 10 in this call; a tail tile needs valid_shape


def trigger() -> None:
    x = torch.randn(10, 64)
    out = torch.zeros(16, 64)
    head16(x, out)
