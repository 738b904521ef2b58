"""Jobs: the HTTP server's bounded queue of kernel runs, each with an id, a state and a cancel.

Compiling, profiling or reporting a kernel can take seconds to minutes (a tile search, a
precision sweep), so the HTTP API never holds a request open for one: a request becomes a
`Job` and is answered at once with its id. A job waits for one of `workers` slots (one per
worker process of the pool; `slot()` is also how the server's own work — listing a file's
kernels — takes turns with the jobs), runs, and ends `done`, `failed` (with the pool's
failure kind: timeout, memory, crashed, error) or `cancelled`.

The queue is bounded: with `workers + queue_size` requested jobs unfinished, `submit`
raises `QueueFull` (the API answers 429) instead of growing. Jobs the server starts itself
(re-running a watched kernel after an edit) bypass the bound but are coalesced: a newer
one for the same kernel and action cancels the older. Finished jobs are kept for their results, the
oldest forgotten beyond `keep` of them or `keep_bytes` of stored results, unless `keep_if`
pins them (a kernel's latest result).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from server.worker import JobFailed

ACTIONS = ("compile", "profile", "report", "precision", "suggest")
STATES = ("queued", "running", "done", "failed", "cancelled")


class QueueFull(Exception):
    """The bounded queue has no room: the caller should retry later (HTTP 429)."""


@dataclass
class Job:
    id: str
    kernel: str  # "<workspace-relative path>::<kernel name>"
    action: str
    settings: dict[str, Any]  # what server.analyze.analyze_kernel is asked
    timeout: float  # seconds of worker time at most
    origin: str = "request"  # "request" | "watch" (re-run by the server after an edit)
    status: str = "queued"
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    failure: dict[str, str] | None = None  # {kind, message[, output]} when failed or cancelled
    result: dict[str, Any] | None = None  # analyze_kernel's answer (with the kernel's `output`) when done
    text_sha256: str | None = None  # of the file text the job compiled
    version: int | None = None  # the kernel's result version this job produced
    extra: dict[str, Any] = field(default_factory=dict)  # server-side derived data (pass graphs, caches)
    times: dict[str, float] | None = None  # running: {own_s, cpu_wait_s} (server.worker.JobTimes), every second
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def finished_ok(self) -> bool:
        return self.status == "done"

    def info(self, position: int | None = None) -> dict[str, Any]:
        """The job as the API shows it (without the result's bulk)."""
        now = time.time()
        progress: dict[str, Any] = {"state": self.status, "time_limit_s": self.timeout}
        if self.status == "queued":
            progress["position"] = position
        if self.started is not None:
            progress["elapsed_s"] = round((self.finished or now) - self.started, 3)
        if self.status == "running" and self.times is not None:
            progress.update(self.times)
        result = self.result or {}
        return {
            "id": self.id, "kernel": self.kernel, "action": self.action, "origin": self.origin,
            "status": self.status, "settings": self.settings, "created": self.created, "started": self.started,
            "finished": self.finished, "progress": progress, "failure": self.failure,
            "version": self.version, "text_sha256": self.text_sha256,
            "error": result.get("error") if self.status == "done" else None,
            "summary": result.get("summary") if self.status == "done" else None,
        }


Runner = Callable[[Job], Awaitable[dict[str, Any]]]
Listener = Callable[[Job], None]


class JobQueue:
    """At most `workers` jobs run at once; at most `queue_size` requested jobs wait beyond them."""

    def __init__(self, runner: Runner, workers: int, queue_size: int, keep: int = 32,
                 keep_if: Callable[[Job], bool] | None = None, keep_bytes: int = 512 * 2**20,
                 size_of: Callable[[Job], int] | None = None) -> None:
        self.runner = runner
        self.workers = max(1, workers)
        self.queue_size = max(0, queue_size)
        self.keep = keep
        self.keep_if = keep_if or (lambda job: False)
        self.keep_bytes = keep_bytes
        self.size_of = size_of or (lambda job: 0)
        self.jobs: dict[str, Job] = {}
        self.listeners: list[Listener] = []
        self._slots = asyncio.Semaphore(self.workers)
        self._ids = itertools.count(1)
        self._watch_jobs: dict[tuple[str, str], Job] = {}  # (kernel, action) -> its pending server-started job

    # ---- state

    @property
    def capacity(self) -> int:
        return self.workers + self.queue_size

    def unfinished(self, origin: str | None = "request") -> list[Job]:
        return [j for j in self.jobs.values() if j.status in ("queued", "running")
                and (origin is None or j.origin == origin)]

    def position(self, job: Job) -> int | None:
        if job.status != "queued":
            return None
        return sum(1 for j in self.jobs.values() if j.status == "queued" and j.created < job.created)

    def info(self, job: Job) -> dict[str, Any]:
        return job.info(self.position(job))

    def stats(self) -> dict[str, Any]:
        counts = {s: 0 for s in STATES}
        for j in self.jobs.values():
            counts[j.status] += 1
        return {"workers": self.workers, "queue_size": self.queue_size, "capacity": self.capacity,
                "unfinished_requests": len(self.unfinished()), **counts}

    def get(self, job_id: str) -> Job | None:
        return self.jobs.get(job_id)

    # ---- life cycle

    def submit(self, kernel: str, action: str, settings: dict[str, Any], timeout: float,
               origin: str = "request") -> Job:
        """Queue a job; `QueueFull` when `origin` is a request and the bound is reached."""
        if origin == "request" and len(self.unfinished()) >= self.capacity:
            raise QueueFull(f"{self.capacity} jobs are already queued or running "
                            f"({self.workers} workers, queue of {self.queue_size}); retry later")
        if origin != "request":
            older = self._watch_jobs.pop((kernel, action), None)
            if older is not None and older.task is not None and not older.task.done():
                older.task.cancel()
        job = Job(f"j{next(self._ids)}", kernel, action, dict(settings), timeout, origin)
        self.jobs[job.id] = job
        if origin != "request":
            self._watch_jobs[(kernel, action)] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job), name=f"job {job.id}")
        job.task.add_done_callback(lambda _t: self._ended_unstarted(job))
        self._notify(job)
        return job

    def _ended_unstarted(self, job: Job) -> None:
        """A task cancelled before its first step never enters `_run`: end the job here."""
        if job.status in ("queued", "running"):
            job.status, job.finished = "cancelled", time.time()
            job.failure = {"kind": "cancelled", "message": "cancelled before it started"}
            if self._watch_jobs.get((job.kernel, job.action)) is job:
                del self._watch_jobs[(job.kernel, job.action)]
            self._notify(job)

    def cancel(self, job_id: str) -> Job | None:
        job = self.jobs.get(job_id)
        if job is not None and job.task is not None and not job.task.done():
            job.task.cancel()
        return job

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """One of the `workers` slots, for the server's own work on the pool."""
        async with self._slots:
            yield

    async def _run(self, job: Job) -> None:
        try:
            async with self._slots:
                job.status, job.started = "running", time.time()
                self._notify(job)
                job.result = await self.runner(job)
                job.status = "done"
        except asyncio.CancelledError:
            job.status = "cancelled"
            job.failure = {"kind": "cancelled", "message": "cancelled" + (
                " (a newer edit replaced it)" if job.origin != "request" else "")}
        except JobFailed as e:  # with what the kernel printed before it failed, if anything
            job.status, job.failure = "failed", {"kind": e.kind, "message": e.message, **(
                {"output": e.output} if e.output else {})}
        except Exception as e:  # noqa: BLE001 - a server-side bug fails the job, not the server
            job.status, job.failure = "failed", {"kind": "error", "message": f"{type(e).__name__}: {e}"}
        finally:
            job.finished = time.time()
            if self._watch_jobs.get((job.kernel, job.action)) is job:
                del self._watch_jobs[(job.kernel, job.action)]
            self._notify(job)
            self._forget_old()

    def _notify(self, job: Job) -> None:
        for listener in list(self.listeners):
            listener(job)

    def _forget_old(self) -> None:
        """Forget the oldest finished jobs (unless pinned) beyond `keep` of them or `keep_bytes` of results."""
        done = sorted((j for j in self.jobs.values() if j.status not in ("queued", "running")),
                      key=lambda j: j.finished or 0)
        sizes = {j.id: self.size_of(j) for j in done}
        count, total = len(done), sum(sizes.values())
        for j in done:
            if count <= self.keep and total <= self.keep_bytes:
                break
            if not self.keep_if(j):
                del self.jobs[j.id]
                count, total = count - 1, total - sizes[j.id]

    async def close(self) -> None:
        tasks = [j.task for j in self.jobs.values() if j.task is not None and not j.task.done()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
