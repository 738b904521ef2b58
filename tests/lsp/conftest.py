"""The language-server tests' client: the real server (`python -m server`) as a subprocess, driven
by pytest-lsp's LanguageClient over stdio, one server per test module.

A module sets `SERVER_SETTINGS` (the "pypto" settings, sent as initializationOptions and
answered again to workspace/configuration) to get a server configured for it (a short time
limit, a small memory limit, a short debounce). Tests wait on what the server sends —
`pypto/recordChanged` notifications, collected by the client in `client.records` — never
on sleeps: `await client.records.wait(lambda r: ...)` returns the first notification, past
or future, that matches (and fails after a generous timeout instead of hanging).

Helpers are fixtures (`lsp_kit`), not imports: several conftest.py files exist.
"""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client
from support import softmax_source

from server.protocol import COMPILE_STATE, COMPILED_AHEAD, RECORD_CHANGED, SEARCH_PROGRESS, plain

WAIT = 90.0  # seconds: only a broken server ever waits this long


class Inbox:
    """Notifications of one method, in arrival order, with waiters for the first that matches."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._waiters: list[tuple[Callable[[Any], bool], asyncio.Future[Any]]] = []

    def push(self, item: Any) -> None:
        self.items.append(item)
        for pred, fut in list(self._waiters):
            if not fut.done() and pred(item):
                fut.set_result(item)
                self._waiters.remove((pred, fut))

    async def wait(self, pred: Callable[[Any], bool], timeout: float = WAIT) -> Any:
        for item in self.items:
            if pred(item):
                return item
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters.append((pred, fut))
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            seen = [_brief(i) for i in self.items]
            raise AssertionError(f"no matching notification within {timeout:g} s; got {seen}") from None

    async def record(self, uri: str, kernel: str, version: int | None = None, **more: Any) -> dict[str, Any]:
        """The recordChanged of `kernel` in `uri` (at `version` or later), its final one (`interim=True`: the
        one sent before the board has checked the advice)."""
        more.setdefault("interim", False)

        def match(r: dict[str, Any]) -> bool:
            return (r["uri"] == uri and r["kernel"] == kernel and (version is None or r["version"] >= version)
                    and all(r.get(k, False if k == "interim" else None) == v for k, v in more.items()))
        return await self.wait(match)


def _brief(item: Any) -> Any:
    if isinstance(item, dict) and "kernel" in item:
        return (item["kernel"], item["version"], (item.get("error") or {}).get("code"))
    return getattr(item, "message", None) or getattr(item, "value", None) or item


def _read_code_actions_as_vscode_does(client: LanguageClient) -> None:
    """lsprotocol's client side takes any `command` key for a Command: a CodeAction carrying a command (the capture
    and check-advice quick fixes) would arrive as a Command. VS Code tells them apart by `command` being a string."""
    conv = client.protocol._converter

    def hook(obj: Any, _: type) -> Any:
        cls = lsp.Command if isinstance(obj.get("command"), str) else lsp.CodeAction
        return conv.structure(obj, cls)

    conv.register_structure_hook(Union[lsp.Command, lsp.CodeAction], hook)  # noqa: UP007 - the hook's own key


def make_client() -> LanguageClient:
    """pytest-lsp's client, with an inbox per server message the tests wait on: `records`
    (pypto/recordChanged, as dicts), `states` (pypto/compileState, as dicts), `searches`
    (pypto/searchProgress, as dicts), `ahead` (pypto/compiledAhead, as dicts), `asked` (window/showMessageRequest,
    answered with the action titled `client.answer`, else dismissed), `published` (publishDiagnostics), `logs`
    (window/logMessage) and `progress` ($/progress) — the last three still reach pytest-lsp's own handlers
    (`client.diagnostics`, `client.log_messages`, `client.progress_reports`)."""
    client = make_test_lsp_client()
    _read_code_actions_as_vscode_does(client)
    client.records = Inbox()  # type: ignore[attr-defined]

    @client.feature(RECORD_CHANGED)
    def record_changed(params: Any) -> None:
        client.records.push(plain(params))  # type: ignore[attr-defined]

    client.states = Inbox()  # type: ignore[attr-defined]

    @client.feature(COMPILE_STATE)
    def compile_state(params: Any) -> None:
        client.states.push(plain(params))  # type: ignore[attr-defined]

    client.searches = Inbox()  # type: ignore[attr-defined]

    @client.feature(SEARCH_PROGRESS)
    def search_progress(params: Any) -> None:
        client.searches.push(plain(params))  # type: ignore[attr-defined]

    client.ahead = Inbox()  # type: ignore[attr-defined]

    @client.feature(COMPILED_AHEAD)
    def compiled_ahead(params: Any) -> None:
        client.ahead.push(plain(params))  # type: ignore[attr-defined]

    client.asked = Inbox()  # type: ignore[attr-defined]
    client.answer = None  # type: ignore[attr-defined]  # the action title a showMessageRequest is answered with

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
        client.asked.push(params)  # type: ignore[attr-defined]
        chosen = [a for a in params.actions or () if a.title == client.answer]  # type: ignore[attr-defined]
        return chosen[0] if chosen else None

    for attr, method in (("published", lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), ("logs", lsp.WINDOW_LOG_MESSAGE),
                         ("progress", lsp.PROGRESS)):
        inbox = Inbox()
        setattr(client, attr, inbox)
        features = client.protocol.fm.features
        original = features[method]

        def tap(params: Any, original: Any = original, inbox: Inbox = inbox) -> Any:
            result = original(params)
            inbox.push(params)
            return result

        features[method] = tap
    return client


CAPABILITIES = lsp.ClientCapabilities(
    workspace=lsp.WorkspaceClientCapabilities(configuration=True, apply_edit=True),
    window=lsp.WindowClientCapabilities(work_done_progress=True),
    text_document=lsp.TextDocumentClientCapabilities(
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
        code_action=lsp.CodeActionClientCapabilities(code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
            code_action_kind=lsp.ClientCodeActionKindOptions(value_set=[lsp.CodeActionKind.QuickFix]))),
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
    ),
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "server"],
                                              client_factory=make_client), scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    settings = dict(getattr(request.module, "SERVER_SETTINGS", {}))
    lsp_client.set_configuration(settings, section="pypto")
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=CAPABILITIES, initialization_options={"pypto": settings},
        workspace_folders=[lsp.WorkspaceFolder(uri=Path.cwd().as_uri(), name="main")]))
    yield
    await lsp_client.shutdown_session()


class Doc:
    """One open document: its uri, text and version, edited the way an editor does."""

    def __init__(self, client: LanguageClient, path: Path, text: str) -> None:
        self.client, self.path, self.text, self.version = client, path, text, 1
        self.uri = path.as_uri()
        path.write_text(text)
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)))

    def replace(self, old: str, new: str) -> int:
        """Edit the first `old` into `new` (an incremental change); the new version."""
        at = self.text.index(old)
        line = self.text.count("\n", 0, at)
        col = at - (self.text.rfind("\n", 0, at) + 1)
        end_line = line + old.count("\n")
        end_col = (len(old) - old.rfind("\n") - 1) if "\n" in old else col + len(old)
        return self.edit(lsp.Range(lsp.Position(line, col), lsp.Position(end_line, end_col)), new)

    def edit(self, rng: lsp.Range, new: str) -> int:
        return self.edit_at([(rng, new)])

    def edit_at(self, changes: list[tuple[lsp.Range, str]]) -> int:
        """Several changes in one event, each applied to the text the ones before it left (an editor's keystroke at
        several cursors, the last cursor first); the new version."""
        for rng, new in changes:
            lines = self.text.split("\n")
            start = sum(len(x) + 1 for x in lines[:rng.start.line]) + rng.start.character
            end = sum(len(x) + 1 for x in lines[:rng.end.line]) + rng.end.character
            self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=new) for rng, new in changes]))
        return self.version

    def apply(self, edit: lsp.WorkspaceEdit) -> int:
        """Apply a code action's WorkspaceEdit (bottom-up) as the editor would."""
        assert edit.changes is not None and self.uri in edit.changes
        for e in sorted(edit.changes[self.uri], key=lambda e: (e.range.start.line, e.range.start.character),
                        reverse=True):
            self.edit(e.range, e.new_text)
        return self.version

    def line_of(self, needle: str) -> int:
        """0-based line of the first line containing `needle`."""
        for i, text in enumerate(self.text.splitlines()):
            if needle in text:
                return i
        raise AssertionError(f"{needle!r} not in the document")

    # ---- requests

    def _id(self) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(uri=self.uri)

    async def call(self, method: str, **params: Any) -> Any:
        """A pypto/* request about this document; the result as plain dicts and lists."""
        return plain(await self.client.protocol.send_request_async(method, {"uri": self.uri, **params}))

    async def hover(self, line: int, character: int = 4) -> str | None:
        h = await self.client.text_document_hover_async(lsp.HoverParams(self._id(), lsp.Position(line, character)))
        if h is None:
            return None
        assert isinstance(h.contents, lsp.MarkupContent) and h.contents.kind == lsp.MarkupKind.Markdown
        return h.contents.value

    async def lenses(self) -> list[lsp.CodeLens]:
        return list(await self.client.text_document_code_lens_async(lsp.CodeLensParams(self._id())) or ())

    async def hints(self) -> list[lsp.InlayHint]:
        end = lsp.Position(len(self.text.splitlines()) + 1, 0)
        got = await self.client.text_document_inlay_hint_async(
            lsp.InlayHintParams(self._id(), lsp.Range(lsp.Position(0, 0), end)))
        return list(got or ())

    async def actions(self, line: int, character: int = 8) -> list[lsp.CodeAction]:
        at = lsp.Position(line, character)
        diags = [d for d in self.diagnostics() if d.range.start.line <= line <= d.range.end.line]
        got = await self.client.text_document_code_action_async(lsp.CodeActionParams(
            self._id(), lsp.Range(at, at), lsp.CodeActionContext(diagnostics=diags)))
        return [a for a in got or () if isinstance(a, lsp.CodeAction)]

    def save(self) -> None:
        self.path.write_text(self.text)
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(self._id()))

    def diagnostics(self) -> list[lsp.Diagnostic]:
        return list(self.client.diagnostics.get(self.uri, ()))

    def close(self) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(self.uri)))


# the small softmax kernel several test files open (one file per test: a fresh document)
SOFTMAX = softmax_source(4, "softmax_kernel")
SOFTMAX_KERNEL = "softmax_kernel"


async def open_softmax(client: LanguageClient, tmp_path: Path, name: str = "softmax.py") -> tuple[Doc, dict]:
    """Open the softmax kernel as a new document and wait for its first compiled record."""
    doc = Doc(client, tmp_path / name, SOFTMAX)
    record = await client.records.record(doc.uri, SOFTMAX_KERNEL, 1)
    assert record["error"] is None
    return doc, record


@pytest.fixture(scope="session")
def lsp_kit() -> types.SimpleNamespace:
    return types.SimpleNamespace(Doc=Doc, WAIT=WAIT, SOFTMAX=SOFTMAX, open_softmax=open_softmax,
                                 make_client=make_client, CAPABILITIES=CAPABILITIES)
