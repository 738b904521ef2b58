"""A pypto.loop stepping by half a row: its bounds and step are ints or symbolic scalars."""

import torch

import pypto


@pypto.frontend.jit
def copy_rows(x: pypto.Tensor([8, 64], pypto.DT_FP32),
              out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, 8, 0.5, name="LOOP_rows", idx_name="i"):  # ERROR: ^pypto\.loop: step must be an int or a symbolic scalar, got float 0\.5$
        out[i:i + 1, :] = x[i:i + 1, :]


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    copy_rows(x, out)
