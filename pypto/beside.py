"""Two computations on the same objects at once: one in a forked child, one here.

A production kernel's compile and its views read big structures without changing them, and the
user's edit waits for all of it, alone in the worker pool (`server.live` runs the kernel the user
tunes first and alone), so the machine's second core is idle. Three places pair such work:

- the compile's leaf functions (merging isomorphic subgraphs) beside the execute graph's
  dependencies (`pypto.compiler.tile_passes.leaf_functions`), the child going on to the record
  document's tile columns when the document is made next;
- a job's health report beside the record document and the editor views (`server.analyze`), the
  child making the document's run first (`ahead`: results this process takes when it needs them,
  the first midway through its own work);
- the tuning advisor's candidates from 50,000 tile ops (`pypto.analysis.advisor.Advisor.evaluate_all`): each
  traced here (the user's code), lowered and simulated in a child of its own (`soon`), two at a time.

`beside(child, here)` forks: the child runs `child()` and sends its result back pickled through a
pipe, while this process runs `here()`. The child shares the objects copy-on-write and runs only our
code, never the user's. `beside_then(child, here, then)` keeps the child on after it sent `child()`:
it computes `then()` too, which this process takes later (`Later.get`), when it needs it — the
record document's tile columns, made while this process runs the board (`pypto.compiler.tile_passes`).
This process reads `child()`'s result only once `here()` is done, so the child does not wait for that:
the pipe is grown to hold the result (Linux, up to 1 MiB) and what does not fit goes from a thread. The
child closes the pipe once its results are sent: this process reads to the pipe's end, and tearing
down the child's copy of a big compile takes tens of milliseconds more.

Forking is an acceleration, never a change of result: without `os.fork`, with other threads running
(a fork keeps only the calling thread, and locks another thread held would stay held in the child),
without the memory available for a second copy of this process (`_room_for_a_copy`), or when the child
fails in any way (an exception, a signal, a result that does not pickle), `child()` runs here after
`here()`, and what it raises is raised here — unless the child ran out of memory and the caller would rather
leave that result than risk the same here (`Later.get(again_out_of_memory=False)`: the tuning advisor, whose candidate
is then not simulated, not lost with the whole job). A job's child is in the job's process group
(`server.worker`), so cancelling the job ends it too. Imports nothing of pypto: any layer may use it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")


def beside(child: Callable[[], A], here: Callable[[], B], fork: bool = True) -> tuple[A, B]:
    """(`child()`, `here()`), `child()` computed in a forked child while `here()` runs in this process
    (see the module doc for when it is not, and then `child()` runs after `here()`)."""
    a, b, _ = beside_then(child, here, None, fork)
    return a, b


class Later(Generic[C]):
    """A result a forked child computes (`beside_then`'s `then()`, or one of `ahead`'s): `get()` waits for it (or
    computes it here when there is no child, or the child did not send it whole); `drop()` ends the child when nobody
    will ask."""

    def __init__(self, compute: Callable[[], C], child: _Child | None = None, index: int = 0, last: bool = True
                 ) -> None:
        self._compute = compute
        self._child = child
        self._index = index  # the child's results before it: passed over if not taken
        self._last = last  # the child's last result: read to the pipe's end

    def get(self, again_out_of_memory: bool = True) -> C:
        """The child's result, or `compute()` here. A child that ran out of memory says so; with
        `again_out_of_memory=False` that raises `ChildOutOfMemory` instead of computing it here, where it would likely
        run out too, and take this process with it (the tuning advisor's candidates: each is one of several)."""
        child, self._child = self._child, None
        got = child.take(self._index, self._last) if child is not None else None
        if got is not None and got[0] == "ok":
            return got[1]
        if got is not None and not again_out_of_memory:
            raise ChildOutOfMemory("its forked process ran out of memory")
        return self._compute()

    def ready(self, timeout: float) -> bool:
        """Whether `get()` would take the child's result now: it has begun to arrive within `timeout` seconds (each
        result is sent only once computed), or there is no child (`get()` computes it here). For the child's next
        result: `soon`'s, or the first of `ahead`'s or `beside_then`'s. The tuning advisor's bounded check waits with
        it, and drops a candidate whose child is not done by its deadline."""
        child = self._child
        if child is None or child.over:
            return True
        readable, _, _ = select.select([child.read], [], [], max(0.0, timeout))
        return bool(readable)

    def drop(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.end()


class ChildOutOfMemory(Exception):
    """A forked child ran out of memory before it sent its result (`Later.get(again_out_of_memory=False)`)."""


class _Child:
    """A forked child computing results in order, and the read end of its pipe."""

    def __init__(self, pid: int, read: int) -> None:
        self.pid, self.read = pid, read
        self.next = 0  # the index of the next result in the pipe
        self.over = False

    def take(self, index: int, last: bool) -> tuple[str, Any] | None:
        """Its result `index` ("ok", value), those before it passed over; ("memory", None) when the child ran out of
        memory before it was sent; None when it is not whole (then none after it is either) or was passed over."""
        while not self.over and self.next < index:
            self._next()
        if self.over or self.next > index:
            return None
        if last:
            self.over = True
            return _collect(self.pid, self.read)
        return self._next()

    def _next(self) -> tuple[str, Any] | None:
        got = _first(self.read)
        self.next += 1
        if got is None or got[0] != "ok":  # nothing comes after it
            self.end()
        return got

    def end(self) -> None:
        if not self.over:
            self.over = True
            _reap(self.pid, self.read)


def beside_then(child: Callable[[], A], here: Callable[[], B], then: Callable[[], C] | None,
                fork: bool = True) -> tuple[A, B, Later[C] | None]:
    """`beside(child, here)`, the child going on to compute `then()` once it sent `child()`: (`child()`, `here()`,
    a `Later` of `then()`, None without `then`). Without a child (as `beside`), `then()` is computed here when it is
    asked for."""
    forked = _fork(child, then) if fork else None
    if forked is None:
        b = here()
        return child(), b, None if then is None else Later(then)
    first = Later(child, forked, 0, last=then is None)
    try:
        b = here()
    except BaseException:
        forked.end()
        raise
    return first.get(), b, None if then is None else Later(then, forked, 1)


def ahead(first: Callable[[], A], then: Callable[[], C], fork: bool = True) -> tuple[Later[A], Later[C]]:
    """`first()` and then `then()` computed in a forked child while this process goes on with its own work, which
    takes them when it needs them, in that order (`Later.get`; computed here when there is no child). Where
    `beside_then` has this process take the first result after its own part, here it may take it midway (the
    record document's run, made while this process makes the rest of the document; the findings after it)."""
    forked = _fork(first, then) if fork else None
    if forked is None:
        return Later(first), Later(then)
    return Later(first, forked, 0, last=False), Later(then, forked, 1)


def soon(compute: Callable[[], A], fork: bool = True) -> Later[A]:
    """`compute()` in a forked child while this process goes on, taken with `Later.get` (computed here when there is
    no child, or it failed; `drop()` ends it). Several may run at once: the tuning advisor lowers its candidates
    two at a time, and the child's copy of a candidate's program is never torn down object by object here."""
    forked = _fork(compute, None) if fork else None
    return Later(compute) if forked is None else Later(compute, forked, 0, last=True)


def _fork(child: Callable[[], Any], then: Callable[[], Any] | None) -> _Child | None:
    """A forked child computing `child()` and then `then()` (if any), each sent whole; None when there is none (see
    the module doc: then both are computed here)."""
    _reap_ended()
    if not hasattr(os, "fork") or threading.active_count() > 1 or not _room_for_a_copy():
        return None
    read, write = os.pipe()
    try:
        pid = os.fork()
    except Exception:  # noqa: BLE001 - no process to spare (a process limit, memory), or a patched os: one after the other
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: each result with its length, then leave without running anything of the parent's
        code = 1
        try:
            os.close(read)
            first = _message(child())
            if then is None:
                _send(write, first)
            else:
                # the parent may read the first result only later (`beside_then`: once `here()` is done): a result
                # longer than the pipe holds would keep this child from `then()` until then (Kimi's block attention
                # after its edit: its leaves' rows waited 0.25 s for the execute graph, and its tile columns after
                # them); the pipe is grown to hold it, and what does not fit even so goes from a thread
                failed: list[BaseException] = []
                sender = _send_soon(write, first, failed)
                try:
                    last = _message(then())
                finally:  # the first result goes out whole even when `then()` fails
                    if sender is not None:
                        sender.join()
                if failed:
                    raise failed[0]
                _send(write, last)
            os.close(write)  # the parent reads to the pipe's end: now, not once this copy of the process is torn down
            code = 0
        except MemoryError:  # said, if it can be: the parent may leave it rather than run out too (`Later.get`)
            with contextlib.suppress(BaseException):
                _send(write, _OUT_OF_MEMORY)
        except BaseException:  # noqa: BLE001 - the parent computes what it did not send, and reports what it raises
            pass
        finally:
            os._exit(code)
    os.close(write)
    return _Child(pid, read)


def _send(fd: int, data: bytes, failed: list[BaseException] | None = None) -> None:
    """All of `data` down the pipe `fd` (a signal may cut a write short); what fails goes to `failed` when given."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException as e:  # noqa: BLE001 - the caller decides (a thread's would be printed to the job's output)
        if failed is None:
            raise
        failed.append(e)


def _send_soon(fd: int, data: bytes, failed: list[BaseException]) -> threading.Thread | None:
    """`data` down the empty pipe `fd` without waiting for its reader: what the pipe holds (grown to `data`'s length
    where the system allows) written now, the rest from a thread, returned to be joined (None: all written)."""
    room = _PIPE_BYTES
    with contextlib.suppress(ImportError, AttributeError, OSError):  # F_SETPIPE_SZ is Linux's (up to pipe-max-size)
        import fcntl

        room = fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, min(max(len(data), _PIPE_BYTES), _PIPE_MOST))
    now = min(room, len(data))
    _send(fd, data[:now])
    if now == len(data):
        return None
    sender = threading.Thread(target=_send, args=(fd, data[now:], failed))
    sender.start()
    return sender


_PIPE_BYTES = 65_536  # what an empty pipe holds by default (Linux)
_PIPE_MOST = 1 << 20  # and grown at most (Linux's default pipe-max-size: the kernel's memory, never swapped)


def _message(value: Any, kind: str = "ok") -> bytes:
    """A result as the child sends it: its length, then its pickle. A whole message is a whole result: the parent
    need not wait for the child's exit to trust it (tearing down a copy-on-write copy of a big compile takes ~30 ms)."""
    data = pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)
    return struct.pack("<Q", len(data)) + data


_OUT_OF_MEMORY = _message(None, "memory")  # made now: sending it needs no memory


def _unpickled(data: bytes | None) -> tuple[str, Any] | None:
    try:
        got = pickle.loads(data) if data is not None else None
    except Exception:  # noqa: BLE001 - a cut or corrupt answer: computed here instead
        return None
    return got if isinstance(got, tuple) and len(got) == 2 and got[0] in ("ok", "memory") else None


def _first(read: int) -> tuple[str, Any] | None:
    """The first message of a `beside_then` child, or None when it is not whole."""
    head = _exactly(read, 8)
    return None if head is None else _unpickled(_exactly(read, struct.unpack("<Q", head)[0]))


def _exactly(read: int, n: int) -> bytes | None:
    """`n` bytes from the pipe, or None at its end first."""
    parts = []
    while n > 0:
        chunk = os.read(read, min(n, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


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
    """The child's ("ok", result): its last message, read to the pipe's end; None when it is not whole. The child is
    reaped when it has ended, else later (`_reap_ended`): a whole message needs no exit status to be trusted, and
    the user's module may have set SIGCHLD to be ignored (the system reaps the child, and waiting for it fails)."""
    with os.fdopen(read, "rb") as f:
        data = f.read()
    whole = len(data) >= 8 and struct.unpack("<Q", data[:8])[0] == len(data) - 8
    got = _unpickled(data[8:]) if whole else None
    try:
        done, _ = os.waitpid(pid, os.WNOHANG if got is not None else 0)
        if not done:
            _ending.append(pid)
    except ChildProcessError:
        pass
    return got


_ending: list[int] = []  # children that sent their results and were still ending: reaped by the next `beside`


def _reap_ended() -> None:
    for pid in list(_ending):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _ending.remove(pid)


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
