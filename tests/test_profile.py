"""Profiling wired through: `pypto-ide profile` (a real subprocess), `runtime_debug_mode`, and the bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

import pypto
from pypto.boards.importers import load_merged_swimlane
from pypto.boards.profile import bottleneck
from pypto.boards.swimlane import Lane, LaneTask, Swimlane, metrics
from pypto.boards.trace import validate_chrome_trace
from pypto.cli import main

REPO = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "pypto-ide"
SOFTMAX = REPO / "examples" / "softmax.py"


def test_profile_softmax_in_a_subprocess_prints_the_summary_and_writes_a_valid_trace(tmp_path):
    out = tmp_path / "soft.json"
    p = subprocess.run([str(CLI), "profile", str(SOFTMAX), "--trace", str(out)], capture_output=True, text=True,
                       timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    for needle in ("board sim", "simulated", "makespan", "utilization", "bound:", "slowest tasks", "softmax.py:3"):
        assert needle in p.stdout
    doc = json.loads(out.read_text())
    assert validate_chrome_trace(doc) == []
    names = {e["args"]["name"] for e in doc["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert "AIV_0" in names


def test_profile_on_the_cpu_board_is_measured_and_two_tile_shapes_differ(tmp_path, capsys):
    assert main(["profile", str(SOFTMAX), "--board", "cpu", "--workers", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["board"] == "cpu" and doc["run"]["clock"].startswith("measured on this machine")
    assert {ln["name"] for ln in doc["run"]["lanes"]} == {"CPU_0", "CPU_1"}


def test_profile_writes_pypto_merged_swimlane_that_reads_back(tmp_path, capsys):
    out = tmp_path / "merged_swimlane.json"
    assert main(["profile", str(SOFTMAX), "--trace", str(out), "--format", "merged"]) == 0
    back = load_merged_swimlane(out)
    assert len(back.tasks) > 0 and all(ln.name.startswith(("AIC_", "AIV_")) for ln in back.lanes)


def test_profile_reports_a_kernel_error_at_its_line_and_goes_on(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text("import pypto\n\n@pypto.jit\ndef k(x: pypto.Tensor([8, 8], pypto.DT_FP32)):\n"
                    "    pypto.set_vec_tile_shapes(8)\n    return pypto.exp(x)\n")
    assert main(["profile", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:5: error:" in err and "needs at least 2 entries" in err  # at the tile-shape call


def test_runtime_debug_mode_writes_the_swimlane_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @pypto.jit(debug_options={"runtime_debug_mode": 1}, runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.exp(x) + 1.0

    x = torch.randn(64, 128)
    out = torch.empty_like(x)
    k(x, out)
    torch.testing.assert_close(out, torch.exp(x) + 1)  # values from the functional executor
    files = sorted(p.name for p in (tmp_path / "output").glob("k_*/*.json"))
    assert files == ["merged_swimlane.json", "swimlane.json", "trace.json"]
    trace = json.loads(next((tmp_path / "output").glob("k_*/trace.json")).read_text())
    assert validate_chrome_trace(trace) == []


def _lanes(n: int) -> tuple[Lane, ...]:
    return tuple(Lane(f"AIV_{i}", "AIV") for i in range(n))


def test_the_bound_names_scheduling_dependency_or_the_busiest_pipe():
    chain = Swimlane("t", "hand", _lanes(2), tuple(LaneTask(i, 0, i, i + 1, preds=(i - 1,) if i else ())
                                                   for i in range(4)))
    assert bottleneck(chain)[0] == "dependency"
    starved = Swimlane("t", "hand", _lanes(4), tuple(LaneTask(i, i % 4, 10 * i, 10 * i + 1, ready=0.0)
                                                     for i in range(8)))
    assert metrics(starved).wait_scheduler > 0 and bottleneck(starved)[0] == "scheduling"
    # lanes waiting with nothing ready behind producers the scheduler held (ready at 0, started one by one): the
    # critical path (a producer and its consumer) is 3 % of the makespan, so the waits are the scheduler's doing
    # (the producers on AIC lanes, their consumers on AIV lanes: those wait with no task of theirs ready)
    lanes = tuple(Lane(f"AIC_{i}", "AIC") for i in range(4)) + _lanes(4)
    held = starved.tasks + tuple(LaneTask(8 + i, 4 + i % 4, 10 * i + 1, 10 * i + 2, preds=(i,)) for i in range(8))
    behind = Swimlane("t", "hand", lanes, held)
    m = metrics(behind)
    assert m.wait_dependency > m.wait_scheduler > 0 and m.critical_share < 0.1
    assert bottleneck(behind)[0] == "scheduling"
    # the same waits behind a chain as long as the run: dependency
    assert bottleneck(chain)[0] == "dependency" and metrics(chain).critical_share > 0.8
    busy = Swimlane("t", "hand", _lanes(2), (LaneTask(0, 0, 0, 10, profile=0), LaneTask(1, 1, 0, 10, profile=0)),
                    pipe_profiles=({"MTE2": [(0.0, 0.9)], "V": [(0.5, 0.6)]},))
    assert bottleneck(busy)[0] == "memory"
