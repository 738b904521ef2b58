"""server/capture_runner.py on its own: the tests and main blocks a document offers, the bounded scan for
the tests naming a kernel, and a capture whose command prints without end (the lines forwarded are
bounded, each line cut, the outcome still says why it failed)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from server import capture_runner as C

TESTS = textwrap.dedent('''
    import pytest
    from kern import scaled


    @pytest.mark.parametrize("n", [1, 2])
    def test_scaled(n):
        scaled(n)


    async def test_async():
        pass


    class TestK:
        def test_method(self):
            scaled(2)

        def helper(self):
            scaled(3)


    class Helper:
        def test_not_collected(self):
            pass


    if "__main__" == __name__:
        test_scaled(1)
''')


def test_targets_of_a_test_file_and_a_script():
    got = [(t.kind, t.name) for t in C.targets(TESTS, "/w/test_k.py")]
    assert got == [("test", "test_scaled"), ("test", "test_async"), ("test", "TestK::test_method"),
                   ("main", "__main__")]
    # not a test file, and no import of pytest: only its main block; a file that does not parse: nothing
    assert [(t.kind, t.name) for t in C.targets(TESTS.replace("import pytest\n", ""), "/w/k.py")] == [
        ("main", "__main__")]
    assert C.targets("def test_x(:\n", "/w/test_k.py") == []
    (t,) = [t for t in C.targets(TESTS, "/w/tests/test_k.py") if t.name == "TestK::test_method"]
    want = ["python", "-m", "pytest", "-q", "tests/test_k.py::TestK::test_method"]
    assert t.command("/w/tests/test_k.py", "/w") == want
    assert C.Target("main", "__main__", 1).command("/elsewhere/run.py", "/w") == ["python", "/elsewhere/run.py"]
    assert C.is_test_file("a/k_test.py") and C.is_test_file("test_k.py") and not C.is_test_file("testk.py")


MARKED = textwrap.dedent('''
    import pytest
    from pytest import mark

    pytestmark = [pytest.mark.filterwarnings("ignore")]


    @pytest.mark.skip(reason="large test case")
    def test_big():
        pass


    @mark.skip("positional reason")
    def test_positional():
        pass


    @pytest.mark.skipif(True, reason=REASON)
    def test_named_elsewhere():
        pass


    @pytest.mark.parametrize("n", [1])
    def test_plain(n):
        pass


    @pytest.mark.skipif("sys.platform == 'linux'", reason="not on linux")
    class TestK:
        def test_in_class(self):
            pass
''')


def test_a_tests_skip_mark_is_read_from_it_its_class_and_its_module():
    skips = {t.name: t.skip for t in C.targets(MARKED, "/w/test_k.py")}
    assert skips == {"test_big": "large test case", "test_positional": "positional reason",
                     "test_named_elsewhere": "skipif", "test_plain": None, "TestK::test_in_class": "not on linux"}
    module = MARKED.replace('filterwarnings("ignore")]',
                            'filterwarnings("ignore"), pytest.mark.skip(reason="whole file")]')
    assert {t.name: t.skip for t in C.targets(module, "/w/test_k.py")}["test_plain"] == "whole file"


def test_the_skipped_tests_the_capture_prints_are_read(tmp_path):
    (tmp_path / "says.py").write_text(
        "print('skipped test_k.py::test_big[a b]  by its skip mark: large test case')\n"
        "print('skipped test_k.py::test_here  at run time: no device')\n"
        "print('unskipped test_k.py::test_a5  (its skip mark lifted): needs A5')\n"
        "print('skipped but not a line the capture prints')\n")
    out = asyncio.run(C.CaptureRunner().run(["python", "says.py"], str(tmp_path), 60, lambda _: None))
    assert out.json()["skipped"] == [
        {"test": "test_k.py::test_big[a b]", "reason": "large test case", "marked": True, "lifted": False},
        {"test": "test_k.py::test_here", "reason": "no device", "marked": False, "lifted": False},
        {"test": "test_k.py::test_a5", "reason": "needs A5", "marked": True, "lifted": True}]
    assert [s["test"] for s in out.skip_marked()] == ["test_k.py::test_big[a b]"]


MODEL = textwrap.dedent('''
    import pytest
    import pypto


    @pypto.frontend.jit
    def attn_kernel(x):
        pass


    @pypto.frontend.jit
    def other_kernel(x):
        pass


    def run_case(shape):
        return launch(shape)


    def launch(shape):
        attn_kernel(shape)


    def test_attn():
        run_case(4)


    @pytest.mark.skip(reason="large test case")
    def test_attn_big():
        run_case(64)


    def test_other():
        other_kernel(1)
''')


def test_a_kernel_file_that_holds_its_tests_offers_them_and_the_scan_finds_tests_reaching_it_through_helpers(
        tmp_path):
    """PyPTO's GLM and DeepSeek V3.2 model files hold their pytest tests beside their kernels, in files pytest would
    not collect by itself, and call the kernels through helpers: a file that imports pytest offers its tests, and a
    test that calls a helper that calls the kernel reaches it."""
    assert [t.name for t in C.targets(MODEL, "/w/attention.py") if t.kind == "test"] == [
        "test_attn", "test_attn_big", "test_other"]
    assert [t.name for t in C.targets(MODEL.replace("import pytest\n", ""), "/w/attention.py")] == []
    models = tmp_path / "models"
    models.mkdir()
    (models / "attention.py").write_text(MODEL)
    (models / "attention_impl.py").write_text("import pypto\n\n@pypto.frontend.jit\ndef attn_kernel(x):\n    pass\n")
    (models / "driver.py").write_text("import pytest\nfrom attention_impl import attn_kernel\n\n\n"
                                      "def test_driver():\n    attn_kernel(1)\n")
    # from the kernel's own file: its tests that reach it, not the one that calls another kernel
    found = C.tests_calling(str(tmp_path), "attn_kernel", str(models / "attention.py"))
    assert [(Path(f.path).name, f.target.name, f.target.skip) for f in found] == [
        ("attention.py", "test_attn", None), ("attention.py", "test_attn_big", "large test case"),
        ("driver.py", "test_driver", None)]
    # from a sibling: its folder's files that hold tests; without `near`, test files only, as before
    found = C.tests_calling(str(tmp_path), "attn_kernel", str(models / "attention_impl.py"))
    assert {(Path(f.path).name, f.target.name) for f in found} == {
        ("attention.py", "test_attn"), ("attention.py", "test_attn_big"), ("driver.py", "test_driver")}
    assert C.tests_calling(str(tmp_path), "attn_kernel") == []


RUNNER = textwrap.dedent('''
    import pytest
    from prefill_impl import prefill_kernel, plain_kernel


    def test_pre(t=16, prefill=False):
        (prefill_kernel if prefill else plain_kernel)(t)


    @pytest.mark.skip(reason="ci torch version")
    def te_pre_prefill(t=512):
        test_pre(t=t, prefill=True)


    def needs_args(t):
        test_pre(t, True)


    def _private():
        test_pre(1, True)
''')


def test_a_kernel_only_a_runner_function_calls_gets_that_function_after_the_tests_and_its_command_calls_it(
        tmp_path):
    """DeepSeek V4's hc_pre_kernel_prefill is called only when `te_hc_pre_prefill()` calls the test with the other
    flag: a module-level function that needs no argument and reaches the kernel, through the file's tests too, is
    offered after the tests, and its command line calls it with the file's folder first on the path."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "test_prefill.py").write_text(RUNNER)
    (models / "prefill_impl.py").write_text(
        "import pathlib\n\n\ndef prefill_kernel(t):\n    pathlib.Path('called').write_text(f'prefill {t}')\n\n\n"
        "def plain_kernel(t):\n    pathlib.Path('called').write_text(f'plain {t}')\n")
    found = C.tests_calling(str(tmp_path), "prefill_kernel")
    assert [(f.target.kind, f.target.name) for f in found] == [("test", "test_pre"), ("call", "te_pre_prefill")]
    words = found[1].target.command(found[1].path, str(tmp_path))
    assert words[:2] == ["python", "-c"] and "models/test_prefill.py" in words[2]
    subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, check=True, timeout=120)
    assert (tmp_path / "called").read_text() == "prefill 512"
    assert C.tests_calling(str(tmp_path), "other_kernel") == []


