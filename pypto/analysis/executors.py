"""Where `pypto-ide check` reports its kernels: in this process, a local process pool, or Dask.

A kernel library in CI has many kernels and each report (compile, profile on the sim board,
health, precision) is independent, so the reports run in parallel. One unit of work is a
`Work` — a kernel file's path and text, the kernel's name and what to report — and
`report_one(work)` turns it into a `KernelReport` wherever it runs: it executes the file's
text under its path (the text travels with the work and is registered with `linecache`, so a
worker needs no copy of the file; the file's folder goes on `sys.path` when it exists there,
so `import helpers` of a sibling module works on a machine that shares the checkout).

Executors, by `--executor`:

- `local` (the default): `--workers N` processes of this machine (forkserver children with
  pypto preloaded; `N = 1` runs in this process, no pool);
- `dask://HOST:PORT`: an existing Dask cluster (`distributed.Client`), whose workers have
  pypto-ide installed; the reports come back by pickle;
- `dask://local`: a `distributed.LocalCluster` of `--workers` processes on 127.0.0.1, started
  and stopped by the run (the same code path as a real cluster, on one machine).

The order of the reports is the order of the work, whatever the executor, and a worker that
dies (`os._exit`, a signal, memory) costs the report of its kernel — an `error` — never the run.
"""

from __future__ import annotations

import importlib.util
import logging
import multiprocessing as mp
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

from pypto.analysis.report import KernelReport, make_report
from pypto.frontend.capture import nested_kernels
from pypto.frontend.inputs import def_loc
from pypto.frontend.jit import JitKernel
from pypto.userfiles import load_text

log = logging.getLogger(__name__)
_PRELOAD = ["numpy", "torch", "pypto", "pypto.record", "pypto.boards.sim", "pypto.analysis.report",
            "pypto.analysis.health", "pypto.analysis.precision"]


_MATH_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def start_forkserver(workers: int) -> None:
    """Start the forkserver (once per process) with each worker's share of the cores for the
    math libraries' own thread pools (OpenMP, OpenBLAS, MKL): `workers` processes each running
    numpy/torch with every core's worth of threads oversubscribe the machine, and spinning BLAS
    threads made a 2-worker pool slower than one process (benchmarks/check_bench.py prints the
    pool with and without the cap). Variables the user set win; this process's environment is
    left as it was."""
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


@dataclass(frozen=True)
class Work:
    """One kernel to report: which file (path and text), which kernel, and what to run."""

    path: str
    text: str
    kernel: str  # the JitKernel's name
    line: int  # its def line (for the report of a worker that died)
    board: str = "sim"
    precision: bool = True


def report_one(work: Work) -> KernelReport:
    """The report of one kernel (runs wherever the executor puts it)."""
    try:
        mod = load_text(work.path, work.text, "pypto_check_")
    except Exception as e:  # noqa: BLE001 - the module raised while importing here: its report says so
        return _failed(work, f"{type(e).__name__} while importing {Path(work.path).name}: {e}")
    for value in vars(mod).values():
        if isinstance(value, JitKernel) and value.name == work.kernel and value.fn.__code__.co_filename == work.path:
            return make_report(value, work.board, precision=work.precision).without_program()
    for value in nested_kernels(work.path, vars(mod))[0]:  # made inside a function, and captured
        if value.name == work.kernel:
            return make_report(value, work.board, precision=work.precision).without_program()
    return _failed(work, f"no kernel named {work.kernel!r} in {work.path}")


def _failed(work: Work, message: str) -> KernelReport:
    return KernelReport(work.kernel, work.path, work.line, error=message, error_line=work.line)


def works(kernels: Sequence[Any], board: str = "sim", precision: bool = True) -> list[Work]:
    """The work for `kernels` (JitKernels loaded in this process): each file's text read once."""
    texts: dict[str, str] = {}
    out = []
    for k in kernels:
        path = k.fn.__code__.co_filename
        if path not in texts:
            texts[path] = Path(path).read_text()
        span = def_loc(k.fn).span
        out.append(Work(path, texts[path], k.name, span.line if span else 0, board, precision))
    return out


# ---- executors ------------------------------------------------------------------------------------

def parse_executor(spec: str) -> tuple[str, str | None]:
    """('local', None) | ('dask', 'tcp://HOST:PORT' | 'local'); ValueError naming the problem."""
    if spec in ("", "local"):
        return "local", None
    if spec.startswith("dask://"):
        where = spec[len("dask://"):].rstrip("/")
        if where == "local":
            return "dask", "local"
        host, sep, port = where.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"--executor {spec!r}: a Dask scheduler is dask://HOST:PORT (or dask://local)")
        return "dask", f"tcp://{where}"
    if spec.startswith("tcp://"):
        return "dask", spec
    raise ValueError(f"--executor {spec!r}: one of local, dask://HOST:PORT, dask://local")


