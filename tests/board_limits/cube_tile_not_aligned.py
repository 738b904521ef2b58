"""Cube tile m of 24: the cube works in 16-row fractals, so PyPTO pads it (a warning, not an error)."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([48, 64], pypto.DT_FP16),
         b: pypto.Tensor([64, 32], pypto.DT_FP16),
         c: pypto.Tensor([48, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([24, 48], [32, 64], [32, 32])  # WARNING: cube tile m=\[24, 48\]: 24 is not a multiple of 16 elements .*use 32
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


def trigger() -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.rand(48, 64, dtype=torch.float16)
    b = torch.rand(64, 32, dtype=torch.float16)
    c = torch.empty(48, 32)
    gemm(a, b, c)
    return c, a.float() @ b.float()
