"""The tile, partition and execute stages: structure, dependencies, capacity, and the record's lookups."""

from __future__ import annotations

import heapq
import pathlib
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import example_records, lowered, param_inputs

import pypto
import pypto.record  # noqa: F401 - pypto.record.compile_record below
from pypto.compiler.tile_exec import TileExecutor
from pypto.record import CompileRecord
from pypto.reference.interpreter import Interpreter

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
UB = 196608






RECORDS = example_records()


@pytest.mark.parametrize("name, record", RECORDS, ids=[n for n, _ in RECORDS])
def test_every_tile_op_is_in_one_task_and_tasks_are_in_dependency_order(name, record):
    p = record.program
    assert p.tiles is not None and p.subgraphs is not None and p.leaves is not None and p.execute is not None
    owners: dict[int, int] = {}
    for sg in p.subgraphs:
        for oid in sg.ops:
            assert oid not in owners, f"tile op {oid} in two subgraphs"
            owners[oid] = sg.id
        assert sg.core == "AIC" or sg.peak_bytes <= UB
    assert set(owners) == {o.id for o in p.tiles.ops}
    assert sorted(t.subgraph for t in p.execute.tasks) == [sg.id for sg in p.subgraphs]
    for t in p.execute.tasks:
        assert all(q < t.id for q in t.preds), "tasks are listed in a topological order"
        assert p.leaves[t.leaf].core == t.core
    assert sum(lf.count for lf in p.leaves) == len(p.execute.tasks)
    # one ID space: every task leads back to source lines, and those lines lead to the task
    for t in p.execute.tasks[:20]:
        spans = record.source_of_task(t.id)
        assert spans, f"task {t.id} has no source line"
        assert any(t.id in record.tasks_at(s.file, s.line) for s in spans)


def _other_topological_order(record: CompileRecord) -> list[int]:
    """Tasks in a different valid order: the highest ready task id first."""
    e = record.program.execute
    succs: dict[int, list[int]] = {t.id: [] for t in e.tasks}
    indeg = {t.id: len(t.preds) for t in e.tasks}
    for t in e.tasks:
        for q in t.preds:
            succs[q].append(t.id)
    ready = [-t for t, d in indeg.items() if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        t = -heapq.heappop(ready)
        order.append(t)
        for s in succs[t]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, -s)
    return order


def test_the_dependencies_suffice_any_topological_order_gives_the_same_values():
    checked = 0
    for name, record in RECORDS:
        p = record.program
        if len(p.execute.tasks) < 2:
            continue
        order = _other_topological_order(record)
        if order == list(range(len(order))):
            continue  # a chain of tasks (examples/runtime_branch.py's running sum): no other order exists
        ops = [oid for t in order for oid in p.subgraphs[p.execute.tasks[t].subgraph].ops]
        inputs = param_inputs(p.tiles)
        ex = TileExecutor(p.graph, p.tiles)
        want, got = ex.run(inputs), ex.run(inputs, order=ops)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{name}: {k}")
        checked += 1
    assert checked >= 5


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(rows=st.integers(1, 70), cols=st.sampled_from([8, 40, 64, 200]), tr=st.sampled_from([1, 4, 16, 64]),
       tc=st.sampled_from([8, 16, 32, 64]))
