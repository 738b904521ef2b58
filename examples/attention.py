"""Scaled dot-product attention: softmax(Q K^T * scale) V, one head per loop iteration.

fp16 Q, K, V feed the cube unit; the scores come out in fp32, the softmax runs in fp32 on
the vector unit, and the probabilities are cast back to fp16 for the second matmul. The
head axis is DYNAMIC, so one compiled kernel serves any number of heads.
Run: `.venv/bin/python examples/attention.py`.
"""

import math

import torch

import pypto
from pypto.testing import Check, compare

S, D = 128, 64


@pypto.frontend.jit
def attention_kernel(q: pypto.Tensor([pypto.DYNAMIC, S, D], pypto.DT_FP16),
                     k: pypto.Tensor([pypto.DYNAMIC, S, D], pypto.DT_FP16),
                     v: pypto.Tensor([pypto.DYNAMIC, S, D], pypto.DT_FP16),
                     out: pypto.Tensor([pypto.DYNAMIC, S, D], pypto.DT_FP32)):
    """softmax(Q K^T / sqrt(D)) V for each head.

    pypto-inputs:
        q: fp16[8, 128, 64]
        k: fp16[8, 128, 64]
        v: fp16[8, 128, 64]
        out: fp32[8, 128, 64]
    """
    # cube tiles for both matmuls (multiples of 16 elements), vector tiles of 32 score rows
    pypto.set_cube_tile_shapes([64, 128], [64, 128], [64, 128])
    pypto.set_vec_tile_shapes(1, 32, S)
    scale = 1.0 / math.sqrt(D)
    # one iteration per head; the body is compiled once
    for h in pypto.loop(0, q.shape[0], 1, name="LOOP_head", idx_name="h"):
        qh, kh, vh = q[h:h + 1, ...], k[h:h + 1, ...], v[h:h + 1, ...]
        # scores [1, S, S] = Q K^T, accumulated and returned in fp32
        scores = pypto.matmul(qh, kh, pypto.DT_FP32, b_trans=True) * scale
        # a numerically safe softmax over the key axis
        e = pypto.exp(scores - pypto.amax(scores, dim=-1, keepdim=True))
        p = e / pypto.sum(e, dim=-1, keepdim=True)
        # P V with fp16 probabilities (the cube unit's input dtype), fp32 result
        out[h:, ...] = pypto.matmul(pypto.cast(p, pypto.DT_FP16), vh, pypto.DT_FP32)


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    for heads in (8, 3):
        q, k, v = (torch.randn(heads, S, D).half() for _ in range(3))
        out = torch.empty(heads, S, D)
        attention_kernel(q, k, v, out)
        want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
        checks.append(compare(f"attention fp16 in, fp32 out, {heads} heads", out, want, rtol=3e-3, atol=3e-3))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "attention: softmax(Q K^T * scale) V"))
