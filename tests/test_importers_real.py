"""Real run outputs in each of their layouts (files written here, small, by hand): PyPTO's
merged_swimlane.json with its "Fake Core" lane, PyPTO 3.0 chip records with 64-bit task ids and
absolute core numbers, dyn_topo.txt in its 10-, 11- and 12-column layouts, malformed files, and
`pypto-ide open`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pypto.boards.importers import load_any, load_chip_swimlane, load_l1_prof, load_merged_swimlane
from pypto.boards.swimlane import PLACEHOLDER, Swimlane, metrics
from pypto.cli import main

# ---- merged_swimlane.json with a Fake Core lane ----------------------------------------------------------

BASE = 1000.0  # µs: real files start far from 0


def _thread(tid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "name": "thread_name", "pid": 7, "tid": tid, "args": {"name": name}}


def _slice(tid: int, task: int, start: float, end: float, leaf_hash: str = "900") -> dict[str, Any]:
    return {"ph": "X", "cat": "event", "pid": 7, "tid": tid, "ts": BASE + start, "dur": end - start,
            "name": f"0-0-{task}-0-0(label)",
            "args": {"event-hint": f"Task:[0-0-{task}], rootHash:5, callOpMagic:{task}, leafHash:{leaf_hash}, "
                                   f"TaskId:{task}", "taskId": task, "seqNo": 0, "color": "x"}}


def _arrow(fid: int, src_tid: int, src_end: float, dst_tid: int, dst_start: float) -> list[dict[str, Any]]:
    common = {"cat": "machine-view-last-dep", "name": "machine-view-last-dep", "pid": 7, "id": fid}
    return [{**common, "ph": "s", "tid": src_tid, "ts": BASE + src_end - 0.0001},
            {**common, "ph": "f", "bp": "e", "tid": dst_tid, "ts": BASE + dst_start}]


FAKE, AIC1, AIV2, AIV2B, AIV3, OTHER = 1000, 1004, 1006, 1007, 1008, 3000


def merged_doc() -> dict[str, Any]:
    """A (AIV_2, 0–4) → F1 (fake) → B (AIC_1, 10–20) → F2 (fake) → C (AIV_2, 30–35); F0 (fake, before
    everything) → A; D (AIC_1, 0–3) alone; E overlaps A on AIV_2's second thread. AIV_3 is idle."""
    ev: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "Machine View"}},
                                _thread(FAKE, "Fake Core_0"), _thread(AIC1, "AIC_1"), _thread(AIV2, "AIV_2"),
                                _thread(AIV2B, "AIV_2"), _thread(AIV3, "AIV_3"), _thread(OTHER, "Scheduler")]
    ev += [_slice(FAKE, 100, -1.0, 0.0), _slice(AIV2, 1, 0.0, 4.0), _slice(FAKE, 101, 9.0, 10.0),
           _slice(AIC1, 2, 10.0, 20.0, "901"), _slice(FAKE, 102, 29.0, 30.0), _slice(AIV2, 3, 30.0, 35.0),
           _slice(AIC1, 4, 0.0, 3.0, "901"), _slice(AIV2B, 5, 1.0, 2.0)]
    ev.append({"ph": "X", "pid": 7, "tid": OTHER, "ts": BASE, "dur": 2.0, "name": "poll"})
    ev += _arrow(1, FAKE, 0.0, AIV2, 0.0) + _arrow(2, AIV2, 4.0, FAKE, 9.0) + _arrow(3, FAKE, 10.0, AIC1, 10.0)
    ev += _arrow(4, AIC1, 20.0, FAKE, 29.0) + _arrow(5, FAKE, 30.0, AIV2, 30.0)
    ev.append({"cat": "machine-view-last-dep", "name": "x", "pid": 7, "id": 6, "ph": "s", "tid": AIV3,
               "ts": BASE + 50.0})  # on an empty lane: binds to no slice
    ev.append({"ph": "C", "name": "ReadyCount_AIV", "pid": 7, "ts": BASE, "args": {"value": 1}})
    return {"traceEvents": ev}


def _by_name(sl: Swimlane) -> dict[str, Any]:
    return {t.name: t for t in sl.tasks}


