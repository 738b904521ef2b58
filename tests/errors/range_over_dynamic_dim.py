"""`range(x.shape[0])` where axis 0 is DYNAMIC: its value is only known at run time."""

import torch

import pypto


@pypto.frontend.jit
def row_softmax(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in range(x.shape[0]):  # ERROR: is only known at run time .*use pypto\.loop\(\.\.\.\) instead of range\(\.\.\.\)
        row = x[i:i + 1, :]
        out[i:i + 1, :] = pypto.softmax(row, dim=-1)


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    row_softmax(x, out)
