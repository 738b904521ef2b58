"""A reduction over a dim that does not exist, two helper levels below the kernel:
the chain is the line in the inner helper, its call in the outer helper, then the kernel's call."""

import torch

import pypto


def _row_max(x):
    return pypto.amax(x, dim=2, keepdim=True)  # ERROR: amax: dim=2 is out of range for a tensor of rank 2


def stable_softmax(x):
    m = _row_max(x)  # CALLSITE 1
    e = pypto.exp(x - m)
    return e / pypto.sum(e, dim=-1, keepdim=True)


@pypto.frontend.jit
def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    for i in pypto.loop(0, x.shape[0], 4, name="LOOP_rows", idx_name="i"):
        out[i:i + 4, :] = stable_softmax(x[i:i + 4, :])  # CALLSITE 2


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.empty(8, 64)
    softmax_kernel(x, out)
