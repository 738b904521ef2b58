"""A fixed window of rows 12..16 of a DYNAMIC input that has only 10 rows at run time: the window
starts past the end, so it is an error at the view's line (a window that only runs past the end
is fine: its data is the part inside)."""

import torch

import pypto


@pypto.frontend.jit
def rows12(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
           out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x[12:16, :] * 2.0  # ERROR: view reads outside its input: offset 12 on dim 0, which has 10 in this call


def trigger() -> None:
    x = torch.randn(10, 64)
    out = torch.zeros(4, 64)
    rows12(x, out)
