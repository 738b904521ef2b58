"""Swimlane exports and imports: Chrome traces that pass our validator, the validator catching
each kind of broken trace, the text form, and round trips through every PyPTO run-output format.

Swimlanes are built here (by hand, and by a small list schedule over the example kernels'
execute graphs with made-up durations), so these tests depend on no board."""

from __future__ import annotations

import copy
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support import example_records

from pypto.boards.importers import (
    CHIP_DEPS,
    CHIP_RECORDS,
    DYN_TOPO,
    L1_PROF,
    load_any,
    load_chip_swimlane,
    load_l1_prof,
    load_merged_swimlane,
    write_chip_swimlane,
    write_l1_prof,
)
from pypto.boards.swimlane import Lane, LaneTask, Swimlane, lane_names, ready_counters
from pypto.boards.trace import (
    FLOW_CAT,
    MERGED_FLOW_CAT,
    chrome_trace,
    merged_swimlane,
    text_trace,
    validate_chrome_trace,
    write_trace,
)
from pypto.record import CompileRecord

PROFILES = ({"MTE2": [(0.0, 0.3)], "V": [(0.2, 0.8)], "MTE3": [(0.7, 1.0)]},
            {"MTE2": [(0.0, 0.4)], "MTE1": [(0.1, 0.5)], "M": [(0.4, 0.9)], "FIX": [(0.85, 1.0)]})


@cache
def records() -> dict[str, CompileRecord]:
    return dict(example_records())


def schedule(record: CompileRecord, cores: dict[str, int] | None = None, tick: float = 0.02) -> Swimlane:
    """A list schedule of the record's execute graph: each task, in order, on the earliest-free lane
    of its core type once its preds are done; durations made up, multiples of `tick` µs."""
    lanes = lane_names(cores or {"AIC": 2, "AIV": 4})
    assert record.program.execute is not None
    free = [0.0] * len(lanes)
    end: dict[int, float] = {}
    tasks = []
    for t in record.program.execute.tasks:
        dur = tick * (25 + 5 * t.leaf + t.id % 7)
        ready = max((end[p] for p in t.preds), default=0.0)
        lane = min((i for i, ln in enumerate(lanes) if ln.core == t.core), key=lambda i: (max(free[i], ready), i))
        start = max(free[lane], ready)
        free[lane] = end[t.id] = start + dur
        tasks.append(LaneTask(t.id, lane, start, start + dur, t.leaf, t.coord, t.preds, ready,
                              0 if t.core == "AIV" else 1))
    return Swimlane("test", "made up (list schedule)", lanes, tuple(tasks), ready_counters(tasks, lanes), PROFILES)


