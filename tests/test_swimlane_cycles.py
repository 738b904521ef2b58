"""Swimlane metrics on any dependency arrows: cycles, self-loops, arrows that run back in time and
arrows naming no task (real NPU traces have them) — the metrics finish, the critical path is a real
chain of arrows that run forward in time and the longest one, on the task objects and on the sim
board's columns alike; and an imported merged_swimlane.json in PyPTO's layout whose Fake Core flows
form a cycle opens with its summary and says which arrows it did not follow."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.boards.importers import load_any
from pypto.boards.swimlane import (
    PLACEHOLDER,
    Lane,
    LaneTask,
    Swimlane,
    TaskColumns,
    backward_arrows,
    critical_path,
    longest_chain,
    metrics,
    visit_order,
)

LANES = (Lane("AIC_0", "AIC"), Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"), Lane("Fake Core_0", PLACEHOLDER))


@st.composite
def task_sets(draw: Any, max_tasks: int = 24, fake: bool = True) -> list[LaneTask]:
    """Tasks on a few lanes, with starts on a coarse grid (ties happen) and preds drawn from any id,
    the task's own and ids of no task included."""
    n = draw(st.integers(0, max_tasks))
    lanes = len(LANES) if fake else len(LANES) - 1
    tasks = []
    for i in range(n):
        start = draw(st.integers(0, 12)) / 2
        dur = draw(st.integers(0, 6)) / 2
        preds = tuple(draw(st.lists(st.integers(-2, n + 1), max_size=4)))
        tasks.append(LaneTask(i, draw(st.integers(0, lanes - 1)), start, start + dur, leaf=i % 3, preds=preds))
    return tasks


def _forward_longest(tasks: list[LaneTask], free: set[int]) -> float:
    """The longest chain over forward arrows by another route: every forward path's length from a
    memoised recursion over predecessors (the forward arrows are a DAG by construction)."""
    rank = {t.id: k for k, t in enumerate(visit_order(tasks))}
    by_id = {t.id: t for t in tasks}
    memo: dict[int, float] = {}

    def best(i: int) -> float:
        if i not in memo:
            t = by_id[i]
            ins = [best(p) for p in t.preds if p in rank and rank[p] < rank[i]]
            memo[i] = max(ins, default=0.0) + (0.0 if i in free else t.duration)
        return memo[i]
    return max((best(t.id) for t in tasks), default=0.0)


@settings(max_examples=300, deadline=None)
@given(task_sets())
def test_any_arrows_give_a_critical_path_that_is_a_real_forward_chain(tasks: list[LaneTask]) -> None:
    free = {t.id for t in tasks if LANES[t.lane].core == PLACEHOLDER}
    path, length, ignored = longest_chain(tasks, free)
    rank = {t.id: k for k, t in enumerate(visit_order(tasks))}
    by_id = {t.id: t for t in tasks}
    for a, b in zip(path, path[1:]):
        assert a in by_id[b].preds and rank[a] < rank[b]  # each link an arrow of the file, forward in time
    assert abs(length - sum(0.0 if i in free else by_id[i].duration for i in path)) < 1e-9
    assert abs(length - _forward_longest(tasks, free)) < 1e-9
    arrows = [(p, t.id) for t in tasks for p in t.preds]
    unusable = sum(1 for p, i in arrows if p not in rank or rank[p] >= rank[i])
    assert ignored == unusable
    back, cyclic = backward_arrows(tasks)
    assert back == sum(1 for p, i in arrows if p in rank and rank[p] > rank[i]) and 0 <= cyclic <= back
    m = metrics(Swimlane("imported", "made by hand", LANES, tuple(tasks)))
    assert m.critical_path == path and m.ignored_arrows == ignored
    assert m.placeholder_tasks == len(free)


def _closes_cycle(tasks: list[LaneTask], p: int, t: int) -> bool:
    """Whether t reaches p over the arrows (plain search)."""
    succ: dict[int, list[int]] = {}
    ids = {x.id for x in tasks}
    for x in tasks:
        for q in x.preds:
            if q in ids and q != x.id:
                succ.setdefault(q, []).append(x.id)
    seen, todo = {t}, [t]
    while todo:
        for s in succ.get(todo.pop(), []):
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return p in seen


@settings(max_examples=200, deadline=None)
@given(task_sets(max_tasks=12))
def test_the_arrows_closing_a_cycle_are_counted_exactly(tasks: list[LaneTask]) -> None:
    rank = {t.id: k for k, t in enumerate(visit_order(tasks))}
    expected = sum(1 for t in tasks for p in t.preds if p in rank and rank[p] > rank[t.id]
                   and _closes_cycle(tasks, p, t.id))
    assert backward_arrows(tasks)[1] == expected


def _columns(tasks: list[LaneTask]) -> TaskColumns:
    ptr = np.zeros(len(tasks) + 1, dtype=np.int64)
    np.cumsum([len(t.preds) for t in tasks], out=ptr[1:])
    idx = np.array([p for t in tasks for p in t.preds], dtype=np.int64)
    f = np.array
    return TaskColumns(len(tasks), f([t.lane for t in tasks], dtype=np.int64), f([t.start for t in tasks]),
                       f([t.end for t in tasks]), f([t.leaf for t in tasks], dtype=np.int64),
                       [t.coord for t in tasks], [t.preds for t in tasks], f([t.start for t in tasks]),
                       f([-1] * len(tasks), dtype=np.int64), [""], [0] * len(tasks), ptr, idx)


