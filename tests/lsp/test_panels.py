"""What the VS Code panels ask the language server for (docs/protocol.md): the whole CompileRecord
with its listings (`pypto/record`), one pass's graph (`pypto/pass`), the kernel's report with and
without the advisor (`pypto/report`), a compile now (`pypto/compile`), a trace file as a swimlane
(`pypto/loadTrace`) and the `pypto/compileState` notifications — through a real client over stdio."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from server.protocol import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "tileSearchBudget": 6}

K = "softmax_kernel"


async def opened(client, lsp_kit, tmp_path, name: str = "softmax.py"):
    doc, record = await lsp_kit.open_softmax(client, tmp_path, name)
    return doc


async def test_record_is_the_whole_compile_record_with_listings_and_follows_edits(client, lsp_kit, tmp_path):
    doc = await opened(client, lsp_kit, tmp_path)
    got = await doc.call("pypto/record", kernel=K)
    assert got["uri"] == doc.uri and got["kernel"] == K and got["version"] == 1
    rec = got["record"]
    assert rec["source"]["kernel"] == K and rec["source"]["file"] == str(doc.path)
    assert "omitted" not in rec and len(rec["tiles"]["ops"]["shape"]) == len(rec["memory"]) > 0  # a small record whole
    assert [p["name"] for p in rec["passes"]][-1] == "execute_graph"
    run = rec["run"]
    assert run["board"] == "sim" and run["clock"].startswith("simulated")
    makespan = max(run["tasks"]["end"]) - min(run["tasks"]["start"])
    summary = (await client.records.record(doc.uri, K, 1))["summary"]
    assert makespan == pytest.approx(summary["makespanUs"], rel=1e-6)
    assert rec["traced"]["graph"]["nodes"], "the traced graph rides along for the first pass's diff"
    assert got["listings"] and len(got["listings"]) == len(rec["blocks"]) and "exp" in "".join(got["listings"])
    # from now on this document's compiles carry the record: an edit's record arrives with it
    version = doc.replace("set_vec_tile_shapes(1, 4, 1, 64)", "set_vec_tile_shapes(1, 8, 1, 64)")
    changed = await client.records.record(doc.uri, K, version)
    assert changed["summary"]["makespanUs"] != summary["makespanUs"]
    after = await doc.call("pypto/record", kernel=K)
    assert after["version"] == version
    run2 = after["record"]["run"]
    assert max(run2["tasks"]["end"]) - min(run2["tasks"]["start"]) == pytest.approx(changed["summary"]["makespanUs"],
                                                                                     rel=1e-6)
    assert after["record"]["source"]["tile_configs"] != rec["source"]["tile_configs"]


async def test_the_record_of_a_big_kernel_leaves_out_the_per_tile_op_bulk(client, lsp_kit, tmp_path):
    """Above 20,000 tile ops the panels are sent the record without the per-tile-op fields they do not
    draw (server/analyze.py `panel_record`), each named with its length in `omitted`."""
    from support import from_rows, softmax_source, unpack

    doc = lsp_kit.Doc(client, tmp_path / "big.py", softmax_source(128, "big"))
    summary = (await client.records.record(doc.uri, "big", 1))["summary"]
    got = await doc.call("pypto/record", kernel="big")
    rec = got["record"]
    # a second panel's ask: the same record (made once, sent as its text: `server.panels._record_text`)
    assert (await doc.call("pypto/record", kernel="big"))["record"] == rec
    # the subgraphs and execute tasks come as columns: read as the panels read them
    assert not isinstance(rec["subgraphs"], list) and not isinstance(rec["execute"]["tasks"], list)
    rec = {**rec, "subgraphs": from_rows(rec["subgraphs"]),
           "execute": {**rec["execute"], "tasks": from_rows(rec["execute"]["tasks"])}}
    gone = rec["omitted"]
    n = rec["aggregates"]["tile_ops"]
    assert n == 34_816
    ops_fields = ("id", "op", "node", "instance", "coord", "shape", "dtype", "inputs", "region", "attrs")
    assert gone == {"tiles": {"ops": dict.fromkeys(ops_fields, n), "buffers": gone["tiles"]["buffers"]}, "memory": n,
                    "subgraphs": {"ops": len(rec["subgraphs"])},
                    "blocks": {"instrs": len(rec["blocks"]), "buffers": len(rec["blocks"])},
                    "execute": {"tasks": {"reads": summary["tasks"], "writes": summary["tasks"]}},
                    "run": {"tasks": summary["tasks"], "pipe_profiles": gone["run"]["pipe_profiles"]}}
    assert not any("reads" in t or "writes" in t for t in rec["execute"]["tasks"])
    assert all({"id", "subgraph", "leaf", "core", "coord", "pred_runs"} <= set(t) for t in rec["execute"]["tasks"])
    assert gone["tiles"]["buffers"] > 0 and "memory" not in rec and set(rec["tiles"]) == {"instances", "outputs"}
    assert all(set(sg) == {"id", "core", "instance", "peak_bytes", "leaf"} for sg in rec["subgraphs"])
    assert all("instrs" not in b and b["peak_bytes"] and b["capacity_bytes"] for b in rec["blocks"])
    # in their place what the views draw from them: each subgraph's tensor nodes (a task's source lines), the
    # buffer use per node (its overlay)
    agg = {**rec["aggregates"], "subgraph_nodes": unpack(rec["aggregates"]["subgraph_nodes"])}  # (maybe packed)
    assert len(agg["subgraph_nodes"]) == len(rec["subgraphs"]) and all(agg["subgraph_nodes"])
    tile_nodes = {x for ns in agg["subgraph_nodes"] for x in ns}
    assert len(agg["buffer_use"]) == len(tile_nodes)  # (the test client renames keys that are no identifiers)
    fullest = max(p / dict(b["capacity_bytes"])[s] for b in rec["blocks"] for s, p in b["peak_bytes"])
    assert max(agg["buffer_use"].values()) == pytest.approx(fullest) and fullest <= 1
    # the run comes without its tasks and pipe profiles: the swimlane panel draws it from windows
    assert "tasks" not in rec["run"] and "pipe_profiles" not in rec["run"] and gone["run"]["pipe_profiles"] > 0
    assert rec["run"]["lanes"] and rec["run"]["metrics"]["critical_path"] and rec["run"]["metrics"]["leaves"]
    # what the other views draw is all there: subgraphs, blocks, the execute tasks, and the time per node
    assert len(rec["execute"]["tasks"]) == summary["tasks"] == 1024
    assert rec["subgraphs"] and rec["blocks"] and got["listings"]
    whole = await doc.call("pypto/swimlane", kernel="big", maxBoxes=20_000)
    busy = sum(b["end"] - b["start"] for b in whole["boxes"])
    assert sum(rec["aggregates"]["time_share"].values()) == pytest.approx(busy, rel=1e-9)
    # the panel's first window: the whole run as bins, with the slowest tasks for its table
    first = await doc.call("pypto/swimlane", kernel="big", maxBoxes=1000, bins=300, slowest=200)
    assert first["detail"] == "bins" and first["windowTasks"] == first["totalTasks"] == 1024 and first["bins"]
    longest = sorted(whole["boxes"], key=lambda b: (b["start"] - b["end"], b["task"]))[:200]
    assert first["slowest"] == [{**b, "profile": -1} for b in longest]  # (a profile only with the window's boxes)
    assert (await doc.call("pypto/swimlane", kernel="big", maxBoxes=5))["slowest"] == []
    with pytest.raises(JsonRpcInvalidParams, match="slowest"):
        await doc.call("pypto/swimlane", kernel="big", slowest=-1)
    # a window answers from the compile it names (the panel drops one of another record than the one it shows)
    assert first["version"] == whole["version"] == got["version"] and first["uri"] == doc.uri
    # a window of boxes carries what a whole run draws: each task's predecessors (arrows), its pipe profile
    # (sub-lanes: the window's own, renumbered) and the ready counters in the window (scheduler bubbles)
    by_id = {b["task"]: b for b in whole["boxes"]}
    lo, hi = sorted(b["start"] for b in whole["boxes"])[100], sorted(b["start"] for b in whole["boxes"])[160]
    win = await doc.call("pypto/swimlane", kernel="big", start=lo, end=hi, maxBoxes=5000)
    assert win["detail"] == "boxes" and win["boxes"] and win["profiles"]
    assert all(b["preds"] == by_id[b["task"]]["preds"] for b in win["boxes"])
    assert sorted({b["profile"] for b in win["boxes"]}) == list(range(len(win["profiles"])))
    assert len(win["profiles"]) <= len(win["boxes"])
    assert all(set(p) <= {"MTE2", "MTE1", "M", "V", "FIX", "MTE3", "S"} for p in win["profiles"])
    assert all(k.startswith("ReadyCount") for k in win["counters"])
    assert all(p[0] <= hi for pts in win["counters"].values() for p in pts)
    assert first["profiles"] == [] and first["counters"] == {}  # bins: neither
    # where the tasks a search found are (`match`: id ranges), over the whole run, counted per bin
    ranges = [[10, 19], [500, 500]]
    found = await doc.call("pypto/swimlane", kernel="big", maxBoxes=5, bins=50, match=ranges)
    want = [b for b in whole["boxes"] if 10 <= b["task"] <= 19 or b["task"] == 500]
    assert found["matched"] == found["matchedInWindow"] == 11
    assert found["firstMatch"]["task"] == min(want, key=lambda b: (b["start"], b["task"]))["task"]
    assert sum(b["tasks"] for b in found["matchBins"]) >= 11 and {b["lane"] for b in found["matchBins"]} == \
        {b["lane"] for b in want}
    narrow = await doc.call("pypto/swimlane", kernel="big", start=lo, end=hi, match=[[0, 1023]])
    assert narrow["matched"] == 1024 and narrow["matchedInWindow"] == narrow["windowTasks"] and not narrow["matchBins"]
    with pytest.raises(JsonRpcInvalidParams, match="match"):
        await doc.call("pypto/swimlane", kernel="big", match=[[0, 1]] * 10_001)
    # the pinned baseline and a compile of the history come by their figures only (above 5,000 tasks: here a
    # smaller limit would be needed, so the server's own helper is checked on this run)
    from server.panel_data import panel_run
    fig = panel_run({"lanes": [], "metrics": {"makespan_us": 1.0}, "tasks": {"id": [0, 1]}, "pipe_profiles": [{}]}, 1)
    assert fig == {"lanes": [], "metrics": {"makespan_us": 1.0}, "omitted": {"tasks": 2, "pipe_profiles": 1,
                                                                             "counters": 0}}
    # what was left out, for the tile a panel shows (pypto/tileOps)
    ops = await doc.call("pypto/tileOps", kernel="big", ops=[7, 0, n - 1])
    assert ops["ops"] == [7, 0, n - 1] and ops["version"] == got["version"] and ops["id"] == [7, 0, n - 1]
    assert ops["shape"][1] == [1, 4, 1, 64] and ops["dtype"] == ["fp32"] * 3 and all(ops["memory"])
    assert ops["op"][1] == "load" and all(0 <= s < len(rec["subgraphs"]) for s in ops["subgraph"])
    with pytest.raises(JsonRpcInvalidParams, match=f"no tile op {n} "):
        await doc.call("pypto/tileOps", kernel="big", ops=[n])
    with pytest.raises(JsonRpcInvalidParams, match="at most 4096"):
        await doc.call("pypto/tileOps", kernel="big", ops=[0] * 4097)
    # the Tiles view's grids (pypto/tileGrids): per tensor node its size and each cell's subgraph, run-length encoded
    grids = await doc.call("pypto/tileGrids", kernel="big")
    assert grids["tileOps"] == n and {g["node"] for g in grids["grids"]} == tile_nodes
    cells_of = {}
    for g in grids["grids"]:
        runs = g["subgraph"]
        cells = [v for v, k in zip(runs[::2], runs[1::2], strict=True) for _ in range(k)]
        assert len(cells) == g["rows"] * g["cols"] == len(g["rowKeys"]) * g["cols"]
        assert g["tiles"] == sum(c != -2 for c in cells)
        assert all(-1 <= c < len(rec["subgraphs"]) for c in cells if c != -2)
        cells_of[g["node"]] = cells
    # a cell's ops (pypto/tileOps by node and cell): the tile the panel shows on a click, coloured by its subgraph
    exp = next(g for g in grids["grids"] if g["rows"] > 1)
    cell = await doc.call("pypto/tileOps", kernel="big", node=exp["node"], cell=exp["cols"] + 1)
    assert cell["node"] == exp["node"] and cell["cell"] == exp["cols"] + 1 and cell["ops"]
    rep = next((k for k, op in enumerate(cell["op"]) if op not in ("load", "store")), 0)
    assert cell["subgraph"][rep] == cells_of[exp["node"]][exp["cols"] + 1]
    assert len(cell["shape"]) == len(cell["dtype"]) == len(cell["memory"]) == len(cell["ops"])
    with pytest.raises(JsonRpcInvalidParams, match="no cell"):
        await doc.call("pypto/tileOps", kernel="big", node=exp["node"], cell=exp["rows"] * exp["cols"])
    with pytest.raises(JsonRpcInvalidParams, match="not both"):
        await doc.call("pypto/tileOps", kernel="big", ops=[1], node=exp["node"], cell=0)
    # a leaf's block (pypto/block): the Leaves view's listing links, each instruction to its tensor node
    leaf = rec["leaves"][0]
    block = await doc.call("pypto/block", kernel="big", leaf=leaf["id"])
    assert block["leaf"] == leaf["id"] and block["core"] == leaf["core"] and block["instrs"]
    assert {i["node"] for i in block["instrs"] if i["tileOp"] >= 0} <= tile_nodes
    assert len(block["instrs"]) == sum(1 for line in got["listings"][leaf["id"]].splitlines()
                                       if line[:6].strip().isdigit())
    with pytest.raises(JsonRpcInvalidParams, match="no block of leaf 99"):
        await doc.call("pypto/block", kernel="big", leaf=99)
    size = len(json.dumps(got, separators=(",", ":")))
    assert size < 8 * n, f"{size} bytes for {n} tile ops"  # the whole record: 4.4 MB, 125 bytes per tile op


async def test_a_window_carries_dependencies_and_a_selected_tasks_cone(client, lsp_kit, tmp_path):
    """What the swimlane panel draws arrows from in a run it draws by windows: each box's predecessors, and
    (`around`, `depth`) a selected task's predecessors and successors wherever they are."""
    from support import EXAMPLES
    doc = lsp_kit.Doc(client, tmp_path / "attention.py", (EXAMPLES / "attention.py").read_text())
    await client.records.record(doc.uri, "attention_kernel", 1)
    whole = await doc.call("pypto/swimlane", kernel="attention_kernel", maxBoxes=20_000)
    by_id = {b["task"]: b for b in whole["boxes"]}
    assert any(b["preds"] for b in whole["boxes"]) and all(p in by_id for b in whole["boxes"] for p in b["preds"])
    mid = next(b["task"] for b in whole["boxes"] if b["preds"] and any(b["task"] in x["preds"] for x in whole["boxes"]))
    lo, hi = by_id[mid]["start"], by_id[mid]["end"]
    cone = await doc.call("pypto/swimlane", kernel="attention_kernel", start=lo, end=hi, maxBoxes=0, around=mid,
                          depth=1)
    linked = [b["task"] for b in cone["linked"]]
    one = {mid} | set(by_id[mid]["preds"]) | {b["task"] for b in whole["boxes"] if mid in b["preds"]}
    assert cone["detail"] == "bins" and linked[0] == mid and set(linked) == one
    assert all(b == {**by_id[b["task"]], "profile": -1} for b in cone["linked"])
    deeper = await doc.call("pypto/swimlane", kernel="attention_kernel", maxBoxes=0, around=mid, depth=5)
    assert set(linked) <= {b["task"] for b in deeper["linked"]}
    alone = await doc.call("pypto/swimlane", kernel="attention_kernel", maxBoxes=0, around=mid, depth=0)
    assert [b["task"] for b in alone["linked"]] == [mid]
    assert (await doc.call("pypto/swimlane", kernel="attention_kernel", maxBoxes=0))["linked"] == []


