"""`pypto-ide serve`: the HTTP and WebSocket API over a workspace, and the panels in a browser.

The same results the language server shows in VS Code, for any editor and for scripts:
kernels of a folder, jobs that compile / profile / report / check precision / search tile
shapes, views of a result (record, swimlane window, pass graph, task and node details,
exports), live `recordChanged` pushes when a file is edited, and the webview bundle (or a
minimal page) at `/`; every compile is kept in the kernel's history under the workspace's
`.pypto/history/` (`server.history`, shared with the language server), with a pinned baseline to
compare with. The API is versioned under `/api/v1` and documented by FastAPI's
OpenAPI schema (`/openapi.json`, `/docs`); docs/http-api.md is the prose.

This module wires things: `create_app(config)` builds the FastAPI app (state made in its
lifespan: the worker pool, the job queue, the workspace, the hub), `serve(config)` binds
and runs it with uvicorn. The guards are `server.http_safety`, the queue `server.jobs`,
the workspace `server.http_workspace`, the pushes `server.http_live`, the derived views
`server.http_views`. No user code runs in this process: every kernel runs in the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import secrets
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import FastAPI, Query, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute
from starlette.staticfiles import StaticFiles

from server import history, panel_data, threads
from server.http_live import Hub, hello, job_progress, message, record_changed
from server.http_page import csp, minimal_page, picker_body, picker_page, trace_page, trace_panel_page
from server.http_safety import Guard, Refused, confine, is_file, needs_token, read_text
from server.http_views import (
    EXPORTS,
    MAX_GRAPH_NODES,
    MAX_TASKS,
    Results,
    graph_page,
    graph_view,
    leaf_graph,
    node_detail,
    pass_graph,
    record_with_graphs,
    result_of,
    run_bytes,
    stored_bytes,
    swimlane_window,
    task_detail,
)
from server.http_views import (
    export as make_export,
)
from server.http_views import (
    listings as make_listings,
)
from server.http_workspace import Workspace, sha256, split_kernel
from server.jobs import ACTIONS, Job, JobQueue, QueueFull
from server.panel_data import block_of, panel_record, panel_run
from server.panel_data import tile_grids as tile_grids_of
from server.panel_data import tile_ops as tile_ops_of
from server.worker import MEMORY_LIMIT_MB, JobFailed, WorkerPool

API = "/api/v1"
VERSION = "1"
REPO = Path(__file__).resolve().parent.parent
log = logging.getLogger("pypto-ide.serve")
MAX_TRACE_BYTES = 1 << 30  # a trace file larger than this is not loaded (413)
MAX_BINS = 1_000  # bins per lane in one /swimlane answer
MAX_SLOWEST = 1_000  # the run's slowest tasks in one /swimlane answer
MAX_DEPTH = panel_data.MAX_DEPTH  # levels of a /swimlane `around` dependency cone (at most MAX_LINKED tasks)
MAX_MATCH_RANGES = panel_data.MAX_MATCH_RANGES  # id ranges of one /swimlane `match`
# A suggest job's default bound on the sim board's work on tile shapes: pypto.analysis.advisor.SEARCH_SECONDS,
# every door's (this process imports no pypto; tests/test_search_bound.py checks that they agree).
SEARCH_SECONDS = 10.0


@dataclass
class ServeConfig:
    workspace: Path
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None  # required on every request when set (always set on a non-local bind)
    workers: int = 2  # worker processes = jobs running at once
    queue_size: int = 8  # requested jobs that may wait beyond the running ones (then 429)
    time_limit: float = 120.0  # seconds a job may run at most (a request may ask for less)
    memory_limit_mb: int = MEMORY_LIMIT_MB  # per worker process, beyond its size at start
    max_body: int = 2**20  # bytes of a request body (then 413)
    max_file_bytes: int = 2 * 2**20  # a workspace file larger is not read (413)
    cors_origins: list[str] = field(default_factory=list)  # browser origins allowed besides the server's own
    watch: bool = True
    force_polling: bool = False
    webview_dir: Path | None = None  # a built panel bundle served at / (default: webview/dist when it exists)
    keep_jobs: int = 32  # finished jobs kept for their results (a kernel's latest always is) …
    keep_mb: int = 512  # … and while their stored results take at most this much


# ---- API models (the OpenAPI schema) ----------------------------------------------------------------

class JobRequest(BaseModel):
    """What to run on which kernel."""

    model_config = ConfigDict(extra="forbid")
    kernel: str = Field(..., max_length=4096, description="`<workspace-relative path>::<kernel name>`",
                        examples=["examples/softmax.py::softmax_kernel"])
    action: Literal["compile", "profile", "report", "precision", "suggest"] = Field(
        "profile", description="compile: the record with every pass's graph; profile: + the swimlane on `board`; "
                               "report: + the HTML report; precision: + the fp64 comparison per pass; "
                               "suggest: + tile-shape suggestions from a search on the sim board")
    board: Literal["sim", "cpu"] = Field("sim", description="sim: the simulated A2/A3 chip; cpu: this machine, "
                                                            "measured")
    precision: bool | None = Field(None, description="also compare with fp64 (default: action == precision)")
    suggest: bool | None = Field(None, description="also search tile shapes (default: action == suggest)")
    budget: int | None = Field(None, ge=1, le=10_000, description="suggest: evaluations at most")
    search_seconds: float | None = Field(None, ge=0, le=3600, description=(
        f"seconds the sim board may spend on tile shapes (checking the findings' shapes, then with suggest the "
        f"search), then the best found by then (default {SEARCH_SECONDS:g}, as in the editor and the CLI; 0: "
        f"no bound but the job's time limit, at which the job ends with the findings and the search's best "
        f"so far)"))
    workers: int | None = Field(None, ge=1, le=64, description="cpu board: threads")
    snapshots: bool = Field(True, description="keep the tensor graph after every pass (for /graph?pass=N)")
    timeout_s: float | None = Field(None, gt=0, description="seconds the job may run (at most the server's limit)")


class Progress(BaseModel):
    state: str
    time_limit_s: float
    position: int | None = Field(None, description="queued: jobs ahead of this one")
    elapsed_s: float | None = None
    own_s: float | None = Field(None, description="running (after a second): its time counted against time_limit_s — "
                                                  "elapsed_s less the time it waited for a CPU")
    cpu_wait_s: float | None = Field(None, description="running (after a second): the time it waited for a CPU on a "
                                                       "busy machine, which the time limit does not count")


class JobInfo(BaseModel):
    id: str
    kernel: str
    action: str
    origin: Literal["request", "watch"] = Field(..., description="watch: re-run by the server after an edit")
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    settings: dict[str, Any]
    created: float
    started: float | None
    finished: float | None
    progress: Progress
    failure: dict[str, str] | None = Field(None, description="{kind: timeout|memory|crashed|error|cancelled, "
                                                             "message}")
    version: int | None = Field(None, description="the kernel's result version this job made")
    text_sha256: str | None = None
    error: dict[str, Any] | None = Field(None, description="done, but the kernel has a mistake: {message, line, "
                                                           "col, end_line, end_col, rule}")
    summary: dict[str, Any] | None = Field(None, description="done: board, clock, makespan_us, tasks, utilization, "
                                                             "bound, …")


class JobList(BaseModel):
    jobs: list[JobInfo]


class KernelInfo(BaseModel):
    id: str = Field(..., description="`<path>::<name>`, the id jobs take")
    file: str
    name: str
    line: int
    end_line: int
    version: int = Field(..., description="how many results the kernel has had")
    latest_job: str | None
    live: bool = Field(..., description="re-run when its file changes")


class KernelList(BaseModel):
    workspace: str
    kernels: list[KernelInfo]
    errors: list[dict[str, Any]] = Field(..., description="files whose module failed to import: {file, error}")
    truncated: bool


class SourceLines(BaseModel):
    path: str
    sha256: str
    total_lines: int
    start: int
    end: int
    lines: list[str]


class BaselineRequest(BaseModel):
    """Pin a run as the kernel's baseline, or unpin it."""

    model_config = ConfigDict(extra="forbid")
    kernel: str = Field(..., max_length=4096, description="`<workspace-relative path>::<kernel name>`")
    pin: bool = Field(True, description="true: pin; false: drop the baseline")
    entry: int | None = Field(None, ge=1, description="pin this history entry (its `id`); null: the kernel's "
                                                      "latest result")


