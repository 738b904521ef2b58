"""Asking for RunMode.NPU on a machine without an NPU: the message points at SIM."""

import torch

import pypto


@pypto.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def silu(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
         out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * pypto.sigmoid(x)


def trigger() -> None:
    x = torch.randn(16, 64)
    out = torch.empty(16, 64)
    silu(x, out)  # ERROR: run_mode NPU needs an Ascend NPU, and none is present; .*pypto\.RunMode\.SIM
