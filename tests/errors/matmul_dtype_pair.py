"""An fp16 matmul asked to produce int32: not a pair the cube unit supports."""

import torch

import pypto


@pypto.frontend.jit
def scores(q: pypto.Tensor([16, 32], pypto.DT_FP16),
           k: pypto.Tensor([32, 16], pypto.DT_FP16),
           out: pypto.Tensor([16, 16], pypto.DT_INT32)):
    s = pypto.matmul(q, k, pypto.DT_INT32)  # ERROR: matmul fp16 -> int32 is not supported \(supported: .*fp16->fp16/fp32
    out[:] = s


def trigger() -> None:
    q = torch.rand(16, 32, dtype=torch.float16)
    k = torch.rand(32, 16, dtype=torch.float16)
    out = torch.empty(16, 16, dtype=torch.int32)
    scores(q, k, out)