class HistoryAnswer(BaseModel):
    kernel: str
    entries: list[dict[str, Any]] = Field(..., description="oldest first: {id, time, version, source_sha256, board, "
                                                           "clock, makespan_us, tasks, utilization, tile_calls, "
                                                           "has_run}")
    baseline: dict[str, Any] | None = Field(..., description="the pinned entry, or null")


class Health(BaseModel):
    status: Literal["ok"]
    api: str
    workspace: str
    watching: bool
    discovered: bool
    clients: int
    jobs: dict[str, Any]
    pool: dict[str, Any]
    limits: dict[str, Any]


# ---- the app -------------------------------------------------------------------------------------------

def _settings(req: JobRequest) -> dict[str, Any]:
    out: dict[str, Any] = {"board": req.board, "snapshots": req.snapshots,
                           "precision": req.precision if req.precision is not None else req.action == "precision",
                           "suggest": req.suggest if req.suggest is not None else req.action == "suggest"}
    if req.action == "report":
        out["html"] = True
    if req.budget is not None:
        out["tile_search_budget"] = req.budget
    if out["suggest"]:  # bounded (None: only by the job's time limit)
        out["tile_search_seconds"] = SEARCH_SECONDS if req.search_seconds is None else (req.search_seconds or None)
    elif req.search_seconds is not None:  # no search: the bound of the check of the findings' shapes alone
        out["advice_seconds"] = req.search_seconds or None
    if req.workers is not None:
        out["workers"] = req.workers
    return out


