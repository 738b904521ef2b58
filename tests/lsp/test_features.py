"""Editor features read off the records: hover, code lenses, inlay hints, and code actions whose
edits (the advisor's tile shapes, a health finding's fix) change the next record when applied."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types as lsp
from support import SCALE_EXP

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "tileSearchBudget": 6}

SRC = SCALE_EXP

TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


async def test_hover_on_an_op_line_shows_its_ops_tiles_tasks_and_the_bound(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "hover.py", SRC)
    r = await client.records.record(doc.uri, "scale_exp", 1)
    text = await doc.hover(doc.line_of("y = pypto.exp(x)"))
    assert text is not None
    assert "`scale_exp`" in text and "`exp`" in text and "`mul`" in text
    assert "fp32[64, 256]" in text and "[8, 64]" in text  # output shape and dtype, tile shape
    assert "| 32 |" in text  # 64x256 in 8x64 tiles
    assert "32 tasks" in text and "leaf 0" in text and "makespan" in text and "simulated" in text
    assert f"Bound: **{r['summary']['bound']}**" in text
    assert await doc.hover(doc.line_of("import pypto")) is None  # no op there
    # each fused line has its own cost: shares of the instruction cycles, two lines, one leaf
    shares = []
    for marker in ("y = pypto.exp(x)", "out[:] = y + x"):
        line_text = await doc.hover(doc.line_of(marker))
        assert line_text is not None and "the sim board's core model" in line_text
        m = re.search(r"Cost: \*\*(\d+)%\*\* of the program's instruction cycles — ", line_text)
        assert m, line_text
        shares.append(int(m.group(1)))
    assert 0 < shares[0] < 100 and 0 < shares[1] < 100 and 95 <= sum(shares) <= 101
    assert "`TEXP`" in text


async def test_code_lenses_sit_above_each_kernel_and_each_tile_shape_call(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "lens.py", SRC)
    r = await client.records.record(doc.uri, "scale_exp", 1)
    lenses = await doc.lenses()
    kernel_line = doc.line_of("@pypto.jit")
    above = [x for x in lenses if x.range.start.line == kernel_line]
    commands = {x.command.command for x in above if x.command}
    assert commands == {"pypto.openReport", "pypto.openGraph", "pypto.openSwimlane"}
    for x in above:
        assert x.command is not None and list(x.command.arguments) == [{"uri": doc.uri, "kernel": "scale_exp"}]
    (summary,) = [x.command.title for x in above if x.command and x.command.command == "pypto.openReport"]
    s = r["summary"]
    assert f"{s['makespanUs']:.2f} µs simulated" in summary and f"{s['tasks']} tasks" in summary
    assert f"{100 * s['utilization']:.0f}% utilized" in summary and "sim board" in summary
    (tiles,) = [x for x in lenses if x.range.start.line == doc.line_of("set_vec_tile_shapes")]
    assert tiles.command is not None and tiles.command.command == "pypto.openGraph"
    assert "128 tiles" in tiles.command.title  # exp, mul, add, assemble: 32 each
    assert "UB peak" in tiles.command.title and "KiB" in tiles.command.title
    assert tiles.command.arguments[0]["level"] == "tile"


async def test_the_kernels_lens_names_the_best_verified_gain_of_its_advice(client, lsp_kit, tmp_path):
    """The tail fix the sim board found faster is the kernel's best advice: its lens says by how much,
    simulated, on which board — the figure at the top of the health panel."""
    doc = lsp_kit.Doc(client, tmp_path / "gain.py", TAIL)
    await client.records.record(doc.uri, "tail_vec", 1)
    (tail,) = [d for d in doc.diagnostics() if d.code == "tile.tail-waste"]
    m = re.search(r"simulated on the sim board: [\d.,]+ µs against [\d.,]+ µs now \(([\d.]+)x faster\)", tail.message)
    assert m, tail.message
    lenses = await doc.lenses()
    (summary,) = [x.command.title for x in lenses if x.command and x.command.command == "pypto.openReport"]
    assert summary.endswith(f" · best advice {float(m.group(1)):.2f}× faster (simulated, sim board)"), summary


async def test_inlay_hints_give_each_op_line_its_shape_and_tile_count(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "hints.py", SRC)
    await client.records.record(doc.uri, "scale_exp", 1)
    hints = {h.position.line: h for h in await doc.hints()}
    line = doc.line_of("y = pypto.exp(x)")
    h = hints[line]
    # shape, tiles, and the line's heat: its share of the instruction cycles (sim board's core model)
    m = re.fullmatch(r" fp32\[64, 256\] · 64 tiles · (\d+)% of cycles", str(h.label))
    assert m and h.kind == lsp.InlayHintKind.Type, h.label
    assert h.position.character == len(doc.text.splitlines()[line])
    other = str(hints[doc.line_of("out[:] = y + x")].label)
    m2 = re.search(r"(\d+)% of cycles", other)
    assert "fp32[64, 256]" in other and m2 and 95 <= int(m.group(1)) + int(m2.group(1)) <= 101
    assert "core model" in str(h.tooltip)
    assert doc.line_of("import pypto") not in hints


async def test_the_advisors_quick_fix_rewrites_the_call_and_the_next_record_is_faster(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "advise.py", SRC)
    before = await client.records.record(doc.uri, "scale_exp", 1)
    line = doc.line_of("set_vec_tile_shapes(8, 64)")
    # the first request starts the search (lazily, on the sim board) and answers without waiting for it
    await doc.actions(line)
    await doc.call("pypto/suggestions", kernel="scale_exp")  # the same search, awaited
    actions = await doc.actions(line)
    fixes = [a for a in actions if a.title.startswith("pypto: pypto.set_vec_tile_shapes")]
    assert fixes and fixes[0].is_preferred and fixes[0].kind == lsp.CodeActionKind.QuickFix
    best = fixes[0]
    assert "simulated" in best.title and "faster" in best.title
    assert best.edit is not None and best.edit.changes is not None
    (edit,) = best.edit.changes[doc.uri]
    assert edit.range.start.line == line and edit.new_text.startswith("pypto.set_vec_tile_shapes(")
    v = doc.apply(best.edit)
    assert edit.new_text in doc.text
    after = await client.records.record(doc.uri, "scale_exp", v)
    assert after["summary"]["tileOps"] != before["summary"]["tileOps"]
    assert after["summary"]["makespanUs"] < before["summary"]["makespanUs"]
    # the same suggestions through the panel's request
    again = await doc.call("pypto/suggestions", kernel="scale_exp")
    assert again["version"] == v and isinstance(again["suggestions"], list)
    search = again["search"]  # how far the time-bounded search got (default 10 s, budget 6 here)
    assert 1 <= search["searched"] <= search["space"] and search["stopped"] in ("budget", "explored", "time")


async def test_a_health_finding_with_an_edit_is_a_quick_fix_that_removes_it(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "tail.py", TAIL)
    await client.records.record(doc.uri, "tail_vec", 1)
    line = doc.line_of("set_vec_tile_shapes(16, 384)")
    (diag,) = [d for d in doc.diagnostics() if d.code == "tile.tail-waste"]
    assert diag.range.start.line == line
    actions = await doc.actions(line)
    (fix,) = [a for a in actions if a.title.startswith("pypto (tile.tail-waste)")]
    assert fix.diagnostics and fix.diagnostics[0].code == "tile.tail-waste"
    assert fix.edit is not None and fix.edit.changes is not None
    assert fix.edit.changes[doc.uri][0].new_text == "pypto.set_vec_tile_shapes(16, 200)"
    # offered because the sim board found it faster, and the diagnostic says by how much
    assert "simulated on the sim board" in diag.message or "simulated on the sim board" in str(diag.data)
    v = doc.apply(fix.edit)
    fixed = await client.records.record(doc.uri, "tail_vec", v)
    assert fixed["error"] is None
    assert not [d for d in doc.diagnostics() if d.code == "tile.tail-waste"]


BRANCH = '''import pypto


@pypto.jit
def first_row_doubled(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 64)
    for idx in pypto.loop(4, name="rows", idx_name="idx"):
        rows = pypto.view(x, [2, 64], [idx * 2, 0])
        if idx < 1:
            out[idx * 2:idx * 2 + 2, :] = rows * 2.0
        else:
            out[idx * 2:idx * 2 + 2, :] = rows + 1.0
'''


async def test_a_runtime_if_shows_both_sides_and_the_swimlane_only_the_taken_one(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "branch.py", BRANCH)
    r = await client.records.record(doc.uri, "first_row_doubled", 1)
    text = await doc.hover(doc.line_of("if idx < 1:"))
    assert text is not None and "Run-time branch `if idx < 1`" in text
    assert "**then**: ran 1× (`idx=0`) · 1 tasks" in text
    assert "**else**: ran 3× (`idx=1`, `idx=2`, `idx=3`) · 3 tasks" in text
    sl = await doc.call("pypto/swimlane", kernel="first_row_doubled")
    assert sl["totalTasks"] == r["summary"]["tasks"] == 4  # one task per row pair: the taken side's only
    then_line = await doc.hover(doc.line_of("rows * 2.0"))
    assert then_line is not None and "1 tasks" in then_line
