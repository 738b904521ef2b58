"""topk asking for more elements than the dim has."""

import torch

import pypto


@pypto.frontend.jit
def top9(x: pypto.Tensor([4, 8], pypto.DT_FP32), values: pypto.Tensor([4, 9], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    v, _ = pypto.topk(x, 9)  # ERROR: topk: k=9 must be between 1 and the size of dim 1 \(8\)
    values[:] = v


def trigger() -> None:
    top9(torch.randn(4, 8), torch.empty(4, 9))
