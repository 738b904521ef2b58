"""The pass pipeline: recording, failure snapshots, stage cut-off, and passes that keep values."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import torch

import pypto
from pypto.cli import load_module
from pypto.compiler import manager as M
from pypto.compiler.pipeline import PIPELINE, run_pipeline
from pypto.compiler.tensor_passes import VerifyError, verify
from pypto.frontend.jit import CompiledKernel, JitKernel, to_numpy
from pypto.ir import text
from pypto.ir.graph import Graph
from pypto.reference.interpreter import Interpreter

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
TENSOR_STAGE = tuple(p for p in PIPELINE if p.stage == "tensor")


@pypto.jit
def fused(x: pypto.Tensor([16, 64], pypto.DT_BF16), g: pypto.Tensor([64], pypto.DT_BF16),
          out: pypto.Tensor([16, 64], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 64)
    a = pypto.softmax(x, dim=-1)
    b = pypto.softmax(x, dim=-1)  # the same computation again: cse keeps one
    unused = pypto.exp(x)  # noqa: F841 - nothing needs it: dce drops it
    v = pypto.view(a, [16, 64], [0, 0])  # the whole tensor: simplify drops the view
    out[:] = pypto.rms_norm(v + b, g)


def _compiled() -> CompiledKernel:
    x, g = torch.randn(16, 64).bfloat16(), torch.rand(64).bfloat16()
    out = torch.empty_like(x)
    fused(x, g, out)
    want = torch.nn.functional.rms_norm((2 * torch.softmax(x.float(), -1)).bfloat16().float(), (64,),
                                        g.float(), eps=1e-6)
    assert (out.float() - want).abs().max() < 0.05
    return next(iter(fused.cache.values()))


def test_every_pass_is_recorded_in_pipeline_order():
    ck = _compiled()
    assert [r.name for r in ck.passes] == [p.name for p in TENSOR_STAGE]
    assert [r.index for r in ck.passes] == list(range(len(TENSOR_STAGE)))
    (lowered,) = ck.lowered.values()
    assert [r.name for r in lowered.passes] == [p.name for p in PIPELINE if p.stage != "tensor"]
    assert lowered.passes[0].index == len(TENSOR_STAGE)
    assert lowered.program.tiles is not None and lowered.program.tiles.ops
    changed = {r.name: r.changed for r in ck.passes}
    assert changed == {"verify": False, "decompose": True, "autocast": True, "simplify": True, "cse": True,
                       "dce": True, "verify_tensor": False}
    assert all(r.seconds >= 0 and r.why for r in ck.passes)
    final = ck.passes[-1].snapshot.graph
    ops = [n.op for n in final.nodes]
    assert "softmax" not in ops and "rms_norm" not in ops and "view" not in ops
    assert ops.count("amax") == 1  # cse merged the two softmaxes
    assert all(n.op != "exp" or n.type.dtype is pypto.DT_FP32 for n in final.nodes)  # autocast
    # unchanged passes share the snapshot object: no copy per pass
    assert ck.passes[0].snapshot.graph is ck.graph


def test_new_nodes_carry_provenance_to_the_user_line():
    ck = _compiled()
    final = ck.passes[-1].snapshot.graph
    traced = {n.id: n for n in ck.graph.walk()}
    amax = next(n for n in final.nodes if n.op == "amax")
    assert amax.made_by == "decompose"
    assert traced[amax.origin[0]].op == "softmax"
    assert amax.loc == traced[amax.origin[0]].loc
    casts = [n for n in final.nodes if n.made_by == "autocast"]
    assert casts and all(n.loc.span is not None and n.loc.span.file == __file__ for n in casts)


def _run(graph: Graph, arrays: dict[str, np.ndarray], syms: dict[str, int]) -> dict[str, np.ndarray]:
    return Interpreter(graph).run(arrays, syms)


def test_every_snapshot_of_every_example_computes_the_same_values_and_round_trips():
    """Each pass keeps the kernel's values: run each snapshot with the reference interpreter."""
    checked = 0
    for path in sorted(EXAMPLES.glob("*.py")):
        mod = load_module(path)
        captured: list[tuple[CompiledKernel, dict[str, np.ndarray]]] = []
        originals = {}
        for name, k in vars(mod).items():
            if isinstance(k, JitKernel):
                originals[name] = k._prepare

                def spy(args, kwargs, loc, _orig=k._prepare, captured=captured):
                    ck, tensors, arrays = _orig(args, kwargs, loc)
                    captured.append((ck, {n: a.copy() for n, a in arrays.items()}))
                    return ck, tensors, arrays

                k._prepare = spy
        mod.check()
        for ck, arrays in captured:
            syms = ck.bind_symbols(arrays, ck.passes[0].snapshot.graph.nodes[0].loc)
            want = _run(ck.graph, arrays, syms)
            for r in ck.passes:
                got = _run(r.snapshot.graph, arrays, syms)
                for name, arr in want.items():
                    a, b = arr.astype(np.float64), got[name].astype(np.float64)
                    scale = max(1.0, float(np.max(np.abs(a))) if a.size else 1.0)
                    assert np.max(np.abs(a - b), initial=0) <= 1e-2 * scale, (path.stem, r.name, name)
                assert text.parse(text.to_text(r.snapshot.graph)) == r.snapshot.graph, (path.stem, r.name)
                checked += 1
    assert checked >= 10 * len(PIPELINE)


