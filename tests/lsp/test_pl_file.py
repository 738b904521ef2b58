"""A PyPTO 3 file (`import pypto.language as pl`, a `@pl.jit` kernel) in the language server, over stdio:
its record, diagnostics, hover, CodeLens, inlay hints, graph, swimlane and the links between source
and nodes/tasks work as for a CANN kernel; editing a slice-size constant re-profiles the kernel in
place; the advisor's value for a poor constant is a quick fix on the constant's line, checked on the
sim board, and applying it gives the makespan it predicted. The kernels are our own, written here."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "tileSearchBudget": 8}
K = "scale_rows"

SRC = '''"""Scaled exponentials, a slice of rows per scope instance."""
import pypto.language as pl

ROWS = 256
COLS = 128
ROW_TILE = 32


@pl.jit
def scale_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], s: pl.Scalar[pl.FP32],
               y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, ROW_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            t = x[r:r + ROW_TILE, :]
            y[r:r + ROW_TILE, :] = pl.exp(pl.mul(t, s))
    return y
'''


async def test_a_pl_kernel_gets_its_record_figures_and_links(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "pl_kernel.py", SRC)
    r = await client.records.record(doc.uri, K, 1)
    assert r["error"] is None and r["range"]["start"]["line"] == doc.line_of("def scale_rows")
    s = r["summary"]
    assert s["board"] == "sim" and s["tasks"] == 256 // 32 and s["makespanUs"] > 0 and s["tileOps"] == 4 * 8
    # findings are diagnostics of the file (no tile call: at the kernel)
    assert doc.diagnostics() and all(d.source == "pypto" for d in doc.diagnostics())
    # hover on the op line: its ops, the slice as the tile, the tasks
    op_line = doc.line_of("pl.exp(pl.mul(t, s))")
    text = await doc.hover(op_line)
    assert text is not None and "`scale_rows`" in text and "`mul`" in text and "`exp`" in text
    assert "[32, 128]" in text and "8 tasks" in text
    # the kernel's lenses, above its decorator
    lenses = await doc.lenses()
    above = {x.command.command for x in lenses if x.command and x.range.start.line == doc.line_of("@pl.jit")}
    assert above == {"pypto.openReport", "pypto.openGraph", "pypto.openSwimlane"}
    hints = await doc.hints()
    assert any(h.position.line == op_line and "fp32[256, 128]" in str(h.label) for h in hints)
    # graph: the ops carry the scope's label and point at their lines
    g = await doc.call("pypto/graph", kernel=K)
    (mul,) = [n for n in g["nodes"] if n["op"] == "mul"]
    assert mul["range"]["start"]["line"] == op_line
    (loop,) = [n for n in g["nodes"] if n["kind"] == "group"]
    assert loop["range"]["start"]["line"] == doc.line_of("pl.parallel(0, ROWS, ROW_TILE)")
    # swimlane: one AIV task per scope instance
    sl = await doc.call("pypto/swimlane", kernel=K)
    assert sl["totalTasks"] == 8 and len(sl["boxes"]) == 8
    # click-to-source both ways
    at = await doc.call("pypto/nodesAt", position={"line": op_line, "character": 12})
    (k,) = at["kernels"]
    assert k["kernel"] == K and {n["op"] for n in k["nodes"]} >= {"mul", "exp"} and k["tasks"] == [[0, 7]]
    src = await doc.call("pypto/sourceOf", kernel=K, task=3)
    assert {loc["range"]["start"]["line"] for loc in src["locations"]} == {op_line}
    mul_id = next(n["id"] for n in k["nodes"] if n["op"] == "mul")
    node = await doc.call("pypto/sourceOf", kernel=K, node=mul_id)
    assert node["locations"][0]["range"]["start"]["line"] == op_line


async def test_editing_a_slice_constant_re_profiles_in_place(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "pl_edit.py", SRC)
    before = await client.records.record(doc.uri, K, 1)
    v = doc.replace("ROW_TILE = 32", "ROW_TILE = 64")  # not saved: the editor's text is compiled
    after = await client.records.record(doc.uri, K, v)
    assert before["summary"]["tasks"] == 8 and after["summary"]["tasks"] == 4
    assert after["summary"]["makespanUs"] != before["summary"]["makespanUs"]
    sl = await doc.call("pypto/swimlane", kernel=K)
    assert sl["version"] == v and sl["totalTasks"] == 4


async def test_a_pl_error_is_at_the_users_line(client, lsp_kit, tmp_path):
    bad = SRC.replace("pl.exp(pl.mul(t, s))", "pl.row_expand_mul(t, t[0:1, :])")
    doc = lsp_kit.Doc(client, tmp_path / "pl_bad.py", bad)
    r = await client.records.record(doc.uri, K, 1)
    assert r["error"] is not None and "[rows, 1] column" in r["error"]["message"]
    assert r["error"]["range"]["start"]["line"] == doc.line_of("pl.row_expand_mul")


async def test_the_advisors_value_for_a_poor_constant_is_a_quick_fix_that_gives_its_figure(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "pl_poor.py", SRC.replace("ROW_TILE = 32", "ROW_TILE = 4"))
    before = await client.records.record(doc.uri, K, 1)
    line = doc.line_of("ROW_TILE = 4")
    await doc.actions(line)  # starts the search
    found = await doc.call("pypto/suggestions", kernel=K)
    best = found["suggestions"][0]
    assert best["text"].startswith("ROW_TILE = ") and best["speedup"] > 1.5
    assert best["makespanBeforeUs"] == pytest.approx(before["summary"]["makespanUs"], rel=1e-9)
    new_value = best["text"].removeprefix("ROW_TILE = ")
    fixes = [a for a in await doc.actions(line) if a.title.startswith("pypto: ROW_TILE = ")]
    assert fixes and fixes[0].is_preferred and "faster" in fixes[0].title
    assert fixes[0].edit is not None and fixes[0].edit.changes is not None
    (edit,) = fixes[0].edit.changes[doc.uri]
    assert edit.range.start.line == line and edit.new_text == new_value
    assert not [a for a in await doc.actions(doc.line_of("COLS = 128")) if a.title.startswith("pypto: ")]
    v = doc.apply(fixes[0].edit)
    assert best["text"] in doc.text
    after = await client.records.record(doc.uri, K, v)
    assert after["summary"]["makespanUs"] == pytest.approx(best["makespanAfterUs"], rel=1e-9)
    assert after["summary"]["tasks"] < before["summary"]["tasks"]


async def test_the_constants_line_says_what_it_slices(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "pl_lens.py", SRC)
    await client.records.record(doc.uri, K, 1)
    lenses = [x for x in await doc.lenses() if x.range.start.line == doc.line_of("ROW_TILE = 32")]
    (lens,) = lenses
    assert lens.command is not None and lens.command.command == "pypto.openSwimlane"
    assert "ROW_TILE" in lens.command.title and "8 steps of 256" in lens.command.title
    assert "8 tasks" in lens.command.title

