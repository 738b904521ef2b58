"""Capturing from the editor, over stdio (docs/capture.md, "In VS Code"): the "pypto: Capture" CodeLens on
pytest tests and main blocks, the pypto.capture command (workspace/executeCommand) running `pypto-ide
capture` as the server's subprocess, the quick fix on a kernel with no example inputs naming the tests
that call it, the capture's origin in the kernel's hover; a failing or hanging command is a clear
message and the server goes on."""

from __future__ import annotations

import asyncio
import os
import textwrap
from typing import Any

import pytest
from lsprotocol import types as lsp

from server import protocol as P

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

KERNEL = textwrap.dedent('''
    import pypto


    @pypto.frontend.jit
    def scaled(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x * 3.0
''')

TESTS = textwrap.dedent('''
    import numpy as np

    from kern import scaled


    def test_scaled():
        x = np.ones((8, 64), np.float32)
        out = np.zeros((8, 64), np.float32)
        scaled(x, out)
        assert (out == 3.0).all()


    def test_other():
        assert True


    class TestKern:
        def test_in_class(self):
            assert True


    if __name__ == "__main__":
        test_scaled()
''')

FAILS = "import sys\nprint('about to fail')\nsys.exit(3)\n"
HANGS = "import time\nprint('hanging', flush=True)\ntime.sleep(600)\n"


def _lens_args(lenses: list[lsp.CodeLens]) -> dict[int, dict]:
    return {x.range.start.line: x.command.arguments[0] for x in lenses
            if x.command is not None and x.command.command == "pypto.capture"}


def _processes_running(needle: str) -> bool:
    """Whether a process on this machine has `needle` in its command line."""
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle.encode() in f.read():
                    return True
        except (OSError, ValueError):
            continue
    return False


async def _execute(client, args: dict) -> dict:
    got = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("pypto.capture", [args]))
    return dict(got)


async def test_lenses_on_tests_and_main_blocks(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "test_kern.py", TESTS)
    script = lsp_kit.Doc(client, tmp_path / "run_it.py", "def test_not_collected():\n    pass\n\n\n"
                                                         "if __name__ == '__main__':\n    pass\n")
    by_line = _lens_args(await doc.lenses())
    assert by_line[doc.line_of("def test_scaled")]["command"] == ["python", "-m", "pytest", "-q",
                                                                 "test_kern.py::test_scaled"]
    assert by_line[doc.line_of("def test_other")]["command"][-1] == "test_kern.py::test_other"
    assert by_line[doc.line_of("def test_in_class")]["command"][-1] == "test_kern.py::TestKern::test_in_class"
    assert by_line[doc.line_of("if __name__")]["command"] == ["python", "test_kern.py"]
    assert len(by_line) == 4
    # outside the workspace folder (the repository): the capture runs in the file's own folder
    assert {a["cwd"] for a in by_line.values()} == {str(tmp_path)}
    titles = {x.command.title for x in await doc.lenses() if x.command is not None}
    assert "pypto: Capture" in titles
    # not a test file: its test_ function is not pytest's, its main block is a script
    assert list(_lens_args(await script.lenses()).values()) == [
        {"command": ["python", "run_it.py"], "cwd": str(tmp_path), "uri": script.uri}]


