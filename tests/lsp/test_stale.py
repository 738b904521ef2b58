"""Stale, not replaced (issue 18 item 3), over stdio: when the kernel's latest compile fails or the
file stops parsing, the CodeLens and the inlay hints keep the last good run, marked stale with
where the error is; `pypto/recordChanged` carries the error (the client keeps its last summary,
marked stale); a good compile clears the mark."""

from __future__ import annotations

import pytest
from support import SCALE_EXP

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

SRC = SCALE_EXP


async def kernel_lens(doc) -> str:  # type: ignore[no-untyped-def]
    lenses = [x for x in await doc.lenses() if x.command is not None and x.command.title.startswith("pypto")]
    (lens,) = [x for x in lenses if x.range.start.line == doc.line_of("@pypto.jit")]
    return lens.command.title


async def test_an_error_keeps_the_last_good_run_marked_stale_until_a_good_compile(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "stale.py", SRC)
    good = await client.records.record(doc.uri, "scale_exp", 1)
    assert good["error"] is None and good["summary"] is not None
    title = await kernel_lens(doc)
    assert title.startswith("pypto: ") and "stale" not in title
    hints = await doc.hints()
    assert hints and not any("stale" in str(h.label) for h in hints)

    # a compile error: the tile call is one entry short for the 2-D ops
    v = doc.replace("set_vec_tile_shapes(8, 64)", "set_vec_tile_shapes(8)")
    bad = await client.records.record(doc.uri, "scale_exp", v)
    assert bad["summary"] is None and bad["error"]["code"] == "tile.shape", bad
    line = doc.line_of("set_vec_tile_shapes") + 1
    title = await kernel_lens(doc)
    assert title.startswith(f"pypto (stale: error at line {line}): ") and "tasks" in title, title
    hints = await doc.hints()
    assert hints and all(str(h.label).startswith(" stale · ") for h in hints)

    # the file stops parsing: its error comes as the kernel's, the same last good run is shown
    v = doc.replace("y = pypto.exp(x) * 2.0", "y = pypto.exp(x) * (2.0")
    syntax = await client.records.record(doc.uri, "scale_exp", v)
    assert syntax["summary"] is None and syntax["error"]["code"] == "python.syntax", syntax
    title = await kernel_lens(doc)
    assert title.startswith("pypto (stale: syntax error at line ") and "tasks" in title, title

    # fixed: a fresh run, no mark
    doc.replace("y = pypto.exp(x) * (2.0", "y = pypto.exp(x) * 2.0")
    v = doc.replace("set_vec_tile_shapes(8)", "set_vec_tile_shapes(8, 128)")
    fresh = await client.records.record(doc.uri, "scale_exp", v)
    assert fresh["error"] is None and fresh["summary"] is not None
    assert "stale" not in await kernel_lens(doc)


async def test_undoing_a_syntax_error_back_to_the_last_good_text_makes_the_run_current_again(client, lsp_kit,
                                                                                             tmp_path):
    # nothing needs compiling after the undo (the kernel's key is the good run's): the client must
    # still hear that the run is current, or its panels and status bar stay stale
    doc = lsp_kit.Doc(client, tmp_path / "undo.py", SRC)
    good = await client.records.record(doc.uri, "scale_exp", 1)
    assert good["error"] is None
    v = doc.replace("y = pypto.exp(x) * 2.0", "y = pypto.exp(x) * (2.0")
    syntax = await client.records.record(doc.uri, "scale_exp", v)
    assert syntax["error"]["code"] == "python.syntax", syntax
    v = doc.replace("y = pypto.exp(x) * (2.0", "y = pypto.exp(x) * 2.0")
    back = await client.records.record(doc.uri, "scale_exp", v)
    assert back["error"] is None and back["summary"] == good["summary"], back
    assert "stale" not in await kernel_lens(doc)
