"""`pypto.cumsum` (a T2 op this release does not implement yet) used in a kernel."""

import torch

import pypto


@pypto.frontend.jit
def running(x: pypto.Tensor([16, 64], pypto.DT_FP32),
            out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.cumsum(x, -1)  # ERROR: pypto\.cumsum is not supported yet \(PyPTO API tier T2\)


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(16, 64)
    running(x, out)