def tiny() -> Swimlane:
    """Two AIV lanes and one AIC: back-to-back tasks, a dependency on the same lane, a zero-duration task."""
    lanes = (Lane("AIC_0", "AIC"), Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"))
    tasks = (LaneTask(0, 1, 0.0, 1.0, 0, (0, 0)),
             LaneTask(1, 2, 0.0, 0.5, 0, (0, 1)),
             LaneTask(2, 0, 1.0, 3.0, 1, (), (0, 1), 1.0),
             LaneTask(3, 1, 3.0, 4.0, 2, (1,), (2,), 3.0),
             LaneTask(4, 1, 4.0, 5.5, 2, (2,), (3,), 4.0),
             LaneTask(5, 2, 2.0, 2.0, 3, (), (1,), 0.5),
             LaneTask(6, 2, 5.5, 6.0, 3, (), (4, 5), 5.5))
    return Swimlane("test", "made up", lanes, tasks, ready_counters(tasks, lanes))


def cycles() -> Swimlane:
    """Times at cycle resolution (1.8 GHz), so no time is a round number of ns; CPU lanes."""
    lanes = lane_names({"CPU": 3})
    tasks, free = [], [0.0, 0.0, 0.0]
    for i in range(60):
        lane = i % 3
        dur = (1000 + 37 * i) / 1800.0
        preds = (i - 1,) if i else ()
        start = max(free[lane], tasks[-1].end if tasks else 0.0)
        tasks.append(LaneTask(i, lane, start, start + dur, i % 4, (), preds))
        free[lane] = start + dur
    return Swimlane("cpu", "measured on test", lanes, tuple(tasks))


def overlapping() -> Swimlane:
    """Bad data: two tasks of one lane overlap, one sits inside another, a consumer starts before its producer."""
    lanes = (Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"))
    tasks = (LaneTask(0, 0, 0.0, 2.0), LaneTask(1, 0, 1.0, 3.0), LaneTask(2, 0, 1.5, 1.8),
             LaneTask(3, 1, 0.5, 1.0, preds=(1,)), LaneTask(4, 1, 3.5, 4.0, preds=(0, 1, 2)))
    return Swimlane("test", "made up", lanes, tasks)


def empty() -> Swimlane:
    return Swimlane("test", "made up", lane_names({"AIV": 2}), ())


EXAMPLES = ("attention.attention_kernel", "softmax.softmax_kernel", "matmul.matmul_bt_bias_kernel")
NAMES = ("tiny", "cycles", "overlapping", "empty", *EXAMPLES)


def swimlanes() -> list[tuple[str, Swimlane]]:
    out = [("tiny", tiny()), ("cycles", cycles()), ("overlapping", overlapping()), ("empty", empty())]
    return out + [(name, schedule(records()[name])) for name in EXAMPLES]


def events(doc: dict[str, Any], ph: str) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e["ph"] == ph]


# ---- Chrome traces ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_chrome_trace_is_valid(name: str) -> None:
    sl = dict(swimlanes())[name]
    for pipes in (True, False):
        doc = chrome_trace(sl, pipes=pipes)
        assert validate_chrome_trace(doc) == []
        assert validate_chrome_trace(json.loads(json.dumps(doc))) == []
    assert doc["displayTimeUnit"] == "ns"
    threads = {e["tid"]: e["args"]["name"] for e in events(doc, "M") if e["name"] == "thread_name"}
    assert [threads[i + 1] for i in range(len(sl.lanes))] == [ln.name for ln in sl.lanes]
    xs = events(doc, "X")
    assert len(xs) == len(sl.tasks)
    for t, x in zip(sl.tasks, xs):
        assert x["cat"] == sl.lanes[t.lane].core and x["tid"] == t.lane + 1 and f"#{t.id}" in x["name"]
        assert x["args"]["task"] == t.id and x["args"]["preds"] == list(t.preds)
    sorts = {e["tid"]: e["args"]["sort_index"] for e in events(doc, "M") if e["name"] == "thread_sort_index"}
    assert [sorts[i + 1] for i in range(len(sl.lanes))] == sorted(sorts[i + 1] for i in range(len(sl.lanes)))


def test_chrome_trace_flows_and_counters() -> None:
    sl = tiny()
    doc = chrome_trace(sl)
    s, f = events(doc, "s"), events(doc, "f")
    edges = sum(len(t.preds) for t in sl.tasks)
    assert len(s) == len(f) == edges and len({e["id"] for e in s}) == edges
    assert all(e["cat"] == FLOW_CAT for e in s + f) and all(e["bp"] == "e" for e in f)
    by_id = {t.id: t for t in sl.tasks}
    for a, b in zip(s, f):  # s just before the producer's end, f at the consumer's start
        assert a["id"] == b["id"]
        consumer = next(t for t in sl.tasks if t.lane + 1 == b["tid"] and math.isclose(t.start, b["ts"]))
        producer = next(by_id[p] for p in consumer.preds if by_id[p].lane + 1 == a["tid"])
        assert producer.start <= a["ts"] <= producer.end and a["ts"] <= b["ts"]
    counters = {e["name"] for e in events(doc, "C")}
    assert counters == {"ReadyCount_AIC", "ReadyCount_AIV", "ReadyCount_Total"}


def test_chrome_trace_clamps_bad_data() -> None:
    doc = chrome_trace(overlapping())
    assert validate_chrome_trace(doc) == []
    clamped = [x for x in events(doc, "X") if "clamped_from" in x["args"]]
    assert [x["args"]["task"] for x in clamped] == [1, 2]
    assert clamped[0]["args"]["clamped_from"] == [1.0, 3.0]
    assert len(events(doc, "s")) == 3  # 1 -> 3 would point back in time: left out


def test_chrome_trace_pipes() -> None:
    sl = schedule(records()["attention.attention_kernel"])
    doc = chrome_trace(sl)
    names = {e["tid"]: e["args"]["name"] for e in events(doc, "M") if e["name"] == "thread_name"}
    pipe_threads = {tid: n for tid, n in names.items() if "." in n}
    assert {n.split(".")[1] for n in pipe_threads.values()} == {"MTE2", "V", "MTE3", "MTE1", "M", "FIX"}
    assert all(n.split(".")[0] in {ln.name for ln in sl.lanes} for n in pipe_threads.values())
    by_id = {t.id: t for t in sl.tasks}
    pipe_slices = [x for x in events(doc, "X") if x["tid"] in pipe_threads]
    assert len(pipe_slices) == sum(len(PROFILES[t.profile]) for t in sl.tasks)
    for x in pipe_slices:
        t = by_id[x["args"]["task"]]
        assert pipe_threads[x["tid"]] == f"{sl.lanes[t.lane].name}.{x['name']}"
        assert t.start - 1e-3 <= x["ts"] and x["ts"] + x["dur"] <= t.end + 1e-3
    assert not any("." in e["args"]["name"] for e in events(chrome_trace(sl, pipes=False), "M")
                   if e["name"] == "thread_name")


def test_chrome_trace_with_record_has_source_lines() -> None:
    for name, rec in records().items():
        sl = schedule(rec)
        doc = chrome_trace(sl, rec)
        assert validate_chrome_trace(doc) == [], name
        for x in events(doc, "X"):
            if x["cat"] in ("AIC", "AIV"):
                src = x["args"]["source"]
                assert src and all(re.fullmatch(r".+\.py:\d+", s) for s in src), (name, x)
                assert x["name"].startswith(f"leaf{x['args']['leaf']}:")
        json.dumps(doc)


def test_a_record_that_does_not_match_never_raises() -> None:
    small = records()["static_condition.bias_act_kernel"]  # 2 tasks
    sl = schedule(records()["softmax.softmax_kernel"])  # 256 tasks, other leaves
    for doc in (chrome_trace(sl, small), merged_swimlane(sl, small)):
        assert validate_chrome_trace(doc) == []
    text_trace(sl, small)
    broken = copy.copy(small)
    object.__setattr__(broken, "program", None)
    assert validate_chrome_trace(chrome_trace(sl, broken)) == []
    assert "leaf0" in text_trace(sl, broken)


# ---- the validator -----------------------------------------------------------------------------------

def _valid() -> dict[str, Any]:
    return chrome_trace(tiny())


def _first(doc: dict[str, Any], ph: str, **match: Any) -> dict[str, Any]:
    return next(e for e in doc["traceEvents"] if e["ph"] == ph and all(e.get(k) == v for k, v in match.items()))


def _drop(ph: str, key: str, **match: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        del _first(doc, ph, **match)[key]
    return mutate


def _set(ph: str, key: str, value: Any, **match: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        _first(doc, ph, **match)[key] = value
    return mutate


def _overlap(doc: dict[str, Any]) -> None:
    x = _first(doc, "X", tid=2)  # AIV_0's first task 0..1 µs; AIV_0's second starts at 3
    x["dur"] = 3.5


def _unpaired(doc: dict[str, Any]) -> None:
    doc["traceEvents"].remove(_first(doc, "f"))


def _twice(doc: dict[str, Any]) -> None:
    doc["traceEvents"].append(dict(_first(doc, "s")))


def _backwards(doc: dict[str, Any]) -> None:
    s = _first(doc, "s")
    f = _first(doc, "f", id=s["id"])
    s["ts"], f["ts"] = f["ts"], s["ts"]


def _outside(doc: dict[str, Any]) -> None:
    _first(doc, "f")["ts"] = 100.0


def _wrong_thread(doc: dict[str, Any]) -> None:
    _first(doc, "s")["tid"] = 99


def _counter_text(doc: dict[str, Any]) -> None:
    _first(doc, "C")["args"] = {"value": "3"}


def _counter_nan(doc: dict[str, Any]) -> None:
    _first(doc, "C")["args"] = {"value": math.nan}


@pytest.mark.parametrize("mutate, problem", [
    (_drop("X", "name"), "missing 'name'"),
    (_drop("X", "ts"), "missing 'ts'"),
    (_drop("X", "dur"), "missing 'dur'"),
    (_drop("X", "pid"), "missing 'pid'"),
    (_drop("X", "tid"), "missing 'tid'"),
    (_set("X", "dur", -1.0), "not a finite number >= 0"),
    (_set("X", "ts", "0.5"), "ts '0.5' is not a finite number"),
    (_set("X", "ts", math.inf), "ts inf is not a finite number"),
    (_set("X", "pid", 1.5), "pid 1.5 is not an int or string"),
    (_set("M", "name", "thread_title", name="thread_name"), "unknown metadata name"),
    (_drop("M", "args", name="thread_name"), "missing 'args'"),
    (_set("M", "args", {"title": "AIV_0"}, name="thread_name"), "args.name must be a string"),
    (_set("M", "args", {"sort_index": "1"}, name="thread_sort_index"), "args.sort_index must be a number"),
    (_drop("C", "name"), "missing 'name'"),
    (_drop("C", "ts"), "missing 'ts'"),
    (_set("C", "args", {}), "a counter needs args"),
    (_counter_text, "counter value 'value' = '3' is not a finite number"),
    (_counter_nan, "counter value 'value' = nan"),
    (_drop("s", "id"), "missing 'id'"),
    (_drop("s", "cat"), "missing 'cat'"),
    (_drop("f", "ts"), "missing 'ts'"),
    (_drop("f", "tid"), "missing 'tid'"),
    (_drop("f", "name"), "missing 'name'"),
    (_set("f", "bp", "x"), "'bp' is only allowed"),
    (_set("s", "id", 1.5), "id 1.5 is not an int or string"),
    (_set("X", "ph", "Q"), "unknown phase"),
    (_overlap, "without nesting"),
    (_unpaired, "0 'f' events"),
    (_twice, "2 's' and 1 'f'"),
    (_backwards, "after it finishes"),
    (_outside, "is not inside a slice"),
    (_wrong_thread, "is not inside a slice"),
])
def test_validator_catches(mutate: Any, problem: str) -> None:
    doc = _valid()
    assert validate_chrome_trace(doc) == []
    mutate(doc)
    problems = validate_chrome_trace(doc)
    assert any(problem in p for p in problems), problems


def test_validator_documents() -> None:
    assert validate_chrome_trace(_valid()["traceEvents"]) == []  # the JSON array form
    assert validate_chrome_trace({"traceEvents": []}) == []
    assert validate_chrome_trace({"events": []}) == ["'traceEvents' is missing or not a list"]
    assert "not str" in validate_chrome_trace("trace")[0]
    assert "displayTimeUnit" in validate_chrome_trace({"traceEvents": [], "displayTimeUnit": "us"})[0]
    assert "not a JSON object" in validate_chrome_trace({"traceEvents": [1]})[0]
    nested = {"traceEvents": [  # nested slices and touching ones are fine; an f without bp binds to the next slice
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 3},
        {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 5, "dur": 5},
        {"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": 10, "dur": 0},
        {"ph": "X", "name": "e", "pid": 1, "tid": 2, "ts": 20, "dur": 1},
        {"ph": "s", "name": "x", "cat": "c", "id": "a", "pid": 1, "tid": 1, "ts": 9},
        {"ph": "f", "name": "x", "cat": "c", "id": "a", "pid": 1, "tid": 2, "ts": 15}]}
    assert validate_chrome_trace(nested) == []


# ---- text ----------------------------------------------------------------------------------------------

def test_text_trace() -> None:
    sl = schedule(records()["softmax.softmax_kernel"])
    text = text_trace(sl, records()["softmax.softmax_kernel"], max_tasks_per_lane=5)
    head = text.splitlines()[:5]
    assert head[0] == "swimlane: board test; clock made up (list schedule)"
    assert "256 tasks on 6 lanes (AIC 2, AIV 4); makespan" in head[1]
    assert head[2].startswith("utilization ") and "AIV" in head[2]
    assert head[3].startswith("critical path ") and "% of makespan" in head[3]
    assert "waiting for dependencies" in head[4] and "waiting for the scheduler" in head[4]
    assert "softmax.py:" in text  # the leaf's source lines
    assert text.count("… 59 more") == 4  # 256 tasks on 4 AIV lanes, 5 shown per lane
    assert "2 idle lanes: AIC_0, AIC_1" in text
    lane_block = text[text.index("AIV_0:"):].splitlines()
    assert lane_block[0].startswith("AIV_0: utilization ") and lane_block[0].endswith("64 tasks")
    assert re.fullmatch(r"  #\d+ leaf0:\S+ \d+\.\d{3}–\d+\.\d{3} µs \(\d+\.\d{3}\) softmax\.py:\d+", lane_block[1])
    assert "1 task" in text_trace(Swimlane("t", "c", (Lane("AIV_0", "AIV"),), (LaneTask(0, 0, 0.0, 1.0),)))
    assert "0 tasks" in text_trace(empty())


def test_write_trace(tmp_path: Path) -> None:
    sl = tiny()
    assert validate_chrome_trace(json.loads(write_trace(sl, tmp_path / "t.json").read_text())) == []
    merged = json.loads(write_trace(sl, tmp_path / "m.json", fmt="merged").read_text())
    assert validate_chrome_trace(merged) == []
    assert write_trace(sl, tmp_path / "t.txt", fmt="text").read_text() == text_trace(sl)
    with pytest.raises(ValueError, match="unknown trace format"):
        write_trace(sl, tmp_path / "x", fmt="svg")


# ---- merged_swimlane.json ---------------------------------------------------------------------------------

NAME_RE = re.compile(r"(\d+)-(.+)-(\d+)-(\d+)-(\d+)\((.*)\)")


def test_merged_swimlane_format() -> None:
    rec = records()["attention.attention_kernel"]
    sl = schedule(rec)
    doc = merged_swimlane(sl, rec)
    assert validate_chrome_trace(doc) == []
    json.dumps(doc)
    assert {e["args"]["name"] for e in events(doc, "M") if e["name"] == "process_name"} == {"Machine View"}
    xs = events(doc, "X")
    leaf_hashes = {lf.id: lf.hash for lf in rec.program.leaves or ()}
    for t, x in zip(sl.tasks, xs):
        m = NAME_RE.fullmatch(x["name"])
        assert m and int(m.group(3)) == t.id and m.group(2) == f"attention_kernel_leaf{t.leaf}", x["name"]
        a = x["args"]
        assert a["taskId"] == t.id and a["seqNo"] == 0
        assert f"leafHash:{leaf_hashes[t.leaf]}" in a["event-hint"] and f"TaskId:{t.id}" in a["event-hint"]
        assert "rootHash:" in a["event-hint"] and "callOpMagic:" in a["event-hint"]
        assert a["ooperand-hint"] and "[" in a["ooperand-hint"] and "execution-hint" in a
    assert all(e["cat"] == MERGED_FLOW_CAT for e in events(doc, "s") + events(doc, "f"))
    assert {e["name"] for e in events(doc, "C")} == {"ReadyCount_AIC", "ReadyCount_AIV", "ReadyCount_Total"}
    plain = merged_swimlane(sl)  # no record: placeholders
    assert validate_chrome_trace(plain) == []
    assert all(NAME_RE.fullmatch(x["name"]) for x in events(plain, "X"))
    assert "leafHash:leaf0" in events(plain, "X")[0]["args"]["event-hint"]


# ---- round trips -------------------------------------------------------------------------------------------

def assert_same(orig: Swimlane, back: Swimlane, leaf: bool = True, tol: float = 1e-3,
                global_core_ids: bool = False) -> None:
    """`back` (imported) has `orig`'s tasks: same lanes, times (from 0), preds and leaves, matched by
    the original id kept in LaneTask.name; ids dense in start order. `global_core_ids`: lanes are
    numbered over all AI cores in lane order (chip records), not per core type."""
    assert back.board == "imported" and back.clock.startswith("imported from ")
    assert [t.id for t in back.tasks] == list(range(len(orig.tasks)))
    assert [(t.start, t.lane) for t in back.tasks] == sorted((t.start, t.lane) for t in back.tasks)
    want = [ln.name for ln in orig.lanes]
    if global_core_ids:
        want = [f"{ln.core}_{i}" for i, ln in enumerate(orig.lanes)]
    assert [ln.name for ln in back.lanes] == want
    assert back.dropped == []
    assert [ln.core for ln in back.lanes] == [ln.core for ln in orig.lanes]
    t0 = min((t.start for t in orig.tasks), default=0.0)
    by_name = {t.name: t for t in back.tasks}
    assert len(by_name) == len(orig.tasks)
    for t in orig.tasks:
        b = by_name[str(t.id)]
        assert b.lane == t.lane
        assert abs(b.start - (t.start - t0)) <= tol and abs(b.end - (t.end - t0)) <= tol, (t, b)
        assert sorted(int(back.tasks[p].name) for p in b.preds) == sorted(t.preds), (t, b)
        if leaf:
            assert b.leaf == t.leaf


def roundtrip_swimlanes() -> list[tuple[str, Swimlane]]:
    return [(n, s) for n, s in swimlanes() if n != "overlapping"]


@pytest.mark.parametrize("name", [n for n in NAMES if n != "overlapping"])
def test_merged_roundtrip(name: str, tmp_path: Path) -> None:
    sl = dict(swimlanes())[name]
    doc = json.loads(json.dumps(merged_swimlane(sl)))
    if not sl.tasks:
        back = load_merged_swimlane(doc)
        assert back.tasks == () and [ln.name for ln in back.lanes] == [ln.name for ln in sl.lanes]
        return
    back = load_merged_swimlane(doc)
    assert_same(sl, back)
    by_name = {t.name: t for t in back.tasks}
    for t in sl.tasks:
        assert by_name[str(t.id)].coord == t.coord
        assert (by_name[str(t.id)].ready is None) == (t.ready is None)
    counters = sl.counters or ready_counters(sl.tasks, sl.lanes)  # derived when the board recorded none
    assert set(back.counters) == set(counters)
    for k, series in counters.items():
        assert [v for _, v in back.counters[k]] == [v for _, v in series]
        assert all(abs(a - b) <= 1e-3 for (a, _), (b, _) in zip(back.counters[k], series))
    path = tmp_path / "merged_swimlane.json"
    path.write_text(json.dumps(merged_swimlane(sl)))
    assert_same(sl, load_merged_swimlane(path))
    assert_same(sl, load_any(path))
    assert load_any(path).clock == "imported from merged_swimlane.json"
    ours = tmp_path / "trace.json"  # our own Chrome trace reads back too (pipe sub-lanes are not cores)
    ours.write_text(json.dumps(chrome_trace(sl)))
    assert_same(sl, load_any(ours))


def test_merged_without_our_args() -> None:
    """A merged_swimlane.json as PyPTO writes it: task ids from taskId, leaves from leafHash, AICPU threads."""
    sl = tiny()
    doc = merged_swimlane(sl)
    for x in events(doc, "X"):
        for k in ("leafIndex", "coord", "ready"):
            del x["args"][k]
    doc["traceEvents"].append({"ph": "M", "name": "thread_name", "pid": 1, "tid": 50, "args": {"name": "AICPU-2"}})
    doc["traceEvents"].append({"ph": "X", "name": "sched", "pid": 1, "tid": 50, "ts": 7.0, "dur": 1.0,
                               "args": {"taskId": 99}})
    doc["traceEvents"].append({"ph": "M", "name": "thread_name", "pid": 1, "tid": 51, "args": {"name": "Other"}})
    doc["traceEvents"].append({"ph": "X", "name": "ignored", "pid": 1, "tid": 51, "ts": 0.0, "dur": 1.0})
    back = load_merged_swimlane(doc)
    assert [ln.name for ln in back.lanes] == ["AIC_0", "AIV_0", "AIV_1", "AICPU_2"]
    assert back.lanes[-1].core == "AICPU" and back.tasks[-1].name == "99" and back.tasks[-1].lane == 3
    leaf_of = {t.name: t.leaf for t in back.tasks}
    assert leaf_of["0"] == leaf_of["1"] != leaf_of["2"] and leaf_of["99"] == -1
    assert_same(sl, Swimlane(back.board, back.clock, back.lanes[:3], back.tasks[:-1]), leaf=False)


def test_l1_prof_roundtrip(tmp_path: Path) -> None:
    for name, sl in roundtrip_swimlanes():
        if any(ln.core == "CPU" for ln in sl.lanes):
            with pytest.raises(ValueError, match="CPU"):
                write_l1_prof(sl, tmp_path / name)
            continue
        prof, topo = write_l1_prof(sl, tmp_path / name)
        assert (prof.name, topo.name) == (L1_PROF, DYN_TOPO)
        cores = json.loads(prof.read_text())
        assert {c["coreType"] for c in cores} <= {"AIC", "AIV"} and len(cores) == len(sl.lanes)
        assert all(isinstance(t["execStart"], int) for c in cores for t in c["tasks"])
        back = load_l1_prof(prof, topo)
        assert_same(sl, back)
        assert back.clock == f"imported from {L1_PROF}"
        assert_same(sl, load_any(prof))  # finds dyn_topo.txt beside it
        assert_same(sl, load_any(prof.parent))
        if sl.tasks:
            assert all(t.preds == () for t in load_l1_prof(prof).tasks)  # without the topology: no deps


def test_l1_prof_ticks_and_renumbering(tmp_path: Path) -> None:
    cores = [{"blockIdx": 1, "coreType": "AIV", "tasks": [
        {"seqNo": 3, "leafIndex": 2, "taskId": 100, "execStart": 5000, "execEnd": 5100},
        {"seqNo": 3, "leafIndex": 2, "taskId": 7, "execStart": 5200, "execEnd": 5300}]},
        {"blockIdx": 0, "coreType": "AI-CPU", "tasks": [
            {"seqNo": 3, "leafIndex": 0, "taskId": 55, "execStart": 5050, "execEnd": 5150}]},
        {"blockIdx": 0, "coreType": "AIC", "tasks": []}]
    prof = tmp_path / L1_PROF
    prof.write_text(json.dumps(cores))
    topo = tmp_path / DYN_TOPO
    topo.write_text("3,100,0,0,0,2,0,AIV,0,0,2,7,55\n3,55,0,0,0,0,0,AI-CPU,0,0,1,7\n3,7,0,0,0,2,0,AIV,0,0,0\n")
    sl = load_l1_prof(prof, topo)
    assert [t.name for t in sl.tasks] == ["100", "55", "7"]
    assert [ln.name for ln in sl.lanes] == ["AIC_0", "AIV_1", "AICPU_0"]
    assert [(t.start, t.end) for t in sl.tasks] == [(0.0, 2.0), (1.0, 3.0), (4.0, 6.0)]  # 50 ticks per µs, from 0
    assert [t.preds for t in sl.tasks] == [(), (0,), (0, 1)]
    assert sl.tasks[0].leaf == 2 and sl.tasks[1].lane == 2
    fast = load_l1_prof(prof, None, ticks_per_us=100)
    assert [(t.start, t.end) for t in fast.tasks] == [(0.0, 1.0), (0.5, 1.5), (2.0, 3.0)]


def test_chip_swimlane_roundtrip(tmp_path: Path) -> None:
    for name, sl in roundtrip_swimlanes():
        if any(ln.core == "CPU" for ln in sl.lanes):
            with pytest.raises(ValueError, match="CPU"):
                write_chip_swimlane(sl, tmp_path / name)
            continue
        rec, deps = write_chip_swimlane(sl, tmp_path / name)
        assert (rec.name, deps.name) == (CHIP_RECORDS, CHIP_DEPS)
        edges = json.loads(deps.read_text())["edges"]
        assert all(isinstance(e["pred"], str) for e in edges)
        back = load_chip_swimlane(rec, deps)
        assert_same(sl, back, leaf=False, global_core_ids=True)
        assert back.clock == f"imported from {CHIP_RECORDS}"
        assert_same(sl, load_any(rec), leaf=False, global_core_ids=True)
        assert_same(sl, load_any(rec.parent), leaf=False, global_core_ids=True)


def test_chip_swimlane_details(tmp_path: Path) -> None:
    doc = {"metadata": {"num_cores": 3, "core_types": ["AIC", "AIV", "AIV"]},
           "aicore_tasks": [[2, "18446744073709551615", 9, 3600, 5400], [0, 5, "0x10", 1800, 3600]],
           "aicpu_tasks": [[1, 20, 0, 900]]}
    rec = tmp_path / CHIP_RECORDS
    rec.write_text(json.dumps(doc))
    (tmp_path / CHIP_DEPS).write_text(json.dumps({"tasks": [], "tensors": [], "edges": [
        {"pred": "20", "succ": "16"}, {"pred": "16", "succ": "18446744073709551615"}, {"pred": "1", "succ": "2"}]}))
    with pytest.raises(ValueError, match="clock_freq_hz"):
        load_chip_swimlane(rec)
    sl = load_chip_swimlane(rec, tmp_path / CHIP_DEPS, clock_hz=1.8e9)
    assert [ln.name for ln in sl.lanes] == ["AIC_0", "AIV_1", "AIV_2", "AICPU_1"]  # absolute core ids
    assert [t.name for t in sl.tasks] == ["20", "5", "18446744073709551615"]  # the runtime's task ids
    assert [sl.lanes[t.lane].name for t in sl.tasks] == ["AICPU_1", "AIC_0", "AIV_2"]
    assert [(round(t.start, 6), round(t.end, 6)) for t in sl.tasks] == [(0.0, 0.5), (1.0, 2.0), (2.0, 3.0)]
    assert [t.preds for t in sl.tasks] == [(), (0,), (1,)]
    assert sl.info["unmatched_edges"] == 1
    assert sl.dropped == [f"1 edges of {CHIP_DEPS} name a task with no record in {CHIP_RECORDS} (not imported)"]


def test_load_any_our_swimlane_json(tmp_path: Path) -> None:
    sl = schedule(records()["rope.rope_kernel"])
    path = tmp_path / "swimlane.json"
    path.write_text(json.dumps(sl.to_json()))
    assert load_any(path) == Swimlane.from_json(json.loads(path.read_text()))


# ---- malformed input ----------------------------------------------------------------------------------------

def _l1(tmp_path: Path, cores: Any, topo: str | None = None) -> Any:
    (tmp_path / L1_PROF).write_text(json.dumps(cores))
    if topo is not None:
        (tmp_path / DYN_TOPO).write_text(topo)
        return lambda: load_l1_prof(tmp_path / L1_PROF, tmp_path / DYN_TOPO)
    return lambda: load_l1_prof(tmp_path / L1_PROF)


def _chip(tmp_path: Path, doc: Any, deps: Any = None) -> Any:
    (tmp_path / CHIP_RECORDS).write_text(json.dumps(doc))
    if deps is not None:
        (tmp_path / CHIP_DEPS).write_text(deps if isinstance(deps, str) else json.dumps(deps))
        return lambda: load_chip_swimlane(tmp_path / CHIP_RECORDS, tmp_path / CHIP_DEPS)
    return lambda: load_chip_swimlane(tmp_path / CHIP_RECORDS)


def _merged(tmp_path: Path, doc: Any) -> Any:
    (tmp_path / "merged_swimlane.json").write_text(json.dumps(doc))
    return lambda: load_merged_swimlane(tmp_path / "merged_swimlane.json")


TASK = {"seqNo": 0, "leafIndex": 0, "taskId": 1, "execStart": 0, "execEnd": 10}
META = {"clock_freq_hz": 1.8e9, "num_cores": 1, "core_types": ["AIV"]}
THREAD = {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "AIV_0"}}


@pytest.mark.parametrize("make, file, message", [
    (lambda d: _l1(d, {"cores": []}), L1_PROF, "expected an array"),
    (lambda d: _l1(d, [{"coreType": "AIV", "tasks": []}]), L1_PROF, "core 0 has no 'blockIdx'"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "GPU", "tasks": []}]), L1_PROF, "coreType 'GPU'"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "AIV", "tasks": [{**TASK, "execEnd": None}]}]), L1_PROF,
     "execEnd is None"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "AIV", "tasks": [{**TASK, "execEnd": -5}]}]), L1_PROF,
     "ends"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "AIV", "tasks": [TASK, TASK]}]), L1_PROF, "appears twice"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "AIV", "tasks": [5]}]), L1_PROF, "expected an object"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "AIV", "tasks": [TASK]}], "0,1,0,0\n"), DYN_TOPO, "line 1"),
    (lambda d: _l1(d, [{"blockIdx": 0, "coreType": "AIV", "tasks": [TASK]}], "0,1,0,0,0,0,0,AIV,0,0,1,x\n"),
     DYN_TOPO, "successor"),
    (lambda d: _chip(d, {"aicore_tasks": []}), CHIP_RECORDS, "no 'metadata'"),
    (lambda d: _chip(d, {"metadata": {**META, "clock_freq_hz": 0}}), CHIP_RECORDS, "not positive"),
    (lambda d: _chip(d, {"metadata": META, "aicore_tasks": [[0, 1, 2]]}), CHIP_RECORDS, "aicore_tasks row 0"),
    (lambda d: _chip(d, {"metadata": META, "aicore_tasks": [[0, 1, 2, "a", 5]]}), CHIP_RECORDS, "start_cycles"),
    (lambda d: _chip(d, {"metadata": META, "aicpu_tasks": {"a": 1}}), CHIP_RECORDS, "aicpu_tasks is dict"),
    (lambda d: _chip(d, {"metadata": META, "aicore_tasks": []}, {"edges": {}}), CHIP_DEPS, "edges is dict"),
    (lambda d: _chip(d, {"metadata": META, "aicore_tasks": []}, "{oops"), CHIP_DEPS, "not valid JSON"),
    (lambda d: _chip(d, {"metadata": META, "aicore_tasks": []}, {"edges": [{"pred": "1"}]}), CHIP_DEPS,
     "no 'succ'"),
    (lambda d: _merged(d, {"traceEvents": {}}), "merged_swimlane.json", "traceEvents is dict"),
    (lambda d: _merged(d, {"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": 1}]}), "merged_swimlane.json",
     "no thread named AIC_<i>"),
    (lambda d: _merged(d, {"traceEvents": [THREAD, {"ph": "X", "pid": 1, "tid": 1, "ts": "abc", "dur": 1}]}),
     "merged_swimlane.json", "ts is 'abc'"),
    (lambda d: _merged(d, {"traceEvents": [THREAD, {"ph": "X", "pid": 1, "tid": 1, "ts": 0}]}),
     "merged_swimlane.json", "has no 'dur'"),
    (lambda d: _merged(d, [THREAD, "event"]), "merged_swimlane.json", "event 1 is str"),
])
def test_malformed_input_names_the_file(tmp_path: Path, make: Any, file: str, message: str) -> None:
    load = make(tmp_path)
    with pytest.raises(ValueError) as info:
        load()
    assert file in str(info.value) and message in str(info.value), str(info.value)


