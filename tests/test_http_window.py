"""`GET …/swimlane`'s window (`server.http_views.swimlane_window`) with a lanes filter: a MIX task is on the lanes it
holds too (its cluster's AIVs), as a box and in the bins; bins are only of the lanes asked for."""

from __future__ import annotations

from typing import Any

from server.http_views import swimlane_window

# lanes 0 (AIC_0), 1 (AIV_0), 2 (AIV_1), 3 (AIV_2); task 0: a MIX task on AIC_0 holding AIV_0 and AIV_1
RUN: dict[str, Any] = {
    "board": "sim", "clock": "simulated",
    "lanes": [{"name": n, "core": n[:3]} for n in ("AIC_0", "AIV_0", "AIV_1", "AIV_2")],
    "tasks": {"id": [0, 1], "lane": [0, 3], "start": [0.0, 0.0], "end": [2.0, 1.0], "leaf": [0, 1], "preds": [[], []],
              "ready": [0.0, 0.0], "profile": [-1, -1], "name": ["", ""], "coord": [[], []], "held": [[1, 2], []]},
    "counters": {}, "pipe_profiles": [], "metrics": {},
}


def test_a_lane_a_mix_task_holds_shows_it_as_a_box_and_in_the_bins() -> None:
    boxes = swimlane_window(RUN, None, None, [2], limit=10)
    assert boxes["tasks"]["id"] == [0] and boxes["tasks"]["held"] == [[1, 2]]
    binned = swimlane_window(RUN, None, None, [2], limit=10, max_boxes=0, bins=2)
    assert binned["detail"] == "bins" and {b["lane"] for b in binned["bins"]} == {2}, "only the lane asked for"
    assert sum(b["busy"] * (b["end"] - b["start"]) for b in binned["bins"]) == 2.0
    assert swimlane_window(RUN, None, None, [3], limit=10)["tasks"]["id"] == [1]
    everything = swimlane_window(RUN, None, None, None, limit=10, max_boxes=0, bins=2)
    assert {b["lane"] for b in everything["bins"]} == {0, 1, 2, 3}