async def test_a_long_run_kept_as_arrays_answers_as_its_lists(client, lsp_kit, tmp_path):
    """The server keeps a long run's lists of lists — predecessors, coordinates, counter points — as arrays
    (`server.analyze.editor_run`, `pypto.ir.columns.ArrayLists`): the swimlane's boxes, the dependency cone and the
    history's copy of the run (written from those arrays) are the record's lists."""
    from support import EXAMPLES
    text = (EXAMPLES / "attention.py").read_text()
    text = text.replace(": fp16[8, ", ": fp16[16, ").replace(": fp32[8, ", ": fp32[16, ")  # 96 tasks
    doc = lsp_kit.Doc(client, tmp_path / "heads.py", text)
    first = await client.records.record(doc.uri, "attention_kernel", 1)
    assert first["summary"]["tasks"] >= 64  # the run's lists are columns (pypto.ir.columns.MIN_ROWS)
    run = (await doc.call("pypto/record", kernel="attention_kernel"))["record"]["run"]
    preds = run["tasks"]["preds"]
    assert sum(map(len, preds)) > 64
    sl = await doc.call("pypto/swimlane", kernel="attention_kernel", maxBoxes=20_000)
    assert sorted((b["task"], b["preds"]) for b in sl["boxes"]) == [(k, p) for k, p in enumerate(preds)]
    assert sl["counters"] and all(points and all(p in run["counters"][name] for p in points)
                                  for name, points in sl["counters"].items())
    last = len(preds) - 1
    cone = await doc.call("pypto/swimlane", kernel="attention_kernel", maxBoxes=0, around=last, depth=1)
    assert {b["task"] for b in cone["linked"]} == {last, *preds[last]}
    await doc.call("pypto/pinBaseline", kernel="attention_kernel", pin=True)
    again = await doc.call("pypto/record", kernel="attention_kernel")
    assert again["baseline"]["run"] == run


