"""A shape mistake inside a plain Python helper: the error points into the helper,
and the callsite chain continues with the helper's call in the kernel."""

import torch

import pypto


def rms_normalize(x, gamma):
    ms = pypto.sum(x * x, dim=-1, keepdim=True) / 64.0
    return x * pypto.rsqrt(ms + 1e-6) * gamma  # ERROR: mul: shapes \[8, 64\] and \[1, 32\] cannot be broadcast


@pypto.frontend.jit
def rms_norm_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                    gamma: pypto.Tensor([1, 32], pypto.DT_FP32),
                    out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    y = rms_normalize(x, gamma)  # CALLSITE 1
    out[:] = y


def trigger() -> None:
    x = torch.randn(8, 64)
    gamma = torch.ones(1, 32)
    out = torch.empty(8, 64)
    rms_norm_kernel(x, gamma, out)
