"""mL0 = nL0 = 256 accumulates 256 KiB of fp32 in L0C, which holds 128 KiB."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([256, 32], pypto.DT_BF16),
         b: pypto.Tensor([32, 256], pypto.DT_BF16),
         c: pypto.Tensor([256, 256], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([256, 256], [32, 32], [256, 256])  # WARNING: cube tiles need mL0\*nL0\*4 = 256\*256\*4 = 262144 bytes of L0C, which holds 131072
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


def trigger() -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.rand(256, 32, dtype=torch.bfloat16)
    b = torch.rand(32, 256, dtype=torch.bfloat16)
    c = torch.empty(256, 256)
    gemm(a, b, c)
    return c, a.float() @ b.float()
