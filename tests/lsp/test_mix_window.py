"""A run's window (`pypto/swimlane`) shows a MIX task on every lane it holds: its boxes carry the lanes held
(`held`, a PyPTO 3 scope with cube and vector work: its cluster's two AIVs besides the AIC), and a window of
bins counts its time on those lanes too — an AIV a MIX task holds is busy, not idle."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

# the webview fixtures' MIX kernel (tests/webview/mix_kernels.py): 4 scope instances, each a matmul K loop and an add
MIX = (Path(__file__).parent.parent / "webview" / "mix_kernels.py").read_text()


async def test_boxes_carry_the_lanes_held_and_bins_count_them(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "mix.py", MIX)
    first = await client.records.record(doc.uri, "gemm_add", 1)
    assert first["error"] is None
    boxes = await doc.call("pypto/swimlane", kernel="gemm_add")
    assert boxes["detail"] == "boxes" and len(boxes["boxes"]) == 4
    lanes = boxes["lanes"]
    for b in boxes["boxes"]:  # the AIC lane, and its cluster's two AIVs held
        c = int(lanes[b["lane"]]["name"].split("_")[1])
        assert [lanes[h]["name"] for h in b["held"]] == [f"AIV_{2 * c}", f"AIV_{2 * c + 1}"]
    occupied = {b["lane"] for b in boxes["boxes"]} | {h for b in boxes["boxes"] for h in b["held"]}
    bins = await doc.call("pypto/swimlane", kernel="gemm_add", maxBoxes=1, bins=4)
    assert bins["detail"] == "bins"
    assert {b["lane"] for b in bins["bins"]} == occupied, "every lane a MIX task holds has its bins"
    held_lane = boxes["boxes"][0]["held"][0]
    busy = sum(b["busy"] * (b["end"] - b["start"]) for b in bins["bins"] if b["lane"] == held_lane)
    box = boxes["boxes"][0]
    assert busy == pytest.approx(box["end"] - box["start"], rel=1e-6), "the held AIV was busy for the task"
