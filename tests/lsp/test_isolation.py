"""Isolation: a kernel that hangs, exits its process or eats memory costs its own result — a
diagnostic at its def line — never the server, the other kernels of the file, or later edits."""

from __future__ import annotations

import os

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
    assert retried["error"]["code"] == "worker.timeout" and "3 s (the time limit)" in retried["error"]["message"]
    await doc.hover(0)
    assert {x["kernel"] for x in client.records.items[n:] if x["uri"] == doc.uri} == {"hang"}


# the kernel keeps itself waiting for a CPU, whatever the machine's load: on one core beside a busy process
# (in its job's group: it ends with the job), at the least priority (nice 19) — then it loops
STARVING = """    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    rival = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    os.sched_setaffinity(rival.pid, {cpu})
    os.nice(19)
    while True:
        pass
"""
STARVED = ("import os, subprocess, sys\nimport pypto\n\n\n@pypto.jit\n"
           "def starved(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):\n"
           + STARVING + "    out[:] = pypto.exp(x)\n")


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="Linux's schedstat")
async def test_a_compile_kept_waiting_for_a_cpu_is_shown_busy_not_failed(client, lsp_kit, tmp_path):
    """A busy machine makes a compile slower, not failed: the progress says so while it runs."""
    doc = lsp_kit.Doc(client, tmp_path / "busy.py", STARVED)
    busy = await client.progress.wait(lambda p: isinstance(p.value, dict)
                                      and (p.value.get("message") or "").startswith("starved: busy"))
    assert busy.value["message"].startswith("starved: busy, still compiling after"), busy.value
    assert "the machine is loaded" in busy.value["message"] and "waiting for a CPU" in busy.value["message"]
    assert "s of the time limit used" in busy.value["message"]
    v = doc.replace(STARVING, "")  # an edit: the running compile is cancelled, the new text's answers
    r = await client.records.record(doc.uri, "starved", v)
    assert r["error"] is None and r["summary"]["tasks"] > 0
    assert [x["version"] for x in client.records.items if x["uri"] == doc.uri] == [v]
