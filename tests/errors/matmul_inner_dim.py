"""A projection whose weight was laid out [N, K] but multiplied as if it were [K, N]."""

import torch

import pypto


@pypto.frontend.jit
def proj(a: pypto.Tensor([32, 64], pypto.DT_FP16),
         w: pypto.Tensor([48, 64], pypto.DT_FP16),
         out: pypto.Tensor([32, 48], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [48, 48])
    c = pypto.matmul(a, w, pypto.DT_FP32)  # ERROR: matmul inner dims differ: input \[32, 64\] has K=64, mat2 \[48, 64\] has K=48
    out[:] = c


def trigger() -> None:
    a = torch.rand(32, 64, dtype=torch.float16)
    w = torch.rand(48, 64, dtype=torch.float16)
    out = torch.empty(32, 48)
    proj(a, w, out)
