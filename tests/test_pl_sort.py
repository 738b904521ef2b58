"""PyPTO 3's sort and gather ops (`pl.arange`, `pl.sort32`, `pl.mrgsort`, `pl.gather`'s index and mask
forms, `pl.tile.MaskPattern`) run through our one pipeline and give torch's numbers. The kernels are
our own small ones."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.ir.errors import PyptoError
from pypto.runtime import RunConfig

CFG = RunConfig(platform="a2a3sim")
N = 128
ROWS = 4
K = 8


@pl.jit
def ranges(up: pl.Out[pl.Tensor[[1, N], pl.INT32]], down: pl.Out[pl.Tensor[[1, N], pl.INT32]],
           bits: pl.Out[pl.Tensor[[1, N], pl.UINT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ci"):
        up[:, :] = pl.arange(5, [1, N])
        down[:, :] = pl.arange(100, [1, N], dtype=pl.INT32, descending=True)
        bits[:, :] = pl.tile.arange(0, [1, N], dtype=pl.UINT32)
    return up, down, bits


def test_arange_ascending_descending_and_dtype() -> None:
    up, down = torch.zeros(1, N, dtype=torch.int32), torch.zeros(1, N, dtype=torch.int32)
    bits = torch.zeros(1, N, dtype=torch.uint32)
    ranges(up, down, bits, config=CFG)
    assert torch.equal(up[0], torch.arange(5, 5 + N, dtype=torch.int32))
    assert torch.equal(down[0], torch.arange(100, 100 - N, -1, dtype=torch.int32))
    assert torch.equal(bits[0].to(torch.int64), torch.arange(N))


@pl.jit
def sort_blocks(x: pl.Tensor[[1, N], pl.FP32], vals: pl.Out[pl.Tensor[[1, N], pl.FP32]],
                idx: pl.Out[pl.Tensor[[1, N], pl.INT32]], raw: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="s32"):
        s = pl.sort32(x, pl.arange(0, [1, N], dtype=pl.INT32))
        vals[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P0101)
        idx[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
        raw[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P1010)  # the index lanes as FP32 bits
    return vals, idx, raw


def test_sort32_sorts_each_32_block_descending_and_carries_the_index() -> None:
    x = torch.randn(1, N)
    x[0, 3] = x[0, 9]  # a tie inside a block: the lower position first
    vals, idx, raw = torch.zeros(1, N), torch.zeros(1, N, dtype=torch.int32), torch.zeros(1, N)
    sort_blocks(x, vals, idx, raw, config=CFG)
    blocks = x.view(-1, 32)
    want_v, want_i = torch.sort(blocks, dim=-1, descending=True, stable=True)
    want_i = want_i + torch.arange(0, N, 32).view(-1, 1)
    assert torch.equal(vals.view(-1, 32), want_v)
    assert torch.equal(idx.view(-1, 32), want_i.to(torch.int32))
    assert torch.equal(raw.view(torch.int32), idx)
    tie = [int(i) for i in idx[0, :32] if int(i) in (3, 9)]
    assert tie == [3, 9]


@pl.jit
def top_rows(x: pl.Tensor[[ROWS, N], pl.FP32], vals: pl.Out[pl.Tensor[[ROWS, K], pl.FP32]],
             idx: pl.Out[pl.Tensor[[ROWS, K], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="topk"):
        init = pl.arange(0, [1, N], dtype=pl.UINT32)
        for r in pl.range(ROWS):
            s = pl.sort32(x[r : r + 1, :], init)
            s = pl.mrgsort(s, block_len=64)  # 4 runs of 32 pairs -> the whole row of 128
            pairs = s[:, 0 : 2 * K]
            vals[r : r + 1, :] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P0101)
            idx[r : r + 1, :] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
    return vals, idx


def test_sort32_then_mrgsort_is_a_row_topk() -> None:
    x = torch.randn(ROWS, N)
    vals, idx = torch.zeros(ROWS, K), torch.zeros(ROWS, K, dtype=torch.int32)
    top_rows(x, vals, idx, config=CFG)
    want_v, want_i = torch.topk(x, K, dim=-1)
    assert torch.equal(vals, want_v)
    assert torch.equal(idx, want_i.to(torch.int32))


@pl.jit
def merge_two(a: pl.Tensor[[1, 32], pl.FP32], b: pl.Tensor[[1, 32], pl.FP32],
              vals: pl.Out[pl.Tensor[[1, 64], pl.FP32]], idx: pl.Out[pl.Tensor[[1, 64], pl.INT32]],
              every4: pl.Out[pl.Tensor[[1, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="merge"):
        sa = pl.sort32(a, pl.arange(0, [1, 32]))
        sb = pl.sort32(b, pl.arange(100, [1, 32]))
        m = pl.mrgsort(sa, sb)
        vals[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P0101)
        idx[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
        every4[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P0001)  # the values of even pairs
    return vals, idx, every4


def test_mrgsort_two_way_merges_sorted_lists() -> None:
    a, b = torch.randn(1, 32), torch.randn(1, 32)
    vals, idx, every4 = torch.zeros(1, 64), torch.zeros(1, 64, dtype=torch.int32), torch.zeros(1, 32)
    merge_two(a, b, vals, idx, every4, config=CFG)
    both = torch.cat([a, b], dim=-1)
    want_v, pos = torch.sort(both, dim=-1, descending=True, stable=True)
    want_i = torch.where(pos < 32, pos, pos - 32 + 100).to(torch.int32)
    assert torch.equal(vals, want_v)
    assert torch.equal(idx, want_i)
    assert torch.equal(every4, want_v[:, 0::2])


@pl.jit
def gathers(x: pl.Tensor[[ROWS, 16], pl.FP32], index: pl.Tensor[[ROWS, 4], pl.INT32],
            picked: pl.Out[pl.Tensor[[ROWS, 4], pl.FP32]], odd: pl.Out[pl.Tensor[[ROWS, 8], pl.FP32]],
            third: pl.Out[pl.Tensor[[ROWS, 4], pl.FP32]], bits: pl.Out[pl.Tensor[[ROWS, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="g"):
        picked[:, :] = pl.gather(x, -1, index)
        odd[:, :] = pl.gather(x, mask_pattern=pl.tile.MaskPattern.P1010)
        third[:, :] = pl.tile.gather_mask(x, pl.tile.MaskPattern.P0100)
        bits[:, :] = pl.gather(x, mask_pattern=pl.tile.MaskPattern.P0101, output_dtype=pl.INT32)
    return picked, odd, third, bits


def test_gather_index_and_mask_forms() -> None:
    x = torch.randn(ROWS, 16)
    index = torch.randint(0, 16, (ROWS, 4), dtype=torch.int32)
    picked, odd, third = torch.zeros(ROWS, 4), torch.zeros(ROWS, 8), torch.zeros(ROWS, 4)
    bits = torch.zeros(ROWS, 8, dtype=torch.int32)
    gathers(x, index, picked, odd, third, bits, config=CFG)
    assert torch.equal(picked, torch.gather(x, -1, index.long()))
    assert torch.equal(odd, x[:, 1::2])
    assert torch.equal(third, x[:, 2::4])
    assert torch.equal(bits, x[:, 0::2].contiguous().view(torch.int32))


@pl.jit
def bad_block_len(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    s = pl.sort32(x, pl.arange(0, [1, N]))
    s = pl.mrgsort(s, block_len=48)
    y[:, :] = pl.gather(s, mask_pattern=pl.tile.MaskPattern.P0101)
    return y


@pl.jit
def odd_pair_slice(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, 4], pl.FP32]]):
    s = pl.sort32(x, pl.arange(0, [1, N]))
    y[:, :] = pl.gather(s[:, 1:9], mask_pattern=pl.tile.MaskPattern.P0101)
    return y


@pl.jit
def bad_arange(y: pl.Out[pl.Tensor[[2, N], pl.INT32]]):
    y[:, :] = pl.arange(0, [2, N])
    return y


def test_rules_are_errors() -> None:
    x = torch.randn(1, N)
    with pytest.raises(PyptoError, match="block_len must be a positive multiple of 64"):
        bad_block_len(x, torch.zeros(1, N), config=CFG)
    with pytest.raises(PyptoError, match="pair boundaries"):
        odd_pair_slice(x, torch.zeros(1, 4), config=CFG)
    with pytest.raises(PyptoError, match="only the first row"):
        bad_arange(torch.zeros(2, N, dtype=torch.int32), config=CFG)
