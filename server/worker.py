"""Isolation: user kernels run in worker processes with a time and a memory limit.

A kernel is user code: it may raise, loop forever, eat memory or call `os._exit`. The
language server and the HTTP server never run it themselves; they ask a `WorkerPool`,
which keeps `size` long-lived worker processes (forked from a forkserver that has already
imported `pypto`, so a replacement is ready in milliseconds and the compiler stays warm).

A job is a function of `server.analyze` called with JSON-able arguments. `run()` waits for
its answer; the pool turns every way a job can go wrong into a `JobFailed` with a `kind`:

- `timeout` — no answer within the time limit: the worker is killed and replaced;
- `memory` — the worker's address space is capped (RLIMIT_AS = its size at start + the
  limit), so an allocation beyond it raises MemoryError in the job; the worker is replaced;
- `crashed` — the worker died (`os._exit`, a signal, a segfault): it is replaced;
- `error` — the job raised (a bug in the analysis; user mistakes are results, not errors);
- `cancelled` — the caller cancelled (a newer edit): the worker is killed and replaced.

A kernel file may import its sibling modules (`import helpers` next to it), as `python FILE`
allows: a job on a file puts the file's folder on the worker's `sys.path`
(`_SiblingModules`), and the modules it imported from that folder are forgotten — with
the worker's cached kernel module — when one of their files changes or a job comes for a
file of another folder, so an edit of `helpers.py` is seen by the next job.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import multiprocessing as mp
import os
import resource
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from typing import Any

_PRELOAD = ["numpy", "torch", "pypto", "pypto.record", "pypto.boards.sim", "pypto.analysis.health", "server.analyze"]


class JobFailed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _digest(file: str) -> str | None:
    try:
        with open(file, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    except OSError:
        return None


class _SiblingModules:
    """The modules a worker's jobs imported from the kernel file's folder, and that folder on sys.path.

    `before(path)` (a job on the file `path` is about to run) puts `path`'s folder on `sys.path`
    and drops the sibling modules of earlier jobs when one of their files changed or the folder
    is another one (then also calling `forget`, which clears the worker's cached kernel module:
    it holds the old helpers). `after()` records the modules the job imported from the folder."""

    def __init__(self, forget: Callable[[], None], enter_folder: Callable[[str], None]) -> None:
        self.forget = forget
        self.enter_folder = enter_folder
        self.folder: str | None = None
        self.kernel_file: str | None = None
        self.modules: dict[str, tuple[str, str | None]] = {}  # name -> (file, sha1 of its text)
        self._known: set[str] = set()

    def before(self, path: str) -> None:
        folder = os.path.dirname(os.path.abspath(path))
        stale = folder != self.folder or any(_digest(f) != d for f, d in self.modules.values())
        if stale and self.modules:
            for name in self.modules:
                sys.modules.pop(name, None)
            self.modules = {}
            self.forget()
        if folder != self.folder:
            # first on sys.path, as `python FILE` puts the script's folder: a `helpers.py`
            # elsewhere on the path inherited from the parent (its working directory) must not win
            self.enter_folder(folder)
            self.folder = folder
        self.kernel_file = os.path.abspath(path)
        self._known = set(sys.modules)

    def after(self) -> None:
        if self.folder is None:
            return
        inside = self.folder + os.sep
        for name in set(sys.modules) - self._known:
            file = getattr(sys.modules.get(name), "__file__", None)
            if isinstance(file, str) and file.startswith(inside) and os.path.abspath(file) != self.kernel_file:
                self.modules[name] = (file, _digest(file))


def _serve(conn: Connection, memory_limit: int) -> None:
    """The worker's loop: receive (fn name, args), answer ("ok", result) or (kind, message)."""
    import server.analyze as jobs
    from pypto.userfiles import enter_folder, forget_loaded

    siblings = _SiblingModules(forget_loaded, enter_folder)

    if memory_limit > 0:
        limit = _vm_bytes() + memory_limit
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass
    while True:
        try:
            fn_name, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            fn: Callable[..., Any] = getattr(jobs, fn_name)
            path = args[0] if args and isinstance(args[0], str) and args[0].endswith(".py") else None
            if path is not None:
                siblings.before(path)
            jobs.progress = lambda data: conn.send(("progress", data))  # a long job's interim results
            try:
                answer = fn(*args)
            finally:
                jobs.progress = jobs.no_progress
                if path is not None:
                    siblings.after()
            conn.send(("ok", answer))
        except MemoryError:
            conn.send(("memory", "the kernel ran out of its memory limit"))
            return  # a worker that hit the limit may be in a bad state: let the pool replace it
        except BaseException as e:  # noqa: BLE001 - report everything, keep serving
            conn.send(("error", "".join(traceback.format_exception_only(type(e), e)).strip()
                       + "\n" + traceback.format_exc(limit=-8)))


