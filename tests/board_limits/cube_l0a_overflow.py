"""mL0 = kL0 = 256 in fp16 needs 128 KiB of L0A, which holds 64 KiB."""

import torch

import pypto


@pypto.frontend.jit
def gemm(a: pypto.Tensor([256, 256], pypto.DT_FP16),
         b: pypto.Tensor([256, 64], pypto.DT_FP16),
         c: pypto.Tensor([256, 64], pypto.DT_FP16)):
    pypto.set_cube_tile_shapes([256, 256], [256, 256], [64, 64])  # WARNING: cube tiles need mL0\*kL0\*2 = 256\*256\*2 = 131072 bytes of L0A, which holds 65536
    c[:] = pypto.matmul(a, b, pypto.DT_FP16)


def trigger() -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.rand(256, 256, dtype=torch.float16)
    b = torch.rand(256, 64, dtype=torch.float16)
    c = torch.empty(256, 64, dtype=torch.float16)
    gemm(a, b, c)
    return c.float(), a.float() @ b.float()
