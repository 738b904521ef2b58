"""The PyPTO 3 conformance harness (benchmarks/pypto3_conformance.py) judged on example programs written here,
so its own logic is tested without the upstream mirrors: which files are programs and which are skipped
(multi-card, no numeric check), how each runs (`-p a2a3sim`, the exported root's `golden` importable, our
pypto first on the path), and how each outcome is judged (passed, a mismatch, golden's FAIL line with exit 0,
a program that skips itself, a missing `pl` name, the time limit with the process group killed, the
memory cap), then the whole run from two git mirrors to the final figure and the JSON."""

from __future__ import annotations

import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "benchmarks" / "pypto3_conformance.py"


@pytest.fixture(scope="module")
def conf() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pypto3_conformance_under_test", HARNESS)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text).lstrip())


# A stand-in for our checkout: a `pypto` whose `pl` has `jit` and `Tensor` only, and a runtime with RunConfig.
def fake_tree(base: Path) -> Path:
    tree = base / "tree"
    write(tree, "pypto/__init__.py", "")
    write(tree, "pypto/language/__init__.py", "jit = object()\nclass Tensor: pass\n")
    write(tree, "pypto/runtime/__init__.py", "class RunConfig: pass\n")
    return tree


# pypto-lib's shape: a repo-local `golden` package the examples import, and `-p` on every example.
LIB_PROGRAMS = {
    "golden/__init__.py": """
        def run_jit(value, expected):
            ok = abs(value - expected) < 1e-6
            print(f"[RUN]   'out' {'PASS' if ok else 'FAIL'}")
            return ok
    """,
    "examples/beginner/ok.py": """
        import argparse
        import pypto.language as pl
        from pypto.runtime import RunConfig

        if __name__ == "__main__":
            from golden import run_jit
            parser = argparse.ArgumentParser()
            parser.add_argument("-p", "--platform", default="a2a3")
            args = parser.parse_args()
            assert args.platform == "a2a3sim", args.platform
            assert pl.Tensor is not None and RunConfig is not None
            raise SystemExit(0 if run_jit(1.0, 1.0) else 1)
    """,
    "examples/beginner/golden_fail_exit0.py": """
        if __name__ == "__main__":
            from golden import run_jit
            run_jit(1.0, 2.0)
    """,
    "examples/advanced/two_cards.py": """
        # ci: devices=2
        import pathlib, sys
        if __name__ == "__main__":
            pathlib.Path(sys.argv[0] + ".ran").write_text("ran")
            from golden import run_jit
            run_jit(1.0, 1.0)
    """,
    "examples/advanced/topk_draft.py": """
        if __name__ == "__main__":
            from golden import run_jit
    """,
}

PYPTO_PROGRAMS = {
    "examples/__init__.py": "",
    "examples/beginner/01_add.py": """
        import math

        def main():
            assert math.isclose(0.1 + 0.2, 0.3), "add mismatch"

        if __name__ == "__main__":
            main()
    """,
    "examples/beginner/02_mismatch.py": """
        import math
        if __name__ == "__main__":
            got, want = 1.0, 2.0
            assert math.isclose(got, want), f"mismatch: got {got} want {want}"
    """,
    "examples/models/03_missing_pl.py": """
        import pypto.language as pl
        from pypto.runtime import RunConfig, run

        @pl.jit.inline
        def kernel(x: pl.Tensor, y: pl.Level.CORE_GROUP):
            return pl.no_such_op(x)

        if __name__ == "__main__":
            import math
            assert math.isclose(kernel(1.0, 2.0), 1.0)
    """,
    "examples/runtime/04_needs_device.py": """
        import math
        if __name__ == "__main__":
            try:
                raise RuntimeError("no device")
            except RuntimeError as exc:
                print(f"skipped (needs a device): {exc}")
            else:
                assert math.isclose(1.0, 1.0)
    """,
    "examples/utils/print_ir.py": """
        if __name__ == "__main__":
            print("an IR listing; nothing is compared")
    """,
    "examples/distributed/01_ranks.py": """
        import math
        if __name__ == "__main__":
            assert math.isclose(1.0, 1.0)
    """,
    "examples/models/helper.py": "X = 1\n",
}


