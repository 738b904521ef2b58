"""Live compile through a real client: open and edits recompile the changed kernels, stale work is
cancelled, and every way a kernel can fail to compile is a diagnostic at the line that says why."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "progressDelayMs": 200}

TWO = '''"""Two kernels and a constant they share."""
import pypto

SCALE = 2.0


@pypto.jit
def scale_exp(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    y = pypto.exp(x) * SCALE
    out[:] = y + x


@pypto.jit
def plain_add(a: pypto.Tensor([32, 128], pypto.DT_FP32), b: pypto.Tensor([32, 128], pypto.DT_FP32),
              out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = a + b * SCALE
'''


async def test_open_compiles_each_kernel_and_sends_its_record(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "two.py", TWO)
    a = await client.records.record(doc.uri, "scale_exp", 1)
    b = await client.records.record(doc.uri, "plain_add", 1)
    for r, def_line in ((a, doc.line_of("def scale_exp")), (b, doc.line_of("def plain_add"))):
        assert r["error"] is None and r["version"] == 1
        s = r["summary"]
        assert s["board"] == "sim" and s["clock"].startswith("simulated") and s["tasks"] > 0 and s["makespanUs"] > 0
        assert r["range"]["start"]["line"] == def_line  # the def line, not the decorator
    assert a["summary"]["tileOps"] == 192  # 64x256 in 8x64 tiles: 32 per op, x (load, exp, mul, add, store) + x again
    # health findings are diagnostics: source pypto, the rule as code, at the user's lines
    diags = doc.diagnostics()
    assert diags and all(d.source == "pypto" for d in diags)
    codes = {(d.code, d.range.start.line) for d in diags}
    assert any(line == doc.line_of("set_vec_tile_shapes(8, 64)") for code, line in codes)  # on the tile call
    assert all(d.severity in (lsp.DiagnosticSeverity.Warning, lsp.DiagnosticSeverity.Information) for d in diags)


async def test_editing_the_tile_shape_recompiles_that_kernel_only(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "edit.py", TWO)
    before = await client.records.record(doc.uri, "scale_exp", 1)
    await client.records.record(doc.uri, "plain_add", 1)
    v = doc.replace("set_vec_tile_shapes(8, 64)", "set_vec_tile_shapes(16, 128)")
    after = await client.records.record(doc.uri, "scale_exp", v)
    assert after["version"] == v
    assert after["summary"]["tileOps"] != before["summary"]["tileOps"]
    assert after["summary"]["tileOps"] == 48  # 4 x 2 tiles of 16x128 per op
    assert after["summary"]["makespanUs"] != before["summary"]["makespanUs"]
    assert after["summary"]["tasks"] < before["summary"]["tasks"]
    await doc.hover(0)  # a round trip: everything the server sent for v is in
    assert not [r for r in client.records.items if r["uri"] == doc.uri and r["kernel"] == "plain_add"
                and r["version"] >= v], "plain_add did not change: it must not be recompiled"
    # a constant both kernels read: both recompile
    v2 = doc.replace("SCALE = 2.0", "SCALE = 3.0")
    await client.records.record(doc.uri, "scale_exp", v2)
    await client.records.record(doc.uri, "plain_add", v2)


SLOW = '''import time

import pypto


@pypto.jit
def slow(x: pypto.Tensor([8, 64], pypto.DT_FP32)):
    time.sleep(50)  # tracing takes a while
    return pypto.exp(x)
'''


async def test_a_newer_edit_cancels_the_compile_in_flight(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "slow.py", SLOW)
    # the compile is running once the server shows progress for it
    await client.progress.wait(lambda p: isinstance(p.value, dict) and p.value.get("kind") == "begin"
                               and "slow.py" in p.value.get("title", ""))
    v = doc.replace("time.sleep(50)", "time.sleep(0)")
    r = await client.records.record(doc.uri, "slow", v)
    assert r["error"] is None and r["summary"]["tasks"] > 0
    assert r["seconds"] < 40  # not behind the stale 50-second compile
    assert not [x for x in client.records.items if x["uri"] == doc.uri and x["version"] < v]
    await client.logs.wait(lambda m: "cancelled a stale compile" in m.message)
    # progress was begun and ended for the file
    ends = [p for p in client.progress.items if isinstance(p.value, dict) and p.value.get("kind") == "end"]
    assert ends


MISSING = '''import pypto


@pypto.jit
def no_inputs(x: pypto.Tensor(), out: pypto.Tensor()):
    out[:] = pypto.exp(x)
'''


async def test_a_kernel_without_example_inputs_says_so_at_its_def_line(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "missing.py", MISSING)
    r = await client.records.record(doc.uri, "no_inputs", 1)
    assert r["summary"] is None and r["error"]["code"] == "inputs.missing"
    def_line = doc.line_of("def no_inputs")
    assert r["error"]["range"]["start"]["line"] == def_line
    (d,) = [d for d in doc.diagnostics() if d.code == "inputs.missing"]
    assert d.range.start.line == def_line and d.severity == lsp.DiagnosticSeverity.Warning
    assert "no example inputs" in d.message and "pypto-inputs" in d.message
    # adding the block compiles it
    v = doc.replace("    out[:] = pypto.exp(x)",
                    '    """pypto-inputs:\n        x: fp32[16, 64]\n        out: fp32[16, 64]\n    """\n'
                    "    pypto.set_vec_tile_shapes(16, 64)\n    out[:] = pypto.exp(x)")
    ok = await client.records.record(doc.uri, "no_inputs", v)
    assert ok["error"] is None and ok["summary"]["tasks"] >= 1
    assert not [d for d in doc.diagnostics() if d.code == "inputs.missing"]


BROKEN = '''import pypto


@pypto.jit
def raises(x: pypto.Tensor([8, 64], pypto.DT_FP32)):
    y = pypto.exp(x)
    raise ValueError("not today")


@pypto.jit
def bad_tile(x: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8)
    return pypto.exp(x)
'''


async def test_compile_errors_are_at_the_users_line(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "broken.py", BROKEN)
    r = await client.records.record(doc.uri, "raises", 1)
    assert r["error"]["code"] == "python.exception" and "not today" in r["error"]["message"]
    assert r["error"]["range"]["start"]["line"] == doc.line_of('raise ValueError("not today")')
    t = await client.records.record(doc.uri, "bad_tile", 1)
    assert t["error"] is not None and "needs at least 2 entries" in t["error"]["message"]
    errors = {(d.code, d.range.start.line) for d in doc.diagnostics() if d.severity == lsp.DiagnosticSeverity.Error}
    assert ("python.exception", doc.line_of("raise ValueError")) in errors
    assert any(line in (doc.line_of("set_vec_tile_shapes(8)"), doc.line_of("return pypto.exp(x)"))
               for code, line in errors if code != "python.exception")


async def test_a_syntax_error_is_reported_and_the_fix_restores_the_records(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "syntax.py", TWO)
    await client.records.record(doc.uri, "scale_exp", 1)
    await client.records.record(doc.uri, "plain_add", 1)
    findings = sorted((d.code, d.range.start.line) for d in doc.diagnostics())
    assert findings
    v = doc.replace("    y = pypto.exp(x) * SCALE", "    y = pypto.exp(x) * (SCALE")
    published = await client.published.wait(lambda p: p.uri == doc.uri and p.version == v)
    (d,) = published.diagnostics
    assert d.code == "python.syntax" and d.severity == lsp.DiagnosticSeverity.Error
    assert d.range.start.line in (doc.line_of("(SCALE"), doc.line_of("(SCALE") + 1)
    # hovers still answer from the last good compile while the file does not parse
    assert "exp" in (await doc.hover(doc.line_of("pypto.exp(x)")) or "")
    v2 = doc.replace("(SCALE", "SCALE")  # back to the compiled text: nothing to recompile
    fixed = await client.published.wait(lambda p: p.uri == doc.uri and p.version == v2)
    assert not [d for d in fixed.diagnostics if d.code == "python.syntax"]
    assert sorted((d.code, d.range.start.line) for d in fixed.diagnostics) == findings  # the findings are back


MODULE_RAISES = '''import pypto


@pypto.jit
def fine(x: pypto.Tensor([8, 64], pypto.DT_FP32)):
    return pypto.exp(x)


raise RuntimeError("this module does not import")
'''


async def test_a_module_that_does_not_import_is_reported_at_its_line(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "module.py", MODULE_RAISES)
    r = await client.records.record(doc.uri, "fine", 1)
    assert r["summary"] is None and r["error"]["code"] == "python.import"
    assert r["error"]["range"]["start"]["line"] == doc.line_of("raise RuntimeError")
    assert "does not import" in r["error"]["message"]


NOT_PYPTO = '''import pypto


def jit(fn):  # somebody else's decorator
    return fn


@jit
def not_a_kernel(x):
    return x


@pypto.jit
def real(x: pypto.Tensor([8, 64], pypto.DT_FP32)):
    return pypto.exp(x)
'''


async def test_functions_with_another_jit_decorator_are_left_alone(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "other_jit.py", NOT_PYPTO)
    r = await client.records.record(doc.uri, "real", 1)
    assert r["error"] is None
    await doc.hover(0)
    assert not [x for x in client.records.items if x["uri"] == doc.uri and x["kernel"] == "not_a_kernel"]
    assert not [d for d in doc.diagnostics() if d.range.start.line <= doc.line_of("return x")]
    # both candidates' results are in (until then `not_a_kernel` has a "compiling…" lens)
    await client.logs.wait(lambda m: "other_jit.py v1: 2 kernel(s) compiled" in m.message)
    lenses = await doc.lenses()
    assert {x.range.start.line for x in lenses} == {doc.line_of("@pypto.jit")}
