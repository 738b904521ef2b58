"""A tensor computed inside a `pypto.loop` and used after it is its value after the last iteration,
as in PyPTO: the loop carries it out (`Builder._carry_out`), out of nested loops too."""

from __future__ import annotations

import numpy as np
import torch

import pypto
from pypto.ir import text


@pypto.frontend.jit
def last_row(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([1, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, x.shape[0], 1, name="rows"):
        row = pypto.exp(x[i:i + 1, :])
    out[:] = row * 2.0 + row  # two uses: one value carried out


def test_the_value_after_the_loop_is_the_last_iterations():
    for rows in (1, 5):
        x = torch.randn(rows, 64)
        out = torch.zeros(1, 64)
        last_row(x, out)
        torch.testing.assert_close(out, torch.exp(x[-1:]) * 3.0)


def test_the_loop_carries_it_out_once_and_the_graph_round_trips():
    x = torch.randn(3, 64)
    ck = last_row.compile(x, torch.zeros(1, 64))
    graph = ck.graph
    loop = next(n for n in graph.nodes if n.op == "loop")
    outs = [n for n in graph.nodes if n.op == "loop_out" and n.inputs == (loop.id,)]
    assert len(outs) == 1 and len(loop.inputs) == len(loop.body.outputs) == 1  # type: ignore[union-attr]
    assert text.parse(text.to_text(graph)) == graph


def test_a_loop_that_runs_no_iteration_leaves_zeros():
    out = torch.full((1, 64), 7.0)
    last_row(torch.randn(0, 64), out)
    assert torch.equal(out, torch.zeros(1, 64))


@pypto.frontend.jit
def nested_last(x: pypto.Tensor([4, 8, 64], pypto.DT_FP32), out: pypto.Tensor([2, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for b in pypto.loop(4):
        for i in pypto.loop(8):
            row = pypto.exp(pypto.reshape(x[b:b + 1, i:i + 1, :], [1, 64]))
        shifted = row + 1.0
    out[0:1, :] = row
    out[1:2, :] = shifted


def test_a_value_of_an_inner_loop_is_carried_out_of_every_enclosing_loop():
    x = torch.randn(4, 8, 64)
    out = torch.zeros(2, 64)
    nested_last(x, out)
    want = torch.exp(x[3, 7:8])
    torch.testing.assert_close(out, torch.cat([want, want + 1.0]))
    ck = nested_last.compile(x, out)
    ref = ck.interpreter.run({"x": x.numpy(), "out": np.zeros((2, 64), np.float32)}, {})
    np.testing.assert_allclose(ref["out"], out.numpy(), rtol=1e-6)  # the reference agrees with the tiles


@pypto.frontend.jit
def returned_from_loop(x: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(4):
        y = x[i:i + 1, :] * 2.0
    return y


def test_a_kernel_may_return_a_value_computed_in_a_loop():
    x = torch.randn(4, 64)
    torch.testing.assert_close(returned_from_loop(x), x[3:4] * 2.0)
