"""The pypto/* requests (docs/protocol.md) through a real client: graphs whole, aggregated and
drilled into, swimlane windows and levels of detail, reports, the source <-> node/task links, and
malformed requests answered with LSP errors while the server keeps serving."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

K = "softmax_kernel"


async def opened(client, lsp_kit, tmp_path, name: str = "softmax.py"):
    doc, record = await lsp_kit.open_softmax(client, tmp_path, name)
    return doc, record


async def test_graph_whole_after_any_pass_aggregated_and_drilled_into(client, lsp_kit, tmp_path):
    doc, _ = await opened(client, lsp_kit, tmp_path)
    g = await doc.call("pypto/graph", kernel=K)
    assert g["kernel"] == K and g["version"] == 1 and g["level"] == "tensor" and not g["aggregated"]
    assert g["afterPass"]["name"] == g["passes"][-1]["name"] == "execute_graph"
    nodes = {n["id"]: n for n in g["nodes"]}
    (loop,) = [n for n in g["nodes"] if n["kind"] == "group"]
    assert loop["op"] == "loop" and "LOOP_b" in loop["label"] and loop["count"] >= 6
    (exp,) = [n for n in g["nodes"] if n["op"] == "exp"]
    assert exp["parent"] == loop["id"] and exp["shape"] == [1, 32, 1, 256] and exp["dtype"] == "fp32"
    assert exp["range"]["start"]["line"] == doc.line_of("e = pypto.exp(v - m)")
    (sub,) = [n for n in g["nodes"] if n["op"] == "sub"]
    assert {"source": sub["id"], "target": exp["id"], "count": 1} in g["edges"]
    assert all(e["source"] in nodes and e["target"] in nodes for e in g["edges"])
    assert g["totalNodes"] == len([n for n in g["nodes"] if n["kind"] == "node"])
    # after a named pass, and by index
    first = await doc.call("pypto/graph", kernel=K, afterPass="verify")
    assert first["afterPass"]["index"] == 0 and first["totalNodes"] == g["totalNodes"]
    assert (await doc.call("pypto/graph", kernel=K, afterPass=0))["afterPass"]["name"] == "verify"
    # a big graph (here: more than 4 nodes) is aggregated: the loop body collapses into its group
    agg = await doc.call("pypto/graph", kernel=K, maxNodes=4)
    assert agg["aggregated"] and agg["totalNodes"] == g["totalNodes"]
    ids = {n["id"] for n in agg["nodes"]}
    assert loop["id"] in ids and exp["id"] not in ids
    assert all(e["source"] in ids and e["target"] in ids and e["source"] != e["target"] for e in agg["edges"])
    drill = await doc.call("pypto/graph", kernel=K, maxNodes=4, expand=[loop["id"]])
    assert exp["id"] in {n["id"] for n in drill["nodes"]}


async def test_the_tile_graph_is_grouped_by_tensor_node_with_drill_down(client, lsp_kit, tmp_path):
    doc, record = await opened(client, lsp_kit, tmp_path)
    tg = await doc.call("pypto/graph", kernel=K, level="tile", maxNodes=100)
    assert tg["level"] == "tile" and tg["aggregated"] and tg["totalNodes"] == record["summary"]["tileOps"]
    groups = {n["id"]: n for n in tg["nodes"]}
    assert all(n["kind"] == "group" for n in tg["nodes"])
    (exp,) = [n for n in tg["nodes"] if n["op"] == "exp"]
    assert exp["count"] == 4 * 32  # 4 batches x (32 x 256) / (4 x 64)
    assert any(e["target"] == exp["id"] for e in tg["edges"])
    drill = await doc.call("pypto/graph", kernel=K, level="tile", maxNodes=100, expand=[exp["id"]])
    tiles = [n for n in drill["nodes"] if n["parent"] == exp["id"]]
    assert len(tiles) == 100 and all(n["op"] == "exp" and n["shape"] == [1, 4, 1, 64] for n in tiles)
    # the drilled group stays as the tiles' container; the other groups stay collapsed
    assert set(groups) <= {n["id"] for n in drill["nodes"]}
    assert all(e["source"] != e["target"] for e in drill["edges"])


async def test_swimlane_whole_windowed_and_binned(client, lsp_kit, tmp_path):
    doc, record = await opened(client, lsp_kit, tmp_path)
    sl = await doc.call("pypto/swimlane", kernel=K)
    assert sl["detail"] == "boxes" and sl["totalTasks"] == sl["windowTasks"] == record["summary"]["tasks"]
    assert sl["clock"].startswith("simulated") and sl["board"] == "sim"
    assert sl["makespanUs"] == pytest.approx(record["summary"]["makespanUs"], rel=1e-6)
    assert len(sl["boxes"]) == sl["totalTasks"] and all(b["end"] > b["start"] for b in sl["boxes"])
    assert {b["lane"] for b in sl["boxes"]} <= set(range(len(sl["lanes"])))
    # a window: the boxes overlapping it
    starts = sorted(b["start"] for b in sl["boxes"])
    lo, hi = starts[0], starts[4]
    window = await doc.call("pypto/swimlane", kernel=K, start=lo, end=hi)
    want = {b["task"] for b in sl["boxes"] if b["start"] < hi and b["end"] > lo}
    assert {b["task"] for b in window["boxes"]} == want and window["windowTasks"] == len(want) < sl["totalTasks"]
    coarse = await doc.call("pypto/swimlane", kernel=K, maxBoxes=5, bins=10)
    assert coarse["detail"] == "bins" and not coarse["boxes"] and coarse["bins"]
    assert all(0 < b["busy"] <= 1 and b["tasks"] >= 1 for b in coarse["bins"])
    assert sum(b["busy"] * (b["end"] - b["start"]) for b in coarse["bins"]) == pytest.approx(
        sum(b["end"] - b["start"] for b in sl["boxes"]), rel=1e-6)


async def test_health_and_precision_reports(client, lsp_kit, tmp_path):
    doc, _ = await opened(client, lsp_kit, tmp_path)
    h = await doc.call("pypto/health", kernel=K)
    assert h["findings"] and {"tensor", "tile", "execute", "block", "board"} <= set(h["stats"])
    rules = {f["rule"]: f for f in h["findings"]}
    assert rules["board.bound"]["range"]["start"]["line"] == doc.line_of("set_vec_tile_shapes")
    codes = {d.code for d in doc.diagnostics()}
    assert set(rules) <= codes  # the same findings as the diagnostics
    p = await doc.call("pypto/precision", kernel=K)  # not in the settings: computed on request
    assert p["passed"] is True and p["failures"] == [] and p["report"]["kernel"] == K
    assert p["report"]["passes"]


async def test_nodes_at_and_source_of_link_lines_nodes_and_tasks(client, lsp_kit, tmp_path):
    doc, record = await opened(client, lsp_kit, tmp_path)
    line = doc.line_of("e = pypto.exp(v - m)")
    at = await doc.call("pypto/nodesAt", position={"line": line, "character": 8})
    (k,) = at["kernels"]
    assert k["kernel"] == K and {n["op"] for n in k["nodes"]} == {"sub", "exp"}
    assert k["taskCount"] == record["summary"]["tasks"] and k["tasks"] == [[0, k["taskCount"] - 1]]
    assert all(n["tiles"] == 128 and n["tileShape"] == [1, 4, 1, 64] for n in k["nodes"])
    assert (await doc.call("pypto/nodesAt", position={"line": 0, "character": 0}))["kernels"] == []
    task = await doc.call("pypto/sourceOf", kernel=K, task=0)
    lines = {loc["range"]["start"]["line"] for loc in task["locations"]}
    assert {doc.line_of("pypto.amax"), line, doc.line_of("out[i:, ...]")} <= lines
    assert all(loc["uri"] == doc.uri for loc in task["locations"])
    exp_id = next(n["id"] for n in k["nodes"] if n["op"] == "exp")
    node = await doc.call("pypto/sourceOf", kernel=K, node=exp_id)
    assert node["nodes"] == [exp_id] and node["locations"][0]["range"]["start"]["line"] == line


@pytest.mark.parametrize(("method", "params", "says"), [
    ("pypto/graph", {"kernel": K, "maxNodes": "many"}, "max_nodes"),
    ("pypto/graph", {"kernel": K, "level": "atoms"}, "level"),
    ("pypto/graph", {"kernel": K, "afterPass": "no_such_pass"}, "no pass"),
    ("pypto/graph", {"kernel": K, "expand": ["g:nothing"]}, "no group"),
    ("pypto/graph", {"kernel": "nope"}, "no kernel"),
    ("pypto/graph", {"kernel": 3}, "kernel"),
    ("pypto/swimlane", {"kernel": K, "start": 5.0, "end": 1.0}, "before"),
    ("pypto/swimlane", {"kernel": K, "bins": 0}, "bins"),
    ("pypto/sourceOf", {"kernel": K}, "exactly one"),
    ("pypto/sourceOf", {"kernel": K, "task": 10**6}, "no task"),
    ("pypto/sourceOf", {"kernel": K, "node": 10**6}, "no node"),
    ("pypto/nodesAt", {"position": {"line": "x", "character": 0}}, "line"),
    ("pypto/health", {}, "kernel"),
])
async def test_malformed_requests_get_invalid_params_and_the_server_keeps_serving(
        client, lsp_kit, tmp_path, method, params, says):
    doc, _ = await opened(client, lsp_kit, tmp_path, "malformed.py")
    with pytest.raises(JsonRpcInvalidParams) as e:
        await doc.call(method, **params)
    assert says in e.value.message
    assert (await doc.call("pypto/health", kernel=K))["kernel"] == K  # still serving


async def test_requests_that_are_not_objects_or_not_about_an_open_document(client, lsp_kit, tmp_path):
    doc, _ = await opened(client, lsp_kit, tmp_path, "other.py")
    for params in ([1, 2], "text", None, {"uri": "file:///not/open.py", "kernel": K}, {"kernel": K}):
        with pytest.raises(JsonRpcInvalidParams):
            await client.protocol.send_request_async("pypto/graph", params)
    with pytest.raises(JsonRpcMethodNotFound):
        await client.protocol.send_request_async("pypto/nothing", {"uri": doc.uri})
    # a kernel with no record is a request failure that says why
    v = doc.replace("set_vec_tile_shapes(1, 4, 1, 64)", "set_vec_tile_shapes(1, 4, 1, 0)")
    await client.records.record(doc.uri, K, v)
    with pytest.raises(JsonRpcException) as e:
        await doc.call("pypto/swimlane", kernel=K)
    assert e.value.code == -32803 and "no record" in e.value.message
    assert await doc.hover(doc.line_of("import pypto")) is None  # alive
    assert client.error is None


async def test_requests_wait_for_a_compile_in_flight(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "early.py", lsp_kit.SOFTMAX)
    h = await doc.call("pypto/health", kernel=K)  # sent before the first record arrived
    assert h["version"] == 1 and h["findings"]
    await client.records.record(doc.uri, K, 1)
    lenses = await doc.lenses()
    assert lenses and lenses[0].command is not None and "µs" in lenses[0].command.title
