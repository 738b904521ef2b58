"""Data requests are bounded and never block the server; malformed LSP params get an error reply.

- pypto/swimlane clamps `bins` and `maxBoxes` to MAX_BINS / MAX_BOXES (and says what it used), its
  bins agree with the boxes they summarize, a non-finite window is InvalidParams;
- pypto/pass pages a graph by `offset` / `maxNodes`: the pages put together are the whole graph;
- the answers are made off the event loop: a hover sent while a maximal swimlane is being made is
  answered first (an order of events, no sleeps);
- an inlayHint or hover whose positions lsprotocol refuses (line -5, 2**40) is answered with
  InvalidParams naming the field, and the server goes on answering.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter, defaultdict

import attrs
import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from support import softmax_source

from server.protocol import MAX_BINS, MAX_BOXES, MAX_NODES

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "logLevel": "debug"}
K = "big"

# the softmax of conftest over 64 batches: 512 tasks on 72 lanes (a maximal swimlane is ~36k bins)
BIG = softmax_source(64, K)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def big(client, lsp_kit, tmp_path_factory):
    doc = lsp_kit.Doc(client, tmp_path_factory.mktemp("bounds") / "big.py", BIG)
    record = await client.records.record(doc.uri, K, 1)
    assert record["error"] is None and record["summary"]["tasks"] == 512
    return doc


async def test_swimlane_bins_and_boxes_are_clamped_to_the_documented_maxima(big):
    sl = await big.call("pypto/swimlane", kernel=K, bins=2**40, maxBoxes=2**40)
    assert (sl["binCount"], sl["maxBoxes"]) == (MAX_BINS, MAX_BOXES)
    assert sl["detail"] == "boxes" and len(sl["boxes"]) == sl["totalTasks"] == 512
    binned = await big.call("pypto/swimlane", kernel=K, bins=3_000_000, maxBoxes=0)
    assert binned["detail"] == "bins" and binned["binCount"] == MAX_BINS and binned["maxBoxes"] == 0
    per_lane = Counter(b["lane"] for b in binned["bins"])
    assert max(per_lane.values()) <= MAX_BINS
    # the bins summarize the boxes: tasks overlapping each bin and the time they ran in it
    width = (binned["end"] - binned["start"]) / MAX_BINS
    want_tasks: Counter[tuple[int, int]] = Counter()
    want_busy: defaultdict[tuple[int, int], float] = defaultdict(float)
    for box in sl["boxes"]:
        for i in range(MAX_BINS):
            lo, hi = binned["start"] + i * width, binned["start"] + (i + 1) * width
            overlap = min(box["end"], hi) - max(box["start"], lo)
            if overlap > 1e-9 * width:
                want_tasks[(box["lane"], i)] += 1
                want_busy[(box["lane"], i)] += overlap
    got = {(b["lane"], round((b["start"] - binned["start"]) / width)): b for b in binned["bins"]}
    assert {k for k, b in got.items() if b["busy"] > 1e-6} == set(want_tasks)
    for key, n in want_tasks.items():
        assert got[key]["tasks"] == n
        assert got[key]["busy"] == pytest.approx(min(1.0, want_busy[key] / width), abs=1e-6)


async def test_a_non_finite_window_is_invalid_params(big):
    with pytest.raises(JsonRpcInvalidParams, match="finite"):
        await big.call("pypto/swimlane", kernel=K, start=math.nan)
    with pytest.raises(JsonRpcInvalidParams, match="finite"):
        await big.call("pypto/swimlane", kernel=K, end=math.inf)


async def test_graph_max_nodes_is_clamped(big):
    whole = await big.call("pypto/graph", kernel=K, maxNodes=2**40)
    assert not whole["aggregated"] and whole["totalNodes"] < MAX_NODES


async def test_pass_graphs_come_in_pages_that_make_the_whole_graph(big):
    whole = await big.call("pypto/pass", kernel=K, index=-1)
    nodes = whole["snapshot"]["graph"]["nodes"]
    assert whole["offset"] == 0 and whole["nextOffset"] is None and whole["totalNodes"] == len(nodes) > 3
    pages, offset = [], 0
    while offset is not None:
        page = await big.call("pypto/pass", kernel=K, index=-1, offset=offset, maxNodes=2)
        assert page["offset"] == offset and page["totalNodes"] == len(nodes)
        pages += page["snapshot"]["graph"]["nodes"]
        offset = page["nextOffset"]
    assert pages == nodes
    with pytest.raises(JsonRpcInvalidParams, match="past"):
        await big.call("pypto/pass", kernel=K, index=-1, offset=len(nodes) + 1)


async def test_a_hover_is_answered_while_a_maximal_swimlane_is_made(client, big):
    order: list[str] = []
    swimlane = asyncio.ensure_future(big.call("pypto/swimlane", kernel=K, bins=MAX_BINS, maxBoxes=0))
    swimlane.add_done_callback(lambda _: order.append("swimlane"))
    # the server has handed the swimlane to a thread (it logs so as it does)
    await client.logs.wait(lambda m: m.message.startswith("pypto/swimlane for big") and "off the event loop"
                           in m.message)
    text = await big.hover(big.line_of("e = pypto.exp(v - m)"))
    order.append("hover")
    assert text is not None and "`exp`" in text
    sl = await swimlane
    assert order == ["hover", "swimlane"]
    assert sl["detail"] == "bins" and len(sl["bins"]) > 10_000


async def test_out_of_range_positions_get_invalid_params_not_silence(client, big):
    doc_id = lsp.TextDocumentIdentifier(big.uri)
    with attrs.validators.disabled():  # lsprotocol's client side refuses to build these
        bad = [lsp.Range(lsp.Position(-5, 0), lsp.Position(1, 0)),
               lsp.Range(lsp.Position(0, 0), lsp.Position(2**40, 0))]
        hover_at = lsp.Position(0, -1)
    for rng in bad:  # an answer within the wait (silence fails the test instead of hanging it)
        with pytest.raises(JsonRpcInvalidParams, match=r"textDocument/inlayHint: Position\.line .*range"):
            await asyncio.wait_for(client.text_document_inlay_hint_async(lsp.InlayHintParams(doc_id, rng)), 30)
    with pytest.raises(JsonRpcInvalidParams, match=r"textDocument/hover: Position\.character"):
        await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(doc_id, hover_at)), 30)
    # and the server goes on answering
    assert await big.hints()