async def test_quick_fix_captures_from_the_test_and_the_kernel_compiles(client, lsp_kit, tmp_path):
    (tmp_path / "test_kern.py").write_text(TESTS)
    doc = lsp_kit.Doc(client, tmp_path / "kern.py", KERNEL)
    first = await client.records.record(doc.uri, "scaled", 1)
    assert first["error"]["code"] == "inputs.missing", first
    await client.published.wait(lambda p: p.uri == doc.uri and any(d.code == "inputs.missing" for d in p.diagnostics))
    actions = await doc.actions(doc.line_of("def scaled"), 6)
    titles = [a.title for a in actions]
    assert "pypto: Capture inputs from test_kern.py::test_scaled" in titles, titles
    assert not any("test_other" in t or "test_in_class" in t for t in titles), titles  # they do not name it
    (fix,) = [a for a in actions if a.title.endswith("test_kern.py::test_scaled")]
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.command is not None
    assert fix.diagnostics and fix.diagnostics[0].code == "inputs.missing"

    out = await _execute(client, fix.command.arguments[0])
    assert out["ok"] is True, out
    assert [c["kernel"] for c in out["captures"]] == ["scaled"]
    assert out["captures"][0]["file"] == str(tmp_path / "kern.py")
    assert (tmp_path / ".pypto" / "captures").is_dir()
    said = next(m for m in client.messages if "captured scaled" in m.message)
    assert said.type == lsp.MessageType.Info and "python -m pytest -q test_kern.py::test_scaled" in said.message
    # the server compiles the open kernel again, now from its capture: a record, no warning
    record = await client.records.wait(lambda r: r["uri"] == doc.uri and r["kernel"] == "scaled"
                                       and r["error"] is None and r["summary"] is not None)
    assert record["summary"]["tasks"] > 0
    await client.published.wait(lambda p: p.uri == doc.uri and not p.diagnostics)
    # the command's output reached the client's log
    assert any("[capture]" in m.message and "passed" in m.message for m in client.log_messages)
    # the hover on the def line says where the inputs came from
    hover = await doc.hover(doc.line_of("def scaled"), 6)
    assert hover is not None and "inputs captured from `python -m pytest -q test_kern.py::test_scaled`" in hover
    assert ".pypto/captures/" in hover
    full = await doc.call("pypto/record", kernel="scaled")
    assert full["record"]["source"]["inputs_from"]["command"] == "python -m pytest -q test_kern.py::test_scaled"


async def test_a_failing_or_hanging_command_is_a_clear_message_and_the_server_goes_on(client, lsp_kit, tmp_path):
    (tmp_path / "fails.py").write_text(FAILS)
    out = await _execute(client, {"command": "python fails.py", "cwd": str(tmp_path)})
    assert out["ok"] is False and out["exitCode"] == 1, out
    assert "`python fails.py` exited with status 3" in out["error"], out
    said = next(m for m in client.messages if "fails.py" in m.message)
    assert said.type == lsp.MessageType.Error and "exited with status 3" in said.message
    assert any("about to fail" in m.message for m in client.log_messages)

    (tmp_path / "hangs.py").write_text(HANGS)
    out = await _execute(client, {"command": ["python", "hangs.py"], "cwd": str(tmp_path), "timeout": 2})
    assert out["ok"] is False and "did not finish within 2 s" in out["error"], out
    assert not _processes_running("hangs.py")

    # the progress's Cancel stops it: the command answers, its processes are gone
    (tmp_path / "hangs2.py").write_text(HANGS)
    running = asyncio.ensure_future(_execute(client, {"command": "python hangs2.py", "cwd": str(tmp_path)}))

    def begun(p: Any) -> bool:
        v = p.value if isinstance(p.value, dict) else P.plain(p.value)
        return isinstance(v, dict) and v.get("kind") == "begin" and "hangs2.py" in str(v.get("title"))

    began = await client.progress.wait(begun)
    assert began.value["cancellable"] is True
    await client.logs.wait(lambda m: "[capture] hanging" in m.message)  # the command runs
    client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=began.token))
    out = await asyncio.wait_for(running, lsp_kit.WAIT)
    assert out["ok"] is False and out["error"].startswith("cancelled"), out
    said = next(m for m in client.messages if "hangs2.py" in m.message)
    assert said.type == lsp.MessageType.Warning
    assert not _processes_running("hangs2.py")

    out = await _execute(client, {"command": "no-such-program-pypto --x", "cwd": str(tmp_path)})
    assert out["ok"] is False and "cannot run" in out["error"], out
    with pytest.raises(Exception, match="command"):
        await _execute(client, {"cwd": str(tmp_path)})
    # the server answers as before
    doc, _ = await lsp_kit.open_softmax(client, tmp_path)
    assert await doc.hover(doc.line_of("pypto.exp"), 8)


