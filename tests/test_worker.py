"""The worker pool: a kernel that raises, hangs, exits or eats memory costs one result, never the pool; its answers
are read with the cyclic collector paused."""

from __future__ import annotations

import asyncio
import gc
import inspect
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support import HOSTILE_KERNELS, USES_HELPER

from server import worker
from server.analyze import record_lists
from server.worker import JobFailed, JobTimes, WorkerPool, collector_paused

SRC = HOSTILE_KERNELS
PATH = "/virtual/kernels.py"


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(size=1, time_limit=5, memory_limit_mb=400)
    yield p
    p.close()


def test_kernels_are_listed_with_their_lines(pool):
    listed = pool.run_blocking("list_kernels", PATH, SRC)
    assert listed["error"] is None
    assert [(k["name"], k["line"]) for k in listed["kernels"]] == [
        ("good", 6), ("hang", 12), ("die", 18), ("hog", 23), ("bad_tile", 30), ("no_inputs", 36)]


def test_each_failure_kind_is_one_result_and_the_pool_keeps_working(pool):
    good = pool.run_blocking("analyze_kernel", PATH, SRC, "good", {})
    assert good["error"] is None and good["summary"]["tasks"] > 0 and good["record"]["run"]["board"] == "sim"
    # the record crosses the pipe as its document and its columns' .npz bytes, not as lists
    assert good["record"]["version"] == 3 and isinstance(good["record_columns"], bytes)
    lists = record_lists(good["record"], good["record_columns"])
    assert "$columns" not in str(lists) and len(lists["tiles"]["ops"]["id"]) == len(lists["memory"]) > 0
    for name, kind in (("hang", "timeout"), ("die", "crashed"), ("hog", "memory")):
        with pytest.raises(JobFailed) as e:
            pool.run_blocking("analyze_kernel", PATH, SRC, name, {}, timeout=2 if name == "hang" else None)
        assert e.value.kind == kind, e.value
        if kind == "memory":  # the cap, and the settings that raise it
            assert "memory limit (400 MB above the worker's size" in e.value.message, e.value
            assert "pypto.memoryLimitMb" in e.value.message and "--memory-limit-mb" in e.value.message
        again = pool.run_blocking("analyze_kernel", PATH, SRC, "good", {})  # the pool answers on
        assert again["summary"] == good["summary"]
    # each job ran in a child of the worker's template: the child died, was killed or hit the limit, the
    # template reported it and serves on
    assert pool.replaced == 0


def test_user_mistakes_are_results_at_their_lines(pool):
    bad = pool.run_blocking("analyze_kernel", PATH, SRC, "bad_tile", {})
    # at the set_vec_tile_shapes call (32), the exp it fails for (33) related
    assert bad["error"]["line"] == 32 and "needs at least 2 entries" in bad["error"]["message"]
    assert [r["line"] for r in bad["error"]["related"]] == [33]
    missing = pool.run_blocking("analyze_kernel", PATH, SRC, "no_inputs", {})
    # at the def line (37; the decorator is on 36): the worker reads the text it was given, not the disk
    assert missing["error"]["rule"] == "inputs.missing" and missing["error"]["line"] == 37
    broken = pool.run_blocking("list_kernels", PATH, "import pypto\nx = 1 +\n")
    assert broken["error"]["rule"] == "python.syntax" and broken["error"]["line"] == 2
    raising = pool.run_blocking("list_kernels", PATH, "import pypto\n\nraise ValueError('no')\n")
    assert raising["error"]["line"] == 3 and "ValueError" in raising["error"]["message"]


def test_cancelling_the_awaiting_task_stops_the_job():
    pool = WorkerPool(size=1, time_limit=5, memory_limit_mb=400)
    async def go() -> None:
        task = asyncio.ensure_future(pool.run("analyze_kernel", PATH, SRC, "hang", {}, timeout=30))
        await asyncio.sleep(0)  # let it start
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        good = await pool.run("analyze_kernel", PATH, SRC, "good", {}, timeout=30)
        assert good["error"] is None
        assert pool.failures.get("cancelled") == 1 and "timeout" not in pool.failures

    try:
        asyncio.run(go())
    finally:
        pool.close()