def test_compile_stage_stops_after_the_tensor_stage():
    @pypto.jit(host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(8, 8)
    out = torch.empty_like(x)
    k(x, out)
    torch.testing.assert_close(out, torch.softmax(x, -1))
    assert {r.stage for r in next(iter(k.cache.values())).passes} == {"tensor"}


def _boom(p: M.Program, ctx: M.PassContext) -> M.Program:
    raise ZeroDivisionError("bad arithmetic in a pass")


def _user_mistake(p: M.Program, ctx: M.PassContext) -> M.Program:
    raise pypto.PyptoError("a tile does not fit", p.graph.nodes[0].loc)


def _out_of_memory(p: M.Program, ctx: M.PassContext) -> M.Program:
    raise MemoryError


def test_a_failing_pass_is_named_and_leaves_the_snapshots_before_it():
    ck = _compiled()
    passes = [*PIPELINE[:3], M.Pass("boom", "tensor", _boom, "fails"), *PIPELINE[3:]]
    rec = M.Recorder()
    with pytest.raises(M.InternalCompilerError, match="internal error in pass 'boom': ZeroDivisionError"):
        M.PassManager(passes, [rec]).run(M.Program(ck.graph), M.PassContext({}, {}))
    assert [r.name for r in rec.records] == ["verify", "decompose", "autocast", "boom"]
    failed = rec.records[-1]
    assert failed.error == "ZeroDivisionError: bad arithmetic in a pass"
    assert failed.snapshot is rec.records[-2].snapshot  # the failing pass's input
    # a user mistake found by a pass stays a PyptoError (with the records attached by run_pipeline)
    rec2 = M.Recorder()
    with pytest.raises(pypto.PyptoError, match="does not fit"):
        M.PassManager([PIPELINE[0], M.Pass("tiles", "tile", _user_mistake, "x")], [rec2]).run(
            M.Program(ck.graph), M.PassContext({}, {}))
    assert rec2.records[-1].error.startswith("PyptoError")
    # the process's memory cap is not a compiler bug: it stays a MemoryError (the worker says "ran out")
    with pytest.raises(MemoryError):
        M.PassManager([PIPELINE[0], M.Pass("big", "tile", _out_of_memory, "x")], []).run(
            M.Program(ck.graph), M.PassContext({}, {}))


def test_run_pipeline_attaches_records_to_the_error(monkeypatch):
    ck = _compiled()
    import pypto.compiler.pipeline as P

    monkeypatch.setattr(P, "PIPELINE", (PIPELINE[0], M.Pass("boom", "tensor", _boom, "fails")))
    with pytest.raises(M.InternalCompilerError) as info:
        run_pipeline(ck.graph, {})
    assert [r.name for r in info.value.records] == ["verify", "boom"]


def test_instruments_see_every_pass_before_and_after():
    seen: list[str] = []

    class Log:
        def before(self, i, p, program, ctx):
            seen.append(f"before {p.name}")

        def after(self, i, p, before, after, ctx):
            seen.append(f"after {p.name}")

        def failed(self, i, p, program, ctx, error):
            seen.append(f"failed {p.name}")

    run_pipeline(_compiled().graph, {}, [Log()])
    assert seen == [f"{w} {p.name}" for p in TENSOR_STAGE for w in ("before", "after")]


def test_verify_catches_a_malformed_graph():
    g = _compiled().graph
    node = next(n for n in g.nodes if n.op == "softmax")
    bad = Graph(g.name, tuple(n for n in g.nodes if n is not node), g.outputs, g.tile_configs)
    with pytest.raises(VerifyError, match="before it is defined"):
        verify(M.Program(bad), M.PassContext({}, {}))


def test_to_numpy_shares_bfloat16_bits():
    x = torch.randn(4).bfloat16()
    assert to_numpy(x).tobytes() == x.view(torch.int16).numpy().tobytes()


def test_a_node_id_means_one_node_across_every_snapshot():
    """One ID space: no pass hands out an id an earlier pass used for another node."""

    @pypto.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        pypto.exp(x)  # dead: dce removes it (it was made last, with the highest id of its pass)
        out[:] = pypto.softmax(x, -1) * 2.0

    x = torch.randn(8, 64)
    out = torch.empty_like(x)
    k(x, out)
    ck = next(iter(k.cache.values()))
    meaning: dict[int, tuple[str, object]] = {}
    for r in ck.passes:
        for n in r.snapshot.graph.walk():
            key = (n.op, n.origin or n.loc)
            assert meaning.setdefault(n.id, key) == key, f"%{n.id} reused by {r.name}"
    torch.testing.assert_close(out, torch.softmax(x, -1) * 2.0)


@pypto.frontend.jit
def feed_and_accumulate(q: pypto.Tensor([16, 32], pypto.DT_FP16), k: pypto.Tensor([32, 32], pypto.DT_FP16),
                        acc: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    for _ in pypto.loop(2):
        p = pypto.exp(pypto.cast(q, pypto.DT_FP32))
        acc[:] = acc * p + pypto.matmul(pypto.cast(p, pypto.DT_FP16), k, pypto.DT_FP32)


def test_a_vector_op_after_a_matmul_it_fed_is_not_fused_into_a_task_cycle():
    """The vector work that feeds a matmul and the add of its result must be two tasks: fused, each
    would wait for the other (the execute graph found a cycle here before)."""
    q, k = torch.randn(16, 32).half() * 0.1, torch.randn(32, 32).half() * 0.1
    acc = torch.ones(16, 32)
    want = acc.clone()
    p = torch.exp(q.float())
    for _ in range(2):
        want = want * p + p.half().float() @ k.float()
    feed_and_accumulate(q, k, acc)
    torch.testing.assert_close(acc, want, rtol=2e-3, atol=2e-3)
