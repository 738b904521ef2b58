"""`pypto-ide check`: the baseline gate passes unchanged kernels and fails regressions, in every format."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from support import sarif_schema

from pypto.cli import main

REPO = Path(__file__).resolve().parent.parent
KERNEL = textwrap.dedent('''
    import pypto


    @pypto.jit
    def soft(x: pypto.Tensor([256, 1024], pypto.DT_FP32), out: pypto.Tensor([256, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 1024)
        out[:] = pypto.softmax(x, -1)
''')


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "soft.py").write_text(KERNEL)
    assert main(["check", str(tmp_path / "kernels"), "--baseline", str(tmp_path / "ci" / "baseline.json"),
                 "--update-baseline"]) == 0
    return tmp_path


def _check(repo: Path, *extra: str) -> int:
    return main(["check", str(repo / "kernels"), "--baseline", str(repo / "ci" / "baseline.json"), *extra])


def test_the_baseline_keeps_each_kernels_figures_under_a_relative_key(repo):
    doc = json.loads((repo / "ci" / "baseline.json").read_text())
    assert doc["schema"] == "pypto-ide/baseline" and doc["version"] == 1
    fig = doc["kernels"]["../kernels/soft.py::soft"]
    assert fig["makespan_us"] > 0 and fig["precision_passed"] is True and fig["error_rules"] == []


def test_unchanged_kernels_pass_and_a_slower_tile_shape_fails(repo, capsys):
    assert _check(repo) == 0
    assert "1 passed, 0 regressed" in capsys.readouterr().out
    src = repo / "kernels" / "soft.py"
    src.write_text(src.read_text().replace("set_vec_tile_shapes(8, 1024)", "set_vec_tile_shapes(1, 64)"))
    assert _check(repo) == 1
    err = capsys.readouterr().err
    assert "regression: ../kernels/soft.py::soft: makespan" in err


def test_a_kernel_that_stops_compiling_is_a_regression(repo, capsys):
    src = repo / "kernels" / "soft.py"
    src.write_text(src.read_text().replace("set_vec_tile_shapes(8, 1024)", "set_vec_tile_shapes(8)"))
    assert _check(repo) == 1
    assert "does not compile" in capsys.readouterr().err


NOISY = KERNEL.replace("def soft", "def noisy").replace("set_vec_tile_shapes(8, 1024)", "set_vec_tile_shapes(1, 64)")
JENKINS_JUNIT = REPO / "tests" / "data" / "jenkins-junit-10.xsd"  # the schema Jenkins' xUnit plugin reads


@pytest.fixture()
def two(tmp_path: Path) -> Path:
    """Two kernel files, one with a health warning, and a baseline of both, written just now."""
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "soft.py").write_text(KERNEL)
    (tmp_path / "kernels" / "noisy.py").write_text(NOISY)  # a warning fires: tiles of 64 of a 1024-row
    assert main(["check", str(tmp_path / "kernels"), "--baseline", str(tmp_path / "ci" / "baseline.json"),
                 "--update-baseline", "--workers", "1", "--no-precision"]) == 0
    return tmp_path


def _gate(root: Path, fmt: str, *paths: str) -> tuple[int, Path]:
    out = root / f"out.{fmt}"
    code = main(["check", *(paths or [str(root / "kernels")]), "--baseline", str(root / "ci" / "baseline.json"),
                 "--workers", "1", "--no-precision", "--format", fmt, "-o", str(out)])
    return code, out


def _junit(path: Path) -> ET.Element:
    xmlschema.XMLSchema(str(JENKINS_JUNIT)).validate(str(path))
    return ET.parse(path).getroot()


def _sarif(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    jsonschema.Draft4Validator(sarif_schema()).validate(doc)
    return doc["runs"][0]["results"]


def test_a_baseline_just_written_passes_with_no_failure_though_warnings_fire(two):
    """The gate passes, and so do its files: no <failure>, no SARIF error — the health warnings are
    there, as <system-out> and SARIF warnings (softmax in tiles of (1, 64) has one)."""
    code, out = _gate(two, "junit")
    assert code == 0
    root = _junit(out)
    assert root.findall(".//failure") == [] and root.get("failures") == "0"
    outs = " ".join(e.text or "" for e in root.iter("system-out"))
    assert ": warning: " in outs  # the warnings are reported, not failed
    check = next(s for s in root.iter("testsuite") if s.get("name") == "check")
    assert sorted(c.get("name") for c in check.iter("testcase")) == ["../kernels/noisy.py::noisy",
                                                                     "../kernels/soft.py::soft"]
    assert int(root.get("tests", "0")) == sum(1 for _ in root.iter("testcase"))
    code, out = _gate(two, "sarif")
    assert code == 0
    results = _sarif(out)
    assert not [r for r in results if r["level"] == "error"]
    assert any(r["level"] == "warning" and r["properties"]["severity"] == "warning" for r in results)


@pytest.mark.parametrize("change, why", [("set_vec_tile_shapes(1, 64)", "makespan"),
                                         ("set_vec_tile_shapes(8)", "does not compile")])
def test_a_regression_is_exactly_its_failures(two, change, why):
    src = two / "kernels" / "soft.py"
    src.write_text(src.read_text().replace("set_vec_tile_shapes(8, 1024)", change))
    code, out = _gate(two, "junit")
    assert code == 1
    root = _junit(out)
    failures = [(suite.get("name"), case.get("name"), f.text or "") for suite in root.iter("testsuite")
                for case in suite.iter("testcase") for f in case.findall("failure")]
    assert len(failures) == 1 and root.get("failures") == "1"
    suite, case, text = failures[0]
    assert (suite, case) == ("check", "../kernels/soft.py::soft") and why in text
    code, out = _gate(two, "sarif")
    assert code == 1
    errors = [r for r in _sarif(out) if r["level"] == "error"]
    assert [r["ruleId"] for r in errors] == ["check.regression"] and why in errors[0]["message"]["text"]


def test_checking_one_file_reports_that_files_kernels_only(two, capsys):
    soft = str(two / "kernels" / "soft.py")
    for target in (soft, soft + "::soft"):
        code, out = _gate(two, "json", target)
        assert code == 0
        assert [k["kernel"] for k in json.loads(out.read_text())["kernels"]] == ["../kernels/soft.py::soft"]
    code, out = _gate(two, "text", soft)
    assert out.read_text().splitlines()[-1] == "1 passed, 0 regressed"
    # a kernel of the baseline under the paths checked that is gone: missing, neither passed nor failed
    (two / "kernels" / "noisy.py").unlink()
    code, out = _gate(two, "text")
    assert code == 0 and out.read_text().splitlines()[-1] == \
        "1 passed, 0 regressed, 1 missing (in the baseline, not found)"
    code, out = _gate(two, "junit")
    root = _junit(out)
    skipped = [c.get("name") for c in root.iter("testcase") if c.find("skipped") is not None]
    assert skipped == ["../kernels/noisy.py::noisy"] and root.findall(".//failure") == []


def _described(text: str) -> bool:
    """A --help text whose usage block is followed by a paragraph that is not the argument list."""
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    return len(paragraphs) > 1 and not paragraphs[1].lstrip().startswith(("positional arguments", "options"))


def test_every_command_describes_itself_in_its_help(capsys):
    from server.cli import CORE
    from server.cli import main as console

    for cmd in [*CORE, "serve", "mcp"]:
        with pytest.raises(SystemExit) as done:
            console([cmd, "--help"])
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert _described(text), f"`pypto-ide {cmd} --help` has no description:\n{text}"
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "regression gate" in capsys.readouterr().out


def test_bad_baselines_are_one_clear_error(repo, capsys, tmp_path):
    assert main(["check", str(repo / "kernels"), "--baseline", str(tmp_path / "missing.json")]) == 1
    assert "no baseline file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["check", str(repo / "kernels"), "--baseline", str(bad)]) == 1
    assert "not JSON" in capsys.readouterr().err
    bad.write_text(json.dumps({"schema": "other"}))
    assert main(["check", str(repo / "kernels"), "--baseline", str(bad)]) == 1
    assert "not a pypto-ide baseline" in capsys.readouterr().err


def test_the_ci_recipe_is_a_workflow_that_runs_the_gate_and_uploads_the_reports():
    import yaml

    wf = yaml.safe_load((REPO / "docs" / "ci" / "pypto-check.yml").read_text())
    steps = wf["jobs"]["check"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    assert all(part in runs for part in ("pypto-ide check", "--format junit", "--format sarif", "--format html"))
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    assert any(u.startswith("github/codeql-action/upload-sarif") for u in uses)


# ---- where the reports run: in this process, a local pool, a Dask cluster --------------------------------

HELPER = "ROWS = 8\nCOLS = 1024\n"
USES_HELPER = textwrap.dedent('''
    import pypto
    from helpers import COLS, ROWS


    @pypto.jit
    def scaled(x: pypto.Tensor([128, 1024], pypto.DT_FP32), out: pypto.Tensor([128, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(ROWS, COLS)
        out[:] = x * 2.0 + 1.0


    @pypto.jit
    def dies(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
        import os
        os._exit(3)
''')


@pytest.fixture()
def library(tmp_path: Path) -> Path:
    """Two kernel files, one importing a sibling module, plus a kernel that kills its process."""
    lib = tmp_path / "kernels"
    lib.mkdir()
    (lib / "soft.py").write_text(KERNEL)
    (lib / "helpers.py").write_text(HELPER)
    (lib / "scaled.py").write_text(USES_HELPER)
    return tmp_path


def _json_check(root: Path, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["check", str(root / "kernels"), "--baseline", str(root / "base.json"), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_a_local_pool_reports_what_one_process_reports(library, capsys):
    soft = str(library / "kernels" / "soft.py")
    scaled = str(library / "kernels" / "scaled.py") + "::scaled"
    assert main(["check", soft, scaled, "--baseline", str(library / "base.json"), "--update-baseline",
                 "--workers", "1"]) == 0
    one = json.loads((library / "base.json").read_text())
    assert set(one["kernels"]) == {"kernels/soft.py::soft", "kernels/scaled.py::scaled"}  # helpers.py imported
    assert main(["check", soft, scaled, "--baseline", str(library / "pool.json"), "--update-baseline",
                 "--workers", "2"]) == 0
    assert json.loads((library / "pool.json").read_text()) == one  # the sim board is deterministic
    # the whole folder on the pool: the kernel that calls os._exit costs its own report only
    capsys.readouterr()
    code, doc = _json_check(library, "--workers", "2", capsys=capsys)
    assert code == 1
    by = {k["kernel"]: k for k in doc["kernels"]}
    assert by["kernels/soft.py::soft"]["passed"] and by["kernels/scaled.py::scaled"]["passed"]
    assert "worker process died" in by["kernels/scaled.py::dies"]["current"]["error"]
    assert not by["kernels/scaled.py::dies"]["passed"]


def test_a_bad_executor_is_one_clear_error(library, capsys):
    for spec, says in (("ray://x", "one of local, dask://HOST:PORT"), ("dask://nohost", "dask://HOST:PORT")):
        assert main(["check", str(library / "kernels"), "--baseline", str(library / "b.json"), "--update-baseline",
                     "--executor", spec]) == 1
        assert says in capsys.readouterr().err
    assert main(["check", str(library / "kernels"), "--baseline", str(library / "b.json"), "--workers", "0"]) == 1
    assert "at least 1" in capsys.readouterr().err


def test_dask_missing_or_unreachable_is_one_clear_error(library, capsys, monkeypatch):
    import sys

    args = ["check", str(library / "kernels"), "--baseline", str(library / "b.json"), "--update-baseline",
            "--executor", "dask://127.0.0.1:1"]
    # a scheduler that does not answer (the real Client gives up after its 10 s timeout)
    monkeypatch.setattr("distributed.Client", lambda *a, **k: (_ for _ in ()).throw(OSError("Timed out")))
    assert main(args) == 1
    assert "error: no Dask scheduler at tcp://127.0.0.1:1: Timed out" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)  # not installed
    assert main(args) == 1
    assert "needs Dask: pip install 'pypto-ide[dask]'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def dask_cluster():
    """A Dask cluster of two worker processes on 127.0.0.1, started by the test (no dashboard)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=40)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close(timeout=20)


