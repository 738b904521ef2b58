"""One decode step of attention with a KV cache, updated in place by `pypto.scatter_update`.

Each of B sequences brings one new token. Its key and value are written into the caches at the
slot `positions` names (`scatter_update`, as PyPTO's production kernels update a paged cache);
then each sequence's query attends over its window of S cached slots: softmax(q K^T * scale) V.
Run: `.venv/bin/python examples/decode_attention.py`.
"""

import math

import torch

import pypto
from pypto.testing import Check, compare

B, S, D = 4, 64, 128


@pypto.frontend.jit
def decode_step(q: pypto.Tensor([B, D], pypto.DT_FP16), k_new: pypto.Tensor([B, D], pypto.DT_FP16),
                v_new: pypto.Tensor([B, D], pypto.DT_FP16), positions: pypto.Tensor([B, 1], pypto.DT_INT32),
                k_cache: pypto.Tensor([B * S, D], pypto.DT_FP16), v_cache: pypto.Tensor([B * S, D], pypto.DT_FP16),
                out: pypto.Tensor([B, D], pypto.DT_FP32)):
    """Write the new keys/values into the caches, then attend over each sequence's window.

    pypto-inputs:
        q: fp16[4, 128]
        k_new: fp16[4, 128]
        v_new: fp16[4, 128]
        positions: int32[4, 1]
        k_cache: fp16[256, 128]
        v_cache: fp16[256, 128]
        out: fp32[4, 128]
    """
    pypto.set_vec_tile_shapes(16, D)
    pypto.scatter_update(k_cache, -2, positions, k_new)
    pypto.scatter_update(v_cache, -2, positions, v_new)
    pypto.set_cube_tile_shapes([16, 16], [128, 128], [64, 64])
    for b in pypto.loop(B, name="seqs", idx_name="b"):
        qb = pypto.view(q, [1, D], [b, 0])
        keys = pypto.view(k_cache, [S, D], [b * S, 0])
        values = pypto.view(v_cache, [S, D], [b * S, 0])
        pypto.set_vec_tile_shapes(1, S)
        scores = pypto.matmul(qb, keys, pypto.DT_FP32, b_trans=True) * (1.0 / math.sqrt(D))
        probs = pypto.cast(pypto.softmax(scores, -1), pypto.DT_FP16)
        out[b:b + 1, :] = pypto.matmul(probs, values, pypto.DT_FP32)


def check() -> list[Check]:
    torch.manual_seed(0)
    q, k_new, v_new = (torch.randn(B, D, dtype=torch.float16) for _ in range(3))
    k_cache = torch.randn(B * S, D, dtype=torch.float16)
    v_cache = torch.randn(B * S, D, dtype=torch.float16)
    positions = torch.tensor([[b * S + (7 * b + 3) % S] for b in range(B)], dtype=torch.int32)
    want_k, want_v = k_cache.clone(), v_cache.clone()
    want_k[positions[:, 0].long()] = k_new
    want_v[positions[:, 0].long()] = v_new
    want = torch.empty(B, D)
    for b in range(B):
        keys, values = want_k[b * S:(b + 1) * S].float(), want_v[b * S:(b + 1) * S].float()
        p = torch.softmax(q[b:b + 1].float() @ keys.T / math.sqrt(D), -1).half().float()
        want[b] = (p @ values)[0]
    out = torch.empty(B, D)
    decode_step(q, k_new, v_new, positions, k_cache, v_cache, out)
    return [Check("k cache updated in place at the positions", 0.0, 0.0, 0.0, bool(torch.equal(k_cache, want_k))),
            Check("v cache updated in place at the positions", 0.0, 0.0, 0.0, bool(torch.equal(v_cache, want_v))),
            compare(f"attention out fp16 -> fp32 [{B},{D}]", out, want, rtol=2e-3, atol=2e-3)]


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "decode attention: KV cache update + attention per sequence"))
