"""The PyPTO language server: LSP and the pypto/* messages wired to the live compiler.

This module is the protocol edge and nothing else: it turns LSP notifications into calls
on `server.live.LiveCompiler` (which decides what to compile, when, and what is stale),
turns requests into lookups in `server.features` (diagnostics, hover, code lenses, inlay
hints, code actions) and `server.panels` (the custom requests of docs/protocol.md), and
sends back what the live compiler publishes (diagnostics, `pypto/recordChanged`,
`pypto/compileState`, `$/progress`, `window/logMessage`). Settings come from `initializationOptions` and the
`workspace/configuration` section "pypto" (re-read on `workspace/didChangeConfiguration`).

It imports pygls and lsprotocol and the server's own small modules — never torch or
pypto: the worker processes (`server.worker`) compile, profile and index; the server only
holds their JSON. Malformed pypto/* params are answered with InvalidParams; a kernel with
no record with RequestFailed (-32803); nothing a client sends takes the server down.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import os
import shlex
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import attrs
import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from server import capture_runner, features, history, panels, threads
from server import protocol as P
from server.live import LiveCompiler, Progress, typed
from server.panel_data import panel_run
from server.state import Document, Result
from server.worker import JobFailed, collector_paused

VERSION = "0.1.0"
REQUEST_FAILED = -32803
RUN_SKIPPED = "Run the skipped tests"  # the action offered after a capture whose tests skipped by their marks
SCAN_TTL = 10.0  # seconds a scan for the tests naming a kernel is reused (the capture quick fix)
LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
log = logging.getLogger("pypto.server")
T = TypeVar("T")


def _search_now(ls: PyptoLanguageServer, doc: Document, r: Result) -> list[Any] | None:
    """The advisor's suggestions for `r` if its tile-shape search has finished; else None, with the
    search started (once per kernel version, shared with pypto/suggestions) for a later request.
    A code action never waits for it: an answer held for the seconds a search takes is dropped by
    VS Code (the markers change, the lightbulb asks again), and Ctrl+. then says "No code actions
    available" although the findings' fixes were ready."""
    if ls.live.has(r, "suggest"):
        return list((r.analysis or {}).get("suggestions") or [])
    fut = r.extras.get("suggest")
    if fut is not None and fut.done() and not fut.cancelled():
        return None if fut.exception() is not None else list(fut.result().get("suggestions") or [])
    if fut is None or fut.cancelled():
        task = asyncio.ensure_future(ls.live.extra_output(doc, r, "suggest"))
        task.add_done_callback(lambda t: _search_done(r.name, t))
    return None


def _search_done(kernel: str, task: asyncio.Future[Any]) -> None:
    """A background search's outcome read (a failure logged, never "exception never retrieved")."""
    e = None if task.cancelled() else task.exception()
    if isinstance(e, JobFailed):
        log.warning("tile-shape search for %s failed (%s): %s", kernel, e.kind, e.message.splitlines()[0])
    elif e is not None:
        log.warning("tile-shape search for %s failed: %r", kernel, e)


class _NoProgress:
    def report(self, message: str, percentage: int | None = None) -> None:
        pass

    def end(self, message: str) -> None:
        pass


class _ClientProgress:
    """A server-initiated `$/progress` token: created, begun, reported, ended — in that order
    even when the work ends before the client answered the create request."""

    def __init__(self, ls: PyptoLanguageServer, title: str, on_cancel: Callable[[], None] | None = None) -> None:
        self.ls = ls
        self.title = title
        self.on_cancel = on_cancel  # given: the progress has a Cancel button (VS Code shows it as a notification)
        self.token = f"pypto-{uuid.uuid4().hex[:12]}"
        self.message: str | None = None
        self.percentage: int | None = None
        self.begun = False
        self.ended: str | None = None
        ls.spawn(self._create())

    async def _create(self) -> None:
        wdp = self.ls.work_done_progress
        try:
            await wdp.create_async(self.token)
        except Exception as e:  # noqa: BLE001 - the client refused: no progress shown
            log.debug("progress not created: %s", e)
            return
        wdp.begin(self.token, lsp.WorkDoneProgressBegin(title=self.title, message=self.message,
                                                        percentage=self.percentage,
                                                        cancellable=self.on_cancel is not None))
        self.begun = True
        cancelled = wdp.tokens.get(self.token)  # pygls cancels it on window/workDoneProgress/cancel
        if self.on_cancel is not None and cancelled is not None:
            loop, on_cancel = asyncio.get_running_loop(), self.on_cancel
            cancelled.add_done_callback(lambda f: loop.call_soon_threadsafe(on_cancel) if f.cancelled() else None)
        if self.ended is not None:
            wdp.end(self.token, lsp.WorkDoneProgressEnd(message=self.ended))

    def report(self, message: str, percentage: int | None = None) -> None:
        self.message, self.percentage = message, percentage
        if self.begun and self.ended is None:
            self.ls.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(message=message,
                                                                                     percentage=percentage))

    def end(self, message: str) -> None:
        if self.ended is not None:
            return
        self.ended = message
        if self.begun:
            self.ls.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))


