"""Exports: GraphML/DOT read back by networkx, Model Explorer JSON with every node and edge,
PyPTO program.json and per-pass folders with the documented keys."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from pypto.cli import load_module
from pypto.export import node_data, to_model_explorer, to_program_json, write_dot, write_graphml, write_pass_dumps
from pypto.frontend.jit import JitKernel
from pypto.ir.graph import Graph
from pypto.record import CompileRecord, compile_record

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parent.parent / "examples").glob("*.py")
                  if not p.name.startswith("_"))


@pytest.fixture(scope="module")
def records() -> dict[str, CompileRecord]:
    out = {}
    for path in EXAMPLES:
        mod = load_module(path, prefix="pypto_export_test_")
        for k in vars(mod).values():
            if isinstance(k, JitKernel):
                out[k.name] = compile_record(k)
    return out


DOT_KERNELS = ("softmax_kernel", "attention_kernel", "row_tiles_kernel", "quantize_kernel")


def _edges(g: Graph) -> list[tuple[str, str, int]]:
    return [(str(src), str(n.id), k) for n in g.walk() for k, src in enumerate(n.inputs)]


@pytest.mark.filterwarnings("ignore:'setParseAction' deprecated")  # pydot's parser, on pyparsing 3
def test_graphml_and_dot_read_back_with_networkx(records, tmp_path):
    dot_checked = 0
    for name, r in records.items():
        g = r.graph
        backs = [nx.read_graphml(write_graphml(g, tmp_path / f"{name}.graphml"))]
        if name in DOT_KERNELS:  # pydot's parser is slow: a few kernels, loops included
            backs.append(nx.nx_pydot.read_dot(write_dot(g, tmp_path / f"{name}.dot")))
            dot_checked += 1
        for back in backs:
            assert back.number_of_nodes() == len(g), name
            assert back.number_of_edges() == len(_edges(g)), name
            assert set(back.nodes) == {str(n.id) for n in g.walk()}
            for n in g.walk():
                assert back.nodes[str(n.id)]["op"].strip('"') == n.op
        gml = backs[0]
        assert sorted((u, v, int(d["operand"])) for u, v, d in gml.edges(data=True)) == sorted(_edges(g))
        for n in g.walk():
            assert gml.nodes[str(n.id)]["line"] == (n.loc.span.line if n.loc.span else 0)
        some = next(n for n in g.walk() if n.inputs)
        src = next(x for x in g.walk() if x.id == some.inputs[0])
        assert [d["type"] for u, v, d in gml.edges(data=True) if (u, v) == (str(src.id), str(some.id))][0] \
            == str(src.type)
    assert dot_checked == len(DOT_KERNELS)


def test_model_explorer_json_has_every_node_and_edge(records):
    for name, r in records.items():
        doc = json.loads(json.dumps(to_model_explorer(r.graph)))
        assert doc["label"] == name and [g["id"] for g in doc["graphs"]] == [name]
        nodes = doc["graphs"][0]["nodes"]
        assert [n["id"] for n in nodes] == [str(n.id) for n in r.graph.walk()]
        edges = [(e["sourceNodeId"], n["id"], int(e["targetNodeInputId"])) for n in nodes for e in n["incomingEdges"]]
        assert sorted(edges) == sorted(_edges(r.graph))
        ids = {n["id"] for n in nodes}
        assert all(e[0] in ids for e in edges)
        for n in nodes:
            assert set(n) >= {"id", "label", "namespace", "attrs", "incomingEdges"}
            assert all(set(a) == {"key", "value"} and isinstance(a["value"], str) for a in n["attrs"])


def test_loop_bodies_are_namespaces(records):
    r = records["softmax_kernel"]
    nodes = {n["id"]: n for n in to_model_explorer(r.graph)["graphs"][0]["nodes"]}
    loop = next(n for n in r.graph.nodes if n.op == "loop")
    assert nodes[str(loop.id)]["namespace"] == "LOOP_b" and nodes[str(loop.id)]["config"] == {"pinToGroupTop": True}
    assert all(nodes[str(b.id)]["namespace"] == "LOOP_b" for b in loop.body.nodes)
    assert all(nodes[str(n.id)]["namespace"] == "" for n in r.graph.nodes if n.op != "loop")


def test_node_data_overlay_shape():
    doc = node_data("k", {3: 1.5, 7: 2.0})
    assert doc == {"k": {"results": {"3": {"value": 1.5}, "7": {"value": 2.0}},
                         "gradient": [{"stop": 0, "bgColor": "#e8f5e9"}, {"stop": 1, "bgColor": "#e53935"}]}}
    with_thresholds = node_data("k", {1: 1}, thresholds=[{"value": 1, "bgColor": "red"}])
    assert with_thresholds["k"]["thresholds"] == [{"value": 1, "bgColor": "red"}]


FUNCTION_KEYS = {"rawname", "funcmagic", "func_magicname", "functype", "graphtype", "hash", "incasts", "outcasts",
                 "operations", "tensors", "rawtensors", "file", "line"}
OPERATION_KEYS = {"opcode", "opmagic", "ioperands", "ooperands", "latency", "subgraphid", "semantic_label", "file",
                  "line", "tile"}
TENSOR_KEYS = {"magic", "rawtensor", "offset", "shape", "validshape", "mem_type"}


def test_program_json_has_the_documented_keys(records):
    for name, r in records.items():
        doc = json.loads(json.dumps(to_program_json(r.graph)))
        assert set(doc) == {"version", "functions", "entryhash"}
        loops = [n for n in r.graph.walk() if n.op == "loop"]
        funcs = doc["functions"]
        assert len(funcs) == 1 + len(loops), name
        assert doc["entryhash"] == funcs[0]["hash"] and funcs[0]["rawname"] == name
        assert funcs[0]["programs"] == {str(n.id): f["func_magicname"] for n, f in zip(loops, funcs[1:])}
        opmagics = []
        for f in funcs:
            assert FUNCTION_KEYS <= set(f), (name, set(FUNCTION_KEYS) - set(f))
            tensors = {t["magic"]: t for t in f["tensors"]}
            for op in f["operations"]:
                assert OPERATION_KEYS <= set(op)
                assert set(op["semantic_label"]) == {"label", "filename", "lineno"}
                assert all(i in tensors for i in op["ioperands"] + op["ooperands"]), (name, op["opcode"])
                opmagics.append(op["opmagic"])
            for t in f["tensors"]:
                assert TENSOR_KEYS <= set(t) and set(t["mem_type"]) == {"asis", "tobe"}
            assert all(i in tensors for i in f["incasts"] + f["outcasts"])
        assert sorted(opmagics) == sorted(n.id for n in r.graph.walk())  # one ID space


def test_program_json_loop_bodies_take_carries_and_enclosing_values(records):
    r = records["softmax_kernel"]
    loop = next(n for n in r.graph.nodes if n.op == "loop")
    body = next(f for f in to_program_json(r.graph)["functions"] if f["funcmagic"] == loop.id)
    carry = next(n for n in loop.body.nodes if n.op == "carry")
    param_x = next(p for p in r.graph.params() if p.attrs["name"] == "x")
    assert body["rawname"] == "LOOP_b" and body["incasts"][0] == carry.id and param_x.id in body["incasts"]
    assert body["outcasts"] == [nid for _, nid in loop.body.outputs]
    view = next(t for t in body["tensors"] if t["magic"] == next(n.id for n in loop.body.nodes if n.op == "view"))
    assert view["rawtensor"] == param_x.id and view["offset"] == ["i", 0, 0, 0]


def test_pass_dumps_use_pypto_folder_layout(records, tmp_path):
    r = records["softmax_kernel"]
    written = write_pass_dumps(r, tmp_path)
    base = tmp_path / "computation_graph"
    assert base / "Pass_00_Verify" / "Before_000_verify_softmax_kernel.json" in written
    assert base / "Pass_06_VerifyTensor" / "After_006_verify_tensor_LOOP_b.json" in written
    assert len(written) == len(r.passes) * 2 * 2  # before/after × (kernel body, loop body)
    doc = json.loads((base / "Pass_01_Decompose" / "After_001_decompose_softmax_kernel.json").read_text())
    assert FUNCTION_KEYS <= set(doc)
    with pytest.raises(ValueError, match="snapshots"):
        write_pass_dumps(CompileRecord.from_json(r.to_json()), tmp_path / "again")


def test_the_tile_stage_exports_as_graphml_and_dot_and_a_tasks_overlay(tmp_path):
    from pypto.export import tasks_per_node, write_tile_dot, write_tile_graphml

    mod = load_module(next(e for e in EXAMPLES if e.name == "attention.py"))
    record = compile_record(mod.attention_kernel)
    p = record.program
    back = nx.read_graphml(write_tile_graphml(p, tmp_path / "t.graphml"))
    ops = [n for n, d in back.nodes(data=True) if d["kind"] == "tile_op"]
    assert len(ops) == len(p.tiles.ops)
    assert sum(1 for _, d in back.nodes(data=True) if d["kind"] == "buffer") == len(p.tiles.buffers)
    tile_edges = sum(len(o.inputs) for o in p.tiles.ops)
    assert sum(1 for *_, d in back.edges(data=True) if d["kind"] == "tile") == tile_edges
    mm = next(d for _, d in back.nodes(data=True) if d.get("op") == "matmul")
    assert mm["core"] == "AIC" and mm["memory"] == "GM->L1->L0A,L0B->L0C->GM" and mm["task"] >= 0
    assert (tmp_path / "t.dot").exists() is False and write_tile_dot(p, tmp_path / "t.dot").read_text().startswith(
        ("strict digraph", "digraph"))
    per_node = tasks_per_node(p)
    matmuls = [n.id for n in p.graph.walk() if n.op == "matmul"]
    assert matmuls and all(per_node[m] >= 1 for m in matmuls)