def test_the_wait_for_a_running_jobs_messages_wakes_on_its_cancellation(monkeypatch):
    """A cancellation is a readable pipe the pool's wait includes once the job runs: an edit does not wait for the
    next poll to get the worker of the job it replaced."""
    seen: list[bool] = []  # per wait of the pool's thread: whether the job's cancellation was among what it waits on
    wait = worker.connection.wait

    def recording(objects: Any, timeout: float | None = None) -> Any:
        seen.append(any(isinstance(o, worker.Cancel) for o in objects))
        return wait(objects, timeout)

    pool = WorkerPool(size=1, time_limit=5, memory_limit_mb=400)
    monkeypatch.setattr(worker.connection, "wait", recording)

    async def go() -> None:
        running = asyncio.get_running_loop().create_future()
        src = SRC.replace("    while True:\n", "    import server.analyze\n    server.analyze.progress(1)\n"
                          "    while True:\n", 1)
        task = asyncio.ensure_future(pool.run("analyze_kernel", PATH, src, "hang", {}, timeout=30,
                                              on_progress=lambda d: running.done() or running.set_result(d)))
        await asyncio.wait_for(running, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(go())
    finally:
        pool.close()
    assert any(seen) and pool.failures == {"cancelled": 1}
    c = worker.Cancel()
    assert wait([c], 0) == []
    c.set()
    c.set()  # once
    assert wait([c], 0) == [c] and os.read(c.fileno(), 8) == b"!"
    c.close()




def test_a_kernel_imports_its_sibling_module_and_sees_its_edits(pool, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, rows in ((one, 16), (two, 32)):
        folder.mkdir()
        (folder / "helpers.py").write_text(f"ROWS = {rows}\n")
        (folder / "k.py").write_text(USES_HELPER)
    path = str(one / "k.py")
    listed = pool.run_blocking("list_kernels", path, USES_HELPER)
    assert listed["error"] is None and [k["name"] for k in listed["kernels"]] == ["scaled"]
    first = pool.run_blocking("analyze_kernel", path, USES_HELPER, "scaled", {})
    assert first["error"] is None and first["summary"]["tasks"] == 64 // 16
    (one / "helpers.py").write_text("ROWS = 8\n")  # an edit of the helper: the next job sees it
    edited = pool.run_blocking("analyze_kernel", path, USES_HELPER, "scaled", {})
    assert edited["summary"]["tasks"] == 64 // 8
    other = pool.run_blocking("analyze_kernel", str(two / "k.py"), USES_HELPER, "scaled", {})  # its own helpers.py
    assert other["summary"]["tasks"] == 64 // 32
    again = pool.run_blocking("analyze_kernel", path, USES_HELPER, "scaled", {})
    assert again["summary"]["tasks"] == 64 // 8


def test_a_templates_warm_up_leaves_no_loading_thread_for_a_fork_to_cut():
    """A template forks its jobs' children right after `warm_up`: the sim board's compiled loop is
    loaded by then (a thread cut by the fork could hold a lock the child then waits on for ever)."""
    import subprocess
    import sys

    probe = ("import os, threading\n"
             "os.environ.pop('PYPTO_SIM_JIT', None)\n"
             "import server.analyze as a\n"
             "from pypto.boards import sim_kernel\n"
             "a.warm_up()\n"
             "print(sim_kernel.mode(), sim_kernel.ready(),"
             " [t.name for t in threading.enumerate() if t.name == 'pypto-sim-jit'])\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    mode, ready, threads = out.stdout.split(maxsplit=2)
    assert threads.strip() == "[]"
    assert mode == "off" or ready == "True"


# ---- deadlines on a busy machine: a job's time limit counts its own time, not what it waited for a CPU ----

def kernel(body: str, top: str = "") -> str:
    """A file with one 8x8 kernel `k` whose body starts with `body` (indented by 4), after `top`."""
    return ("import os, subprocess, sys, time\nimport pypto\n" + top + "\n\n@pypto.jit\n"
            "def k(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):\n"
            + body + "    out[:] = pypto.exp(x)\n")


# The kernel keeps itself waiting for a CPU, whatever the machine's load and speed: on one core, beside a
# busy process of normal priority, it lowers its own priority to the least (nice 19: about 1.5 % of the
# core) — then loops forever. The busy process is not the job's to count (its parent exits at once: the
# template adopts it) but is in the job's process group: it ends with the job.
SPIN = '''
SPIN = """import os, sys
if os.fork() == 0:
    os.sched_setaffinity(0, {int(sys.argv[1])})
    while True:
        pass
"""
'''
STARVED = kernel("""\
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)])  # not waited for: what a job waits for is its time
    os.nice(19)
    while True:
        pass
""", top=SPIN)
schedstat = pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="Linux's schedstat")


@schedstat
def test_a_job_kept_waiting_for_a_cpu_outlives_its_limit_until_the_wall_clock_backstop(pool, monkeypatch):
    monkeypatch.setattr(worker, "BACKSTOP", 2.0)  # a backstop of 2 x 2 s: the test's length
    times: list[JobTimes] = []
    with pytest.raises(JobFailed) as e:
        pool.run_blocking("analyze_kernel", PATH, STARVED, "k", {}, timeout=2, on_times=times.append)
    # past its limit of wall-clock time, it had not had its 2 s: it ran on (and was told about every second)
    assert any(t.wall > 2 and t.own < 2 and t.cpu_wait > 0 for t in times), times
    # then the backstop stopped it, saying why
    assert e.value.kind == "timeout" and "too busy" in e.value.message and "2 s (the time limit)" in e.value.message
    assert pool.run_blocking("analyze_kernel", PATH, SRC, "good", {})["error"] is None


def test_a_kernel_that_sleeps_or_blocks_spends_its_limit_waiting():
    """Sleeping is not waiting for a CPU: a kernel that sleeps for ever is stopped at its limit (the
    wall-clock backstop is for a machine too busy to run it). A new template's warm-up (a compile) is
    not the job's: a limit far shorter than it is the job's alone."""
    pool = WorkerPool(size=1, time_limit=0.05, memory_limit_mb=400)
    sleeps = kernel("    time.sleep(10**6)\n")
    try:
        with pytest.raises(JobFailed) as e:  # the job's own time ran out (or, on a busy machine, its backstop)
            pool.run_blocking("analyze_kernel", PATH, sleeps, "k", {})
        assert e.value.kind == "timeout", e.value  # not "crashed: the worker was still warming up"
        with pytest.raises(JobFailed) as e:
            pool.run_blocking("analyze_kernel", PATH, sleeps, "k", {}, timeout=2)
        assert e.value.kind == "timeout" and "no result after 2 s (the time limit)" in e.value.message, e.value
        assert pool.replaced == 0
    finally:
        pool.close()


def test_every_door_has_the_workers_memory_default() -> None:
    """The language server's setting, its VS Code manifest, serve's configuration and the pool agree."""
    import json
    from pathlib import Path

    from server.http import ServeConfig as Config
    from server.protocol import Settings
    from server.worker import MEMORY_LIMIT_MB

    manifest = json.loads((Path(__file__).resolve().parent.parent / "package.json").read_text())
    setting = manifest["contributes"]["configuration"]["properties"]["pypto.memoryLimitMb"]["default"]
    assert Settings().memory_limit_mb == Config(Path(".")).memory_limit_mb == setting == MEMORY_LIMIT_MB
    assert inspect.signature(WorkerPool).parameters["memory_limit_mb"].default == MEMORY_LIMIT_MB


def test_answers_are_unpickled_with_the_collector_paused_and_it_runs_again_after(pool, monkeypatch):
    from multiprocessing.connection import Connection

    seen: list[tuple[Any, bool]] = []  # (a message's kind, whether the collector ran while it was read)
    recv = Connection.recv

    def recording(self: Connection) -> Any:
        message = recv(self)
        seen.append((message[0] if isinstance(message, tuple) else None, gc.isenabled()))
        return message

    monkeypatch.setattr(Connection, "recv", recording)
    assert gc.isenabled()
    assert pool.run_blocking("analyze_kernel", PATH, SRC, "good", {})["error"] is None
    assert ("ok", False) in seen and ("ok", True) not in seen, f"the answer read with the collector paused: {seen}"
    assert gc.isenabled()


def test_the_collector_pause_is_counted_across_threads_and_keeps_a_pause_made_before():
    assert gc.isenabled()
    first, second = threading.Event(), threading.Event()
    states: list[bool] = []

    def hold(entered: threading.Event, leave: threading.Event) -> None:
        with collector_paused:
            entered.set()
            leave.wait(10)

    leave_a, leave_b = threading.Event(), threading.Event()
    a = threading.Thread(target=hold, args=(first, leave_a))
    b = threading.Thread(target=hold, args=(second, leave_b))
    a.start()
    first.wait(10)
    b.start()
    second.wait(10)
    leave_a.set()
    a.join(10)
    states.append(gc.isenabled())  # the first out, the second still in: still paused
    leave_b.set()
    b.join(10)
    states.append(gc.isenabled())
    assert states == [False, True]
    gc.disable()  # paused by someone else before: left paused
    try:
        with collector_paused:
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_background_job_runs_niced(pool):
    """`nice`: the job's process (what the user's module runs in) at that much more niceness than the template's,
    so that the jobs a person waits for get the cores first (`server.slots`)."""
    src = "import os\nprint('niceness', os.nice(0))\n"
    def niceness(nice: int) -> int:
        out = pool.run_blocking("list_kernels", PATH, src, nice=nice)["output"]
        return int(out.split("niceness")[1].split()[0])

    base = niceness(0)
    assert niceness(10) == min(19, base + 10) and niceness(0) == base  # each job's own child: none inherits it


# ---- background work yields: a job a person waits for stops the background jobs while it runs ----

HOLDS = kernel("""\
    import server.analyze
    server.analyze.progress(os.getpid())
    while not os.path.exists(MARK):  # until the test lets it end, running (a job that sleeps is waiting: below)
        pass
""", top="MARK = {mark!r}\n")
SPINS = kernel("""\
    import server.analyze
    if GOES_TO_THE_BACKGROUND:
        server.analyze.to_background()
    server.analyze.progress(os.getpid())
    while True:
        pass
""", top="GOES_TO_THE_BACKGROUND = {bg}\n")


async def _until(cond: Any, what: str) -> None:
    """Wait (on the event loop) until `cond()` holds, at most 10 s."""
    for _ in range(1000):
        if cond():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


@pytest.fixture()
def pool2():
    p = WorkerPool(size=2, time_limit=60, memory_limit_mb=400)
    yield p
    p.close()


procfs = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux's /proc/<pid>/stat: a state")


@procfs
@pytest.mark.parametrize("how", ["niced", "to_background"])
def test_a_background_job_is_stopped_while_a_job_a_person_waits_for_runs(pool2, tmp_path, how):
    """A job run niced, or the rest of one that called `server.analyze.to_background()` (the language server's
    compile once its interim record is out), is stopped while a job of nice 0 runs and continued after; its
    time limit does not run while it is stopped."""
    mark = tmp_path / "let-it-end"
    spins = SPINS.format(bg=how == "to_background")
    holds = HOLDS.format(mark=str(mark))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        bg_pid: asyncio.Future[int] = loop.create_future()
        fg_pid: asyncio.Future[int] = loop.create_future()
        # both templates warm first: the person's job then starts in milliseconds, not a new template's seconds
        # (the background job spins meanwhile, spending its limit)
        await asyncio.gather(*(pool2.run("list_kernels", PATH, "") for _ in range(2)))
        limit = 1.0  # of its own time: it spins for ever, so it ends by this limit
        background = asyncio.ensure_future(pool2.run(
            "analyze_kernel", PATH, spins, "k", {}, timeout=limit, nice=10 if how == "niced" else 0,
            on_progress=lambda pid: bg_pid.done() or bg_pid.set_result(pid)))
        pid = await asyncio.wait_for(bg_pid, 30)
        base = os.nice(0)
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, base + 10)  # niced either way
        assert not _stopped(pid)
        person = asyncio.ensure_future(pool2.run(
            "analyze_kernel", PATH, holds, "k", {}, timeout=60,
            on_progress=lambda p: fg_pid.done() or fg_pid.set_result(p)))
        await asyncio.wait_for(fg_pid, 30)
        await _until(lambda: _stopped(pid), "the background job was not stopped")
        await asyncio.sleep(limit * 1.5)  # the time under test: longer than its limit, stopped
        assert not background.done()  # its limit did not run while it was stopped
        mark.write_text("")
        assert (await asyncio.wait_for(person, 30))["error"] is None
        await _until(lambda: background.done() or not _stopped(pid), "the background job was not continued")
        with pytest.raises(JobFailed) as e:  # it ran on, and its own time ran out
            await asyncio.wait_for(background, 30)
        assert e.value.kind == "timeout", e.value

    asyncio.run(run())
    assert pool2.stops >= 1 and pool2.replaced == 0


LOCKS = kernel("""\
    import fcntl
    import server.analyze
    held = open(LOCK, "w")
    if FIRST:  # the background job: takes the lock, then runs until the test lets it end
        fcntl.flock(held, fcntl.LOCK_EX)
        server.analyze.progress(os.getpid())
        while not os.path.exists(MARK):
            pass
    else:  # the person's job: waits for the lock
        server.analyze.progress(os.getpid())
        fcntl.flock(held, fcntl.LOCK_EX)
""", top="LOCK, MARK, FIRST = {lock!r}, {mark!r}, {first}\n")


@procfs
def test_a_stopped_job_holding_what_a_persons_job_waits_for_is_continued_while_it_waits(pool2, tmp_path):
    """The background job holds a file lock; the person's job, which stopped it, then waits for that lock. The
    person's job uses no CPU for a second: it is waiting, not running, and the background job is continued (else
    each would wait for the other until the person's time limit)."""
    lock, mark = str(tmp_path / "lock"), str(tmp_path / "let-it-end")

    async def run() -> None:
        loop = asyncio.get_running_loop()
        bg_pid: asyncio.Future[int] = loop.create_future()
        fg_pid: asyncio.Future[int] = loop.create_future()
        await asyncio.gather(*(pool2.run("list_kernels", PATH, "") for _ in range(2)))  # both templates warm
        background = asyncio.ensure_future(pool2.run(
            "analyze_kernel", PATH, LOCKS.format(lock=lock, mark=mark, first=True), "k", {}, timeout=60, nice=10,
            on_progress=lambda pid: bg_pid.done() or bg_pid.set_result(pid)))
        pid = await asyncio.wait_for(bg_pid, 30)  # it holds the lock
        person = asyncio.ensure_future(pool2.run(
            "analyze_kernel", PATH, LOCKS.format(lock=lock, mark=mark, first=False), "k", {}, timeout=60,
            on_progress=lambda p: fg_pid.done() or fg_pid.set_result(p)))
        await asyncio.wait_for(fg_pid, 30)
        await _until(lambda: _stopped(pid), "the background job was not stopped")
        await _until(lambda: not _stopped(pid), "the background job was not continued while the person's job waited")
        Path(mark).write_text("")  # the background job ends, its lock with it: the person's job goes on
        assert (await asyncio.wait_for(background, 30))["error"] is None
        assert (await asyncio.wait_for(person, 30))["error"] is None

    asyncio.run(run())
    assert pool2.stops >= 1 and pool2.replaced == 0


SERVER = '''
import asyncio, os, sys
from server.worker import WorkerPool

async def main() -> None:
    pool = WorkerPool(size=2, time_limit=600, memory_limit_mb=400)
    spins, holds = sys.argv[1], sys.argv[2]
    started = asyncio.Queue()
    report = lambda pid: started.put_nowait(pid)
    jobs = [asyncio.ensure_future(pool.run("analyze_kernel", "/virtual/k.py", spins, "k", {}, nice=10,
                                           on_progress=report))]
    print(await started.get(), flush=True)  # the background job runs: then one a person waits for
    jobs.append(asyncio.ensure_future(pool.run("analyze_kernel", "/virtual/k.py", holds, "k", {},
                                               on_progress=report)))
    print(await started.get(), flush=True)
    print(repr([w.spill for w in pool._running]), flush=True)  # the templates' folders for big messages
    await asyncio.gather(*jobs)

asyncio.run(main())
'''


@procfs
def test_no_job_outlives_its_server(tmp_path):
    """The server killed (SIGKILL: no `close`) with a job running and a background job stopped for it: each job's
    template sees its connection end and kills its job's group (a stopped job would wait for ever, a running one
    run on unbounded)."""
    holds = HOLDS.format(mark=str(tmp_path / "never"))
    server = subprocess.Popen([sys.executable, "-c", SERVER, SPINS.format(bg=False), holds],
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent)
    try:
        background, person = int(server.stdout.readline()), int(server.stdout.readline())
        folders = [f for f in eval(server.stdout.readline()) if f is not None]  # noqa: S307 - the script's repr

        async def stopped() -> None:
            await _until(lambda: _stopped(background), "the background job was not stopped")
        asyncio.run(stopped())
    finally:
        server.kill()
        server.wait()

    async def both_gone() -> None:
        await _until(lambda: not _alive(background) and not _alive(person), "a job outlived its server")
        # and each template's folder for big messages went with it
        await _until(lambda: not any(os.path.exists(f) for f in folders), "a template's folder outlived it")
    asyncio.run(both_gone())
    assert len(folders) == 2


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone (reaped between the open and the read: ESRCH)
        return False
