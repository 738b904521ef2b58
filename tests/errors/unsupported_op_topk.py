"""`pypto.topk` (a T2 op this release does not implement) used in a kernel."""

import torch

import pypto


@pypto.frontend.jit
def top4(x: pypto.Tensor([16, 64], pypto.DT_FP32),
         values: pypto.Tensor([16, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    v, idx = pypto.topk(x, 4, dim=-1)  # ERROR: pypto\.topk is not supported yet \(PyPTO API tier T2\)
    values[:] = v


def trigger() -> None:
    x = torch.randn(16, 64)
    values = torch.empty(16, 4)
    top4(x, values)