def test_the_fake_core_lane_is_kept_with_its_slices_and_the_arrows_through_it(tmp_path: Path) -> None:
    path = tmp_path / "merged_swimlane.json"
    path.write_text(json.dumps(merged_doc()))
    sl = load_any(path)
    assert [(ln.name, ln.core) for ln in sl.lanes] == [
        ("AIC_1", "AIC"), ("AIV_2", "AIV"), ("AIV_3", "AIV"), ("Fake Core_0", PLACEHOLDER)]
    t = _by_name(sl)
    assert len(sl.tasks) == 8
    assert {n for n, x in t.items() if sl.lanes[x.lane].name == "Fake Core_0"} == {"100", "101", "102"}

    def preds(name: str) -> set[str]:
        return {sl.tasks[p].name for p in t[name].preds}
    assert preds("1") == {"100"} and preds("101") == {"1"} and preds("2") == {"101"}
    assert preds("102") == {"2"} and preds("3") == {"102"} and preds("4") == set()
    m = metrics(sl)
    # the file's own chain A → F1 → B → F2 → C: 4 + 0 + 10 + 0 + 5 µs (placeholders take no time)
    assert [sl.tasks[i].name for i in m.critical_path] == ["100", "1", "101", "2", "102", "3"]
    assert m.critical_path_us == pytest.approx(19.0)
    assert m.placeholder_tasks == 3
    # the placeholder before the first real task does not stretch the run
    assert m.makespan == pytest.approx(35.0)
    busy = 4 + 10 + 5 + 3 + 1
    assert m.busy == pytest.approx(busy)
    assert (m.counted_lanes, m.active_lanes, m.total_lanes) == (3, 2, 4)
    assert m.utilization == pytest.approx(busy / (35.0 * 3))
    assert m.active_utilization == pytest.approx(busy / (35.0 * 2))
    assert "over 3 lanes" in m.utilization_basis and "2 ran tasks, of 4" in m.utilization_basis
    assert m.to_json()["utilization_lanes"] == {"counted": 3, "ran_tasks": 2, "total": 4,
                                                "basis": m.utilization_basis}
    assert {s.leaf for s in m.leaves} == {sl.tasks[0].leaf, t["2"].leaf, t["1"].leaf}  # no placeholder stats
    assert sum(s.count for s in m.leaves) == 5
    # what could not be placed is counted, never silently left out
    assert sl.dropped == ["1 slices on threads that are no core lane: 'Scheduler' (1)",
                          "1 flow arrow ends bind to no task slice (their dependencies are not imported)"]
    assert Swimlane.from_json(json.loads(json.dumps(sl.to_json()))).dropped == sl.dropped


def test_without_the_fake_lane_the_chain_breaks() -> None:
    """The same file with the Fake Core thread renamed to something else: the arrows through it are
    counted as dropped and the critical path is one task — what the importer gave before."""
    doc = merged_doc()
    doc["traceEvents"][1]["args"]["name"] = "Helper"
    sl = load_merged_swimlane(doc)
    assert "Helper" in sl.dropped[0] and sl.dropped[0].startswith("4 slices")
    assert metrics(sl).critical_path_us == pytest.approx(10.0)