class _ClientLog(logging.Handler):
    """The server's log as window/logMessage (sent from the event loop, whichever thread logs)."""

    LEVELS = ((logging.ERROR, lsp.MessageType.Error), (logging.WARNING, lsp.MessageType.Warning),
              (logging.INFO, lsp.MessageType.Info))

    def __init__(self, ls: PyptoLanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.INFO)
        self.ls = ls
        self.loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        kind = next((t for level, t in self.LEVELS if record.levelno >= level), lsp.MessageType.Log)
        params = lsp.LogMessageParams(type=kind, message=self.format(record))
        try:
            self.loop.call_soon_threadsafe(self.ls.window_log_message, params)
        except RuntimeError:  # the loop is closed: shutting down
            pass


class _Answered:
    """A request answered while it was parsed (with InvalidParams): nothing more to do."""

    jsonrpc = "2.0"


class Serialized:
    """A pypto/* result already turned into JSON text (on a thread: a 3 MB swimlane takes 150 ms)."""

    def __init__(self, text: str) -> None:
        self.text = text


class PyptoProtocol(LanguageServerProtocol):
    """pygls's protocol, with two changes at the boundary:

    - a request whose params do not parse into lsprotocol's types (an inlayHint range on line -5
      or 2**40) is answered with InvalidParams saying why: pygls raises while parsing the frame,
      before any handler, and the request would never be answered;
    - a `Serialized` result is sent as it is: the event loop only writes it."""

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None or not isinstance(result, Serialized) or self.writer is None:
            super()._send_response(msg_id, result, error)
            return
        self._result_types.pop(msg_id, None)
        body = f'{{"jsonrpc": "2.0", "id": {json.dumps(msg_id)}, "result": {result.text}}}'.encode(self.CHARSET)
        header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        written = self.writer.write((header.encode("ascii") if self._include_headers else b"") + body)
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            if not (isinstance(data, dict) and "method" in data and data.get("id") is not None):
                raise  # a notification (nothing to answer) or a response
            cause = e.__cause__
            why = ("; ".join(cattrs.transform_error(cause, format_exception=lambda x, _: str(x) or type(x).__name__))
                   if isinstance(cause, cattrs.BaseValidationError) else str(cause or e))
            self._send_response(data["id"], error=JsonRpcInvalidParams(f"{data['method']}: {why}").to_response_error())
            return _Answered()

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, _Answered):
            super().handle_message(message)


class PyptoLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("pypto-ide-server", VERSION, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=PyptoProtocol)
        self.settings = P.Settings()
        self.base_settings = P.Settings()  # defaults + initializationOptions: what a configuration omits
        self.live = LiveCompiler(self, self.settings)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.log_handler: logging.Handler | None = None  # window/logMessage, once initialized
        self.history_io = history.Store()  # every read and write of .pypto/history/, in order, off the loop
        self.captures = capture_runner.CaptureRunner()  # `pypto-ide capture` runs (pypto.capture), one at a time
        self._scans: dict[tuple[str, str, str], tuple[float, list[capture_runner.Found]]] = {}  # tests naming a kernel

    # ---- helpers -------------------------------------------------------------------------------

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _caps(self) -> lsp.ClientCapabilities:
        return self.client_capabilities or lsp.ClientCapabilities()

    def position_encoding(self) -> str:
        """The position encoding negotiated at initialize ("utf-16" unless the client offered another)."""
        try:
            encoding = self.workspace.position_encoding
        except RuntimeError:  # not initialized yet
            return "utf-16"
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def apply_settings(self, value: Any, source: str) -> None:
        new, problems = P.settings_from(value, self.base_settings)
        for p in problems:
            log.warning("ignored setting %s (from %s)", p, source)
        old, self.settings = self.settings, new
        self.live.settings = new
        # announced at the more verbose of the old and the new level (going quieter, the line
        # still says so; going louder, it is the first line let through), then the new applies
        level = LOG_LEVELS[new.log_level]
        if self.log_handler is not None and level < self.log_handler.level:
            self.log_handler.setLevel(level)
        log.info("settings (%s): %s", source, P.dump(new))
        if self.log_handler is not None:
            self.log_handler.setLevel(level)
        self.live.settings_changed(old)

    async def pull_settings(self) -> None:
        ws = self._caps().workspace
        if ws is None or not ws.configuration:
            return
        try:
            got = await asyncio.wait_for(self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=P.SECTION)])), 10.0)
        except Exception as e:  # noqa: BLE001 - a client that cannot answer keeps the current settings
            log.warning("workspace/configuration failed: %s", e)
            return
        if got:
            self.apply_settings(P.plain(got[0]), "workspace/configuration")

    # ---- the live compiler's sink --------------------------------------------------------------

    def publish(self, doc: Document) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=doc.uri, version=doc.version, diagnostics=features.diagnostics(doc)))

    def record_changed(self, doc: Document, r: Result) -> None:
        params = self._record_params(doc, r)
        if params is None:
            return
        self._notify_record(doc, params)
        if r.ok and r.summary is not None and doc.syntax_error is None and not r.interim:
            # kept on the history thread (a read-only workspace: logged, the IDE works on without it); a run the
            # panels draw by its figures only is kept so (`panel_run`): the history's reads (each pypto/record asks
            # for the baseline) waited behind the JSON and gzip of a big run's 10^6 arrows, which nothing showed
            self.history_io.submit(f"the compile history of {r.name}", _append, self.history(doc.path), doc.path,
                                   r.name, _history_line(doc, r), panel_run((r.editor or {}).get("swimlane")))
        summary = params.summary
        if summary is not None and doc.syntax_error is None:
            log.info("%s %s v%d: %.2f µs %s, %d tasks, %.0f%% utilized, %s-bound (%.0f ms in the worker pool%s)",
                     doc.uri.rsplit("/", 1)[-1], r.name, r.version, summary.makespan_us,
                     summary.clock.split(" (")[0], summary.tasks, 100 * summary.utilization, summary.bound,
                     1000 * r.seconds, "; its traced program unchanged: the last compile reused" if r.reused else "")

    def advice_changed(self, doc: Document, r: Result) -> None:
        """A tile search of the kernel's current result finished: if the best gain its advice offers
        changed, the same record again with the new figure (the status bar), and the lenses redrawn."""
        params = self._record_params(doc, r)
        if params is not None and params.best_gain != doc.gains.get(r.name):
            self._notify_record(doc, params)

    def _notify_record(self, doc: Document, params: P.RecordChangedParams) -> None:
        """Send a recordChanged; when the best gain it names is not the one the kernel's last said,
        the CodeLens (which names it too) is asked for again."""
        changed = params.best_gain != doc.gains.get(params.kernel)
        doc.gains[params.kernel] = params.best_gain
        self.protocol.notify(P.RECORD_CHANGED, P.dump(params))
        if changed:
            self.refresh()

    def _record_params(self, doc: Document, r: Result) -> P.RecordChangedParams | None:
        """The kernel's recordChanged (None for a function that is not a kernel)."""
        lines = features.lines_of(doc)
        summary = None
        if r.ok and r.summary is not None:
            s = r.summary
            summary = P.Summary(s["board"], s["clock"], float(s["makespan_us"]), int(s["tasks"]),
                                float(s["utilization"]), dict(s["core_utilization"]), s["bound"], s["why"],
                                int(s["tile_ops"]), int(s["leaves"]))
        error = None
        version = r.version
        if doc.syntax_error is not None:  # the latest version does not parse: its error, the run kept is stale
            d = features.diagnostics(doc)[0]
            error, version, summary = P.KernelError(d.message, str(d.code), d.range), doc.version, None
        diags = features.kernel_diagnostics(doc, r, lines) if error is None else []
        if not r.ok and diags:
            d = diags[0]
            error = P.KernelError(d.message, str(d.code), d.range)
        if r.not_a_kernel:
            return None
        return P.RecordChangedParams(doc.uri, r.name, version, features.def_range(lines, r), summary, error,
                                     round(r.seconds, 4), r.interim, features.best_gain(doc, r), r.reused,
                                     r.lowering if error is None else None)

    def history(self, path: str) -> history.History:
        """The compile history of the workspace folder holding `path` (else of the file's folder)."""
        folders = [f for f in self.workspace.folders.values()] if self.workspace is not None else []
        real = os.path.realpath(path)
        for f in folders:
            root = os.path.realpath(to_fs_path(f.uri) or "")
            if real.startswith(root.rstrip(os.sep) + os.sep):
                return history.History(root)
        return history.History(os.path.dirname(real))

    def compile_state(self, doc: Document, version: int, kernels: list[str], state: str) -> None:
        params = P.CompileStateParams(doc.uri, version, kernels, state, list(doc.kernels))  # type: ignore[arg-type]
        self.protocol.notify(P.COMPILE_STATE, P.dump(params))

    def compiled_ahead(self, doc: Document, version: int, kernel: str, line: int, tried: int, compiled: int) -> None:
        params = P.CompiledAheadParams(doc.uri, version, kernel, line, tried, compiled)
        self.protocol.notify(P.COMPILED_AHEAD, P.dump(params))

    def search_progress(self, doc: Document, r: Result, search: Any) -> None:
        try:
            params = P.SearchProgressParams(doc.uri, r.name, r.version, int(search["searched"]), int(search["space"]),
                                            float(search["seconds"]), search.get("baseline_us"),
                                            search.get("best_us"), str(search.get("best") or ""))
        except (KeyError, TypeError, ValueError) as e:
            log.debug("a malformed search progress from the worker: %s", e)
            return
        self.protocol.notify(P.SEARCH_PROGRESS, P.dump(params))

    def refresh(self) -> None:
        ws = self._caps().workspace
        for supported, send in (
                (ws is not None and ws.code_lens is not None and ws.code_lens.refresh_support,
                 self.workspace_code_lens_refresh),
                (ws is not None and ws.inlay_hint is not None and ws.inlay_hint.refresh_support,
                 self.workspace_inlay_hint_refresh)):
            if supported:
                fut = send(None)
                fut.add_done_callback(lambda f: f.cancelled() or f.exception())  # an error answer is not ours to raise

    def progress(self, title: str, on_cancel: Callable[[], None] | None = None) -> Progress:
        window = self._caps().window
        if window is None or not window.work_done_progress:
            return _NoProgress()
        return _ClientProgress(self, title, on_cancel)

    def folders(self) -> list[str]:
        try:
            return [to_fs_path(f.uri) or "" for f in self.workspace.folders.values()]
        except RuntimeError:  # not initialized
            return []

    async def tests_calling(self, root: str, kernel: str, near: str) -> list[capture_runner.Found]:
        """The tests naming `kernel` in its own file `near`, its folder and the workspace (a bounded scan on a
        thread, kept for SCAN_TTL s: the lightbulb asks again at every cursor move)."""
        key = (root, kernel, near)
        got = self._scans.get(key)
        if got is not None and time.monotonic() - got[0] < SCAN_TTL:
            return got[1]
        found = await asyncio.to_thread(capture_runner.tests_calling, root, kernel, near)
        if len(self._scans) > 64:
            self._scans.clear()
        self._scans[key] = (time.monotonic(), found)
        return found

    async def capture(self, args: dict[str, Any]) -> dict[str, Any]:
        """Run `pypto-ide capture` (the pypto.capture command): its output to the client's log as it
        comes, a progress while it runs, a message when it is done; then the open documents of the
        kernels it captured are compiled again (with their captures)."""
        words = capture_runner.parse_command(args.get("command"))
        uri = args.get("uri")
        path = to_fs_path(uri) if isinstance(uri, str) else None
        cwd = args.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            cwd = capture_runner.folder_for(path, self.folders()) if path else (self.folders() or [os.getcwd()])[0]
        timeout: Any = args.get("timeout")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            timeout = capture_runner.DEFAULT_TIMEOUT
        text = " ".join(words)
        run: asyncio.Task[capture_runner.Outcome] | None = None
        stopped = False

        def cancel() -> None:  # the progress's Cancel: the capture stopped, the command answered
            nonlocal stopped
            if run is not None and not run.done():
                stopped = True
                run.cancel()

        progress = self.progress(f"pypto: capturing `{text}`", cancel)
        progress.report(f"running in {cwd}")
        last = [0.0]

        def line(s: str) -> None:
            self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Log, message=f"[capture] {s}"))
            now = time.monotonic()
            if now - last[0] > 0.5:  # the progress shows the latest line, at most twice a second
                last[0] = now
                progress.report(s[:200])

        log.info("capture: running `%s` in %s (time limit %g s)", text, cwd, timeout)
        run = asyncio.ensure_future(self.captures.run(words, cwd, timeout, line, bool(args.get("all")),
                                                      bool(args.get("run_skipped"))))
        try:
            out = await run
        except asyncio.CancelledError:
            if not stopped:
                run.cancel()
                raise  # the request itself was cancelled
            out = capture_runner.Outcome(shlex.join(words), cwd, error="cancelled (its command was stopped)")
        finally:
            progress.end("done")
        kind = lsp.MessageType.Info if out.ok else lsp.MessageType.Warning if stopped else lsp.MessageType.Error
        message = out.message()
        if not out.ok:
            message += " (the PyPTO output has the command's output)"
        marked = out.skip_marked() if not out.captures and not stopped else []
        if marked:  # pytest skipped its tests by their marks: offered to run them (`pypto-ide capture --run-skipped`)
            self.spawn(self._offer_skipped(args, marked, message))
        else:
            self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))
        log.log(logging.INFO if out.ok else logging.WARNING, "%s", message)
        files = {features.norm(c["file"]) for c in out.captures}
        for doc in list(self.live.docs.values()):
            if features.norm(doc.path) in files:
                self.spawn(self.live.compile_now(doc.uri, True))
        return out.json()

    async def _offer_skipped(self, args: dict[str, Any], marked: list[dict[str, Any]], message: str) -> None:
        """A capture that called no kernel because pytest skipped tests by their marks: the message says which and
        why, and its action runs the capture again with those marks lifted."""
        reasons = "; ".join(sorted({s["reason"] for s in marked}))[:300]
        said = (f"{message}. pytest skipped {len(marked)} test(s) by their skip marks ({reasons}): "
                "run them anyway? They may be the biggest cases and take long.")
        got = await self.window_show_message_request_async(lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Error, message=said, actions=[lsp.MessageActionItem(title=RUN_SKIPPED)]))
        if got is not None and got.title == RUN_SKIPPED:
            await self.capture({**args, "run_skipped": True})

    # ---- custom requests -----------------------------------------------------------------------

    def document(self, uri: str) -> Document:
        doc = self.live.docs.get(uri)
        if doc is None:
            raise JsonRpcInvalidParams(f"{uri} is not an open document")
        return doc

    async def result(self, uri: str, kernel: str, interim: bool = False) -> tuple[Document, Result]:
        """The kernel's result, waiting for a compile in flight (`interim`: for its record, graph or
        swimlane, which an interim result has already — not for its advice); InvalidParams / RequestFailed."""
        doc = self.document(uri)
        if kernel not in doc.kernels:
            names = ", ".join(doc.kernels) or "none"
            raise JsonRpcInvalidParams(f"no kernel {kernel!r} in {uri} (kernels: {names})")
        if interim:
            await self.live.wait_current(doc, kernel, self.live.deadline())
        else:
            await self.live.wait(doc, self.live.deadline())
        r = doc.results.get(kernel)
        if r is None:
            raise JsonRpcException(f"{kernel} has not been compiled yet", code=REQUEST_FAILED)
        if not r.ok:
            diags = features.kernel_diagnostics(doc, r, features.lines_of(doc))
            why = diags[0].message if diags else "no record"
            raise JsonRpcException(f"{kernel} has no record: {why}", code=REQUEST_FAILED)
        return doc, r

    async def extra_output(self, doc: Document, r: Result, what: str) -> Any:
        try:
            out = await self.live.extra_output(doc, r, what)
        except JobFailed as e:
            raise JsonRpcException(f"{r.name}: the {what} job failed ({e.kind}): {e.message.splitlines()[0]}",
                                   code=REQUEST_FAILED) from None
        if isinstance(out, dict) and out.get("error"):  # the extra job's compile failed (the file changed?)
            raise JsonRpcException(f"{r.name}: {out['error'].get('message')}", code=REQUEST_FAILED)
        return out


