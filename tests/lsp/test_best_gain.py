"""The best verified gain over stdio: `pypto/recordChanged` names it (`bestGain`, what the status bar
shows) — never in the interim record, whose advice is not checked yet — with the same figure the
kernel's CodeLens ends with; when it changes (the checked advice arrives, a tile search finds a
faster shape) the server asks a client that supports it for the lenses again
(`workspace/codeLens/refresh`) — docs/protocol.md."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")

# 1000 columns in tiles of 384: a tail the health rule proposes to fix with 200 (the board finds it faster)
TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


def _gain_text(g: dict[str, Any]) -> str:
    return f" · best advice {g['speedup']:.2f}× faster ({g['clock']}, {g['board']} board)"


@contextlib.asynccontextmanager
async def _refreshing_client(lsp_kit: Any, root: Path) -> AsyncIterator[Any]:
    """A server of its own, and a client that declares `workspace.codeLens.refreshSupport` and notes
    in `refreshes`, for each refresh request, how many records had come before it (the shared client
    declares no refresh support: it is never asked)."""
    client = lsp_kit.make_client()
    client.refreshes = []

    @client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(params: Any) -> None:
        client.refreshes.append(len(client.records.items))  # how many records had come by then

    caps = attrs.evolve(lsp_kit.CAPABILITIES, workspace=attrs.evolve(
        lsp_kit.CAPABILITIES.workspace, code_lens=lsp.CodeLensWorkspaceClientCapabilities(refresh_support=True)))
    await client.start_io(sys.executable, "-m", "server")
    try:
        await client.initialize_session(lsp.InitializeParams(
            capabilities=caps, workspace_folders=[lsp.WorkspaceFolder(root.as_uri(), "tmp")]))
        yield client
    finally:  # also after a failed assertion: the server exits, and stop() waits for that
        await client.shutdown_session()
        await client.stop()


async def test_the_record_names_the_best_checked_gain_and_the_interim_one_none(lsp_kit, tmp_path):
    async with _refreshing_client(lsp_kit, tmp_path) as client:
        doc = lsp_kit.Doc(client, tmp_path / "tail.py", TAIL)
        first = await client.records.record(doc.uri, "tail_vec", 1, interim=True)
        assert first["bestGain"] is None, "the interim record claims no gain: its shapes are being simulated"
        final = await client.records.record(doc.uri, "tail_vec", 1)
        gain = final["bestGain"]
        assert gain is not None and gain["speedup"] > 1.0, final
        assert gain["board"] == "sim" and gain["clock"] == "simulated"
        assert gain["shape"].endswith("set_vec_tile_shapes(16, 200)")
        assert gain["line"] == doc.line_of("set_vec_tile_shapes(16, 384)") + 1
        # the CodeLens says the same figure; it was asked for again once the record naming it had come
        lenses = await doc.lenses()
        (summary,) = [x.command.title for x in lenses if x.command and x.command.command == "pypto.openReport"]
        assert summary.endswith(_gain_text(gain)), summary
        final_at = [id(r) for r in client.records.items].index(id(final))
        assert any(n > final_at for n in client.refreshes), (client.refreshes, final_at)


async def test_a_finished_tile_search_with_a_faster_shape_resends_the_record_and_refreshes_the_lenses(
        lsp_kit, tmp_path):
    """On the small softmax the health findings' checked shape wins a little; the tile search finds a
    shape far faster: the same version's record comes again, naming it, and the lenses are asked for."""
    async with _refreshing_client(lsp_kit, tmp_path) as client:
        doc, _ = await lsp_kit.open_softmax(client, tmp_path)
        await client.states.wait(lambda s: s["uri"] == doc.uri and s["state"] == "finished" and s["version"] == 1)
        finals = [r for r in client.records.items if r["uri"] == doc.uri and not r["interim"]]
        before = finals[-1]["bestGain"]
        seen = {id(r) for r in client.records.items}
        got = await doc.call("pypto/suggestions", kernel="softmax_kernel")
        best = max(s["speedup"] for s in got["suggestions"])
        assert before is None or best > before["speedup"], "the search must beat the findings for this test"
        again = await client.records.wait(lambda r: id(r) not in seen and r["uri"] == doc.uri)
        assert again["version"] == 1 and not again["interim"] and again["summary"] == finals[-1]["summary"]
        assert again["bestGain"]["speedup"] == pytest.approx(best)
        shapes = {s["text"] for s in got["suggestions"] if s["speedup"] == best}
        assert again["bestGain"]["shape"] in shapes
        lenses = await doc.lenses()
        (summary,) = [x.command.title for x in lenses if x.command and x.command.command == "pypto.openReport"]
        assert summary.endswith(_gain_text(again["bestGain"])), summary
        at = [id(r) for r in client.records.items].index(id(again))
        assert any(k > at for k in client.refreshes), (client.refreshes, at)
