"""Writes never reach a value that is read again: an `assemble` (or a loop carrying a value)
writes in place only into a value nothing reads afterwards, at tile level as in the reference.
Common subexpression elimination merges equal `full`s (two `fillpad`s of one shape), so two
writes into "different" tensors can start from one value."""

from __future__ import annotations

import numpy as np
import torch

import pypto
from pypto.ir.text import parse
from pypto.reference.interpreter import Interpreter

L, D = 128, 64


@pypto.frontend.jit
def two_fillpads(q: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), k: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
                 out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    s = q.shape[0]
    pypto.set_vec_tile_shapes(64, 64)
    for s_idx in pypto.loop(0, s, L, name="LOOP_S", idx_name="s_idx"):
        rows = (s - s_idx).min(L)
        pq = pypto.fillpad(pypto.view(q, [L, D], [s_idx, 0], valid_shape=[rows, D]), "constant", 0.0)
        pk = pypto.fillpad(pypto.view(k, [L, D], [s_idx, 0], valid_shape=[rows, D]), "constant", 0.0)
        r = pypto.add(pypto.mul(pq, pq), pk)
        pypto.assemble(pypto.view(r, [L, D], [0, 0], valid_shape=[rows, D]), [s_idx, 0], out)


def test_two_fillpads_of_one_shape_keep_their_own_data():
    for s in (2, 130):
        q, k = torch.rand(s, D), torch.rand(s, D) + 10
        out = torch.zeros(s, D)
        two_fillpads(q, k, out)
        torch.testing.assert_close(out, q * q + k)


@pypto.frontend.jit
def two_loops(x: pypto.Tensor([8, 8], pypto.DT_FP32), a_out: pypto.Tensor([8, 8], pypto.DT_FP32),
              b_out: pypto.Tensor([8, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    a = pypto.full([8, 8], 1.0, pypto.DT_FP32)
    b = pypto.full([8, 8], 1.0, pypto.DT_FP32)
    for i in pypto.loop(2, name="LA", idx_name="i"):
        a[i * 4:i * 4 + 2, :] = pypto.view(x, [2, 8], [i * 4, 0])
    for j in pypto.loop(2, name="LB", idx_name="j"):
        b[j * 4 + 2:j * 4 + 4, :] = pypto.mul(pypto.view(x, [2, 8], [j * 4 + 2, 0]), 2.0)
    a_out[:] = pypto.add(a, 0.0)
    b_out[:] = pypto.add(b, 0.0)


def test_two_loops_carrying_equal_fulls_write_their_own_copies():
    x = torch.rand(8, 8)
    a, b = torch.zeros(8, 8), torch.zeros(8, 8)
    two_loops(x, a, b)
    want_a, want_b = torch.ones(8, 8), torch.ones(8, 8)
    for i in (0, 4):
        want_a[i:i + 2] = x[i:i + 2]
        want_b[i + 2:i + 4] = x[i + 2:i + 4] * 2
    torch.testing.assert_close(a, want_a)
    torch.testing.assert_close(b, want_b)


def test_the_reference_never_updates_a_value_a_loop_body_reads_from_outside():
    g = parse("""kernel k:
  %0: fp32[4] = param(name='x', index=0)
  %1: fp32[4] = full(shape=[4], value=0.0, dtype=DT_FP32)
  %5: none = loop(start=0, stop=2, step=1, index='i', name='L', submit_before_loop=False, parallel=False)
    %3: fp32[1] = view(%0, shape=[1], offsets=[i])
    %4: fp32[4] = assemble(%1, %3, offsets=[i])
    yield {}
  return {'y': %1}
""")
    out = Interpreter(g).run({"x": np.arange(1, 5, dtype=np.float32)}, {})
    np.testing.assert_array_equal(out["y"], np.zeros(4, np.float32))


@pypto.frontend.jit
def write_through_reshape(x: pypto.Tensor([8, 8], pypto.DT_FP32), a_out: pypto.Tensor([8, 8], pypto.DT_FP32),
                          r_out: pypto.Tensor([64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 8)
    a = pypto.add(x, 1.0)
    r = pypto.reshape(a, [64])
    pypto.set_vec_tile_shapes(8)
    r[0:8] = pypto.full([8], 5.0, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(8, 8)
    a_out[:] = pypto.add(a, 0.0)  # a itself is unchanged: the reshape is another tensor
    pypto.set_vec_tile_shapes(64)
    r_out[:] = pypto.add(r, 0.0)


@pypto.frontend.jit
def write_before_reshape_read(x: pypto.Tensor([8, 8], pypto.DT_FP32), a_out: pypto.Tensor([8, 8], pypto.DT_FP32),
                              r_out: pypto.Tensor([64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 8)
    a = pypto.add(x, 1.0)
    r = pypto.reshape(a, [64])
    a[0:1, :] = pypto.full([1, 8], 5.0, pypto.DT_FP32)
    a_out[:] = pypto.add(a, 0.0)
    pypto.set_vec_tile_shapes(64)
    r_out[:] = pypto.add(r, 0.0)  # the reshape was taken before the write


def test_a_write_into_a_reshape_spares_its_input_and_the_other_way_round():
    x = torch.rand(8, 8)
    a, r = torch.zeros(8, 8), torch.zeros(64)
    write_through_reshape(x, a, r)
    torch.testing.assert_close(a, x + 1)
    want = (x + 1).reshape(64).clone()
    want[:8] = 5
    torch.testing.assert_close(r, want)
    write_before_reshape_read(x, a, r)
    want_a = x + 1
    want_a[0] = 5
    torch.testing.assert_close(a, want_a)
    torch.testing.assert_close(r, (x + 1).reshape(64))
