"""The sim board's fast event loop gives the same swimlanes as the straightforward model.

`sim_reference.py` (beside this file) is the board as it was before the fast path: every
swimlane below is run through both in this test run and compared as JSON text, byte for byte
(times, lanes, ready counters, pipe profiles, info and metrics). The board has two fast paths,
both checked: the loop on columns compiled with numba (`sim_kernel`, when numba is installed)
and the Python loop (`_Chip.run`, without numba or with PYPTO_SIM_JIT=0). The cases: every example
kernel, under each scheduling mode and a few stitch sizes, and the tests' micro-kernels,
also on boards with a small L2 (evictions) and little HBM bandwidth (contention everywhere).
"""

from __future__ import annotations

import copy
import gc
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
import sim_reference
import torch
from support import example_records, lowered

import pypto
from pypto.boards import sim_kernel
from pypto.boards.sim import simulate
from pypto.compiler.manager import Program
from pypto.target import load

BOARD = load("a2a3")


def _board(l2_bytes: int | None = None, hbm_gbps: float | None = None) -> dict[str, Any]:
    bd = copy.deepcopy(dict(BOARD))
    if l2_bytes is not None:
        bd["memory"]["l2_bytes"] = l2_bytes
    if hbm_gbps is not None:
        bd["memory"]["hbm_GBps"] = hbm_gbps
    return bd


SMALL_L2 = _board(l2_bytes=96 * 1024)  # a few tiles: reads hit, then are evicted
SLOW_HBM = _board(hbm_gbps=40.0)  # every streaming task is slowed down by the others
BOARDS: dict[str, Any] = {"a2a3": "a2a3", "small-l2": SMALL_L2, "slow-hbm": SLOW_HBM}
OPTIONS: list[dict[str, int]] = [{}, {"device_sched_mode": 1}, {"device_sched_mode": 3},
                                 {"stitch_function_max_num": 1}, {"stitch_function_max_num": 8}]


def _run(sim: Callable[..., Any], program: Program, board: Any, options: dict[str, int]) -> str:
    try:
        return json.dumps(sim(program, board, options).to_json())
    except RuntimeError as e:
        return f"RuntimeError: {e}"


def _same(program: Program, board: Any, options: dict[str, int]) -> None:
    ours, reference = _run(simulate, program, board, options), _run(sim_reference.simulate, program, board, options)
    if reference.startswith("RuntimeError: the simulated runtime stopped with tasks never ready"):
        # the one change of the model since the reference: the kernel body's code after a loop
        # (paged_decode at stitch 1 and 8) is stitched with the loop's last device task it waits on
        # (sim.device_tasks); the reference waits for ever. Ours runs (tests/test_board_sim.py).
        assert not ours.startswith("RuntimeError"), ours
        return
    assert ours == reference


@pytest.fixture(params=["compiled", "python"])
def path(request, monkeypatch):
    """Each test runs on both fast paths (the compiled one is skipped without numba)."""
    if request.param == "compiled" and not sim_kernel._NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setenv("PYPTO_SIM_JIT", "1" if request.param == "compiled" else "0")
    return request.param


@pytest.fixture(scope="module")
def examples() -> dict[str, Program]:
    return {name: rec.program for name, rec in example_records() if rec.program.execute is not None}


def test_every_example_kernel_has_an_execute_graph(examples):
    assert len(examples) >= 15


@pytest.mark.parametrize("board", list(BOARDS))
def test_every_example_simulates_as_the_reference_model(examples, board, path):
    for name, program in examples.items():
        for options in OPTIONS:
            try:
                _same(program, BOARDS[board], options)
            except AssertionError:
                pytest.fail(f"{name} on {board} with {options}: the swimlane differs from the reference model")


def _vec(tile: tuple[int, int], body: Callable[[Any], Any]) -> pypto.JitKernel:
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = body(x)
    return k


def _mm(tiles: tuple[list[int], list[int], list[int]]) -> pypto.JitKernel:
    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes(*tiles)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return k


