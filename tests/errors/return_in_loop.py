"""An early `return` from inside a pypto.loop (a search loop written the host way)."""

import torch

import pypto


@pypto.frontend.jit
def copy_until(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
               stop_row: int):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, x.shape[0], 1, name="LOOP_rows", idx_name="i"):
        out[i:i + 1, :] = x[i:i + 1, :]
        if stop_row >= 0:
            return  # ERROR: `break` \(or `return`\) out of a pypto\.loop is not supported


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    copy_until(x, out, 3)