def _history_line(doc: Document, r: Result) -> dict[str, Any]:
    """The history entry of a kernel's current result (its figures and tile calls as written)."""
    calls = history.tile_calls((r.editor or {}).get("tile_configs", ()), doc.text)
    return history.entry(r.version, r.summary or {}, calls, history.sha256(doc.text))


def _append(h: history.History, path: str, kernel: str, line: dict[str, Any], run: Any) -> None:
    """On the history thread: add a compile (its run serialized here, not on the event loop)."""
    h.append(path, kernel, line, None if run is None else history.run_json(run))


def _custom(ls: PyptoLanguageServer, method: str, cls: type[T],
            answer: Callable[[PyptoLanguageServer, T], Awaitable[Any]]) -> None:
    """Register a pypto/* request: typed params in, typed result out, InvalidParams for bad params."""

    async def handler(params: Any) -> Any:
        t0 = time.perf_counter()
        try:
            typed = P.parse(params, cls)
            result = await answer(ls, typed)
        except P.ParamsError as e:
            raise JsonRpcInvalidParams(f"{method}: {e}") from None
        out = await asyncio.to_thread(_serialize, result)  # a big answer is turned into JSON off the loop too
        log.debug("%s answered: %.1f ms, %d bytes", method, 1000 * (time.perf_counter() - t0), len(out.text))
        return out

    handler.__name__ = method.replace("/", "_")
    ls.feature(method)(handler)


