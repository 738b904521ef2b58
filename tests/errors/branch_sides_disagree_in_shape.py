"""The two sides of a run-time `if` give one name tensors of different shapes, and it is used after
the `if`, where it would have one shape or the other depending on the data (unused, it is fine)."""

import torch

import pypto


@pypto.frontend.jit
def halves(x: pypto.Tensor([8, 64], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
           out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    if n[0] > 0:
        y = x * 2.0
    else:
        y = x[0:4, :] * 2.0
    out[:] = pypto.exp(y)  # ERROR: `y` is used after the run-time `if n\[0\] > 0` \(line 13\), whose else side makes it DT_FP32\[4, 64\] and which otherwise leaves it DT_FP32\[8, 64\]


def trigger() -> None:
    halves(torch.randn(8, 64), torch.tensor([1], dtype=torch.int32), torch.empty(8, 64))
