"""Two computations on the same objects at once: one in a forked child, one here.

A production kernel's compile and its views read big structures without changing them, and the
user's edit waits for all of it, alone in the worker pool (`server.live` runs the kernel the user
tunes first and alone), so the machine's second core is idle. Two places pair such work:

- the compile's leaf functions (merging isomorphic subgraphs) beside the execute graph's
  dependencies (`pypto.compiler.tile_passes.leaf_functions`);
- a job's health report and editor views beside the record document (`server.analyze`).

`beside(child, here)` forks: the child runs `child()` and sends its result back pickled through a
pipe, while this process runs `here()`. The child shares the objects copy-on-write and runs only our
code, never the user's.

Forking is an acceleration, never a change of result: without `os.fork`, with other threads running
(a fork keeps only the calling thread, and locks another thread held would stay held in the child),
without the memory available for a second copy of this process (`_room_for_a_copy`), or when the child
fails in any way (an exception, a signal, a result that does not pickle), `child()` runs here after
`here()`, and what it raises is raised here. A job's child is in the job's process group
(`server.worker`), so cancelling the job ends it too. Imports nothing of pypto: any layer may use it.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

A = TypeVar("A")
B = TypeVar("B")


def beside(child: Callable[[], A], here: Callable[[], B], fork: bool = True) -> tuple[A, B]:
    """(`child()`, `here()`), `child()` computed in a forked child while `here()` runs in this process
    (see the module doc for when it is not, and then `child()` runs after `here()`)."""
    if not fork or not hasattr(os, "fork") or threading.active_count() > 1 or not _room_for_a_copy():
        b = here()
        return child(), b
    read, write = os.pipe()
    try:
        pid = os.fork()
    except Exception:  # noqa: BLE001 - no process to spare (a process limit, memory), or a patched os: one after the other
        os.close(read)
        os.close(write)
        b = here()
        return child(), b
    if pid == 0:  # the child: compute, send, and leave without running anything of the parent's
        code = 1
        try:
            os.close(read)
            data = pickle.dumps(("ok", child()), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        except BaseException:  # noqa: BLE001 - the parent computes it again and reports what it raises
            pass
        finally:
            os._exit(code)
    os.close(write)
    try:
        b = here()
    except BaseException:
        _reap(pid, read)
        raise
    got = _collect(pid, read)
    return (got[1] if got is not None else child()), b


def _room_for_a_copy(meminfo: str = "/proc/meminfo", statm: str = "/proc/self/statm") -> bool:
    """Whether the machine has memory available for a second copy of this process: the child shares it
    copy-on-write, but reading the record moves every object's reference count, so the pages it walks are
    copied (a kernel of 10^6 tile ops: gigabytes). Linux's MemAvailable against this process's resident size;
    True where /proc does not say."""
    try:
        with open(meminfo, "rb") as f:
            available = next(int(line.split()[1]) * 1024 for line in f if line.startswith(b"MemAvailable:"))
        with open(statm, "rb") as f:
            resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, StopIteration):
        return True
    return available > resident


def _collect(pid: int, read: int) -> tuple[str, Any] | None:
    """The child's ("ok", result), or None when it ended without sending one whole. (Its exit status may be
    unknown: the user's module may have set SIGCHLD to be ignored, and then the child is reaped by the system;
    what it sent then decides.)"""
    with os.fdopen(read, "rb") as f:
        data = f.read()
    try:
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
    except ChildProcessError:
        pass
    if not data:
        return None
    try:
        got = pickle.loads(data)
    except Exception:  # noqa: BLE001 - a cut or corrupt answer: computed here instead
        return None
    return got if isinstance(got, tuple) and len(got) == 2 and got[0] == "ok" else None


def _reap(pid: int, read: int) -> None:
    """End the child of a computation that raised here, and reap it."""
    os.close(read)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
