"""K is DYNAMIC in both operands and differs at run time: caught when the kernel runs,
reported at the matmul."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([16, pypto.DYNAMIC], pypto.DT_FP32),
         b: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
         out: pypto.Tensor([16, 16], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
    c = pypto.matmul(a, b, pypto.DT_FP32)  # ERROR: matmul K: a\.d1 = 32 but b\.d0 = 48 in this call
    out[:] = c


def trigger() -> None:
    a = torch.rand(16, 32)
    b = torch.rand(48, 16)
    out = torch.empty(16, 16)
    gemm(a, b, out)