class Executor:
    """Where the reports run; opened before the kernels are listed, so a local pool starts (on a
    thread) while this process imports the kernel files (a Dask cluster is connected, or a local
    one started, before). `run` keeps the order of its work."""

    local = True  # whether one kernel is reported here rather than sent away

    def run(self, items: Sequence[Work]) -> list[KernelReport]:
        return [report_one(w) for w in items]

    def close(self) -> None:
        pass

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _warm() -> None:
    """Nothing: makes the pool start its worker processes (which import pypto) now."""


class LocalPool(Executor):
    """`workers` local processes, forked from a forkserver that has pypto and torch loaded.
    A worker that dies breaks the whole pool, so the kernels it left without a report are run
    again, each alone in a fresh process: the one that kills its process gets the error, the
    others their reports."""

    def __init__(self, workers: int) -> None:
        self.ctx = mp.get_context("forkserver")
        self.ctx.set_forkserver_preload([m for m in _PRELOAD if importlib.util.find_spec(m.split(".")[0])])
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=self.ctx)
        # starting a worker waits for the forkserver's preload (torch: about a second), so the
        # workers start on a thread: meanwhile the caller imports the kernel files
        self.starting = threading.Thread(target=self._start, args=(workers,), name="pypto-check-pool", daemon=True)
        self.starting.start()

    def _start(self, workers: int) -> None:
        try:
            start_forkserver(workers)
            for _ in range(workers):
                self.pool.submit(_warm)
        except Exception as e:  # noqa: BLE001 - the pool could not start: run() says so when asked
            log.warning("the local pool did not start: %s", e)

    def run(self, items: Sequence[Work]) -> list[KernelReport]:
        self.starting.join()
        out: list[KernelReport | None] = [_outcome(w, f) for w, f in
                                          zip(items, [self.pool.submit(report_one, w) for w in items])]
        for i, rep in enumerate(out):
            if rep is None:
                with ProcessPoolExecutor(max_workers=1, mp_context=self.ctx) as alone:
                    out[i] = _outcome(items[i], alone.submit(report_one, items[i])) or _failed(
                        items[i], "the worker process died while reporting this kernel (os._exit, a signal or "
                                  "out of memory)")
        return [r for r in out if r is not None]

    def close(self) -> None:
        self.starting.join()
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskCluster(Executor):
    """A Dask cluster at `address` (`tcp://HOST:PORT`), or a LocalCluster of `workers` processes on
    127.0.0.1 started for this run (and stopped with it) when `address` is 'local'."""

    local = False

    def __init__(self, address: str, workers: int) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ValueError("--executor dask://… needs Dask: pip install 'pypto-ide[dask]'") from None
        self.cluster = None
        try:
            if address == "local":
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR)
                self.client = Client(self.cluster)
            else:
                self.client = Client(address, timeout=10)
        except OSError as e:
            if self.cluster is not None:
                self.cluster.close()
            raise ValueError(f"no Dask scheduler at {address}: {e}") from None

    def run(self, items: Sequence[Work]) -> list[KernelReport]:
        futures = self.client.map(report_one, list(items), pure=False)
        out = []
        for w, f in zip(items, futures):
            try:
                out.append(f.result())
            except Exception as e:  # noqa: BLE001 - KilledWorker (the kernel took its workers down), …
                out.append(_failed(w, f"reporting failed on the Dask cluster: {type(e).__name__}: {e}"))
        return out

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def open_executor(spec: str = "local", workers: int | None = None) -> Executor:
    """The executor named by `spec` (see `parse_executor`) with `workers` processes (default: one
    per core; for `local`, 1 means this process)."""
    kind, where = parse_executor(spec)
    n = workers if workers is not None else (os.cpu_count() or 1)
    if n < 1:
        raise ValueError(f"--workers {n}: at least 1")
    if kind == "dask":
        return DaskCluster(where or "local", n)
    return Executor() if n == 1 else LocalPool(n)


def report_all(kernels: Sequence[Any], executor: Executor, board: str = "sim", precision: bool = True) \
        -> list[KernelReport]:
    """The reports of `kernels` (JitKernels loaded in this process), in order, on `executor`; a
    single kernel, or a local executor of one process, is reported here with no copy of its module."""
    if type(executor) is Executor or (executor.local and len(kernels) <= 1):
        return [make_report(k, board, precision=precision) for k in kernels]
    return executor.run(works(kernels, board, precision))


def _outcome(work: Work, future: Any) -> KernelReport | None:
    """The future's report; None when its pool broke (a worker died); an error report when it raised."""
    try:
        return future.result()  # type: ignore[no-any-return]
    except BrokenProcessPool:
        return None
    except Exception as e:  # noqa: BLE001 - a report that could not come back is that kernel's error
        return _failed(work, f"reporting failed in a worker: {type(e).__name__}: {e}")