async def test_a_big_kernel_compiled_before_the_panels_opened_gives_them_its_record_without_another_compile(
        client, lsp_kit, tmp_path):
    """From `server.analyze.BESIDE_FROM` tile ops a compile makes the panels' parts even when no panel is open (its
    record document is made beside its views): opening the panels then asks no job. Each job imports the module,
    which says so."""
    from support import softmax_source

    from server.analyze import BESIDE_FROM

    text = softmax_source(192, "wide").replace("import pypto\n", "import pypto\nprint('imported')\n", 1)
    doc = lsp_kit.Doc(client, tmp_path / "wide.py", text)
    await client.records.record(doc.uri, "wide", 1)
    jobs = sum("wide.py wide printed:" in m.message for m in client.log_messages)
    got = await doc.call("pypto/record", kernel="wide")
    assert got["record"]["aggregates"]["tile_ops"] >= BESIDE_FROM
    assert got["record"]["omitted"] and got["listings"] and got["record"]["traced"]["graph"]
    assert sum("wide.py wide printed:" in m.message for m in client.log_messages) == jobs, "no job for the panels"


async def test_pass_answers_each_pass_graph_and_the_traced_one(client, lsp_kit, tmp_path):
    doc = await opened(client, lsp_kit, tmp_path, "passes.py")
    rec = (await doc.call("pypto/record", kernel=K))["record"]
    first = rec["passes"][0]["index"]
    got = await doc.call("pypto/pass", kernel=K, index=first)
    assert got["index"] == first and got["snapshot"]["graph"]["nodes"]
    traced = await doc.call("pypto/pass", kernel=K, index=-1)
    assert traced["snapshot"]["graph"] == rec["traced"]["graph"]
    last = await doc.call("pypto/pass", kernel=K, index=rec["passes"][-1]["index"])
    ops = json.dumps(last["snapshot"]["graph"])
    assert '"exp"' in ops
    with pytest.raises(JsonRpcInvalidParams, match="no pass 999"):
        await doc.call("pypto/pass", kernel=K, index=999)
    with pytest.raises(JsonRpcInvalidParams):
        await doc.call("pypto/pass", kernel=K, index="first")


