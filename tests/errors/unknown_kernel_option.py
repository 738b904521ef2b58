"""`pypto.options(vec_tile_shape=...)`: a misspelled keyword of pypto.options."""

import torch

import pypto


def trigger() -> None:
    @pypto.frontend.jit
    @pypto.options(vec_tile_shape=[8, 64])  # ERROR: unexpected keyword argument 'vec_tile_shape'|unknown option 'vec_tile_shape'
    def log_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                   out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        out[:] = pypto.log(x)

    x = torch.rand(8, 64) + 1.0
    out = torch.empty(8, 64)
    log_kernel(x, out)
