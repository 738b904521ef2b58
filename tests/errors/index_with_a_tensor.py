"""Indexing a tensor with another tensor, numpy-style: in PyPTO that is gather / index_select."""

import torch

import pypto


@pypto.frontend.jit
def pick_rows(x: pypto.Tensor([8, 64], pypto.DT_FP32), rows: pypto.Tensor([2], pypto.DT_INT32),
              out: pypto.Tensor([2, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 64)
    out[:] = x[rows]  # ERROR: indexing with a tensor \(dim 0\) is not a view; use pypto\.gather or pypto\.index_select


def trigger() -> None:
    pick_rows(torch.randn(8, 64), torch.tensor([1, 5], dtype=torch.int32), torch.empty(2, 64))
