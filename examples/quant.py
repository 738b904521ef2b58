"""Symmetric per-row int8 quantization and dequantization.

scale = amax(|x|) / 127 per row; q = clip(round(x / scale), -127, 127) as int8; and back,
x' = q * scale. The rounding happens in `pypto.cast` with `CastMode.CAST_RINT` (round half
to even, as torch.round does), so the int8 values match torch exactly.
Run: `.venv/bin/python examples/quant.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

H = 256


@pypto.frontend.jit
def quantize_kernel(x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
                    q: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_INT8),
                    scale: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32)):
    """Symmetric per-row int8 quantization of `x`.

    pypto-inputs:
        x: fp32[24, 256]
        q: int8[24, 256]
        scale: fp32[24, 1]
    """
    # the last tile entry must be 32 bytes for every dtype involved: 64 int8 = 64 B, 64 fp32 = 256 B
    pypto.set_vec_tile_shapes(8, 64)
    # one scale per row, from the largest magnitude in the row
    s = pypto.amax(pypto.abs(x), dim=-1, keepdim=True) / 127.0
    # divide, clamp to the symmetric int8 range, then round-to-nearest-even while casting to int8
    q[:] = pypto.cast(pypto.clip(x / s, -127.0, 127.0), pypto.DT_INT8, pypto.CastMode.CAST_RINT)
    scale[:] = s


@pypto.frontend.jit
def dequantize_kernel(q: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_INT8),
                      scale: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
                      out: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32)):
    """`q` times its per-row scale, in fp32.

    pypto-inputs:
        q: int8[24, 256]
        scale: fp32[24, 1]
        out: fp32[24, 256]
    """
    pypto.set_vec_tile_shapes(8, 64)
    # int8 -> fp32 is exact; the [rows, 1] scale broadcasts across each row
    out[:] = pypto.cast(q, pypto.DT_FP32) * scale


def check() -> list[Check]:
    torch.manual_seed(0)
    rows = 24
    x = torch.randn(rows, H) * torch.rand(rows, 1) * 10
    q = torch.empty(rows, H, dtype=torch.int8)
    scale = torch.empty(rows, 1)
    quantize_kernel(x, q, scale)
    deq = torch.empty(rows, H)
    dequantize_kernel(q, scale, deq)
    # torch doing the same arithmetic
    want_scale = x.abs().amax(dim=-1, keepdim=True) / 127.0
    want_q = torch.clamp(torch.round(x / want_scale), -127, 127).to(torch.int8)
    return [
        compare("scale fp32", scale, want_scale),
        # int8 values must match exactly
        compare("quantize int8", q, want_q, rtol=0, atol=0),
        compare("dequantize fp32", deq, want_q.float() * want_scale),
        # the round trip is off by at most half a quantization step (scale / 2)
        compare("round trip x -> int8 -> x", deq, x, atol=want_scale.max().item() / 2 + 1e-6, max_abs_only=True),
    ]


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "quant: int8 symmetric per-row quantize / dequantize"))
