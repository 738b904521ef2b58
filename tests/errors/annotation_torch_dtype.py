"""A torch dtype in a pypto.Tensor annotation: reported at the annotation when the kernel is defined."""

import torch

import pypto


def trigger() -> None:
    @pypto.frontend.jit
    def add_one(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                out: pypto.Tensor([8, 64], torch.float32)):  # ERROR: pypto\.Tensor dtype must be a pypto\.DT_\* value, got torch\.float32
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x + 1.0

    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    add_one(x, out)