def test_a_sim_swimlane_keeps_its_numbers_and_states_its_lanes() -> None:
    from pypto.boards.swimlane import Lane, LaneTask
    lanes = (Lane("AIC_0", "AIC"), Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"))
    sl = Swimlane("sim", "simulated", lanes, (LaneTask(0, 1, 0.0, 4.0), LaneTask(1, 1, 4.0, 6.0, preds=(0,))))
    m = metrics(sl)
    assert m.utilization == pytest.approx(6.0 / (6.0 * 2))  # AIV lanes only, as before
    assert (m.counted_lanes, m.active_lanes, m.total_lanes) == (2, 1, 3)
    assert m.critical_path == (0, 1) and m.critical_path_us == pytest.approx(6.0)
    assert m.utilization_basis == ("over 2 lanes (every lane of a core type that ran tasks; 1 ran tasks, of 3); "
                                   "100% over the 1 that ran tasks")


# ---- PyPTO 3.0 chip records ---------------------------------------------------------------------------------

T0, T1, T2 = 1 << 32, (1 << 32) + 1, (1 << 32) + 2
CHIP = {"chip_swimlane_level": 4,
        "metadata": {"clock_freq_hz": 50_000_000, "num_cores": 72, "core_types": ["aic"] * 24 + ["aiv"] * 48,
                     "core_to_thread": [0] * 72},
        # [core_id, task_id, row on its core, start, end, recv]; 50 cycles per µs
        "aicore_tasks": [[24, T0, 1, 1000, 1500, 990], [0, T1, 1, 1600, 2600, 1590], [1, T1, 1, 1600, 2100, 1590],
                         [26, str(T2), 1, 2700, 2800, 2690]],
        "aicpu_tasks": []}
DEPS = {"tasks": [{"task_id": str(x)} for x in (T0, T1, T2)],
        "edges": [{"pred": str(T0), "succ": str(T1)}, {"pred": str(T1), "succ": str(T2)},
                  {"pred": str(T2), "succ": "99999999999"}]}


def test_chip_records_keep_task_ids_and_absolute_core_numbers(tmp_path: Path) -> None:
    (tmp_path / "chip_swimlane_records.json").write_text(json.dumps(CHIP))
    (tmp_path / "deps.json").write_text(json.dumps(DEPS))
    sl = load_any(tmp_path)
    assert len(sl.lanes) == 72 and sl.lanes[0].name == "AIC_0" and sl.lanes[24].name == "AIV_24"
    assert [(t.name, sl.lanes[t.lane].name) for t in sl.tasks] == [
        (str(T0), "AIV_24"), (str(T1), "AIC_0"), (str(T1), "AIC_1"), (str(T2), "AIV_26")]
    assert [(t.start, t.end) for t in sl.tasks] == [(0.0, 10.0), (12.0, 32.0), (12.0, 22.0), (34.0, 36.0)]
    # both blocks of T1 wait for T0; T2 waits for both blocks
    assert [t.preds for t in sl.tasks] == [(), (0,), (0,), (1, 2)]
    m = metrics(sl)
    assert m.critical_path_us == pytest.approx(10 + 20 + 2)
    assert (m.counted_lanes, m.active_lanes, m.total_lanes) == (72, 4, 72)
    assert sl.dropped == ["1 edges of deps.json name a task with no record in chip_swimlane_records.json "
                          "(not imported)"]
    assert load_chip_swimlane(tmp_path / "chip_swimlane_records.json").dropped == []


# ---- tilefwk_L1_prof_data.json + dyn_topo.txt, every header layout -------------------------------------------

PROF = [{"blockIdx": 0, "coreType": "AIC", "tasks": [
            {"seqNo": 1, "taskId": 10, "leafIndex": 0, "execStart": 0, "execEnd": 500}]},
        {"blockIdx": 3, "coreType": "AIV", "tasks": [
            {"seqNo": 1, "taskId": 11, "leafIndex": 1, "execStart": 600, "execEnd": 700},
            {"seqNo": 1, "taskId": 13, "leafIndex": 1, "execStart": 800, "execEnd": 1000}]}]
# 10 → 11 → 12 (in the topology only: no times) → 13
ROWS = [(10, [11]), (11, [12]), (12, [13]), (13, [])]
OLD10 = "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,successors"
OLD11 = "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,successors"
NEW12 = "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,staticSuccCount,successors"


def _topo(layout: int, header: bool) -> str:
    lines = [{10: OLD10, 11: OLD11, 12: NEW12}[layout]] if header else []
    for task, succ in ROWS:
        head = f"1,{task},0,77,{task},0,5555,1,0"
        tail = "".join(f",{s}" for s in succ)
        if layout == 10:
            lines.append(f"{head},{tail}")  # the older writers: `psgId,` then `,succ` for each
        elif layout == 11:
            lines.append(f"{head},-1,{tail}")
        else:
            lines.append(f"{head},-1,{len(succ)}{tail}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("layout, header", [(10, True), (11, True), (12, True), (10, False), (11, False),
                                            (12, False)])
def test_every_dyn_topo_layout_is_read(tmp_path: Path, layout: int, header: bool) -> None:
    (tmp_path / "tilefwk_L1_prof_data.json").write_text(json.dumps(PROF))
    (tmp_path / "dyn_topo.txt").write_text(_topo(layout, header))
    sl = load_any(tmp_path / "tilefwk_L1_prof_data.json")
    assert [ln.name for ln in sl.lanes] == ["AIC_0", "AIV_3"]
    preds = {t.name: {sl.tasks[p].name for p in t.preds} for t in sl.tasks}
    assert preds == {"10": set(), "11": {"10"}, "13": {"11"}}  # 11 → 12 → 13 bridged through the untimed 12
    assert metrics(sl).critical_path_us == pytest.approx((500 + 100 + 200) / 50)
    assert sl.dropped == ["1 tasks of dyn_topo.txt have no times in tilefwk_L1_prof_data.json (PyPTO's Fake Core "
                          "tasks): not imported; the 2 dependencies through them are bridged (1 added between "
                          "the timed tasks they connect)"]


def test_a_dyn_topo_without_successors_column_is_named(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps(PROF))
    (tmp_path / "dyn_topo.txt").write_text("seqNo,taskId,rootIndex\n1,10,0\n")
    with pytest.raises(ValueError, match=r"dyn_topo.txt: line 1: a header without a successors column"):
        load_l1_prof(tmp_path / "p.json", tmp_path / "dyn_topo.txt")


