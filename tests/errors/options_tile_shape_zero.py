"""`pypto.options(vec_tile_shapes=...)` with a 0 entry: reported at the decorator, not at the call."""

import torch

import pypto


def trigger() -> None:
    @pypto.frontend.jit
    @pypto.options(vec_tile_shapes=[0, 64])  # ERROR: vec_tile_shapes=\[0, 64\]: vector tile shape entry 0 is 0; every tile size must be > 0
    def tanh_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                    out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        out[:] = pypto.tanh(x)

    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    tanh_kernel(x, out)
