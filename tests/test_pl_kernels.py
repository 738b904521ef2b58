"""PyPTO 3's `@pl.jit` kernels (`import pypto.language as pl`, tier T1) run on the CPU through our one
pipeline and give torch's numbers; their records say `dialect: "pypto3"`; pypto-lib's runner pair
(`kernel.compile(..., config=RunConfig())`, `pypto.runtime.execute_compiled`) runs them; the IDE's
analysis gives a pl kernel a graph and a swimlane. The kernels are our own small ones."""

from __future__ import annotations

import ctypes
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

import pypto.language as pl
from pypto.ir.errors import PyptoError
from pypto.record import CompileRecord, compile_record
from pypto.runtime import RunConfig, execute_compiled

R = 128
C = 64
RT = 32
CT = 32
M = 64
K = 96
N = 64
MT = 32
KT = 32


@pl.jit
def add_exp(x: pl.Tensor[[R, C], pl.FP32], s: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.parallel(0, R, RT):
        for c in pl.range(0, C, CT):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_exp"):
                t = x[r:r + RT, c:c + CT]
                y[r:r + RT, c:c + CT] = pl.exp(pl.add(t, s))
    return y


def test_elementwise_with_a_scalar_matches_torch_and_returns_the_callers_tensor() -> None:
    x = torch.randn(R, C)
    y = torch.zeros(R, C)
    got = add_exp(x, 0.5, y, config=RunConfig(platform="a2a3sim"))
    assert got is y
    torch.testing.assert_close(y, torch.exp(x + 0.5), rtol=1e-5, atol=1e-5)


@pl.jit
def norm_rows(x: pl.Tensor[[R, C], pl.FP32], g: pl.Tensor[[1, C], pl.FP32],
              soft: pl.Out[pl.Tensor[[R, C], pl.FP32]], rms: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.parallel(R // RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            t = x[r * RT:(r + 1) * RT, :]
            e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
            soft[r * RT:(r + 1) * RT, :] = pl.row_expand_div(e, pl.row_sum(e))
            ms = pl.reshape(pl.row_sum(pl.mul(t, t)), [1, RT])
            inv = pl.reshape(pl.rsqrt(pl.add(pl.mul(ms, 1.0 / C), 1e-6)), [RT, 1])
            rms[r * RT:(r + 1) * RT, :] = pl.col_expand_mul(pl.row_expand_mul(t, inv), g)
    return soft, rms


def test_row_reductions_and_expands_match_torch() -> None:
    x, g = torch.randn(R, C), torch.randn(1, C)
    soft, rms = torch.zeros(R, C), torch.zeros(R, C)
    a, b = norm_rows(x, g, soft, rms)
    assert a is soft and b is rms
    torch.testing.assert_close(soft, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    want = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * g
    torch.testing.assert_close(rms, want, rtol=1e-5, atol=1e-5)


@pl.jit
def gemm_add(a: pl.Tensor[[M, K], pl.BF16], b: pl.Tensor[[K, N], pl.BF16], bias: pl.Tensor[[M, N], pl.BF16],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for m in pl.parallel(0, M, MT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm"):
            acc = pl.create_tensor([MT, N], dtype=pl.FP32)
            for kb in pl.range(K // KT):
                ta = a[m:m + MT, kb * KT:(kb + 1) * KT]
                tb = b[kb * KT:(kb + 1) * KT, :]
                if kb == 0:
                    acc = pl.matmul(ta, tb, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tb)
            c[m:m + MT, :] = pl.add(acc, pl.cast(bias[m:m + MT, :], target_type=pl.FP32))
    return c


def test_matmul_with_a_k_loop_of_matmul_acc_matches_torch() -> None:
    a, b = torch.randn(M, K).bfloat16(), torch.randn(K, N).bfloat16()
    bias = torch.randn(M, N).bfloat16()
    c = torch.zeros(M, N)
    gemm_add(a, b, bias, c)
    torch.testing.assert_close(c, a.float() @ b.float() + bias.float(), rtol=1e-4, atol=1e-4)


@pl.jit
def first_chunk_doubled(x: pl.Tensor[[R, C], pl.FP32], y: pl.InOut[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.parallel(0, R, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="branch"):
            t = x[r:r + RT, :]
            if r == 0:
                y[r:r + RT, :] = pl.add(y[r:r + RT, :], pl.mul(t, 2.0))
            else:
                y[r:r + RT, :] = pl.maximum(pl.neg(pl.abs(t)), pl.minimum(t, pl.sqrt(pl.abs(t))))
    return y


def test_an_if_on_a_parallel_index_picks_per_chunk_and_inout_is_read() -> None:
    x, y0 = torch.randn(R, C), torch.randn(R, C)
    y = y0.clone()
    first_chunk_doubled(x, y)
    want = torch.maximum(-x.abs(), torch.minimum(x, x.abs().sqrt()))
    want[:RT] = y0[:RT] + 2 * x[:RT]
    torch.testing.assert_close(y, want, rtol=1e-6, atol=1e-6)


@pl.jit
def fills(x: pl.Tensor[[RT, C], pl.FP32], y: pl.Out[pl.Tensor[[RT, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fills"):
        three = pl.create_tensor([RT, C], dtype=pl.FP32, init_value=3.0)
        y[:, :] = pl.div(pl.sub(x, pl.full([RT, C], dtype=pl.FP32, value=1.0)), three)
    return y


def test_full_create_tensor_sub_div() -> None:
    x, y = torch.randn(RT, C), torch.zeros(RT, C)
    fills(x, y)
    torch.testing.assert_close(y, (x - 1.0) / 3.0, rtol=1e-6, atol=1e-6)


def test_a_row_expand_with_a_row_vector_is_an_error_naming_the_shapes() -> None:
    @pl.jit
    def wrong(x: pl.Tensor[[RT, C], pl.FP32], y: pl.Out[pl.Tensor[[RT, C], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[:, :] = pl.row_expand_mul(x, x[0:1, :])
        return y

    with pytest.raises(PyptoError, match=r"rhs must be a \[rows, 1\] column"):
        wrong(torch.randn(RT, C), torch.zeros(RT, C))


def test_run_config_knows_pyptos_fields_and_runs_only_a2a3() -> None:
    assert RunConfig().platform == "a2a3sim"
    RunConfig(platform="a2a3", enable_chip_swimlane=1, rtol=1e-3)
    with pytest.raises(PyptoError, match="not modelled"):
        RunConfig(platform="a5sim")
    with pytest.raises(TypeError):
        RunConfig(no_such_field=1)  # type: ignore[call-arg]


def test_compile_with_a_config_then_execute_compiled_as_pypto_libs_runner_does() -> None:
    x, y = torch.randn(R, C), torch.zeros(R, C)
    prog = add_exp.compile(torch.empty(R, C), 2.0, torch.empty(R, C), config=RunConfig(platform="a2a3sim"))
    assert Path(prog.output_dir).is_dir()
    execute_compiled(prog.output_dir, [x, ctypes.c_float(2.0), y], platform="a2a3sim", device_id=0)
    torch.testing.assert_close(y, torch.exp(x + 2.0), rtol=1e-5, atol=1e-5)
    with pytest.raises(PyptoError, match="no PyPTO 3 kernel was compiled"):
        execute_compiled(prog.output_dir + "_other", [x, ctypes.c_float(2.0), y])


def test_the_record_says_the_dialect_and_labels_the_scopes_ops() -> None:
    rec = compile_record(norm_rows)
    assert rec.source.dialect == "pypto3"
    doc = rec.to_json()
    assert doc["source"]["dialect"] == "pypto3"
    assert CompileRecord.from_json(doc).source.dialect == "pypto3"
    labels = {n.label for n in _all_nodes(rec.program.graph) if n.op == "exp"}
    assert labels == {"rows"}
    assert rec.program.execute is not None and len(rec.program.execute.tasks) >= R // RT


def _all_nodes(graph: object) -> list[Any]:
    out = []
    for n in graph.nodes:  # type: ignore[attr-defined]
        out.append(n)
        if n.body is not None:
            out += _all_nodes(n.body)
    return out


KERNEL_FILE = '''
import pypto.language as pl

ROWS = 64
COLS = 64
TILE = 16


@pl.jit
def scaled(x: pl.Tensor[[ROWS, COLS], pl.FP32], s: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            y[r:r + TILE, :] = pl.mul(x[r:r + TILE, :], s)
    return y
'''


def test_the_ides_analysis_gives_a_pl_kernel_a_graph_and_a_swimlane(tmp_path: Path) -> None:
    from server import analyze

    path = tmp_path / "pl_kernel.py"
    text = textwrap.dedent(KERNEL_FILE)
    path.write_text(text)
    result = analyze.analyze_kernel(str(path), text, "scaled", {"board": "sim"})
    assert result["error"] is None, result["error"]
    rec = CompileRecord.from_json(result["record"], _columns(result["record_columns"]))
    assert rec.source.dialect == "pypto3"
    assert any(n.op == "mul" and n.label == "scale" for n in _all_nodes(rec.program.graph))
    assert rec.run is not None and len(rec.run.tasks) == 64 // 16
    lines = {s.line for t in range(len(rec.run.tasks)) for s in rec.source_of_task(t)}
    assert 13 in lines  # the tasks point back at the scope's line


def _columns(data: bytes) -> dict[str, object]:
    import io

    import numpy as np

    with np.load(io.BytesIO(data)) as z:
        return {k: z[k] for k in z.files}
