"""The record before the checked advice, over stdio: a kernel whose health findings propose a tile shape
gets its record, graph and swimlane first (`recordChanged` with `interim: true`: the proposing finding
says its shape is being simulated, and offers no shape and no fix), then the same version's final
`recordChanged` with the advice the sim board checked (docs/protocol.md, "Interim, then final")."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

# 1000 columns in tiles of 384: a tail the health rule proposes to fix with 200 (the board finds it faster)
TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


def _tail_diags(published: list[lsp.PublishDiagnosticsParams], uri: str) -> list[list[lsp.Diagnostic]]:
    return [[d for d in p.diagnostics if d.code == "tile.tail-waste"] for p in published if p.uri == uri]


async def test_the_record_comes_before_its_checked_advice_and_the_panels_need_not_wait(client, lsp_kit, tmp_path):
    n_published = len(client.published.items)
    doc = lsp_kit.Doc(client, tmp_path / "tail.py", TAIL)
    first = await client.records.record(doc.uri, "tail_vec", 1, interim=True)
    assert first["error"] is None and first["summary"]["tasks"] > 0
    # the panels' data is answered from the interim result: the same record the final one has
    lane = await doc.call("pypto/swimlane", kernel="tail_vec")
    assert lane["version"] == 1 and lane["totalTasks"] == first["summary"]["tasks"]
    final = await client.records.record(doc.uri, "tail_vec", 1)
    assert final["interim"] is False and final["summary"] == first["summary"]
    await client.states.wait(lambda s: s["uri"] == doc.uri and s["state"] == "finished" and s["version"] == 1)
    assert [r["interim"] for r in client.records.items if r["uri"] == doc.uri] == [True, False]
    assert first["seconds"] < final["seconds"], "the interim record was sent before the board checked the advice"
    shown = _tail_diags(client.published.items[n_published:], doc.uri)
    held = [ds for ds in shown if ds and "being simulated" in ds[0].message]
    checked = [ds for ds in shown if ds and "x faster" in ds[0].message]
    assert held and checked and shown.index(held[0]) < shown.index(checked[0])
    assert "16, 200" not in held[0][0].message, "no unchecked shape is shown"
    assert shown[-1] == checked[-1], "the checked advice is what stays"
    # a quick fix asked for at any time is the checked one
    actions = await doc.actions(doc.line_of("set_vec_tile_shapes(16, 384)"))
    (fix,) = [a for a in actions if a.title.startswith("pypto (tile.tail-waste)")]
    assert fix.edit is not None and fix.edit.changes is not None
    assert fix.edit.changes[doc.uri][0].new_text == "pypto.set_vec_tile_shapes(16, 200)"

