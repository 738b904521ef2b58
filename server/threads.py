"""The servers' threads import the heavy packages once, one thread at a time, before anything else.

The shells start without numpy and pypto (the language server answers `initialize` in well under a second) and
import them lazily, in threads: a job's answer is unpickled and prepared in the pool's thread
(`server.worker.WorkerPool.run`), views are made with `asyncio.to_thread`. CPython's per-module import locks make
two first imports of a package racy: a thread that imports a submodule directly holds that module's lock while it
imports the package (an unpickled numpy scalar names `numpy._core.multiarray`), and a thread importing the package
meanwhile reaches that submodule; Python finds the cycle and raises `_DeadlockError` ("deadlock detected by
_ModuleLock('numpy._core._multiarray_umath')") in one of them — a record of an analysis that ran well is lost
(the CI of session 53's last commit: two kernels of one file answering together; 24 of 30 such races of two threads
in fresh processes on this machine).

So every thread the servers make for such work runs `ready` first (`executor`: the event loop's default executor
with `install`, the history's one thread), and `ready` imports `PACKAGES` under one lock: the first thread imports
them whole, the others wait for it, and after that an import finds them in `sys.modules`. (FastAPI runs `serve`'s
plain `def` routes in anyio's threads, not these: they read what a job made, after its pool thread ran `ready`.)
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)

PACKAGES = ("numpy", "pypto")  # the packages whose submodules the servers' threads import (or unpickle) directly
_LOCK = threading.Lock()
_done = False
_INSTALLED: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def ready() -> None:
    """Import `PACKAGES`, once, one thread at a time; the other threads that call it wait until it is done. Never
    raises (a thread pool's initializer that raises breaks the pool): a package that fails to import is logged, and
    imported again where it is used, with its own error."""
    global _done
    if _done:
        return
    with _LOCK:
        if _done:
            return
        for name in PACKAGES:
            try:
                importlib.import_module(name)
            except Exception as e:  # noqa: BLE001 - said here, raised again where the package is used
                log.warning("importing %s for the server's threads failed: %s: %s", name, type(e).__name__, e)
        _done = True


def executor(max_workers: int | None = None, thread_name_prefix: str = "") -> ThreadPoolExecutor:
    """A thread pool whose threads run `ready` before their first task."""
    return ThreadPoolExecutor(max_workers, thread_name_prefix=thread_name_prefix, initializer=ready)


def install(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Make `executor()` the default executor of `loop` (the running one by default): what `asyncio.to_thread` and
    `run_in_executor(None, …)` run on. Once per loop; called where a shell starts, before its first thread."""
    loop = loop if loop is not None else asyncio.get_running_loop()
    if loop not in _INSTALLED:
        loop.set_default_executor(executor(thread_name_prefix="pypto-server"))
        _INSTALLED.add(loop)