async def test_report_plain_then_with_the_advisor(client, lsp_kit, tmp_path):
    doc = await opened(client, lsp_kit, tmp_path, "report.py")
    plain = (await doc.call("pypto/report", kernel=K))["report"]
    assert plain["kernel"] == K and plain["file"] == str(doc.path) and plain["error"] is None
    assert plain["metrics"]["makespan_us"] > 0 and plain["clock"].startswith("simulated")
    assert plain["suggestions"] == [] and plain["health"]["findings"] is not None
    full = (await doc.call("pypto/report", kernel=K, suggest=True))["report"]
    assert full["suggestions"], "the advisor finds a faster tile shape for this kernel"
    best = full["suggestions"][0]
    assert best["makespan_after_us"] < best["makespan_before_us"] == pytest.approx(plain["metrics"]["makespan_us"])
    edit = best["edits"][0]
    assert edit["where"]["file"] == str(doc.path) and "set_vec_tile_shapes" in edit["text"]
    # while it searched, the best shape so far was streamed: the last update is the answer
    ups = [u for u in client.searches.items if u["uri"] == doc.uri and u["kernel"] == K]
    assert ups and [u["searched"] for u in ups] == sorted(u["searched"] for u in ups)
    last = ups[-1]
    assert last["bestUs"] == pytest.approx(best["makespan_after_us"]) and last["best"] == best["text"]
    assert last["baselineUs"] == pytest.approx(plain["metrics"]["makespan_us"]) and last["searched"] <= last["space"]
    assert edit["where"]["line"] == doc.line_of("set_vec_tile_shapes") + 1
    # the advisor ran once for this version: asking again is answered from the cache at once
    again = (await doc.call("pypto/report", kernel=K, suggest=True))["report"]
    assert again["suggestions"] == full["suggestions"]
    # both: one report with the suggestions, the precision diff, and every finding in its order
    both = (await doc.call("pypto/report", kernel=K, suggest=True, precision=True))["report"]
    assert both["suggestions"] == full["suggestions"] and both["precision"] is not None
    order = {"error": 0, "warning": 1, "info": 2}
    keys = [(order[f["severity"]], (f.get("where") or {}).get("line", 0)) for f in both["findings"]]
    assert keys == sorted(keys) and both["precision"]["passed"] is True


