"""Softmax over the last axis of a 4-D tensor, built from amax / exp / sum.

Shows the core PyPTO pattern: a DYNAMIC batch axis, a runtime `pypto.loop` over it, a
view of one batch entry per iteration, and a slice assignment that writes the result
back into the output at the loop index. The numerically safe form subtracts the row
maximum before `exp`. Run: `.venv/bin/python examples/softmax.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare


@pypto.frontend.jit
def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
    """Softmax over the last axis, one batch entry per loop iteration.

    pypto-inputs:
        x: fp32[32, 32, 1, 256]
        out: fp32[32, 32, 1, 256]
    """
    # tiles of [1, 4, 1, 64] elements (one per rank-4 axis); the last entry, 64 fp32 = 256 B, is 32-byte aligned
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    # the batch size is only known at run time: a symbolic scalar
    b = x.shape[0]
    # a runtime loop: the body is traced once and runs b times
    for i in pypto.loop(0, b, 1, name="LOOP_b", idx_name="i"):
        # a view of batch entry i, shape [1, 32, 1, 256]
        v = x[i:i + 1, ...]
        # subtract the row maximum so exp never overflows
        m = pypto.amax(v, dim=-1, keepdim=True)
        e = pypto.exp(v - m)
        # normalize, and write the rows back at batch offset i
        out[i:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    # two batch sizes: the second reuses the compiled kernel (the batch axis is DYNAMIC)
    for batch in (32, 5):
        x = torch.randn(batch, 32, 1, 256) * 4
        y = torch.empty_like(x)
        softmax_kernel(x, y)
        checks.append(compare(f"softmax fp32 [{batch},32,1,256]", y, torch.softmax(x, dim=-1),
                              rtol=3e-3, atol=3e-3))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "softmax: amax / exp / sum over a DYNAMIC batch"))
