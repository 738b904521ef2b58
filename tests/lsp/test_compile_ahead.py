"""Compiles ahead over stdio (the `compileAhead` setting): a code action on a tile-shape call — VS Code asks for one
wherever the cursor rests — compiles that call's next edits (each entry halved or doubled, the last first) in the
background and says so (`pypto/compiledAhead`); an edit to one of them is answered from it (`reused`: shown at once,
its advice checked then), with the record a cold compile of that text makes; an edit to any other shape is compiled as
usual; a call shared by several kernels is compiled ahead for the one the panels show (docs/protocol.md, "Compiles
ahead")."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "compileAhead": 2, "tileSearchSeconds": 1}

# 1000 columns cut by 384: a tail tile, so its findings propose shapes (the edit's compile checks them)
TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


async def _compiled_ahead(client, doc) -> dict:
    line = doc.line_of("set_vec_tile_shapes")
    await doc.actions(line)  # the cursor on the call
    return await client.ahead.wait(lambda a: a["uri"] == doc.uri and a["version"] == doc.version)


async def test_an_edit_compiled_ahead_is_shown_from_that_compile_with_a_cold_compiles_record(client, lsp_kit,
                                                                                             tmp_path):
    path = tmp_path / "tail.py"
    doc = lsp_kit.Doc(client, path, TAIL)
    await doc.call("pypto/record", kernel="tail_vec")  # the panels open: compiles carry the record from now on
    first = await client.records.record(doc.uri, "tail_vec", 1)
    assert first["bestGain"] is not None, "its findings propose a shape, checked by the board"
    ahead = await _compiled_ahead(client, doc)
    assert (ahead["kernel"], ahead["line"], ahead["tried"], ahead["compiled"]) == \
        ("tail_vec", doc.line_of("set_vec_tile_shapes") + 1, 2, 2)
    hover = await doc.hover(doc.line_of("set_vec_tile_shapes"))
    assert hover is not None and "compiled ahead" in hover, hover
    rows = [x for x in hover.splitlines() if x.startswith("| `pypto.set_vec_tile_shapes(")]
    assert [x.split("`")[1] for x in rows] == [f"pypto.set_vec_tile_shapes{new}" for new in ("(16, 192)", "(16, 768)")]
    assert all(" µs | " in x and ("faster" in x or "slower" in x) for x in rows), rows
    path.write_text(doc.text.replace("(16, 384)", "(16, 192)"))  # (the record has the hash of the file as saved)
    v2 = doc.replace("(16, 384)", "(16, 192)")  # the last entry halved: the first edit compiled ahead
    early = await client.records.record(doc.uri, "tail_vec", v2, interim=True)
    final = await client.records.record(doc.uri, "tail_vec", v2)
    assert early["reused"] is True and early["bestGain"] is None, "shown before its advice is checked"
    assert final["reused"] is True and final["summary"] == early["summary"] != first["summary"]
    assert f"{final['summary']['makespanUs']:,.2f} µs" in rows[0], "the hover said the figure the edit shows"
    assert "compiled ahead" not in (await doc.hover(doc.line_of("set_vec_tile_shapes")) or ""), "of another version"
    got = await doc.call("pypto/record", kernel="tail_vec")
    assert got["version"] == v2

    # the same text compiled cold: a fresh document of the same file, nothing compiled ahead or before
    text = doc.text
    doc.close()
    before = {id(r) for r in client.records.items}
    cold_doc = lsp_kit.Doc(client, path, text)
    cold_got = await cold_doc.call("pypto/record", kernel="tail_vec")
    cold = await client.records.wait(lambda r: id(r) not in before and r["uri"] == doc.uri and not r["interim"])
    assert not cold.get("reused")
    assert final["summary"] == cold["summary"] and final["bestGain"] == cold["bestGain"]
    untimed = [{k: v for k, v in p.items() if k != "seconds"} for p in got["record"]["passes"]]
    assert untimed == [{k: v for k, v in p.items() if k != "seconds"} for p in cold_got["record"]["passes"]]
    assert {**got["record"], "passes": None} == {**cold_got["record"], "passes": None}


async def test_an_edit_not_compiled_ahead_is_compiled_as_usual(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "tail_other.py", TAIL)
    first = await client.records.record(doc.uri, "tail_vec", 1)
    ahead = await _compiled_ahead(client, doc)
    assert ahead["compiled"] == 2
    v2 = doc.replace("(16, 384)", "(8, 384)")  # the first entry halved: not among the two compiled ahead
    again = await client.records.record(doc.uri, "tail_vec", v2)
    assert not again.get("reused") and again["summary"] != first["summary"]


SHARED = '''import pypto


def _tiles():
    pypto.set_vec_tile_shapes(16, 128)


@pypto.jit
def first(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    _tiles()
    out[:] = pypto.exp(x)


@pypto.jit
def second(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    _tiles()
    out[:] = pypto.exp(x) * x
'''


async def test_a_call_shared_by_kernels_is_compiled_ahead_for_the_one_the_panels_show(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "shared.py", SHARED)
    await client.records.record(doc.uri, "first", 1)
    await client.records.record(doc.uri, "second", 1)
    await doc.call("pypto/record", kernel="second")  # the panels show `second`
    ahead = await _compiled_ahead(client, doc)
    assert (ahead["kernel"], ahead["compiled"]) == ("second", 2)
    v2 = doc.replace("(16, 128)", "(16, 64)")
    shown = await client.records.record(doc.uri, "second", v2)
    other = await client.records.record(doc.uri, "first", v2)
    assert shown["reused"] is True and not other.get("reused"), "the other kernel is compiled as usual"
