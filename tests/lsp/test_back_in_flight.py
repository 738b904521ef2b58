"""An edit back to a text whose compile is being cancelled gets its record: the cancelled compile is forgotten when
it is cancelled, not when its worker job is gone (which takes up to a poll of the pool and a kill), so the text
compiles anew. Before, an undo typed that fast waited on the dying compile and never got a record (the
production benchmark's compress_fa hung there once its edits took 40 ms)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 0, "progressDelayMs": 0}

HELD = '''import os
import time

import pypto

HOLD = {hold!r}


@pypto.jit
def held(x: pypto.Tensor([8, 64], pypto.DT_FP32)):
    while os.path.exists(HOLD):  # the trace waits while the test's file exists
        time.sleep(0.01)
    return pypto.exp(x)
'''


async def test_an_edit_back_to_a_text_whose_compile_is_being_cancelled_gets_its_record(client, lsp_kit, tmp_path):
    hold = tmp_path / "hold"
    hold.write_text("")
    doc = lsp_kit.Doc(client, tmp_path / "held.py", HELD.format(hold=str(hold)))
    # the first compile runs in a worker (and waits on the file) once the server says how long it has
    await client.progress.wait(lambda p: isinstance(p.value, dict) and p.value.get("kind") == "report"
                               and "held: still compiling" in (p.value.get("message") or ""))
    doc.replace("return pypto.exp(x)", "return pypto.exp(x) + x")  # another program: that compile is cancelled
    back = doc.replace("return pypto.exp(x) + x", "return pypto.exp(x)")  # and the first text again, at once
    hold.unlink()
    r = await client.records.record(doc.uri, "held", back)
    assert r["error"] is None and r["version"] == back and r["summary"]["tasks"] > 0
