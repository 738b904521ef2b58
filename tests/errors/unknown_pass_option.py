"""A misspelled pass option (`vec_nbuffer_settings`); the message lists the known keys."""

import torch

import pypto


@pypto.frontend.jit
def sqrt_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.sqrt(x)


def trigger() -> None:
    pypto.set_pass_options(vec_nbuffer_settings={-1: 2})  # ERROR: unknown pass_options key 'vec_nbuffer_settings'; known keys: .*vec_nbuffer_setting
    x = torch.rand(8, 64)
    out = torch.empty(8, 64)
    sqrt_kernel(x, out)