def test_the_same_work_runs_on_a_dask_cluster(library, dask_cluster, capsys):
    (library / "kernels" / "scaled.py").write_text(USES_HELPER.split("@pypto.jit\ndef dies")[0])
    where = "dask://" + dask_cluster.removeprefix("tcp://")
    assert main(["check", str(library / "kernels"), "--baseline", str(library / "local.json"), "--update-baseline",
                 "--workers", "1"]) == 0
    assert main(["check", str(library / "kernels"), "--baseline", str(library / "base.json"), "--update-baseline",
                 "--executor", where]) == 0
    assert json.loads((library / "base.json").read_text()) == json.loads((library / "local.json").read_text())
    capsys.readouterr()
    code, doc = _json_check(library, "--executor", where, capsys=capsys)
    assert code == 0 and doc["passed"] and len(doc["kernels"]) == 2
    src = library / "kernels" / "soft.py"  # a deliberate regression, found on the cluster
    src.write_text(src.read_text().replace("set_vec_tile_shapes(8, 1024)", "set_vec_tile_shapes(1, 64)"))
    code, doc = _json_check(library, "--executor", where, capsys=capsys)
    assert code == 1
    soft = next(k for k in doc["kernels"] if k["kernel"] == "kernels/soft.py::soft")
    assert any(r.startswith("makespan") for r in soft["regressions"])


