"""Rotary position embedding (RoPE), rotate-half form, on bf16 activations.

out = x * cos + rotate_half(x) * sin, where rotate_half([x1, x2]) = [-x2, x1] splits the
head dim in two halves. x is [tokens, heads, head_dim]; cos and sin are [tokens, 1,
head_dim] and broadcast over the heads. Halves are views, and `pypto.concat` glues the
rotated halves back together. Run: `.venv/bin/python examples/rope.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

HEADS, HEAD_DIM = 4, 64


def rotate_half(x):
    # [x1, x2] -> [-x2, x1] along the last axis, from two views of the halves
    half = x.shape[-1] // 2
    return pypto.concat([-x[..., half:], x[..., :half]], dim=-1)


@pypto.frontend.jit
def rope_kernel(x: pypto.Tensor([pypto.DYNAMIC, HEADS, HEAD_DIM], pypto.DT_BF16),
                cos: pypto.Tensor([pypto.DYNAMIC, 1, HEAD_DIM], pypto.DT_BF16),
                sin: pypto.Tensor([pypto.DYNAMIC, 1, HEAD_DIM], pypto.DT_BF16),
                out: pypto.Tensor([pypto.DYNAMIC, HEADS, HEAD_DIM], pypto.DT_BF16)):
    """Rotary position embedding of `x` with the cos/sin tables of each token.

    pypto-inputs:
        x: bf16[40, 4, 64]
        cos: bf16[40, 1, 64]
        sin: bf16[40, 1, 64]
        out: bf16[40, 4, 64]
    """
    # 3-D tiles: 8 tokens x all heads x the whole head dim (64 x 2 B = 128 B, 32-byte aligned)
    pypto.set_vec_tile_shapes(8, HEADS, HEAD_DIM)
    # compute in fp32, round once at the end
    xf = pypto.cast(x, pypto.DT_FP32)
    c = pypto.cast(cos, pypto.DT_FP32)
    s = pypto.cast(sin, pypto.DT_FP32)
    # [T, H, D] * [T, 1, D]: the same rotation angle for every head of a token
    out[:] = pypto.cast(xf * c + rotate_half(xf) * s, pypto.DT_BF16)


def rope_tables(tokens: int, dim: int, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables [tokens, 1, dim] as Llama-style models build them."""
    inv_freq = 1.0 / base ** (torch.arange(0, dim, 2).float() / dim)
    angles = torch.outer(torch.arange(tokens).float(), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)[:, None, :]
    return emb.cos(), emb.sin()


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    for tokens in (40, 17):
        x = torch.randn(tokens, HEADS, HEAD_DIM).bfloat16()
        cos, sin = (t.bfloat16() for t in rope_tables(tokens, HEAD_DIM))
        out = torch.empty_like(x)
        rope_kernel(x, cos, sin, out)
        # golden in fp32 from the same bf16 values
        xf, c, s = x.float(), cos.float(), sin.float()
        want = xf * c + torch.cat([-xf[..., HEAD_DIM // 2:], xf[..., :HEAD_DIM // 2]], dim=-1) * s
        # bf16 output: max-abs; values reach ~5, where one bf16 rounding is up to 1.6e-2
        checks.append(compare(f"rope bf16 [{tokens},{HEADS},{HEAD_DIM}]", out, want, atol=2e-2, max_abs_only=True))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "rope: rotate-half rotary embedding"))