class _State:
    """What the lifespan makes: one of each per server."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.root = config.workspace.resolve()
        self.hub = Hub()
        self.pool = WorkerPool(config.workers, config.time_limit, config.memory_limit_mb)
        self.queue = JobQueue(self._run, config.workers, config.queue_size, config.keep_jobs,
                              keep_if=lambda job: self.workspace.is_latest(job), keep_bytes=config.keep_mb * 2**20,
                              size_of=stored_bytes)
        self.workspace = Workspace(self.root, self.pool, self.queue, self.hub.publish,
                                   max_file_bytes=config.max_file_bytes, list_timeout=config.time_limit)
        self.results = Results()
        self.history = history.History(self.root)
        self.history_io = history.Store()  # every history read and write, in order, off the event loop
        self.queue.listeners.append(self._keep)  # after the workspace's: the job has its version
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task[Any]] = []

    def _keep(self, job: Job) -> None:
        """A kernel's new result goes into its history (once; a kernel with a mistake has none)."""
        summary = (job.result or {}).get("summary")
        if job.status != "done" or job.version is None or not summary or job.extra.get("kept"):
            return
        job.extra["kept"] = True
        rel, name = split_kernel(job.kernel)
        line = history.entry(job.version, summary, job.extra.get("tile_calls") or [], job.text_sha256)
        run = partial(run_bytes, job, self.results) if job.extra.get("has_run") else None  # made there, if kept
        self.history_io.submit(f"the compile history of {job.kernel}", self.history.append, str(self.root / rel), name,
                               line, run)

    def kernel_path(self, kernel_id: str) -> tuple[str, str]:
        """(the file's path, the kernel's name) of a kernel id, for its history; 400/403/404 as for jobs."""
        rel, name = split_kernel(kernel_id)
        if not history.is_kernel_name(name):
            raise Refused(400, f"{name!r} is not a kernel name")
        real, rel = self.workspace.confine(rel)
        if not is_file(real):
            raise Refused(404, f"no such file in the workspace: {rel}")
        return str(real), name

    async def in_history(self, fn: Any, *args: Any) -> Any:
        """A history read or write on its thread: an unknown entry is 404, what else it cannot do 500."""
        try:
            return await self.history_io.call(fn, *args)
        except history.UnknownEntry as e:
            raise Refused(404, str(e)) from None
        except history.HistoryError as e:
            raise Refused(500, str(e)) from None

    async def history_of(self, kernel_id: str) -> dict[str, Any]:
        path, name = self.kernel_path(kernel_id)
        entries = await self.in_history(self.history.entries, path, name)
        base = await self.in_history(self.history.baseline, path, name)
        return {"kernel": kernel_id, "entries": entries, "baseline": base["entry"] if base else None}

    async def _run(self, job: Job) -> dict[str, Any]:
        return await self.workspace.run_job(job)

    def rel(self, file: str) -> str:
        """A file as the API shows it: workspace-relative when inside, else as given."""
        try:
            return Path(file).resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return file

    def job(self, job_id: str) -> Job:
        job = self.queue.get(job_id)
        if job is None:
            raise Refused(404, f"no job {job_id!r} (finished jobs are forgotten after a while)")
        return job

    async def start(self) -> None:
        self.tasks.append(asyncio.get_running_loop().create_task(self.workspace.discover()))
        if self.config.watch:
            ready = asyncio.Event()
            self.tasks.append(asyncio.get_running_loop().create_task(
                self.workspace.watch(self.stop, ready, self.config.force_polling)))
            await ready.wait()

    async def close(self) -> None:
        self.stop.set()
        await self.queue.close()
        await self.workspace.close()
        for t in self.tasks:
            t.cancel()
        for t in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.pool.close()
        self.history_io.close()


def _st(request: Request | WebSocket) -> _State:
    return request.app.state.serve  # type: ignore[no-any-return]


