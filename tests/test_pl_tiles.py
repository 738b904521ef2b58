"""PyPTO 3's explicit-tile style (`pl.load` / `pl.store` / `pl.move` / `pl.create_tile`, `pl.MemorySpace`,
`pl.Tile`, the tile forms of the ops, `@pl.jit.incore`) runs through our one pipeline and gives torch's
numbers; the memory model's rules are errors at the user's line; an in-core function is one labelled
scope where a kernel calls it. The kernels are our own small ones."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import pypto.language as pl
from pypto.ir.errors import PyptoError
from pypto.record import compile_record
from pypto.runtime import RunConfig

ROWS = 96
COLS = 48
RT = 32
M = 32
K = 96
N = 48
KT = 32

CFG = RunConfig(platform="a2a3sim")


@pl.jit
def tiled_act(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="act"):
            t = pl.load(x, [r, 0], [RT, COLS])
            pos = pl.relu(t)
            inv = pl.recip(pl.add(pl.mul(t, t), 1.0))
            pl.store(pl.add(pos, inv), [r, 0], y)
    return y


def test_load_compute_store_in_chunks_matches_torch() -> None:
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    got = tiled_act(x, y, config=CFG)
    assert got is y
    torch.testing.assert_close(y, torch.relu(x) + 1.0 / (x * x + 1.0), rtol=1e-5, atol=1e-5)


@pl.jit
def cube_k_loop(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        acc = None
        for k in pl.range(0, K, KT):
            a_l1 = pl.load(a, [0, k], [M, KT], target_memory=pl.MemorySpace.Mat)
            b_l1 = pl.load(b, [k, 0], [KT, N], target_memory=pl.Mem.Mat)
            a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
            b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
            acc = pl.matmul(a_l0, b_l0) if acc is None else pl.matmul_acc(acc, a_l0, b_l0)
        pl.store(acc, [0, 0], c)
    return c


def test_mat_left_right_and_a_matmul_acc_chain_match_torch() -> None:
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.zeros(M, N)
    cube_k_loop(a, b, c, config=CFG)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit
def transposed_rhs(a: pl.Tensor[[M, K], pl.FP32], bt: pl.Tensor[[N, K], pl.FP32],
                   c: pl.Out[pl.Tensor[[M, N], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l1 = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        b_l1 = pl.tile.transpose_view(pl.load(bt, [0, 0], [N, K], target_memory=pl.Mem.Mat))
        out = pl.matmul(pl.move(a_l1, target_memory=pl.Mem.Left), pl.move(b_l1, target_memory=pl.Mem.Right))
        pl.store(out, [0, 0], c)  # the FP32 accumulator stored into a BF16 tensor is converted
    return c


def test_a_transposed_view_and_an_fp32_accumulator_stored_as_bf16() -> None:
    a, bt = torch.randn(M, K), torch.randn(N, K)
    c = torch.zeros(M, N, dtype=torch.bfloat16)
    transposed_rhs(a, bt, c, config=CFG)
    torch.testing.assert_close(c.float(), (a @ bt.T).bfloat16().float(), rtol=2e-2, atol=2e-2)


@pl.jit
def rows_and_cols(x: pl.Tensor[[RT, COLS], pl.FP32], g: pl.Tensor[[1, COLS], pl.FP32],
                  out: pl.Out[pl.Tensor[[RT, 2 * COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        t = pl.load(x, [0, 0], [RT, COLS])
        gt = pl.load(g, [0, 0], [1, COLS])
        tmp = pl.create_tile([RT, COLS], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        mx: pl.Tile[[RT, 1], pl.FP32] = pl.row_max(t, tmp)
        e = pl.exp(pl.row_expand_sub(t, mx))
        soft = pl.row_expand_div(e, pl.row_sum(e, tmp))
        spread = pl.add(pl.row_expand(t, pl.row_min(t, tmp)), pl.col_expand(t, gt))
        pl.store(pl.concat(soft, spread), [0, 0], out)
    return out


def test_reductions_with_a_scratch_tile_expands_and_concat_match_torch() -> None:
    x, g = torch.randn(RT, COLS), torch.randn(1, COLS)
    out = torch.zeros(RT, 2 * COLS)
    rows_and_cols(x, g, out, config=CFG)
    spread = x.min(dim=-1, keepdim=True).values.expand(RT, COLS) + g.expand(RT, COLS)
    torch.testing.assert_close(out, torch.cat([torch.softmax(x, dim=-1), spread], dim=1), rtol=1e-5, atol=1e-5)


SPLIT = 3


@pl.jit
def split_k_atomic(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        c = pl.assemble(c, pl.full([M, N], dtype=pl.FP32, value=0.0), [0, 0])
    for s in pl.parallel(0, SPLIT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="part", optimizations=[pl.cross_core_slot(slot_num=2)]):
            k0 = s * (K // SPLIT)
            part = pl.matmul(a[:, k0:k0 + K // SPLIT], b[k0:k0 + K // SPLIT, :], out_dtype=pl.FP32)
            c = pl.assemble(c, part, [0, 0], atomic=pl.AtomicType.Add)
    return c


def test_atomic_add_accumulates_the_parallel_partial_products() -> None:
    a, b = torch.randn(M, K), torch.randn(K, N)
    c = torch.full((M, N), 7.0)  # zeroed in the kernel first
    split_k_atomic(a, b, c, config=CFG)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pl.jit.incore
def scale_in_core(x: pl.Tensor[[RT, COLS], pl.FP32], s: pl.Scalar[pl.FP32],
                  out: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
    t = pl.load(x, [0, 0], [RT, COLS])
    pl.store(pl.mul(t, s), [0, 0], out)
    return out


@pl.jit.incore
def sum_in_core(a: pl.Tensor[[RT, COLS], pl.FP32], b: pl.Tensor[[RT, COLS], pl.FP32],
                out: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
    pl.store(pl.add(pl.load(a, [0, 0], [RT, COLS]), pl.load(b, [0, 0], [RT, COLS])), [0, 0], out)
    return out


@pl.jit
def orchestrate(x: pl.Tensor[[RT, COLS], pl.FP32], y: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
    twice = pl.create_tensor([RT, COLS], dtype=pl.FP32)
    twice = scale_in_core(x, 2.0, twice)
    thrice = pl.create_tensor([RT, COLS], dtype=pl.FP32)
    thrice = scale_in_core(x, 3.0, thrice)
    y = sum_in_core(twice, thrice, y)
    return y


def test_incore_functions_orchestrated_by_a_kernel_match_torch_and_label_their_tasks() -> None:
    x = torch.randn(RT, COLS)
    y = torch.zeros(RT, COLS)
    orchestrate(x, y, config=CFG)
    torch.testing.assert_close(y, 5.0 * x, rtol=1e-5, atol=1e-5)
    rec = compile_record(orchestrate)
    assert rec.source.dialect == "pypto3"
    labels = {n.op: n.label for n in _all_nodes(rec.program.graph) if n.op in ("mul", "add")}
    assert labels == {"mul": "scale_in_core", "add": "sum_in_core"}


def test_an_incore_function_called_from_python_is_a_kernel_of_its_own() -> None:
    x = torch.randn(RT, COLS)
    out = torch.zeros(RT, COLS)
    scale_in_core(x, 0.5, out, config=CFG)
    torch.testing.assert_close(out, 0.5 * x)


def _all_nodes(graph: Any) -> list[Any]:
    out = []
    for n in graph.nodes:
        out.append(n)
        if n.body is not None:
            out += _all_nodes(n.body)
    return out


# ---- the memory model's rules, at the user's line -----------------------------------------------------

def _kernel(body: Any) -> Any:
    @pl.jit
    def k(x: pl.Tensor[[RT, COLS], pl.FP32], y: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            body(x, y)
        return y
    return k


@pytest.mark.parametrize(("body", "match"), [
    (lambda x, y: pl.load(x, [0, 0], [RT, COLS], target_memory=pl.Mem.Left), "lands in pl.Mem.Vec or pl.Mem.Mat"),
    (lambda x, y: pl.move(pl.load(x, [0, 0], [RT, COLS]), target_memory=pl.Mem.DDR), "between on-chip buffers"),
    (lambda x, y: pl.move(x, target_memory=pl.Mem.Left), "must be a tile"),
    (lambda x, y: pl.load(pl.load(x, [0, 0], [RT, COLS]), [0, 0], [RT, COLS]), "must be a DDR tensor"),
    (lambda x, y: pl.load(x, [8, 0], [RT, COLS]), r"region \[8, 40\) of dim 0 runs past"),
    (lambda x, y: pl.store(pl.load(x, [0, 0], [RT, 16]), [0, 40], y), r"region \[40, 56\) of dim 1 runs past"),
    (lambda x, y: pl.load(x, [0, 0], [RT, COLS], valid_shape=[RT, 8]), "valid_shape .* not supported yet"),
    (lambda x, y: pl.store(x, [0, 0], pl.create_tile([RT, COLS], pl.FP32)), "must be a DDR tensor"),
    (lambda x, y: pl.concat(pl.load(x, [0, 0], [RT, 8]), pl.load(x, [0, 0], [8, 8])), "agree on all but the last"),
    (lambda x, y: pl.assemble(y, x, [0, 0], atomic="max"), "AtomicType.Add"),
])
def test_what_the_memory_model_forbids_is_an_error(body: Any, match: str) -> None:
    with pytest.raises(PyptoError, match=match):
        _kernel(body)(torch.zeros(RT, COLS), torch.zeros(RT, COLS), config=CFG)


def test_an_incore_argument_must_match_its_declared_shape() -> None:
    @pl.jit
    def bad(x: pl.Tensor[[2 * RT, COLS], pl.FP32], y: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
        return scale_in_core(x, 1.0, y)

    with pytest.raises(PyptoError, match=r"argument 'x' has shape \[64, 48\]"):
        bad(torch.zeros(2 * RT, COLS), torch.zeros(RT, COLS), config=CFG)


def test_tile_annotations_and_hints_are_checked() -> None:
    assert pl.Tile[[RT, 1], pl.FP32] == pl.tile.TileType((RT, 1), pl.FP32, None)
    assert pl.Tile[[RT, 1], pl.FP32, pl.Mem.Acc].memory is pl.MemorySpace.Acc
    assert pl.Mem is pl.MemorySpace
    with pytest.raises(PyptoError, match="dtype"):
        pl.Tile[[RT, 1], "fp32"]
    with pytest.raises(PyptoError, match="pl.SplitMode"):
        pl.split("UP_DOWN")
    with pytest.raises(PyptoError, match="positive int"):
        pl.cross_core_slot(slot_num=0)


# ---- @pl.program with @pl.function(type=...), run by pypto.runtime.run ---------------------------------

@pl.function(type=pl.FunctionType.InCore)
def shift_rows(x: pl.Tensor[[RT, COLS], pl.FP32], out: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
    t = pl.load(x, [0, 0], [RT, COLS])
    return pl.store(pl.row_expand_sub(t, pl.row_max(t)), [0, 0], out)


@pl.program
class ShiftThenSquare:
    @pl.function(type=pl.FunctionType.InCore)
    def square(self, x: pl.Tensor[[RT, COLS], pl.FP32], out: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
        t = pl.load(x, [0, 0], [RT, COLS])
        return pl.store(pl.mul(t, t), [0, 0], out)

    @pl.function(type=pl.FunctionType.Inline)
    def halve(self, t: Any) -> Any:
        return pl.mul(t, 0.5)

    @pl.function(type=pl.FunctionType.Orchestration)
    def entry(self, x: pl.Tensor[[RT, COLS], pl.FP32], y: pl.Out[pl.Tensor[[RT, COLS], pl.FP32]]):
        shifted = pl.create_tensor([RT, COLS], dtype=pl.FP32)
        shifted = shift_rows(x, shifted)  # a module-level function called from the program
        y = self.square(shifted, y)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve"):
            y[:, :] = self.halve(y)
        return y


def test_a_program_runs_its_orchestration_entry_with_runtime_run() -> None:
    from pypto.runtime import run

    x = torch.randn(RT, COLS)
    y = torch.zeros(RT, COLS)
    run(ShiftThenSquare, x, y, config=CFG)
    shifted = x - x.max(dim=-1, keepdim=True).values
    torch.testing.assert_close(y, 0.5 * shifted * shifted, rtol=1e-5, atol=1e-5)
    assert ShiftThenSquare.entry_name == "entry"
    rec = compile_record(ShiftThenSquare.entry)
    labels = {n.label for n in _all_nodes(rec.program.graph) if n.op == "mul"}
    assert labels == {"square", "halve"}


def test_an_incore_method_called_from_python_runs_as_a_kernel() -> None:
    x = torch.randn(RT, COLS)
    out = torch.zeros(RT, COLS)
    ShiftThenSquare.square(x, out, config=CFG)
    torch.testing.assert_close(out, x * x)


def test_program_errors() -> None:
    from pypto.runtime import run

    with pytest.raises(PyptoError, match="one must be type=pl.FunctionType.Orchestration"):
        @pl.program
        class TwoLeaves:
            @pl.function(type=pl.FunctionType.InCore)
            def a(self, x: pl.Tensor): return x

            @pl.function(type=pl.FunctionType.InCore)
            def b(self, x: pl.Tensor): return x
    with pytest.raises(PyptoError, match="no @pl.function methods"):
        @pl.program
        class Empty:
            pass
    with pytest.raises(PyptoError, match="must be a pl.FunctionType"):
        pl.function(type="InCore")(lambda x: x)
    with pytest.raises(PyptoError, match="takes a @pl.program or a @pl.jit kernel"):
        run(len, torch.zeros(2))
    with pytest.raises(PyptoError, match="not modelled"):
        run(ShiftThenSquare, torch.zeros(RT, COLS), torch.zeros(RT, COLS), config=RunConfig(platform="a5"))