def _twice(x: Any) -> Any:  # reads x's tiles twice: the second read of a tile hits L2
    return pypto.exp(x) * 2.0 + x


def _cases() -> dict[str, tuple[pypto.JitKernel, tuple[torch.Tensor, ...]]]:
    x = torch.randn(48 * 64, 512)
    tiny = torch.randn(256, 1024)
    odd = torch.randn(4096, 20)  # 80-byte rows, not 32-byte aligned
    a, b = torch.randn(512, 768).half(), torch.randn(768, 640).half()
    return {
        "copy-48-tiles": (_vec((64, 512), pypto.clone), (x, torch.empty_like(x))),
        "tiny-tasks": (_vec((2, 128), _twice), (tiny, torch.empty_like(tiny))),
        "unaligned-rows": (_vec((256, 32), _twice), (odd, torch.empty_like(odd))),
        "matmul": (_mm(([128, 128], [64, 256], [256, 256])), (a, b, torch.empty(512, 640))),
        "matmul-small-tiles": (_mm(([64, 64], [64, 128], [64, 64])), (a, b, torch.empty(512, 640))),
    }


CASES = _cases()


@pytest.mark.parametrize("case", list(CASES))
def test_micro_kernels_simulate_as_the_reference_model(case, path):
    kernel, args = CASES[case]
    _, lw, _, _ = lowered(kernel, *args)
    for board in BOARDS.values():
        for options in OPTIONS[:3]:
            _same(lw.program, board, options)


def test_the_boards_lane_tasks_are_lane_tasks():
    """sim.py fills LaneTask's slots directly (faster than the frozen dataclass's __init__): the
    objects are equal to constructed ones, hash alike and stay frozen."""
    import dataclasses

    from pypto.boards.sim import lane_task
    from pypto.boards.swimlane import LaneTask

    args = (3, 7, 1.5, 2.5, 1, (0, 4), (1, 2), 1.25, 0, "i=3")
    made, plain = lane_task(*args), LaneTask(*args)
    assert type(made) is LaneTask and made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.start = 0.0  # type: ignore[misc]


def _program(rows: int = 512) -> Program:
    x = torch.randn(rows, 128)
    _, lw, _, _ = lowered(_vec((2, 128), _twice), x, torch.empty_like(x))
    return lw.program


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed")
def test_the_compiled_path_runs_and_its_tasks_are_columns(monkeypatch):
    """With numba the board returns its tasks and ready counters as columns; they read, compare,
    pickle and write JSON as the Python loop's tuples and lists do, and their metrics (computed
    from the columns) are the objects' metrics."""
    from pypto.boards.swimlane import PointColumns, TaskColumns, metrics

    program = _program()
    monkeypatch.setenv("PYPTO_SIM_JIT", "1")
    fast = simulate(program)
    monkeypatch.setenv("PYPTO_SIM_JIT", "0")
    slow = simulate(program)
    assert isinstance(fast.tasks, TaskColumns) and isinstance(slow.tasks, tuple)
    assert all(isinstance(v, PointColumns) for v in fast.counters.values())
    assert json.dumps(fast.to_json()) == json.dumps(slow.to_json())
    assert metrics(fast) == metrics(slow)  # from the columns (compiled), from the objects
    assert fast.tasks == slow.tasks and slow.tasks == tuple(fast.tasks) and len(fast.tasks) == len(slow.tasks)
    assert fast.tasks[3] == slow.tasks[3] and fast.tasks[-2:] == slow.tasks[-2:]
    assert hash(fast.tasks) == hash(slow.tasks)
    assert {k: list(v) for k, v in fast.counters.items()} == dict(slow.counters)
    assert fast.counters["ReadyCount_Total"][1] == slow.counters["ReadyCount_Total"][1]
    back = pickle.loads(pickle.dumps(fast))
    assert back.tasks == slow.tasks and type(back.tasks) is tuple and back.counters == slow.counters
    assert json.dumps(back.to_json()) == json.dumps(slow.to_json())


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed")
def test_task_columns_are_made_once_per_execute_graph():
    """The execute graph's columns are cached while the graph lives (a graph is simulated many
    times), and dropped with it."""
    from pypto.boards import sim

    program = _program(64)
    exe = program.execute
    elem = [b.dtype.nbytes for b in program.tiles.buffers]
    cols = sim.task_columns(exe, elem)
    assert cols is not None and sim.task_columns(exe, elem) is cols
    key = id(exe)
    del program, exe
    gc.collect()
    assert key not in sim._COLUMNS


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed")
def test_auto_mode_runs_a_small_graph_in_python_while_the_compiled_loop_loads(monkeypatch):
    """Without PYPTO_SIM_JIT, the first small graph of a process runs the Python loop (no wait for
    numba) and a thread loads the compiled loop, which the next runs use: the same swimlane."""
    from pypto.boards.swimlane import TaskColumns

    monkeypatch.delenv("PYPTO_SIM_JIT", raising=False)
    monkeypatch.setattr(sim_kernel, "_READY", False)
    monkeypatch.setattr(sim_kernel, "_WARMING", None)
    program = _program()
    first = simulate(program)
    assert type(first.tasks) is tuple
    assert sim_kernel._WARMING is not None
    sim_kernel._WARMING.join(120)
    assert sim_kernel.ready()
    second = simulate(program)
    assert isinstance(second.tasks, TaskColumns)
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())


