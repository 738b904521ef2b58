"""Live compile: which kernels to recompile after an edit, when, and what to do with stale work.

The language server calls `open` / `change` / `save` / `close` with each document version;
this module decides the rest:

- **debounce** — a change waits `debounce_ms` (300 by default) of quiet before anything
  runs; `open` and `save` run at once, and so does a *whole edit after quiet*: a change that puts in two
  or more letters or digits at once (a quick fix's tile shape, a paste, an agent's edit: `_whole_edit`)
  more than `debounce_ms` after the document's last change, when the file still parses. Typing (a character
  at a time, a bracket pair, a newline and its indent; the same keystroke at several cursors, `typed`), a change
  within a burst of changes and a whole edit that leaves a syntax error wait as before. Each document has at most
  one update task; a newer version cancels the older one's task.
- **what to run** — the version is parsed here (`server.state.parse_version`): each kernel
  has a key (its text and position, the code outside all kernels, the settings). A kernel
  whose latest result has the current key is not recompiled. Those that are start in order of
  their distance from the edit (the kernel it is in first, then the kernel the panels show:
  the last one a `pypto/record` asked for); on a recompile the first runs alone until its record
  is in, then the rest start. A job whose kernel traces to a program the server has an answer for
  reuses that answer (`server.analyze.reuse_answer`).
- **cancellation** — analyses in flight are shared futures keyed by kernel key. The moment
  a change arrives, every analysis of that document whose key the new version no longer
  has is cancelled, which kills its worker job (`WorkerPool.run`); one whose key survives
  the edit keeps running and is picked up by the next update — typing in one kernel never
  restarts the compile of another.
- **isolation** — analyses run in the worker pool under the time and memory limits; a
  failure (timeout, memory, crashed, error) is that kernel's result, at its `def` line. A
  module that fails to execute (whatever it raised) is reported at its own line, once. What a
  job prints is logged with its file and kernel (`log_output`).
- **extras** — advisor suggestions and the precision diff run only when asked (a code
  action, a pypto/suggestions, pypto/precision or pypto/report request, or the settings
  `suggest` / `precision`); their jobs are cached on the result and die with it. The full
  CompileRecord (for the graph and swimlane panels) is an extra too, until a client first
  asks for one in a document: from then on that document's compiles carry it.

Results are published through a `Sink` (the language server): `pypto/compileState` when an
update starts compiling kernels and when it ends, diagnostics for the document, then
`pypto/recordChanged` for the kernel, as each kernel finishes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from server import ahead, threads
from server.analyze import BESIDE_FROM, INTERIM, PANEL_PARTS, not_checked, reuse_answer, with_editor_run
from server.protocol import Settings
from server.slots import Slots
from server.state import AheadRun, Document, Kernel, Result, parse_version
from server.worker import BACKGROUND_NICE, JobFailed, JobTimes, WorkerPool, wall_backstop

# the longest bound a check of a kernel's advice may be asked for (`check_advice`): ten minutes, as the agents' search
MAX_CHECK_SECONDS = 600.0

log = logging.getLogger("pypto.server")
Json = Any


class Progress(Protocol):
    def report(self, message: str, percentage: int | None = None) -> None: ...

    def end(self, message: str) -> None: ...


class Sink(Protocol):
    def publish(self, doc: Document) -> None: ...

    def record_changed(self, doc: Document, result: Result) -> None: ...

    def compile_state(self, doc: Document, version: int, kernels: list[str], state: str) -> None: ...

    def search_progress(self, doc: Document, result: Result, search: Json) -> None: ...

    def advice_changed(self, doc: Document, result: Result) -> None: ...

    def compiled_ahead(self, doc: Document, version: int, kernel: str, line: int, tried: int,
                       compiled: int) -> None: ...

    def refresh(self) -> None: ...

    def progress(self, title: str) -> Progress: ...


class LiveCompiler:
    def __init__(self, sink: Sink, settings: Settings) -> None:
        self.sink = sink
        self.settings = settings
        self.docs: dict[str, Document] = {}
        self.ready = asyncio.Event()  # the settings are known (workspace/configuration answered)
        self._pool: WorkerPool | None = None
        self._pool_shape: tuple[int, int] | None = None
        self._slots: Slots | None = None
        self._old_pools: list[WorkerPool] = []
        self._times: dict[str, JobTimes] = {}  # kernel key -> its running compile's times (shown as progress)

    # ---- the pool ------------------------------------------------------------------------------

    def pool(self) -> WorkerPool:
        shape = (max(1, self.settings.workers), max(64, self.settings.memory_limit_mb))
        if self._pool is None or self._pool_shape != shape:
            if self._pool is not None:
                self._old_pools.append(self._pool)
                self._pool.close()  # idle workers now; busy ones when their job ends
            # `workers` templates, and a spare for a job a person waits for while they all run background work
            self._pool = WorkerPool(size=shape[0] + 1, time_limit=self.settings.time_limit, memory_limit_mb=shape[1])
            self._pool_shape = shape
            self._slots = Slots(shape[0])
        return self._pool

    async def job(self, fn: str, *args: Any, timeout_note: str | None = None,
                  on_progress: Callable[[Json], None] | None = None,
                  on_times: Callable[[JobTimes], None] | None = None, urgent: bool = False,
                  recency: float = 0.0, prepare: Callable[[Any], Any] | None = None,
                  urgent_until_progress: bool = False, longer: float = 0.0) -> Any:
        """One worker job, at most `workers` at a time (so jobs queue here, not in threads); an `urgent` one (a
        person waits for it: the panels, a code action) before the compiles queued meanwhile, the others those of
        the document touched last (`recency`: its `changed_at`) first (`server.slots`). `urgent_until_progress`:
        the job's first interim result is what the person waited for (a compile's interim record); what follows
        is background work (the job itself says so to the pool: `server.analyze.to_background`). `longer`: seconds
        the job may run past the time limit (a check of the advice with a longer bound: `check_advice`)."""
        pool = self.pool()
        assert self._slots is not None
        async with self._slots.hold(urgent, recency) as demote:
            relay = on_progress
            if urgent_until_progress and on_progress is not None:
                def relay(data: Json) -> None:
                    if not (isinstance(data, dict) and "lowering" in data):  # (a big kernel's graph as it lowers)
                        demote()
                    on_progress(data)
            return await pool.run(fn, *args, timeout=max(0.1, self.settings.time_limit) + longer,
                                  timeout_note=timeout_note,
                                  on_progress=relay, on_times=on_times, nice=0 if urgent else BACKGROUND_NICE,
                                  prepare=prepare)

    def deadline(self) -> float:
        """Seconds a request waits for a compile in flight: the time limit's wall-clock backstop, and 5."""
        return wall_backstop(max(0.1, self.settings.time_limit)) + 5

    async def warm_up(self) -> None:
        """Start the forkserver and every worker (torch and pypto imported, each with a warm child
        waiting for its first job) before the first edit; logs "workers ready" when they are."""
        t0 = time.monotonic()
        size = max(1, self.settings.workers)
        imports = asyncio.ensure_future(asyncio.to_thread(threads.ready))  # the server's threads' packages, meanwhile
        got = await asyncio.gather(*(self.job("list_kernels", "/__pypto_warm_up__.py", "", urgent=i == size)
                                     for i in range(size + 1)),  # (the last on the spare: `server.slots`)
                                   return_exceptions=True)
        await imports
        for e in got:
            if isinstance(e, BaseException):
                log.warning("warming up a worker failed: %s", e)
        log.info("workers ready: %d warm in %.1f s", sum(not isinstance(e, BaseException) for e in got),
                 time.monotonic() - t0)

    def close(self) -> None:
        for doc in self.docs.values():
            self._cancel_all(doc)
        for p in [*self._old_pools, *([self._pool] if self._pool is not None else [])]:
            p.close()

    # ---- documents -----------------------------------------------------------------------------

    def open(self, uri: str, path: str, version: int, text: str, encoding: str = "utf-16") -> None:
        doc = self.docs.get(uri) or Document(uri, path, version, text, encoding=encoding)
        self.docs[uri] = doc
        self.change(uri, version, text, delay=0.0)

    async def compile_now(self, uri: str, force: bool) -> list[str]:
        """Compile the document's stale kernels now, skipping the debounce (`force`: every kernel,
        stale or not); the names compiled, once they are done."""
        doc = self.docs[uri]
        if doc.syntax_error is not None:
            return []
        names = [k for k in doc.kernels if force or doc.current(k) is None]
        self._schedule(doc, 0.0, force)
        await self.wait(doc, self.deadline())
        return names

    def change(self, uri: str, version: int, text: str, delay: float | None = None, typed: bool = False) -> None:
        """A new version of the document. `typed`: the editor's change event was keystrokes (`typed`), which its
        text difference may not show."""
        doc = self.docs.get(uri)
        if doc is None:
            return
        now, debounce = time.monotonic(), self.settings.debounce_ms / 1000
        line, put_in = _edit(doc.text, text)
        whole = not typed and now >= doc.burst_until and _whole_edit(put_in)
        doc.edited_line = line or doc.edited_line
        doc.version, doc.text, doc.changed_at = version, text, now
        _cancel_ahead(doc)
        self._parse(doc)
        if delay is None:  # an edit (`open` passes 0): a whole one after quiet that leaves the file parsing
            doc.burst_until = now + debounce  # starts at once; the rest waits (module doc)
            delay = 0.0 if whole and doc.syntax_error is None else debounce
        self._schedule(doc, delay)

    def save(self, uri: str, text: str | None) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        if text is not None and text != doc.text:
            doc.text = text
            self._parse(doc)
        pending = doc.update is not None and not doc.update.done()
        stale = any(doc.current(k) is None for k in doc.kernels)
        if pending or stale:
            self._schedule(doc, 0.0)  # skip the rest of the debounce

    def close_document(self, uri: str) -> Document | None:
        doc = self.docs.pop(uri, None)
        if doc is not None:
            self._cancel_all(doc)
        return doc

    def settings_changed(self, old: Settings) -> None:
        """Re-key every document (the analysis settings are part of the key) and recompile what changed;
        new limits retry the kernels the old ones stopped."""
        new = self.settings
        retry = {kind for kind, changed in (("timeout", old.time_limit != new.time_limit),
                                            ("memory", old.memory_limit_mb != new.memory_limit_mb)) if changed}
        if old.analysis() == new.analysis() and not retry:
            return
        for doc in self.docs.values():
            _cancel_ahead(doc)
            doc.ahead.clear()  # (compiled with the old settings: no fingerprint of theirs is made again)
            for name, r in list(doc.results.items()):
                if r.failure is not None and r.failure[0] in retry:
                    del doc.results[name]
            self._parse(doc)
            self._schedule(doc, 0.0)

    def _parse(self, doc: Document) -> None:
        parsed, error = parse_version(doc.text, doc.path, self.settings.analysis(), doc.parsed) if "jit" in doc.text \
            else (None, None)
        doc.syntax_error = error
        doc.parsed_version = doc.version
        if error is not None:
            return  # keep the last good kernels and results until the file parses again
        doc.parsed = parsed
        kernels = parsed.kernels if parsed is not None else ()
        doc.kernels = {k.name: k for k in kernels}
        keys = {k.key for k in kernels}
        for key, fut in list(doc.pending.items()):
            if key not in keys and not fut.done():
                fut.cancel()  # a newer edit: this compile is stale (kills the worker job)
                # and forgotten now, not when its job is gone: an edit back to this text (an undo) while the job is
                # being killed compiles it anew, instead of waiting on a compile that ends without a result
                del doc.pending[key]
                log.info("%s: cancelled a stale compile", _short(doc.uri))

    def _cancel_all(self, doc: Document) -> None:
        _cancel_ahead(doc)
        if doc.update is not None:
            doc.update.cancel()
        for fut in doc.pending.values():
            fut.cancel()
        doc.pending.clear()
        for r in doc.results.values():
            r.cancel_extras()

    def _schedule(self, doc: Document, delay: float, force: bool = False) -> None:
        if doc.update is not None and not doc.update.done():
            doc.update.cancel()
        doc.update = asyncio.create_task(self._update(doc, doc.version, doc.text, max(0.0, delay), force))

    def check_advice(self, uri: str, name: str, seconds: float) -> float:
        """Compile the kernel again now with its advice checked within `seconds` (at most `MAX_CHECK_SECONDS`),
        for a finding whose check stopped at the setting's bound (`pypto.analysis.advice`: its `check_seconds`). Its
        traced program is the one of its result: the job reuses that record, shown again at once, and checks the
        advice's shapes anew, those simulated before answering for free (`server.analyze`); the job may run that much
        longer than the time limit. The result comes as any compile's does; returns the bound."""
        doc = self.docs[uri]
        if name not in doc.kernels:
            raise KeyError(name)
        bound = min(MAX_CHECK_SECONDS, max(0.0, float(seconds)))
        doc.recheck[name] = bound
        self._schedule(doc, 0.0)
        return bound

    async def wait(self, doc: Document, timeout: float) -> None:
        """Until the document's current update is done (or `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while doc.update is not None and not doc.update.done():
            done, _ = await asyncio.wait({doc.update}, timeout=max(0.01, deadline - time.monotonic()))
            if not done:
                return

    async def wait_current(self, doc: Document, name: str, timeout: float) -> None:
        """Until the kernel has a result for the document's latest version — an interim one will do
        (its record is the final one's) — or the update ends, or `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while doc.current(name) is None and doc.update is not None and not doc.update.done():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            accepted = asyncio.ensure_future(doc.accepted.wait())
            try:
                await asyncio.wait({accepted, doc.update}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                accepted.cancel()

    # ---- edits compiled ahead --------------------------------------------------------------------

    def compile_ahead(self, doc: Document, calls: Sequence[tuple[Result, Mapping[str, Json]]]) -> None:
        """Compile ahead, in the background, the edits of a tile-shape call a person may make next: each entry halved
        or doubled (`server.ahead`), at most `compile_ahead` of them (the setting; 0: none), once the document's update
        is done. `calls`: (result, tile config of its editor view) of each kernel that uses the call under the cursor
        (a code action's range, `server.lsp`): compiled for one of them — the one the panels show, else the one whose
        lines hold the call, else the first. An edit whose traced program is one of theirs reuses that answer
        (`_reusable`) and checks its advice then. Any change of the document cancels it."""
        n = self.settings.compile_ahead
        if n <= 0 or not calls or self.settings.suggest or self.settings.precision:
            return  # (an answer with the tile search or the precision diff is no compile to make ahead)

        def rank(call: tuple[Result, Mapping[str, Json]]) -> tuple[bool, bool]:
            r, config = call
            span = config.get("span")
            line = span.get("line") if isinstance(span, Mapping) else None
            return r.name != doc.watched, not (isinstance(line, int) and r.line <= line <= r.end_line)

        r, config = min(calls, key=rank)
        run = doc.ahead_run
        if not isinstance(config.get("id"), int) or (
                run is not None and (run.version, run.kernel, run.config) == (doc.version, r.name, config["id"])):
            return  # (running, or done, for this version)
        _cancel_ahead(doc)
        span = config.get("span")
        line = span.get("line") if isinstance(span, Mapping) else None
        run = doc.ahead_run = AheadRun(doc.version, r.name, int(config["id"]), line if isinstance(line, int) else 0)
        run.task = asyncio.create_task(self._ahead_logged(doc, run, dict(config), n))

    async def _ahead_logged(self, doc: Document, run: AheadRun, config: Mapping[str, Json], n: int) -> None:
        try:
            await self._ahead(doc, run, config, n)
        except Exception:  # a bug here: logged, and the compiles ahead of this version given up (none is retried)
            log.exception("%s: %s: the compiles ahead failed", _short(doc.uri), run.kernel)

    async def _ahead(self, doc: Document, run: AheadRun, config: Mapping[str, Json], n: int) -> None:
        await self.wait(doc, self.deadline())  # the compile a person waits for first
        version, name, line, rows = run.version, run.kernel, run.line, run.rows
        k, r = doc.kernels.get(name), doc.current(name)
        if doc.version != version or k is None or r is None or not r.ok:
            return
        texts = ahead.edits(doc.text, doc.path, config, n)
        kept = doc.ahead.setdefault(name, {})
        compiled = 0
        for call, text in texts:
            known = _reusable(doc, name, doc.panels)  # a program compiled already answers "reused", at once
            opts = {**self._compile_opts(doc.panels, interim=True), "ahead": True,
                    "reuse": {"fingerprints": dict.fromkeys(known, True)}}
            try:
                answer = await self.job("analyze_kernel", doc.path, text, name, opts, prepare=with_editor_run)
            except JobFailed as e:
                log.info("%s: %s: an edit compiled ahead stopped (%s)", _short(doc.uri), name, e.kind)
                rows.append({"call": call, "error": f"{e.kind}: {e.message.splitlines()[0] if e.message else ''}"})
                continue
            if answer.get("reused"):  # a program known already (the kernel as it is, an earlier edit): not kept
                fp = answer.get("fingerprint")
                was = known[fp][2] if isinstance(fp, str) and fp in known else {}
                rows.append({"call": call, "summary": was.get("summary"), "current": fp == _answer_of(r)})
                continue
            got = Result("", name, k.line, k.def_line, k.def_col, k.end_line, analysis=answer)
            fp = _answer_of(got)
            error = answer.get("error")
            rows.append({"call": call, "summary": answer.get("summary"),
                         "error": str(error.get("message", "")) if isinstance(error, dict) else None})
            if fp is None:
                continue  # an error (an illegal shape)
            if answer.get("interim_sent"):  # its advice is checked by the edit's compile, from its `advice_basis`
                got.interim_analysis = {key: v for key, v in answer.items() if key not in ("interim_sent",
                                                                                          "advice_basis")}
            kept.pop(fp, None)
            kept[fp] = got
            while len(kept) > n:  # the latest n: each holds a record and views (~80 MB at 2·10^5 tile ops)
                kept.pop(next(iter(kept)))
            compiled += 1
        log.info("%s: %s: %d of %d edit(s) of line %d compiled ahead", _short(doc.uri), name, compiled, len(texts),
                 line)
        self.sink.compiled_ahead(doc, version, name, line, len(texts), compiled)

    # ---- one update ----------------------------------------------------------------------------

    async def _update(self, doc: Document, version: int, text: str, delay: float, force: bool = False) -> None:
        if delay:
            await asyncio.sleep(delay)
        if not self.ready.is_set():
            try:
                await asyncio.wait_for(self.ready.wait(), 5.0)
            except asyncio.TimeoutError:
                self.ready.set()
        if doc.syntax_error is not None:
            self.sink.publish(doc)
            for r in list(doc.results.values()):  # each kernel's last run stays, shown stale
                self.sink.record_changed(doc, r)
            doc.shown_stale = bool(doc.results)
            return
        kernels = list(doc.kernels.values())
        for name in [n for n in doc.results if n not in doc.kernels]:
            doc.results.pop(name).cancel_extras()
            doc.earlier.pop(name, None)
        todo = [k for k in kernels if force or doc.current(k.name) is None or k.name in doc.recheck]
        # the kernel the user is editing first, then the one the panels show, then the nearest: jobs start
        # in this order, `workers` at a time, and an edit outside the kernels (a shared helper, a constant)
        # recompiles all of them
        edited = doc.edited_line
        todo.sort(key=lambda k: (not k.line <= edited <= k.end_line, k.name != doc.watched,
                                 min(abs(k.line - edited), abs(k.end_line - edited))))
        for k in kernels:  # unchanged kernels: their results hold for this version too
            r = doc.results.get(k.name)
            if r is not None and r.key == k.key:
                r.version = version
        self.sink.publish(doc)
        if doc.shown_stale:  # parses again: kernels needing no compile are current again (an undo)
            doc.shown_stale = False
            for k in kernels:
                r = doc.results.get(k.name)
                if r is not None and k not in todo:
                    self.sink.record_changed(doc, r)
            self.sink.refresh()
        if not todo:
            return
        progress: Progress | None = None
        started = time.monotonic()

        async def show_progress() -> None:
            nonlocal progress
            await asyncio.sleep(self.settings.progress_delay_ms / 1000)
            progress = self.sink.progress(f"pypto: compiling {_short(doc.uri)}")
            progress.report(f"{len(todo)} kernel(s): {', '.join(k.name for k in todo)}", 0)

        shower = asyncio.create_task(show_progress())
        done = 0
        names = [k.name for k in todo]
        self.sink.compile_state(doc, version, names, "started")
        accepted: asyncio.Future[Any] | None = None  # wakes the loop when the lead's (interim) record is taken
        try:
            # a recompile of a kernel that had a result (an edit, not the file's first compile) runs alone until its
            # record is in: on a machine of a few cores the kernel the user tunes is not slowed by the others an edit
            # of shared code recompiles beside it (Kimi's block attention: 9 s with its sibling, 6 s alone)
            # (and it goes to the next free worker before compiles queued meanwhile: `server.slots`)
            # the file's first compile (an open) is waited for too: its lead's first record is what the person sees
            # first, so it is urgent as well (background work of files opened before is stopped meanwhile); the
            # other kernels start with it, as background work
            lead = todo[0]
            edited = lead.name in doc.results
            opened = not doc.results
            alone = len(todo) > 1 and edited
            rest = todo[1:] if alone else []
            waiting: set[asyncio.Future[Any]] = {self._analysis(doc, k, text, urgent=(edited or opened) and k is lead)
                                                 for k in (todo[:1] if alone else todo)}
            accepted = asyncio.ensure_future(doc.accepted.wait()) if rest else None
            while waiting or rest:
                if rest and (doc.current(lead.name) is not None or not waiting):  # the lead's record (or its end)
                    waiting |= {self._analysis(doc, k, text) for k in rest}
                    rest = []
                if accepted is not None and accepted.done():
                    accepted = asyncio.ensure_future(doc.accepted.wait()) if rest else None
                watch = waiting | ({accepted} if accepted is not None else set())
                woke, _ = await asyncio.wait(watch, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
                finished = woke - {accepted}
                waiting -= finished
                if not woke and progress is not None:  # a long compile: say how long, and whether the
                    busy = self._still_compiling(doc, todo)  # machine keeps it waiting
                    if busy:
                        progress.report(busy, int(100 * done / len(todo)))
                for fut in finished:
                    if fut.cancelled() or fut.exception() is not None:
                        continue  # cancelled by a newer edit (or a bug, logged by `forget`)
                    r = fut.result()
                    done += 1
                    if not self._accept(doc, r):
                        continue  # superseded while it ran
                    if progress is not None:
                        progress.report(f"{r.name} done ({done}/{len(todo)})", int(100 * done / len(todo)))
            self.sink.refresh()
            log.info("%s v%d: %d kernel(s) compiled in %.0f ms (%.0f ms since the edit)", _short(doc.uri), version,
                     len(todo), 1000 * (time.monotonic() - started), 1000 * (time.monotonic() - doc.changed_at))
        finally:
            shower.cancel()
            if accepted is not None:
                accepted.cancel()
            self.sink.compile_state(doc, version, names, "finished")
            if progress is not None:
                progress.end(f"{done}/{len(todo)} kernel(s) compiled")

    def _accept(self, doc: Document, r: Result) -> bool:
        """Make `r` the kernel's result and publish it, unless an edit superseded it while it ran."""
        if doc.kernels.get(r.name) is None or doc.kernels[r.name].key != r.key:
            return False
        r.version = doc.version  # its key is current: it holds for the latest version
        old = doc.results.get(r.name)
        if old is not None and old is not r and old.key != r.key:
            old.cancel_extras()
            if _answer_of(old) is not None:  # the answer before this one: an undo may reuse it
                doc.earlier[r.name] = old
        elif old is not None and old is not r and old.interim:  # the final answer of the interim one shown
            r.extras = {**old.extras, **r.extras}
        if not r.ok and old is not None and old is not r:  # keep the last good run, to show stale
            r.last_good = _good(old)
        doc.results[r.name] = r
        doc.accepted.set()  # wakes `wait_current`; a fresh event for the next result
        doc.accepted = asyncio.Event()
        self.sink.publish(doc)
        self.sink.record_changed(doc, r)
        return True

    def _still_compiling(self, doc: Document, todo: list[Kernel]) -> str:
        """The progress message of an update's compiles running for seconds ("" for none): how long, how
        much of its time limit each has used, and — when the machine keeps it waiting for a CPU — that
        it is busy (the time limit counts what the kernel got, not what it waited: busy is slower, not
        failed)."""
        parts = []
        for k in todo:
            t = self._times.get(k.key)
            if t is None or doc.kernels.get(k.name) is not k or t.wall < 2:
                continue
            if t.cpu_wait >= 1 and t.cpu_wait >= 0.25 * t.wall:
                parts.append(f"{k.name}: busy, still compiling after {t.wall:.0f} s — the machine is loaded "
                             f"({t.cpu_wait:.0f} s of it waiting for a CPU; {t.own:.0f} of {t.limit:g} s "
                             f"of the time limit used)")
            else:
                parts.append(f"{k.name}: still compiling after {t.wall:.0f} s ({t.own:.0f} of {t.limit:g} s "
                             f"of the time limit used)")
        return "; ".join(parts)

    def _analysis(self, doc: Document, k: Kernel, text: str, urgent: bool = False) -> asyncio.Future[Result]:
        fut = doc.pending.get(k.key)
        if fut is None:
            fut = asyncio.ensure_future(self._analyze(doc.path, text, k, doc.panels, doc, urgent))
            doc.pending[k.key] = fut

            def forget(f: asyncio.Future[Result], key: str = k.key) -> None:
                if doc.pending.get(key) is f:
                    del doc.pending[key]
                if not f.cancelled() and f.exception() is not None:
                    log.error("analysis of %s failed: %s", k.name, f.exception())

            fut.add_done_callback(forget)
        return fut

    async def _analyze(self, path: str, text: str, k: Kernel, panels: bool = False,
                       doc: Document | None = None, urgent: bool = False) -> Result:
        r = Result(k.key, k.name, k.line, k.def_line, k.def_col, k.end_line)
        opts = self._compile_opts(panels, interim=doc is not None)
        # the kernel's last answers (its latest and the one before: an undo), when this compile may reuse one: the
        # job traces the kernel and, when its program is one of theirs, answers "reused" without lowering it again;
        # an answer whose advice was checked after its record was sent has it checked again (the candidate tile
        # shapes are traced anew: the edit may be on their path; those traced as before are not lowered again:
        # `traces`), its interim answer shown at once
        offered = _reusable(doc, k.name, panels) if doc is not None else {}
        longer = doc.recheck.pop(k.name, None) if doc is not None else None
        if longer is not None:  # its advice checked with a longer bound than the setting's (`check_advice`)
            opts["advice_seconds"] = longer
        if offered:
            opts["reuse"] = _reuse_opts(offered)
        if doc is not None and self.settings.graph_first_from > 0 and not _shown(doc.results.get(k.name)):
            opts["graph_first_from"] = self.settings.graph_first_from  # its tensor graph is shown while it lowers
        t0 = time.monotonic()
        running = True
        interim: dict[str, Json] = {}

        def timed(t: JobTimes) -> None:  # on the event loop: one that arrives after the job ended is dropped
            if running:
                self._times[k.key] = t

        def early(data: Json) -> None:
            """The record before the board has checked the advice (`server.analyze.INTERIM`): shown now,
            its proposals held back until the job's answer."""
            if not running or doc is None or not isinstance(data, dict):
                return
            if isinstance(data.get("lowering"), dict):  # a big kernel's tensor graph while it lowers: shown, not kept
                if not interim:
                    self._accept(doc, Result(k.key, k.name, k.line, k.def_line, k.def_col, k.end_line,
                                             analysis=dict(data["lowering"]), interim=True,
                                             seconds=time.monotonic() - t0))
                return
            if isinstance(data.get("interim"), dict):
                interim.update(data["interim"])
            elif data.get("reused_interim") in offered:
                interim.update(reuse_answer(offered[data["reused_interim"]][2], {**data, "reused": "record"}))
            else:
                return
            shown = Result(k.key, k.name, k.line, k.def_line, k.def_col, k.end_line, analysis=dict(interim),
                           interim=True, seconds=time.monotonic() - t0, interim_analysis=dict(interim))
            self._accept(doc, shown)

        try:
            answer = await self.job("analyze_kernel", path, text, k.name, opts, on_times=timed, on_progress=early,
                                    urgent=urgent, recency=doc.changed_at if doc is not None else 0.0,
                                    prepare=with_editor_run, urgent_until_progress=True, longer=longer or 0.0)
            if answer.get("reused") == "whole" and answer.get("fingerprint") in offered:
                answer = reuse_answer(offered[answer["fingerprint"]][2], answer)
            elif answer.get("interim_sent"):  # the parts it left out are the interim result's
                r.interim_analysis = dict(interim)
                answer = {**{key: interim[key] for key in INTERIM if key in interim}, **answer}
            r.analysis = answer
            log_output(path, k.name, r.analysis.get("output"))
            err = r.error
            if err is not None and r.analysis.get("not_a_kernel"):  # (this version's text names it otherwise)
                r.analysis = None
                r.failure = ("not-a-kernel", str(err["message"]))
            elif err is not None and r.analysis.get("import_failed"):  # the module itself raised: shown once
                r.analysis, r.module_error = None, err
        except JobFailed as e:
            log_output(path, k.name, e.output)
            if interim and e.kind != "cancelled":  # the record was shown: what stopped is the advice's check after it
                r.interim_analysis = dict(interim)
                health = interim.get("health")
                r.analysis = {**interim, "health": not_checked(health if isinstance(health, dict) else {}, e.message)}
                log.warning("%s: %s: its record kept, the check of its advice stopped (%s): %s", _short(path), k.name,
                            e.kind, e.message.splitlines()[0] if e.message else "")
            else:
                r.failure = (e.kind, e.message)
                if e.kind == "error":  # maybe the module itself does not import: find out where
                    try:
                        listed = await self.job("list_kernels", path, text)
                        if listed.get("error"):
                            r.module_error = listed["error"]
                    except JobFailed:
                        pass
                log.warning("%s: %s %s: %s", _short(path), k.name, e.kind,
                            e.message.splitlines()[0] if e.message else "")
        finally:
            running = False
            self._times.pop(k.key, None)
        r.seconds = time.monotonic() - t0
        return r

    def _compile_opts(self, panels: bool, interim: bool) -> dict[str, Json]:
        """What a compile of a kernel asks the worker's `analyze_kernel` for: the editor's views and report, the
        panels' parts when they are open, its fingerprint (the edits compiled ahead ask for the same: an edit reuses
        one by that fingerprint). `parts_from`: from this many tile ops the compile makes the panels' parts all the
        same — beside its views, at no cost in time — so that the panels open on a big kernel without a second
        compile."""
        return {**self.settings.analysis(), "editor": True, "report": True, **_record_opts(panels),
                "parts_from": BESIDE_FROM, "interim": interim, "fingerprint": True}

    def has(self, r: Result, what: str) -> bool:
        """Whether the result's own analysis already holds `what` (each of "suggest+precision")."""
        a = r.analysis or {}
        parts = what.split("+")
        # suggestions [] mean "not asked" unless the settings asked for them with every compile
        return all(a.get("suggestions") is not None and self.settings.suggest if w == "suggest" else
                   a.get(w) is not None for w in parts)

    async def extra_output(self, doc: Document, r: Result, what: str) -> Json:
        """The analysis output holding `what` — "suggest" (the advisor's suggestions), "precision"
        (the precision report), both ("suggest+precision") or "record" (the record, pass graphs and
        listings for the panels), each with the report that includes it: the result's own when it
        has it, else one worker job per result and kind (shared by concurrent callers, cancelled
        with the result)."""
        if self.has(r, what):
            return r.analysis
        fut = r.extras.get(what)
        if fut is None or fut.cancelled():
            text = doc.text
            # the record's job makes the panels' data (no reader takes its findings): the sim board does not
            # check its advice's tile shapes, which the kernel's own compile does
            # (fingerprinted: its program's fingerprint tells whether the kernel's next compile may take its parts)
            opts = {**self.settings.analysis(), "report": True, **_record_opts(what == "record"),
                    **({"check_advice": False, "fingerprint": True} if what == "record" else {}),
                    "suggest": "suggest" in what.split("+"), "precision": "precision" in what.split("+"),
                    # the candidates the kernel's compile checked are known by their traces: not lowered again
                    "reuse": {"traces": (r.analysis or {}).get("advice_traces") or {}}}

            note = ("the kernel compiled in time before; one tile-shape candidate of the search took longer than "
                    "the rest of the limit: lower pypto.tileSearchSeconds or raise pypto.timeLimit"
                    if "suggest" in what.split("+") else None)

            def searching(data: Json) -> None:  # the tile search's best so far, while it runs
                if isinstance(data, dict) and isinstance(data.get("search"), dict):
                    self.sink.search_progress(doc, r, data["search"])

            async def run() -> Json:
                try:
                    out = await self.job("analyze_kernel", doc.path, text, r.name, opts, timeout_note=note,
                                         on_progress=searching if opts["suggest"] else None, urgent=True)
                except JobFailed as e:
                    log_output(doc.path, r.name, e.output)
                    raise
                log_output(doc.path, r.name, out.get("output"))
                return out

            fut = r.extras[what] = asyncio.ensure_future(run())
            if "suggest" in what.split("+"):  # its suggestions may hold the kernel's best gain: the lens and
                fut.add_done_callback(lambda f: self._searched(doc, r.name, what, f))  # the status bar say it
        return await asyncio.shield(fut)


    def _searched(self, doc: Document, name: str, what: str, fut: asyncio.Future[Json]) -> None:
        """A tile search ended: the kernel's current result, if the search is still its own (an interim
        result's search is its final one's), may offer a better gain now."""
        cur = doc.results.get(name)
        if (not fut.cancelled() and fut.exception() is None and cur is not None and cur.extras.get(what) is fut
                and self.docs.get(doc.uri) is doc):
            self.sink.advice_changed(doc, cur)


def _good(r: Result) -> Result | None:
    """The result with a whole record that a failure after `r` keeps, shown stale: `r`, or the one `r` kept — not a big
    kernel's tensor graph, shown while it lowered (its swimlane never came)."""
    return r if r.ok and r.lowering is None else r.last_good


def _shown(r: Result | None) -> bool:
    """Whether the kernel has a whole record to show (its own, or the last good one an error keeps): else its next
    compile shows a big kernel's tensor graph while it lowers."""
    return r is not None and _good(r) is not None


def _answer_of(r: Result | None) -> str | None:
    """The fingerprint of a result a later compile may reuse (`server.analyze.reuse_answer`): an answer of the sim
    board (ok, fingerprinted; an interim one too: its record, while its advice was being checked); else None."""
    if r is None or not r.ok or not r.analysis:
        return None
    fp = r.analysis.get("fingerprint")
    return fp if isinstance(fp, str) else None


def _reuse_opts(offered: Mapping[str, tuple[bool, Result, Json]]) -> dict[str, Json]:
    """What a compile is told of the answers it may reuse (`_reusable`; `server.analyze`'s `reuse`): their
    fingerprints, whether each holds whole, the advice's candidates their jobs traced (`advice_traces`, the latest
    answer's last) and, for a record whose advice is checked again, what its job read of its lowering and run
    (`advice_basis`: the kernel is then traced, not lowered again)."""
    traces: dict[str, Json] = {}
    for _, was, _ in reversed(list(offered.values())):
        traces.update((was.analysis or {}).get("advice_traces") or {})
    bases = {fp: was.analysis["advice_basis"] for fp, (whole, was, _) in offered.items()
             if not whole and was.analysis is not None and "advice_basis" in was.analysis}
    return {"fingerprints": {fp: whole for fp, (whole, _, _) in offered.items()}, "traces": traces,
            **({"basis": bases} if bases else {})}


def _reusable(doc: Document, name: str, parts: bool) -> dict[str, tuple[bool, Result, Json]]:
    """The answers a compile of the kernel may reuse, by fingerprint: (whole, the result, the answer to reuse) for
    its latest, the one before it and the edits compiled ahead (`LiveCompiler.compile_ahead`). `whole`: the answer
    holds as it is (the result's analysis); else its record does (an interim answer, or one whose advice was checked
    after its record was sent): its interim answer is shown and its advice checked again — offered only when that
    interim answer is known. A compile that asks for the panels' parts (`parts`: the record, graphs, listings) is
    offered an answer without them only completed by the panels' record job of that result, done, for the same traced
    program (opening the panels after a compile does not make the next edit's compile anew)."""
    out: dict[str, tuple[bool, Result, Json]] = {}
    for r in (doc.results.get(name), doc.earlier.get(name), *reversed(doc.ahead.get(name, {}).values())):
        fp = _answer_of(r)
        if fp is None or fp in out or r is None or r.analysis is None:
            continue
        whole = not r.interim and not r.analysis.get("interim_sent")
        answer = r.analysis if whole else r.interim_analysis
        if answer is not None and parts and answer.get("record") is None:
            answer = _with_panel_parts(r, answer)
        if answer is not None:
            out[fp] = (whole, r, answer)
    return out


def _with_panel_parts(r: Result, answer: Json) -> Json:
    """`answer` with the panels' parts of `r`'s record job (`extra_output(…, "record")`) when that job is done and
    made them from the same traced program; else None."""
    fut = r.extras.get("record")
    if fut is None or not fut.done() or fut.cancelled() or fut.exception() is not None:
        return None
    got = fut.result()
    program = (r.analysis or {}).get("program")
    if not isinstance(got, dict) or got.get("record") is None or program is None or got.get("program") != program:
        return None
    return {**answer, **{key: got[key] for key in PANEL_PARTS if key in got}}


def _cancel_ahead(doc: Document) -> None:
    """Stop the document's compiles ahead (their worker jobs killed); what they compiled is kept (`Document.ahead`)."""
    run = doc.ahead_run
    if run is not None and run.task is not None and not run.task.done():
        run.task.cancel()
    doc.ahead_run = None


def _edit(old: str, new: str) -> tuple[int, str]:
    """What an edit changed: the first line (1-based) where the two texts differ (0 when they are the same), and what
    it put in — `new` less the longest start and end it shares with `old` (by whole lines, then by characters within
    the lines that differ); "" when it only took text out."""
    if old == new:
        return 0, ""
    a, b = old.split("\n"), new.split("\n")
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    j = next((k for k in range(n - i) if a[-1 - k] != b[-1 - k]), n - i)
    x, y = "\n".join(a[i:len(a) - j]), "\n".join(b[i:len(b) - j])
    m = min(len(x), len(y))
    p = next((k for k in range(m) if x[k] != y[k]), m)
    s = next((k for k in range(m - p) if x[-1 - k] != y[-1 - k]), m - p)
    return i + 1, y[p:len(y) - s]


def _whole_edit(put_in: str) -> bool:
    """Whether a change that put in `put_in` (`_edit`) is not typing: two or more letters or digits at once (a quick
    fix's `64`, a pasted line, an agent's edit, an accepted completion), where a keystroke puts in one, or an editor's
    bracket pair or newline and indent none."""
    return sum(c.isalnum() for c in put_in) >= 2


def typed(changes: Sequence[tuple[bool, str]]) -> bool:
    """Whether an editor's change event — its content changes, each (whether it has a range, its text) — is the same
    keystroke at several cursors: two or more ranged changes of one text that is not a whole edit. Its text difference
    spans the lines between the cursors, so it would pass for a whole edit (a quick fix's several numbers are other
    texts, or whole ones; a paste at several cursors is whole)."""
    return len(changes) >= 2 and all(ranged for ranged, _ in changes) and len({t for _, t in changes}) == 1 \
        and not _whole_edit(changes[0][1])


def log_output(path: str, kernel: str, output: Any) -> None:
    """What a kernel's job printed (its fd 1 and 2, captured by the worker pool) as one log message,
    each line marked: `window/logMessage`, the PyPTO output channel — never the protocol stream."""
    if isinstance(output, str) and output.strip():
        lines = "\n".join("  | " + line for line in output.rstrip("\n").split("\n"))
        log.info("%s %s printed:\n%s", _short(path), kernel, lines)


def _record_opts(panels: bool) -> dict[str, bool]:
    """What the panels need beyond the editor view: the record, each pass's graph, the listings."""
    return {"record": panels, "snapshots": panels, "listings": panels}


def _short(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]

