"""Isolation: user kernels run in worker processes with a time and a memory limit.

A kernel is user code: it may raise, loop forever, eat memory, call `os._exit`, print,
start threads or spawn processes. The language server and the HTTP server never run it
themselves; they ask a `WorkerPool`, which keeps `size` long-lived *template* processes
(forked from a forkserver that has already imported `pypto`, so a replacement is ready in
milliseconds; each has compiled a tiny built-in kernel once, so the compiler is warm). A
template never runs user code: it forks a child for each job (`_serve`, `_run_job`). The next
job's child is forked as a job starts and compiles the built-in kernel again beside it, while the
job traces on one core (the copy-on-write faults a compile takes, 10-30 ms, are not paid by its
job; forked as a job ended, as before 2026-12-01, a job sent at once after another — an edit's
compile after the cancelled one, a file's next kernel — waited ~25-35 ms for them); the pool takes
the template idle longest:

- **state** — every job starts from the template's clean interpreter: whatever a document's
  module code changes (`pypto.exp = …`, a class attribute, `sys.path`, numpy's settings) dies
  with its child, and the sibling modules a kernel file imports (`import helpers`) are imported
  afresh by each job, so an edit of `helpers.py` is seen by the next one;
- **threads and processes** — the child leads a new process group; it ends with `os._exit`
  (its threads end with it) and the template then kills the group (SIGKILL) and reaps it (the
  template is a child subreaper): what a job spawned (`sleep 97`) ends with the job. On a
  timeout or a cancellation the pool kills the group and the template;
- **the server's end** — a template watches its connection while a job runs (the pool sends nothing then):
  when the server dies, even by SIGKILL, the template kills its job's group and ends, so no job, running
  or stopped, outlives it;
- **output** — the template's fd 1 and 2 (so every job's, and its children's) are one pipe the
  pool reads (`dup2`): what a job prints, `os.write(1, …)`s or its subprocesses write is the job's
  `output` (at most `OUTPUT_LIMIT` bytes kept), never the server's stdout.

**Background work yields.** A job run with `nice` > 0 is background work (no person waits for it: a file's other
kernels, the advice's check), and so is the rest of a job once it calls `server.analyze.to_background()` (the
language server's compile, once its interim record is sent): it runs niced, and while any job a person waits for
runs (nice 0, not gone to the background) its process group is stopped (SIGSTOP), to be continued (SIGCONT) when
none does. Niceness alone does not do it on a machine of two hyperthreads: a CPU-bound job beside another slows it
by a tenth to a fifth (session 27's measure), and the advice check of a file opened earlier can run for 20 s. A
stopped job's time limit does not run meanwhile (`_Clock` leaves the pause out). A job a person waits for that has
used almost no CPU for a second (under `_WAITING_SHARE` of it) is waiting, not running: for a lock a stopped job
holds, a file it has yet to write, a process, a sleep. The stopped jobs are continued while it waits, and stopped
again once it runs; else a kernel's file lock taken by the advice check of an earlier version would hold the
person's compile until its time limit.

A job is a function of `server.analyze` called with JSON-able arguments. `run()` waits for
its answer (a dict answer gets the job's `output` added); the pool turns every way a job can
go wrong into a `JobFailed` with a `kind` (and the `output` so far):

- `timeout` — no answer within the time limit: the job's group is killed (the template serves on). The limit
  counts the job's own time — wall-clock time less what it waited for a CPU (`_Clock`, from Linux's
  schedstat) — so a loaded machine makes a job slower, not failed: a kernel that loops forever burns
  its limit in CPU, one that sleeps or blocks forever spends it waiting (both are stopped at the
  limit, as on an idle machine), and a backstop ends any job after `BACKSTOP` times its limit of
  wall-clock time. The server's own deadlines (a new template's warm-up, a template's start of a job,
  its report of a killed job's end) count the same way. `run(on_times=…)` gets a running job's
  `JobTimes` every second (the servers show "busy, still compiling" from them);
- `memory` — the job's address space is capped (RLIMIT_AS = the template's size + the limit),
  so an allocation beyond it raises MemoryError in the job (its child ends; the template stays);
- `crashed` — the job's process died (`os._exit`, a signal, a segfault), or the template did;
- `error` — the job raised (a bug in the analysis; user mistakes are results, not errors);
- `cancelled` — the caller cancelled (a newer edit): as a timeout.

Protocol on a template's connection: the template sends `("warm", None)` once, when its warm-up
is done (it can take 10-20 s the first time after an install: numba compiles the sim board's loop,
`pypto.boards.sim_kernel`), and a job sent before waits for it; the pool sends `(fn, args)`; the
template sends `("started", pid)`; the job's child sends any `("progress", data)` and at most one
`("background", None)`, then one `("ok" | "error" |
"memory", payload)`, which `run()` returns at once; the template, once the child's group and any
process that left it are gone, sends `("ended", None | why the child died)`, which the pool
collects before the template's next job (or in `settle()`). A job the pool stops (cancelled, timed out) it kills
(SIGKILL to its group) and then sends `("kill", None)`: the template kills what is left of it (its group, every
process below its child, the orphans it holds: `_kill_tree`) and says `("ended", "killed by SIGKILL")` at once, not
once they are gone: a dying process frees its memory first (~0.1 s a GB here), and the next job on that template —
an edit's compile after the one it cancelled, when the other templates run the file's other kernels — waited for it
(40-50 ms for glm's attention). What has died is reaped as the template next looks (`_reap`, `_end_group`).

**A big message goes by file.** A message of `SPILL_FROM` bytes or more (a big kernel's record: Kimi's block attention
after its tile edit sends ~30 MB, twice) is written by the job to a file in its template's own folder (in `/dev/shm`
where there is one: memory, not disk), and what crosses the pipes is `("spilled", name)`; the pool reads the file,
deletes it, and unpickles what it held. Through the two pipes (job to template, template to pool: 64 KiB at a time,
each a switch between three processes) 30 MB took 0.14 s from the job's send to the pool's read, by file 0.09 s
(benchmarks/answer_bench.py). Such a message is pickled straight into its file (`_Spill`), never made whole in
the job's memory: glm's fused attention's interim answer (2.1 M tile ops, ~0.5 GB pickled) ran its job out of its
cap when pickled to bytes and copied. A name that
is not one a job could have made (`<pid>-<n>`) is a crashed job; what a killed job left there is deleted when its
end is collected, and the folder with its template.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import importlib.util
import itertools
import multiprocessing as mp
import os
import pickle
import re
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import connection, forkserver
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from server import threads

# imported once by the forkserver, shared (copy-on-write) by every template and job: what every job needs
_PRELOAD = ["numpy", "torch", "pypto", "pypto.record", "pypto.boards.sim", "pypto.boards.profile",
            "pypto.boards.swimlane", "pypto.frontend.inputs", "pypto.analysis.health", "pypto.analysis.advice",
            "pypto.analysis.advisor", "pypto.analysis.report", "server.analyze",
            # production kernels import it (PyPTO's models/: 17 of 26 files, for allow_in_graph): 2.3 s per job else
            "torch._dynamo",
            # and these (6 of the 26: their tests sit beside the kernels): 50 ms of each job's module else
            "pytest", "numpy.testing"]
OUTPUT_LIMIT = 256 * 1024  # bytes of a job's output kept (the rest is counted, and read so the job never blocks)
# Deadlines count a process's own time (`_Clock`: wall-clock time minus what it waited for a CPU), each
# with a backstop of BACKSTOP times its seconds of wall-clock time: a busy machine makes a job slower, not failed.
_WARM_WITHIN = 120.0  # seconds for a new template to warm up (1-3 s; 10-20 s the first time after an install)
_STARTED_WITHIN = 10.0  # seconds for a warm template to fork a job's child (it takes milliseconds)
_ENDED_WITHIN = 5.0  # seconds for a template to report a killed job's end before it is replaced too
BACKGROUND_NICE = 10  # the niceness of work no person waits for (a job's `nice`, or `to_background`)
BACKSTOP = 10.0  # a deadline of N s of a process's own time also ends after BACKSTOP * N s of wall-clock time
_TIMES_EVERY = 1.0  # seconds between a running job's `JobTimes` reports (`on_times`)
_WAITING_SHARE = 0.05  # of a second's CPU: a job a person waits for that used less is waiting (module doc)
_PR_SET_CHILD_SUBREAPER = 36


class JobFailed(Exception):
    """A job that gave no answer: `kind` says why (see the module docstring), `output` is what it printed."""

    def __init__(self, kind: str, message: str, output: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.output = output


def wall_backstop(limit: float) -> float:
    """The most wall-clock seconds a job with a time limit of `limit` s can take (on a machine too
    busy to give it `limit` s of its own time sooner)."""
    return BACKSTOP * limit


@dataclass
class JobTimes:
    """A running job's time, as the pool counts it against its time limit (seconds)."""

    wall: float  # since the job started
    own: float  # counted against the limit: `wall` minus the time it waited for a CPU
    cpu_wait: float  # `wall - own`: waiting in a run queue for a CPU that other work had (the machine is busy)
    limit: float


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _per_thread(pid: int | str, name: str) -> dict[int, str]:
    """The text of /proc/<pid>/task/<tid>/<name> of each thread of the process, by thread id (those
    that cannot be read left out; none where the process is gone)."""
    out: dict[int, str] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                out[int(tid)] = f.read()
        except (OSError, ValueError):
            pass
    return out


