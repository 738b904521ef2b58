"""Two DYNAMIC batch axes that differ at run time, added together: caught when the
kernel runs, reported at the add."""

import torch

import pypto


@pypto.frontend.jit
def add_batches(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    z = x + y  # ERROR: broadcast of \[x\.d0, 64\] with \[y\.d0, 64\]: x\.d0 = 8 but y\.d0 = 4
    out[:] = z


def trigger() -> None:
    x = torch.randn(8, 64)
    y = torch.randn(4, 64)
    out = torch.empty(8, 64)
    add_batches(x, y, out)
