"""Layer normalization over the last axis, written out step by step.

y = (x - mean) / sqrt(var + eps) * gamma + beta, with mean and (biased) variance taken over
the hidden axis. The bf16 input is cast up to fp32 for the statistics and the result is
cast back once at the end, the usual mixed-precision pattern; gamma and beta stay fp32.
Run: `.venv/bin/python examples/layernorm.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

EPS = 1e-5


@pypto.frontend.jit
def layernorm_kernel(x: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_BF16),
                     gamma: pypto.Tensor([512], pypto.DT_FP32),
                     beta: pypto.Tensor([512], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_BF16)):
    """Layer norm over the hidden axis, statistics in fp32.

    pypto-inputs:
        x: bf16[64, 512]
        out: bf16[64, 512]
    """
    # 4 rows x 512 columns per tile: the whole hidden axis is in one tile, so each reduction is local
    pypto.set_vec_tile_shapes(4, 512)
    hidden = x.shape[-1]
    # statistics in fp32: bf16 has only 8 bits of mantissa
    xf = pypto.cast(x, pypto.DT_FP32)
    # mean over the hidden axis, kept as a [rows, 1] column for broadcasting
    mean = pypto.sum(xf, dim=-1, keepdim=True) / hidden
    centered = xf - mean
    # biased variance, the one layer norm uses
    var = pypto.sum(centered * centered, dim=-1, keepdim=True) / hidden
    # normalize with rsqrt, then the per-column affine transform ([512] broadcasts over rows)
    y = centered * pypto.rsqrt(var + EPS) * gamma + beta
    # round once, back to the output's dtype
    out[:] = pypto.cast(y, pypto.DT_BF16)


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    for rows in (64, 9):
        x = (torch.randn(rows, 512) * 3 + 1).to(torch.bfloat16)
        gamma = torch.rand(512) + 0.5
        beta = torch.randn(512) * 0.1
        out = torch.empty(rows, 512, dtype=torch.bfloat16)
        layernorm_kernel(x, gamma, beta, out)
        want = torch.nn.functional.layer_norm(x.float(), (512,), gamma, beta, eps=EPS)
        # bf16 output: judged by the max-abs difference (one bf16 rounding of values up to ~6)
        checks.append(compare(f"layernorm bf16 [{rows},512]", out, want, atol=3e-2, max_abs_only=True))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "layernorm: mean / variance / rsqrt, bf16 in, fp32 math"))
