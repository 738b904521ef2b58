"""Swimlane metrics on hand-made swimlanes whose answers are known."""

from __future__ import annotations

import json

import pytest

from pypto.boards.swimlane import Lane, LaneTask, Swimlane, critical_path, metrics, ready_counters

AIV2 = (Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"))


def _sl(tasks: list[LaneTask], lanes: tuple[Lane, ...] = AIV2) -> Swimlane:
    return Swimlane("test", "made by hand", lanes, tuple(tasks), ready_counters(tasks, lanes))


def test_a_chain_back_to_back_has_critical_path_equal_to_makespan():
    chain = [LaneTask(i, i % 2, 10.0 * i, 10.0 * i + 10, leaf=0, preds=(i - 1,) if i else ()) for i in range(5)]
    m = metrics(_sl(chain))
    assert m.makespan == 50 and m.critical_path == (0, 1, 2, 3, 4) and m.critical_path_us == 50
    assert m.critical_share == 1.0
    assert m.utilization == pytest.approx(0.5) and m.lane_utilization == (0.6, 0.4)


def test_the_critical_path_follows_the_longest_chain_not_the_last_task():
    tasks = [LaneTask(0, 0, 0, 30), LaneTask(1, 1, 0, 5), LaneTask(2, 1, 5, 10, preds=(1,)),
             LaneTask(3, 0, 30, 31, preds=(0, 2))]
    assert critical_path(tasks) == ((0, 3), 31.0)


def test_idle_time_is_split_into_waiting_for_dependencies_and_for_the_scheduler():
    # lane 1 idles 0..10 waiting for task 0 (dependency), then task 1 is ready at 10 but starts at 14
    tasks = [LaneTask(0, 0, 0, 10), LaneTask(1, 1, 14, 20, preds=(0,), ready=10.0)]
    m = metrics(_sl(tasks))
    # lane 0: idle 10..20 with nothing else ready -> dependency (10); lane 1: 0..10 dependency,
    # 10..14 scheduler (task 1 ready, not started)
    assert m.wait_scheduler == pytest.approx(4 + 4)  # both lanes idle while task 1 waited (10..14)
    assert m.wait_dependency == pytest.approx(10 + 10 - 4)
    assert m.wait_scheduler + m.wait_dependency + m.busy == pytest.approx(m.makespan * 2)


def test_per_leaf_statistics_and_ready_counters():
    tasks = [LaneTask(0, 0, 0, 2, leaf=0), LaneTask(1, 1, 0, 4, leaf=0), LaneTask(2, 0, 4, 5, leaf=1, preds=(1,))]
    sl = _sl(tasks)
    stats = {s.leaf: s for s in metrics(sl).leaves}
    assert (stats[0].count, stats[0].min, stats[0].avg, stats[0].max) == (2, 2, 3, 4)
    assert stats[1].count == 1
    total = dict(sl.counters["ReadyCount_Total"])
    assert total[4] == 0 and max(v for _, v in sl.counters["ReadyCount_AIV"]) >= 0


def test_json_round_trip_and_version_check():
    sl = _sl([LaneTask(0, 0, 0, 1.5, leaf=3, coord=(1, 2)), LaneTask(1, 1, 2, 3, preds=(0,))])
    doc = json.loads(json.dumps(sl.to_json()))
    assert doc["metrics"]["makespan_us"] == 3
    assert Swimlane.from_json(doc).tasks == sl.tasks
    with pytest.raises(ValueError, match="version"):
        Swimlane.from_json({**doc, "version": 99})
    with pytest.raises(ValueError, match="not a swimlane"):
        Swimlane.from_json({"schema": "other"})


def test_an_empty_swimlane_has_zero_metrics():
    m = metrics(_sl([]))
    assert m.makespan == 0 and m.critical_path == () and m.utilization == 0


def test_round6_is_pythons_round_to_six_places():
    """swimlane.round6 (TaskColumns' JSON) gives round(v, 6)'s floats, halves and their neighbours
    included."""
    import numpy as np

    from pypto.boards.swimlane import round6

    rng = np.random.default_rng(19)
    halves = (np.arange(-2000, 2000) + 0.5) / 1e6 + rng.integers(0, 10**6, 4000)
    near = np.concatenate([np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf), halves])
    values = np.concatenate([rng.random(50_000) * 10.0 ** rng.integers(-8, 12, 50_000), near,
                             np.array([0.0, -0.0, 1e-7, 5e-7, 2.5e-6, 4.5e15, 1e300, np.inf, -np.inf])])
    expect = [round(v, 6) for v in values.tolist()]
    got = round6(values)
    assert [repr(v) for v in got] == [repr(v) for v in expect]
