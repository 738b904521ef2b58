"""Cube tile k = [32, 48]: the L1 size must be a multiple of the L0 size."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([64, 96], pypto.DT_FP16),
         b: pypto.Tensor([96, 64], pypto.DT_FP16),
         c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 64], [32, 48], [64, 64])  # ERROR: cube tile k=\[32, 48\]: L1 size 48 must be a multiple of the L0 size 32
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


def trigger() -> None:
    a = torch.rand(64, 96, dtype=torch.float16)
    b = torch.rand(96, 64, dtype=torch.float16)
    c = torch.empty(64, 64)
    gemm(a, b, c)