def _sched(pid: int) -> dict[int, tuple[int, int]]:
    """Nanoseconds each thread of the process has run and has waited in a run queue, by thread id
    (Linux's /proc/<pid>/task/<tid>/schedstat; empty where it cannot be read). A thread's wait is
    added when it next runs: one waiting now is not in it yet."""
    out: dict[int, tuple[int, int]] = {}
    for tid, text in _per_thread(pid, "schedstat").items():
        try:
            ran, waited = text.split()[:2]
            out[tid] = (int(ran), int(waited))
        except ValueError:
            pass
    return out


def _runnable(pid: int, tid: int) -> bool:
    """Whether the thread is running or waiting to run (state R)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "R"
    except (OSError, IndexError):
        return False


def _cpu_seconds(pid: int, tree: bool = False) -> float:
    """User + system CPU time of all the process's threads (0 where it cannot be read); with `tree`,
    and of its descendants, living (at most 256 processes) or reaped (their parent's cutime)."""
    total, todo, seen = 0.0, [pid], set()
    while todo and len(seen) < 256:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15 if tree else 13]) / _TICKS
        except (OSError, ValueError, IndexError):
            continue
        if tree:
            todo.extend(_children_of(p))
    return total


def _children_of(pid: int | str) -> list[int]:
    """The process's child processes (of every thread: an orphan is reparented to any of them);
    `"self"` for this process."""
    out: list[int] = []
    for text in _per_thread(pid, "children").values():
        try:
            out.extend(int(x) for x in text.split())
        except ValueError:
            pass
    return out


