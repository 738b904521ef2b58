"""A pypto.loop whose step is 0."""

import torch

import pypto

STEP = 0


@pypto.frontend.jit
def copy_rows(x: pypto.Tensor([8, 64], pypto.DT_FP32),
              out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, 8, STEP, name="LOOP_rows", idx_name="i"):  # ERROR: pypto\.loop step must not be 0
        out[i:i + 1, :] = x[i:i + 1, :]


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    copy_rows(x, out)
