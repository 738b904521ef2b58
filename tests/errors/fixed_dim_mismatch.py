"""A kernel compiled for a hidden size of 128 called with hidden size 96."""

import torch

import pypto

HIDDEN = 128


@pypto.frontend.jit
def gelu_tanh(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
              out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, HIDDEN)
    inner = (x + x * x * x * 0.044715) * 0.7978845608
    out[:] = x * 0.5 * (pypto.tanh(inner) + 1.0)


def trigger() -> None:
    x = torch.rand(16, 96)
    out = torch.empty(16, 96)
    gelu_tanh(x, out)  # ERROR: argument 'x' has dim 1 = 96 but the kernel declares 128
