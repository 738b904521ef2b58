"""A finding whose proposed tile shape the check of the advice did not reach within its bound (`pypto.adviceSeconds`,
0 here: the bound a big production kernel's compile outlasts) says how long simulating it takes and offers one
action: `pypto.checkAdvice`, which compiles the kernel again with that shape checked within a longer bound — its
record taken as it was, its advice checked anew — and the finding then offers the shape the board found faster."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "adviceSeconds": 0}
CHECKED = "simulated on the sim board: "  # a checked shape's figure ("…: 1.91 µs against 2.04 µs now (1.07x faster)")

TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


def _tail_waste(diags: list[lsp.Diagnostic]) -> lsp.Diagnostic:
    (d,) = [d for d in diags if d.code == "tile.tail-waste"]
    return d


async def test_a_finding_its_bound_left_unchecked_offers_a_longer_check_which_then_offers_the_shape(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "tail.py", TAIL)
    await client.records.record(doc.uri, "tail_vec", 1)
    line = doc.line_of("set_vec_tile_shapes(16, 384)")
    before = _tail_waste(doc.diagnostics())
    assert "stopped at its time bound (0 s)" in before.message and "takes about" in before.message
    actions = await doc.actions(line)
    assert not [a for a in actions if a.edit is not None and a.title.startswith("pypto (tile.tail-waste)")]
    (check,) = [a for a in actions if a.command is not None and a.command.command == "pypto.checkAdvice"]
    assert check.title.startswith("pypto: simulate the advice's tile shapes for tail_vec on the sim board (up to ")
    assert check.diagnostics and "tile.tail-waste" in {d.code for d in check.diagnostics}
    (args,) = check.command.arguments or ()
    assert args["kernel"] == "tail_vec" and args["uri"] == doc.uri and args["seconds"] >= 10

    got = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("pypto.checkAdvice", [args]))
    assert got == {"kernel": "tail_vec", "seconds": args["seconds"]}
    # the same version again, its record taken as it was (its traced program is the one of the record shown), its
    # advice checked anew
    again = await client.records.wait(lambda r: r["kernel"] == "tail_vec" and r.get("reused") and not r["interim"])
    assert again["version"] == doc.version and again["error"] is None
    await client.published.wait(lambda p: p.uri == doc.uri and any(
        d.code == "tile.tail-waste" and CHECKED in d.message for d in p.diagnostics))
    after = _tail_waste(doc.diagnostics())
    assert CHECKED in after.message
    (fix,) = [a for a in await doc.actions(line) if a.edit is not None and a.title.startswith("pypto (tile.tail-")]
    assert fix.edit.changes[doc.uri][0].new_text == "pypto.set_vec_tile_shapes(16, 200)"
    # the longer bound was for that compile: the next one's check has the setting's again
    v = doc.replace("out[:] = pypto.exp(x)", "out[:] = pypto.exp(x)  # the same program")
    await client.records.record(doc.uri, "tail_vec", v)
    assert "stopped at its time bound (0 s)" in _tail_waste(doc.diagnostics()).message


async def test_without_seconds_the_bound_is_the_findings_and_a_bad_request_is_refused_naming_it(
        client, lsp_kit, tmp_path):
    """The health panel's button sends no bound: the server takes the one the quick fix offers."""
    doc = lsp_kit.Doc(client, tmp_path / "tail2.py", TAIL)
    await client.records.record(doc.uri, "tail_vec", 1)
    (check,) = [a for a in await doc.actions(doc.line_of("set_vec_tile_shapes(16, 384)"))
                if a.command is not None and a.command.command == "pypto.checkAdvice"]
    got = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        "pypto.checkAdvice", [{"uri": doc.uri, "kernel": "tail_vec"}]))
    assert got == {"kernel": "tail_vec", "seconds": check.command.arguments[0]["seconds"]}
    await client.published.wait(lambda p: p.uri == doc.uri and any(
        d.code == "tile.tail-waste" and CHECKED in d.message for d in p.diagnostics))
    with pytest.raises(Exception, match="no finding of 'tail_vec' has tile shapes"):  # all checked now
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "pypto.checkAdvice", [{"uri": doc.uri, "kernel": "tail_vec"}]))
    with pytest.raises(Exception, match="no kernel 'nope'"):
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "pypto.checkAdvice", [{"uri": doc.uri, "kernel": "nope", "seconds": 5}]))
    with pytest.raises(Exception, match=r"\{uri: str, kernel: str, seconds\?: number\}"):
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "pypto.checkAdvice", [{"uri": doc.uri, "kernel": "tail_vec", "seconds": "long"}]))