_MATH_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _start_forkserver(workers: int) -> None:
    """Start the forkserver with each worker's share of the cores for the math libraries' thread
    pools (OpenMP, OpenBLAS, MKL) — N workers each with every core's worth of spinning BLAS
    threads oversubscribe the machine (benchmarks/check_bench.py: with and without). As
    `pypto.analysis.executors.start_forkserver`, copied because this process never imports
    pypto. Variables the user set win; this process's environment is left as it was."""
    share = str(max(1, (os.cpu_count() or 1) // max(1, workers)))
    saved = {k: os.environ.get(k) for k in _MATH_THREADS}
    for k in _MATH_THREADS:
        os.environ.setdefault(k, share)
    try:
        forkserver.ensure_running()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)


@dataclass
class _Worker:
    process: Any
    conn: Connection


class WorkerPool:
    """`size` worker processes; `run(fn, *args)` runs `server.analyze.<fn>(*args)` in one."""

    def __init__(self, size: int = 1, time_limit: float = 60.0, memory_limit_mb: int = 2048) -> None:
        self.size = max(1, size)
        self.time_limit = time_limit
        self.memory_limit = memory_limit_mb * 2**20
        self._ctx = mp.get_context("forkserver")
        self._ctx.set_forkserver_preload([m for m in _PRELOAD if importlib.util.find_spec(m.split(".")[0])])
        _start_forkserver(self.size)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._free = threading.Semaphore(self.size)
        self._closed = False
        self.replaced = 0  # workers killed or lost and started again
        self.failures: dict[str, int] = {}  # JobFailed kind -> how many

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        p = self._ctx.Process(target=_serve, args=(child, self.memory_limit), daemon=True, name="pypto-worker")
        p.start()
        child.close()
        return _Worker(p, parent)

    def _take(self) -> _Worker:
        self._free.acquire()
        with self._lock:
            if self._idle:
                return self._idle.pop()
        try:
            return self._start()
        except BaseException:
            self._free.release()
            raise

    def _give(self, w: _Worker | None) -> None:
        with self._lock:
            if w is not None and not self._closed:
                self._idle.append(w)
            elif w is not None:
                self._kill(w)
        self._free.release()

    def _kill(self, w: _Worker) -> None:
        try:
            w.process.kill()
            w.process.join(5)
        except (OSError, ValueError, AttributeError):
            pass
        w.conn.close()

    def run_blocking(self, fn: str, *args: Any, timeout: float | None = None,
                     cancel: threading.Event | None = None, timeout_note: str | None = None,
                     on_progress: Callable[[Any], None] | None = None) -> Any:
        """Run a job and wait for it (from a thread); raises JobFailed. `timeout_note` says what a
        timeout means for this job (default: the kernel may loop forever). Interim results the job
        sends (`server.analyze.progress`) go to `on_progress`, in this thread."""
        if self._closed:
            raise JobFailed("error", "the worker pool is closed")
        limit = self.time_limit if timeout is None else timeout
        w = self._take()
        keep: _Worker | None = None
        try:
            try:
                w.conn.send((fn, args))
            except (OSError, ValueError) as e:
                raise JobFailed("crashed", f"the worker could not take the job ({e})") from None
            waited = 0.0
            step = 0.05
            while True:
                while not w.conn.poll(step):
                    waited += step
                    if cancel is not None and cancel.is_set():
                        raise JobFailed("cancelled", "a newer request replaced this one")
                    if waited >= limit:
                        raise JobFailed("timeout", f"no result after {limit:g} s (the time limit): " + (
                            timeout_note or "the kernel was stopped; does it loop forever?"))
                    if not w.process.is_alive():
                        break
                try:
                    kind, payload = w.conn.recv()
                except (EOFError, OSError):
                    w.process.join(1)
                    code = w.process.exitcode
                    raise JobFailed("crashed", f"the worker process died (exit code {code}) while running "
                                               f"the kernel: it called os._exit, was killed or crashed") from None
                if kind != "progress":
                    break
                if on_progress is not None:
                    try:
                        on_progress(payload)
                    except Exception:  # noqa: BLE001 - a listener's bug must not fail the job
                        traceback.print_exc()
            if kind == "ok":
                keep = w
                return payload
            if kind == "error":
                keep = w
            raise JobFailed(kind, payload)
        except JobFailed as e:
            self.failures[e.kind] = self.failures.get(e.kind, 0) + 1
            raise
        finally:
            if keep is None:
                self._kill(w)
                self.replaced += 1
            self._give(keep)

    async def run(self, fn: str, *args: Any, timeout: float | None = None, timeout_note: str | None = None,
                  on_progress: Callable[[Any], None] | None = None) -> Any:
        """Run a job without blocking the event loop; cancelling the awaiting task kills the job.
        `on_progress` gets the job's interim results on the event loop."""
        cancel = threading.Event()
        loop = asyncio.get_running_loop()
        relay = None if on_progress is None else (lambda data: loop.call_soon_threadsafe(on_progress, data))
        fut = loop.run_in_executor(None, lambda: self.run_blocking(fn, *args, timeout=timeout, cancel=cancel,
                                                                   timeout_note=timeout_note, on_progress=relay))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            cancel.set()
            raise

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for w in idle:
            self._kill(w)
