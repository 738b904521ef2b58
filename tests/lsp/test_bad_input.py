"""Bad input from a held-out corpus (issue 27), over stdio with the real server: a module that raises
KeyboardInterrupt (or SystemExit) at import is one diagnostic at the line that raised, and the server
and the other documents are unaffected; `pypto.loop(0, 8, 0.5)` names the loop and its step at the
loop's line; a slice that starts past the end of its dim says so at the slice's line (read or written)."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from support import BAD_LOOP_STEP, BAD_SLICES

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "timeLimit": 30, "workers": 2}

KERNEL = '''import sys

import pypto
{top}

@pypto.jit
def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.exp(x)
'''


def errors(doc) -> list[tuple[str, int, str]]:
    return [(str(d.code), d.range.start.line, d.message) for d in doc.diagnostics()
            if d.severity == lsp.DiagnosticSeverity.Error]


@pytest.mark.parametrize(("statement", "raised"), [
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("raise SystemExit(3)", "SystemExit: 3"),
    ("sys.exit()", "SystemExit"),
])
async def test_an_exit_at_import_is_a_diagnostic_at_its_line_and_nothing_else_is_affected(
        client, lsp_kit, tmp_path, statement, raised):
    name = statement.split()[-1].split("(")[0].replace(".", "_")
    good = lsp_kit.Doc(client, tmp_path / f"good_{name}.py", KERNEL.format(top=""))
    bad = lsp_kit.Doc(client, tmp_path / f"exits_{name}.py", KERNEL.format(top=statement))
    line = bad.line_of(statement)
    message = f"{raised} while importing the module: k was not compiled"
    r = await client.records.record(bad.uri, "k", 1)
    assert r["summary"] is None and r["error"]["code"] == "python.import", r
    assert r["error"]["message"] == message and r["error"]["range"]["start"]["line"] == line, r
    published = await client.published.wait(lambda p: p.uri == bad.uri and p.diagnostics)
    assert [(d.code, d.range.start.line, d.message) for d in published.diagnostics] == [("python.import", line,
                                                                                         message)]
    # the document opened beside it compiles, and the server answers
    g = await client.records.record(good.uri, "k", 1)
    assert g["error"] is None and g["summary"]["tasks"] > 0
    assert not errors(good)
    assert "exp" in (await good.hover(good.line_of("pypto.exp(x)")) or "")
    # without the exit, the module imports and the kernel compiles
    v = bad.replace(statement, "pass")
    fixed = await client.records.record(bad.uri, "k", v)
    assert fixed["error"] is None and fixed["summary"]["tasks"] == g["summary"]["tasks"]
    await bad.hover(0)  # a round trip: the diagnostics of that compile are in
    assert not errors(bad)




async def test_a_loop_step_that_is_not_an_int_names_the_loop_and_its_step_at_its_line(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "loop_step.py", BAD_LOOP_STEP)
    r = await client.records.record(doc.uri, "rows", 1)
    message = "pypto.loop: step must be an int or a symbolic scalar, got float 0.5"
    line = doc.line_of("pypto.loop(0, 8, 0.5)")
    assert r["error"]["code"] == "compile.error" and r["error"]["message"] == message, r
    assert r["error"]["range"]["start"]["line"] == line
    await doc.hover(0)
    assert errors(doc) == [("compile.error", line, message)]




async def test_a_slice_that_starts_past_the_end_is_an_error_at_the_slice(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "slices.py", BAD_SLICES)
    message = "slice 9:10 of dim 0 starts past its end (size 8)"
    for kernel, statement in (("reads", "row = x[9:10, :]"), ("writes", "out[9:10, :] = pypto.exp(x)")):
        r = await client.records.record(doc.uri, kernel, 1)
        assert r["error"]["code"] == "compile.error" and r["error"]["message"] == message, r
        assert r["error"]["range"]["start"]["line"] == doc.line_of(statement)
    ok = await client.records.record(doc.uri, "runs_past", 1)  # only its stop is past the end: PyPTO takes it
    assert ok["error"] is None and ok["summary"]["tasks"] > 0
    await doc.hover(0)
    assert sorted(errors(doc)) == sorted([("compile.error", doc.line_of("row = x[9:10, :]"), message),
                                          ("compile.error", doc.line_of("out[9:10, :] ="), message)])