def test_tiled_softmax_matches_the_reference_for_any_tile_shape(rows, cols, tr, tc):
    row = pypto.Tensor([pypto.DYNAMIC, cols], pypto.DT_FP32)

    @pypto.jit
    def k(x: row, out: row):
        pypto.set_vec_tile_shapes(tr, tc)
        out[:] = pypto.softmax(x, -1) + pypto.amax(x, -1, keepdim=True) * 0.5

    x = torch.randn(rows, cols)
    out = torch.empty_like(x)
    ck, lw, arrays, syms = lowered(k, x, out)
    want = Interpreter(ck.program.graph).run(arrays, syms)["out"]
    got = lw.executor.run(arrays)["out"]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_an_op_whose_tiles_cannot_fit_ub_even_alone_warns_with_the_numbers_and_runs():
    @pypto.jit
    def k(x: pypto.Tensor([128, 384], pypto.DT_FP32), y: pypto.Tensor([128, 384], pypto.DT_FP32),
          out: pypto.Tensor([128, 384], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(128, 384)  # one tile is all of UB; two inputs cannot fit
        out[:] = x + y  # LINE

    x = torch.randn(128, 384)
    # PyPTO compiles it: a warning at the op's line with the numbers, and the kernel runs right
    out = torch.empty_like(x)
    k(x, x, out)
    assert torch.equal(out, x + x)
    rec = pypto.record.compile_record(k, {"x": x, "y": x, "out": out})
    (d,) = [d for p in rec.passes for d in p.diagnostics if d.rule == "tile.ub-overflow"]
    assert re.search(r"add: its tiles need [\d,]+ bytes of UB at once .* 196,608-byte UB", d.message)
    assert d.loc.span is not None and d.loc.span.file == __file__
    assert pathlib.Path(__file__).read_text().splitlines()[d.loc.span.line - 1].strip().endswith("# LINE")
    # the tuning advisor's strict rules refuse it, at the same line
    from pypto.tracing.tiling import strict_tile_rules
    with strict_tile_rules(), pytest.raises(pypto.PyptoError, match=r"add: its tiles need [\d,]+ bytes of UB") as e:
        pypto.record.compile_record(pypto.jit(k.fn), {"x": x, "y": x, "out": out})
    assert e.value.file == __file__


def test_a_config_with_more_entries_than_the_rank_tiles_each_axis_by_its_leading_entries():
    """Entry i of the vec tile tiles axis i, as PyPTO's tile expansion reads it: a 4-entry config on a 3-D op
    leaves its last entry unused. Taking the trailing entries made DeepSeek V3.2's MLA prolog RoPE (its
    `set_vec_tile_shapes(1, 64, 128, 128)` then [8, 128, 64] math) one whole 256 KiB tile, over the UB."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 128, 64], pypto.DT_FP32), c: pypto.Tensor([8, 1, 64], pypto.DT_FP32),
          out: pypto.Tensor([8, 128, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 64, 128, 128)
        out[:] = x * c

    x, c = torch.randn(8, 128, 64), torch.randn(8, 1, 64)
    rec = pypto.record.compile_record(k, {"x": x, "c": c, "out": torch.empty(8, 128, 64)})
    assert {o.shape for o in rec.program.tiles.ops if o.op == "mul"} == {(1, 64, 64)}
    assert max(sg.peak_bytes for sg in rec.program.subgraphs) < UB
    out = torch.empty(8, 128, 64)
    k(x, c, out)
    assert torch.equal(out, x * c)


def test_row_reductions_fuse_into_one_task_per_row_block_when_the_row_fits():
    @pypto.jit
    def k(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 256)
        out[:] = pypto.softmax(x, -1)

    x = torch.randn(64, 256)
    _, lw, _, _ = lowered(k, x, torch.empty_like(x))
    p = lw.program
    assert len(p.execute.tasks) == 8  # one per 8-row block: load, amax, sub, exp, sum, div, store fused
    assert len(p.leaves) == 1 and p.leaves[0].count == 8
    assert all(not t.preds for t in p.execute.tasks)


def test_loop_iterations_are_root_function_instances():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        for i in pypto.loop(0, x.shape[0], 4, name="LOOP_rows", idx_name="i"):
            out[i:i + 4, :] = pypto.exp(x[i:i + 4, :])

    x = torch.randn(12, 64)
    ck, lw, _, _ = lowered(k, x, torch.empty_like(x))
    loop = next(n for n in ck.program.graph.nodes if n.op == "loop")
    p = lw.program
    assert p.execute.roots == (-1, loop.id)
    assert [t.root for t in p.execute.tasks] == [loop.id] * 3
    assert [dict(p.tiles.instances[t.instance].index)["i"] for t in p.execute.tasks] == [0, 4, 8]


def test_the_tile_stage_round_trips_through_json():
    _, record = next((n, r) for n, r in RECORDS if n.startswith("softmax"))
    back = CompileRecord.from_json(record.to_json())
    for field in ("tiles", "subgraphs", "leaves", "execute"):
        assert getattr(back.program, field) == getattr(record.program, field), field


def test_blocks_round_trip_and_every_leaf_has_a_listing_with_its_source_lines():
    for name, record in RECORDS:
        p = record.program
        assert p.blocks is not None and len(p.blocks) == len(p.leaves), name
        back = CompileRecord.from_json(record.to_json())
        assert back.program.blocks == p.blocks, name
        for leaf in range(len(p.leaves)):
            text = record.listing(leaf)
            lines = {s.line for n in p.leaves[leaf].nodes for s in record.source_of(n)}
            assert any(f":{line}" in text for line in lines), (name, leaf)


def test_memory_types_follow_the_a2a3_data_paths():
    """Vector tiles live in UB and move GM<->UB; cube tiles go GM->L1->L0A/L0B->L0C->GM:
    a matmul result reaches vector work only through GM (A2/A3 has no L0C->UB)."""
    seen = set()
    for name, record in RECORDS:
        p = record.program
        assert p.memory is not None and len(p.memory) == len(p.tiles.ops), name
        for op, path in zip(p.tiles.ops, p.memory):
            seen.add(path)
            assert "L0C->UB" not in path and "UB->L1" not in path and "L1->UB" not in path
            if op.op == "matmul":
                assert path == "GM->L1->L0A,L0B->L0C->GM"
            elif op.op == "load":
                assert path == "GM->UB"
            elif op.op == "store":
                assert path == "UB->GM"
            else:
                assert path == "UB", (name, op.op)
    assert {"GM->UB", "UB->GM", "UB", "GM->L1->L0A,L0B->L0C->GM"} <= seen


def test_a_data_path_the_board_lacks_is_a_compiler_error():
    import dataclasses

    from pypto.compiler.manager import PassContext
    from pypto.compiler.tile_passes import memory_types

    _, record = next((n, r) for n, r in RECORDS if n.startswith("attention"))
    board = {"data_paths": ["GM->UB", "UB->GM", "GM->L1", "L1->L0A", "L1->L0B"]}  # no L0C->GM
    with pytest.raises(AssertionError, match="L0C->GM"):
        memory_types(dataclasses.replace(record.program, memory=None), PassContext({}, board))


def test_a_view_read_after_its_buffer_was_written_is_a_warning_at_the_reading_line():
    @pypto.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32),
          res: pypto.Tensor([4, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        old = out[0:4, :]  # a view of out as the caller gave it
        out[:] = x * 2.0  # WRITE
        res[:] = old + 1.0  # READ: the device sees the new rows, the SSA reference the old ones

    x = torch.randn(8, 64)
    ck, lw, _, _ = lowered(k, x, torch.zeros(8, 64), torch.empty(4, 64))
    warned = [d for r in lw.passes for d in r.diagnostics if d.rule == "tile.stale_view"]
    assert len(warned) == 1 and warned[0].severity == "warning"
    lines = pathlib.Path(__file__).read_text().splitlines()
    assert lines[warned[0].loc.span.line - 1].strip().endswith("# READ: the device sees the new rows, the SSA "
                                                                 "reference the old ones")
    write_line = next(i for i, t in enumerate(lines, 1) if t.strip().endswith("# WRITE"))
    assert f"line {write_line}" in warned[0].message and "'out'" in warned[0].message
    # no example kernel reads a stale view
    for name, record in RECORDS:
        assert not [d for p in record.passes for d in p.diagnostics if d.rule == "tile.stale_view"], name


def _mm_kernel(twice: bool) -> pypto.JitKernel:
    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor(), d: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 64)
        pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
        y = pypto.matmul(a, b, pypto.DT_FP32)
        c[:] = y
        if twice:
            d[:] = y + 1.0
    return k


@pytest.mark.parametrize("twice", [False, True])
def test_a_matmul_assembled_into_an_output_writes_it_directly_unless_reused(twice):
    a, b = torch.randn(64, 96).half(), torch.randn(96, 128).half()
    c, d = torch.zeros(64, 128), torch.zeros(64, 128)
    k = _mm_kernel(twice)
    _, lw, _, _ = lowered(k, a, b, c, d)
    cores = {t.core for t in lw.program.execute.tasks}
    # used once: the cube tiles write `c` themselves, no vector copy from a workspace
    assert cores == ({"AIC", "AIV"} if twice else {"AIC"})
    k(a, b, c, d)
    ref = a.float() @ b.float()
    torch.testing.assert_close(c, ref, rtol=1e-3, atol=1e-3)
    if twice:
        torch.testing.assert_close(d, ref + 1, rtol=1e-3, atol=1e-3)


def test_a_view_of_a_reshaped_matmul_assembled_per_iteration_is_copied_not_retargeted():
    """A part of a matmul's result (a view of it, reshaped) assembled into an output, once per loop iteration, as
    DeepSeek V4's compressor does: each iteration copies its window; the matmul's tiles are not written into the
    first window (they were, with 2-D offsets in a 3-D output: an internal error in graph_partition)."""
    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 16], [32, 64], [64, 64])
        y = pypto.matmul(a, b, pypto.DT_FP32)  # [16, 128]
        y = pypto.reshape(y, [8, 2, 128], inplace=True)
        pypto.set_vec_tile_shapes(1, 2, 128)
        for i in pypto.loop(8):
            part = pypto.view(y, [1, 2, 128], [i, 0, 0])
            pypto.assemble(part, [7 - i, 0, 0], out)

    a, b, out = torch.randn(16, 64).half(), torch.randn(64, 128).half(), torch.zeros(8, 2, 128)
    _, lw, _, _ = lowered(k, a, b, out)
    assert {t.core for t in lw.program.execute.tasks} == {"AIC", "AIV"}  # the cube's tiles, then vector copies
    k(a, b, out)
    torch.testing.assert_close(out, (a.float() @ b.float()).reshape(8, 2, 128).flip(0), rtol=1e-3, atol=1e-3)


def test_an_assemble_copy_is_tiled_by_the_vec_tile_shape_after_a_cube_config():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        out[:] = pypto.reshape(x, [128, 64])

    x, out = torch.randn(64, 128), torch.zeros(128, 64)
    _, lw, _, _ = lowered(k, x, out)
    stores = [o for o in lw.program.tiles.ops if o.op == "store"]
    assert stores and all(o.shape == (16, 64) for o in stores)
    k(x, out)
    torch.testing.assert_close(out, x.reshape(128, 64))
