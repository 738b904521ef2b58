"""Views whose window is wider than their source: the data is the valid part, and what reads the
whole window (a reshape across the padded axis) sees the padding as zeros (PyPTO leaves it
undefined; only the valid entries are checked). Run at tile level and by the reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto

N, K, BS = 64, 16, 16
STAGES = [pypto.CompStage.ALL_COMPLETE, pypto.CompStage.TENSOR_GRAPH]


def padded_reshape(stage: pypto.CompStage):
    @pypto.frontend.jit(host_options={"compile_stage": stage})
    def kernel(scales: pypto.Tensor([N, 4], pypto.DT_FP32), idx: pypto.Tensor([1, K], pypto.DT_INT32),
               table: pypto.Tensor([1, N // BS], pypto.DT_INT32), out: pypto.Tensor([K * 8, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 8)
        v = pypto.view(scales, [N, 8], [0, 0], valid_shape=[N, 4])  # 4 valid columns of 8
        g = pypto.experimental.gather_in_ub(v, idx, table, BS, -2)
        pypto.set_vec_tile_shapes(32, 8)
        out[:] = pypto.add(pypto.reshape(g, [K * 8, 1]), 1.0)
    return kernel


@pytest.mark.parametrize("stage", STAGES)
def test_a_reshape_across_a_padded_view_keeps_the_valid_entries_in_place(stage):
    g = torch.Generator().manual_seed(0)
    s = torch.rand(N, 4, generator=g)
    i = torch.randperm(N, generator=g)[:K].to(torch.int32).reshape(1, K)
    t = torch.arange(N // BS, dtype=torch.int32).reshape(1, -1)
    o = torch.full((K * 8, 1), -1.0)
    padded_reshape(stage)(s, i, t, o)
    rows = o.reshape(K, 8)
    torch.testing.assert_close(rows[:, :4], s[i[0].long()] + 1)
    torch.testing.assert_close(rows[:, 4:], torch.ones(K, 4))  # the padding, read as zero


def reshape_of_a_padded_param_view(stage: pypto.CompStage):
    @pypto.frontend.jit(host_options={"compile_stage": stage})
    def kernel(x: pypto.Tensor([6, 3], pypto.DT_FP32), out: pypto.Tensor([48], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        v = pypto.view(x, [6, 8], [0, 0], valid_shape=[6, 3])
        pypto.set_vec_tile_shapes(16)
        out[:] = pypto.mul(pypto.reshape(v, [48]), 2.0)
    return kernel


@pytest.mark.parametrize("stage", STAGES)
def test_a_reshape_of_a_padded_view_of_a_parameter(stage):
    x = np.arange(18, dtype=np.float32).reshape(6, 3)
    out = np.full(48, -1, np.float32)
    reshape_of_a_padded_param_view(stage)(x, out)
    want = np.zeros((6, 8), np.float32)
    want[:, :3] = x * 2
    np.testing.assert_array_equal(out.reshape(6, 8), want)


def oversize_row(stage: pypto.CompStage):
    @pypto.frontend.jit(host_options={"compile_stage": stage})
    def kernel(table: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_INT32), idx: pypto.Tensor([1, 4], pypto.DT_INT32),
               out: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(1, 64)
        for b in pypto.loop(table.shape[0], name="LOOP_B", idx_name="b"):
            row = pypto.view(table, [1, 64], [b, 0])  # a window wider than the table: its data is the 16 inside
            out[b:b + 1, :] = pypto.gather(row, 1, idx)
    return kernel


@pytest.mark.parametrize("stage", STAGES)
def test_a_view_window_past_the_end_is_its_part_inside(stage):
    t = torch.arange(48, dtype=torch.int32).reshape(3, 16)
    i = torch.tensor([[0, 3, 7, 15]], dtype=torch.int32)
    o = torch.zeros(3, 4, dtype=torch.int32)
    oversize_row(stage)(t, i, o)
    assert torch.equal(o, torch.gather(t, 1, i.expand(3, 4)))


@pytest.mark.parametrize("stage", STAGES)
def test_a_read_past_the_inside_part_is_an_error_at_the_reading_line(stage):
    kernel = oversize_row(stage)
    with pytest.raises(pypto.PyptoError, match="index 20 is out of range for dim 1 of size 16") as e:
        kernel(torch.zeros(2, 16, dtype=torch.int32), torch.tensor([[0, 3, 7, 20]], dtype=torch.int32),
               torch.zeros(2, 4, dtype=torch.int32))
    assert "gather(row, 1, idx)" in str(e.value)


def rows_of(stage: pypto.CompStage):
    @pypto.frontend.jit(host_options={"compile_stage": stage})
    def kernel(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), out: pypto.Tensor([16, 8], pypto.DT_FP32),
               start: int):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.view(x, [16, 8], [start, 0]) * 2.0
    return kernel


@pytest.mark.parametrize("stage", STAGES)
def test_an_elementwise_op_on_a_window_past_the_end_writes_only_the_inside_rows(stage):
    x = torch.rand(10, 8)
    out = torch.full((16, 8), -1.0)
    rows_of(stage)(x, out, 4)
    torch.testing.assert_close(out[:6], x[4:] * 2)
    torch.testing.assert_close(out[6:], torch.full((10, 8), -1.0))
    with pytest.raises(pypto.PyptoError, match="view reads outside its input: offset 10 on dim 0"):
        rows_of(stage)(x, out, 10)


def bytes_as_floats(stage: pypto.CompStage):
    @pypto.frontend.jit(host_options={"compile_stage": stage})
    def kernel(raw: pypto.Tensor([16, 64], pypto.DT_INT8), out: pypto.Tensor([16, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        part = pypto.view(raw, [16, 32], [0, 32], valid_shape=[16, 16])  # 16 valid bytes: 4 fp32
        f = pypto.view(part, dtype=pypto.DT_FP32)  # [16, 8] fp32, its data the 4 valid
        pypto.set_vec_tile_shapes(16, 8)
        out[:] = pypto.add(f, 1.0)
    return kernel


@pytest.mark.parametrize("stage", STAGES)
def test_a_dtype_view_of_a_tail_view_reads_its_valid_bytes(stage):
    scales = torch.rand(16, 8)
    raw = torch.zeros(16, 64, dtype=torch.int8)
    raw[:, 32:64] = scales.view(torch.int8)
    out = torch.full((16, 8), -1.0)
    bytes_as_floats(stage)(raw, out)
    torch.testing.assert_close(out[:, :4], scales[:, :4] + 1)
    torch.testing.assert_close(out[:, 4:], torch.full((16, 4), -1.0))


BLK, W = 16, 64


def _update(st, index, src):
    shape = st.shape
    pypto.set_vec_tile_shapes(1, BLK, W)
    src = pypto.reshape(src, [src.shape[0] * src.shape[1], src.shape[2]])  # a tail view: padded to 4 rows
    st = pypto.reshape(st, [st.shape[0] * st.shape[1], st.shape[2]])
    pypto.set_vec_tile_shapes(BLK, W)
    return pypto.reshape(pypto.scatter_update(st, -2, index, src), shape)


def cache_update(stage: pypto.CompStage):
    @pypto.frontend.jit(host_options={"compile_stage": stage})
    def kernel(state: pypto.Tensor([2, BLK, W], pypto.DT_FP32), new: pypto.Tensor([2, 4, W], pypto.DT_FP32),
               pos: pypto.Tensor([2], pypto.DT_INT32), out: pypto.Tensor([2, W], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(BLK)
        slots = pypto.reshape(pypto.arange(BLK), [1, BLK], inplace=True)
        for b in pypto.loop(2, name="LOOP_b", idx_name="b"):
            p = pos[b]
            if p < 2:
                pypto.set_vec_tile_shapes(1, 4, W)
                pypto.assemble(pypto.view(new, [1, 4, W], [b, 0, 0]), [b, 0, 0], state)
            else:
                pypto.set_vec_tile_shapes(1, BLK, W)
                st = pypto.view(state, [1, BLK, W], [b, 0, 0])
                if p < 8:
                    st = _update(st, pypto.view(slots, [1, 4], [0, 0]), pypto.view(new, [1, 4, W], [b, 0, 0]))
                else:
                    kv = pypto.view(new, [1, 4, W], [b, 0, 0], valid_shape=[1, 2, W])
                    st = _update(st, pypto.view(slots, [1, 4], [0, 4], valid_shape=[1, 2]), kv)
                pypto.set_vec_tile_shapes(1, BLK, W)
                r = pypto.sum(st, 1)
                pypto.set_vec_tile_shapes(1, W)
                pypto.assemble(r, [b, 0], out)
    return kernel


@pytest.mark.parametrize("stage", STAGES)
def test_a_reshaped_tail_view_scattered_into_a_reshaped_state_in_a_run_time_branch(stage):
    s, n = torch.rand(2, BLK, W), torch.rand(2, 4, W)
    out = torch.zeros(2, W)
    cache_update(stage)(s, n, torch.tensor([3, 9], dtype=torch.int32), out)
    want = s.clone()
    want[0, 0:4] = n[0]
    want[1, 4:6] = n[1, :2]
    torch.testing.assert_close(out, want.sum(1), rtol=1e-5, atol=1e-4)