def create_app(config: ServeConfig, extra_routes: Sequence[BaseRoute] = (),
               extra_lifespans: Sequence[Callable[[], contextlib.AbstractAsyncContextManager[Any]]] = ()) -> Any:
    """The ASGI app: the FastAPI routes wrapped in the guard (token, Host/Origin, body size). `extra_routes`
    are served behind the same guard, with `extra_lifespans` entered after the server's own start: the
    CLI mounts `server.mcp.streamable_http` at /mcp this way (this module does not import the MCP shell)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        threads.install()  # before the server's first thread (`server.threads`)
        state = _State(config)
        app.state.serve = state
        await state.start()
        try:
            async with contextlib.AsyncExitStack() as stack:
                for extra in extra_lifespans:
                    await stack.enter_async_context(extra())
                yield
        finally:
            await state.close()

    app = FastAPI(title="PyPTO IDE", version=VERSION, lifespan=lifespan,
                  description="Kernels of a workspace: compile, profile, report, precision, tile suggestions; "
                              "records, swimlane windows, pass graphs, exports; live updates over the WebSocket "
                              f"`{API}/ws`. See docs/http-api.md.")

    app.router.routes.extend(extra_routes)

    @app.exception_handler(Refused)
    async def refused(_request: Request, e: Refused) -> JSONResponse:
        return JSONResponse({"detail": e.message}, status_code=e.status)

    @app.exception_handler(QueueFull)
    async def full(_request: Request, e: QueueFull) -> JSONResponse:
        return JSONResponse({"detail": str(e)}, status_code=429, headers={"Retry-After": "5"})

    @app.get(f"{API}/health", response_model=Health, tags=["server"])
    async def health(request: Request) -> dict[str, Any]:
        """Liveness and load: workers, queue, what failed in workers so far, the limits in force."""
        st = _st(request)
        return {"status": "ok", "api": API, "workspace": str(st.root), "watching": st.workspace.watching,
                "discovered": st.workspace.discovered.is_set(), "clients": len(st.hub), "jobs": st.queue.stats(),
                "pool": {"size": st.pool.size, "replaced": st.pool.replaced, "failures": dict(st.pool.failures)},
                "limits": {"time_limit_s": config.time_limit, "memory_limit_mb": config.memory_limit_mb,
                           "max_body_bytes": config.max_body, "max_file_bytes": config.max_file_bytes,
                           "queue_size": config.queue_size, "workers": config.workers,
                           "token_required": config.token is not None}}

    @app.get(f"{API}/kernels", response_model=KernelList, tags=["kernels"])
    async def kernels(request: Request, refresh: bool = False) -> dict[str, Any]:
        """The workspace's kernels (listed by workers; waits for the first discovery)."""
        st = _st(request)
        if refresh:
            await st.workspace.discover()
        else:
            await st.workspace.discovered.wait()
        return {"workspace": str(st.root), "kernels": st.workspace.kernels(), "errors": st.workspace.file_errors(),
                "truncated": st.workspace.truncated}

    @app.get(f"{API}/source", response_model=SourceLines, tags=["kernels"])
    async def source(request: Request, path: str, start: Annotated[int, Query(ge=1)] = 1,
                     end: Annotated[int | None, Query(ge=1)] = None) -> dict[str, Any]:
        """Lines `start..end` (1-based, inclusive; default: all) of a workspace .py file."""
        st = _st(request)
        real, rel = st.workspace.confine(path)
        text = read_text(real, config.max_file_bytes)
        lines = text.splitlines()
        stop = len(lines) if end is None else min(end, len(lines))
        return {"path": rel, "sha256": sha256(text), "total_lines": len(lines), "start": start, "end": stop,
                "lines": lines[start - 1:stop]}

    @app.post(f"{API}/jobs", response_model=JobInfo, status_code=202, tags=["jobs"],
              responses={429: {"description": "the bounded job queue is full"},
                         403: {"description": "the path leaves the workspace"}})
    async def submit(request: Request, body: JobRequest) -> dict[str, Any]:
        """Queue a job; poll `GET /jobs/{id}` (or listen on the WebSocket) until it is done."""
        st = _st(request)
        rel, name = split_kernel(body.kernel)
        real, rel = st.workspace.confine(rel)
        if not is_file(real):
            raise Refused(404, f"no such file in the workspace: {rel}")
        timeout = min(body.timeout_s or config.time_limit, config.time_limit)
        job = st.queue.submit(f"{rel}::{name}", body.action, _settings(body), timeout)
        return st.queue.info(job)

    @app.get(f"{API}/jobs", response_model=JobList, tags=["jobs"])
    async def jobs(request: Request, kernel: str | None = None) -> dict[str, Any]:
        """Known jobs, newest first (optionally of one kernel)."""
        st = _st(request)
        found = [j for j in st.queue.jobs.values() if kernel is None or j.kernel == kernel]
        return {"jobs": [st.queue.info(j) for j in sorted(found, key=lambda j: -j.created)]}

    @app.get(f"{API}/jobs/{{job_id}}", response_model=JobInfo, tags=["jobs"])
    async def job(request: Request, job_id: str,
                  wait: Annotated[float, Query(ge=0, le=60, description="long poll: wait up to this many seconds "
                                                                      "for the job to finish")] = 0) -> dict[str, Any]:
        """A job's state and progress; once done, its summary (or the kernel's mistake in `error`)."""
        st = _st(request)
        j = st.job(job_id)
        if wait > 0 and j.task is not None and not j.task.done():
            await asyncio.wait({j.task}, timeout=wait)
        return st.queue.info(j)

    @app.delete(f"{API}/jobs/{{job_id}}", response_model=JobInfo, tags=["jobs"])
    async def cancel(request: Request, job_id: str) -> dict[str, Any]:
        """Cancel a queued or running job (its process group is killed; the worker serves on); answers
        once it has stopped."""
        st = _st(request)
        j = st.job(job_id)
        st.queue.cancel(job_id)
        if j.task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(j.task), 10)
        return st.queue.info(j)

    @app.get(f"{API}/jobs/{{job_id}}/result", tags=["results"])
    async def result(request: Request, job_id: str) -> dict[str, Any]:
        """Everything but the record: summary, health report, precision, suggestions, the kernel's error.
        A running suggest job answers with its interim result once its findings are in (`interim`: true,
        `search`: the tile search's progress so far; the proposed shapes not yet checked are withheld)."""
        st = _st(request)
        j = st.job(job_id)
        if j.status == "running" and "interim" in j.extra:
            early = bool(j.extra.get("early_record"))  # its record stored: `GET …/record` answers already
            return {"job": j.id, "kernel": j.kernel, "version": None, **j.extra["interim"], "interim": True,
                    "search": j.extra.get("search_progress"), "has_record": early, "has_html": False,
                    "has_pass_graphs": early and "pass_graphs" in j.extra}
        res = result_of(j)
        return {"job": j.id, "kernel": j.kernel, "version": j.version, **res, "interim": False,
                "has_record": "record" in j.extra, "has_html": "html" in j.extra,
                "has_pass_graphs": "pass_graphs" in j.extra}

    @app.get(f"{API}/jobs/{{job_id}}/record", tags=["results"])
    def record(request: Request, job_id: str,
               snapshots: Annotated[bool, Query(description="add each pass's tensor graph as its `snapshot`")] = False,
               panel: Annotated[bool, Query(description="what the panels draw: a record of more than 20,000 tile "
                                                        "ops without its per-tile-op bulk, named in `omitted`")]
               = False,
               ) -> Response:
        """The CompileRecord (docs/record-schema.md) with its `run` (the swimlane)."""
        st = _st(request)
        j = st.job(job_id)
        if snapshots and not panel:
            return Response(json.dumps(record_with_graphs(j, st.results)), media_type="application/json")
        if panel:
            def made() -> bytes:
                full = st.results.panel_lists(j)  # (lean: without what a slim record leaves out)
                slim = panel_record(full)
                if snapshots:
                    return json.dumps(record_with_graphs(j, st.results, slim), separators=(",", ":")).encode()
                return st.results.blob(j, "record") if slim is full else \
                    json.dumps(slim, separators=(",", ":")).encode()
            return Response(st.results.panel(j, snapshots, made), media_type="application/json")
        return Response(st.results.blob(j, "record"), media_type="application/json")

    @app.get(f"{API}/jobs/{{job_id}}/tile-ops", tags=["results"])
    def tile_ops(request: Request, job_id: str,
                 ops: Annotated[str | None, Query(description="tile op indices (positions in `tiles.ops`), "
                                                              "comma-separated, at most 4096")] = None,
                 node: Annotated[int | None, Query(description="or: the tensor node of a tile grid (`/tile-grids`)")]
                 = None,
                 cell: Annotated[int | None, Query(description="… and that grid's cell (row-major)")] = None,
                 ) -> dict[str, Any]:
        """Some tile ops (by index, or a tile-grid cell's): their id, op, subgraph, shape, dtype and memory —
        what `record?panel=true` left out of a big record."""
        st = _st(request)
        j = st.job(job_id)
        try:
            want = [int(x) for x in (ops or "").split(",") if x.strip()]
        except ValueError:
            raise Refused(422, f"ops must be comma-separated integers, got {ops!r}") from None
        if not want and node is None and cell is None:
            raise Refused(422, "ask for tile ops by ops=… or by node=…&cell=…")
        try:
            return {"job": j.id, **tile_ops_of(st.results.record(j), want, node, cell)}
        except ValueError as e:
            raise Refused(422, f"job {j.id}: {e}") from None

    @app.get(f"{API}/jobs/{{job_id}}/tile-grids", tags=["results"])
    def tile_grids(request: Request, job_id: str) -> dict[str, Any]:
        """The final program's tile grids, as the graph panel's Tiles view draws them (`record?panel=true` of a
        big record leaves the tile ops out)."""
        st = _st(request)
        j = st.job(job_id)
        try:
            return {"job": j.id, **tile_grids_of(st.results.record(j))}
        except ValueError as e:
            raise Refused(409, f"job {j.id}: {e}") from None

    @app.get(f"{API}/jobs/{{job_id}}/blocks/{{leaf}}", tags=["results"])
    def block(request: Request, job_id: str, leaf: int) -> dict[str, Any]:
        """One leaf function's block: its figures and instructions (`{opcode, pipe, tile_op, node, note}`), as the
        graph panel's Leaves view draws them (`record?panel=true` of a big record leaves them out)."""
        st = _st(request)
        j = st.job(job_id)
        try:
            return {"job": j.id, **block_of(st.results.record(j), leaf)}
        except ValueError as e:
            raise Refused(404, f"job {j.id}: {e}") from None

    @app.get(f"{API}/jobs/{{job_id}}/listings", tags=["results"])
    def listings(request: Request, job_id: str) -> dict[str, Any]:
        """Every leaf function's PTO-ISA-style listing with its source lines (`listings[leaf]`)."""
        st = _st(request)
        return {"job": job_id, "listings": make_listings(st.job(job_id), st.results)}

    @app.get(f"{API}/jobs/{{job_id}}/swimlane", tags=["results"])
    def swimlane(request: Request, job_id: str, start: float | None = None, end: float | None = None,
                 lanes: Annotated[str | None, Query(description="comma-separated lane indices")] = None,
                 limit: Annotated[int, Query(ge=1, le=MAX_TASKS)] = 5000,
                 offset: Annotated[int, Query(ge=0, description="the page: skip this many of the window's "
                                                                "tasks (a previous answer's next_offset)")] = 0,
                 max_boxes: Annotated[int | None, Query(ge=0, le=MAX_TASKS, description="a window holding more "
                                                        "tasks is answered with per-lane bins (detail: bins)")] = None,
                 bins: Annotated[int, Query(ge=1, le=MAX_BINS, description="bins per lane (with max_boxes)")] = 200,
                 slowest: Annotated[int, Query(ge=0, le=MAX_SLOWEST, description="also the run's this many "
                                                                              "longest tasks")] = 0,
                 pipe_profiles: Annotated[bool, Query(description="with the run's pipe profiles (false: the "
                                                                  "page's tasks' own, renumbered)")] = True,
                 around: Annotated[int | None, Query(description="a task id: also it and its predecessors and "
                                                                 "successors to `depth` (linked)")] = None,
                 depth: Annotated[int, Query(ge=0, le=MAX_DEPTH, description="levels of `around`'s cone")] = 1,
                 match: Annotated[str | None, Query(description="task id ranges a-b,c-d: where those tasks are "
                                                                "(matched, first_match, match_bins)")] = None,
                 ) -> Response:
        """A window of the swimlane: tasks overlapping [start, end] µs on `lanes`, at most `limit` from `offset`;
        with `max_boxes`, per-lane bins when the window holds more tasks (what the swimlane panel draws)."""
        try:
            lane_list = None if lanes is None else [int(x) for x in lanes.split(",") if x.strip()]
        except ValueError:
            raise Refused(400, "lanes is a comma-separated list of lane indices") from None
        if not all(math.isfinite(x) for x in (start, end) if x is not None):
            raise Refused(422, "start and end must be finite numbers")
        try:
            ranges = None if match is None else [[int(a), int(b or a)] for a, _, b in
                                                 (x.strip().partition("-") for x in match.split(",") if x.strip())]
        except ValueError:
            raise Refused(400, "match is a comma-separated list of task id ranges a-b (or single ids)") from None
        if ranges is not None and len(ranges) > MAX_MATCH_RANGES:
            raise Refused(422, f"match: at most {MAX_MATCH_RANGES} id ranges")
        st = _st(request)
        job = st.job(job_id)
        doc = swimlane_window(st.results.run(job), start, end, lane_list, limit, offset, max_boxes, bins,
                              slowest, pipe_profiles, around, depth, ranges)
        # the record answered from: the panel draws a window only over the record it shows
        doc["job"] = job.id
        return Response(json.dumps(doc), media_type="application/json")

    @app.get(f"{API}/jobs/{{job_id}}/tasks/{{task_id}}", tags=["results"])
    def task(request: Request, job_id: str, task_id: int) -> dict[str, Any]:
        """One task: lane, times, leaf, the tensor nodes it runs and their source lines (workspace-relative)."""
        st = _st(request)
        return task_detail(st.job(job_id), st.results, task_id, st.rel)

    @app.get(f"{API}/jobs/{{job_id}}/nodes/{{node_id}}", tags=["results"])
    def node(request: Request, job_id: str, node_id: int) -> dict[str, Any]:
        """A tensor node across levels: source, passes that changed it, tile ops, leaves, tasks."""
        st = _st(request)
        return node_detail(st.job(job_id), st.results, node_id, st.rel)

    @app.get(f"{API}/jobs/{{job_id}}/graph", tags=["results"])
    def graph(request: Request, job_id: str,
              pass_: Annotated[str | None, Query(alias="pass", description="'final' (default), 'traced' or a "
                                                                           "pass index")] = None,
              view: Literal["aggregated", "full", "leaves"] = "aggregated",
              loop: Annotated[int | None, Query(description="drill down: the loop node whose body to show")] = None,
              limit: Annotated[int, Query(ge=1, le=MAX_GRAPH_NODES, description="nodes in the page")] = 5000,
              offset: Annotated[int, Query(ge=0, description="the page: skip this many nodes")] = 0,
              ) -> Response:
        """A pass's tensor graph: `aggregated` (loops collapsed; `loop=` drills into one), `full`
        (flattened), or `leaves` (the execute level aggregated by leaf function)."""
        st = _st(request)
        j = st.job(job_id)
        if view == "leaves":
            doc = leaf_graph(j, st.results)
        else:
            g, info = pass_graph(j, st.results, pass_)
            doc = {"pass": info, "name": g.get("name"), "outputs": g.get("outputs"),
                   **graph_page(graph_view(g, st.rel, view, loop), limit, offset)}
        doc = {"job": j.id, "kernel": j.kernel, **doc}
        return Response(json.dumps(doc), media_type="application/json")

    @app.get(f"{API}/jobs/{{job_id}}/export/{{fmt}}", tags=["results"],
             responses={200: {"description": "; ".join(f"{k}: {v}" for k, v in EXPORTS.items())}})
    def export(request: Request, job_id: str, fmt: str,
               pass_: Annotated[str | None, Query(alias="pass", description="graph exports: which pass")] = None,
               ) -> Response:
        """Download an export: record, swimlane, chrome (trace.json), merged (merged_swimlane.json), text,
        model-explorer, graphml, dot, program, html."""
        st = _st(request)
        content, media, name = make_export(st.job(job_id), st.results, fmt, pass_)
        return Response(content, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get(f"{API}/history", response_model=HistoryAnswer, tags=["history"])
    async def kernel_history(request: Request, kernel: str) -> dict[str, Any]:
        """The kernel's compiles kept on disk (the last 200, oldest first; the runs of the newest 20)
        and its pinned baseline's entry."""
        return await _st(request).history_of(kernel)

    @app.get(f"{API}/history/{{entry}}", tags=["history"])
    async def history_run(request: Request, entry: int, kernel: str, panel: Annotated[bool, Query(
            description="a run above 5,000 tasks by its figures only (`run.omitted`), as the panels draw it")] = False,
            ) -> Response:
        """One compile of the history and its swimlane (`run` null when only its figures are kept)."""
        st = _st(request)
        path, name = st.kernel_path(kernel)
        e, run = await st.in_history(st.history.run, path, name, entry)
        if panel:
            run = panel_run(run)
        return Response(json.dumps({"kernel": kernel, "entry": e, "run": run}), media_type="application/json")

    @app.get(f"{API}/baseline", tags=["history"])
    async def baseline(request: Request, kernel: str, panel: Annotated[bool, Query(
            description="a run above 5,000 tasks by its figures only (`run.omitted`), as the panels draw it")] = False,
            ) -> Response:
        """The pinned baseline: its entry and its swimlane (`run` null when only its figures were kept);
        both null when none is pinned."""
        st = _st(request)
        path, name = st.kernel_path(kernel)
        base = await st.in_history(st.history.baseline, path, name) or {"entry": None, "run": None}
        if panel:
            base = {**base, "run": panel_run(base["run"])}
        return Response(json.dumps({"kernel": kernel, **base}), media_type="application/json")

    @app.post(f"{API}/baseline", response_model=HistoryAnswer, tags=["history"],
              responses={409: {"description": "the kernel has no run to pin yet"}})
    async def pin(request: Request, body: BaselineRequest) -> dict[str, Any]:
        """Pin the kernel's latest result (or a history entry) as its baseline, or unpin it; answers as
        `GET /history`."""
        st = _st(request)
        path, name = st.kernel_path(body.kernel)
        kid = f"{st.rel(path)}::{name}"
        if not body.pin:
            await st.in_history(st.history.unpin, path, name)
        elif body.entry is not None:
            await st.in_history(st.history.pin_entry, path, name, body.entry)
        else:
            latest = st.workspace.states.get(kid)
            job = st.queue.get(latest.latest_job) if latest and latest.latest_job else None
            summary = (job.result or {}).get("summary") if job else None
            if job is None or not summary or not job.extra.get("has_run"):
                raise Refused(409, f"{kid} has no run to pin yet: run it first (POST /jobs, or open its page)")
            line = history.entry(job.version or 0, summary, job.extra.get("tile_calls") or [], job.text_sha256)
            await st.in_history(st.history.pin, path, name, line, partial(run_bytes, job, st.results))
        return await st.history_of(kid)

    @app.websocket(f"{API}/ws")
    async def ws(websocket: WebSocket) -> None:
        """Live messages (docs/http-api.md): hello, kernelsChanged, fileChanged, jobChanged, recordChanged."""
        st = _st(websocket)

        def on_message(msg: dict[str, Any]) -> dict[str, Any] | None:
            kind = msg.get("type")
            if kind == "ping":
                return message("pong", t=time.time())
            if kind == "watch":
                try:
                    rel, name = split_kernel(str(msg.get("kernel", "")))
                    _, rel = st.workspace.confine(rel)
                    action = str(msg.get("action", "profile"))
                    if action not in ACTIONS:
                        raise Refused(400, f"action is one of {', '.join(ACTIONS)}")
                    board = "cpu" if msg.get("board") == "cpu" else "sim"
                    kid = f"{rel}::{name}"
                    settings = _settings(JobRequest(kernel=kid, action=action, board=board))  # type: ignore[arg-type]
                    current = st.workspace.watch_kernel(kid, action, settings, config.time_limit)
                except Refused as e:
                    return message("error", message=e.message)
                if current is not None and current.version is not None:  # a current result: this client gets it now
                    return record_changed(kid, current.version, st.queue.info(current))
                if current is not None:  # running, its record stored: this client draws it now, its result follows
                    return job_progress(st.queue.info(current), True, current.extra.get("search_progress"),
                                        record=True)
                return message("watching", kernel=kid)
            return message("error", message=f"unknown message type {kind!r} (ping, watch)")

        await st.hub.serve(websocket, hello(str(st.root), st.workspace.watching, st.workspace.kernels()), on_message)

    @app.get(f"{API}/traces", tags=["traces"])
    async def traces(request: Request) -> dict[str, Any]:
        """The workspace's trace files (recognised by name or first bytes, not parsed):
        `{workspace, traces: [{path, kind, size, modified}], truncated}`."""
        st = _st(request)
        found, truncated = await asyncio.to_thread(st.workspace.traces)
        return {"workspace": str(st.root), "traces": found, "truncated": truncated}

    trace_cache: dict[tuple[str, int, int], bytes] = {}  # the latest two traces' answers

    @app.get(f"{API}/traces/swimlane", tags=["traces"],
             responses={422: {"description": "not a trace this pypto reads (the message says why)"}})
    async def trace_swimlane(request: Request, path: str) -> Response:
        """A workspace trace file as the swimlane panel reads it: `{path, format, label, run}` (`run`: our
        swimlane JSON, as a record's). Loaded in a worker (`pypto.boards.importers.load_any`)."""
        st = _st(request)
        real, rel = confine(st.root, path, (".json",))
        if not is_file(real):
            raise Refused(404, f"no such file in the workspace: {rel}")
        info = real.stat()
        if info.st_size > MAX_TRACE_BYTES:
            raise Refused(413, f"{rel} is {info.st_size:,} bytes; the limit is {MAX_TRACE_BYTES:,}")
        key = (rel, info.st_size, info.st_mtime_ns)
        body = trace_cache.get(key)
        if body is None:
            try:
                async with st.queue.slot():
                    out = await st.pool.run("load_trace", str(real), timeout=config.time_limit)
            except JobFailed as e:
                raise Refused(500, f"loading {rel} failed ({e.kind}): {e.message}") from None
            if out.get("error"):
                raise Refused(422, str(out["error"]).replace(str(real), rel))
            doc = {"path": rel, "format": out.get("format"), "label": out.get("label") or rel, "run": out["run"]}
            body = (await asyncio.to_thread(json.dumps, doc)).encode()
            while len(trace_cache) >= 2:
                trace_cache.pop(next(iter(trace_cache)))
            trace_cache[key] = body
        return Response(body, media_type="application/json")

    @app.get(f"{API}/passdumps", tags=["passdumps"])
    async def pass_dumps(request: Request) -> dict[str, Any]:
        """The workspace's PyPTO 3 `passes_dump/` folders (found by name, not read): `{workspace, dumps: [{path,
        snapshots, modified}], truncated}`. Each opens in the passes panel (`/passes.html?dump=PATH`)."""
        st = _st(request)
        found, truncated = await asyncio.to_thread(st.workspace.pass_dumps)
        return {"workspace": str(st.root), "dumps": found, "truncated": truncated}

    async def dump_job(request: Request, path: str, fn: str, *args: Any) -> dict[str, Any]:
        """A passes_dump/ read in a worker, confined to the workspace (the folder, and the kernel file its functions
        link to: looked for only inside the workspace); paths in the answer relative to the workspace."""
        st = _st(request)
        real, rel = confine(st.root, path, ())
        if not real.exists():
            raise Refused(404, f"no such folder or file in the workspace: {rel}")
        try:
            async with st.queue.slot():
                out = await st.pool.run(fn, str(real), *args, None, str(st.root), timeout=config.time_limit)
        except JobFailed as e:
            raise Refused(500, f"reading {rel} failed ({e.kind}): {e.message}") from None
        if out.get("error"):
            raise Refused(422, str(out["error"]).replace(str(real), rel).replace(str(st.root) + "/", ""))
        return relative_paths(out, st.root)

    @app.get(f"{API}/passdumps/table", tags=["passdumps"],
             responses={422: {"description": "not a passes_dump/ folder (the message says why)"}})
    async def pass_dump_table(request: Request, path: str) -> dict[str, Any]:
        """A passes_dump/ folder's pass table (`pypto.boards.passes_dump.dump_json`; docs/protocol.md
        `pypto/passDump`): `path` a passes_dump/ folder, the build folder holding one, or a file in it."""
        return await dump_job(request, path, "load_pass_dump")

    @app.get(f"{API}/passdumps/pass", tags=["passdumps"],
             responses={422: {"description": "no such snapshot, or not a passes_dump/ folder"}})
    async def pass_dump_pass(request: Request, path: str, index: Annotated[int, Query(ge=0)]) -> dict[str, Any]:
        """One snapshot of a passes_dump/ folder with its bounded diff against the one before
        (`pypto.boards.passes_dump.pass_json`; docs/protocol.md `pypto/passDumpPass`)."""
        return await dump_job(request, path, "load_pass_dump_pass", index)

    # the panels: the webview bundle at / when it has an index.html; else the minimal page at /
    # (and a bundle without index.html, e.g. one HTML file per panel, under /webview/)
    webview = config.webview_dir if config.webview_dir is not None else default_webview_dir()
    bundle_base = "/" if (webview / "index.html").is_file() else "/webview/"
    has_swimlane = (webview / "swimlane.js").is_file()

    def own_page(text: str, policy: str, **headers: str) -> HTMLResponse:
        return HTMLResponse(text, headers={"Content-Security-Policy": policy, "Cache-Control": "no-store",
                                           "X-Content-Type-Options": "nosniff", **headers})

    @app.get("/traces/view", include_in_schema=False)
    async def trace_view(request: Request, path: str) -> HTMLResponse:
        _, rel = confine(_st(request).root, path, (".json",))
        nonce = secrets.token_hex(16)
        return own_page(trace_page(rel, nonce, bundle_base, has_swimlane), csp(nonce, frames=True))

    @app.get("/traces/panel", include_in_schema=False)
    async def trace_panel() -> HTMLResponse:
        nonce = secrets.token_hex(16)
        page = trace_panel_page(nonce, bundle_base)
        policy = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
                  "img-src 'self' data:; font-src 'self'; connect-src 'none'; base-uri 'none'; frame-ancestors 'self'")
        return own_page(page, policy)

    if (webview / "index.html").is_file():
        @app.get("/", include_in_schema=False)
        async def picker(request: Request) -> HTMLResponse:
            """The front page: kernels (status, latest makespan, links to their panels) and traces."""
            st = _st(request)
            with contextlib.suppress(TimeoutError):  # a page before the first discovery: what is known
                await asyncio.wait_for(st.workspace.discovered.wait(), 10)
            found, truncated = await asyncio.to_thread(st.workspace.traces)
            dumps, _ = await asyncio.to_thread(st.workspace.pass_dumps)
            nonce = secrets.token_hex(16)
            body = picker_body(st.workspace.overview(), found, truncated, bundle_base, dumps)
            return own_page(picker_page(str(st.root), body, nonce, bundle_base), csp(nonce))
    else:
        @app.get("/", include_in_schema=False)
        async def page() -> HTMLResponse:
            nonce = secrets.token_hex(16)
            return own_page(minimal_page(nonce), csp(nonce))
    if webview.is_dir():
        root = "/" if (webview / "index.html").is_file() else "/webview"
        app.mount(root, StaticFiles(directory=webview, html=True), name="webview")

    return Guard(app, token=config.token, max_body=config.max_body, origins=config.cors_origins)


