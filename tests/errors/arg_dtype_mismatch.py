"""Calling an fp32 kernel with an fp16 tensor: reported at the call, naming the parameter."""

import torch

import pypto


@pypto.frontend.jit
def scale(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 128)
    out[:] = x * 0.5


def trigger() -> None:
    x = torch.rand(16, 128, dtype=torch.float16)
    out = torch.empty(16, 128)
    scale(x, out)  # ERROR: argument 'x' is DT_FP16 but the kernel declares DT_FP32
