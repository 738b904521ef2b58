"""Activation functions: SiLU, GELU (tanh and erf forms) and SwiGLU.

Each activation is a plain Python helper called from the kernel (helpers are inlined
while the kernel is traced). Kernels take any float dtype (`pypto.Tensor()`); bf16 inputs
are computed in fp32 and rounded once at the end. SwiGLU splits its input into a gate
half and an up half with views. Run: `.venv/bin/python examples/activations.py`.
"""

import math

import torch

import pypto
from pypto.testing import Check, compare


def to_fp32(t):
    # t.dtype is known while tracing, so this `if` costs nothing at run time
    return t if t.dtype == pypto.DT_FP32 else pypto.cast(t, pypto.DT_FP32)


def silu(x):
    # x * sigmoid(x)
    return x * pypto.sigmoid(x)


def gelu_tanh(x):
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the fast approximation
    return 0.5 * x * (1.0 + pypto.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def gelu_erf(x):
    # 0.5 x (1 + erf(x / sqrt(2))), the exact form
    return 0.5 * x * (1.0 + pypto.erf(x * (1.0 / math.sqrt(2.0))))


@pypto.frontend.jit
def activations_kernel(x: pypto.Tensor(), silu_out: pypto.Tensor(), gelu_tanh_out: pypto.Tensor(),
                       gelu_erf_out: pypto.Tensor()):
    """SiLU and both GELU forms of `x`, each into its own output (any float dtype).

    pypto-inputs:
        x: bf16[64, 256]
        silu_out: bf16[64, 256]
        gelu_tanh_out: bf16[64, 256]
        gelu_erf_out: bf16[64, 256]
    """
    # 16 rows x 128 columns per tile; 128 x 2 B (bf16) is a 32-byte multiple
    pypto.set_vec_tile_shapes(16, 128)
    xf = to_fp32(x)
    # three outputs from one input; each result is rounded to the output dtype once
    silu_out[:] = pypto.cast(silu(xf), silu_out.dtype)
    gelu_tanh_out[:] = pypto.cast(gelu_tanh(xf), gelu_tanh_out.dtype)
    gelu_erf_out[:] = pypto.cast(gelu_erf(xf), gelu_erf_out.dtype)


@pypto.frontend.jit
def swiglu_kernel(x: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_BF16),
                  out: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_BF16)):
    """SwiGLU of the two halves of each row of `x`.

    pypto-inputs:
        x: bf16[48, 512]
        out: bf16[48, 256]
    """
    pypto.set_vec_tile_shapes(16, 128)
    hidden = out.shape[-1]
    # views of the two halves of each row: [gate | up]
    gate = to_fp32(x[:, :hidden])
    up = to_fp32(x[:, hidden:])
    # SwiGLU = silu(gate) * up
    out[:] = pypto.cast(silu(gate) * up, pypto.DT_BF16)


def check() -> list[Check]:
    torch.manual_seed(0)
    f = torch.nn.functional
    checks = []
    # fp32 within 1e-3; bf16 by max-abs (one bf16 rounding of values up to ~8 is <= 3.1e-2)
    for dtype, tol, max_abs_only in ((torch.float32, 1e-3, False), (torch.bfloat16, 4e-2, True)):
        x = (torch.randn(64, 256) * 2).to(dtype)
        outs = [torch.empty_like(x) for _ in range(3)]
        activations_kernel(x, *outs)
        xf = x.float()
        wants = [f.silu(xf), f.gelu(xf, approximate="tanh"), f.gelu(xf)]
        for name, got, want in zip(("silu", "gelu (tanh)", "gelu (erf)"), outs, wants):
            checks.append(compare(f"{name} {str(dtype)[6:]}", got, want, rtol=tol, atol=tol,
                                  max_abs_only=max_abs_only))
    x = torch.randn(48, 512).bfloat16()
    out = torch.empty(48, 256, dtype=torch.bfloat16)
    swiglu_kernel(x, out)
    gate, up = x.float().chunk(2, dim=-1)
    # products reach ~10, where one bf16 rounding is up to 3.1e-2
    checks.append(compare("swiglu bfloat16", out, f.silu(gate) * up, atol=5e-2, max_abs_only=True))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "activations: silu, gelu, swiglu"))
