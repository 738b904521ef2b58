"""A bf16 activation multiplied with an fp16 weight."""

import torch

import pypto


@pypto.frontend.jit
def proj(a: pypto.Tensor([16, 32], pypto.DT_BF16),
         w: pypto.Tensor([32, 16], pypto.DT_FP16),
         out: pypto.Tensor([16, 16], pypto.DT_FP32)):
    out[:] = pypto.matmul(a, w, pypto.DT_FP32)  # ERROR: matmul operands differ in dtype: DT_BF16 and DT_FP16


def trigger() -> None:
    a = torch.rand(16, 32, dtype=torch.bfloat16)
    w = torch.rand(32, 16, dtype=torch.float16)
    out = torch.empty(16, 16)
    proj(a, w, out)
