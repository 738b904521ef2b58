"""Isolation: a kernel that hangs, exits its process or eats memory costs its own result — a
diagnostic at its def line — never the server, the other kernels of the file, or later edits."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from support import HOSTILE_KERNELS

pytestmark = pytest.mark.asyncio(loop_scope="module")
# a short time limit and a small memory limit, through initializationOptions and workspace/configuration
SERVER_SETTINGS = {"debounceMs": 30, "timeLimit": 4, "memoryLimitMb": 400, "workers": 2, "progressDelayMs": 100}

SRC = HOSTILE_KERNELS


async def test_each_failure_is_a_diagnostic_at_its_def_line_and_the_rest_keeps_working(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "kernels.py", SRC)
    good = await client.records.record(doc.uri, "good", 1)
    assert good["error"] is None and good["summary"]["tasks"] > 0
    failures = {}
    for name, kind in (("hang", "timeout"), ("die", "crashed"), ("hog", "memory")):
        r = await client.records.record(doc.uri, name, 1)
        assert r["summary"] is None and r["error"]["code"] == f"worker.{kind}", r
        assert r["error"]["range"]["start"]["line"] == doc.line_of(f"def {name}(")
        failures[name] = r
    # the good kernel did not wait for the hanging one
    order = [x["kernel"] for x in client.records.items if x["uri"] == doc.uri]
    assert order.index("good") < order.index("hang")
    assert "time limit" in failures["hang"]["error"]["message"]
    errors = {(d.code, d.range.start.line) for d in doc.diagnostics() if d.severity == lsp.DiagnosticSeverity.Error}
    for name, kind in (("hang", "timeout"), ("die", "crashed"), ("hog", "memory")):
        assert (f"worker.{kind}", doc.line_of(f"def {name}(")) in errors
    # the file took seconds: progress was shown (begun, ended) and the log reached the client
    begins = [p for p in client.progress.items if isinstance(p.value, dict) and p.value.get("kind") == "begin"
              and "kernels.py" in p.value.get("title", "")]
    assert begins
    await doc.hover(0)  # a round trip: the progress end sent after the last record is in
    kinds = [r.kind for r in client.progress_reports[begins[0].token]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert any("hang timeout" in m.message for m in client.log_messages)
    assert any(m.type == lsp.MessageType.Warning for m in client.log_messages)
    # the server answers and compiles the next edit
    assert "exp" in (await doc.hover(doc.line_of("out[:] = pypto.exp(x)")) or "")
    v = doc.replace("set_vec_tile_shapes(16, 64)", "set_vec_tile_shapes(32, 64)")
    again = await client.records.record(doc.uri, "good", v)
    assert again["error"] is None and again["summary"]["tasks"] < good["summary"]["tasks"]
    # the failing kernels did not change: they are not retried on an edit elsewhere
    await doc.hover(0)
    assert not [x for x in client.records.items if x["uri"] == doc.uri and x["kernel"] != "good" and x["version"] >= v]
    # a new time limit retries the kernels the old one stopped (and only those)
    n = len(client.records.items)
    client.set_configuration({**SERVER_SETTINGS, "timeLimit": 3}, section="pypto")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    retried = await client.records.wait(lambda x: x["uri"] == doc.uri and x["kernel"] == "hang"
                                        and client.records.items.index(x) >= n)
    assert retried["error"]["code"] == "worker.timeout" and "after 3 s" in retried["error"]["message"]
    await doc.hover(0)
    assert {x["kernel"] for x in client.records.items[n:] if x["uri"] == doc.uri} == {"hang"}