@settings(max_examples=150, deadline=None)
@given(task_sets(fake=False).filter(bool))
def test_the_sim_boards_compiled_path_agrees_on_any_arrows(tasks: list[LaneTask]) -> None:
    """The columns' compiled critical path (what a sim run uses) gives the object path's answer."""
    sl = Swimlane("sim", "made by hand", LANES[:3], _columns(tasks))
    m = metrics(sl)
    path, length, ignored = longest_chain(tasks)
    assert (m.critical_path, m.ignored_arrows) == (path, ignored) and abs(m.critical_path_us - length) < 1e-9


def test_a_cycle_of_arrows_is_not_followed_around() -> None:
    """1 → 2 → 3 → 1 with 3 starting after 1: the arrow 3 → 1 runs back in time and closes the cycle."""
    tasks = [LaneTask(1, 0, 0, 5, preds=(3,)), LaneTask(2, 1, 5, 8, preds=(1,)), LaneTask(3, 0, 8, 9, preds=(2, 3))]
    assert critical_path(tasks) == ((1, 2, 3), 9.0)
    assert longest_chain(tasks)[2] == 2  # 3 → 1 and 3 → 3
    assert backward_arrows(tasks) == (1, 1)


# ---- a merged_swimlane.json in PyPTO's layout whose Fake Core flows form a cycle -----------------------

BASE = 2383465727000.0  # µs: real files carry absolute device timestamps


def _cyclic_merged_doc() -> dict[str, Any]:
    """Three AIV tasks and two placeholders on the Fake Core lane. The flows, bound as the importer binds
    them, run A → F1 → B → C, and a last flow from C back to A: a cycle through the placeholder lane, its
    closing arrow back in time. A flow from B to itself, one from F2 to an empty thread."""
    def thread(tid: int, name: str) -> dict[str, Any]:
        return {"args": {"name": name}, "cat": "__metadata", "name": "thread_name", "ph": "M", "pid": 1, "tid": tid}

    def task(tid: int, task_id: int, start: float, dur: float) -> dict[str, Any]:
        return {"args": {"event-hint": f"Task:[0-1-{task_id}], rootHash:1, callOpMagic:{task_id}, leafHash:77, "
                                       f"TaskId:{task_id}", "taskId": task_id, "seqNo": 0, "color": ""},
                "cat": "event", "id": task_id, "name": f"0-1-{task_id}-82-3()", "ph": "X", "pid": 1, "tid": tid,
                "ts": BASE + start, "dur": dur}

    def flow(fid: int, src: int, src_ts: float, dst: int, dst_ts: float) -> list[dict[str, Any]]:
        c = {"cat": "machine-view-last-dep", "id": fid, "name": "machine-view-last-dep", "pid": 1}
        return [{**c, "ph": "s", "tid": src, "ts": BASE + src_ts}, {**c, "bp": "e", "ph": "f", "tid": dst,
                                                                     "ts": BASE + dst_ts}]
    fake, aiv0, aiv1, aiv2 = 1000, 1050, 1052, 1054
    ev = [{"args": {"name": "Machine View"}, "cat": "__metadata", "name": "process_name", "ph": "M", "pid": 1},
          thread(fake, "Fake Core_0"), thread(aiv0, "AIV_25"), thread(aiv1, "AIV_26"), thread(aiv2, "AIV_27")]
    ev += [task(aiv0, 1, 0.0, 4.0), task(fake, 10, 4.5, 1.0), task(aiv1, 31, 6.0, 3.0), task(aiv0, 111, 9.5, 2.0),
           task(fake, 12, 20.0, 1.0)]
    ev += flow(1, aiv0, 3.9, fake, 4.5) + flow(2, fake, 5.4, aiv1, 6.0) + flow(3, aiv1, 8.9, aiv0, 9.5)
    ev += flow(4, aiv0, 11.4, aiv0, 0.0)  # C → A: back in time, closes the cycle
    ev += flow(5, aiv1, 7.0, aiv1, 6.0)  # B → B
    ev.append({"ph": "C", "name": "ReadyCount_AIV", "pid": 1, "tid": 1, "ts": BASE, "args": {"size": 1}})
    return {"traceEvents": ev}


def test_a_merged_trace_whose_flows_form_a_cycle_opens_and_says_what_it_did_not_follow(tmp_path: Path) -> None:
    path = tmp_path / "merged_swimlane.json"
    path.write_text(json.dumps(_cyclic_merged_doc(), indent=4))
    sl = load_any(path)
    names = {t.id: t.name for t in sl.tasks}
    m = metrics(sl)
    assert [names[i] for i in m.critical_path] == ["1", "10", "31", "111"]
    assert abs(m.critical_path_us - (4.0 + 3.0 + 2.0)) < 1e-6  # the placeholder counts 0 µs
    assert m.ignored_arrows == 1 and m.makespan == 11.5
    assert sl.ignored == ["1 dependency arrows run back in time (the predecessor starts after its successor, or "
                          "with it and ends later; 1 of them close a cycle): kept and drawn, not followed by the "
                          "critical path"]
    assert "1 dependency arrows from a task to itself" in sl.dropped
    assert json.loads(json.dumps(sl.to_json()))["info"]["ignored"] == sl.ignored
    # what a user runs: `pypto-ide open FILE` in its own process (a walk that never ended would hang it: the
    # timeout turns that into a failure, not a measure of speed)
    out = subprocess.run([sys.executable, "-m", "pypto.cli", "open", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "critical path 9.00 µs" in out.stdout and "not followed (1):" in out.stdout
    assert "1 dependency arrows run back in time" in out.stdout and "1 of them close a cycle" in out.stdout
