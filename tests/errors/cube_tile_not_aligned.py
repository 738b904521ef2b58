"""Cube tile m of 24: fp16 cube tiles must be multiples of 16 elements."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([48, 64], pypto.DT_FP16),
         b: pypto.Tensor([64, 32], pypto.DT_FP16),
         c: pypto.Tensor([48, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([24, 48], [32, 64], [32, 32])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)  # ERROR: cube tile m=\[24, 48\]: 24 is not a multiple of 16 elements .*use 32


def trigger() -> None:
    a = torch.rand(48, 64, dtype=torch.float16)
    b = torch.rand(64, 32, dtype=torch.float16)
    c = torch.empty(48, 32)
    gemm(a, b, c)
