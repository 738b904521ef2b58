"""Reading a tensor computed inside a pypto.loop after the loop has closed."""

import torch

import pypto


@pypto.frontend.jit
def last_row_scale(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                   out: pypto.Tensor([1, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, x.shape[0], 1, name="LOOP_rows", idx_name="i"):
        row = pypto.exp(x[i:i + 1, :])
    out[:] = row * 2.0  # ERROR: a tensor computed inside pypto\.loop 'LOOP_rows' \(line 12\) is used after the loop


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(1, 64)
    last_row_scale(x, out)
