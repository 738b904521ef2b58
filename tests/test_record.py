"""The CompileRecord: JSON round trips on every example, the JSON Schema, the source ⇄ node
queries, and the per-pass dump files (DumpInstrument, compile_debug_mode)."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
import torch

import pypto
from pypto.cli import load_module
from pypto.compiler import manager as M
from pypto.compiler.instruments import DumpInstrument, pass_file_name
from pypto.compiler.pipeline import PIPELINE, run_pipeline
from pypto.compiler.serialize import program_json, tiles_json
from pypto.frontend.jit import JitKernel
from pypto.ir import text
from pypto.ir.serialize import attr_value, graph_from, graph_json
from pypto.ir.source import Loc
from pypto.record import SCHEMA, CompileRecord, compile_record, expanded

HERE = Path(__file__).resolve()
REPO = HERE.parent.parent
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.py") if not p.name.startswith("_"))
SCHEMA_DOC = json.loads((REPO / "docs" / "compile-record.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA_DOC)
PASS_VALIDATOR = jsonschema.Draft202012Validator({"$ref": "#/$defs/pass", "$defs": SCHEMA_DOC["$defs"]})
GRAPH_VALIDATOR = jsonschema.Draft202012Validator({"$ref": "#/$defs/graph", "$defs": SCHEMA_DOC["$defs"]})


def _line_of(marker: str) -> int:
    for i, line in enumerate(HERE.read_text().splitlines(), 1):
        if line.rstrip().endswith(marker):
            return i
    raise AssertionError(marker)


def _kernels(path: Path) -> list[JitKernel]:
    mod = load_module(path, prefix="pypto_record_test_")
    return [v for v in vars(mod).values() if isinstance(v, JitKernel)]


def _example_records() -> list[CompileRecord]:
    return [compile_record(k) for path in EXAMPLES for k in _kernels(path)]


@pytest.fixture(scope="module")
def example_records() -> list[CompileRecord]:
    records = _example_records()
    assert len(records) >= len(EXAMPLES)
    return records


# ---- a kernel whose node is made in a helper: the loc chain has two lines of this file

def scaled_exp(t, k):
    return pypto.exp(t) * k  # MARK: helper-line


@pypto.jit
def helper_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    s = pypto.softmax(x, dim=-1)  # MARK: softmax-line
    unused = pypto.abs(x)  # noqa: F841 - nothing needs it: dce removes it
    out[:] = scaled_exp(s, 2.0)  # MARK: call-line


@pytest.fixture(scope="module")
def helper_record() -> CompileRecord:
    return compile_record(helper_kernel)


# ---- JSON round trips and the schema ----------------------------------------------------------

def test_every_example_round_trips_through_json(example_records):
    for r in example_records:
        doc = json.loads(r.dumps())
        back = CompileRecord.from_json(doc)
        assert back.to_json() == doc, r.source.kernel
        assert back.graph == r.graph, r.source.kernel
        assert back.source == r.source and back.inputs == r.inputs and back.bindings == r.bindings
        assert back.passes == r.passes  # snapshots are not part of equality
        # the attribute strings are the text form, and decode to the very values
        for n in r.graph.walk():
            assert {k: attr_value(text.fmt_value(v)) for k, v in n.attrs.items()} == n.attrs


def test_snapshots_round_trip_when_included(example_records):
    for r in example_records:
        doc = expanded(json.loads(r.dumps(include_snapshots=True)))
        back = CompileRecord.from_json(r.to_json(include_snapshots=True))
        assert back.traced is not None and r.traced is not None and back.traced.graph == r.traced.graph
        for mine, theirs, entry in zip(r.passes, back.passes, doc["passes"], strict=True):
            assert mine.snapshot is not None and theirs.snapshot is not None
            assert theirs.snapshot.graph == mine.snapshot.graph, (r.source.kernel, mine.name)
            assert entry["snapshot"] == r.snapshot_json(mine.index)
        VALIDATOR.validate(doc)
        # parts a snapshot shares with the final program or an earlier snapshot are written once
        compact, _ = r.to_document(include_snapshots=True)
        if len(r.passes) > 1:
            assert any(v == {"$same": f"passes.{p['index'] - 1}.graph"} or "$same" in str(v)
                       for p in compact["passes"][1:] for v in p["snapshot"].values()), r.source.kernel


def test_tile_expansions_snapshot_shares_the_final_tile_graph_unless_partition_inserted_copies(example_records):
    """Graph partition hands on the very tile graph it was given when it inserts no copy between subgraphs, so a
    record with snapshots writes the tile ops' columns once (tile expansion's snapshot: `{"$same": "tiles"}`); when
    it inserts copies, the snapshot's tile graph is its own. Either way the snapshot reads back as the tile graph
    tile expansion made."""
    seen = {"shared": 0, "own": 0}
    for r in example_records:
        at = next((p for p in r.passes if p.name == "tile_expand"), None)
        if at is None or at.snapshot is None or at.snapshot.tiles is None or r.program.tiles is None:
            continue
        copies = len(r.program.tiles.ops) != len(at.snapshot.tiles.ops)  # the loads and stores it inserted
        compact, _ = r.to_document(include_snapshots=True)
        written = compact["passes"][at.index]["snapshot"]["tiles"]
        assert (written == {"$same": "tiles"}) == (not copies), r.source.kernel
        assert (at.snapshot.tiles is r.program.tiles) == (not copies), r.source.kernel
        back = expanded(json.loads(r.dumps(include_snapshots=True)))["passes"][at.index]["snapshot"]["tiles"]
        assert back == json.loads(json.dumps(tiles_json(at.snapshot.tiles))), r.source.kernel
        seen["own" if copies else "shared"] += 1
    assert seen["shared"] and seen["own"], seen  # the examples have both


def test_every_example_record_validates_against_the_schema_file(example_records):
    for r in example_records:
        VALIDATOR.validate(json.loads(r.dumps()))


def test_profiled_records_carry_the_swimlane_validate_and_round_trip(example_records):
    from pypto.record import profile

    for r in example_records:
        if r.program.execute is None:
            continue
        prof = profile(r, "sim")
        assert prof.run is not None and len(prof.run.tasks) == len(r.program.execute.tasks)
        doc = json.loads(prof.dumps())
        VALIDATOR.validate(doc)
        back = CompileRecord.from_json(doc)
        assert back.run is not None and [t.id for t in back.run.tasks] == [t.id for t in prof.run.tasks]
        # every task resolves to its leaf, tile ops and source lines through the record
        t = back.run.tasks[-1]
        assert back.program.execute.tasks[t.id].leaf == t.leaf
        assert back.source_of_task(t.id) and any(s.file == r.source.file for s in back.source_of_task(t.id))


def _profiled(records: list[CompileRecord]) -> Iterator[tuple[CompileRecord, CompileRecord, dict[str, Any], Any]]:
    """Each record that reached the execute stage, profiled on the sim board, and its profiled document and columns."""
    from pypto.record import profile

    for r in records:
        if r.program.execute is None:
            continue
        prof = profile(r, "sim")
        assert prof.run is not None
        doc, arrays = prof.to_document()
        yield r, prof, doc, arrays


def test_a_profiled_record_stores_its_run_as_columns_sharing_the_execute_graphs_arrows(example_records):
    """Version 3: the run's long lists are columns (its tasks' predecessors name the execute graph's arrays: the
    sim board's run has the same lists), and expanded they are `Swimlane.to_json()`, text for text. A version-2
    document (the run as lists) reads as the same record."""
    from pypto.ir import columns as C

    big = 0
    for r, prof, doc, arrays in _profiled(example_records):
        assert json.dumps(expanded(doc, arrays)["run"]) == json.dumps(prof.run.to_json()), r.source.kernel
        tasks = doc["run"]["tasks"]
        if len(prof.run.tasks) < C.MIN_ROWS:
            assert isinstance(tasks["preds"], list)
            continue
        big += 1
        assert all(C.MARK in v for v in tasks.values()), r.source.kernel
        assert tasks["preds"][C.MARK] == doc["execute"]["tasks"][C.MARK]["dict"]["preds"]  # the same arrays
        assert not any(name.startswith("run.tasks.preds") for name in arrays)
        v2 = {**expanded(doc, arrays), "version": 2}  # every list as lists: what version 2 allowed the run
        back = CompileRecord.from_json(v2).run
        assert back is not None and json.dumps(back.to_json()["tasks"]) == json.dumps(prof.run.to_json()["tasks"])
        VALIDATOR.validate(json.loads(json.dumps({**doc, "columns": {**doc["columns"], "inline": C.inline(arrays)}})))
    assert big >= 1  # an example with a run of columns


def test_a_document_whose_run_was_made_ahead_is_the_same(example_records):
    """`to_document(run_part=…)`: the run's part made elsewhere (a job's forked child: `run_document_ahead`, its
    predecessors filled in after) gives the same document and columns, names and order, as made in place; also
    when the part crossed a pickle, and for a run whose tasks hold their own lists."""
    import pickle

    from pypto.boards.swimlane import Swimlane
    from pypto.record import run_document_ahead

    big = 0
    for r, prof, doc, _ in _profiled(example_records):
        assert prof.run is not None
        # the run as columns (the sim board's), and as LaneTasks
        for rec in (prof, dataclasses.replace(prof, run=Swimlane.from_json(prof.run.to_json()))):
            want, want_arrays = rec.to_document()
            part = pickle.loads(pickle.dumps(run_document_ahead(rec.run)))
            got, got_arrays = rec.to_document(run_part=lambda part=part: part)
            assert json.dumps(got) == json.dumps(want), r.source.kernel
            assert list(got_arrays) == list(want_arrays)
            assert all(np.array_equal(got_arrays[k], want_arrays[k]) and got_arrays[k].dtype == want_arrays[k].dtype
                       for k in want_arrays)
        big += isinstance(doc["run"]["tasks"]["preds"], dict)
    assert big >= 1  # a run whose predecessors are the execute graph's columns


def test_records_say_what_was_compiled(example_records):
    by_kernel = {r.source.kernel: r for r in example_records}
    soft = by_kernel["softmax_kernel"]
    assert soft.source.file.endswith("softmax.py") and len(soft.source.text_sha256 or "") == 64
    assert [(i.name, i.dtype, i.shape) for i in soft.inputs] == [("x", "fp32", (32, 32, 1, 256)),
                                                                 ("out", "fp32", (32, 32, 1, 256))]
    assert soft.bindings == {"x.d0": 32, "out.d0": 32}
    assert soft.source.options["host_options"]["compile_stage"] == "ALL_COMPLETE"  # enums by name
    assert [t.kind for t in soft.source.tile_configs] == ["vec"]
    assert [p.name for p in soft.passes][: len(PIPELINE)] == [p.name for p in PIPELINE][: len(soft.passes)]
    const = by_kernel["bias_act_kernel"]
    assert [(i.name, i.value) for i in const.inputs if i.dtype is None] == [("use_gelu", "True")]


@pytest.mark.parametrize("breakage", [
    "missing graph", "version 4", "attr not a string", "unknown stage", "node without op", "bad loc line",
    "shape entry a float", "column of two kinds", "column without a count",
])
def test_a_broken_record_does_not_validate(example_records, breakage):
    doc = json.loads(example_records[0].dumps())
    VALIDATOR.validate(doc)
    bad = copy.deepcopy(doc)
    node = next(n for n in bad["graph"]["nodes"] if n["attrs"])
    if breakage == "missing graph":
        del bad["graph"]
    elif breakage == "version 4":
        bad["version"] = 4
    elif breakage == "attr not a string":
        key = next(iter(node["attrs"]))
        node["attrs"][key] = 3
    elif breakage == "unknown stage":
        bad["passes"][0]["stage"] = "quantum"
    elif breakage == "node without op":
        del node["op"]
    elif breakage == "bad loc line":
        node["loc"] = [{"file": "k.py", "line": "seven"}]
    elif breakage == "shape entry a float":
        typed = next(n for n in bad["graph"]["nodes"] if n["type"])
        typed["type"]["shape"][0] = 1.5
    elif breakage == "column of two kinds":
        bad["tiles"]["ops"]["node"]["$columns"]["json"] = []
    elif breakage == "column without a count":
        del bad["tiles"]["ops"]["op"]["$columns"]["n"]
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(bad)


def test_from_json_refuses_other_documents_and_versions(helper_record):
    doc = helper_record.to_json()
    with pytest.raises(ValueError, match="not a compile record"):
        CompileRecord.from_json({**doc, "schema": "something/else"})
    with pytest.raises(ValueError, match="version 4; this pypto reads versions 2, 3"):
        CompileRecord.from_json({**doc, "version": 4})
    with pytest.raises(ValueError, match="version-1 compile record .* compile the kernel again"):
        CompileRecord.from_json({**doc, "version": 1})
    assert doc["schema"] == SCHEMA


def test_a_record_whose_execute_graph_has_a_cycle_is_refused_naming_the_task(example_records):
    """Every walk over a task's preds (the boards, health) relies on tasks waiting only on earlier ones:
    an edited or foreign record that breaks it (a cycle, a task waiting on itself) is refused when read."""
    doc = expanded(example_records[0].to_json())
    tasks = doc["execute"]["tasks"]
    assert len(tasks) >= 2
    tasks[0]["preds"] = [len(tasks) - 1]  # the first task waits on the last: a cycle through their chain
    with pytest.raises(ValueError, match=rf"task 0 waits on {len(tasks) - 1}, which is not a task before it"):
        CompileRecord.from_json(doc)
    tasks[0]["preds"] = []
    tasks[1]["preds"] = [1]
    with pytest.raises(ValueError, match="task 1 waits on 1, which is not a task before it"):
        CompileRecord.from_json(doc)


def test_reading_a_version_1_record_file_says_to_compile_again(helper_record, tmp_path):
    """A record.json an older pypto-ide wrote (version 1: one document of lists, no columns file) is refused
    by `CompileRecord.read` with what to do, not a KeyError or a missing-file error."""
    v1 = expanded(helper_record.to_json())
    v1["version"] = 1
    (tmp_path / "record.json").write_text(json.dumps(v1))
    for path in (tmp_path, tmp_path / "record.json"):
        with pytest.raises(ValueError, match=r"version-1 compile record .* `pypto-ide compile FILE --record DIR`"):
            CompileRecord.read(path)


def test_graph_json_round_trips_loops_and_symbolic_attrs(example_records):
    soft = next(r for r in example_records if r.source.kernel == "softmax_kernel")
    g = soft.traced.graph if soft.traced else soft.graph
    loop = next(n for n in g.nodes if n.op == "loop")
    doc = graph_json(g)
    jloop = next(n for n in doc["nodes"] if n["op"] == "loop")
    assert jloop["attrs"]["stop"] == "x.d0" and jloop["body"]["name"] == loop.body.name
    assert graph_from(json.loads(json.dumps(doc))) == g


def test_snapshot_json_is_on_demand_and_needs_snapshots(helper_record):
    first = helper_record.passes[0]
    assert helper_record.snapshot_json(first.index) == program_json(first.snapshot)
    loaded = CompileRecord.from_json(helper_record.to_json())
    with pytest.raises(LookupError, match="without them"):
        loaded.snapshot_json(first.index)
    with pytest.raises(IndexError):
        helper_record.snapshot_json(999)


# ---- queries ------------------------------------------------------------------------------------

def test_nodes_at_follows_the_callsite_chain(helper_record):
    r = helper_record
    helper_line, call_line = _line_of("# MARK: helper-line"), _line_of("# MARK: call-line")
    at_helper = r.nodes_at(__file__, helper_line)
    assert {r.node(i).op for i in at_helper} >= {"exp", "mul"}
    # the call line maps to the same nodes (and to the assemble that writes `out`)
    assert set(at_helper) <= set(r.nodes_at(__file__, call_line))
    assert (str(HERE), helper_line) in r.lines() and (str(HERE), call_line) in r.lines()
    # a relative spelling of the file finds the same nodes
    rel = Path(__file__).resolve().relative_to(Path.cwd()) if Path.cwd() in HERE.parents else None
    if rel is not None:
        assert r.nodes_at(str(rel), helper_line) == at_helper
    assert r.nodes_at(__file__, 1) == [] and r.nodes_at("elsewhere.py", helper_line) == []
    for f, line in r.lines():
        assert r.nodes_at(f, line), (f, line)


def test_source_of_and_node_for_pass_made_nodes(helper_record):
    r = helper_record
    softmax_line = _line_of("# MARK: softmax-line")
    made = [i for i in r.nodes_at(__file__, softmax_line) if r.node(i).made_by == "decompose"]
    assert made, "decompose's nodes keep the softmax's line"
    for i in made:
        assert [s.line for s in r.source_of(i)] == [softmax_line]
        assert r.node(r.node(i).origin[0]).op == "softmax"  # the traced node, found in a snapshot
    with pytest.raises(KeyError, match="no node"):
        r.node(10 ** 6)


def test_source_of_follows_origin_when_a_node_has_no_location(helper_record):
    r = helper_record
    g = r.graph
    victim = next(n for n in g.nodes if n.made_by == "decompose")
    stripped = dataclasses.replace(victim, loc=Loc())
    nodes = tuple(stripped if n is victim else n for n in g.nodes)
    program = M.Program(dataclasses.replace(g, nodes=nodes))
    rec = CompileRecord.build("k", r.source.file, {}, list(r.passes), program, r.traced)
    assert rec.node(victim.id).loc == Loc()
    assert rec.source_of(victim.id) == list(r.node(victim.origin[0]).loc.frames)
    assert victim.id in rec.nodes_at(__file__, _line_of("# MARK: softmax-line"))


def test_passes_changing_names_the_pass_that_made_or_removed_a_node(helper_record):
    r = helper_record
    made = next(n for n in r.graph.walk() if n.made_by == "decompose")
    assert "decompose" in [p.name for p in r.passes_changing(made.id)]
    softmax = r.node(made.origin[0])
    assert [p.name for p in r.passes_changing(softmax.id)] == ["decompose"]  # replaced by its primitives
    dead = next(n for n in r.traced.graph.walk() if n.op == "abs")
    assert [p.name for p in r.passes_changing(dead.id)] == ["dce"]  # removed
    assert dead.id not in r.graph.by_id()
    param = r.graph.params()[0]
    assert r.passes_changing(param.id) == []
    # loaded without snapshots: the pass named in made_by
    loaded = CompileRecord.from_json(r.to_json())
    assert [p.name for p in loaded.passes_changing(made.id)] == ["decompose"]


def test_from_compiled_without_inputs_reads_the_parameters():
    x = torch.randn(8, 64)
    helper_kernel(x, torch.empty_like(x))
    ck = next(iter(helper_kernel.cache.values()))
    r = CompileRecord.from_compiled(ck)
    assert [(i.name, i.dtype, i.shape) for i in r.inputs] == [("x", "fp32", (8, 64)), ("out", "fp32", (8, 64))]
    assert r.bindings == {} and r.passes[0].name == "verify"


def test_a_failed_compile_still_has_a_record(monkeypatch):
    import pypto.compiler.pipeline as P

    def boom(p, ctx):
        raise pypto.PyptoError("a tile does not fit", p.graph.nodes[-1].loc)

    monkeypatch.setattr(P, "PIPELINE", (PIPELINE[0], M.Pass("boom", "tensor", boom, "fails")))
    x = torch.randn(4, 8)

    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.exp(x)

    with pytest.raises(pypto.PyptoError) as info:
        k.compile(x, torch.empty_like(x))
    r = CompileRecord.from_failure("k", __file__, {}, info.value, {"x": x})
    assert r is not None and r.error is not None and r.error.pass_name == "boom"
    assert [p.name for p in r.passes] == ["verify", "boom"] and r.passes[-1].error.startswith("PyptoError")
    doc = json.loads(r.dumps())
    VALIDATOR.validate(doc)
    assert doc["error"]["message"] == "a tile does not fit" and doc["error"]["loc"][0]["file"] == __file__
    assert CompileRecord.from_json(doc).to_json() == doc


# ---- dumps --------------------------------------------------------------------------------------

def _traced_graph():
    x = torch.randn(8, 64)
    helper_kernel(x, torch.empty_like(x))
    return next(iter(helper_kernel.cache.values())).graph


def test_dump_instrument_writes_one_file_per_pass(tmp_path):
    program, records = run_pipeline(_traced_graph(), {}, [DumpInstrument(tmp_path / "run", "helper_kernel")])
    files = sorted((tmp_path / "run").iterdir())
    assert [f.name for f in files] == [pass_file_name(r.index, r.name) for r in records]
    assert files[0].name == "000_verify.json"
    for f, r in zip(files, records):
        doc = json.loads(f.read_text())
        assert doc["schema"] == "pypto-ide/pass-dump" and doc["kernel"] == "helper_kernel"
        assert doc["pass"]["name"] == r.name and doc["pass"]["changed"] == r.changed
        assert doc["pass"]["node_count"] == r.node_count
        assert graph_from(doc["graph"]) == r.snapshot.graph
        PASS_VALIDATOR.validate(doc["pass"])
        GRAPH_VALIDATOR.validate(doc["graph"])


def test_dump_instrument_writes_the_failing_pass_with_its_error(tmp_path, monkeypatch):
    import pypto.compiler.pipeline as P

    def boom(p, ctx):
        raise ZeroDivisionError("bad arithmetic in a pass")

    g = _traced_graph()  # compiled before the pipeline is patched
    monkeypatch.setattr(P, "PIPELINE", (PIPELINE[0], PIPELINE[1], M.Pass("boom", "tensor", boom, "fails")))
    dump = DumpInstrument(tmp_path, "helper_kernel")
    with pytest.raises(M.InternalCompilerError):
        run_pipeline(g, {}, [dump])
    assert [p.name for p in dump.written] == ["000_verify.json", "001_decompose.json", "002_boom.json"]
    doc = json.loads((tmp_path / "002_boom.json").read_text())
    assert doc["pass"]["error"] == "ZeroDivisionError: bad arithmetic in a pass"
    after_decompose = json.loads((tmp_path / "001_decompose.json").read_text())["graph"]
    assert doc["graph"] == after_decompose  # the failing pass's input


def test_compile_debug_mode_dumps_into_output_kernel_timestamp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @pypto.jit(debug_options={"compile_debug_mode": 1})
    def debug_me(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                 out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x) + 1.0

    x = torch.randn(16, 64)
    out = torch.empty_like(x)
    debug_me(x, out)
    torch.testing.assert_close(out, torch.exp(x) + 1.0)
    runs = list((tmp_path / "output").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("debug_me_")
    stamp = runs[0].name[len("debug_me_"):]
    assert len(stamp) == 15 and stamp[8] == "_" and stamp.replace("_", "").isdigit()
    tensor_files = sorted(f.name for f in runs[0].glob("*.json"))
    assert tensor_files[0] == "000_verify.json" and len(tensor_files) == sum(p.stage == "tensor" for p in PIPELINE)
    ck = next(iter(debug_me.cache.values()))
    lowered = [r for lw in getattr(ck, "lowered", {}).values() for r in lw.passes]
    if lowered:  # the stages after the tensor stage, for this call's dynamic dims
        sub = runs[0] / "out.d0=16,x.d0=16"
        assert sorted(f.name for f in sub.glob("*.json")) == [pass_file_name(r.index, r.name) for r in lowered]


def test_no_dumps_without_debug_mode(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @pypto.jit
    def quiet(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x)

    x = torch.randn(8, 64)
    quiet(x, torch.empty_like(x))
    assert quiet.compile_count == 1 and not (tmp_path / "output").exists()


def test_source_of_json_is_source_of_on_the_records_json() -> None:
    """Readers of a record's JSON (the Chrome trace, the HTTP server's task index) answer
    'which lines does this node run' as the record does, nodes without a location included."""
    from support import example_records

    from pypto.ir.serialize import source_of_json, span_json, walk_graph_json

    checked = 0
    for _name, record in example_records():
        doc = record.to_json(include_snapshots=True)
        nodes: dict[int, Any] = {}
        for g in [doc.get("traced"), *(p.get("graph") for p in doc["passes"]), doc["graph"]]:
            if g:
                nodes.update({n["id"]: n for n in walk_graph_json(g)})
        for nid in nodes:
            assert source_of_json(nodes, nid) == [span_json(s) for s in record.source_of(nid)], nid
            checked += 1
    assert checked > 100


@pypto.jit
def ragged(x: pypto.Tensor([4, 128], pypto.DT_FP32), lens: pypto.Tensor([4], pypto.DT_UINT8),
           out: pypto.Tensor([4, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 16)
    for b in pypto.loop(4):
        for t in pypto.loop(lens[b]):
            out[b:b + 1, t * 16:(t + 1) * 16] = pypto.exp(x[b:b + 1, t * 16:(t + 1) * 16])


def test_compile_record_makes_inputs_without_values_unless_the_kernel_reads_them():
    """A compile reads shapes, so its example inputs are made without values — except a kernel that
    reads scalars from an input (its trip counts): then it is lowered for the example values, as when run."""
    from pypto.frontend.inputs import example_arguments
    from pypto.record import bind

    made = example_arguments(ragged)
    want = {f"lens[{i}]": int(v) for i, v in enumerate(made["lens"].tolist())}
    got = compile_record(ragged.fresh())
    assert got.bindings == want == bind(ragged.fresh().compile(**made).graph, made)
    with_values = compile_record(ragged.fresh(), made)

    def content(r: CompileRecord) -> dict[str, Any]:
        doc = r.to_json()
        doc["passes"] = [{k: v for k, v in p.items() if k != "seconds"} for p in doc["passes"]]
        return doc

    assert content(got) == content(with_values)


def test_compile_for_given_placeholders_makes_values_where_the_kernel_reads_them():
    """The tools hand compile_for inputs made without values (the sim board reads shapes only); where the
    kernel reads scalars from one (`lens`), the inputs are made again with values — the arguments it
    returns have them, for the advisor's candidates — and the record is the one compiled with values."""
    from pypto.frontend.inputs import NoValues, example_arguments, has_values
    from pypto.record import compile_for

    placeholders = example_arguments(ragged, values=False)
    assert isinstance(placeholders["lens"], NoValues)
    got, args = compile_for(ragged.fresh(), placeholders)
    assert has_values(args["lens"]) and has_values(args["x"])
    want = compile_record(ragged.fresh(), example_arguments(ragged))
    assert got.bindings == want.bindings and got.bindings["lens[1]"] == int(args["lens"][1])

    @pypto.jit
    def plain(x: pypto.Tensor([64, 64], pypto.DT_FP32), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.exp(x)

    _, kept = compile_for(plain, example_arguments(plain, values=False))
    assert isinstance(kept["x"], NoValues), "a kernel that reads no scalars keeps its placeholders"


def test_the_ops_a_records_costs_and_listings_read_are_kept_from_the_compile() -> None:
    """After copy insertion a tile op's id is not its position: the block instructions' ops are noted while the
    compile's index of every op is at hand (`tile_ir.keep_ops`), so the record's per-node costs and its listings
    find them without making that index again (glm's fused attention's job made it after its findings' child
    forked: 0.8 s of copied pages)."""
    from pypto.compiler import tile_ir
    from pypto.frontend.inputs import example_arguments
    from pypto.record import trace_for
    from server import analyze

    path = str(Path(__file__).resolve().parents[1] / "examples" / "rmsnorm.py")
    kernel = analyze._kernel(analyze._load(path, Path(path).read_text()), path, "rmsnorm_kernel")
    rec = trace_for(kernel, example_arguments(kernel, values=False)).lowered()
    tiles, blocks = rec.program.tiles, rec.program.blocks
    assert tiles is not None and blocks is not None
    ids = {ins.tile_op for b in blocks for ins in b.instrs if ins.tile_op >= 0}
    assert any(not (i < len(tiles.ops) and tiles.ops[i].id == i) for i in ids)  # ids off their positions
    assert "by_id" not in tile_ir._derived(tiles)  # the compile's index let go of
    costs = rec.instruction_costs
    listings = [rec.listing(leaf) for leaf in range(len(blocks))]
    assert "by_id" not in tile_ir._derived(tiles)  # and not made again
    found = {i: tile_ir.op_with_id(tiles, i) for i in ids}
    by_id = tile_ir.ops_by_id(tiles)
    assert found == {i: by_id[i] for i in ids} and costs and all(listings)
