"""Using, after a pypto.loop, a tensor whose shape changes with the loop index (it has no one shape
to carry out of the loop)."""

import torch

import pypto


@pypto.frontend.jit
def growing_prefix(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, 8, 1, name="LOOP_rows", idx_name="i"):
        prefix = pypto.exp(x[0:i + 1, :])
    out[:] = prefix * 2.0  # ERROR: computed inside pypto\.loop 'LOOP_rows' \(line 12\) is used after the loop, but its shape .* depends on the loop index


def trigger() -> None:
    growing_prefix(torch.randn(8, 64), torch.empty(8, 64))
