"""Elementwise arithmetic with broadcasting and Python scalars.

A [B, N] tensor is combined with a per-column vector [N] and a per-row column [B, 1]
(NumPy broadcasting rules), and with Python floats on either side of an operator. The
annotation `pypto.Tensor()` takes shape and dtype from the argument, so one kernel runs
for fp32 and for fp16 (each dtype compiles once). Run: `.venv/bin/python examples/elementwise.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare


@pypto.frontend.jit
def scale_shift_kernel(x: pypto.Tensor(), bias: pypto.Tensor(), row_scale: pypto.Tensor(),
                       out: pypto.Tensor()):
    """(x * 0.5 + bias) * row_scale - 1 / (1 + x^2), written into `out`.

    pypto-inputs:
        x: fp32[48, 256]
        bias: fp32[256]
        row_scale: fp32[48, 1]
        out: fp32[48, 256]
    """
    # 2-D tiles of 8 rows x 64 columns; 64 x 4 B (fp32) and 64 x 2 B (fp16) are both 32-byte multiples
    pypto.set_vec_tile_shapes(8, 64)
    # [B, N] * scalar + [N]: the bias row is broadcast down every row
    y = x * 0.5 + bias
    # [B, N] * [B, 1]: the per-row factor is broadcast across the columns
    y = y * row_scale
    # a scalar on the left works too (1.0 / t), and the result is written into `out` in place
    out[:] = y - 1.0 / (1.0 + x * x)


def reference(x, bias, row_scale):
    return (x * 0.5 + bias) * row_scale - 1.0 / (1.0 + x * x)


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    b, n = 48, 256
    for dtype, tol, max_abs_only in ((torch.float32, 1e-3, False), (torch.float16, 1e-2, True)):
        x = torch.randn(b, n).to(dtype)
        bias = torch.randn(n).to(dtype)
        row_scale = torch.rand(b, 1).to(dtype) + 0.5
        out = torch.empty(b, n, dtype=dtype)
        scale_shift_kernel(x, bias, row_scale, out)
        # the golden result is computed in fp32 from the same (rounded) inputs
        want = reference(x.float(), bias.float(), row_scale.float())
        checks.append(compare(f"broadcast + scalars {str(dtype)[6:]}", out, want,
                              rtol=tol, atol=tol, max_abs_only=max_abs_only))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "elementwise: broadcasting and Python scalars"))
