"""What a kernel does cannot reach past its own job (issue 17: items 1, 2, 3, 5), through a real pool.

- its output (print, os.write(1/2), a subprocess's) is the job's `output`, never the server's stdout;
- its module code cannot change another document's compile, or a later compile of its own;
- the threads and processes it starts end with the job (completed, timed out or cancelled);
- every BaseException it raises (KeyboardInterrupt, SystemExit, GeneratorExit) is a result at its line.
"""

from __future__ import annotations

import asyncio
import re
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from server.worker import JobFailed, WorkerPool

PATH = "/virtual/isolation.py"


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(size=1, time_limit=20, memory_limit_mb=600)  # one template: every job follows the last one
    yield p
    p.close()


def kernel(body: str, top: str = "") -> str:
    """A file with one 8x8 kernel `k` whose body starts with `body`."""
    return ("import os, subprocess, sys, threading, time\nimport pypto\n" + textwrap.dedent(top) + "\n\n@pypto.jit\n"
            "def k(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):\n"
            + textwrap.indent(textwrap.dedent(body), "    ") + "    out[:] = pypto.exp(x)\n")


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def gone(pid: int) -> bool:
    """The process no longer runs (no such process, or a zombie waiting for its parent)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# ---- 1. output -----------------------------------------------------------------------------------

def test_everything_a_job_writes_to_fd_1_and_2_is_its_output(pool):
    src = kernel('''
        print("in the kernel")
        os.write(1, b"raw fd 1\\n")
        os.write(2, b"raw fd 2\\n")
        print("to stderr", file=sys.stderr)
        subprocess.run(["echo", "from a subprocess"], check=True)
    ''', top='print("at module level")\n')
    out = pool.run_blocking("analyze_kernel", PATH, src, "k", {})
    assert out["error"] is None
    lines = out["output"].splitlines()
    assert lines[0] == "at module level"
    assert {"in the kernel", "raw fd 1", "raw fd 2", "to stderr", "from a subprocess"} <= set(lines)
    # the next job's output is its own
    listed = pool.run_blocking("list_kernels", PATH, kernel("", top='print("listed")\n'))
    assert listed["output"] == "listed\n"


def test_the_output_of_a_failed_job_comes_with_its_failure_and_is_bounded(pool):
    src = kernel('''
        print("before the loop", flush=True)
        while True:
            pass
    ''')
    with pytest.raises(JobFailed) as e:
        pool.run_blocking("analyze_kernel", PATH, src, "k", {}, timeout=3)
    assert e.value.kind == "timeout" and e.value.output == "before the loop\n"
    flood = pool.run_blocking("analyze_kernel", PATH, kernel('os.write(1, b"x" * 3_000_000)\n'), "k", {})
    assert flood["error"] is None
    assert len(flood["output"]) < 300_000 and re.search(r"\[\d+ more bytes of output were not kept\]", flood["output"])


# ---- 2. state ------------------------------------------------------------------------------------

def test_module_code_cannot_change_another_documents_compile(pool, tmp_path):
    patching = kernel("x = x + x\n", top='''
        pypto.exp = lambda t: pypto.sin(t)
        pypto.Tensor.__add__ = lambda a, b: a * b
        sys.path.insert(0, "/nowhere")
    ''')
    plain = kernel("x = x + x\n")

    def ops(path: str, text: str) -> set[str]:
        rec = pool.run_blocking("analyze_kernel", path, text, "k", {})["record"]
        return {n["op"] for n in rec["graph"]["nodes"]}

    assert ops(str(tmp_path / "patching.py"), patching) >= {"sin", "mul"}  # the patch holds in its own job
    assert ops(str(tmp_path / "other.py"), plain) >= {"exp", "add"}
    assert not ops(str(tmp_path / "other.py"), plain) & {"sin", "mul"}
    # nor a later compile of the same document once the patch is gone
    assert ops(str(tmp_path / "patching.py"), plain) >= {"exp", "add"}
    probe = kernel("", top='print("/nowhere" in sys.path, hasattr(pypto, "_isolation_probe"))\n'
                           'pypto._isolation_probe = 1\n')
    assert pool.run_blocking("list_kernels", PATH, probe)["output"] == "False False\n"
    assert pool.run_blocking("list_kernels", PATH, probe + "\n")["output"] == "False False\n"


# ---- 3. threads and processes --------------------------------------------------------------------

SPAWNS = '''
    def burn():
        while True:
            pass
    t = threading.Thread(target=burn, daemon=False)
    t.start()
    child = subprocess.Popen(["sleep", "97"])
    print("pids", os.getpid(), t.native_id, child.pid, flush=True)
'''


def pids_of(output: str) -> tuple[int, int, int]:
    job, thread, child = (int(x) for x in re.search(r"pids (\d+) (\d+) (\d+)", output).groups())
    return job, thread, child


def test_threads_and_processes_a_job_started_end_with_it(pool):
    template = pool._idle[0].process.pid if pool._idle else None
    out = pool.run_blocking("analyze_kernel", PATH, kernel(SPAWNS), "k", {})
    assert out["error"] is None
    pool.settle()  # the answer comes first; the job ends (its group killed and reaped) right after
    job, thread, child = pids_of(out["output"])
    assert job != template and gone(job) and gone(child)
    assert not Path(f"/proc/{job}/task/{thread}").exists()
    again = pool.run_blocking("analyze_kernel", PATH, kernel(""), "k", {})
    assert again["error"] is None and pool.replaced == 0


ESCAPES = '''
    import signal
    lone = subprocess.Popen(["sleep", "96"], start_new_session=True)  # a new session: out of the job's group
    daemon = os.fork()  # a daemon's double fork: its child leaves the group and outlives its parent
    if daemon == 0:
        os.setsid()
        if os.fork() == 0:
            signal.pause()
        os._exit(0)
    os.waitpid(daemon, 0)
    print("escaped", lone.pid, flush=True)
'''


def test_processes_that_left_the_jobs_group_end_with_it_too(pool):
    out = pool.run_blocking("analyze_kernel", PATH, kernel(ESCAPES), "k", {})
    assert out["error"] is None, out["error"]
    lone = int(re.search(r"escaped (\d+)", out["output"]).group(1))
    pool.settle()
    template = pool._idle[0].process.pid
    assert gone(lone)
    left = [c for c in psutil.Process(template).children(recursive=True) if c.status() != psutil.STATUS_ZOMBIE]
    # nothing but (once forked) the next job's child, a copy of the template
    assert len(left) <= 1 and all(c.cmdline() == psutil.Process(template).cmdline() for c in left)


def end(pids: list[int]) -> bool:
    """Whether the processes end (each killed, its memory freed as it dies: a killed job's end is said before that,
    `server.worker._kill_tree`), waiting for them at most 30 s."""
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    deadline = time.monotonic() + 30
    while procs and time.monotonic() < deadline:  # (a zombie has ended: its parent reaps it when it next looks)
        _, alive = psutil.wait_procs(procs, timeout=0.2)
        procs = [p for p in alive if not gone(p.pid)]
    return not procs


def test_a_timed_out_or_cancelled_job_takes_its_processes_with_it(pool):
    src = kernel(SPAWNS + "    while True:\n        pass\n")
    with pytest.raises(JobFailed) as e:
        pool.run_blocking("analyze_kernel", PATH, src, "k", {}, timeout=3)
    assert e.value.kind == "timeout"
    job, _, child = pids_of(e.value.output)
    assert end([job, child])

    # the kernel says it is running through the job's progress channel: then it is cancelled
    running_src = src.replace("flush=True)\n", "flush=True)\n    import server.analyze\n"
                                                "    server.analyze.progress([os.getpid(), child.pid])\n", 1)

    async def cancel_once_running() -> list[int]:
        loop = asyncio.get_running_loop()
        running: asyncio.Future[list[int]] = loop.create_future()
        task = asyncio.ensure_future(pool.run("analyze_kernel", PATH, running_src, "k", {}, timeout=60,
                                              on_progress=lambda d: running.done() or running.set_result(d)))
        pids = await asyncio.wait_for(running, 30)
        assert not any(gone(p) for p in pids)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pids

    assert end(asyncio.run(cancel_once_running()))
    assert pool.failures.get("cancelled") == 1
    assert pool.replaced == 0  # the template reported each killed job's end and serves on


def test_a_killed_jobs_processes_that_left_its_group_end_with_it_too(pool):
    src = kernel(ESCAPES + "    while True:\n        pass\n")
    with pytest.raises(JobFailed) as e:
        pool.run_blocking("analyze_kernel", PATH, src, "k", {}, timeout=3)
    assert e.value.kind == "timeout"
    template = pool._idle[0].process.pid  # (the one that ran it: it serves on)
    lone = int(re.search(r"escaped (\d+)", e.value.output).group(1))
    assert end([lone])
    # the daemon's child, the template's since its parent ended: killed with the job (reaped by the template later)
    assert end([c.pid for c in psutil.Process(template).children(recursive=True) if not _a_template(c, template)])
    assert pool.run_blocking("analyze_kernel", PATH, kernel(""), "k", {})["error"] is None and pool.replaced == 0


def _a_template(p: psutil.Process, template: int) -> bool:
    """Whether the process is a copy of the template (the next job's child), not what a job started."""
    try:
        return p.cmdline() == psutil.Process(template).cmdline()
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return False


def test_a_template_says_a_killed_jobs_end_without_waiting_for_its_process_to_go():
    """`_relay`: the pool's word that it killed the job ends the relay, though the job's end of the pipe is still open
    (a dying process frees its memory before its files are closed, ~0.1 s a GB)."""
    import multiprocessing as mp

    from server.worker import _KILL, _relay

    answers_in, answers_out = mp.Pipe(duplex=False)  # the job's end (`answers_out`) stays open throughout
    pool_end, template_end = mp.Pipe()
    try:
        pool_end.send(_KILL)
        assert _relay(answers_in, None, template_end) is True
        assert not answers_in.poll()
        pool_end.close()  # and the pool's end gone is the pool gone
        with pytest.raises(Exception) as e:
            _relay(answers_in, None, template_end)
        assert type(e.value).__name__ == "_PoolGone"
    finally:
        answers_out.close()


def test_prepare_finishes_a_jobs_interim_results_and_answer_off_the_event_loop(pool):
    """`WorkerPool.run(prepare=…)`: each interim result and the answer go through it in the pool's thread before
    the event loop sees them (the language server makes a big answer's editor run there)."""
    src = kernel("import server.analyze\nserver.analyze.progress({'interim': 1})\n")

    async def run() -> tuple[int, list[int], list[object], object]:
        threads: list[int] = []
        got: list[object] = []

        def prepare(data: object) -> object:
            threads.append(threading.get_ident())
            return {"prepared": data}

        out = await pool.run("analyze_kernel", PATH, src, "k", {}, timeout=60, on_progress=got.append,
                             prepare=prepare)
        return threading.get_ident(), threads, got, out

    loop_thread, threads, got, out = asyncio.run(run())
    assert got == [{"prepared": {"interim": 1}}]
    assert isinstance(out, dict) and out["prepared"]["error"] is None
    assert len(threads) == 2 and loop_thread not in threads


# ---- 5. BaseException ----------------------------------------------------------------------------

RAISES = ["raise KeyboardInterrupt", "raise SystemExit(3)", "sys.exit(0)", "raise GeneratorExit('bye')"]


@pytest.mark.parametrize("statement", RAISES)
def test_a_base_exception_at_module_level_is_an_error_at_its_line(pool, statement):
    src = kernel("", top=statement + "\n")
    line = line_of(src, statement)
    listed = pool.run_blocking("list_kernels", PATH, src)
    assert listed["error"]["line"] == line and listed["error"]["rule"] == "python.import"
    name = statement.split("(")[0].split()[-1].replace("sys.exit", "SystemExit")
    assert listed["error"]["message"].startswith(name), listed["error"]
    out = pool.run_blocking("analyze_kernel", PATH, src, "k", {})
    assert out["import_failed"] and out["error"] == listed["error"]


@pytest.mark.parametrize("statement", RAISES)
def test_a_base_exception_in_the_kernel_is_an_error_at_its_line(pool, statement):
    src = kernel(statement + "\n")
    out = pool.run_blocking("analyze_kernel", PATH, src, "k", {})
    assert out["error"]["line"] == line_of(src, statement) and out["error"]["rule"] == "python.exception", out
    assert "raised while tracing k" in out["error"]["message"]


def test_a_base_exception_when_the_tile_search_traces_again_is_an_error_at_its_line(pool):
    """The tile search traces the kernel again (the fp64 comparison does not): a kernel that raises only
    then gets its error as the result's `suggest_error` (at its line), and the rest of the result stands."""
    body = ("traced.append(1)\nprint('trace', len(traced))\nif len(traced) > LIMIT:\n    raise KeyboardInterrupt\n"
            "pypto.set_vec_tile_shapes(8, 64)\n")
    src = kernel(body, top="traced = []\nLIMIT = 99\n").replace("[8, 8]", "[64, 256]")
    plain = pool.run_blocking("analyze_kernel", PATH, src, "k", {})
    assert plain["error"] is None
    traces = plain["output"].count("trace ")  # how often a plain analysis traces the kernel
    src = src.replace("LIMIT = 99", f"LIMIT = {traces}")
    where = line_of(src, "raise KeyboardInterrupt")
    out = pool.run_blocking("analyze_kernel", PATH, src, "k", {"suggest": True, "tile_search_budget": 4})
    assert out["error"] is None and out["summary"] is not None and out["suggestions"] == []
    assert (out["suggest_error"]["line"], out["suggest_error"]["rule"]) == (where, "python.exception")


# ---- big messages go by file ----------------------------------------------------------------------------------

def _folder(pool: WorkerPool) -> Path:
    """The spill folder of the pool's one template (made with it)."""
    pool.run_blocking("list_kernels", PATH, kernel(""))  # a template runs
    [w] = pool._idle
    assert w.spill is not None
    return Path(w.spill)


def test_a_big_message_crosses_by_file_whole_and_the_file_is_deleted_once_read(pool, monkeypatch):
    from server import worker

    folder = _folder(pool)
    read: list[str] = []
    unspill = worker._unspill
    monkeypatch.setattr(worker, "_unspill", lambda spill, name: (read.append(name), unspill(spill, name))[1])
    blob = "x" * (worker.SPILL_FROM + 1)
    src = kernel(f"import server.analyze\nserver.analyze.progress({{'blob': 'x' * {len(blob)}, 'pid': os.getpid()}})\n")
    got: list[dict[str, object]] = []

    async def run() -> dict[str, object]:
        return await pool.run("analyze_kernel", PATH, src, "k", {}, on_progress=got.append)

    answer = asyncio.run(run())
    assert answer["error"] is None and answer["summary"]["tasks"] > 0  # the answer itself is small: by pipe
    assert len(got) == 1 and got[0]["blob"] == blob
    assert read == [f"{got[0]['pid']}-1"], "the message went by file"
    assert list(folder.iterdir()) == []


def test_a_message_bigger_than_what_the_job_has_left_under_its_cap_is_pickled_straight_to_its_file(pool):
    """The job holds 250 MB of its 600 MB cap and sends them: pickled whole in memory first (a buffer and its copy)
    that ran it out of memory; pickled into the file, it crosses (a 10^6-tile-op kernel's record)."""
    import shutil

    folder = _folder(pool)
    size = 250 << 20
    if shutil.disk_usage(folder).free < 2 * size:
        pytest.skip(f"{folder} has less than {2 * size >> 20} MB free: a message that big crosses the pipes")
    src = kernel(f"import server.analyze\nserver.analyze.progress(b'x' * {size})\n")
    got: list[object] = []

    async def run() -> dict[str, object]:
        return await pool.run("analyze_kernel", PATH, src, "k", {}, on_progress=got.append)

    assert asyncio.run(run())["error"] is None
    assert len(got) == 1 and isinstance(got[0], bytes) and len(got[0]) == size and got[0][-1:] == b"x"
    assert list(folder.iterdir()) == []


def test_a_file_a_killed_job_left_is_deleted_with_its_end(pool):
    folder = _folder(pool)
    # a file written as the job's messages are, its name never sent (the job killed in between)
    src = kernel(f"open('{folder}/' + str(os.getpid()) + '-1', 'wb').write(b'x' * 100)\n"
                 "while True:\n    pass\n")
    with pytest.raises(JobFailed) as e:
        pool.run_blocking("analyze_kernel", PATH, src, "k", {}, timeout=2)
    assert e.value.kind == "timeout"
    assert list(folder.iterdir()) == []
    assert pool.run_blocking("analyze_kernel", PATH, kernel(""), "k", {})["error"] is None


@pytest.mark.parametrize("name", ["../../../etc/passwd", "/etc/passwd", "123-4", 7])
def test_a_spilled_message_the_job_forged_is_a_crashed_job_and_reads_nothing_else(pool, name):
    """The job's code takes its channel to the template (it can: it is the job's process) and names a file that
    is not one it wrote to its folder."""
    src = kernel(f"""
        import server.analyze
        from multiprocessing.connection import Connection
        cells = [c.cell_contents for c in server.analyze.progress.__closure__[0].cell_contents.__closure__]
        next(c for c in cells if isinstance(c, Connection)).send(("spilled", {name!r}))
        while True:
            pass
    """)
    with pytest.raises(JobFailed) as e:
        pool.run_blocking("analyze_kernel", PATH, src, "k", {}, timeout=20)
    assert e.value.kind == "crashed" and "its answer is lost" in e.value.message
    assert ("does not read" in e.value.message) == (name != "123-4")  # a name a job makes: not there
    assert pool.run_blocking("analyze_kernel", PATH, kernel(""), "k", {})["error"] is None


def test_without_a_folder_big_messages_cross_the_pipes():
    from server import worker

    p = WorkerPool(size=1, time_limit=20, memory_limit_mb=600, spill=False)
    try:
        src = kernel(f"import server.analyze\nserver.analyze.progress('x' * {worker.SPILL_FROM * 2})\n")
        got: list[object] = []

        async def run() -> dict[str, object]:
            return await p.run("analyze_kernel", PATH, src, "k", {}, on_progress=got.append)

        assert asyncio.run(run())["error"] is None
        assert got == ["x" * worker.SPILL_FROM * 2] and all(w.spill is None for w in p._idle)
    finally:
        p.close()


def test_a_templates_folder_goes_with_it():
    p = WorkerPool(size=1, time_limit=20, memory_limit_mb=600)
    try:
        folder = _folder(p)
        assert folder.is_dir() and folder.name.startswith("pypto-answers-")
    finally:
        p.close()
    assert not folder.exists()


def test_a_message_that_cannot_be_written_whole_crosses_the_pipes_and_leaves_no_file(pool):
    """The job's file size is capped below the message (as a full /dev/shm would stop the write): the part written
    is deleted and the pipes carry the message; a file already at the name (the job's own) is not overwritten."""
    from server import worker

    folder = _folder(pool)
    size = worker.SPILL_FROM * 2
    src = kernel(f"""
        import resource, signal
        import server.analyze
        (open('{folder}/' + str(os.getpid()) + '-1', 'wb').write(b'mine'))  # the first name: taken
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the cap fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, ({worker.SPILL_FROM}, resource.RLIM_INFINITY))
        server.analyze.progress('x' * {size})  # its file is taken: by the pipes
        server.analyze.progress('y' * {size})  # its file cannot be written whole: by the pipes
        server.analyze.progress(sorted(os.listdir('{folder}')))
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    """)
    got: list[object] = []

    async def run() -> dict[str, object]:
        return await pool.run("analyze_kernel", PATH, src, "k", {}, on_progress=got.append)

    assert asyncio.run(run())["error"] is None
    assert got[:2] == ["x" * size, "y" * size]
    [left] = got[2]  # type: ignore[misc]
    assert left.endswith("-1")  # the job's own file, untouched; no part of the second message's
    pool.settle()  # the job's end collected
    assert list(folder.iterdir()) == []  # its own file goes with it