class _Clock:
    """A deadline of `seconds` of some processes' own time: the wall-clock time since the clock
    started minus the time they waited for a CPU (the most any one of their threads waited in a run
    queue) — at least their CPU time spread over every core (with `tree`, their descendants' too), so
    a job whose own threads or processes outnumber the cores is not let off by waiting for them. A
    process that sleeps or blocks counts as running (its own time is the wall-clock time, as without
    this clock); one the scheduler keeps waiting does not. Where Linux's schedstat cannot be read,
    own time is wall-clock time. The deadline also ends after BACKSTOP times `seconds` of wall-clock
    time, whatever the processes got."""

    def __init__(self, pids: list[int], seconds: float, tree: bool = False,
                 paused: Callable[[], float] | None = None) -> None:
        self.pids = pids
        self.seconds = seconds
        self.tree = tree
        self.paused = paused or (lambda: 0.0)  # seconds the processes were stopped (not theirs: left out)
        self.start = time.monotonic()
        self.base = {pid: _sched(pid) for pid in pids}
        self.cpu_base = {pid: _cpu_seconds(pid, tree) for pid in pids}
        self.waited = 0.0  # monotone: a thread that ended keeps what it waited
        self.ran: dict[tuple[int, int], int] = {}  # (pid, tid) -> its run time at the last look
        self.idle: list[tuple[int, int]] = []  # threads that had not run since the look before
        self.reported = self.start

    def times(self) -> JobTimes:
        """Read /proc now (a few small files): the times so far."""
        wall = max(0.0, time.monotonic() - self.start - self.paused())
        cpu = 0.0
        idle = []
        for pid in self.pids:
            base = self.base[pid]
            for tid, (ran, waited) in _sched(pid).items():
                self.waited = max(self.waited, (waited - base.get(tid, (0, 0))[1]) / 1e9)
                if self.ran.get((pid, tid)) == ran:
                    idle.append((pid, tid))
                self.ran[(pid, tid)] = ran
            cpu = max(cpu, _cpu_seconds(pid, self.tree) - self.cpu_base[pid])
        self.idle = idle
        own = max(wall - min(self.waited, wall), min(wall, cpu / _CPUS))
        return JobTimes(wall, own, wall - own, self.seconds)

    def expired(self) -> JobTimes | None:
        """The times, once the deadline has passed (own time or the backstop); else None. /proc is
        read only once the wall-clock time has reached the deadline (own time never exceeds it). Own
        time is taken to have passed it only when no thread is waiting to run at the look and had
        not run since the one before (its wait, not counted yet, would be over-counted as its own)."""
        if time.monotonic() - self.start - self.paused() < self.seconds:
            return None
        looked = bool(self.ran)
        t = self.times()
        if t.wall >= BACKSTOP * self.seconds:
            return t
        if t.own < self.seconds or not looked or any(_runnable(pid, tid) for pid, tid in self.idle):
            return None
        return t

    def due(self) -> bool:
        """Whether a `JobTimes` report is due (every `_TIMES_EVERY` s)."""
        now = time.monotonic()
        if now - self.reported < _TIMES_EVERY:
            return False
        self.reported = now
        return True


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _death(status: int) -> str | None:
    """Why a job's child ended, from its wait status; None when it ended as a job ends (exit 0)."""
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return None
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit code {code}"


def _end_group(pgid: int, keep: int = -1) -> None:
    """Kill what is left of a job's process group and reap it, then every other child of the template but
    `keep` (the next job's child, waiting in a group of its own): processes that left the group (setsid, a
    daemon's double fork) are the template's once their parent is gone (it is their subreaper), and are killed
    and reaped too."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    while True:
        try:
            os.waitpid(-pgid, 0)
        except ChildProcessError:
            break
    for _ in range(1000):  # each round: the strays now; their children are reparented here as they die
        strays = set(_children_of("self")) - {keep}
        if not strays:
            break
        _sigkill(strays)
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


SPILL_FROM = 1 << 20  # a message of this many bytes or more goes by file (module doc, "A big message goes by file")
_SPILLED = re.compile(r"[0-9]+-[0-9]+")  # the names a job gives its files: its pid, a count


def _spill_root() -> str | None:
    """Where the templates' folders go: /dev/shm (memory) when there is one to write to, else the temp folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None


def _sender(answers: Connection, spill: str | None) -> Callable[[Any], None]:
    """How a job's child sends a message to its template: pickled as `Connection.send` does, and from `SPILL_FROM`
    bytes written to a file in `spill`, its name sent instead (the pipe carries it when the file cannot be written).
    A message for a file is pickled straight into it (`_Spill`), not made whole in memory first: a 10^6-tile-op
    kernel's record is ~0.5 GB pickled, and the bytes and their copy were more than its job had left under its cap
    (glm's fused attention: its interim answer ran it out of memory)."""
    count = itertools.count(1)

    def send(message: Any) -> None:
        if spill is not None:
            name = f"{os.getpid()}-{next(count)}"
            out = _Spill(os.path.join(spill, name))
            try:
                ForkingPickler(out).dump(message)
                spilled = out.close()
            except OSError:  # the file is taken, or cannot be written whole: the pipes carry the message
                out.discard()
            except BaseException:
                out.discard()
                raise
            else:
                answers.send_bytes(bytes(ForkingPickler.dumps(("spilled", name))) if spilled else bytes(out.head))
                return
        answers.send_bytes(bytes(ForkingPickler.dumps(message)))

    return send


class _Spill:
    """Where a message is pickled to (`_sender`): memory up to `SPILL_FROM` bytes, then a new file at `path` (never
    one that is there already) with all of it; the pickler writes a big bytes object (a record's columns) straight
    through, uncopied. A file that cannot be written whole (a full /dev/shm: a container's is 64 MB) is deleted
    (`discard`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.head = bytearray()  # what was written while it was short
        self.file: Any = None

    def write(self, data: Any) -> int:
        n = memoryview(data).nbytes
        if self.file is None and len(self.head) + n < SPILL_FROM:
            self.head += data
            return n
        if self.file is None:
            self.file = open(self.path, "xb")
            self.file.write(self.head)
            self.head = bytearray()
        self.file.write(data)
        return n

    def close(self) -> bool:
        """Whether the message went to the file (else it is `head`)."""
        if self.file is None:
            return False
        self.file.close()
        return True

    def discard(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.close()
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            self.file = None


def _unspill(spill: str, name: Any) -> tuple[str, Any]:
    """The message a job wrote to `name` in its template's folder, the file deleted (read with the collector paused,
    as the pipe's messages: `_exchange`). A name no job makes, or a file not there, is a crashed job."""
    if not isinstance(name, str) or not _SPILLED.fullmatch(name):
        raise JobFailed("crashed", f"the job sent a message the worker does not read ({name!r:.60}): its answer "
                                   f"is lost")
    path = os.path.join(spill, name)
    try:
        try:
            with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as f:
                data = f.read()
        finally:
            os.unlink(path)
        kind, payload = pickle.loads(data)
    except (OSError, pickle.UnpicklingError, ValueError, TypeError, EOFError) as e:
        raise JobFailed("crashed", f"the job's message in {name} could not be read ({type(e).__name__}): its answer "
                                   f"is lost") from None
    return str(kind), payload


