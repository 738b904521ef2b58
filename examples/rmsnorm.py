"""RMS normalization, by hand and with the builtin `pypto.rms_norm`.

y = x / sqrt(mean(x^2) + eps) * gamma over the last axis. The hand-written kernel casts
the fp16 input up to fp32 for the sum of squares; the builtin does the same internally.
Both write into separate outputs of one kernel. Run: `.venv/bin/python examples/rmsnorm.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

EPS = 1e-6


@pypto.frontend.jit
def rmsnorm_kernel(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP16),
                   gamma: pypto.Tensor([256], pypto.DT_FP16),
                   by_hand: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP16),
                   builtin: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP16)):
    """RMS norm of `x` twice: by hand and with `pypto.rms_norm`.

    pypto-inputs:
        x: fp16[40, 256]
        by_hand: fp16[40, 256]
        builtin: fp16[40, 256]
    """
    # gamma has one axis, and a tensor takes a tile-shape call's leading entries (entry i tiles axis i):
    # under (8, 256) it would be cut 8 wide (16 bytes, padded); cast it whole under a one-entry call
    pypto.set_vec_tile_shapes(256)
    g = pypto.cast(gamma, pypto.DT_FP32)
    # 8 rows x 256 columns per tile: a whole row per tile; 256 x 2 B is 32-byte aligned
    pypto.set_vec_tile_shapes(8, 256)
    # by hand: accumulate the squares in fp32 so 256 of them neither overflow nor lose bits
    xf = pypto.cast(x, pypto.DT_FP32)
    mean_sq = pypto.sum(xf * xf, dim=-1, keepdim=True) / x.shape[-1]
    # scale each row by 1/rms, then by the per-column gain
    y = xf * pypto.rsqrt(mean_sq + EPS) * g
    by_hand[:] = pypto.cast(y, pypto.DT_FP16)
    # the builtin: one op, same formula, result in the input's dtype
    builtin[:] = pypto.rms_norm(x, gamma, epsilon=EPS)


def check() -> list[Check]:
    torch.manual_seed(0)
    rows = 40
    x = (torch.randn(rows, 256) * 2).half()
    gamma = (torch.rand(256) + 0.5).half()
    by_hand = torch.empty(rows, 256, dtype=torch.float16)
    builtin = torch.empty_like(by_hand)
    rmsnorm_kernel(x, gamma, by_hand, builtin)
    # golden in fp32 from the same fp16 inputs
    xf = x.float()
    want = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * gamma.float()
    # fp16 output: max-abs check; values reach ~6, where one fp16 rounding is up to 2e-3
    return [
        compare("rmsnorm by hand fp16", by_hand, want, atol=5e-3, max_abs_only=True),
        compare("pypto.rms_norm fp16", builtin, want, atol=5e-3, max_abs_only=True),
    ]


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "rmsnorm: by hand and with pypto.rms_norm"))