def lay_out(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        write(root, rel, text)
    return root


def by_file(programs: list) -> dict:
    return {Path(p.rel).name: p for p in programs}


def test_discovery_finds_entry_files_and_skips_multi_card_and_check_less_ones(conf: ModuleType,
                                                                                tmp_path: Path) -> None:
    lib = by_file(conf.discover("pypto-lib", lay_out(tmp_path / "lib", LIB_PROGRAMS)))
    assert sorted(lib) == ["golden_fail_exit0.py", "ok.py", "two_cards.py"]  # no draft, no golden/
    assert lib["ok.py"].args == ["-p", "a2a3sim"] and not lib["ok.py"].skip
    assert lib["golden_fail_exit0.py"].args == [] and not lib["golden_fail_exit0.py"].skip
    assert lib["two_cards.py"].skip == "multi-card (# ci: devices=2)"

    up = by_file(conf.discover("pypto", lay_out(tmp_path / "up", PYPTO_PROGRAMS)))
    assert sorted(up) == ["01_add.py", "01_ranks.py", "02_mismatch.py", "03_missing_pl.py",
                          "04_needs_device.py", "print_ir.py"]  # no __init__, no module without __main__
    assert not up["01_add.py"].skip  # the check is in main(), which __main__ calls
    assert up["01_ranks.py"].skip == "multi-card (distributed/)"
    assert up["print_ir.py"].skip.startswith("no numeric check")


def test_platform_argument_follows_the_programs_argparse(conf: ModuleType) -> None:
    assert conf.platform_args('p.add_argument("-p", "--platform")', "a2a3sim") == ["-p", "a2a3sim"]
    assert conf.platform_args("p.add_argument(\n  '--platform', default='a2a3')", "a5sim") == ["--platform", "a5sim"]
    assert conf.platform_args("cfg = RunConfig()", "a2a3sim") == []
    assert conf.multi_card("examples/runtime/x.py", "DistributedConfig(device_ids=[0], n=1)") == ""
    assert conf.multi_card("examples/runtime/x.py", "DistributedConfig(device_ids=[0, 1])").startswith("multi-card")
    assert conf.multi_card("examples/a/x.py", "import pypto.language.distributed as pld").startswith("multi-card")


def run_all(conf: ModuleType, root: Path, repo: str, tree: Path, **kw: object) -> dict:
    progs = conf.discover(repo, root)
    return {Path(p.rel).name: conf.run_program(p, tree, kw.get("timeout", 60.0), kw.get("memory_mb", 4096))
            for p in progs}


def test_outcomes_are_judged_by_the_programs_own_checks(conf: ModuleType, tmp_path: Path) -> None:
    tree = fake_tree(tmp_path)
    lib_root = lay_out(tmp_path / "lib", LIB_PROGRAMS)
    lib = run_all(conf, lib_root, "pypto-lib", tree)
    # -p a2a3sim given, golden imported from the exported root, our (fake) pypto imported
    assert lib["ok.py"].status == "passed", lib["ok.py"].tail
    assert lib["ok.py"].command == ["python", "examples/beginner/ok.py", "-p", "a2a3sim"]
    bad = lib["golden_fail_exit0.py"]
    assert (bad.status, bad.code, bad.key) == ("failed", 0, "mismatch")
    assert bad.reason == "exit 0 but printed a failure: [RUN]   'out' FAIL"
    two = lib["two_cards.py"]
    assert (two.status, two.code) == ("skipped", None)
    assert not (lib_root / "examples/advanced/two_cards.py.ran").exists()

    up = run_all(conf, lay_out(tmp_path / "up", PYPTO_PROGRAMS), "pypto", tree)
    assert up["01_add.py"].status == "passed"
    mm = up["02_mismatch.py"]
    assert (mm.status, mm.key, mm.reason) == ("failed", "mismatch", "AssertionError: mismatch: got 1.0 want 2.0")
    miss = up["03_missing_pl.py"]  # `run` is missing from pypto.runtime: the first error names it
    assert (miss.status, miss.key) == ("failed", "pypto.runtime.run"), miss.reason
    dev = up["04_needs_device.py"]
    assert dev.status == "skipped" and dev.reason == "the program skipped itself: skipped (needs a device): no device"
    assert up["print_ir.py"].status == "skipped" and up["print_ir.py"].code is None


def test_failure_keys_group_missing_names(conf: ModuleType) -> None:
    key = conf.failure_key
    assert key("AttributeError: module 'pypto.language' has no attribute 'spmd'") == "pl.spmd"
    assert key("AttributeError: module 'pypto.language.tile' has no attribute 'get_block_idx'") == \
        "pl.tile.get_block_idx"
    assert key("ImportError: cannot import name 'RunConfig' from 'pypto.runtime' (/x/runtime.py)") == \
        "pypto.runtime.RunConfig"
    assert key("ModuleNotFoundError: No module named 'pypto.backend'") == "missing module pypto.backend"
    assert key("AttributeError: type object 'Level' has no attribute 'CORE_GROUP'") == "Level.CORE_GROUP (attribute)"
    assert key("AttributeError: 'Jit' object has no attribute 'incore'") == "Jit.incore (attribute)"
    assert conf.refine_key("Jit.incore (attribute)", ["pl.at", "pl.jit.incore"]) == "pl.jit.incore"
    assert conf.refine_key("Jit.incore (attribute)", ["pl.at"]) == "Jit.incore (attribute)"
    assert key("ValueError: bad shape") == "ValueError"
    assert conf.last_error("noise\nTraceback (most recent call last):\n  File x\nKeyError: 'a'\n") == "KeyError: 'a'"


def test_static_scan_names_what_our_pypto_lacks(conf: ModuleType, tmp_path: Path) -> None:
    tree = fake_tree(tmp_path)
    text = textwrap.dedent(PYPTO_PROGRAMS["examples/models/03_missing_pl.py"])
    pairs = conf.used_names(text)
    assert ("pypto.language", "Level.CORE_GROUP") in pairs and ("pypto.runtime", "run") in pairs
    got = conf.resolve_names(pairs, tree)
    assert got["pypto"] == str(tree / "pypto" / "__init__.py")
    # the first missing prefix of each: jit exists but has no `inline`; Level is missing altogether
    assert got["missing"] == {"pl.jit.inline": "pl.jit.inline", "pl.Level.CORE_GROUP": "pl.Level",
                              "pl.no_such_op": "pl.no_such_op", "pypto.runtime.run": "pypto.runtime.run"}


def test_a_hanging_program_is_stopped_at_the_time_limit_with_its_children(conf: ModuleType, tmp_path: Path) -> None:
    root = tmp_path / "up"
    write(root, "examples/beginner/hang.py", """
        import math, subprocess, sys, threading
        if __name__ == "__main__":
            child = subprocess.Popen([sys.executable, "-c", "import threading; threading.Event().wait()"])
            print(f"child {child.pid}", flush=True)
            threading.Event().wait()
            assert math.isclose(1.0, 1.0)
    """)
    (prog,) = conf.discover("pypto", root)
    res = conf.run_program(prog, fake_tree(tmp_path), 3.0, 4096)
    assert (res.status, res.code, res.key) == ("failed", None, "timeout")
    assert res.reason == "timeout: no exit within 3 s"
    child = int(res.tail.split("child ")[1].split()[0])
    try:
        fd = os.pidfd_open(child)
    except ProcessLookupError:
        return  # already gone and reaped
    try:  # the group was killed: the child's exit makes its pidfd readable (an event, not a sleep)
        alive = select.select([fd], [], [], 60)[0] != [fd]
        if alive:
            os.kill(child, signal.SIGKILL)
        assert not alive, f"child {child} outlived the time limit"
    finally:
        os.close(fd)


def test_the_memory_cap_stops_a_program_that_allocates_too_much(conf: ModuleType, tmp_path: Path) -> None:
    root = tmp_path / "up"
    write(root, "examples/beginner/big.py", """
        import math
        if __name__ == "__main__":
            block = bytearray(3 << 30)
            assert math.isclose(len(block), 3 << 30)
    """)
    (prog,) = conf.discover("pypto", root)
    res = conf.run_program(prog, fake_tree(tmp_path), 60.0, 512)
    assert (res.status, res.key) == ("failed", "memory cap"), res.reason
    assert res.reason == "MemoryError (memory cap 512 MiB)"


def git_mirror(path: Path, files: dict[str, str]) -> Path:
    lay_out(path, files)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "examples"]):
        subprocess.run(["git", "-C", str(path), *cmd], check=True, env=env, capture_output=True)
    return path / ".git"