def _clear(spill: str) -> None:
    """Delete what a job left in its template's folder (files it wrote and the pool did not read)."""
    try:
        names = os.listdir(spill)
    except OSError:
        return
    for name in names:
        try:
            os.unlink(os.path.join(spill, name))
        except OSError:
            pass


def _ran_out(memory_limit: int, what: str = "the kernel") -> str:
    """What a job stopped by its memory cap says: the cap, and the settings that raise it (a kernel of 10^6 tile ops
    needs ~5 GB: glm's fused attention)."""
    if memory_limit <= 0:
        return f"{what} ran out of memory"
    return (f"{what} ran out of its memory limit ({memory_limit >> 20:,} MB above the worker's size at start; "
            f"a bigger one opens it: pypto.memoryLimitMb in the editor, --memory-limit-mb for serve and mcp)")


def _run_job(jobs_in: Connection, answers: Connection, memory_limit: int, spill: str | None = None) -> None:
    """In a job's child, forked before its job arrives: lead a new process group, cap memory, run
    the warm-up kernel (the copy-on-write faults a compile takes are paid here, while the child
    waits, not by the job), receive the job from `jobs_in`, run it, send its messages to the
    template (`answers`), `os._exit`."""
    me = os.getpid()
    code = 0
    try:
        os.setpgid(0, 0)
        if memory_limit > 0:
            limit = _vm_bytes() + memory_limit
            try:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            except (ValueError, OSError):
                pass
        import server.analyze as jobs

        try:
            jobs.warm_up()
        except Exception:  # noqa: BLE001 - a cold job is slower, not wrong
            pass
        try:
            fn_name, args, nice = jobs_in.recv()
        except (EOFError, OSError):  # the template ended before giving this child a job
            os._exit(0)
        if nice:  # background work: the machine's cores go to the jobs a person waits for first
            try:
                os.nice(nice)
            except OSError:
                pass
        send = _sender(answers, spill)
        jobs.progress = lambda data: send(("progress", data))  # a long job's interim results

        def to_background() -> None:  # what is left of the job no person waits for: the pool may stop it
            nonlocal nice
            if nice < BACKGROUND_NICE:
                try:
                    os.nice(BACKGROUND_NICE - nice)
                except OSError:
                    pass
                nice = BACKGROUND_NICE
                send(("background", None))

        jobs.to_background = to_background
        try:
            answer: tuple[str, Any] = ("ok", getattr(jobs, fn_name)(*args))
        except MemoryError:
            answer = ("memory", _ran_out(memory_limit))
        except BaseException as e:  # noqa: BLE001 - report everything
            answer = ("error", "".join(traceback.format_exception_only(type(e), e)).strip()
                      + "\n" + traceback.format_exc(limit=-8))
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        if os.getpid() == me:  # not a process the user's code forked, returning through here
            try:
                send(answer)
            except MemoryError:
                answers.send(("memory", _ran_out(memory_limit, "the kernel's result")))
            except Exception as e:  # noqa: BLE001 - an answer that cannot be pickled
                answers.send(("error", f"the job's answer could not be sent: {type(e).__name__}: {e}"))
    except BaseException:  # noqa: BLE001 - even the reporting failed: the template reports the exit code
        code = 70
    finally:
        os._exit(code)


@dataclass
class _Child:
    """A job's process, forked ahead of its job: `jobs` sends it the job, `answers` brings its messages."""

    pid: int
    jobs: Connection
    answers: Connection


def _fork_child(conn: Connection, memory_limit: int, spill: str | None, running: tuple[int, ...] = ()) -> _Child:
    """Fork the next job's child from the template; it warms up and waits for its job. `running`: the template's
    descriptors of the job running meanwhile (its answers' pipe, its pidfd), closed in the child."""
    job_r, job_w = os.pipe()
    answer_r, answer_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(job_w)
        os.close(answer_r)
        for fd in running:
            os.close(fd)
        conn.close()  # the child's copy: only the template writes to the pool
        _run_job(connection.Connection(job_r, writable=False), connection.Connection(answer_w, readable=False),
                 memory_limit, spill)
    os.close(job_r)
    os.close(answer_w)
    try:
        os.setpgid(pid, pid)  # as the child does: whichever runs first, the group exists
    except OSError:
        pass
    return _Child(pid, connection.Connection(job_w, readable=False), connection.Connection(answer_r, writable=False))


def _serve(conn: Connection, output: Connection, memory_limit: int, spill: str | None = None) -> None:
    """A template's loop (`_loop`); its folder for big messages goes with it, also when the server died without
    closing the pool (a job's child never returns through here: it ends with `os._exit`)."""
    try:
        _loop(conn, output, memory_limit, spill)
    finally:
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)


