"""`pypto.beside`: two computations made at once, one in a forked child — and the same result as one after
the other, whatever the child does (fails, dies, returns what does not pickle), and no child left behind. A
job's answer is the same either way, with its views made beside its record document (`server.analyze`) and
with a compile's leaf functions merged beside its execute graph (`pypto.compiler.tile_passes`)."""

from __future__ import annotations

import copy
import json
import os
import select
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from support import timeless

from pypto import beside
from pypto.boards.sim_kernel import finish_loading
from server import analyze

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: beside never forks")

WAIT = 60.0  # seconds for an event between the two processes (it comes in milliseconds)


@pytest.fixture
def forks() -> None:
    """The premise of a test that needs beside to fork: this process is single-threaded (earlier tests in the same
    worker may leave a thread running) and the machine has the memory for a copy of it."""
    finish_loading()  # the sim board's loader, which a compile in this worker may have started: it ends
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    if others:
        pytest.skip(f"threads left running in this process ({', '.join(others)}): beside does not fork")
    if not beside._room_for_a_copy():
        pytest.skip("no memory available for a copy of this process: beside does not fork")


class Signal:
    """A pipe between the two processes: `send()` in one, `received()` in the other waits for it (WAIT at most)."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()

    def send(self) -> None:
        os.write(self.write, b"x")

    def received(self) -> bool:
        ready, _, _ = select.select([self.read], [], [], WAIT)
        return bool(ready) and os.read(self.read, 1) == b"x"

    def close(self) -> None:
        os.close(self.read)
        os.close(self.write)


@pytest.mark.usefixtures("forks")
def test_the_child_runs_in_another_process_while_here_runs() -> None:
    parent = os.getpid()
    ran = Signal()

    def child() -> int:  # tells `here` it runs: were they one after the other, `here` would wait in vain
        ran.send()
        return os.getpid()

    try:
        pid, met = beside.beside(child, ran.received)
    finally:
        ran.close()
    assert met, "the child ran while here() waited for it"
    assert pid != parent


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("how", ["raises", "exits", "unpicklable"])
def test_a_child_that_fails_is_computed_here(how: str) -> None:
    parent = os.getpid()

    def child() -> Any:
        if os.getpid() != parent:  # only in the forked child
            if how == "raises":
                raise RuntimeError("only in the child")
            if how == "exits":
                os._exit(3)
            return lambda: None  # a lambda does not pickle
        return ("here", os.getpid())

    got, _ = beside.beside(child, lambda: None)
    assert got == ("here", parent)


def test_what_the_child_raises_is_raised_here() -> None:
    def child() -> None:
        raise ValueError("the views failed")

    with pytest.raises(ValueError, match="the views failed"):
        beside.beside(child, lambda: 1)


@pytest.mark.usefixtures("forks")
def test_when_here_raises_the_child_is_ended_and_reaped() -> None:
    read, write = os.pipe()
    hold_r, hold_w = os.pipe()

    def child() -> None:
        os.write(write, str(os.getpid()).encode())
        os.read(hold_r, 1)  # blocks: nobody writes

    def here() -> None:
        ready, _, _ = select.select([read], [], [], WAIT)
        assert ready
        pids.append(int(os.read(read, 32)))
        raise KeyError("here failed")

    pids: list[int] = []
    try:
        with pytest.raises(KeyError):
            beside.beside(child, here)
    finally:
        for fd in (read, write, hold_r, hold_w):
            os.close(fd)
    with pytest.raises(ProcessLookupError):  # killed and reaped: no such process, not even a zombie
        os.kill(pids[0], 0)


@pytest.mark.usefixtures("forks")
def test_a_module_that_ignores_sigchld_still_gets_the_childs_result() -> None:
    """User code may set SIGCHLD to be ignored: the system reaps the child, and waiting for it fails."""
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        got, here = beside.beside(os.getpid, os.getpid)
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert got != here == os.getpid()


def test_with_other_threads_running_nothing_is_forked() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        got, _ = beside.beside(os.getpid, lambda: None)
    finally:
        stop.set()
        t.join()
    assert got == os.getpid()


KERNEL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x) + x
'''


@pytest.mark.parametrize("rows", [64, 512])  # 12 tasks (the run's lists in the document), 96 (its columns)
def test_a_jobs_answer_is_the_same_with_its_views_made_beside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              rows: int) -> None:
    """The findings made in a forked child, which makes the record document's run first (`pypto.beside.ahead`), and
    the rest of the document and the views here: the same answer as all of it here."""
    kernel = KERNEL.replace("[64, 1000]", f"[{rows}, 1000]")
    path = tmp_path / "k.py"
    path.write_text(kernel)
    opts = {"editor": True, "report": True, "record": True, "snapshots": True, "listings": True, "fingerprint": True}
    forked: list[bool] = []

    def spy(first: Any, then: Any, fork: bool = True) -> Any:
        forked.append(fork)
        return beside.ahead(first, then, fork=fork)

    monkeypatch.setattr(analyze, "BESIDE_FROM", 0)  # this kernel's tile ops are made beside too
    monkeypatch.setattr(analyze, "ahead", spy)
    together = analyze.analyze_kernel(str(path), kernel, "tail_vec", opts)
    monkeypatch.setattr(analyze, "ahead", lambda f, t, fork=True: spy(f, t, fork=False))
    alone = analyze.analyze_kernel(str(path), kernel, "tail_vec", opts)
    assert forked == [True, False]
    assert together["error"] is None
    preds = together["record"]["run"]["tasks"]["preds"]
    if rows > 64:  # the run's predecessors are the execute graph's columns, which the document names
        assert preds == {"$columns": together["record"]["execute"]["tasks"]["$columns"]["dict"]["preds"]}
    # the editor's run is the record's, its lists of lists held as arrays (server.analyze.editor_run): the answer
    # carries it in the record only (its arrays cross once), the server's pool makes it as the answer arrives
    from pypto.ir.columns import expand, json_default, read_npz
    from server.analyze import with_editor_run
    run = expand(together["record"]["run"], read_npz(together["record_columns"]))
    assert "swimlane" not in together["editor"] and together["editor"]["swimlane_in_record"]
    assert together["record_columns"] == alone["record_columns"]
    assert timeless(together) == timeless(alone)
    for data, answer_of in (({"interim": copy.deepcopy(together)}, lambda d: d["interim"]),  # as the pool makes it
                            (copy.deepcopy(together), lambda d: d)):
        editor = answer_of(with_editor_run(data))["editor"]
        assert json.dumps(editor["swimlane"], default=json_default) == json.dumps(run)
    # a record whose columns are not a column file (a kernel that patched what writes them): no run, no raise
    broken = {**copy.deepcopy(together), "record_columns": b"not an npz"}
    assert with_editor_run(broken)["editor"]["swimlane"] is None


@pytest.mark.parametrize(("available_kb", "resident_pages", "room"), [(8_000_000, 1000, True), (1_000, 100_000, False)])
def test_room_for_a_copy_is_the_memory_available_against_this_processs_size(
        tmp_path: Path, available_kb: int, resident_pages: int, room: bool) -> None:
    meminfo, statm = tmp_path / "meminfo", tmp_path / "statm"
    meminfo.write_text(f"MemTotal: 16000000 kB\nMemFree: 1 kB\nMemAvailable: {available_kb} kB\n")
    statm.write_text(f"500000 {resident_pages} 100 10 0 400 0\n")
    assert beside._room_for_a_copy(str(meminfo), str(statm)) is room
    assert beside._room_for_a_copy(str(tmp_path / "none"), str(statm)), "unknown: forked as before"


def test_without_memory_for_a_second_copy_nothing_is_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child copies the pages it reads (reference counts move): a machine short of memory runs both here."""
    monkeypatch.setattr(beside, "_room_for_a_copy", lambda: False)
    got, _ = beside.beside(os.getpid, lambda: None)
    assert got == os.getpid()


