"""rms_norm with a gamma of the wrong length."""

import torch

import pypto


@pypto.frontend.jit
def rmsnorm(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
            gamma: pypto.Tensor([32], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = pypto.rms_norm(x, gamma, epsilon=1e-6)  # ERROR: rms_norm gamma length vs last dim: 32 != 64


def trigger() -> None:
    x = torch.randn(8, 64)
    gamma = torch.ones(32)
    out = torch.empty(8, 64)
    rmsnorm(x, gamma, out)
