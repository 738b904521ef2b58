"""A value made inside a run-time branch (an `if` on the loop index) used after the `if`: each side
must write it into a tensor made before the `if`."""

import torch

import pypto


@pypto.frontend.jit
def shifted(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, x.shape[0], 1, name="LOOP_rows", idx_name="i"):
        row = x[i:i + 1, :]
        if i == 0:
            first = row * 2.0
        out[i:i + 1, :] = first + row  # ERROR: computed inside the run-time branch `if i == 0` \(line 15\) is used after it


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    shifted(x, out)