SKIPPED = textwrap.dedent('''
    import numpy as np
    import pytest

    from kern import scaled


    @pytest.mark.skip(reason="large test case")
    def test_big():
        out = np.zeros((8, 64), np.float32)
        scaled(np.ones((8, 64), np.float32), out)


    @pytest.mark.skipif(True, reason="needs an A5 chip")
    class TestA5:
        def test_a5(self):
            scaled(np.ones((8, 32), np.float32), np.zeros((8, 32), np.float32))


    def test_here():
        pytest.skip("skips itself")
''')


async def test_a_test_skipped_by_its_mark_is_captured_from_its_lens_and_offered_after_a_capture_that_skipped_it(
        client, lsp_kit, tmp_path):
    kern = tmp_path / "kern.py"
    kern.write_text(KERNEL)
    doc = lsp_kit.Doc(client, tmp_path / "test_skipped.py", SKIPPED)
    lenses = {x.range.start.line: x.command for x in await doc.lenses()
              if x.command is not None and x.command.command == "pypto.capture"}
    big, a5, here = (lenses[doc.line_of(f"def {n}")] for n in ("test_big", "test_a5", "test_here"))
    # a test its mark skips (its own, its class's): the lens runs it despite the mark; one with none, as it is
    assert big.title == a5.title == "pypto: Capture (despite its skip mark)" and here.title == "pypto: Capture"
    assert big.arguments[0]["run_skipped"] is True and "large test case" in (big.tooltip or "")
    assert a5.arguments[0]["run_skipped"] is True and "needs an A5 chip" in (a5.tooltip or "")
    assert "run_skipped" not in here.arguments[0]

    # the whole file, as a user types it: pytest skips all three; the server says which and offers to run them
    client.answer = "Run the skipped tests"
    try:
        out = await _execute(client, {"command": "python -m pytest -q test_skipped.py", "cwd": str(tmp_path)})
        assert out["ok"] is False and "nothing captured" in out["error"], out
        assert {(s["test"], s["marked"], s["lifted"]) for s in out["skipped"]} == {
            ("test_skipped.py::test_big", True, False), ("test_skipped.py::TestA5::test_a5", True, False),
            ("test_skipped.py::test_here", False, False)}
        asked = await client.asked.wait(lambda p: "test_skipped.py" in p.message)
        assert "pytest skipped 2 test(s) by their skip marks (large test case; needs an A5 chip)" in asked.message
        # answered: the capture runs again with the marks lifted, and the kernel is captured
        await client.logs.wait(lambda m: f"[capture] captured scaled  {kern}:" in m.message)
    finally:
        client.answer = None
    await client.logs.wait(lambda m: "[capture] unskipped test_skipped.py::test_big  (its skip mark lifted): large "
                                     "test case" in m.message)
    assert (tmp_path / ".pypto" / "captures").is_dir()


# a kernel file that imports pytest and holds its test, which calls the kernel through a helper
MODEL = KERNEL.replace("import pypto\n", "import numpy as np\nimport pypto\nimport pytest\n", 1) + textwrap.dedent('''


    def run_case(rows):
        out = np.zeros((rows, 64), np.float32)
        scaled(np.ones((rows, 64), np.float32), out)
        return out


    def test_model():
        assert (run_case(8) == 3.0).all()
''')


async def test_a_kernel_file_holding_its_tests_offers_them_as_lenses_and_its_quick_fix_finds_one_through_a_helper(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "model.py", MODEL)
    by_line = _lens_args(await doc.lenses())
    assert by_line[doc.line_of("def test_model")]["command"] == ["python", "-m", "pytest", "-q", "model.py::test_model"]
    await client.published.wait(lambda p: p.uri == doc.uri and any(d.code == "inputs.missing" for d in p.diagnostics))
    titles = [a.title for a in await doc.actions(doc.line_of("def scaled"), 6)]
    assert "pypto: Capture inputs from model.py::test_model" in titles, titles
