"""The slim record the panels are sent (`server.panel_data.panel_record`) is the same whether it is made from
the record's whole lists or from lists whose left-out bulk was never decoded (`server.analyze.panel_lists`,
`PANEL_LEAVE_OUT`), with its subgraphs and execute tasks kept as columns or not (`PANEL_ROWS`): the second is what
the language server does for a big kernel (at 195k tile ops, 0.85 -> 0.37 s), so every field it keeps must come out
as the whole lists would give it. Its aggregates are the ones a plain walk over the subgraphs gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import unpack

from pypto.ir.columns import MIN_ROWS
from server import analyze
from server.panel_data import PANEL_LEAVE_OUT, PANEL_ROWS, TASK_MOVES, panel_aggregates, panel_record, time_share

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("file,kernel", [("examples/softmax.py", "softmax_kernel"),
                                         ("examples/attention.py", "attention_kernel"),
                                         ("tests/data/attention_32x512x64.py", "attn")])
def test_a_slim_record_from_lists_left_without_its_bulk_is_the_one_from_the_whole_lists(file, kernel):
    path = ROOT / file
    out = analyze.analyze_kernel(str(path), path.read_text(), kernel, {"record": True, "report": False})
    assert out["error"] is None
    limit = 10  # every one of these records is slim under it
    whole = panel_record(analyze.record_lists(out["record"], out["record_columns"]), limit)
    for rows in (frozenset(), PANEL_ROWS):
        lean = analyze.panel_lists(out["record"], out["record_columns"], PANEL_LEAVE_OUT, limit, rows)
        assert "omitted" in whole and lean["memory"] == [None] * len(lean["memory"])  # left out, its length kept
        # (a list stored as columns comes as columns when asked: a short one is stored as a list)
        n_sgs = len(unpack(whole["subgraphs"]["$rows"]["id"]))
        assert ("$rows" in lean["subgraphs"]) == (bool(rows) and n_sgs >= MIN_ROWS)
        assert json.dumps(panel_record(lean, limit)) == json.dumps(whole)  # the same, key order too
    # at the limit or under it: none (the whole lists serve)
    n = whole["aggregates"]["tile_ops"]
    assert analyze.panel_lists(out["record"], out["record_columns"], PANEL_LEAVE_OUT, n) is None


def plain_aggregates(lists):
    """`panel_aggregates` as a loop over the subgraphs (what it did before numpy): the reference."""
    ops = lists["tiles"]["ops"]
    at = {i: k for k, i in enumerate(ops["id"])}  # a subgraph's ops are ids, the columns in program order
    node, kind = [ops["node"][at[i]] for i in sorted(at)], [ops["op"][at[i]] for i in sorted(at)]  # by id
    sg_nodes = []
    for sg in lists["subgraphs"]:
        compute = [node[k] for k in sg["ops"] if kind[k] not in TASK_MOVES]
        moves = [node[k] for k in sg["ops"] if kind[k] in TASK_MOVES]
        sg_nodes.append(list(dict.fromkeys(compute + moves)))
    fullest = {}
    for b in lists.get("blocks") or ():
        cap = dict(b["capacity_bytes"])
        share = max((peak / cap[s] for s, peak in b["peak_bytes"] if cap.get(s)), default=0.0)
        fullest[b["leaf"]] = max(fullest.get(b["leaf"], 0.0), share)
    use = {}
    for sg, nodes in zip(lists["subgraphs"], sg_nodes):
        share = fullest.get(sg["leaf"]) if sg["leaf"] is not None else None
        if share is not None:
            for n in nodes:
                use[n] = max(use.get(n, 0.0), share)
    return {"tile_ops": len(ops["id"]), "subgraph_nodes": sg_nodes, "buffer_use": {str(k): v for k, v in use.items()}}


def plain_time_share(lists):
    """`time_share` as a loop over the run's tasks (what it did before numpy): the reference."""
    ops, sgs = lists["tiles"]["ops"], lists["subgraphs"]
    node = dict(zip(ops["id"], ops["node"]))  # by id, as a subgraph names its ops
    subgraph = {task["id"]: task["subgraph"] for task in lists["execute"]["tasks"]}
    out = {}
    for tid, a, b in zip(*(lists["run"]["tasks"][k] for k in ("id", "start", "end"))):
        members = sgs[subgraph[tid]]["ops"] if tid in subgraph else ()
        for op in members:
            out[node[op]] = out.get(node[op], 0.0) + (b - a) / len(members)
    return {str(k): v for k, v in out.items()}


