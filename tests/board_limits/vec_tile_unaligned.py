"""A last tile dim of 12 fp32 elements = 48 bytes, not a multiple of 32 bytes."""

import torch

import pypto


@pypto.frontend.jit
def abs_kernel(x: pypto.Tensor([16, 48], pypto.DT_FP32),
               out: pypto.Tensor([16, 48], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 12)  # WARNING: vector tile last dim 12 × 4 bytes \(fp32\) = 48 bytes is not a multiple of 32 bytes .*use 8 or 16
    out[:] = pypto.abs(x)


def trigger() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(16, 48)
    out = torch.empty(16, 48)
    abs_kernel(x, out)
    return out, x.abs()
