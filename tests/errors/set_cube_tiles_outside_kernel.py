"""A global `pypto.set_cube_tile_shapes` (outside any kernel) with L1 not a multiple of L0."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([64, 64], pypto.DT_FP16),
         b: pypto.Tensor([64, 64], pypto.DT_FP16),
         c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


def trigger() -> None:
    pypto.set_cube_tile_shapes([32, 48], [32, 64], [32, 64])  # ERROR: set_cube_tile_shapes: cube tile m=\[32, 48\]: L1 size 48 must be a multiple of the L0 size 32
    a = torch.rand(64, 64, dtype=torch.float16)
    b = torch.rand(64, 64, dtype=torch.float16)
    gemm(a, b, torch.empty(64, 64))
