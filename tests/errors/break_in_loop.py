"""`break` out of a pypto.loop: the loop runs on the device for every index."""

import torch

import pypto

LIMIT = 4


@pypto.frontend.jit
def first_rows(x: pypto.Tensor([16, 64], pypto.DT_FP32),
               out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, 16, 1, name="LOOP_rows", idx_name="i"):
        out[i:i + 1, :] = x[i:i + 1, :] * 2.0
        if LIMIT < 16:
            break  # ERROR: `break` \(or `return`\) out of a pypto\.loop is not supported
    out[:] = out + 1.0


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    first_rows(x, out)
