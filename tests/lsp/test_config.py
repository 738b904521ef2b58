"""Settings: workspace/configuration (section "pypto") is read at start and again on
workspace/didChangeConfiguration; the debounce holds typed edits back until a save, a whole edit after quiet is
compiled at once."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
# edits wait ten minutes of quiet before compiling: only open and save compile in this module
SERVER_SETTINGS = {"debounceMs": 600_000}

SRC = '''import pypto


@pypto.jit
def scale_exp(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.exp(x) * 2.0
'''


async def test_open_and_a_whole_edit_compile_at_once_typing_waits_for_the_debounce_and_save_skips_it(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "debounce.py", SRC)
    first = await client.records.record(doc.uri, "scale_exp", 1)
    # a quick fix's edit (two digits put in at once) after quiet: compiled without the ten minutes' wait
    whole = doc.replace("set_vec_tile_shapes(8, 64)", "set_vec_tile_shapes(16, 64)")
    edited = await client.records.record(doc.uri, "scale_exp", whole)
    assert edited["version"] == whole and edited["summary"]["tileOps"] < first["summary"]["tileOps"]
    # a keystroke (one digit taken out) waits; so does a whole edit in the burst it began
    typed = doc.replace("set_vec_tile_shapes(16, 64)", "set_vec_tile_shapes(1, 64)")
    burst = doc.replace("set_vec_tile_shapes(1, 64)", "set_vec_tile_shapes(32, 64)")
    # two round trips: an update started by either change says compileState before the second's answer
    await doc.hover(0)
    await doc.hover(0)
    assert not [s for s in client.states.items if s["uri"] == doc.uri and s["version"] >= typed]
    assert not [r for r in client.records.items if r["uri"] == doc.uri and r["version"] >= typed]
    doc.save()
    saved = await client.records.record(doc.uri, "scale_exp", burst)
    assert saved["version"] == burst and saved["summary"]["tileOps"] < edited["summary"]["tileOps"]


async def test_a_keystroke_at_several_cursors_waits_for_the_debounce(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "cursors.py", SRC)
    await client.records.record(doc.uri, "scale_exp", 1)
    line = doc.line_of("set_vec_tile_shapes")
    col = doc.text.split("\n")[line].index("(8, 64)")
    # "1" typed before the 64 and before the 8, one event: its text difference ("18, 1") would pass for a whole edit
    at = [(lsp.Range(lsp.Position(line, c), lsp.Position(line, c)), "1") for c in (col + 4, col + 1)]
    typed = doc.edit_at(at)
    assert "(18, 164)" in doc.text
    await doc.hover(0)  # (two round trips: as above)
    await doc.hover(0)
    assert not [s for s in client.states.items if s["uri"] == doc.uri and s["version"] >= typed]
    doc.save()
    saved = await client.records.record(doc.uri, "scale_exp", typed)
    assert saved["version"] == typed


async def test_a_whole_edit_that_leaves_a_syntax_error_waits_for_the_debounce(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "half.py", SRC)
    await client.records.record(doc.uri, "scale_exp", 1)
    half = doc.replace("out[:] = pypto.exp(x) * 2.0", "out[:] = pypto.exp(x) * pypto.")  # half a line pasted
    await doc.hover(0)  # (two round trips: as above)
    await doc.hover(0)
    assert not [p for p in client.published.items if p.uri == doc.uri and p.version is not None and p.version >= half]
    doc.save()
    shown = await client.published.wait(lambda p: p.uri == doc.uri and p.version == half and p.diagnostics)
    assert any("syntax" in d.message.lower() for d in shown.diagnostics), [d.message for d in shown.diagnostics]


async def test_a_changed_configuration_recompiles_on_the_new_board(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "board.py", SRC)
    sim = await client.records.record(doc.uri, "scale_exp", 1)
    assert sim["summary"]["board"] == "sim"
    n = len(client.records.items)
    client.set_configuration({**SERVER_SETTINGS, "board": "cpu"}, section="pypto")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    cpu = await client.records.wait(lambda r: r["uri"] == doc.uri and r["summary"] is not None
                                    and r["summary"]["board"] == "cpu")
    assert client.records.items.index(cpu) >= n
    assert cpu["summary"]["clock"].startswith("measured") and cpu["version"] == 1
    await client.logs.wait(lambda m: "'board': 'cpu'" in m.message)
    client.set_configuration(dict(SERVER_SETTINGS), section="pypto")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await client.records.wait(lambda r: r["uri"] == doc.uri and r["summary"] is not None
                              and r["summary"]["board"] == "sim" and client.records.items.index(r) > n)


async def test_log_level_filters_what_reaches_the_client(client, lsp_kit, tmp_path):
    client.set_configuration({**SERVER_SETTINGS, "logLevel": "warning"}, section="pypto")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    # the settings line is still sent (at the old level); later info lines are not
    await client.logs.wait(lambda m: "'logLevel': 'warning'" in m.message)
    doc = lsp_kit.Doc(client, tmp_path / "quiet.py", SRC)
    await client.records.record(doc.uri, "scale_exp", 1)
    await doc.hover(0)  # a round trip after the record: its info line would have arrived by now
    assert not [m for m in client.logs.items if "quiet.py" in m.message], "info lines are filtered out"
    client.set_configuration(dict(SERVER_SETTINGS), section="pypto")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await client.logs.wait(lambda m: "'logLevel': 'info'" in m.message)
    doc2 = lsp_kit.Doc(client, tmp_path / "loud.py", SRC)
    await client.records.record(doc2.uri, "scale_exp", 1)
    await client.logs.wait(lambda m: "loud.py" in m.message)
