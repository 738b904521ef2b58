"""The ops built from others (`pypto.tracing.composite`): `fillpad` and the experimental
`transposed_batchmatmul`, `gather_in_ub`, `gather_in_l1`, against torch over dtypes and tails,
and their mistakes at the user's line; `Tensor.valid_shape` is readable."""

from __future__ import annotations

import pytest
import torch

import pypto

DTYPES = {pypto.DT_FP32: torch.float32, pypto.DT_FP16: torch.float16, pypto.DT_INT32: torch.int32}


def _fillpad_kernel(dt: pypto.DataType, rows: int, cols: int, vr: int, vc: int, value: object):
    @pypto.frontend.jit
    def pad(x: pypto.Tensor([rows, cols], dt), out: pypto.Tensor([rows, cols], dt)):
        pypto.set_vec_tile_shapes(8, 16)
        v = pypto.view(x, [rows, cols], [0, 0], valid_shape=[vr, vc])
        assert [int(d) for d in v.valid_shape] == [vr, vc]
        out[:] = pypto.fillpad(v, "constant", value)

    return pad


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize(("vr", "vc"), [(5, 20), (16, 7), (1, 1), (16, 32)])
def test_fillpad_sets_what_lies_past_the_valid_shape(dt, vr, vc):
    value = -3 if dt is pypto.DT_INT32 else "-inf"
    x = (torch.randn(16, 32) * 10).to(DTYPES[dt])
    out = torch.zeros(16, 32, dtype=DTYPES[dt])
    _fillpad_kernel(dt, 16, 32, vr, vc, value)(x, out)
    want = torch.full((16, 32), float(value) if isinstance(value, str) else value, dtype=DTYPES[dt])
    want[:vr, :vc] = x[:vr, :vc]
    assert torch.equal(out, want)


def test_fillpad_on_a_dynamic_tail_pads_each_call_by_its_valid_rows():
    @pypto.frontend.jit
    def tail_pad(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32],
                 pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        rows = x.shape[0]
        for i in pypto.loop(0, rows, 8):
            chunk = x.__getitem__((slice(i, i + 8), slice(None)), valid_shape=[pypto.min(8, rows - i), 32])
            padded = pypto.fillpad(chunk * 1.0, value=0.5)
            out[i:i + 8, :] = pypto.view(padded, [8, 32], [0, 0], valid_shape=[pypto.min(8, rows - i), 32])

    for rows in (8, 13):
        x = torch.randn(rows, 32)
        out = torch.zeros(rows, 32)
        tail_pad(x, out)
        torch.testing.assert_close(out, x)


