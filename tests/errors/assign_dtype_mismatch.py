"""Writing an fp16 tensor into an fp32 output without a cast."""

import torch

import pypto


@pypto.frontend.jit
def to_half_and_back(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                     out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    x_fp16 = pypto.cast(x, pypto.DT_FP16)
    out[:] = x_fp16  # ERROR: assemble writes DT_FP16 into a DT_FP32 tensor; cast it first


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(16, 64)
    to_half_and_back(x, out)
