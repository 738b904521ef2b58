"""`pl.spmd` (its loop form) and `pl.pipeline` in a `@pl.jit` kernel: `for i in pl.spmd(n)` runs the body once
per block, each block one in-core task; `pl.pipeline(..., stage=F)` iterates as `pl.range` does (its replicated
buffers' overlap is not modelled); the forms and arguments not supported say so at the user's line. The kernels
are our own small ones."""

from __future__ import annotations

import collections

import pytest
import torch

import pypto.language as pl
from pypto.ir.errors import PyptoError
from pypto.record import compile_record

BLOCKS, ROWS, COLS = 4, 256, 32
PER = ROWS // BLOCKS


@pl.jit
def halves(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for blk in pl.spmd(BLOCKS, name_hint="halve"):
        lo = blk * PER
        y[lo:lo + PER, :] = pl.sub(pl.mul(x[lo:lo + PER, :], 0.5), 1.0)
    return y


@pl.jit
def shifted(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.spmd(BLOCKS, name_hint="shift"):
        lo = pl.tile.get_block_idx() * (ROWS // pl.tile.get_block_num())
        y[lo:lo + PER, :] = pl.add(x[lo:lo + PER, :], 3.0)
    return y


@pl.jit
def staged_sum(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[PER, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        acc = pl.create_tensor([PER, COLS], dtype=pl.FP32)
        for k in pl.pipeline(BLOCKS, stage=2):
            acc = pl.add(acc, pl.exp(x[k * PER:(k + 1) * PER, :]))
        y[:, :] = acc
    return y


def test_each_spmd_block_is_one_task_and_the_values_are_right() -> None:
    rec = compile_record(halves)
    assert rec.program.execute is not None
    cores = collections.Counter(t.core for t in rec.program.execute.tasks)
    assert cores == {"AIV": BLOCKS}
    body = [n for n in rec.graph.walk() if n.op in ("mul", "sub")]
    assert body and {n.scope for n in body} != {None} and len({n.scope for n in body}) == 1  # one in-core scope
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    halves(x, y)
    torch.testing.assert_close(y, x * 0.5 - 1.0)


def test_the_with_form_traces_its_body_as_one_block_that_reads_its_index() -> None:
    rec = compile_record(shifted)
    assert rec.program.execute is not None
    assert collections.Counter(t.core for t in rec.program.execute.tasks) == {"AIV": BLOCKS}
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    shifted(x, y)
    torch.testing.assert_close(y, x + 3.0)


def test_a_pipelined_loop_accumulates_as_a_sequential_one() -> None:
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(PER, COLS)
    staged_sum(x, y)
    torch.testing.assert_close(y, torch.exp(x).reshape(BLOCKS, PER, COLS).sum(0), rtol=1e-5, atol=1e-5)


def _kernel(body: str):
    namespace: dict = {"pl": pl}
    exec(compile(f"""
@pl.jit
def bad(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
{body}
    return y
""", "bad_kernel.py", "exec"), namespace)
    return namespace["bad"]


@pytest.mark.parametrize("body,words", [
    ("    for k in pl.pipeline(2):\n        y[:, :] = x", "needs stage="),
    ("    for k in pl.pipeline(2, stage=0):\n        y[:, :] = x", "stage must be a positive int"),
    ("    for b in pl.spmd(0):\n        y[:, :] = x", "at least 1"),
    ("    y[:, :] = pl.add(x, pl.tile.get_block_idx())", "inside `for i in pl.spmd"),
])
def test_what_is_not_supported_or_wrong_is_a_clear_error(body: str, words: str) -> None:
    with pytest.raises(PyptoError, match=words) as e:
        compile_record(_kernel(body))
    assert e.value.loc is not None and e.value.loc.frames[0].file == "bad_kernel.py"
    assert e.value.loc.frames[0].line == 4  # the body's first line: the call


def test_an_error_inside_a_block_leaves_no_block_open() -> None:
    from pypto.language import control

    raising = _kernel("    with pl.spmd(2):\n        y[:, :] = pl.add(x, pl.tile.get_block_idx())\n"
                      "        raise ValueError('mine')")
    with pytest.raises(Exception, match="mine"):
        compile_record(raising)
    assert control._BLOCKS == []
    assert compile_record(halves).error is None