def test_the_folder_a_capture_runs_in(tmp_path):
    inner = tmp_path / "ws" / "sub"
    inner.mkdir(parents=True)
    f = inner / "test_k.py"
    assert C.folder_for(str(f), [str(tmp_path / "ws"), str(inner)]) == str(inner)  # the innermost
    assert C.folder_for(str(f), [str(tmp_path / "other")]) == str(inner)  # in none: the file's own


def test_the_scan_finds_the_tests_naming_the_kernel_within_its_bounds(tmp_path, monkeypatch):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_k.py").write_text(TESTS)
    (tmp_path / "tests" / "test_other.py").write_text("def test_x():\n    scaledish()\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "test_k.py").write_text(TESTS)  # skipped folder
    (tmp_path / "big_test.py").write_text("def test_big():\n    scaled()\n" + "#" * (C.SCAN_FILE_BYTES + 10))
    found = C.tests_calling(str(tmp_path), "scaled")
    assert [(Path(f.path).relative_to(tmp_path).as_posix(), f.target.name) for f in found] == [
        ("tests/test_k.py", "test_scaled"), ("tests/test_k.py", "TestK::test_method")]
    # bounded: one directory entry looked at finds nothing below it
    monkeypatch.setattr(C, "SCAN_FILES", 1)
    assert C.tests_calling(str(tmp_path), "scaled") == []


def test_output_without_a_final_newline_leaves_the_failure_said(tmp_path):
    """The command's last line has no end: the capture's report still starts a line (the error is read there)."""
    (tmp_path / "open.py").write_text("import sys\nsys.stdout.write('no newline at the end')\n")
    out = asyncio.run(C.CaptureRunner().run(["python", "open.py"], str(tmp_path), 60, lambda _: None))
    assert not out.ok and "called no @pypto.jit kernel" in (out.error or ""), out
    assert "no newline at the end" in out.tail


def test_endless_output_is_bounded_and_the_failure_said(tmp_path):
    (tmp_path / "loud.py").write_text(
        "import sys\nfor i in range(5000):\n    print('line', i)\nsys.stdout.write('x' * 300000)\n")
    shown: list[str] = []
    out = asyncio.run(C.CaptureRunner().run(["python", "loud.py"], str(tmp_path), 60, shown.append))
    assert not out.ok and out.exit_code == 1 and "called no @pypto.jit kernel" in (out.error or ""), out
    assert out.lines > C.MAX_LINES and len(shown) == C.MAX_LINES + 1
    assert shown[-1].startswith("… (more output not shown here")
    assert max(len(x) for x in out.tail) <= C.MAX_LINE_CHARS + 40  # the 300 000 characters, cut
    assert out.json()["tail"] == out.tail and len(out.tail) <= C.TAIL_LINES
