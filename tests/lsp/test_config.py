"""Settings: workspace/configuration (section "pypto") is read at start and again on
workspace/didChangeConfiguration; the debounce holds edits back until a save."""

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


async def test_open_compiles_at_once_edits_wait_for_the_debounce_and_save_skips_it(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "debounce.py", SRC)
    first = await client.records.record(doc.uri, "scale_exp", 1)
    v = doc.replace("set_vec_tile_shapes(8, 64)", "set_vec_tile_shapes(16, 64)")
    await doc.hover(0)  # a round trip: had the edit compiled at once, its record would be queued by now
    assert not [r for r in client.records.items if r["uri"] == doc.uri and r["version"] >= v]
    doc.save()
    saved = await client.records.record(doc.uri, "scale_exp", v)
    assert saved["summary"]["tileOps"] < first["summary"]["tileOps"]


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