# ---- malformed files ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, content, message", [
    ("merged_swimlane.json", "", "the file is empty"),
    ("merged_swimlane.json", b"\xff\xfe\x00garbage", "not a text file"),
    ("merged_swimlane.json", '{"traceEvents": [', "not valid JSON"),
    ("merged_swimlane.json", json.dumps({"traceEvents": [_thread(1, "Fake Core_0")]}), "no thread named AIC_<i>"),
    ("merged_swimlane.json", json.dumps({"traceEvents": [_thread(1, "AIV_0"), {**_slice(1, 1, 0, 1), "dur": "x"}]}),
     "dur is 'x'"),
    ("chip_swimlane_records.json", json.dumps({**CHIP, "aicore_tasks": [["core", 1, 1, 0, 5]]}), "core_id"),
    ("chip_swimlane_records.json", json.dumps({**CHIP, "aicore_tasks": [[0, 1, 1, 0, 1e400]]}), "end_cycles"),
    ("dyn_topo.txt", "1,2,3\n", "holds dependencies only"),
    ("trace.json", json.dumps({"hello": 1}), "not a swimlane format"),
])
def test_a_malformed_trace_names_the_file_and_the_problem(tmp_path: Path, name: str, content: str | bytes,
                                                          message: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(ValueError) as info:
        load_any(path)
    assert str(path) in str(info.value) and message in str(info.value), str(info.value)
    assert main(["open", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{path}: error: ") and message in err[0], err


def test_a_missing_trace_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["open", str(tmp_path / "nope.json")]) == 1
    assert capsys.readouterr().err.strip() == f"{tmp_path / 'nope.json'}: error: cannot read it (No such file or " \
                                              "directory)"


# ---- the command ----------------------------------------------------------------------------------------------

def _write_merged(tmp_path: Path) -> Path:
    path = tmp_path / "merged_swimlane.json"
    path.write_text(json.dumps(merged_doc()))
    return path


def test_open_prints_the_profile_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write_merged(tmp_path)
    out_trace = tmp_path / "out" / "trace.json"
    assert main(["open", str(path), "--top", "3", "--trace", str(out_trace)]) == 0
    out = capsys.readouterr().out
    for needle in ("board imported · imported from merged_swimlane.json", "makespan 35.00 µs",
                   "5 tasks on 2 of 4 lanes",
                   "utilization over 3 lanes (every lane of a core type that ran tasks; 2 ran tasks, of 4)",
                   "critical path 19.00 µs", "placeholder lane Fake Core_0: 3 tasks", "bound:", "slowest tasks:",
                   "task 2", "not imported (2):", "'Scheduler' (1)", f"wrote {out_trace}"):
        assert needle in out, (needle, out)
    slowest = out[out.index("slowest tasks:"):out.index("not imported")].strip().splitlines()[1:]
    assert len(slowest) == 3 and "AIC_1" in slowest[0] and "Fake" not in "".join(slowest)
    assert json.loads(out_trace.read_text())["traceEvents"]


def test_profile_and_report_given_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write_merged(tmp_path)
    assert main(["open", str(path)]) == 0
    opened = capsys.readouterr().out
    assert main(["profile", str(path)]) == 0
    assert capsys.readouterr().out == opened
    assert main(["report", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"{path}: error: a trace, not a kernel file: `pypto-ide open {path}` prints its summary"
    assert main(["compile", str(path)]) == 1
    assert "not a Python file; a trace opens with `pypto-ide open" in capsys.readouterr().err


def test_open_json_and_in_a_subprocess(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chip_swimlane_records.json").write_text(json.dumps(CHIP))
    (tmp_path / "deps.json").write_text(json.dumps(DEPS))
    assert main(["open", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["info"]["dropped"] and doc["metrics"]["utilization_lanes"]["ran_tasks"] == 4
    p = subprocess.run([sys.executable, "-m", "pypto.cli", "open", str(tmp_path / "chip_swimlane_records.json")],
                       capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    assert f"task {T0}" in p.stdout and "AIV_24" in p.stdout and "of 72)" in p.stdout
    bad = tmp_path / "bad" / "merged_swimlane.json"
    bad.parent.mkdir()
    bad.write_text("{")
    p = subprocess.run([sys.executable, "-m", "pypto.cli", "open", str(bad)], capture_output=True, text=True,
                       timeout=120, check=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr and p.stderr.startswith(f"{bad}: error: not valid JSON")


def test_the_text_trace_states_the_lanes_and_what_was_dropped() -> None:
    from pypto.boards.trace import text_trace
    text = text_trace(load_merged_swimlane(merged_doc()))
    assert "utilization 21.9% (AIC 37.1%, AIV 14.3%) over 3 lanes (every lane of a core type that ran tasks; " \
           "2 ran tasks, of 4)" in text
    assert "not imported: 1 slices on threads that are no core lane: 'Scheduler' (1)" in text
