"""PyPTO 3's own artefacts (issue 30 item 4): a run's `dfx_outputs/` opens as our swimlane, and a
`passes_dump/` folder reads as a pass table with diffs.

The fixtures in tests/data/pypto3_dfx and tests/data/pypto3_passes are hand-written from the runtime's
documented layouts (absolute cycle counters, a dependency cycle, a dummy task with no record, an edge
to an unknown task, an unstamped row, an AICPU stamp that joins nothing, an unknown field, a PMU row
for no task; a duplicate and a missing pass index, a file that is no snapshot).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.boards.dfx import load_dfx
from pypto.boards.importers import load_any
from pypto.boards.passes_dump import pass_table, read_passes_dump
from pypto.boards.swimlane import Swimlane, metrics
from pypto.cli import main
from server.analyze import load_trace

DATA = Path(__file__).parent / "data"
RUN = DATA / "pypto3_dfx" / "run_level4"  # a build_output folder: the files are in dfx_outputs/
LEVEL1 = DATA / "pypto3_dfx" / "level1"
PASSES = DATA / "pypto3_passes" / "compile_out"
A = 1 << 32  # ring 1, local 0


def test_level4_run_folder_reads_every_artefact() -> None:
    sl = load_any(RUN)
    assert sl.info["format"] == "pypto3-dfx" and sl.info["chip_swimlane_level"] == 4
    assert [ln.name for ln in sl.lanes] == ["AIC_0", "AIC_1", "AIV_2", "AIV_3", "AIV_4", "AIV_5"]
    # one box per aicore row with times (the SPMD task B twice), named <function>(<task id>) from
    # deps.json's kernel_ids and the name map; func 2 has no name
    assert [(t.name, sl.lanes[t.lane].name, t.leaf) for t in sl.tasks] == [
        (f"matmul({A})", "AIC_0", 0), (f"add({A + 1})", "AIV_2", 1), (f"add({A + 1})", "AIV_3", 1),
        (f"func_2({A + 2})", "AIV_4", 2), (f"matmul({A + 4})", "AIC_1", 0)]
    # absolute counters (1.2e13 cycles at 50 MHz) counted from the first start, exactly
    assert [(t.start, t.end) for t in sl.tasks] == [(0.0, 10.0), (12.0, 22.0), (12.0, 20.0), (24.0, 28.0),
                                                  (30.0, 38.0)]
    # C -> A closes the cycle A -> B -> C -> A; B -> D -> E is bridged over the dummy D
    assert [t.preds for t in sl.tasks] == [(3,), (0,), (0,), (1, 2), (1, 2)]
    m = metrics(sl)
    assert m.critical_path == (0, 1, 4) and m.critical_path_us == pytest.approx(28.0)
    assert m.ignored_arrows == 1
    assert sl.info["dispatch_us"] == pytest.approx([-0.4, 11.6, 11.8, 23.8, 29.6])
    assert sl.info["finish_us"] == pytest.approx([11.0, 23.0, 21.0, 28.4, 39.0])
    assert sl.info["leaf_names"] == {"0": "matmul", "1": "add"} and sl.info["orchestrator_name"] == "demo_orch"
    assert sl.info["sched_phases"] == {"dispatch": {"count": 2, "total_us": pytest.approx(0.6)},
                                       "complete": {"count": 1, "total_us": pytest.approx(0.2)}}
    assert sl.counters["sched_1"] == [(pytest.approx(11.6), 1.0), (pytest.approx(12.0), 0.0)]
    assert set(sl.counters) == {"sched_0", "sched_1", "orch_0"}
    pmu = sl.info["pmu"]
    assert pmu["columns"] == ["pmu_total_cycles", "vec_busy_cycles", "cube_busy_cycles", "mte2_busy_cycles"]
    assert pmu["tasks"] == {"0": [1000, 0, 800, 100], "1": [500, 250, 0, 50], "2": [400, 200, 0, 40],
                            "3": [200, 100, 0, 20]}
    assert sl.dropped == [
        "1 fields the documented layout does not have (not read): debug_extra",
        "1 aicore_tasks rows without times (start or end never stamped): not imported",
        "1 aicpu_tasks rows join no aicore_tasks row by (core_id, reg_task_id): not imported",
        "1 edges of deps.json name a task with no record in chip_swimlane_records.json (not imported)",
        "1 tasks of deps.json have no record in chip_swimlane_records.json (dummy or alloc tasks the AICPU "
        "retires, or records lost on the device): not drawn, the dependencies through them bridged",
        "1 rows of pmu.csv join no box by (core_id, task_id): not imported"]
    assert sl.ignored[0] == (f"3 dependency edges of deps.json lie on 1 cycle (e.g. {A} → {A + 1} → {A + 2} → {A}): "
                             "kept; the critical path follows only arrows forward in time")
    assert "1 of them close a cycle" in sl.ignored[1]
    # the records file, the dfx_outputs folder and the build folder open the same
    assert load_any(RUN / "dfx_outputs" / "chip_swimlane_records.json") == sl
    assert load_dfx(RUN / "dfx_outputs") == sl
    assert Swimlane.from_json(json.loads(json.dumps(sl.to_json()))).info["notes"] == sl.info["notes"]


def test_level1_has_no_aicpu_stamps_and_names_by_function_id() -> None:
    sl = load_any(LEVEL1)
    assert [(t.name, t.leaf, sl.lanes[t.lane].name) for t in sl.tasks] == [
        ("func_4(0)", 4, "AIV_1"), ("func_3(1)", 3, "AIC_0"), ("func_5(2)", 5, "AIV_1")]  # aiv1 when aiv0 is off
    assert [(t.start, t.end) for t in sl.tasks] == [(0.0, 1.0), (1.5, 3.5), (1.5, 2.0)]  # 1 GHz
    assert "dispatch_us" not in sl.info and sl.dropped == [] and sl.ignored == []
    assert sl.info["notes"] == ["chip swimlane level 1"]


def test_name_maps_for_another_level_or_several_are_not_guessed(tmp_path: Path) -> None:
    run = tmp_path / "dfx_outputs"
    shutil.copytree(RUN / "dfx_outputs", run)
    (run / "name_map_l3.json").write_text(json.dumps({"level": 3, "callable_id_to_name": {"0": "whole_chip"}}))
    assert load_any(tmp_path).tasks[0].name == f"matmul({A})"  # the level-2 map, the level-3 one set aside
    (run / "name_map_other.json").write_text(json.dumps({"level": 2, "callable_id_to_name": {"0": "QK"}}))
    sl = load_any(tmp_path)
    assert sl.tasks[0].name == f"func_0({A})"
    assert any(d.startswith("3 name maps beside the records, 2 of them for level 2") for d in sl.dropped)


def test_bad_side_files_name_themselves(tmp_path: Path) -> None:
    run = tmp_path / "dfx_outputs"
    shutil.copytree(RUN / "dfx_outputs", run)
    (run / "pmu.csv").write_text("core_id,task_id\n0,0x1\n")
    with pytest.raises(ValueError, match=r"pmu\.csv: no column thread_id"):
        load_any(tmp_path)
    (run / "pmu.csv").unlink()
    (run / "deps.json").write_text('{"edges": [{"pred": "1"}]}')
    with pytest.raises(ValueError, match=r"deps\.json: edge 0 has no 'succ'"):
        load_any(tmp_path)
    (run / "deps.json").unlink()
    doc = json.loads((run / "chip_swimlane_records.json").read_text())
    (run / "chip_swimlane_records.json").write_text(json.dumps({**doc, "chip_swimlane_level": 7}))
    with pytest.raises(ValueError, match="chip_swimlane_level is 7"):
        load_any(tmp_path)


def test_a_long_dependency_cycle_through_missing_tasks_terminates(tmp_path: Path) -> None:
    n = 3000
    rec = {"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 1000000, "num_cores": 1, "core_types": ["aiv"]},
           "aicore_tasks": [[0, "0", 1, 10, 20]], "aicpu_tasks": []}
    (tmp_path / "chip_swimlane_records.json").write_text(json.dumps(rec))
    # 0 -> 1 -> … -> n-1 -> 0, every task but 0 without a record
    edges = [{"pred": str(i), "succ": str((i + 1) % n)} for i in range(n)]
    (tmp_path / "deps.json").write_text(json.dumps({"tasks": [{"task_id": str(i)} for i in range(n)],
                                                    "edges": edges}))
    sl = load_any(tmp_path)
    assert len(sl.tasks) == 1 and sl.tasks[0].preds == ()  # bridged onto itself: an arrow to itself, dropped
    assert sl.ignored[0].startswith(f"{n} dependency edges of deps.json lie on 1 cycle")
    assert "1 dependency arrows from a task to itself" in sl.dropped


def test_open_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["open", str(RUN)]) == 0
    out = capsys.readouterr().out
    assert f"task matmul({A})" in out and "AIC_0" in out
    assert "from the run's files:\n    chip swimlane level 4\n" in out
    assert "AICPU dispatch → AICore start (pickup): avg 0.320 µs, max 0.400 µs over 5 tasks" in out
    assert "function names from name_map_TestDemo_case1.json: 2 of the 3 functions run (no name for 2)" in out
    assert "PMU (event type 2): 4 of 5 boxes" in out and "AIC vec 0%, cube 80%, mte2 10%" in out
    assert "not imported (6):" in out and "not followed (2):" in out


def test_pypto_ide_open_in_a_subprocess() -> None:
    p = subprocess.run([sys.executable, "-m", "server.cli", "open", str(RUN)], capture_output=True, text=True,
                       timeout=120, check=False, cwd=Path(__file__).parent.parent)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"{RUN}  (pypto3-dfx, 5 tasks, 6 lanes)")


@pytest.mark.parametrize("path", [RUN, RUN / "dfx_outputs", RUN / "dfx_outputs" / "chip_swimlane_records.json"])
def test_the_trace_loading_path_of_the_panels_accepts_the_folder_and_the_file(path: Path) -> None:
    # server.analyze.load_trace is the job pypto/loadTrace (LSP) and /api/v1/traces/swimlane (HTTP) run
    out = load_trace(str(path))
    assert "error" not in out, out
    run = out["run"]
    assert run["schema"] == "pypto-ide/swimlane" and run["info"]["format"] == "pypto3-dfx"
    assert run["tasks"]["name"][0] == f"matmul({A})" and run["metrics"]["makespan_us"] == pytest.approx(38.0)


def test_the_trace_loading_path_says_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "chip_swimlane_records.json").write_text('{"chip_swimlane_level": 1, "metadata": {}}')
    out = load_trace(str(tmp_path))
    assert out["error"].endswith("metadata has no 'clock_freq_hz'")


# ---- passes_dump/ ---------------------------------------------------------------------------------------------

def test_passes_dump_reads_in_order_and_says_what_it_skipped() -> None:
    dump = read_passes_dump(PASSES)  # the build folder: its passes_dump/ is found
    assert [(s.index, s.name) for s in dump.snapshots] == [
        (0, "frontend"), (1, "ConvertToSSA"), (2, "FlattenCallExpr"), (3, "OutlineIncoreScopes"),
        (5, "FuseScalarOps")]
    assert dump.snapshots[3].log is not None and dump.snapshots[2].log is None
    assert [(a, r) for _, a, r in dump.rows()] == [(0, 0), (3, 3), (0, 0), (6, 3), (1, 1)]
    assert dump.ignored == [
        "3_after_SecondWriter.py: index 03 already taken by 03_after_OutlineIncoreScopes.py (not read)",
        "no snapshot numbered 04: the diffs there span more than one pass",
        "1 file that is no snapshot (not read): notes.txt"]
    assert dump.diff(2) == ""
    diff = dump.diff(5).splitlines()
    assert diff[:2] == ["--- 03_after_OutlineIncoreScopes.py", "+++ 05_after_FuseScalarOps.py"]
    assert [ln for ln in diff if ln[:1] in "+-" and ln[:3] not in ("---", "+++")] == [
        "-    t_0 = mul(x, 2.0)", "+    t_0 = muls(x, 2.0)"]
    with pytest.raises(ValueError, match="no snapshot 04"):
        dump.diff(4)
    with pytest.raises(ValueError, match="the first snapshot"):
        dump.diff(0)
    table = pass_table(dump).splitlines()
    assert table[3].split() == ["01", "ConvertToSSA", "7", "+3", "-3"]
    assert table[4].split() == ["02", "FlattenCallExpr", "7", "no", "change"]
    assert "1 warning line (03_after_OutlineIncoreScopes.log)" in table[5]


def test_passes_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["passes", str(PASSES)]) == 0
    out = capsys.readouterr().out
    assert "(5 snapshots)" in out and "OutlineIncoreScopes" in out and "not read (3):" in out
    assert main(["passes", str(PASSES / "passes_dump"), "--diff", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- 02_after_FlattenCallExpr.py\n+++ 03_after_OutlineIncoreScopes.py\n")
    assert "+def scale_add_incore_0(" in out
    assert main(["passes", str(PASSES), "--diff", "2"]) == 0
    assert capsys.readouterr().out == "02_after_FlattenCallExpr.py: no change against the snapshot before it\n"
    assert main(["passes", str(PASSES), "--diff", "9"]) == 1
    assert "no snapshot 09 (there are 00, 01, 02, 03, 05)" in capsys.readouterr().err
    assert main(["passes", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(f"{tmp_path}: error: no 00_frontend.py or NN_after_<Pass>.py")


def test_a_build_folder_and_the_older_file_name_are_traces_in_every_door(tmp_path: Path) -> None:
    """`profile DIR` (cli.is_trace) takes a build folder whose records are in dfx_outputs/, and the
    workspace's trace list (serve) knows the runtime's older file name."""
    from pypto.cli import is_trace
    from server.http_workspace import trace_kind

    assert is_trace(str(RUN)) and is_trace(str(LEVEL1))
    assert not is_trace(str(tmp_path))
    older = tmp_path / "l2_swimlane_records.json"
    shutil.copy(LEVEL1 / "chip_swimlane_records.json", older)
    assert trace_kind(older) == "chip-records"