def _loop(conn: Connection, output: Connection, memory_limit: int, spill: str | None) -> None:
    """Receive (fn name, args), fork a child that runs the job (`_run_job`), relay its messages, reap it and its
    process group, send ("ended", …). The template is the connection's only writer: a child killed in the middle
    of a message costs that message only."""
    for fd in (1, 2):  # everything written to fd 1 and 2 from here on (jobs and their children) is the pool's
        os.dup2(output.fileno(), fd)
    output.close()
    null = os.open(os.devnull, os.O_RDONLY)  # and nothing to read on fd 0
    os.dup2(null, 0)
    os.close(null)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True)
    os.setpgid(0, 0)  # out of the server's group: a Ctrl-C in its terminal is the server's to handle
    try:  # orphans of a job (its children, once it ended) are reparented here, to be reaped
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    import server.analyze

    server.analyze.warm_up()  # it waits for the sim board's compiled loop: no loading thread is cut by a fork
    conn.send(("warm", None))
    gc.collect()
    gc.freeze()  # the template's objects: a job's collector never walks (and so never copies) their pages
    from pypto.compiler.pipeline import keep_frozen

    keep_frozen()  # for good: nothing counts them again (`gc.get_freeze_count` walks them all)
    ready = _fork_child(conn, memory_limit, spill)
    while True:
        _reap(ready.pid)
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job == _KILL:  # for a job that had ended by itself: its end was said as ever
            continue
        try:
            ready.jobs.send(job)
        except OSError:  # the waiting child died (it is reaped below, as any): one forked now takes the job
            ready.jobs.close()
            ready.answers.close()
            _end_group(ready.pid)
            ready = _fork_child(conn, memory_limit, spill)
            ready.jobs.send(job)
        child = ready
        child.jobs.close()
        exited = os.pidfd_open(child.pid) if hasattr(os, "pidfd_open") else None  # Linux; elsewhere: the pipe's end
        try:
            conn.send(("started", child.pid))
            # the next job's child, forked as this one starts: it warms up beside it (module doc)
            ready = _fork_child(conn, memory_limit, spill, (child.answers.fileno(), *(() if exited is None else
                                                                                     (exited,))))
            if _relay(child.answers, exited, conn):  # the pool killed the job: its end is said now (module doc)
                _kill_tree(child.pid, ready.pid)
                conn.send(("ended", "killed by SIGKILL"))
                continue
            _, status = os.waitpid(child.pid, 0)
            _end_group(child.pid, ready.pid)  # every process that could still hold the pipe: what is left is read now
            _relay(child.answers, None, conn)
            conn.send(("ended", _death(status)))
        except (_PoolGone, OSError):  # the server died: its job is nobody's (running or stopped, it would live on)
            _end_group(child.pid)
            return
        finally:
            if exited is not None:
                os.close(exited)
            child.answers.close()


class _PoolGone(Exception):
    """The pool's end of a template's connection is closed: the server died."""


def _relay(answers: Connection, exited: int | None, conn: Connection) -> bool:
    """Pass the child's messages on to the pool until its pipe ends (or, with `exited`, its
    process does); True when the pool said it killed the job (`_KILL`: the only thing it sends while a job
    runs), which ends the relay at once. A message the child was sending when killed is dropped. The connection
    at its end is the pool's (`_PoolGone`, as a send that fails)."""
    while True:
        ready = connection.wait([answers, conn, *([exited] if exited is not None else [])])
        if conn in ready:
            try:
                said = conn.recv()
            except (EOFError, OSError):
                raise _PoolGone from None
            if said == _KILL:
                return True
            raise _PoolGone  # (nothing else is sent while a job runs)
        if exited is not None and exited in ready and not answers.poll():
            return False
        try:
            message = answers.recv_bytes()
        except (EOFError, OSError):
            return False
        conn.send_bytes(message)


_KILL = ("kill", None)  # the pool to a template: it killed the running job's group (`WorkerPool._stop`)