async def test_compile_now_and_compile_state_notifications(client, lsp_kit, tmp_path):
    doc = await opened(client, lsp_kit, tmp_path, "state.py")
    started = await client.states.wait(lambda s: s["uri"] == doc.uri and s["state"] == "started")
    assert started["kernels"] == [K] and started["version"] == 1 and started["documentKernels"] == [K]
    await client.states.wait(lambda s: s["uri"] == doc.uri and s["state"] == "finished" and s["version"] == 1)
    nothing = await doc.call("pypto/compile")
    assert nothing == {"uri": doc.uri, "version": 1, "kernels": []}, "nothing is stale: nothing compiled"
    final = [r for r in client.records.items if r["uri"] == doc.uri and not r.get("interim")]
    before = len(final)
    forced = await doc.call("pypto/compile", force=True)
    assert forced["kernels"] == [K]
    records = [r for r in client.records.items if r["uri"] == doc.uri and not r.get("interim")]
    assert len(records) == before + 1 and records[-1]["error"] is None, "the forced compile published its record"
    with pytest.raises(JsonRpcInvalidParams, match="not an open document"):
        await client.protocol.send_request_async("pypto/compile", {"uri": "file:///nowhere.py"})


async def test_load_trace_reads_merged_swimlane_and_refuses_other_json(client, lsp_kit, tmp_path):
    src = tmp_path / "k.py"
    src.write_text(lsp_kit.SOFTMAX)
    trace = tmp_path / "merged_swimlane.json"
    subprocess.run([sys.executable, "-m", "server.cli", "profile", str(src), "--trace", str(trace), "--format",
                    "merged"], check=True, capture_output=True)
    written = sorted(tmp_path.glob("*merged_swimlane*.json"))
    assert written, list(tmp_path.iterdir())
    got = plain(await client.protocol.send_request_async("pypto/loadTrace", {"path": str(written[0])}))
    assert got["path"] == str(written[0]) and got["label"] == written[0].name
    run = got["run"]
    assert run["lanes"] and len(run["tasks"]["id"]) > 0 and got["format"] == run["board"]
    bad = tmp_path / "package.json"
    bad.write_text('{"name": "not a trace"}')
    with pytest.raises(JsonRpcException, match="package.json: not a swimlane format"):
        await client.protocol.send_request_async("pypto/loadTrace", {"path": str(bad)})
    with pytest.raises(JsonRpcException, match="nothing.json"):
        await client.protocol.send_request_async("pypto/loadTrace", {"path": str(tmp_path / "nothing.json")})
