"""Quick fixes for the commonest mistakes (issue 29 item 6), over stdio with the real server: a tile
entry of 0, a negative one (from an expression) or a fraction in `set_*_tile_shapes` offers the call's
last shape that compiled (first, preferred; from the kernel's last good result, or from its compile
history once the server has none in memory) and the nearest legal value(s); operands that do not
broadcast offer the literal shape on the error's line that would. Each fix, applied as the editor
applies it, gives a kernel that compiles."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "tileSearchBudget": 4}

GOOD_CALL = "pypto.set_vec_tile_shapes(8, 64)"
KERNEL = f'''import pypto


@pypto.jit
def tiles(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    {GOOD_CALL}
    out[:] = pypto.exp(x) * 2.0
'''

NEGATIVE = '''import pypto

ROWS = 16


@pypto.jit
def negative(x: pypto.Tensor([ROWS, 64], pypto.DT_FP32), out: pypto.Tensor([ROWS, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(ROWS // 4 - 8, 64)
    out[:] = pypto.sigmoid(x)
'''

CUBE_CALL = "pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])"
MATMUL = f'''import pypto


@pypto.jit
def mm(a: pypto.Tensor([64, 128], pypto.DT_FP16), b: pypto.Tensor([128, 64], pypto.DT_FP16),
       c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    {CUBE_CALL}
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
'''

BROADCAST_LINE = "out[:] = pypto.exp(x) + pypto.full([32, 128], 1.0, pypto.DT_FP32)"
BROADCAST = f'''import pypto


@pypto.jit
def bias(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    {BROADCAST_LINE}
'''


async def broken(client, doc, kernel: str, old: str, new: str, code: str) -> tuple[int, lsp.Diagnostic]:
    """Edit `old` into `new` and wait for the version's error (`code`) to be published."""
    v = doc.replace(old, new)
    record = await client.records.record(doc.uri, kernel, v)
    assert record["error"] is not None and record["error"]["code"] == code, record["error"]
    published = await client.published.wait(lambda p: p.uri == doc.uri and p.version == v and any(
        d.code == code for d in p.diagnostics))
    (d,) = [d for d in published.diagnostics if d.code == code]
    return v, d


async def compiles(client, doc, kernel: str, fix: lsp.CodeAction) -> None:
    """Apply the fix as the editor does; the kernel then compiles and its error is gone."""
    assert fix.edit is not None
    v = doc.apply(fix.edit)
    record = await client.records.record(doc.uri, kernel, v)
    assert record["error"] is None, record["error"]
    await client.published.wait(lambda p: p.uri == doc.uri and p.version == v and not any(
        x.severity == lsp.DiagnosticSeverity.Error for x in p.diagnostics))


async def test_a_zero_tile_entry_offers_the_last_shape_that_compiled_and_the_nearest_legal_value(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "zero.py", KERNEL)
    assert (await client.records.record(doc.uri, "tiles", 1))["error"] is None
    _, d = await broken(client, doc, "tiles", GOOD_CALL, "pypto.set_vec_tile_shapes(8, 0)", "tile.shape")
    assert d.range.start.line == doc.line_of("set_vec_tile_shapes(8, 0)")
    assert "entry 1 is 0" in d.message and "use 1" in d.message, d.message

    actions = await doc.actions(doc.line_of("set_vec_tile_shapes(8, 0)"), 10)
    titles = [a.title for a in actions]
    assert titles[:2] == ["pypto: use the last shape that compiled: set_vec_tile_shapes(8, 64)",
                          "pypto: use 1 for 0 in set_vec_tile_shapes"], titles
    last, nearest = actions[:2]
    assert last.is_preferred and not nearest.is_preferred
    assert last.kind == nearest.kind == lsp.CodeActionKind.QuickFix
    assert list(last.diagnostics or ()) == [d] and list(nearest.diagnostics or ()) == [d]
    assert nearest.edit is not None
    (edit,) = nearest.edit.changes[doc.uri]
    zero = doc.text.split("\n")[d.range.start.line].index("0)")
    assert edit.new_text == "1" and (edit.range.start.character, edit.range.end.character) == (zero, zero + 1)

    await compiles(client, doc, "tiles", last)
    assert GOOD_CALL in doc.text

    # a fraction (the `/` that should have been `//`): the ints on either side, and the last good shape again
    await broken(client, doc, "tiles", GOOD_CALL, "pypto.set_vec_tile_shapes(32 / 3, 64)", "tile.shape")
    titles = [a.title for a in await doc.actions(doc.line_of("set_vec_tile_shapes(32 / 3"), 10)]
    assert titles[:3] == ["pypto: use the last shape that compiled: set_vec_tile_shapes(8, 64)",
                          "pypto: use 10 for 32 / 3 in set_vec_tile_shapes",
                          "pypto: use 11 for 32 / 3 in set_vec_tile_shapes"], titles
    fix = next(a for a in await doc.actions(doc.line_of("set_vec_tile_shapes(32 / 3"), 10)
               if a.title.endswith("use 11 for 32 / 3 in set_vec_tile_shapes"))
    await compiles(client, doc, "tiles", fix)
    assert "pypto.set_vec_tile_shapes(11, 64)" in doc.text