def test_load_any_malformed(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    for text, message in [("{not json", "not valid JSON"), ('{"a": 1}', "not a swimlane format"),
                          ('{"edges": []}', "dependencies only"),
                          ('{"schema": "pypto-ide/swimlane", "version": 1}', "malformed swimlane")]:
        bad.write_text(text)
        with pytest.raises(ValueError, match="x.json") as info:
            load_any(bad)
        assert message in str(info.value)
    with pytest.raises(ValueError, match="no chip_swimlane_records.json"):
        load_any(tmp_path)


def test_text_trace_lanes_window_and_bound() -> None:
    rec = records()["softmax.softmax_kernel"]
    sl = schedule(rec)
    text = text_trace(sl, rec, max_tasks_per_lane=1000)
    assert "critical path lines: softmax.py:" in text
    one = text_trace(sl, rec, lanes=["AIV_1"], max_tasks_per_lane=1000)
    assert "AIV_1: utilization" in one and "AIV_0:" not in one and "AIV_2:" not in one
    assert "AIV_0:" in text_trace(sl, rec, lanes=["AIV"]) and "AIV_3:" in text_trace(sl, rec, lanes=["AIV"])
    half = sl.tasks[len(sl.tasks) // 2].start
    early = text_trace(sl, rec, window=(0.0, half), max_tasks_per_lane=1000)
    late = [t for t in sl.tasks if t.start > half]
    assert late and f"#{late[-1].id} " not in early and f"in 0.000–{half:.3f} µs" in early
    small = text_trace(sl, rec, max_tasks_per_lane=1000, max_chars=2000)
    assert len(small) <= 2000 and small.splitlines()[-1].startswith("… truncated: ")
    assert text.startswith(small.rsplit("\n", 2)[0])  # what is kept is the start, unchanged


def test_text_trace_of_100k_tasks_stays_under_its_bound() -> None:
    from pypto.boards.trace import TEXT_TRACE_MAX_CHARS

    lanes = tuple(Lane(f"AIV_{i}", "AIV") for i in range(48))
    tasks = tuple(LaneTask(k, k % 48, (k // 48) * 1.0, (k // 48) * 1.0 + 0.9, leaf=k % 7) for k in range(100_000))
    sl = Swimlane("sim", "made up", lanes, tasks)
    every = text_trace(sl, max_tasks_per_lane=100_000)
    assert len(every) <= TEXT_TRACE_MAX_CHARS and every.splitlines()[-1].startswith("… truncated: ")
    assert len(text_trace(sl)) <= TEXT_TRACE_MAX_CHARS
    one = text_trace(sl, lanes=["AIV_5"], window=(10.0, 12.0), max_tasks_per_lane=100_000)
    assert one.count("\n  #") == 3 and "AIV_5: utilization 90.0%, 3 tasks" in one  # 0.9 of 1 µs per step
