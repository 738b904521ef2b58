"""Passing a nested Python list where the kernel takes a tensor."""

import torch

import pypto


@pypto.frontend.jit
def double(x: pypto.Tensor([2, 8], pypto.DT_FP32),
           out: pypto.Tensor([2, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 8)
    out[:] = x * 2.0


def trigger() -> None:
    x = [[float(i) for i in range(8)], [1.0] * 8]
    out = torch.empty(2, 8)
    double(x, out)  # ERROR: argument 'x' must be a torch\.Tensor or numpy\.ndarray, got list