def relative_paths(doc: dict[str, Any], root: Path) -> dict[str, Any]:
    """A pass dump document with its file paths (`path`, `source.file`, each function's `source.file`) relative to
    the served folder, as every path the HTTP API gives."""
    def rel(p: Any) -> Any:
        if isinstance(p, str) and Path(p).is_absolute():
            with contextlib.suppress(ValueError):
                return Path(p).resolve().relative_to(root).as_posix()
        return p

    out = dict(doc)
    out["path"] = rel(doc.get("path"))
    if isinstance(doc.get("source"), dict):
        out["source"] = {**doc["source"], "file": rel(doc["source"].get("file"))}
    out["functions"] = [{**f, "source": {**f["source"], "file": rel(f["source"]["file"])} if f.get("source") else None}
                        for f in doc.get("functions") or []]
    return out


def default_webview_dir() -> Path:
    """The panels' bundle: a checkout's webview/dist (npm run build:webview), else the copy an
    installed wheel carries (extension/package.mjs puts webview/dist in it as server/webview_dist)."""
    checkout = REPO / "webview" / "dist"
    return checkout if (checkout / "index.html").is_file() else Path(__file__).resolve().parent / "webview_dist"


def _with_cors(app: Any, origins: list[str]) -> Any:
    return CORSMiddleware(app, allow_origins=origins, allow_methods=["GET", "POST", "DELETE"],
                          allow_headers=["Authorization", "Content-Type", "X-PyPTO-Token"])