@pytest.mark.skipif(not sim_kernel._NUMBA or not hasattr(__import__("os"), "fork"), reason="numba and fork")
def test_a_process_forked_while_the_compiled_loop_loads_keeps_the_python_loop(monkeypatch):
    """A worker's job child is forked from a template that may still be loading the compiled loop in
    a thread (which the child does not get, nor the locks it holds): the child runs the Python loop;
    a child forked after the load runs the compiled one."""
    import os
    import threading

    gate = threading.Event()
    monkeypatch.setattr(sim_kernel, "_READY", False)
    monkeypatch.setattr(sim_kernel, "_WARMING", None)
    monkeypatch.delenv("PYPTO_SIM_JIT", raising=False)
    sim_kernel.warm_in_background(gate.wait)  # a load that has not finished

    def child_mode() -> str:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.write(w, sim_kernel.mode().encode())
            os._exit(0)
        os.close(w)
        os.waitpid(pid, 0)
        with os.fdopen(r) as f:
            return f.read()

    assert child_mode() == "off"
    gate.set()
    assert sim_kernel._WARMING is not None
    sim_kernel._WARMING.join(10)
    assert sim_kernel.ready() and child_mode() == "auto"


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed")
def test_pipe_runs_past_the_dense_table_are_found_in_the_dict(monkeypatch):
    """The compiled loop keeps its pipe runs in a table up to DENSE_SQ slowdown steps and in a dict
    past them: with a table of one step, contended runs all go through the dict, same swimlane."""
    monkeypatch.setenv("PYPTO_SIM_JIT", "1")
    monkeypatch.setattr(sim_kernel, "DENSE_SQ", 1)
    kernel, args = CASES["tiny-tasks"]
    _, lw, _, _ = lowered(kernel, *args)
    for options in OPTIONS[:2]:
        _same(lw.program, SLOW_HBM, options)


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed")
def test_the_compiled_functions_are_wrapped_once_when_threads_ask_together():
    """The loading thread and a big graph's run can ask for the compiled loop at once: each function
    is wrapped once (wrapping a wrapper raised TypeError in one of them). A fresh process: this one
    has them already."""
    import subprocess
    import sys

    probe = ("import threading\n"
             "from pypto.boards import sim_kernel\n"
             "errors = []\n"
             "def ask():\n"
             "    try:\n"
             "        sim_kernel.compiled()\n"
             "    except Exception as e:\n"
             "        errors.append(repr(e))\n"
             "threads = [threading.Thread(target=ask) for _ in range(4)]\n"
             "for t in threads: t.start()\n"
             "for t in threads: t.join()\n"
             "print(errors)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]", out.stdout
