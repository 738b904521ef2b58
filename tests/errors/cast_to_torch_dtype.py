"""pypto.cast with a torch dtype instead of a pypto.DT_* value."""

import torch

import pypto


@pypto.frontend.jit
def to_fp16(x: pypto.Tensor([8, 64], pypto.DT_FP32),
            out: pypto.Tensor([8, 64], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.cast(x, torch.float16)  # ERROR: cast: dtype must be a pypto\.DT_\* value, got torch\.float16


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64, dtype=torch.float16)
    to_fp16(x, out)