async def test_a_negative_entry_from_an_expression_offers_1_and_the_history_gives_the_last_shape_after_a_reopen(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "negative.py", NEGATIVE)
    record = await client.records.record(doc.uri, "negative", 1)
    assert record["error"]["code"] == "tile.shape" and "entry 0 is -4" in record["error"]["message"]
    line = doc.line_of("set_vec_tile_shapes(")
    actions = await doc.actions(line, 10)
    # the kernel never compiled: no last shape, only the nearest legal value, in place of the expression
    assert [a.title for a in actions] == ["pypto: use 1 for ROWS // 4 - 8 in set_vec_tile_shapes"]
    await compiles(client, doc, "negative", actions[0])
    assert "pypto.set_vec_tile_shapes(1, 64)" in doc.text
    good = doc.text

    # the document opened afresh with the mistake back in: no result in memory, the compile history
    # (written as the fixed kernel compiled) knows the call's last shape
    doc.close()
    seen = {id(x) for x in [*client.records.items, *client.published.items]}  # what the first opening got
    again = lsp_kit.Doc(client, tmp_path / "negative.py", NEGATIVE)
    record = await client.records.wait(lambda r: id(r) not in seen and r["uri"] == again.uri and not r["interim"])
    assert record["error"]["code"] == "tile.shape"
    await client.published.wait(lambda p: id(p) not in seen and p.uri == again.uri and any(
        d.code == "tile.shape" for d in p.diagnostics))
    titles = [a.title for a in await again.actions(line, 10)]
    assert titles == ["pypto: use the last shape that compiled: set_vec_tile_shapes(1, 64)",
                      "pypto: use 1 for ROWS // 4 - 8 in set_vec_tile_shapes"], titles
    fix = (await again.actions(line, 10))[0]
    await compiles(client, again, "negative", fix)
    assert again.text == good


async def test_a_zero_cube_entry_offers_the_last_shapes_and_a_size_on_the_fractal(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "cube.py", MATMUL)
    assert (await client.records.record(doc.uri, "mm", 1))["error"] is None
    bad = "pypto.set_cube_tile_shapes([32, 32], [0, 64], [32, 32])"
    await broken(client, doc, "mm", CUBE_CALL, bad, "tile.shape")
    actions = await doc.actions(doc.line_of(bad), 10)
    titles = [a.title for a in actions]
    assert titles[:2] == ["pypto: use the last shape that compiled: "
                          "set_cube_tile_shapes([32, 32], [64, 64], [32, 32])",
                          "pypto: use 32 for 0 in set_cube_tile_shapes"], titles
    await compiles(client, doc, "mm", actions[1])
    assert "pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])" in doc.text
    await broken(client, doc, "mm", "[32, 64], [32, 32])", "[0, 64], [32, 32])", "tile.shape")
    last = (await doc.actions(doc.line_of(bad), 10))[0]
    assert last.title == ("pypto: use the last shape that compiled: "
                          "set_cube_tile_shapes([32, 32], [32, 64], [32, 32])"), last.title  # the newest good one
    await compiles(client, doc, "mm", last)


async def test_operands_that_do_not_broadcast_offer_the_literal_shape_that_would(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "broadcast.py", BROADCAST)
    record = await client.records.record(doc.uri, "bias", 1)
    assert "cannot be broadcast" in record["error"]["message"], record["error"]
    line = doc.line_of(BROADCAST_LINE)
    await client.published.wait(lambda p: p.uri == doc.uri and any(
        d.range.start.line == line and d.severity == lsp.DiagnosticSeverity.Error for d in p.diagnostics))
    actions = await doc.actions(line, 30)
    titles = [a.title for a in actions]
    assert titles == ["pypto: use [32, 256] for [32, 128] (as the other operand's [32, 256])",
                      "pypto: use [32, 1] for [32, 128] (1 broadcasts along dim -1)"], titles
    assert actions[0].edit is not None
    (edit,) = actions[0].edit.changes[doc.uri]
    col = BROADCAST.split("\n")[line].index("32, 128")
    assert edit.new_text == "32, 256" and edit.range == lsp.Range(lsp.Position(line, col),
                                                                   lsp.Position(line, col + len("32, 128")))
    await compiles(client, doc, "bias", actions[1])
    assert "pypto.full([32, 1], 1.0" in doc.text
    # an operand made on another line gets no fix: no edit of the error's line repairs it
    bad = "out[:] = pypto.exp(x) + y"
    made = "y = pypto.full([32, 128], 1.0, pypto.DT_FP32)"
    v = doc.replace(BROADCAST_LINE.replace("[32, 128]", "[32, 1]"), f"{made}\n    {bad}")
    record = await client.records.record(doc.uri, "bias", v)
    assert "cannot be broadcast" in record["error"]["message"]
    await client.published.wait(lambda p: p.uri == doc.uri and p.version == v and any(
        d.severity == lsp.DiagnosticSeverity.Error for d in p.diagnostics))
    assert [a.title for a in await doc.actions(doc.line_of(bad), 12)] == []