MIXED = '''import pypto


@pypto.jit
def mixed(a: pypto.Tensor([128, 64], pypto.DT_FP16), b: pypto.Tensor([64, 96], pypto.DT_FP16),
          x: pypto.Tensor([128, 96], pypto.DT_FP32), out: pypto.Tensor([128, 96], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(32, 48)
    out[:] = pypto.exp(pypto.matmul(a, b, pypto.DT_FP32)) + pypto.sqrt(x)
'''


def test_a_compile_is_the_same_with_its_leaves_merged_beside_the_execute_graph(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tile_passes.leaf_functions` of a big kernel: the leaves merged in a forked child, the execute graph built here
    and given them after (`execute.with_leaves`); the record is the one of merging and building one after the other."""
    from pypto.compiler import tile_passes
    from pypto.compiler.execute import build
    from pypto.compiler.tile_ir import Subgraph

    path = tmp_path / "k.py"
    path.write_text(MIXED)
    opts = {"editor": True, "record": True, "snapshots": True, "listings": True}
    children: list[int] = []
    finish_loading()  # (an earlier compile's sim board loader: beside does not fork beside a thread)

    def spy(child: Any, here: Any, then: Any, fork: bool = True) -> Any:
        def in_child() -> Any:
            return os.getpid(), child()
        (pid, got), made, later = beside.beside_then(in_child, here, then, fork=fork)
        children.append(pid)
        return got, made, later

    columns_made_in = tmp_path / "columns_pid"
    made_here = tile_passes._tile_columns

    def tile_columns(tiles: Any) -> Any:  # says which process made the record document's tile columns
        columns_made_in.write_text(str(os.getpid()))
        return made_here(tiles)

    monkeypatch.setattr(tile_passes, "BESIDE_FROM", 0)  # this kernel's tile ops are merged beside too
    monkeypatch.setattr(tile_passes, "beside_then", spy)
    monkeypatch.setattr(tile_passes, "_tile_columns", tile_columns)
    forked = analyze.analyze_kernel(str(path), MIXED, "mixed", opts)
    if hasattr(os, "fork") and beside._room_for_a_copy() and threading.active_count() == 1:
        assert children[0] != os.getpid(), "the kernel's leaves were merged in a forked child"
        # the child went on to the record document's tile columns, which the document took
        assert int(columns_made_in.read_text()) == children[0]
        assert len(forked["record"]["tiles"]["ops"]["id"]["$columns"]) > 0
    children.clear()  # (the compiles of the advice's candidates, checked after the kernel's, merge beside too)
    monkeypatch.setattr(tile_passes, "beside_then", lambda c, h, t, fork=True: spy(c, h, t, fork=False))
    alone = analyze.analyze_kernel(str(path), MIXED, "mixed", opts)
    assert children and set(children) == {os.getpid()}
    monkeypatch.setattr(tile_passes, "BESIDE_FROM", 10**9)  # as before: merged, then built, in one process
    before = analyze.analyze_kernel(str(path), MIXED, "mixed", opts)
    assert forked["error"] is None and forked["summary"]["leaves"] >= 3  # matmul, exp + add, sqrt: leaves of each
    for other in (alone, before):
        assert forked["record_columns"] == other["record_columns"]
        assert timeless(forked) == timeless(other)
    # the tasks given their leaves after are the tasks built with them: checked on a graph whose leaves all differ
    from pypto.frontend.inputs import example_arguments
    from pypto.record import trace_for
    kernel = analyze._kernel(analyze._load(str(path), MIXED), str(path), "mixed")
    p = trace_for(kernel, example_arguments(kernel, values=False)).lowered().program
    assert p.tiles is not None and p.subgraphs is not None and p.execute is not None
    relabelled = tuple(Subgraph(s.id, s.core, s.instance, s.ops, s.peak_bytes, 1000 + s.id) for s in p.subgraphs)
    from pypto.compiler.execute import with_leaves
    again = with_leaves(build(p.tiles, p.subgraphs), relabelled)
    assert again == build(p.tiles, relabelled)
    assert again.columns is not None and again.columns.leaf.tolist() == [1000 + t.subgraph for t in again.tasks]


@pytest.mark.usefixtures("forks")
def test_the_child_goes_on_to_what_is_asked_later() -> None:
    parent = os.getpid()
    first, here, later = beside.beside_then(os.getpid, os.getpid, lambda: ("later", os.getpid()))
    assert later is not None
    assert here == parent != first
    assert later.get() == ("later", first), "computed in the same child, after its first result"


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("how", ["raises", "exits", "unpicklable"])
def test_a_later_result_the_child_fails_is_computed_here(how: str) -> None:
    parent = os.getpid()

    def then() -> Any:
        if os.getpid() != parent:
            if how == "raises":
                raise RuntimeError("only in the child")
            if how == "exits":
                os._exit(3)
            return lambda: None
        return ("here", os.getpid())

    first, _, later = beside.beside_then(os.getpid, lambda: None, then)
    assert first != parent and later is not None
    assert later.get() == ("here", parent)


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("way", ["beside_then", "ahead"])
def test_a_later_result_nobody_takes_ends_with_its_child(way: str) -> None:
    hold = Signal()  # nobody sends: the later result blocks
    try:
        if way == "ahead":
            first, later = beside.ahead(os.getpid, lambda: os.read(hold.read, 1))
            pid = first.get()
        else:
            pid, _, maybe = beside.beside_then(os.getpid, lambda: None, lambda: os.read(hold.read, 1))
            assert maybe is not None
            later = maybe
        later.drop()
    finally:
        hold.close()
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pid, 0)


def test_without_a_child_the_later_result_is_computed_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(beside, "_room_for_a_copy", lambda: False)
    asked: list[int] = []
    _, _, later = beside.beside_then(os.getpid, lambda: None, lambda: asked.append(1) or len(asked))
    assert later is not None and asked == []
    assert later.get() == 1
    assert beside.beside_then(os.getpid, lambda: None, None)[2] is None


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd_open: a child's end cannot be awaited")
@pytest.mark.usefixtures("forks")
def test_a_child_that_sent_its_result_is_reaped_by_the_next_beside() -> None:
    """Its result is trusted once whole (it carries its length), without waiting for the child's exit; the child,
    still ending then, is reaped later: no zombie stays."""
    pid, _ = beside.beside(os.getpid, lambda: None)
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # reaped at once: it had ended
    try:
        ready, _, _ = select.select([fd], [], [], WAIT)  # readable when the child has ended
        assert ready
    finally:
        os.close(fd)
    beside.beside(lambda: None, lambda: None)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.usefixtures("forks")
def test_tile_columns_made_ahead_for_a_document_not_made_end_with_their_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job makes its kernel's record document from `parts_from` tile ops even when the panels did not ask: its
    compile has the leaves' child go on to the tile columns; when the kernel is below that size after all, the
    document is not made, and the child ends with the job's answer, not with the job's process."""
    from pypto.compiler import tile_ir, tile_passes

    path = tmp_path / "k.py"
    path.write_text(MIXED)
    pids: list[int] = []

    def spy(child: Any, here: Any, then: Any, fork: bool = True) -> Any:
        got, made, later = beside.beside_then(lambda: (os.getpid(), child()), here, then, fork=fork)
        pids.append(got[0])
        return got[1], made, later

    monkeypatch.setattr(tile_passes, "BESIDE_FROM", 0)
    monkeypatch.setattr(tile_passes, "beside_then", spy)
    answer = analyze.analyze_kernel(str(path), MIXED, "mixed", {"editor": True, "record": False,
                                                                 "parts_from": 10**9})
    assert answer["error"] is None and answer["record"] is None
    assert pids and pids[0] != os.getpid(), "the leaves were merged in a forked child"
    assert tile_ir._columns_ahead == [], "no columns left noted"
    with pytest.raises(ProcessLookupError):  # the child that made them: ended and reaped
        os.kill(pids[0], 0)


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("size", [200_000, 3_000_000])  # more than an empty pipe holds; more than it is grown to
def test_a_long_first_result_does_not_hold_the_child_from_its_later_one(size: int) -> None:
    """The parent reads the first result only after `here()`: the child goes on to `then()` meanwhile. Here `here()`
    waits for `then()` to start, which a child blocked on writing its first result would never do."""
    ran = Signal()

    def then() -> int:
        ran.send()
        return os.getpid()

    try:
        first, met, later = beside.beside_then(lambda: b"r" * size, ran.received, then)
    finally:
        ran.close()
    assert met, "then() ran while here() waited: the child did not wait for its first result to be read"
    assert first == b"r" * size
    assert later is not None and later.get() != os.getpid()


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("later", [False, True])
def test_a_result_is_taken_without_waiting_for_the_child_to_end(monkeypatch: pytest.MonkeyPatch, later: bool) -> None:
    """The parent reads a child's results to the pipe's end: the child closes it once they are sent, not when its
    exit tears down its copy of a big process. Here the child's exit waits until it is released, after the result
    is taken (`beside`'s, or a `beside_then` child's later one)."""
    release_r, release_w = os.pipe()
    real_exit = os._exit

    def held_exit(code: int) -> None:
        released, _, _ = select.select([release_r], [], [], WAIT)
        real_exit(code if released else 9)

    monkeypatch.setattr(os, "_exit", held_exit)
    try:
        if later:
            _, _, then = beside.beside_then(os.getpid, lambda: None, os.getpid)
            assert then is not None
            pid = then.get()
        else:
            pid, _ = beside.beside(os.getpid, lambda: None)
    finally:
        os.write(release_w, b"x")  # only now may the child end
    try:
        _, status = os.waitpid(pid, 0)
        held = os.waitstatus_to_exitcode(status) == 0
    except ChildProcessError:  # reaped already: it had ended before the result was taken
        held = False
    finally:
        os.close(release_r)
        os.close(release_w)
    assert pid != os.getpid() and held, "the result waited for the child's exit"


@pytest.mark.usefixtures("forks")
def test_ahead_results_are_taken_midway_while_the_child_goes_on() -> None:
    """`ahead(first, then)`: this process takes `first()` when it needs it, the child computing `then()` meanwhile."""
    started = Signal()

    def then() -> int:
        started.send()
        return os.getpid()

    try:
        first, later = beside.ahead(os.getpid, then)
        pid = first.get()
        ran = started.received()  # then() runs in the child, after first() was sent
    finally:
        started.close()
    assert pid != os.getpid() and ran
    assert later.get() == pid


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("fails", ["first", "then", "none"])
def test_ahead_results_the_child_does_not_send_are_computed_here(fails: str) -> None:
    parent = os.getpid()

    def part(name: str) -> Any:
        if os.getpid() != parent and fails == name:
            os._exit(3)
        return (name, os.getpid())

    first, later = beside.ahead(lambda: part("first"), lambda: part("then"))
    a, b = first.get(), later.get()
    assert a[0] == "first" and b[0] == "then"
    assert (a[1] == parent) == (fails == "first")
    assert (b[1] == parent) == (fails in ("first", "then"))  # no result after one the child did not send


def test_ahead_without_a_child_computes_each_here_when_asked() -> None:
    asked: list[str] = []
    first, later = beside.ahead(lambda: asked.append("first") or 1, lambda: asked.append("then") or 2, fork=False)
    assert asked == []
    assert (first.get(), later.get()) == (1, 2) and asked == ["first", "then"]


@pytest.mark.usefixtures("forks")
def test_ahead_a_result_not_taken_is_passed_over() -> None:
    first, later = beside.ahead(lambda: b"x" * 200_000, os.getpid)
    assert later.get() != os.getpid()  # the child's, the first result read and left
    assert first.get() == b"x" * 200_000  # computed here: it was passed over


def test_a_job_without_a_record_document_makes_no_run_for_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The findings' child makes the document's run first only when a document is made (else it would make the run
    for nothing before the findings)."""
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    firsts: list[Any] = []

    def spy(first: Any, then: Any, fork: bool = True) -> Any:
        firsts.append(first())
        return beside.ahead(first, then, fork=False)

    monkeypatch.setattr(analyze, "BESIDE_FROM", 0)
    monkeypatch.setattr(analyze, "ahead", spy)
    for record in (False, True):
        answer = analyze.analyze_kernel(str(path), KERNEL, "tail_vec", {"editor": True, "record": record})
        assert answer["error"] is None and (answer["record"] is not None) == record
    assert firsts[0] is None and isinstance(firsts[1], tuple)


@pytest.mark.usefixtures("forks")
def test_soon_computes_in_a_child_while_this_process_goes_on() -> None:
    parent = os.getpid()
    ran = Signal()

    def compute() -> int:
        ran.send()
        return os.getpid()

    try:
        later = beside.soon(compute)
        met = ran.received()  # here, before asking: the child runs meanwhile
    finally:
        ran.close()
    assert met and later.get() not in (parent, None)


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("how", ["raises", "exits"])
def test_soon_a_child_that_fails_is_computed_here(how: str) -> None:
    parent = os.getpid()

    def compute() -> int:
        if os.getpid() != parent:
            if how == "raises":
                raise RuntimeError("only in the child")
            os._exit(3)
        return os.getpid()

    assert beside.soon(compute).get() == parent


@pytest.mark.usefixtures("forks")
@pytest.mark.parametrize("then", [False, True])
def test_a_child_out_of_memory_says_so_and_the_caller_may_leave_it_rather_than_compute_it_here(then: bool) -> None:
    """A child that runs out of memory tells the parent, which computes the result here as for any failure — or,
    asked not to (the tuning advisor: one candidate of several), raises `ChildOutOfMemory` without computing it."""
    parent = os.getpid()
    computed: list[int] = []

    def compute() -> int:
        if os.getpid() != parent:
            raise MemoryError
        computed.append(1)
        return parent

    def later() -> beside.Later[int]:
        if not then:
            return beside.soon(compute)
        first, _, rest = beside.beside_then(lambda: os.getpid(), lambda: None, compute)
        assert first != parent  # the first result came from the child, which then ran out of memory
        assert rest is not None
        return rest

    with pytest.raises(beside.ChildOutOfMemory, match="ran out of memory"):
        later().get(again_out_of_memory=False)
    assert computed == []
    assert later().get() == parent and computed == [1]

    def fails_otherwise() -> int:
        if os.getpid() != parent:
            raise ZeroDivisionError
        return 5

    assert beside.soon(fails_otherwise).get(again_out_of_memory=False) == 5  # computed here: only memory is left


@pytest.mark.usefixtures("forks")
def test_soon_ready_says_whether_the_childs_result_has_come() -> None:
    go = Signal()

    def compute() -> int:
        go.received()  # in the child: until this process says go
        return 7

    try:
        later = beside.soon(compute)
        assert not later.ready(0.0)  # the child is waiting
        go.send()
        assert later.ready(WAIT) and later.get() == 7
    finally:
        go.close()


def test_soon_without_a_fork_computes_when_asked() -> None:
    asked: list[int] = []
    later = beside.soon(lambda: asked.append(1) or len(asked), fork=False)
    assert asked == [] and later.ready(0.0)  # (nothing to wait for: it is computed when asked)
    assert later.get() == 1 and asked == [1]
