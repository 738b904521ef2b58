"""Reading row 9 of an 8-row tensor: the slice starts past the end of dim 0 (a stop past the end
would be fine: the window's data is the part inside)."""

import torch

import pypto


@pypto.frontend.jit
def last_row(x: pypto.Tensor([8, 64], pypto.DT_FP32),
             out: pypto.Tensor([1, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    row = x[9:10, :]  # ERROR: ^slice 9:10 of dim 0 starts past its end \(size 8\)$
    out[:] = pypto.exp(row)


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(1, 64)
    last_row(x, out)
