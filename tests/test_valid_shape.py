"""`valid_shape` as PyPTO defines it: a view's data is its valid part (the declared window may run
past the source), an assemble writes only that part, and a matmul on a tail view has only its rows."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto
import pypto.record  # noqa: F401 - pypto.record.compile_record below


@pypto.frontend.jit
def window(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32), shape: list, offsets: list,
           valid: list):
    pypto.set_vec_tile_shapes(8, 8)
    out[:] = pypto.view(x, shape, offsets, valid_shape=valid)


def test_a_declared_window_past_the_end_reads_only_its_valid_part():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.full((4, 4), -1, np.float32)
    window(x, out, [4, 4], [2, 4], [2, 4])
    np.testing.assert_array_equal(out[:2], x[2:4, 4:8])
    np.testing.assert_array_equal(out[2:], -1)  # the rows past the valid part are not written


def test_a_valid_part_past_the_end_is_still_an_error_at_the_line():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(pypto.PyptoError, match="runs past the tensor's size 4"):
        window(x, np.zeros((4, 4), np.float32), [4, 4], [2, 4], [3, 4])


@pypto.frontend.jit
def tail_ffn(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), w: pypto.Tensor([64, 32], pypto.DT_FP32),
             out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    b = x.shape[0]
    for idx in pypto.loop(0, (b + 15) // 16, 1, name="rows", idx_name="idx"):
        off = idx * 16
        chunk = pypto.view(x, [16, 64], [off, 0], valid_shape=[(b - off).min(16), 64])
        pypto.assemble(pypto.relu(pypto.matmul(chunk, w, pypto.DT_FP32)), [off, 0], out)


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 70))
def test_a_matmul_on_a_runtime_tail_view_has_only_the_valid_rows(rows):
    g = torch.Generator().manual_seed(rows)
    x, w = torch.randn(rows, 64, generator=g), torch.randn(64, 32, generator=g)
    out = torch.zeros(rows, 32)
    tail_ffn(x, w, out)
    torch.testing.assert_close(out, torch.relu(x @ w), rtol=1e-4, atol=1e-4)


@pypto.frontend.jit
def direct_rows(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), w: pypto.Tensor([64, 32], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])  # m bigger than the 16-row chunk
    b = x.shape[0]
    for idx in pypto.loop(0, (b + 15) // 16, 1, name="rows", idx_name="idx"):
        off = idx * 16
        chunk = pypto.view(x, [16, 64], [off, 0], valid_shape=[(b - off).min(16), 64])
        pypto.assemble(pypto.matmul(chunk, w, pypto.DT_FP32), [off, 0], out)  # written straight into out


@pytest.mark.parametrize("rows", [16, 21, 48])
def test_a_matmul_written_straight_into_an_offset_of_the_output(rows):
    g = torch.Generator().manual_seed(rows)
    x, w = torch.randn(rows, 64, generator=g), torch.randn(64, 32, generator=g)
    out = torch.zeros(rows, 32)
    direct_rows(x, w, out)
    torch.testing.assert_close(out, x @ w, rtol=1e-4, atol=1e-4)
    for board in ("sim", "cpu"):  # the boards run the same tile ops
        record = pypto.record.profile(pypto.record.compile_record(direct_rows, {"x": x, "w": w, "out": out}), board,
                                      {"x": x.numpy(), "w": w.numpy(), "out": out.numpy()})
        assert record.run is not None and record.run.tasks


@pytest.mark.parametrize("m", [1, 20, 63])
def test_a_full_with_a_valid_shape_pads_after_a_runtime_prefix(m):
    """A top-k input padded after its valid prefix: `full(valid_shape=[1, 64 - m])` assembled at the
    run-time offset m writes only its valid part, so its declared window may run past the end."""
    @pypto.jit
    def k(x: pypto.Tensor([1, 64], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
          out: pypto.Tensor([1, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 64)
        cut = n[0]
        pad = pypto.tensor([1, 64], pypto.DT_FP32, "pad")
        pypto.assemble(pypto.clone(pypto.view(x, [1, 64], [0, 0], valid_shape=[1, cut])), [0, 0], pad)
        pypto.assemble(pypto.full([1, 64], -1.0, pypto.DT_FP32, valid_shape=[1, 64 - cut]), [0, cut], pad)
        out[:] = pad + 0.0

    x = torch.randn(1, 64)
    out = torch.empty(1, 64)
    k(x, torch.tensor([m], dtype=torch.int32), out)
    assert torch.equal(out, torch.cat([x[:, :m], torch.full((1, 64 - m), -1.0)], 1))


def test_a_reshape_with_a_valid_shape_computes_and_writes_only_that_part():
    """A padded result read back at its real width (Kimi's attention residuals): softmax over the
    26 valid columns of a 32-wide reshape, assembled into a 26-wide output (PyPTO accepts it)."""
    @pypto.jit
    def k(x: pypto.Tensor([8, 1, 32], pypto.DT_FP32), out: pypto.Tensor([8, 26], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        y = pypto.exp(pypto.reshape(x, [8, 32], valid_shape=[8, 26]))
        assert y.valid_shape == [8, 26]
        pypto.assemble(pypto.softmax(y, dim=-1), [0, 0], out)

    x = torch.randn(8, 1, 32)
    out = torch.empty(8, 26)
    k(x, out)
    assert torch.allclose(out, torch.softmax(x.reshape(8, 32)[:, :26].exp(), -1), atol=1e-6)
    rec = pypto.record.compile_record(k, {"x": x, "out": out})
    ops = {o.op for o in rec.program.tiles.ops}
    assert "store" in ops and all(o.shape[-1] <= 26 for o in rec.program.tiles.ops if o.op == "store")


def test_a_tile_wider_than_the_destination_is_still_refused_without_a_valid_shape():
    @pypto.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 26], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.assemble(pypto.exp(x), [0, 0], out)

    with pytest.raises(pypto.PyptoError, match="32-wide tile at offset 0 runs past the destination's size 26"):
        k(torch.randn(8, 32), torch.empty(8, 26))


@pytest.mark.parametrize("m", [64, 37, 1])
def test_a_matmul_whose_left_operand_has_a_runtime_tail_in_k_uses_that_many_rows_of_the_right(m):
    """softmax(scores)[:, :m] @ v (DeepSeek V4's compressed attention: the valid window of the
    scores is as long as the sequence): K is the valid part, B's first m rows (it used to crash)."""
    @pypto.jit
    def k(p: pypto.Tensor([16, 64], pypto.DT_FP32), v: pypto.Tensor([64, 32], pypto.DT_FP16),
          n: pypto.Tensor([1], pypto.DT_INT32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
        cut = n[0]
        pv = pypto.cast(pypto.exp(pypto.view(p, [16, 64], [0, 0], valid_shape=[16, cut])), pypto.DT_FP16)
        out[:] = pypto.matmul(pv, v, pypto.DT_FP32)

    p, v, out = torch.randn(16, 64), torch.randn(64, 32).half(), torch.empty(16, 32)
    k(p, v, torch.tensor([m], dtype=torch.int32), out)
    assert torch.allclose(out, p[:, :m].exp().half().float() @ v[:m].float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("m", [1, 20, 64])
def test_a_reshape_of_a_tail_view_keeps_its_valid_part(m):
    """top-k indices viewed at their valid length, reshaped to 3-D with the same valid length and
    assembled, then padded (DeepSeek V3.2's lightning indexer): the reshape's input is only its
    valid part already."""
    @pypto.jit
    def k(x: pypto.Tensor([1, 64], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
          out: pypto.Tensor([1, 1, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 1, 64)
        cut = n[0]
        part = pypto.view(x, [1, 64], [0, 0], valid_shape=[1, cut])
        as3 = pypto.reshape(part, [1, 1, 64], valid_shape=[1, 1, cut])
        pypto.assemble(pypto.clone(as3), [0, 0, 0], out)
        pypto.assemble(pypto.full([1, 1, 64], -1.0, pypto.DT_FP32, valid_shape=[1, 1, 64 - cut]), [0, 0, cut], out)

    x, out = torch.randn(1, 64), torch.empty(1, 1, 64)
    k(x, torch.tensor([m], dtype=torch.int32), out)
    assert torch.equal(out[0], torch.cat([x[:, :m], torch.full((1, 64 - m), -1.0)], 1))


@pypto.frontend.jit
def masked_rows(m: pypto.Tensor([64, 96], pypto.DT_BOOL), a: pypto.Tensor([64, 32], pypto.DT_FP32),
                rows: pypto.Tensor([1], pypto.DT_INT32), out: pypto.Tensor([64, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    n = rows[0]
    mask = pypto.view(m, [64, 32], [0, 40], valid_shape=[n, 32])  # a runtime tail meets a whole tensor
    pypto.assemble(pypto.where(mask, a, float("-inf")) * 2.0, [0, 0], out)


@pytest.mark.parametrize("n", [16, 21, 64])
def test_an_elementwise_op_on_a_tail_view_and_a_whole_tensor_computes_the_part_both_have(n):
    """DeepSeek V4 win_attention masks a whole score block with a tail view of the mask: the result
    has the tail's valid rows (the data past it is undefined in PyPTO); at tile level it was an
    internal error (the tiles' shapes did not broadcast)."""
    g = torch.Generator().manual_seed(n)
    m, a = torch.rand(64, 96, generator=g) < 0.5, torch.randn(64, 32, generator=g)
    out = torch.zeros(64, 32)
    masked_rows(m, a, torch.tensor([n], dtype=torch.int32), out)
    want = torch.zeros(64, 32)
    want[:n] = torch.where(m[:n, 40:72], a[:n], float("-inf")) * 2.0
    torch.testing.assert_close(out, want)
