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
