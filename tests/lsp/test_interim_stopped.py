"""A job that sent its record and then stopped while it checked the advice (its time or memory limit, a crash):
the record stays the kernel's, current, not stale behind an error; each finding held for the check says its shape
was not simulated and why, and offers nothing (docs/protocol.md, "Interim, then final")."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "timeLimit": 4}

# the tail the health rule proposes to fix (as tests/lsp/test_interim.py); the kernel's second trace — the advice's
# check tracing a proposed shape — never ends, so the job runs out of its time limit after its record
HANGS_IN_THE_CHECK = '''import pypto

TRACED = [0]


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    TRACED[0] += 1
    while TRACED[0] > 1:
        pass
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


async def test_the_record_stays_when_the_check_of_its_advice_stops(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "tail.py", HANGS_IN_THE_CHECK)
    first = await client.records.record(doc.uri, "tail_vec", 1, interim=True)
    final = await client.records.record(doc.uri, "tail_vec", 1)
    assert first["error"] is None and first["summary"]["tasks"] > 0
    assert final["error"] is None and final["summary"] == first["summary"] and not final.get("stale")
    lane = await doc.call("pypto/swimlane", kernel="tail_vec")
    assert lane["version"] == 1 and lane["totalTasks"] == first["summary"]["tasks"] and not lane.get("stale")
    await client.states.wait(lambda s: s["uri"] == doc.uri and s["state"] == "finished" and s["version"] == 1)
    diags = [d for d in doc.diagnostics() if d.code == "tile.tail-waste"]
    assert diags and "did not finish" in diags[0].message and "time limit" in diags[0].message, diags
    assert "16, 200" not in diags[0].message, "no unchecked shape is shown"
    actions = await doc.actions(doc.line_of("set_vec_tile_shapes(16, 384)"))
    assert not [a for a in actions if a.title.startswith("pypto (tile.tail-waste)") and a.edit is not None]
