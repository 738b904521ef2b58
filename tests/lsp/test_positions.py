"""LSP positions are in the negotiated encoding (UTF-16 by default), not Python's UTF-8 byte
columns: on lines holding astral-plane characters ("𝄞" is 4 bytes, 2 UTF-16 units, 1 code point)
and combining marks ("e" + U+0301: 3 bytes, 2 units, 2 code points) before the thing shown, the
diagnostics, the source links of pypto/sourceOf, the inlay hints and the hover ranges land on it.
A second server, whose client offers only UTF-8, gets byte columns."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

MARKS = "𝄞𝄞e\u0301"
TEXT = f'''import pypto


@pypto.frontend.jit
def bad(x: pypto.Tensor([4, 64], pypto.DT_FP32), out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    s, y = "{MARKS}", pypto.matmul(x, x, pypto.DT_FP32)
    out[:] = y


@pypto.frontend.jit
def good(x: pypto.Tensor([4, 64], pypto.DT_FP32), out: pypto.Tensor([4, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    s, e = "{MARKS}", pypto.exp(x)  # {MARKS}
    out[:] = e
'''
CALL = "pypto.matmul(x, x, pypto.DT_FP32)"


def units(text: str, encoding: str) -> int:
    return {"utf-8": len(text.encode("utf-8")), "utf-16": len(text.encode("utf-16-le")) // 2,
            "utf-32": len(text)}[encoding]


def at(text: str, needle: str, encoding: str = "utf-16") -> tuple[int, int]:
    """(line, character) of `needle`'s first occurrence, its column counted in `encoding`."""
    for i, line in enumerate(text.split("\n")):
        if needle in line:
            return i, units(line[:line.index(needle)], encoding)
    raise AssertionError(needle)


async def opened(client: LanguageClient, lsp_kit, tmp_path: Path, text: str = TEXT):
    doc = lsp_kit.Doc(client, tmp_path / "marks.py", text)
    await client.records.record(doc.uri, "bad", 1)
    await client.records.record(doc.uri, "good", 1)
    return doc


async def test_a_compile_error_after_astral_characters_and_combining_marks(client, lsp_kit, tmp_path):
    doc = await opened(client, lsp_kit, tmp_path)
    record = await client.records.record(doc.uri, "bad", 1)
    line, char = at(TEXT, CALL)
    assert char == 12 + 4 + 2 + 3  # "𝄞" is two UTF-16 units, "e" and its mark one each (bytes: 26)
    assert record["error"]["range"] == {"start": {"line": line, "character": char},
                                        "end": {"line": line, "character": char + len(CALL)}}
    published = await client.published.wait(lambda p: p.uri == doc.uri and any(d.code == "compile.error"
                                                                                 for d in p.diagnostics))
    (d,) = [d for d in published.diagnostics if d.code == "compile.error"]
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (line, char, char + len(CALL))


async def test_source_links_inlay_hints_and_hover_ranges_count_utf16_units(client, lsp_kit, tmp_path):
    doc = await opened(client, lsp_kit, tmp_path)
    line, char = at(TEXT, "pypto.exp(x)")
    (exp,) = [k for k in (await doc.call("pypto/nodesAt", position={"line": line, "character": 0}))["kernels"]
              if k["kernel"] == "good"]
    node = next(n for n in exp["nodes"] if n["op"] == "exp")
    src = await doc.call("pypto/sourceOf", kernel="good", node=node["id"])
    (loc,) = [x for x in src["locations"] if x["uri"] == doc.uri]
    assert loc["range"]["start"] == {"line": line, "character": char}
    assert loc["range"]["end"] == {"line": line, "character": char + len("pypto.exp(x)")}
    width = units(TEXT.split("\n")[line], "utf-16")
    hints = [h for h in await doc.hints() if h.position.line == line]
    assert [h.position.character for h in hints] == [width]
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(doc.uri),
                                                                   lsp.Position(line, 4)))
    assert hover is not None and hover.range is not None and hover.range.end.character == width


async def test_a_syntax_error_after_astral_characters(client, lsp_kit, tmp_path):
    text = TEXT + f's = "{MARKS}" + )\n'
    doc = lsp_kit.Doc(client, tmp_path / "syntax.py", text)
    published = await client.published.wait(lambda p: p.uri == doc.uri and p.diagnostics)
    (d,) = published.diagnostics
    line, char = at(text, "+ )")
    assert d.code == "python.syntax" and (d.range.start.line, d.range.start.character) == (line, char + 2)


# ---- a client that negotiates UTF-8 ----------------------------------------------------------------

def make_utf8_client() -> LanguageClient:
    """pytest-lsp's client with every publishDiagnostics also put on a queue (`client.queue`)."""
    client = make_test_lsp_client()
    client.queue = asyncio.Queue()  # type: ignore[attr-defined]
    features = client.protocol.fm.features
    original = features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def tap(params: lsp.PublishDiagnosticsParams) -> None:
        original(params)
        client.queue.put_nowait(params)  # type: ignore[attr-defined]

    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = tap
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "server"],
                                              client_factory=make_utf8_client), scope="module")
async def utf8_client(lsp_client: LanguageClient):
    caps = lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(position_encodings=["utf-8", "utf-16"]))
    result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps,
                                                                      initialization_options=SERVER_SETTINGS))
    assert result.capabilities.position_encoding == "utf-8"
    yield
    await lsp_client.shutdown_session()


async def test_a_client_that_negotiated_utf8_gets_byte_columns(utf8_client: LanguageClient, tmp_path: Path):
    uri = (tmp_path / "marks8.py").as_uri()
    (tmp_path / "marks8.py").write_text(TEXT)
    utf8_client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=TEXT)))
    line, char = at(TEXT, CALL, "utf-8")
    assert char == 12 + 8 + 3 + 3
    while True:  # each publish is an event on the queue; the compile error comes in one of them
        params = await asyncio.wait_for(utf8_client.queue.get(), 90.0)  # type: ignore[attr-defined]
        errors = [d for d in params.diagnostics if d.code == "compile.error"]
        if params.uri == uri and errors:
            break
    (d,) = errors
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (line, char, char + len(CALL))