def _serialize(result: Any) -> Serialized:
    if isinstance(result, P.RecordResult) and isinstance(result.record, P.RawJson):  # the record's text as it is
        rest = P.dump(attrs.evolve(result, record={}))
        del rest["record"]
        head = json.dumps(rest, separators=(",", ":"))
        return Serialized(f'{head[:-1]},"record":{result.record.text}}}')
    return Serialized(json.dumps(P.dump(result), separators=(",", ":")))


async def _graph(ls: PyptoLanguageServer, p: P.GraphParams) -> P.GraphResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return await _off_loop(P.GRAPH, r, panels.graph, doc, r, p)


async def _swimlane(ls: PyptoLanguageServer, p: P.SwimlaneParams) -> P.SwimlaneResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return await _off_loop(P.SWIMLANE, r, panels.swimlane, doc, r, p)


async def _off_loop(method: str, r: Result, fn: Callable[..., T], *args: Any) -> T:
    """A data request's answer computed on a thread: the event loop keeps answering (a hover, a
    keystroke) while a big window or graph is made. Logged (debug) as it leaves the loop."""
    log.debug("%s for %s v%d: computed off the event loop", method, r.name, r.version)
    return await asyncio.to_thread(fn, *args)


def _collector_paused(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` with Python's cyclic collector paused (`server.worker.collector_paused`)."""
    with collector_paused:
        return fn(*args)


async def _health(ls: PyptoLanguageServer, p: P.KernelParams) -> P.HealthResult:
    doc, r = await ls.result(p.uri, p.kernel)
    return panels.health(doc, r)


async def _suggestions(ls: PyptoLanguageServer, p: P.KernelParams) -> P.SuggestionsResult:
    doc, r = await ls.result(p.uri, p.kernel)
    out = await ls.extra_output(doc, r, "suggest")
    return panels.suggestions(doc, r, out.get("suggestions") or [], out.get("search"))


async def _precision(ls: PyptoLanguageServer, p: P.KernelParams) -> P.PrecisionResult:
    doc, r = await ls.result(p.uri, p.kernel)
    report = (await ls.extra_output(doc, r, "precision")).get("precision")
    if not isinstance(report, dict):
        raise JsonRpcException(f"{r.name}: no precision report", code=REQUEST_FAILED)
    return panels.precision(doc, r, report)


async def _nodes_at(ls: PyptoLanguageServer, p: P.NodesAtParams) -> P.NodesAtResult:
    return panels.nodes_at(ls.document(p.uri), p.position.line)


async def _source_of(ls: PyptoLanguageServer, p: P.SourceOfParams) -> P.SourceOfResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return panels.source_of(doc, r, p)


async def _record(ls: PyptoLanguageServer, p: P.KernelParams) -> P.RecordResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    doc.panels = True  # a panel follows this document: its next compiles carry the record
    doc.watched = r.name  # and shows this kernel: after an edit outside it, it compiles first
    out = await ls.extra_output(doc, r, "record")
    # off the event loop, with the collector paused (a big kernel's slim record is 10^5 dicts and lists: a full
    # collection over the server's heap on its way cost Kimi's block attention a second)
    result = await _off_loop(P.RECORD, r, _collector_paused, panels.record, doc, r, out)
    h = ls.history(doc.path)
    base = await _history_call(ls, h.baseline, doc.path, r.name)
    # a big baseline run: its figures only (only the current compile's run is drawn from windows)
    result.baseline = {**base, "run": panel_run(base.get("run"))} if base else base
    result.history = (await _history_call(ls, h.entries, doc.path, r.name))[-history.RECENT:]
    return result


async def _history_call(ls: PyptoLanguageServer, fn: Callable[..., T], *args: Any) -> T:
    """A history read or write on the history thread: an unknown entry is InvalidParams, what else
    it cannot do (an unwritable folder) RequestFailed, each with why."""
    try:
        return await ls.history_io.call(fn, *args)
    except history.UnknownEntry as e:
        raise JsonRpcInvalidParams(str(e)) from None
    except history.HistoryError as e:
        raise JsonRpcException(str(e), code=REQUEST_FAILED) from None


def _kernel_doc(ls: PyptoLanguageServer, uri: str, kernel: str) -> Document:
    """The open document defining `kernel` (its history may outlive a compile); else InvalidParams."""
    doc = ls.document(uri)
    if kernel not in doc.kernels:
        names = ", ".join(doc.kernels) or "none"
        raise JsonRpcInvalidParams(f"no kernel {kernel!r} in {uri} (kernels: {names})")
    return doc


async def _history(ls: PyptoLanguageServer, p: P.KernelParams) -> P.HistoryResult:
    doc = _kernel_doc(ls, p.uri, p.kernel)
    h = ls.history(doc.path)
    base = await _history_call(ls, h.baseline, doc.path, p.kernel)
    entries = await _history_call(ls, h.entries, doc.path, p.kernel)
    return P.HistoryResult(doc.uri, p.kernel, entries, base["entry"] if base else None)


async def _history_run(ls: PyptoLanguageServer, p: P.HistoryRunParams) -> P.HistoryRunResult:
    doc = _kernel_doc(ls, p.uri, p.kernel)
    h = ls.history(doc.path)
    e, run = await _history_call(ls, h.run, doc.path, p.kernel, p.entry)
    return P.HistoryRunResult(doc.uri, p.kernel, e, panel_run(run))


async def _pin_baseline(ls: PyptoLanguageServer, p: P.PinParams) -> P.HistoryResult:
    doc = _kernel_doc(ls, p.uri, p.kernel)
    h = ls.history(doc.path)
    if not p.pin:
        await _history_call(ls, h.unpin, doc.path, p.kernel)
    elif p.entry is not None:
        await _history_call(ls, h.pin_entry, doc.path, p.kernel, p.entry)
    else:
        doc, r = await ls.result(p.uri, p.kernel)
        run = (r.editor or {}).get("swimlane")
        if run is None or r.summary is None:
            raise JsonRpcException(f"{r.name} has no run to pin (it was compiled, not profiled)", code=REQUEST_FAILED)
        await _history_call(ls, _pin, h, doc.path, r.name, _history_line(doc, r), run)
    return await _history(ls, P.KernelParams(p.uri, p.kernel))


def _pin(h: history.History, path: str, kernel: str, line: dict[str, Any], run: Any) -> None:
    h.pin(path, kernel, line, history.run_json(panel_run(run)))  # as the panels draw a baseline (`_record`)


async def _pass(ls: PyptoLanguageServer, p: P.PassParams) -> P.PassResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return await _off_loop(P.PASS, r, panels.pass_graph, doc, r, await ls.extra_output(doc, r, "record"), p)


async def _tile_ops(ls: PyptoLanguageServer, p: P.TileOpsParams) -> P.TileOpsResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return await _off_loop(P.TILE_OPS, r, panels.tile_ops, doc, r, await ls.extra_output(doc, r, "record"), p)


async def _tile_grids(ls: PyptoLanguageServer, p: P.KernelParams) -> P.TileGridsResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return await _off_loop(P.TILE_GRIDS, r, panels.tile_grids, doc, r, await ls.extra_output(doc, r, "record"))


async def _block(ls: PyptoLanguageServer, p: P.BlockParams) -> P.BlockResult:
    doc, r = await ls.result(p.uri, p.kernel, interim=True)
    return await _off_loop(P.BLOCK, r, panels.block, doc, r, await ls.extra_output(doc, r, "record"), p)


async def _report(ls: PyptoLanguageServer, p: P.ReportParams) -> P.ReportResult:
    doc, r = await ls.result(p.uri, p.kernel)
    # one analysis with what was asked (both: one job, whose report has every finding in order)
    wanted = "+".join(w for w, on in (("suggest", p.suggest), ("precision", p.precision)) if on)
    result = panels.report(doc, r, await ls.extra_output(doc, r, wanted) if wanted else r.analysis or {})
    h = ls.history(doc.path)
    base = await _history_call(ls, h.baseline, doc.path, r.name)
    result.baseline = base["entry"] if base else None
    result.history = (await _history_call(ls, h.entries, doc.path, r.name))[-history.RECENT:]
    return result


async def _compile(ls: PyptoLanguageServer, p: P.CompileParams) -> P.CompileResult:
    doc = ls.document(p.uri)
    names = await ls.live.compile_now(doc.uri, p.force)
    return P.CompileResult(doc.uri, doc.version, names)


async def _load_trace(ls: PyptoLanguageServer, p: P.LoadTraceParams) -> P.TraceResult:
    try:
        out = await ls.live.job("load_trace", p.path)
    except JobFailed as e:
        raise JsonRpcException(f"{p.path}: reading the trace failed ({e.kind}): {e.message.splitlines()[0]}",
                               code=REQUEST_FAILED) from None
    if out.get("error"):
        raise JsonRpcException(str(out["error"]), code=REQUEST_FAILED)
    return P.TraceResult(out["path"], out["format"], out["label"], out["run"])


async def _pass_dump(ls: PyptoLanguageServer, p: P.PassDumpParams) -> dict[str, Any]:
    return await _dump_job(ls, "load_pass_dump", p.path, p.source)


async def _pass_dump_pass(ls: PyptoLanguageServer, p: P.PassDumpPassParams) -> dict[str, Any]:
    return await _dump_job(ls, "load_pass_dump_pass", p.path, p.index, p.source)


async def _dump_job(ls: PyptoLanguageServer, fn: str, path: str, *args: Any) -> dict[str, Any]:
    """A passes_dump/ read in a worker (bounded: the reader's size limits, the diff's time bound, the job's)."""
    try:
        out: dict[str, Any] = await ls.live.job(fn, path, *args)
    except JobFailed as e:
        raise JsonRpcException(f"{path}: reading the pass dump failed ({e.kind}): {e.message.splitlines()[0]}",
                               code=REQUEST_FAILED) from None
    if out.get("error"):
        raise JsonRpcException(str(out["error"]), code=REQUEST_FAILED)
    return out


def create_server() -> PyptoLanguageServer:
    ls = PyptoLanguageServer()

    @ls.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        threads.install()  # before the server's first thread (`server.threads`)
        opts = P.plain(params.initialization_options)
        if isinstance(opts, dict) and isinstance(opts.get(P.SECTION), dict):
            opts = opts[P.SECTION]
        if opts is not None:
            ls.apply_settings(opts, "initializationOptions")
            ls.base_settings = ls.settings

    @ls.feature(lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        handler = _ClientLog(ls, asyncio.get_running_loop())
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.setLevel(LOG_LEVELS[ls.settings.log_level])
        ls.log_handler = handler
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
        # the client shows window/logMessage and stderr in one channel: the server's own log goes
        # once, as logMessage; stderr keeps the libraries' warnings and anything before this
        log.propagate = False
        await ls.pull_settings()
        ls.live.ready.set()
        ls.spawn(ls.live.warm_up())  # with the configured pool: its workers are the ones that stay

    @ls.feature(lsp.SHUTDOWN)
    def shutdown(params: None) -> None:
        ls.captures.close()
        ls.live.close()

    @ls.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        ws = ls._caps().workspace
        if ws is not None and ws.configuration:
            await ls.pull_settings()
        else:
            value = P.plain(params.settings)
            if isinstance(value, dict):
                ls.apply_settings(value.get(P.SECTION, value), "workspace/didChangeConfiguration")

    @ls.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        td = params.text_document
        if td.language_id != "python" and not td.uri.endswith(".py"):
            return
        ls.live.open(td.uri, to_fs_path(td.uri) or td.uri, td.version, td.text, ls.position_encoding())

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.live.docs:
            changes = [(getattr(c, "range", None) is not None, c.text) for c in params.content_changes]
            ls.live.change(uri, params.text_document.version, ls.workspace.get_text_document(uri).source,
                           typed=typed(changes))

    @ls.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        ls.live.save(params.text_document.uri, params.text)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        if ls.live.close_document(params.text_document.uri) is not None:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                              diagnostics=[]))

    @ls.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        doc = ls.live.docs.get(params.text_document.uri)
        if doc is None:
            return None
        text = features.hover_text(doc, params.position.line + 1)
        if text is None:
            return None
        line = params.position.line
        width = features.lines_of(doc).width(line + 1)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text),
                         range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, width)))

    @ls.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    def code_lens(params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        doc = ls.live.docs.get(params.text_document.uri)
        if doc is None:
            return []
        found = capture_runner.targets(doc.text, doc.path)
        cwd = capture_runner.folder_for(doc.path, ls.folders())
        return features.code_lenses(doc) + features.capture_lenses(doc, found, cwd)

    @ls.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    def inlay_hint(params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        doc = ls.live.docs.get(params.text_document.uri)
        return [] if doc is None else features.inlay_hints(doc, params.range)

    @ls.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix], resolve_provider=False))
    async def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        doc = ls.live.docs.get(params.text_document.uri)
        only = params.context.only
        if doc is None or (only and not any(str(k).startswith(lsp.CodeActionKind.QuickFix) for k in only)):
            return []
        # the cursor on a tile-shape call: its next edits compiled ahead (the `compileAhead` setting; none by default)
        ls.live.compile_ahead(doc, features.tile_calls_at(doc, params.range))
        if any(r.interim for r in doc.results.values()):  # its advice is being checked: offer the checked one
            await ls.live.wait(doc, min(10.0, ls.live.deadline()))  # (VS Code drops an answer held much longer)
        past = {}  # a tile-entry error with no last good result in memory (a restart): the history's shapes
        for name in features.erring_tile_calls(doc):
            try:
                past[name] = await ls.history_io.call(ls.history(doc.path).entries, doc.path, name)
            except history.HistoryError as e:
                log.debug("no compile history of %s for its quick fixes: %s", name, e)
        actions = features.error_actions(doc, params.range, params.context.diagnostics, past)
        actions += features.finding_actions(doc, params.range, params.context.diagnostics)
        for r, tc in features.tile_calls_at(doc, params.range):
            found = _search_now(ls, doc, r)
            if found is not None:
                actions += features.suggestion_actions(doc, r, found, tc["id"])
        for r, knob in features.knobs_at(doc, params.range):  # a PyPTO 3 kernel's slice-size constant
            found = _search_now(ls, doc, r)
            if found is not None:
                actions += features.suggestion_actions(doc, r, found, int(knob["config"]))
        for kernel, diag in features.missing_inputs(doc, params.range, params.context.diagnostics):
            cwd = capture_runner.folder_for(doc.path, ls.folders())
            actions += features.capture_actions(kernel, diag, await ls.tests_calling(cwd, kernel, doc.path), cwd)
        return actions

    @ls.command(features.CAPTURE_COMMAND)
    async def capture(*args: Any) -> dict[str, Any]:
        """pypto.capture {command: str | [str], cwd?, uri?, timeout?, all?, run_skipped?}: run `pypto-ide capture`."""
        value = P.plain(args[0]) if len(args) == 1 else None
        if not isinstance(value, dict):
            raise JsonRpcInvalidParams(f"{features.CAPTURE_COMMAND}: one argument, "
                                       "{command: str | [str], cwd?, uri?, timeout?, all?, run_skipped?}")
        try:
            return await ls.capture(value)
        except ValueError as e:
            raise JsonRpcInvalidParams(f"{features.CAPTURE_COMMAND}: {e}") from None

    @ls.command(features.CHECK_ADVICE_COMMAND)
    async def check_advice(*args: Any) -> dict[str, Any]:
        """pypto.checkAdvice {uri, kernel, seconds?}: compile the kernel again now, its advice's tile shapes checked
        within `seconds` (at most ten minutes; absent: what its findings' estimates ask, `features.advice_bound`);
        answers at once with the bound, the result comes as a compile's."""
        value = P.plain(args[0]) if len(args) == 1 else None
        usage = f"{features.CHECK_ADVICE_COMMAND}: one argument, {{uri: str, kernel: str, seconds?: number}}"
        seconds = value.get("seconds") if isinstance(value, dict) else None
        if not isinstance(value, dict) or not isinstance(value.get("uri"), str) or \
                not isinstance(value.get("kernel"), str) or isinstance(seconds, bool) or \
                not isinstance(seconds, (int, float, type(None))):
            raise JsonRpcInvalidParams(usage)
        doc = ls.live.docs.get(value["uri"])
        if doc is None:
            raise JsonRpcInvalidParams(f"{features.CHECK_ADVICE_COMMAND}: {value['uri']} is not open")
        if value["kernel"] not in doc.kernels:
            raise JsonRpcInvalidParams(f"{features.CHECK_ADVICE_COMMAND}: no kernel {value['kernel']!r} in "
                                       f"{value['uri']}")
        if seconds is None:
            seconds = features.advice_bound(doc, value["kernel"])
            if seconds is None:
                raise JsonRpcInvalidParams(f"{features.CHECK_ADVICE_COMMAND}: no finding of {value['kernel']!r} has "
                                           "tile shapes its check left unsimulated")
        return {"kernel": value["kernel"], "seconds": ls.live.check_advice(value["uri"], value["kernel"],
                                                                            float(seconds))}

    _custom(ls, P.GRAPH, P.GraphParams, _graph)
    _custom(ls, P.SWIMLANE, P.SwimlaneParams, _swimlane)
    _custom(ls, P.HEALTH, P.KernelParams, _health)
    _custom(ls, P.SUGGESTIONS, P.KernelParams, _suggestions)
    _custom(ls, P.PRECISION, P.KernelParams, _precision)
    _custom(ls, P.NODES_AT, P.NodesAtParams, _nodes_at)
    _custom(ls, P.SOURCE_OF, P.SourceOfParams, _source_of)
    _custom(ls, P.RECORD, P.KernelParams, _record)
    _custom(ls, P.HISTORY, P.KernelParams, _history)
    _custom(ls, P.PIN_BASELINE, P.PinParams, _pin_baseline)
    _custom(ls, P.HISTORY_RUN, P.HistoryRunParams, _history_run)
    _custom(ls, P.PASS, P.PassParams, _pass)
    _custom(ls, P.TILE_OPS, P.TileOpsParams, _tile_ops)
    _custom(ls, P.TILE_GRIDS, P.KernelParams, _tile_grids)
    _custom(ls, P.BLOCK, P.BlockParams, _block)
    _custom(ls, P.REPORT, P.ReportParams, _report)
    _custom(ls, P.COMPILE, P.CompileParams, _compile)
    _custom(ls, P.LOAD_TRACE, P.LoadTraceParams, _load_trace)
    _custom(ls, P.PASS_DUMP, P.PassDumpParams, _pass_dump)
    _custom(ls, P.PASS_DUMP_PASS, P.PassDumpPassParams, _pass_dump_pass)
    return ls
