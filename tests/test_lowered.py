"""`Lowered.executor` is made on first use: lowering (compile and record) does not build the tile
executor's bookkeeping; a run does, once."""

from __future__ import annotations

import torch

import pypto


def test_executor_made_on_first_use() -> None:
    t = pypto.Tensor([64, 64], pypto.DT_FP32)

    @pypto.jit
    def k(x: t, out: t):
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = pypto.exp(x)

    x = torch.randn(64, 64)
    out = torch.empty_like(x)
    lw = k.compile(x, out).lower({})
    assert "executor" not in vars(lw)  # not built by lowering
    ex = lw.executor
    assert ex is not None and lw.executor is ex  # built once, then kept
    k(x, out)
    assert torch.allclose(out, torch.exp(x))
