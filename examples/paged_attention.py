"""Decode attention over a paged KV cache, with each sequence's length read from a tensor.

Each of B sequences has one query token (H heads sharing one KV head). Its keys and values live in
fixed-size blocks of a shared cache; `block_table[b, j]` names the cache block holding block j of
sequence b, and `seq_lens[b]` says how many tokens sequence b has. Both are read inside the kernel
as run-time scalars (`seq_lens[b]`, as PyPTO's GetTensorData): the first sets the block loop's trip
count, the second the offset of each view into the cache. The blocks are combined with an online
softmax (a running max, sum and weighted accumulator per head), as flash-decoding does.
Run: `.venv/bin/python examples/paged_attention.py`.
"""

import math

import torch

import pypto
from pypto.testing import Check, compare

B, H, D = 3, 16, 64  # sequences, query heads, head size
BLOCK, MAX_BLOCKS, CACHE_BLOCKS = 32, 4, 16  # tokens per cache block, blocks per sequence, blocks in the cache
SCALE = 1.0 / math.sqrt(D)


@pypto.frontend.jit
def paged_decode(q: pypto.Tensor([B * H, D], pypto.DT_FP16),
                 k_cache: pypto.Tensor([CACHE_BLOCKS * BLOCK, D], pypto.DT_FP16),
                 v_cache: pypto.Tensor([CACHE_BLOCKS * BLOCK, D], pypto.DT_FP16),
                 block_table: pypto.Tensor([B, MAX_BLOCKS], pypto.DT_INT32),
                 seq_lens: pypto.Tensor([B], pypto.DT_INT32),
                 out: pypto.Tensor([B * H, D], pypto.DT_FP32)):
    """Attention of each sequence's query over its cached tokens, block by block.

    pypto-inputs:
        block_table: int32[3, 4] = [[3, 7, 1, 0], [12, 5, 0, 0], [9, 2, 14, 6]]
        seq_lens: int32[3] = [96, 64, 128]
    """
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(H, BLOCK)
    for b in pypto.loop(B, name="seqs", idx_name="b"):
        qb = pypto.view(q, [H, D], [b * H, 0])
        row_max = pypto.full([H, 1], -1e30, pypto.DT_FP32)
        row_sum = pypto.zeros([H, 1], dtype=pypto.DT_FP32)
        acc = pypto.zeros([H, D], dtype=pypto.DT_FP32)
        for j in pypto.loop(seq_lens[b] // BLOCK, name="blocks", idx_name="j"):
            start = block_table[b, j] * BLOCK  # where block j of sequence b sits in the cache
            keys = pypto.view(k_cache, [BLOCK, D], [start, 0])
            values = pypto.view(v_cache, [BLOCK, D], [start, 0])
            scores = pypto.matmul(qb, keys, pypto.DT_FP32, b_trans=True) * SCALE
            new_max = pypto.maximum(row_max, pypto.amax(scores, -1, keepdim=True))
            probs = pypto.exp(scores - new_max)
            rescale = pypto.exp(row_max - new_max)
            row_sum[:] = row_sum * rescale + pypto.sum(probs, -1, keepdim=True)
            acc[:] = acc * rescale + pypto.matmul(pypto.cast(probs, pypto.DT_FP16), values, pypto.DT_FP32)
            row_max[:] = new_max
        out[b * H:(b + 1) * H, :] = acc / row_sum


def reference(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
              seq_lens: torch.Tensor) -> torch.Tensor:
    out = torch.empty(B * H, D)
    for b in range(B):
        blocks = block_table[b, : int(seq_lens[b]) // BLOCK].long()
        rows = (blocks[:, None] * BLOCK + torch.arange(BLOCK)).reshape(-1)
        keys, values = k_cache[rows].float(), v_cache[rows].float()
        p = torch.softmax(q[b * H:(b + 1) * H].float() @ keys.T * SCALE, -1)
        out[b * H:(b + 1) * H] = p @ values
    return out


def check() -> list[Check]:
    torch.manual_seed(0)
    q = torch.randn(B * H, D, dtype=torch.float16)
    k_cache, v_cache = (torch.randn(CACHE_BLOCKS * BLOCK, D, dtype=torch.float16) for _ in range(2))
    block_table = torch.tensor([[3, 7, 1, 0], [12, 5, 0, 0], [9, 2, 14, 6]], dtype=torch.int32)
    checks = []
    for lens in ([96, 64, 128], [32, 128, 64]):  # the second call changes every trip count
        seq_lens = torch.tensor(lens, dtype=torch.int32)
        out = torch.zeros(B * H, D)
        paged_decode(q, k_cache, v_cache, block_table, seq_lens, out)
        want = reference(q, k_cache, v_cache, block_table, seq_lens)
        checks.append(compare(f"attention, seq_lens {lens} [{B * H},{D}]", out, want, rtol=5e-3, atol=5e-3))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "paged decode attention: seq_lens and block_table read at run time"))