_POOL_THREADS = """
import json, os, sys
from pypto.analysis.executors import LocalPool

def threads() -> dict:
    import torch
    return {"env": os.environ.get("OMP_NUM_THREADS"), "torch": torch.get_num_threads()}

if __name__ == "__main__":
    with LocalPool(int(sys.argv[1])) as pool:
        pool.starting.join()
        got = pool.pool.submit(threads).result()
    print(json.dumps({**got, "parent": os.environ.get("OMP_NUM_THREADS")}))
"""


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_pool_workers_share_the_cores_for_their_math_threads(tmp_path, workers):
    """Each of N workers gets cpu_count // N threads for OpenMP/BLAS/torch (at least 1): a pool
    whose workers each ran every core's worth of spinning BLAS threads was several times slower
    than one process. The parent's environment is left alone; a value the user set wins."""
    import os
    import subprocess
    import sys

    script = tmp_path / "pool_threads.py"
    script.write_text(_POOL_THREADS)
    math = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in math}
    run = subprocess.run([sys.executable, str(script), str(workers)], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    got = json.loads(run.stdout)
    share = max(1, (os.cpu_count() or 1) // workers)
    assert got == {"env": str(share), "torch": share, "parent": None}
    env["OMP_NUM_THREADS"] = "3"
    run = subprocess.run([sys.executable, str(script), str(workers)], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    got = json.loads(run.stdout)
    assert (got["env"], got["parent"]) == ("3", "3")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_each_folder_imports_its_own_sibling_module(tmp_path, workers):
    """Two folders of a library, each with its own helpers.py: each kernel is traced with its own
    folder's tile shape (tasks = 128 / ROWS), in one process or on the pool."""
    for folder, rows in (("a", 8), ("b", 32)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "helpers.py").write_text(f"ROWS = {rows}\nCOLS = 1024\n")
        (tmp_path / folder / "k.py").write_text(USES_HELPER.split("@pypto.jit\ndef dies")[0])
    base = tmp_path / "base.json"
    assert main(["check", str(tmp_path / "a"), str(tmp_path / "b"), "--baseline", str(base), "--update-baseline",
                 "--workers", workers, "--no-precision"]) == 0
    kernels = json.loads(base.read_text())["kernels"]
    assert {k: v["tasks"] for k, v in kernels.items()} == {"a/k.py::scaled": 128 // 8, "b/k.py::scaled": 128 // 32}
