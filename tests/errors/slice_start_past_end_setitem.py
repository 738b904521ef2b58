"""Writing row 9 of an 8-row output: the slice assigned to starts past the end of dim 0."""

import torch

import pypto


@pypto.frontend.jit
def put_row(x: pypto.Tensor([1, 64], pypto.DT_FP32),
            out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    out[9:10, :] = pypto.exp(x)  # ERROR: ^slice 9:10 of dim 0 starts past its end \(size 8\)$


def trigger() -> None:
    x = torch.randn(1, 64)
    out = torch.zeros(8, 64)
    put_row(x, out)
