"""pypto.where with an fp32 mask instead of a bool condition."""

import torch

import pypto


@pypto.frontend.jit
def masked_fill(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                mask: pypto.Tensor([16, 64], pypto.DT_FP32),
                out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.where(mask, x, -1e9)  # ERROR: where\(\) needs a bool condition, got DT_FP32


def trigger() -> None:
    x = torch.randn(16, 64)
    mask = (torch.rand(16, 64) > 0.5).float()
    out = torch.empty(16, 64)
    masked_fill(x, mask, out)
