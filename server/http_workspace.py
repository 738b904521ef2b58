"""The served workspace: which kernels it has, what each one's latest result is, and what changed.

`pypto-ide serve WORKSPACE` answers for one folder. This module keeps what the server
knows about it:

- **discovery** — every `*.py` under the folder (hidden folders, `__pycache__`,
  `node_modules` and virtualenvs skipped; files that never mention both `pypto` and `jit`
  skipped without running them) is listed by a worker (`server.analyze.list_kernels`:
  executing the module is running user code, so it never happens in the server). A file's
  listing is cached by the SHA-256 of its text.
- **kernel state** — per kernel id (`<relative path>::<name>`): a version that counts its
  results, the job that made the latest, and whether it is *live*: a kernel someone ran
  is re-run (same action and settings) when its file changes.
- **watching** — `watchfiles` reports edits made by any editor; each changed file is
  re-listed, its live kernels re-run, and the hub is told (`fileChanged`,
  `kernelsChanged`, then `recordChanged` when the new result lands). A changed module
  that kernel files import (`import helpers` beside them, directly or through other
  workspace modules; found by reading import statements with `ast`, never by running
  them) re-lists and re-runs those files' kernels too.
- **traces** — the `*.json` files of the workspace a swimlane importer reads
  (`pypto.boards.importers.load_any`: our swimlane JSON, Chrome traces and PyPTO's
  `merged_swimlane.json`, `tilefwk_L1_prof_data.json`, `chip_swimlane_records.json`),
  recognised by name or by their first 4 KiB — never parsed here (a trace can be hundreds of
  MB); a file's answer is cached by its size and modification time. A worker loads one when
  it is opened (`server.analyze.load_trace`).
- **pass dumps** — PyPTO 3's `passes_dump/` folders (by name, holding `00_frontend.py` or
  `NN_after_<Pass>.py`); a worker reads one when it is opened (`server.analyze.load_pass_dump`).
- **the front page's picker** (`overview`) — files, their kernels, each kernel's status (the
  newest job's: queued, running, done, error, failed, cancelled, or never run) and its latest
  makespan.
- **running a job** — reading the file (confined to the workspace, size-limited) and
  asking the pool for `analyze_kernel`; the bulk the API derives views from (pass graphs,
  the HTML report) is moved out of the result into the job, with the tile calls as written
  (what the kernel's history keeps, `server.history`).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchfiles import awatch

from server.analyze import INTERIM, not_checked
from server.history import tile_calls
from server.http_live import file_changed, job_changed, job_progress, kernels_changed, record_changed
from server.http_safety import Refused, confine, is_file, read_text
from server.http_views import store
from server.jobs import Job, JobQueue
from server.worker import JobFailed, JobTimes, WorkerPool

log = logging.getLogger("pypto-ide.serve")

SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
# trace files known by name (pypto.boards.importers: MERGED, L1_PROF, CHIP_RECORDS; the server imports no pypto)
TRACE_NAMES = {"merged_swimlane.json": "merged", "tilefwk_L1_prof_data.json": "l1-prof",
               "chip_swimlane_records.json": "chip-records", "l2_swimlane_records.json": "chip-records"}
TRACE_HEAD = 4096  # bytes read to recognise a trace by content
MAX_TRACES = 500
# PyPTO 3's per-pass IR dumps (pypto.boards.passes_dump: the server imports no pypto): folders of this name
# holding 00_frontend.py or NN_after_<Pass>.py
PASSES_DIR = "passes_dump"
SNAPSHOT_NAME = re.compile(r"^(00_frontend|\d+_after_.+)\.py$")
MAX_DUMPS = 200


def trace_kind(path: Path) -> str | None:
    """What kind of trace `path` is, from its name or its first bytes (None: not one `load_any`
    reads): `swimlane` (ours, "schema": "pypto-ide/swimlane"), `chrome` (a Chrome / Perfetto trace:
    traceEvents, or a list of events with "ph"), `merged`, `l1-prof` (a list of cores with
    "coreType"), `chip-records` ("aicore_tasks" / "aicpu_tasks"). A `deps.json` (dependencies only)
    is none."""
    known = TRACE_NAMES.get(path.name)
    if known is not None:
        return known
    try:
        with path.open("rb") as f:
            head = f.read(TRACE_HEAD)
    except OSError:
        return None
    text = head.lstrip()
    if text.startswith(b"{"):
        if re.search(rb'"schema"\s*:\s*"pypto-ide/swimlane"', head):
            return "swimlane"
        if b'"traceEvents"' in head:
            return "chrome"
        if b'"aicore_tasks"' in head or b'"aicpu_tasks"' in head:
            return "chip-records"
        return None
    if text.startswith(b"["):
        if b'"coreType"' in head:
            return "l1-prof"
        if b'"ph"' in head:
            return "chrome"
    return None


@dataclass
class FileKernels:
    rel: str
    sha256: str
    kernels: list[dict[str, Any]]  # {name, line, end_line}
    error: dict[str, Any] | None  # the module failed to import: {message, line, ...}


@dataclass
class KernelState:
    id: str
    version: int = 0  # results so far
    latest_job: str | None = None
    live: dict[str, tuple[dict[str, Any], float]] = field(default_factory=dict)  # action -> (settings, timeout)


def split_kernel(kernel_id: str) -> tuple[str, str]:
    path, sep, name = kernel_id.rpartition("::")
    if not sep or not path or not name:
        raise Refused(400, f"a kernel is named '<path>::<kernel>', not {kernel_id!r}")
    return path, name


def _covers(have: dict[str, Any], want: dict[str, Any]) -> bool:
    """A result made with settings `have` answers a request for `want`: same board, workers and bounds on tile shapes,
    and every analysis asked for (precision, suggestions, pass graphs, HTML) was made."""
    return all(have.get(k) == want.get(k)
               for k in ("board", "workers", "tile_search_budget", "tile_search_seconds", "advice_seconds")) and all(
        have.get(k) for k in ("precision", "suggest", "snapshots", "html") if want.get(k))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def imported_files(text: str, folder: Path) -> set[Path]:
    """The files in `folder` (or its packages) that `import` / `from … import` statements of a
    module living in `folder` name (absolute imports resolved as `python FILE` would: from the
    module's own folder). Read with `ast`, never run; a file that does not parse imports nothing."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names if a.name != "*"]
    out: set[Path] = set()
    for name in names:
        parts = name.split(".")
        for k in range(1, len(parts) + 1):  # `a.b.c` imports a, a.b and a.b.c
            base = folder.joinpath(*parts[:k])
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if is_file(candidate):
                    out.add(candidate)
    return out


class Workspace:
    """One served folder: its files' kernels, each kernel's state, the watcher, the job runner."""

    def __init__(self, root: Path, pool: WorkerPool, queue: JobQueue, publish: Callable[[dict[str, Any]], None], *,
                 max_file_bytes: int = 2 * 2**20, max_files: int = 2000, list_timeout: float = 30.0) -> None:
        self.root = root.resolve()
        self.pool = pool
        self.queue = queue
        self.publish = publish
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.list_timeout = list_timeout
        self.files: dict[str, FileKernels] = {}
        self.states: dict[str, KernelState] = {}
        self.truncated = False  # more candidate files than max_files
        self.watching = False
        self.discovered = asyncio.Event()
        self._trace_cache: dict[str, tuple[int, int, str | None]] = {}  # rel -> (size, mtime_ns, kind)
        self._discover_lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        queue.listeners.append(self._job_changed)

    # ---- paths and files

    def confine(self, user_path: str) -> tuple[Path, str]:
        return confine(self.root, user_path)

    def read(self, user_path: str) -> tuple[Path, str, str]:
        """(real path, canonical relative path, text) of a workspace .py file."""
        path, rel = self.confine(user_path)
        return path, rel, read_text(path, self.max_file_bytes)

    def _skip_dir(self, name: str, path: str) -> bool:
        return name.startswith(".") or name in SKIP_DIRS or os.path.exists(os.path.join(path, "pyvenv.cfg"))

    def _candidates(self) -> list[str]:
        """Workspace-relative .py files that mention pypto and jit (no symlinks out, no hidden folders)."""
        out: list[str] = []
        seen: set[str] = set()
        self.truncated = False
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not self._skip_dir(d, os.path.join(dirpath, d)))
            for f in sorted(filenames):
                if not f.endswith(".py") or f.startswith("."):
                    continue
                rel = Path(dirpath, f).relative_to(self.root).as_posix()
                try:
                    path, rel = self.confine(rel)
                except Refused:
                    continue
                if rel in seen or not self._may_have_kernels(path):
                    continue
                if len(out) >= self.max_files:
                    self.truncated = True
                    return out
                seen.add(rel)
                out.append(rel)
        return out

    def _may_have_kernels(self, path: Path) -> bool:
        """Worth running in a worker: a readable file within the size limit naming `pypto` and `jit`."""
        try:
            if path.stat().st_size > self.max_file_bytes:
                return False
            data = path.read_bytes()
        except OSError:
            return False
        return b"pypto" in data and b"jit" in data

    def traces(self) -> tuple[list[dict[str, Any]], bool]:
        """The workspace's trace files, `[{path, kind, size, modified}]` by path (at most MAX_TRACES;
        True when there were more), skipping what discovery skips. Blocking: call it in a thread."""
        out: list[dict[str, Any]] = []
        seen: dict[str, tuple[int, int, str | None]] = {}
        truncated = False
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not self._skip_dir(d, os.path.join(dirpath, d)))
            for f in sorted(filenames):
                if not f.endswith(".json") or f.startswith("."):
                    continue
                try:
                    path, rel = confine(self.root, Path(dirpath, f).relative_to(self.root).as_posix(), (".json",))
                    st = path.stat()
                except (Refused, OSError):
                    continue
                cached = self._trace_cache.get(rel)
                if cached is not None and cached[:2] == (st.st_size, st.st_mtime_ns):
                    kind = cached[2]
                else:
                    kind = trace_kind(path)
                seen[rel] = (st.st_size, st.st_mtime_ns, kind)
                if kind is None:
                    continue
                if len(out) >= MAX_TRACES:
                    truncated = True
                    break
                out.append({"path": rel, "kind": kind, "size": st.st_size, "modified": st.st_mtime})
            if truncated:
                break
        self._trace_cache = seen if not truncated else {**self._trace_cache, **seen}
        return out, truncated

    def pass_dumps(self) -> tuple[list[dict[str, Any]], bool]:
        """The workspace's PyPTO 3 `passes_dump/` folders, `[{path, snapshots, modified}]` by path (at most
        MAX_DUMPS; True when there were more): a folder of that name holding a snapshot file, found by name
        (never read here), skipping what discovery skips. Blocking: call it in a thread."""
        out: list[dict[str, Any]] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not self._skip_dir(d, os.path.join(dirpath, d)))
            if os.path.basename(dirpath) != PASSES_DIR:
                continue
            snaps = [f for f in filenames if SNAPSHOT_NAME.match(f)]
            if not snaps:
                continue
            try:
                real, rel = confine(self.root, Path(dirpath).relative_to(self.root).as_posix(), ())
                modified = max(os.stat(real / f).st_mtime for f in snaps)
            except (Refused, OSError):
                continue
            if len(out) >= MAX_DUMPS:
                return out, True
            out.append({"path": rel, "snapshots": len(snaps), "modified": modified})
        return out, False

    def overview(self) -> list[dict[str, Any]]:
        """The picker's rows: per file (by path) its kernels, each with its status — the newest job's
        (`queued`, `running`, `done`, `error` when done with a mistake, `failed`, `cancelled`) or
        `never run` — the makespan and board of its newest result that has them (kept after a later
        error), and the file's import error."""
        mine: dict[str, list[Job]] = {}
        for j in sorted(self.queue.jobs.values(), key=lambda j: -j.created):
            mine.setdefault(j.kernel, []).append(j)
        files = []
        for f in sorted(self.files.values(), key=lambda f: f.rel):
            rows = []
            for k in f.kernels:
                kid = f"{f.rel}::{k['name']}"
                st = self.states.get(kid)
                jobs = mine.get(kid, [])
                job = jobs[0] if jobs else None  # the newest
                status = "never run" if job is None else job.status
                error = (job.result or {}).get("error") if job is not None and job.status == "done" else None
                if error:
                    status = "error"
                # the latest figures: the newest done job that has them (a later error keeps them, stale)
                summary = next(((j.result or {}).get("summary") for j in jobs
                                if j.status == "done" and (j.result or {}).get("summary")), None)
                failure = job.failure if job is not None else None
                rows.append({"id": kid, "name": k["name"], "line": k["line"], "status": status,
                             "version": st.version if st else 0,
                             "makespan_us": summary.get("makespan_us") if summary else None,
                             "board": summary.get("board") if summary else None,
                             "stale": summary is not None and job is not None and (job.result or {}).get(
                                 "summary") is not summary,
                             "message": (error or {}).get("message") or (failure or {}).get("message")
                             or (job.result or {}).get("search_cut") if job is not None else None})
            files.append({"file": f.rel, "kernels": rows, "error": f.error})
        return files

    # ---- discovery

    async def discover(self) -> None:
        """List the kernels of every candidate file (cached by text hash); tell the hub if they changed."""
        async with self._discover_lock:
            before = self.kernel_ids()
            rels = await asyncio.to_thread(self._candidates)
            for gone in set(self.files) - set(rels):
                del self.files[gone]
            await asyncio.gather(*(self.list_file(rel, announce=False) for rel in rels))
            self.discovered.set()
            if self.kernel_ids() != before:
                self.publish(kernels_changed(self.kernels()))

    async def list_file(self, rel: str, announce: bool = True, force: bool = False) -> FileKernels | None:
        """(Re-)list one file's kernels in a worker (`force`: even when its text is the one listed);
        None when it is gone or unreadable."""
        before = self.kernel_ids()
        try:
            path, rel, text = self.read(rel)
            if not self._may_have_kernels(path):
                raise Refused(404, "no kernels")
        except Refused:
            self.files.pop(rel, None)
        else:
            digest = sha256(text)
            cached = self.files.get(rel)
            if force or cached is None or cached.sha256 != digest:
                try:
                    async with self.queue.slot():
                        listed = await self.pool.run("list_kernels", str(path), text, timeout=self.list_timeout)
                    entry = FileKernels(rel, digest, listed["kernels"], listed["error"])
                except JobFailed as e:
                    entry = FileKernels(rel, digest, [], {"message": f"listing kernels failed ({e.kind}): "
                                                                     f"{e.message}", "line": 1, "rule": e.kind})
                self.files[rel] = entry
        if announce and self.kernel_ids() != before:
            self.publish(kernels_changed(self.kernels()))
        return self.files.get(rel)

    def kernel_ids(self) -> list[str]:
        return [f"{f.rel}::{k['name']}" for f in sorted(self.files.values(), key=lambda f: f.rel) for k in f.kernels]

    def kernels(self) -> list[dict[str, Any]]:
        out = []
        for f in sorted(self.files.values(), key=lambda f: f.rel):
            for k in f.kernels:
                kid = f"{f.rel}::{k['name']}"
                st = self.states.get(kid)
                out.append({"id": kid, "file": f.rel, "name": k["name"], "line": k["line"],
                            "end_line": k.get("end_line", k["line"]),
                            "version": st.version if st else 0, "latest_job": st.latest_job if st else None,
                            "live": bool(st and st.live)})
        return out

    def file_errors(self) -> list[dict[str, Any]]:
        return [{"file": f.rel, "error": f.error} for f in sorted(self.files.values(), key=lambda f: f.rel)
                if f.error is not None]

    def state(self, kernel_id: str) -> KernelState:
        st = self.states.get(kernel_id)
        if st is None:
            st = self.states[kernel_id] = KernelState(kernel_id)
        return st

    # ---- jobs

    async def run_job(self, job: Job) -> dict[str, Any]:
        """The queue's runner: read the file now (the freshest text), analyse it in a worker."""
        rel, name = split_kernel(job.kernel)
        try:
            path, rel, text = self.read(rel)
        except Refused as e:
            raise JobFailed("error", e.message) from None
        job.text_sha256 = sha256(text)

        def timed(t: JobTimes) -> None:  # how much of its time limit the job has used, and what it waited for a CPU
            job.times = {"own_s": round(t.own, 3), "cpu_wait_s": round(t.cpu_wait, 3)}

        # The record and the findings as soon as they are made (`interim`), before the sim board has checked the
        # tile shapes the findings propose (a production kernel's check takes up to its 10 s bound) or searched:
        # the record is stored then and the pages draw it (`early_record`); the checked findings come with the result.
        # The leaves' listings are made by the worker too, which has the program (`/listings` would read the record
        # back: 30 s for glm's fused attention's).
        settings = {**job.settings, "interim": True, "listings": True}
        early: list[asyncio.Task[None]] = []

        def news(data: Any) -> None:  # a running job's interim result or its search's progress
            if not isinstance(data, dict):
                return
            if isinstance(data.get("interim"), dict):
                interim = dict(data["interim"])
                job.extra["interim_bulk"] = bulk = {k: interim.pop(k) for k in INTERIM if k in interim}
                job.extra["interim"] = interim
                if bulk.get("record") is not None:  # stored now (the pages told again then), else with the result
                    early.append(asyncio.create_task(self._store_early(job, text, bulk)))
            if isinstance(data.get("search"), dict):
                job.extra["search_progress"] = data["search"]
            self.publish(job_progress(self.queue.info(job), "interim" in job.extra, job.extra.get("search_progress")))

        try:
            result: dict[str, Any] = await self.pool.run("analyze_kernel", str(path), text, name, settings,
                                                         timeout=job.timeout, on_times=timed, on_progress=news)
        except JobFailed as e:
            if e.kind == "cancelled" or "interim" not in job.extra:
                raise
            result = self.cut(job, e)  # the record and findings were in: what stopped is the board's work after them
        finally:
            await asyncio.gather(*early, return_exceptions=True)  # (the record's bytes: never two stores at once)
        bulk = job.extra.pop("interim_bulk", None)
        if result.pop("interim_sent", False) and bulk:  # what the worker sent early, it left out of its answer
            result = {**bulk, **result}  # (unless stored then: `_store_early`)
        self._tile_calls(job, result.get("record"), text)
        await asyncio.to_thread(store, job, result)  # the bulk as JSON bytes in the job (server.http_views)
        job.extra.pop("interim", None)  # (only now: until the job is done, `GET …/result` answers the interim one)
        return result

    async def _store_early(self, job: Job, text: str, bulk: dict[str, Any]) -> None:
        """A running job's interim record stored as a done job's is (its record, swimlane and pass graphs answer
        from then on: `Results`), then the pages told (`jobProgress`, `interim`)."""
        self._tile_calls(job, bulk.get("record"), text)
        await asyncio.to_thread(store, job, dict(bulk))
        job.extra["early_record"] = True
        job.extra.pop("interim_bulk", None)  # stored: not held, nor stored again with the result
        if job.status == "running":
            self.publish(job_progress(self.queue.info(job), True, job.extra.get("search_progress"), record=True))

    @staticmethod
    def _tile_calls(job: Job, rec: Any, text: str) -> None:
        if isinstance(rec, dict):  # the tile calls as written, for the kernel's history (server.history)
            job.extra["tile_calls"] = tile_calls((rec.get("source") or {}).get("tile_configs") or (), text)

    @staticmethod
    def cut(job: Job, e: JobFailed) -> dict[str, Any]:
        """The result of a job that stopped after its interim result (its time or memory limit, a lost process): that
        result, each finding held for the board's check saying it was not simulated and why (`not_checked`, as the
        language server keeps a record whose job stopped after it), no suggestions; for a tile search its time
        limit ended, the search's progress so far."""
        interim = job.extra["interim"]
        health = interim.get("health")
        out = {**interim, "health": not_checked(health if isinstance(health, dict) else {}, e.message),
               "suggestions": [], "interim_sent": True, "output": getattr(e, "output", "")}
        if job.settings.get("suggest"):
            from pypto.analysis.advisor import count_text

            searched = job.extra.get("search_progress")
            stop = f"the job's time limit ({job.timeout:g} s)" if e.kind == "timeout" else f"the job's end ({e.kind})"
            after = f" after {searched['searched']:,} of {count_text(searched['space'])} shapes" if searched else ""
            out["search_cut"] = (f"{stop} ended the tile search{after}; the findings are complete, the suggestions "
                                 "are not")
            out["search"] = {**searched, "stopped": "job time limit" if e.kind == "timeout" else "job ended"} \
                if searched else None
        return out

    def _job_changed(self, job: Job) -> None:
        st = self.state(job.kernel)
        if job.status == "done" and job.version is None:
            st.version += 1
            job.version = st.version
            st.latest_job = job.id
            if job.origin == "request":
                st.live[job.action] = (dict(job.settings), job.timeout)
        self.publish(job_changed(self.queue.info(job)))
        if job.status == "done":
            self.publish(record_changed(job.kernel, st.version, self.queue.info(job)))

    def is_latest(self, job: Job) -> bool:
        st = self.states.get(job.kernel)
        return st is not None and st.latest_job == job.id

    def watch_kernel(self, kernel_id: str, action: str, settings: dict[str, Any], timeout: float) -> Job | None:
        """A page follows a kernel: make it live for `action` and answer with a done job that is
        current (same file text, settings at least those asked), or the running one whose record is stored
        already (`early_record`: its advice still checked) — else run one now (None)."""
        self.state(kernel_id).live[action] = (dict(settings), timeout)
        _, rel, text = self.read(split_kernel(kernel_id)[0])
        digest = sha256(text)
        mine = sorted((j for j in self.queue.jobs.values() if j.kernel == kernel_id), key=lambda j: -j.created)
        for j in mine:
            if j.status in ("queued", "running") and j.action == action and j.settings == settings:
                return j if j.extra.get("early_record") else None  # on its way: its recordChanged will come
            if j.status == "done" and j.text_sha256 == digest and _covers(j.settings, settings):
                return j
        self.queue.submit(kernel_id, action, settings, timeout, origin="watch")
        return None

    # ---- watching

    def _watched(self, path: str) -> str | None:
        """The workspace-relative path of a changed .py file worth reacting to, else None."""
        if not path.endswith(".py"):
            return None
        try:
            rel = Path(path).relative_to(self.root)
        except ValueError:
            return None
        if any(p.startswith(".") or p in SKIP_DIRS for p in rel.parts):
            return None
        return rel.as_posix()

    async def watch(self, stop: asyncio.Event, ready: asyncio.Event, force_polling: bool = False) -> None:
        """Follow edits until `stop`; `ready` is set in the same step the OS watch is registered."""
        try:
            self.watching = True
            ready.set()  # no await between this and awatch's first step, which registers the watch
            async for changes in awatch(self.root, watch_filter=lambda _c, p: self._watched(p) is not None,
                                        stop_event=stop, force_polling=force_polling, ignore_permission_denied=True):
                rels = sorted({rel for _, p in changes if (rel := self._watched(p)) is not None})
                task = asyncio.get_running_loop().create_task(self._changed(rels))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
        except Exception:  # noqa: BLE001 - a broken watcher stops live updates, never the server
            log.exception("watching %s stopped", self.root)
        finally:
            self.watching = False
            ready.set()

    def importers(self, *rels: str) -> set[str]:
        """Workspace files whose module imports one of the files `rels`, directly or through other
        workspace modules. A module imports by name from its own folder, so only files in a target's
        folder and the folders above it (within the workspace) can; their import statements are
        read (once per call, however many targets), not run."""
        targets = {(self.root / rel).resolve() for rel in rels}
        folders = {t.parent for t in targets} | {
            p for t in targets for p in t.parent.parents if p == self.root or self.root in p.parents}
        imports: dict[Path, set[Path]] = {}
        for folder in folders:
            try:
                files = [f for f in folder.iterdir() if f.suffix == ".py" and not f.name.startswith(".")]
            except OSError:
                continue
            for f in files[:self.max_files]:
                with contextlib.suppress(Refused):  # too big, unreadable, not UTF-8: imports nothing we see
                    imports[f.resolve()] = imported_files(read_text(f, self.max_file_bytes), folder)
        found: set[Path] = set()
        frontier = set(targets)
        while frontier:
            frontier = {f for f, deps in imports.items() if deps & frontier and f not in found and f not in targets}
            found |= frontier
        out = set()
        for f in found:
            with contextlib.suppress(Refused):
                out.add(self.confine(f.relative_to(self.root).as_posix())[1])
        return out

    async def _changed(self, rels: list[str]) -> None:
        for rel in rels:
            exists = (self.root / rel).is_file()
            self.publish(file_changed(rel, "modified" if exists else "deleted"))
        affected = set(rels) | await asyncio.to_thread(self.importers, *rels)
        for rel in sorted(affected):
            # an importer's text did not change but what it imports did: list it again
            await self.list_file(rel, force=rel not in rels)
            for kid, st in list(self.states.items()):
                if not st.live or split_kernel(kid)[0] != rel or not (self.root / rel).is_file():
                    continue
                for action, (settings, timeout) in list(st.live.items()):
                    self.queue.submit(kid, action, settings, timeout, origin="watch")

    async def close(self) -> None:
        for t in list(self._background):
            t.cancel()
        for t in list(self._background):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
