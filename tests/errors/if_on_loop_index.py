"""A Python `if` on a pypto.loop index: a runtime branch, not decidable while tracing."""

import torch

import pypto


@pypto.frontend.jit
def cumulative(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, x.shape[0], 1, name="LOOP_rows", idx_name="i"):
        if i == 0:  # ERROR: comparing i with 0 needs run-time values; a Python `if` on it is a runtime branch
            out[i:i + 1, :] = x[i:i + 1, :]
        else:
            out[i:i + 1, :] = x[i:i + 1, :] + out[i - 1:i, :]


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    cumulative(x, out)
