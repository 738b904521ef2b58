"""With the setting `precision`, every compile runs the precision diff against fp64 and its
failures are diagnostics at the op's line (here: fp16 accumulation in a loop)."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "precision": True}

SRC = '''import pypto


@pypto.jit
def accumulate(x: pypto.Tensor([8, 4096], pypto.DT_FP16), out: pypto.Tensor([8, 1], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(8, 256)
    for i in pypto.loop(0, 4096, 16):
        part = pypto.sum(pypto.view(x, [8, 16], [0, i]), dim=-1, keepdim=True)
        out[:] = out + part
'''


async def test_precision_failures_are_diagnostics_at_the_op_line(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "accumulate.py", SRC)
    r = await client.records.record(doc.uri, "accumulate", 1)
    assert r["error"] is None
    line = doc.line_of("out[:] = out + part")
    (d,) = [d for d in doc.diagnostics() if d.code == "precision.fail"]
    assert d.range.start.line == line and d.severity == lsp.DiagnosticSeverity.Error and d.source == "pypto"
    p = await doc.call("pypto/precision", kernel="accumulate")
    assert p["passed"] is False and p["firstFailingPass"] == "verify"
    assert any(f["op"] == "add" and f["range"]["start"]["line"] == line for f in p["failures"])
