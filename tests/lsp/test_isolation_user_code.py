"""What a kernel prints or raises reaches the client as a log line or a diagnostic, never as protocol
(issue 17, items 1 and 5): a kernel that prints forged LSP frames — at module level, inside the kernel,
and with os.write(1, …) — changes nothing the client receives but one log line; a BaseException from
user code is a diagnostic at its line."""

from __future__ import annotations

import json
import os

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "timeLimit": 30, "workers": 1}

KERNEL = '''import os
import pypto
{top}

@pypto.jit
def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
{body}    out[:] = pypto.exp(x)
'''


def frame(method: str, params: dict) -> str:
    """A complete LSP message, as the server would write it to stdout."""
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params})
    return f"Content-Length: {len(body.encode())}\r\n\r\n{body}"


def forged(uri: str, where: str) -> str:
    """A log message and a diagnostic for `uri`, both saying FORGED."""
    diag = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "message": f"FORGED diagnostic {where}", "severity": 1}
    return (frame("window/logMessage", {"type": 1, "message": f"FORGED {where}"})
            + frame("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": [diag]}))


async def test_forged_frames_printed_by_a_kernel_are_one_log_line(client, lsp_kit, tmp_path):
    plain = lsp_kit.Doc(client, tmp_path / "plain.py", KERNEL.format(top="", body=""))
    expected = await client.records.record(plain.uri, "k", 1)
    assert expected["error"] is None
    uri = (tmp_path / "printing.py").as_uri()
    top = f"print({forged(uri, 'at module level')!r}, end='')\n"
    body = (f"    print({forged(uri, 'in the kernel')!r}, end='', flush=True)\n"
            f"    os.write(1, {forged(uri, 'on fd 1').encode()!r})\n")
    doc = lsp_kit.Doc(client, tmp_path / "printing.py", KERNEL.format(top=top, body=body))
    got = await client.records.record(doc.uri, "k", 1)
    # the same result as the kernel that prints nothing
    assert got["error"] is None and got["summary"] == expected["summary"]
    assert [d.message for d in doc.diagnostics()] == [d.message for d in plain.diagnostics()]
    logged = await client.logs.wait(lambda m: "printing.py k printed:" in m.message)
    for where in ("at module level", "in the kernel", "on fd 1"):
        assert f'"message": "FORGED {where}"' in logged.message  # the text, as a log line
    assert logged.type == lsp.MessageType.Info
    await doc.hover(doc.line_of("pypto.exp"))  # a round trip: anything the kernel sent would be in by now
    assert not [m for m in client.log_messages if m.message.startswith("FORGED")]
    assert not [d for diags in client.diagnostics.values() for d in diags if "FORGED" in d.message]
    assert getattr(client, "error", None) is None  # the client never saw a malformed message


async def test_the_servers_own_stdout_is_not_the_protocol_stream(client):
    server = client._server
    assert server is not None
    fd = f"/proc/{server.pid}/fd"
    assert os.readlink(f"{fd}/1") == os.readlink(f"{fd}/2")  # fd 1 writes to stderr
    assert os.readlink(f"{fd}/0") == "/dev/null"


@pytest.mark.parametrize("statement", ["raise KeyboardInterrupt", "raise SystemExit(3)", "raise GeneratorExit"])
async def test_a_base_exception_from_user_code_is_a_diagnostic_at_its_line(client, lsp_kit, tmp_path, statement):
    name = statement.split()[1].split("(")[0]
    module = lsp_kit.Doc(client, tmp_path / f"module_{name}.py", KERNEL.format(top=statement + "\n", body=""))
    r = await client.records.record(module.uri, "k", 1)
    line = module.line_of(statement)
    assert r["error"]["code"] == "python.import" and r["error"]["range"]["start"]["line"] == line, r
    assert r["error"]["message"].startswith(name)
    assert [(d.code, d.range.start.line) for d in module.diagnostics()] == [("python.import", line)]

    inside = lsp_kit.Doc(client, tmp_path / f"kernel_{name}.py", KERNEL.format(top="", body=f"    {statement}\n"))
    r = await client.records.record(inside.uri, "k", 1)
    line = inside.line_of(statement)
    assert r["error"]["code"] == "python.exception" and r["error"]["range"]["start"]["line"] == line, r
    assert r["error"]["message"].startswith(name) and "raised while tracing k" in r["error"]["message"]