def _kill_tree(pgid: int, keep: int) -> None:
    """Kill a job's process group, every process below its child (one that left the group: a new session) and every
    other child of the template but `keep` (the next job's child; the others: a daemon's orphan, a killed job's
    child still dying), without waiting for them to die: a killed job's end is said before its processes have
    freed their memory (module doc). Reaped later (`_reap`, `_end_group`)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    killed: set[int] = set()
    for _ in range(1000):  # each round: what the last one had not reached (a process forking as it was killed)
        todo, found = [pgid, *(set(_children_of("self")) - {keep})], set()
        while todo and len(found) < 4096:
            p = todo.pop()
            if p not in found:
                found.add(p)
                todo.extend(_children_of(p))
        fresh = found - killed
        if not fresh:
            break
        _sigkill(fresh)
        killed |= fresh


def _sigkill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _reap(keep: int) -> None:
    """Reap the template's children that have died (killed jobs' processes, `_kill_tree`), not waiting for the others
    and leaving `keep` (the next job's child) to `_loop`."""
    for pid in set(_children_of("self")) - {keep}:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _timeout_message(t: JobTimes, note: str | None) -> str:
    """Why a job was stopped: its time limit (the CPU it got, or what it waited for besides a CPU),
    or the wall-clock backstop of a machine too busy to give it that."""
    note = note or "the kernel was stopped; does it loop forever?"
    if t.own >= t.limit:
        busy = (f", in {t.wall:.0f} s of wall-clock time: {t.cpu_wait:.0f} s more waiting for a CPU on a busy machine"
                if t.cpu_wait >= 1 else "")  # own time reached the limit: the rest of the wall-clock time was waiting
        return f"no result after {t.limit:g} s (the time limit){busy}: {note}"
    return (f"no result after {t.wall:.0f} s of wall-clock time on a machine too busy to give the kernel its "
            f"{t.limit:g} s (the time limit): it ran {t.own:.1f} s and waited {t.cpu_wait:.0f} s for a CPU; "
            f"the kernel was stopped")


class _Output:
    """What a job's processes write to fd 1 and 2: the first `OUTPUT_LIMIT` bytes kept, the rest counted."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.dropped = 0
        self.eof = False

    def read(self, pipe: Connection) -> None:
        """Read all the pipe holds now (it is non-blocking)."""
        while not self.eof:
            try:
                chunk = os.read(pipe.fileno(), 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                return
            room = max(0, OUTPUT_LIMIT - len(self.data))
            self.data += chunk[:room]
            self.dropped += len(chunk) - min(room, len(chunk))

    def text(self) -> str:
        out = self.data.decode("utf-8", "replace")
        if self.dropped:
            out += f"\n[{self.dropped} more bytes of output were not kept]\n"
        return out


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


class CollectorPaused:
    """A context in which Python's cyclic garbage collector is paused, counted across threads: the pool's threads
    unpickle the workers' answers in it. An answer is a tree of 10^5-10^6 dicts and lists (no cycles); unpickled with
    the collector on, their number set off its full passes over the server's whole heap — the answers it holds —
    again and again (a gated delta rule record document: 0.53 s with the collector, 0.05 s without, in a process
    of 1.3 M objects). Answers of two workers may arrive at once: the collector runs again when the last one is in,
    if it ran before the first; what was made then joins the oldest generation (`pypto.compiler.pipeline.gc_paused`)
    rather than making the youngest's next pass walk all of it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._holders == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                if not gc.get_freeze_count():  # (nothing is frozen in a server: unfreezing would release it)
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


collector_paused = CollectorPaused()


class Cancel(threading.Event):
    """A job's cancellation that the pool's wait for the job's messages wakes on at once: its pipe is readable once
    it is set (a wait that only polled it every 50 ms kept an edit waiting up to that long for the worker of the
    job it replaced). `close()` once the job is over."""

    def __init__(self) -> None:
        super().__init__()
        self._r, self._w = os.pipe()

    def set(self) -> None:
        if not self.is_set():
            super().set()
            os.write(self._w, b"!")

    def fileno(self) -> int:
        return self._r

    def close(self) -> None:
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass


@dataclass(eq=False)  # (kept in a set by identity)
class _Worker:
    process: Any
    conn: Connection
    output: Connection  # the read end of the template's fd 1 and 2 (non-blocking)
    spill: str | None = None  # the template's folder for its jobs' big messages (module doc), while it lives
    job: int | None = None  # the running job's process group
    busy: bool = False  # a job was sent and the template has not yet said it ended
    warm: bool = False  # the template said its warm-up is done
    background: bool = False  # its running job is work no person waits for (stopped while one runs)
    waiting: bool = False  # its running job (a person's) used almost no CPU in its last second (module doc)
    stopped_at: float | None = None  # when its running job was stopped (SIGSTOP), while it is
    stopped_for: float = 0.0  # how long its running job was stopped before

    def paused(self) -> float:
        """Seconds its running job has been stopped so far."""
        at = self.stopped_at
        return self.stopped_for + (time.monotonic() - at if at is not None else 0.0)


# What a job may allocate above its size at start, by default (the language server's `memoryLimitMb`, serve's
# --memory-limit-mb). Production kernels of 1.5-2 M tile ops need ~2.5 GiB to compile, profile and report (qat's
# per-tensor backward, 1.58 M: 2.5 GiB above the start); 2 workers at 4 GiB stay within 8 GiB.
MEMORY_LIMIT_MB = 4096


class WorkerPool:
    """`size` template processes; `run(fn, *args)` runs `server.analyze.<fn>(*args)` in a child of one."""

    def __init__(self, size: int = 1, time_limit: float = 60.0, memory_limit_mb: int = MEMORY_LIMIT_MB,
                 spill: bool = True) -> None:
        """`spill`: big messages go by file (module doc); False: every message crosses the pipes (as before
        2026-12-01: benchmarks/answer_bench.py compares the two)."""
        self.size = max(1, size)
        self.spill = spill
        self.time_limit = time_limit
        self.memory_limit = memory_limit_mb * 2**20
        self._ctx = mp.get_context("forkserver")
        self._ctx.set_forkserver_preload([m for m in _PRELOAD if importlib.util.find_spec(m.split(".")[0])])
        _start_forkserver(self.size)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._free = threading.Semaphore(self.size)
        self._closed = False
        self.replaced = 0  # templates killed or lost and started again
        self._running: set[_Worker] = set()  # workers whose job runs (from "started" to its answer)
        self._running_lock = threading.Lock()
        self.stops = 0  # how many times a background job was stopped for one a person waits for
        self.failures: dict[str, int] = {}  # JobFailed kind -> how many

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        output, output_w = self._ctx.Pipe(duplex=False)
        spill: str | None = None
        if self.spill:
            try:
                spill = tempfile.mkdtemp(prefix="pypto-answers-", dir=_spill_root())
            except OSError:  # no folder to write to: every message crosses the pipes
                pass
        p = self._ctx.Process(target=_serve, args=(child, output_w, self.memory_limit, spill), daemon=True,
                              name="pypto-worker")
        p.start()
        child.close()
        output_w.close()
        os.set_blocking(output.fileno(), False)
        return _Worker(p, parent, output, spill)

    def _take(self) -> _Worker:
        self._free.acquire()
        with self._lock:
            if self._idle:
                return self._idle.pop(0)  # the longest idle: its next job's child has had longest to warm up
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
                w.output.close()
        self._free.release()

    def _kill(self, w: _Worker) -> None:
        """Kill the running job's process group, then the template."""
        self._kill_job(w)
        try:
            w.process.kill()
            w.process.join(5)
        except (OSError, ValueError, AttributeError):
            pass
        w.conn.close()
        if w.spill is not None:
            shutil.rmtree(w.spill, ignore_errors=True)

    @staticmethod
    def _kill_job(w: _Worker) -> None:
        if w.job is not None:
            try:
                os.killpg(w.job, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _yield(self) -> None:
        """Stop the running background jobs while a job a person waits for runs, continue them when none does
        (under `_running_lock`)."""
        person = any(not w.background and not w.waiting for w in self._running)
        for w in self._running:
            if not w.background or (w.stopped_at is not None) == person or w.job is None:
                continue
            try:
                os.killpg(w.job, signal.SIGSTOP if person else signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                continue
            if person:
                w.stopped_at = time.monotonic()
                self.stops += 1
            else:
                self._continued(w)

    @staticmethod
    def _continued(w: _Worker) -> None:
        if w.stopped_at is not None:
            w.stopped_for += time.monotonic() - w.stopped_at
            w.stopped_at = None

    def _job_runs(self, w: _Worker, background: bool) -> None:
        """The worker's job started, or went to the background."""
        with self._running_lock:
            w.background = background
            self._running.add(w)
            self._yield()

    def _job_waits(self, w: _Worker, waiting: bool) -> None:
        """The worker's job (a person's) was seen waiting, or running again (module doc)."""
        with self._running_lock:
            if w.waiting != waiting:
                w.waiting = waiting
                self._yield()

    def _job_ended(self, w: _Worker) -> None:
        """The worker's job answered or failed: it is continued if stopped (to end, or be killed), and what it
        held back goes on."""
        with self._running_lock:
            if w not in self._running:
                return
            self._running.discard(w)
            if w.stopped_at is not None and w.job is not None:
                try:
                    os.killpg(w.job, signal.SIGCONT)
                except (ProcessLookupError, PermissionError):
                    pass
            self._continued(w)
            w.background, w.stopped_for, w.waiting = False, 0.0, False
            self._yield()

    @staticmethod
    def _ended(w: _Worker) -> None:
        """The template said the worker's job ended: what it wrote to the folder and nobody read goes too."""
        w.busy, w.job = False, None
        if w.spill is not None:
            _clear(w.spill)

    def _finish(self, w: _Worker) -> bool:
        """Wait for the end of the worker's last job, which answered before its processes were killed
        and reaped (what it printed after its answer is dropped); whether the template serves on."""
        if not w.busy:
            return True
        out = _Output()
        clock = self._end_clock(w)
        try:
            while w.busy and clock.expired() is None:
                ready = connection.wait([w.conn] if out.eof else [w.conn, w.output], 0.05)
                if w.output in ready:
                    out.read(w.output)
                    out.data.clear()
                if w.conn in ready and w.conn.recv()[0] == "ended":
                    self._ended(w)
        except Exception:  # noqa: BLE001 - the template died or garbled: it is replaced
            return False
        return not w.busy or self._stop(w, out)

    def settle(self) -> None:
        """Wait until no job runs and every job that answered has ended: its process group killed
        and reaped. (A job's answer is returned as soon as it arrives; the rest of its end is
        collected before its worker takes another job, or here.)"""
        for _ in range(self.size):
            self._free.acquire()
        try:
            with self._lock:
                idle = list(self._idle)
            for w in idle:
                if not self._finish(w):
                    with self._lock:
                        self._idle.remove(w)
                    self._kill(w)
                    w.output.close()
                    self.replaced += 1
        finally:
            for _ in range(self.size):
                self._free.release()

    @staticmethod
    def _end_clock(w: _Worker) -> _Clock:
        """The deadline of a job's end: the template's own time, and the dying job's (its exit, freeing its
        memory, waits for a CPU too)."""
        return _Clock([w.process.pid, *([w.job] if w.job is not None else [])], _ENDED_WITHIN)

    def _stop(self, w: _Worker, out: _Output) -> bool:
        """Kill the job's process group and wait for the template to report its end; whether the
        template is fit for the next job."""
        if not w.busy:
            return True
        self._kill_job(w)
        if w.job is not None:  # the template says its end at once (`_relay`), not once its memory is freed
            try:
                w.conn.send(_KILL)
            except (OSError, ValueError):
                return False
        clock = self._end_clock(w)
        try:
            while w.job is not None and clock.expired() is None:
                ready = connection.wait([w.conn] if out.eof else [w.conn, w.output], 0.05)
                if w.output in ready:
                    out.read(w.output)
                if w.conn in ready and w.conn.recv()[0] == "ended":
                    self._ended(w)
        except Exception:  # noqa: BLE001 - the template died or garbled: it is replaced
            return False
        return not w.busy

    def _exchange(self, w: _Worker, fn: str, args: tuple[Any, ...], limit: float, cancel: threading.Event | None,
                  timeout_note: str | None, on_progress: Callable[[Any], None] | None,
                  on_times: Callable[[JobTimes], None] | None, out: _Output, nice: int = 0) -> tuple[str, Any]:
        """Send the job, read its output and messages until the template says its child ended;
        the child's answer (kind, payload), or JobFailed. Three deadlines, each in own time
        (`_Clock`): a new template's warm-up, the template's start of the job (from "warm" or the
        send), the job's time limit (from "started")."""
        try:
            w.conn.send((fn, args, nice))
        except (OSError, ValueError) as e:
            raise JobFailed("crashed", f"the worker could not take the job ({e})") from None
        w.busy = True
        try:  # until its answer or failure: then what it held back goes on (`_job_ended`)
            template = w.process.pid
            clock = _Clock([template], _STARTED_WITHIN if w.warm else _WARM_WITHIN)
            used = (0.0, 0.0)  # (when, the job's CPU seconds then), once it started: `_job_waits`
            while True:
                waits: list[Any] = [w.conn] if out.eof else [w.conn, w.output]
                if isinstance(cancel, Cancel) and w.job is not None:  # (once it runs: before, its readable pipe spins)
                    waits.append(cancel)
                ready = connection.wait(waits, 0.05)
                if w.output in ready:
                    out.read(w.output)
                if w.conn in ready:
                    try:
                        with collector_paused:
                            kind, payload = w.conn.recv()
                    except (EOFError, OSError):
                        raise JobFailed("crashed", "the worker process died while running the kernel: it was killed "
                                                   "or crashed") from None
                    if kind == "spilled" and w.spill is not None:  # a big message, by file (module doc)
                        with collector_paused:
                            kind, payload = _unspill(w.spill, payload)
                    if kind == "ended":
                        self._ended(w)
                        raise JobFailed("crashed", f"the job's process died ({payload or 'without an answer'}) "
                                                   f"while running the kernel: it called os._exit, was killed "
                                                   f"or crashed")
                    if kind == "warm":  # the start's deadline counts from here
                        w.warm, clock = True, _Clock([template], _STARTED_WITHIN)
                    elif kind == "started":
                        w.job = int(payload)
                        clock = _Clock([w.job], limit, tree=True, paused=w.paused)
                        self._job_runs(w, nice > 0)
                        used = (time.monotonic(), _cpu_seconds(w.job, True))  # (when, its CPU then): `_job_waits`
                    elif kind == "background":
                        self._job_runs(w, True)
                    elif kind == "progress":
                        if on_progress is not None:
                            try:
                                on_progress(payload)
                            except Exception:  # noqa: BLE001 - a listener's bug must not fail the job
                                traceback.print_exc()
                    else:  # the answer: returned now; the job's end is collected before the worker's next job
                        return kind, payload
                    continue
                if w.job is not None and not w.background and time.monotonic() - used[0] >= _TIMES_EVERY:
                    now = (time.monotonic(), _cpu_seconds(w.job, True))
                    self._job_waits(w, now[1] - used[1] < _WAITING_SHARE * (now[0] - used[0]))
                    used = now
                if w.job is not None and on_times is not None and clock.due():
                    try:
                        on_times(clock.times())
                    except Exception:  # noqa: BLE001 - a listener's bug must not fail the job
                        traceback.print_exc()
                if w.job is not None and cancel is not None and cancel.is_set():
                    raise JobFailed("cancelled", "a newer request replaced this one")
                t = clock.expired()
                if t is not None and w.job is None:
                    took = f"{t.own:.0f} s" + (f" ({t.wall:.0f} s of wall-clock time on a busy machine)"
                                               if t.wall - t.own >= 1 else "")
                    raise JobFailed("crashed", f"the worker did not start the job within {took}" if w.warm else
                                    f"the worker was still warming up after {took}")
                if t is not None:
                    raise JobFailed("timeout", _timeout_message(t, timeout_note))
                if not ready and not w.process.is_alive():
                    raise JobFailed("crashed", "the worker process died while running the kernel")
        finally:
            self._job_ended(w)

    def run_blocking(self, fn: str, *args: Any, timeout: float | None = None,
                     cancel: threading.Event | None = None, timeout_note: str | None = None,
                     on_progress: Callable[[Any], None] | None = None,
                     on_times: Callable[[JobTimes], None] | None = None, nice: int = 0) -> Any:
        """Run a job and wait for it (from a thread); raises JobFailed. `nice`: the job's process runs at that
        niceness (`os.nice`: background work yields the cores to the jobs a person waits for). `timeout` (default: the
        pool's `time_limit`) is in the job's own time (`_Clock`: a job the machine keeps waiting for
        a CPU gets longer, up to `wall_backstop(timeout)`). `timeout_note` says what a timeout means
        for this job (default: the kernel may loop forever). Interim results the job sends
        (`server.analyze.progress`) go to `on_progress`, and its `JobTimes` every second while it
        runs to `on_times`, in this thread. A dict answer gets the job's `output` (what it wrote to
        fd 1 and 2) under "output"."""
        if self._closed:
            raise JobFailed("error", "the worker pool is closed")
        threads.ready()  # (`server.threads`: the answer is unpickled here)
        limit = self.time_limit if timeout is None else timeout
        w = self._take()
        keep: _Worker | None = None
        out = _Output()
        try:
            if not self._finish(w):  # the worker's last job has ended, or the template is replaced
                self._kill(w)
                w.output.close()
                self.replaced += 1
                w = self._start()
            _Output().read(w.output)  # written by what escaped an earlier job's group: not this job's
            try:
                kind, payload = self._exchange(w, fn, args, limit, cancel, timeout_note, on_progress, on_times, out,
                                               nice)
            except JobFailed as e:
                if self._stop(w, out):  # the job's group is gone: nothing it started outlives it
                    keep = w
                out.read(w.output)
                e.output = out.text()
                raise
            keep = w
            out.read(w.output)
            if kind == "ok":
                if isinstance(payload, dict):
                    payload["output"] = out.text()
                return payload
            raise JobFailed(kind, payload, out.text())
        except JobFailed as e:
            self.failures[e.kind] = self.failures.get(e.kind, 0) + 1
            raise
        finally:
            if keep is None:
                self._kill(w)
                w.output.close()
                self.replaced += 1
            self._give(keep)

    async def run(self, fn: str, *args: Any, timeout: float | None = None, timeout_note: str | None = None,
                  on_progress: Callable[[Any], None] | None = None,
                  on_times: Callable[[JobTimes], None] | None = None, nice: int = 0,
                  prepare: Callable[[Any], Any] | None = None) -> Any:
        """Run a job without blocking the event loop; cancelling the awaiting task kills the job (the
        cancellation completes when the job's process group is gone).
        `on_progress` gets the job's interim results, `on_times` its times, on the event loop; `prepare` is
        applied to each interim result and to the answer first, in the pool's thread (what a caller would
        otherwise do on the event loop)."""
        cancel = Cancel()
        loop = asyncio.get_running_loop()
        threads.install(loop)  # the answer is unpickled and prepared in a thread: numpy and pypto imported first
        ready: Callable[[Any], Any] = prepare if prepare is not None else (lambda data: data)
        relay = None if on_progress is None else (lambda data: loop.call_soon_threadsafe(on_progress, ready(data)))
        times = None if on_times is None else (lambda t: loop.call_soon_threadsafe(on_times, t))
        fut = loop.run_in_executor(None, lambda: ready(self.run_blocking(fn, *args, timeout=timeout, cancel=cancel,
                                                                         timeout_note=timeout_note, on_progress=relay,
                                                                         on_times=times, nice=nice)))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            cancel.set()
            await asyncio.wait({fut})  # the cancellation completes once the job's processes are gone
            if not fut.cancelled():
                fut.exception()  # retrieved: JobFailed("cancelled") is what was asked for
            raise
        finally:
            if fut.done():
                cancel.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for w in idle:
            self._kill(w)
            w.output.close()