# ---- running it --------------------------------------------------------------------------------------

def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one."""
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    sock.bind(addr)
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(config: ServeConfig, extra_routes: Sequence[BaseRoute] = (),
          extra_lifespans: Sequence[Callable[[], contextlib.AbstractAsyncContextManager[Any]]] = ()) -> int:
    """Run the server until interrupted; prints one line `pypto-ide serve: ready <url>` once it accepts."""
    if config.token == "" or (needs_token(config.host) and config.token is None):
        print(f"pypto-ide serve: error: --token is empty; give a token (binding {config.host}"
              f"{' (not loopback)' if needs_token(config.host) else ''}), or none"
              f"{': one is generated' if needs_token(config.host) else ''}", file=sys.stderr)
        return 2
    sock = bind(config.host, config.port)
    port = sock.getsockname()[1]
    app = create_app(config, extra_routes, extra_lifespans)
    if config.cors_origins:
        app = _with_cors(app, config.cors_origins)
    where = url(config.host, port)

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                link = f"{where}?token={config.token}" if config.token else where
                print(f"pypto-ide serve: ready {link}  (workspace {config.workspace.resolve()}, API {where}"
                      f"{API.lstrip('/')}, docs {where}docs)", flush=True)

    cfg = uvicorn.Config(app, log_level="warning", access_log=False, ws_max_size=config.max_body,
                         limit_concurrency=256, timeout_graceful_shutdown=3, lifespan="on")
    _Server(cfg).run(sockets=[sock])
    return 0