def test_a_whole_run_from_two_mirrors_prints_the_figure_and_writes_the_json(
        conf: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    up = git_mirror(tmp_path / "m_up", PYPTO_PROGRAMS)
    lib = git_mirror(tmp_path / "m_lib", LIB_PROGRAMS)
    keep, out = tmp_path / "keep", tmp_path / "out.json"
    code = conf.main(["--mirror-pypto", str(up), "--rev-pypto", "HEAD", "--mirror-lib", str(lib), "--rev-lib",
                      "HEAD", "--tree", str(fake_tree(tmp_path)), "--keep", str(keep), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out.strip().splitlines()
    doc = json.loads(out.read_text())
    status = {(r["repo"], Path(r["file"]).name): r["status"] for r in doc["results"]}
    assert status == {("pypto", "01_add.py"): "passed", ("pypto", "02_mismatch.py"): "failed",
                      ("pypto", "03_missing_pl.py"): "failed", ("pypto", "04_needs_device.py"): "skipped",
                      ("pypto", "print_ir.py"): "skipped", ("pypto", "01_ranks.py"): "skipped",
                      ("pypto-lib", "ok.py"): "passed", ("pypto-lib", "golden_fail_exit0.py"): "failed",
                      ("pypto-lib", "two_cards.py"): "skipped"}
    assert printed[-1] == doc["figure"] == ("2 passed, 3 failed, 4 skipped of 9 (pypto: 1 passed, 2 failed, "
                                            "3 skipped of 6; pypto-lib: 1 passed, 1 failed, 1 skipped of 3)")
    assert printed[-2] == doc["yardstick"] == ("single-card programs with a numeric check: 2 of 6 pass their own "
                                               "checks")  # the 3 statically skipped are not run
    missing = {Path(r["file"]).name: r["missing"] for r in doc["results"]}
    assert missing["03_missing_pl.py"] == ["pl.Level", "pl.jit.inline", "pl.no_such_op", "pypto.runtime.run"]
    assert any(line.split()[:2] == ["1", "pl.no_such_op"] for line in printed)  # the worklist
    assert (keep / "logs" / "pypto__examples__beginner__02_mismatch.py.log").read_text().count("AssertionError")
    assert (keep / "pypto-lib" / "golden" / "__init__.py").is_file()  # the export, kept