def test_fillpad_mistakes_name_the_problem_at_the_line():
    @pypto.frontend.jit
    def reflect(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.fillpad(x, "reflect")  # line +3

    with pytest.raises(pypto.PyptoError, match="only 'constant'") as e:
        reflect(torch.randn(8, 32), torch.zeros(8, 32))
    assert e.value.line == reflect.fn.__code__.co_firstlineno + 3


@pytest.mark.parametrize("dt", [pypto.DT_FP16, pypto.DT_BF16])
@pytest.mark.parametrize(("m", "b", "k", "n"), [(16, 2, 32, 64), (5, 3, 16, 24)])
def test_transposed_batchmatmul_is_a_batched_by_its_middle_axis(dt, m, b, k, n):
    tdt = torch.float16 if dt is pypto.DT_FP16 else torch.bfloat16

    @pypto.frontend.jit
    def tbmm(a: pypto.Tensor([m, b, k], dt), w: pypto.Tensor([b, k, n], dt), out: pypto.Tensor([m, b, n],
             pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
        pypto.set_vec_tile_shapes(16, 4, 64)
        out[:] = pypto.experimental.transposed_batchmatmul(a, w, pypto.DT_FP32)

    a, w = torch.randn(m, b, k).to(tdt), torch.randn(b, k, n).to(tdt)
    out = torch.zeros(m, b, n)
    tbmm(a, w, out)
    want = (a.float().transpose(0, 1) @ w.float()).transpose(0, 1)
    torch.testing.assert_close(out, want, rtol=1e-2, atol=1e-2)


def test_transposed_batchmatmul_needs_only_the_vector_tile_in_force():
    """A cube op in PyPTO: a 2-D set_vec_tile_shapes left from earlier vector work is enough (its
    batch-axis moves take the tile with a leading 1), as in DeepSeek V3.2's MLA prolog."""
    m, b, k, n = 8, 4, 32, 64

    @pypto.frontend.jit
    def tbmm(a: pypto.Tensor([m, b, k], pypto.DT_FP32), w: pypto.Tensor([b, k, n], pypto.DT_FP32),
             out: pypto.Tensor([m, b, n], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
        r = pypto.experimental.transposed_batchmatmul(a, w, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(8, 4, 64)
        out[:] = r

    a, w = torch.rand(m, b, k), torch.rand(b, k, n)
    out = torch.zeros(m, b, n)
    tbmm(a, w, out)
    torch.testing.assert_close(out, torch.bmm(a.transpose(0, 1), w).transpose(0, 1), rtol=1e-4, atol=1e-4)


def test_transposed_batchmatmul_refuses_different_batches():
    @pypto.frontend.jit
    def bad(a: pypto.Tensor([4, 2, 16], pypto.DT_FP16), w: pypto.Tensor([3, 16, 8], pypto.DT_FP16),
            out: pypto.Tensor([4, 2, 8], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        out[:] = pypto.experimental.transposed_batchmatmul(a, w, pypto.DT_FP32)

    with pytest.raises(pypto.PyptoError, match=r"batch of a \(dim 1, 2\) and of b \(dim 0, 3\) differ"):
        bad(torch.zeros(4, 2, 16).half(), torch.zeros(3, 16, 8).half(), torch.zeros(4, 2, 8))


TOKENS, HIDDEN, BLOCK = 32, 16, 4


@pypto.frontend.jit
def paged_gathers(cache: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_FP32), idx: pypto.Tensor([1, 6], pypto.DT_INT32),
                  table: pypto.Tensor([1, 8], pypto.DT_INT32), rows: pypto.Tensor([6, HIDDEN], pypto.DT_FP32),
                  cols: pypto.Tensor([6, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    rows[:] = pypto.experimental.gather_in_ub(cache, idx, table, BLOCK, -2)
    cols[:] = pypto.experimental.gather_in_l1(cache, idx, table, BLOCK, 8, True, True)


@pytest.mark.parametrize("seed", range(4))
def test_gather_in_ub_and_l1_read_token_rows_through_the_page_table(seed):
    g = torch.Generator().manual_seed(seed)
    cache = torch.randn(TOKENS, HIDDEN, generator=g)
    table = torch.randperm(TOKENS // BLOCK, generator=g).to(torch.int32)[None, :]
    idx = torch.randint(0, TOKENS, (1, 6), generator=g, dtype=torch.int32)
    rows, cols = torch.zeros(6, HIDDEN), torch.zeros(6, 8)
    paged_gathers(cache, idx, table, rows, cols)
    where = [int(table[0, t // BLOCK]) * BLOCK + t % BLOCK for t in idx[0].tolist()]
    assert torch.equal(rows, cache[where])
    assert torch.equal(cols, cache[where][:, :8])  # is_trans is the L1 layout for the matmul, not the shape


STEPS, K, CACHE, ROW0 = 3, 4, 64, 8


@pypto.frontend.jit
def windowed_gathers(cache: pypto.Tensor([CACHE, HIDDEN], pypto.DT_FP32),
                     idx: pypto.Tensor([STEPS, K], pypto.DT_INT32), table: pypto.Tensor([1, 8], pypto.DT_INT32),
                     rows: pypto.Tensor([STEPS * K, HIDDEN], pypto.DT_FP32),
                     cols: pypto.Tensor([STEPS * K, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    for t in pypto.loop(0, STEPS, 1):
        k = pypto.min(t + 2, K)  # step t selects t + 2 tokens: its top-k row is valid that far
        sel = pypto.view(idx, [1, K], [t, 0], valid_shape=[1, k])
        # a K-row window at ROW0 on the cache: PyPTO's gather addresses rows from the window's first
        # row on, past its end, so the page table spans the whole cache
        win = pypto.view(cache, [K, HIDDEN], [ROW0, 0], valid_shape=[k, HIDDEN])
        pypto.assemble(pypto.experimental.gather_in_ub(win, sel, table, 8, -2), [t * K, 0], rows)
        right = pypto.view(cache, [K, 8], [ROW0, 8])  # and the right half of its columns
        pypto.assemble(pypto.experimental.gather_in_l1(right, sel, table, 8, 8, True, True), [t * K, 0], cols)


@pytest.mark.parametrize("seed", range(3))
def test_gathers_on_a_window_read_the_cache_past_it_and_only_the_valid_indices(seed):
    g = torch.Generator().manual_seed(seed)
    cache = torch.randn(CACHE, HIDDEN, generator=g)
    table = torch.randperm(7, generator=g).to(torch.int32)[None, :]
    table = torch.cat([table, torch.full((1, 1), -1, dtype=torch.int32)], dim=1)  # an unused page: -1
    idx = torch.randint(0, 56 - ROW0, (STEPS, K), generator=g, dtype=torch.int32)
    for t in range(STEPS):
        idx[t, t + 2:] = 1 << 20  # past the valid top-k: padding no lookup may use (page 2**17 is no page)
    rows, cols = torch.zeros(STEPS * K, HIDDEN), torch.zeros(STEPS * K, 8)
    windowed_gathers(cache, idx, table, rows, cols)
    for t in range(STEPS):
        for j in range(min(t + 2, K)):  # the valid rows (what the assemble writes past them is not checked)
            pos = int(idx[t, j])
            r = ROW0 + int(table[0, pos // 8]) * 8 + pos % 8
            assert torch.equal(rows[t * K + j], cache[r]), (t, j)
            assert torch.equal(cols[t * K + j], cache[r, 8:]), (t, j)


def test_gather_in_ub_mistakes_name_the_problem():
    @pypto.frontend.jit
    def axis0(cache: pypto.Tensor([8, 16], pypto.DT_FP32), idx: pypto.Tensor([1, 2], pypto.DT_INT32),
              table: pypto.Tensor([1, 2], pypto.DT_INT32), out: pypto.Tensor([2, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.experimental.gather_in_ub(cache, idx, table, 4, 0)

    args = (torch.zeros(8, 16), torch.zeros(1, 2, dtype=torch.int32), torch.zeros(1, 2, dtype=torch.int32),
            torch.zeros(2, 16))
    with pytest.raises(pypto.PyptoError, match="axis must be -2"):
        axis0(*args)

    @pypto.frontend.jit
    def flat_idx(cache: pypto.Tensor([8, 16], pypto.DT_FP32), idx: pypto.Tensor([2], pypto.DT_INT32),
                 table: pypto.Tensor([1, 2], pypto.DT_INT32), out: pypto.Tensor([2, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.experimental.gather_in_ub(cache, idx, table, 4, -2)

    with pytest.raises(pypto.PyptoError, match=r"indices must have shape \[1, n\], got \[2\]"):
        flat_idx(args[0], torch.zeros(2, dtype=torch.int32), *args[2:])