@pytest.mark.parametrize("file,kernel", [("examples/softmax.py", "softmax_kernel"),
                                         ("examples/attention.py", "attention_kernel"),
                                         ("examples/paged_attention.py", "paged_decode"),
                                         ("tests/data/attention_32x512x64.py", "attn")])
def test_the_aggregates_are_a_plain_walks_over_the_subgraphs(file, kernel):
    """Each subgraph's nodes (compute ops' first, then its moves', each distinct, in program order), each node's
    fullest buffer use and its share of the run's time, in the order the nodes are met: from the whole lists and
    from columns alike (the same floats: summed in the same order)."""
    path = ROOT / file
    out = analyze.analyze_kernel(str(path), path.read_text(), kernel, {"record": True, "report": False})
    assert out["error"] is None
    lists = analyze.record_lists(out["record"], out["record_columns"])
    want = plain_aggregates(lists)
    assert any(len(x) > 1 for x in want["subgraph_nodes"]) and want["buffer_use"]  # the cases are not empty
    assert json.dumps(panel_aggregates(lists)) == json.dumps(want)
    lean = analyze.panel_lists(out["record"], out["record_columns"], PANEL_LEAVE_OUT, 1, PANEL_ROWS)
    assert ("$rows" in lean["subgraphs"]) == (len(lists["subgraphs"]) >= MIN_ROWS)
    assert json.dumps(panel_aggregates(lean)) == json.dumps(want)
    share = plain_time_share(lists)
    assert len(share) > 1 and json.dumps(time_share(lists)) == json.dumps(share)
    assert json.dumps(time_share(lean)) == json.dumps(share)


def test_a_snapshot_referring_to_a_field_kept_as_columns_still_gets_lists():
    """`pypto.record.expanded(…, rows=PANEL_ROWS)`: the final program's subgraphs and execute tasks come as columns,
    and a pass snapshot that names them (`{"$same": "subgraphs"}`) gets the lists it gets without `rows`."""
    from support import example_records

    from pypto.record import expanded

    rec = dict(example_records())["softmax.softmax_kernel"]
    doc, arrays = rec.to_document(include_snapshots=True)
    assert '"$same": "subgraphs"' in json.dumps(doc) and '"$same": "execute"' in json.dumps(doc)
    plain, kept = expanded(doc, arrays), expanded(doc, arrays, rows=PANEL_ROWS)
    assert "$rows" in kept["subgraphs"] and "$rows" in kept["execute"]["tasks"]
    assert json.dumps(kept["passes"]) == json.dumps(plain["passes"])


def test_a_subgraphs_ops_are_ids_not_positions_in_the_columns():
    """Graph partition's copies take the ids after every other tile op's but sit in program order, so past the first
    copy a tile op's id is not its place in the record's columns (paged attention: most of its ops). The panels'
    aggregates and the Tiles view's grids name, for each subgraph and each tile, the tensor nodes and subgraph the
    compiled program has (before 2026-12-02 they read the columns at the ids: glm's attention's tasks linked to the
    wrong lines)."""
    from pypto.compiler.tile_ir import ops_by_id
    from pypto.frontend.inputs import example_arguments
    from pypto.record import trace_for
    from server.panel_data import TileIndex, block_of

    path = ROOT / "examples/paged_attention.py"
    out = analyze.analyze_kernel(str(path), path.read_text(), "paged_decode", {"record": True, "report": False})
    lists = analyze.record_lists(out["record"], out["record_columns"])
    ids = list(lists["tiles"]["ops"]["id"])
    assert ids != list(range(len(ids)))  # the case this is about
    kernel = analyze._kernel(analyze._load(str(path), path.read_text()), str(path), "paged_decode")
    p = trace_for(kernel, example_arguments(kernel, values=False)).lowered().program
    ops = ops_by_id(p.tiles)
    assert [o.id for o in p.tiles.ops] == ids  # the same program
    want = [sorted({ops[i].node for i in sg.ops}) for sg in p.subgraphs]
    for given in (lists, analyze.panel_lists(out["record"], out["record_columns"], PANEL_LEAVE_OUT, 1, PANEL_ROWS)):
        assert [sorted(x) for x in panel_aggregates(given)["subgraph_nodes"]] == want
    sg_of = {i: sg.id for sg in p.subgraphs for i in sg.ops}
    assert TileIndex(lists).subgraph == [sg_of.get(o.id, -1) for o in p.tiles.ops]
    # a leaf's instructions name their tile op by id: the Leaves view links each to that op's node
    for b in p.blocks:
        got = block_of(lists, b.leaf)["instrs"]
        assert [i["node"] for i in got] == [ops[x.tile_op].node if x.tile_op >= 0 else -1 for x in b.instrs]
