"""A tile shape computed from a config that went negative."""

import torch

import pypto

ROWS = 16


@pypto.frontend.jit
def sigmoid_kernel(x: pypto.Tensor([ROWS, 64], pypto.DT_FP32),
                   out: pypto.Tensor([ROWS, 64], pypto.DT_FP32)):
    rows_per_tile = ROWS // 4 - 8
    pypto.set_vec_tile_shapes(rows_per_tile, 64)  # ERROR: set_vec_tile_shapes: vector tile shape entry 0 is -4; every tile size must be > 0
    out[:] = pypto.sigmoid(x)


def trigger() -> None:
    x = torch.rand(ROWS, 64)
    out = torch.empty(ROWS, 64)
    sigmoid_kernel(x, out)
