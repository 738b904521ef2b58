"""The execute graph's task columns (`ExecColumns`), which the compiler makes with the tasks and the
sim board reads instead of the Task objects (issue 19 item 3: a graph's first simulation).

The columns are the tasks, field for field: compared with the tasks of every example kernel and of
micro-kernels (a region read twice, matmuls, a reshaped buffer); the GM regions' ids are one per
distinct (buffer, offset, shape, layout). A graph without columns (read back from a record) is
simulated from its Task objects: the same swimlane.
"""

from __future__ import annotations

import dataclasses
import json
import math
from itertools import chain

import numpy as np
import pytest
import torch
from support import example_records, lowered

import pypto
from pypto.boards import sim, sim_kernel
from pypto.boards.sim import simulate
from pypto.compiler.execute_ir import CORE_CODES, ExecGraph, intern_regions
from pypto.compiler.manager import Program
from pypto.compiler.serialize import execute_from, execute_json
from pypto.compiler.tile_ir import Region


def _key(r: Region) -> tuple[object, ...]:
    return (r.buffer, r.offset, r.shape, r.layout)


def _check(exe: ExecGraph) -> None:
    """`exe.columns` hold exactly its tasks."""
    c = exe.columns
    assert c is not None
    tasks = exe.tasks
    n = len(tasks)
    assert [t.id for t in tasks] == list(range(n))
    assert c.leaf.tolist() == [t.leaf for t in tasks]
    assert c.core.tolist() == [CORE_CODES[t.core] for t in tasks]
    assert c.instance.tolist() == [t.instance for t in tasks] == list(c.instances)
    assert list(c.coord) == [t.coord for t in tasks] and list(c.preds) == [t.preds for t in tasks]
    assert c.pred_ptr.tolist() == [0, *np.cumsum([len(t.preds) for t in tasks]).tolist()]
    assert c.pred_idx.tolist() == [p for t in tasks for p in t.preds]
    regions = [*chain.from_iterable(t.reads for t in tasks), *chain.from_iterable(t.writes for t in tasks)]
    ids = [*c.rd_reg.tolist(), *c.wr_reg.tolist()]
    assert c.rd_ptr.tolist() == [0, *np.cumsum([len(t.reads) for t in tasks]).tolist()]
    assert c.wr_ptr.tolist() == [0, *np.cumsum([len(t.writes) for t in tasks]).tolist()]
    # one id per distinct region, numbered in order of first access (reads, then writes)
    first: dict[tuple[object, ...], int] = {}
    assert ids == [first.setdefault(_key(r), len(first)) for r in regions]
    by_id = {i: r for i, r in zip(ids, regions)}
    assert c.reg_buffer.tolist() == [by_id[i].buffer for i in range(len(first))]
    assert c.reg_elems.tolist() == [math.prod(by_id[i].shape) for i in range(len(first))]


@pytest.fixture(scope="module")
def examples() -> dict[str, Program]:
    return {name: rec.program for name, rec in example_records() if rec.program.execute is not None}


def test_every_example_graph_carries_its_tasks_as_columns(examples):
    for name, program in examples.items():
        assert program.execute is not None
        try:
            _check(program.execute)
        except AssertionError:
            pytest.fail(f"{name}: the execute graph's columns are not its tasks")


def _reshaped(x):  # one buffer seen through two layouts
    return pypto.reshape(pypto.exp(pypto.reshape(x, [x.shape[0] * 2, x.shape[1] // 2])), list(x.shape))


@pytest.mark.parametrize("case", ["read-twice", "reshaped", "matmul"])
def test_micro_kernel_graphs_carry_their_tasks_as_columns(case):
    if case == "matmul":
        @pypto.jit
        def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
            pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
            c[:] = pypto.matmul(a, b, pypto.DT_FP32)
        a, b = torch.randn(256, 384).half(), torch.randn(384, 320).half()
        _, lw, _, _ = lowered(k, a, b, torch.empty(256, 320))
    else:
        body = (lambda x: pypto.exp(x) * 2.0 + x) if case == "read-twice" else _reshaped

        @pypto.jit
        def k(x: pypto.Tensor(), out: pypto.Tensor()):
            pypto.set_vec_tile_shapes(2, 128)
            out[:] = body(x)
        x = torch.randn(64, 256)
        _, lw, _, _ = lowered(k, x, torch.empty_like(x))
    assert lw.program.execute is not None
    _check(lw.program.execute)


def test_intern_regions_gives_one_id_per_distinct_region():
    lay = (8, 8)
    regions = [Region(0, lay, (0, 0), (4, 8)), Region(0, (8, 8), (0, 0), (4, 8)), Region(0, (64,), (0,), (32,)),
               Region(1, lay, (0, 0), (4, 8)), Region(0, lay, (4, 0), (4, 8)), Region(0, lay, (0, 0), (2, 8)),
               Region(0, (64,), (0,), (32,)), Region(0, lay, (4, 0), (4, 8))]
    ids, buffers, elems = intern_regions(regions)
    assert ids == [0, 0, 1, 2, 3, 4, 1, 3]
    assert buffers.tolist() == [0, 0, 1, 0, 0] and elems.tolist() == [32, 32, 32, 32, 16]
    ids, buffers, elems = intern_regions([])
    assert ids == [] and len(buffers) == len(elems) == 0


@pytest.mark.parametrize("jit", ["1", "0"])
def test_a_graph_without_columns_simulates_from_its_tasks_alike(examples, monkeypatch, jit):
    """A graph read back from its JSON (no columns) and one whose columns were dropped give the same
    swimlane as the compiler's graph; the board's own columns of it are the compiler's."""
    if jit == "1" and not sim_kernel._NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setenv("PYPTO_SIM_JIT", jit)
    for name in sorted(examples)[:6]:
        program = examples[name]
        exe = program.execute
        assert exe is not None and exe.columns is not None
        ours = json.dumps(simulate(program).to_json())
        for plain in (execute_from(execute_json(exe)), dataclasses.replace(exe, columns=None)):
            assert plain.columns is None and plain == exe
            assert json.dumps(simulate(dataclasses.replace(program, execute=plain)).to_json()) == ours, name
            if jit == "1":
                elem = [b.dtype.nbytes for b in program.tiles.buffers]
                a, b = sim.task_columns(exe, elem), sim.task_columns(plain, elem)
                assert a is not None and b is not None
                for f in dataclasses.fields(a):
                    x, y = getattr(a, f.name), getattr(b, f.name)
                    assert (x.tolist() if isinstance(x, np.ndarray) else list(x)) == \
                        (y.tolist() if isinstance(y, np.ndarray) else list(y)), (name, f.name)


def test_the_execute_stage_reads_graph_partitions_copies_alike(examples):
    """The execute stage of a tile graph graph partition made uses what partition noted of it
    (`CopyFacts`: the copies' buffers need no GM index, their regions' ids follow from their buffers);
    the same tiles as another object (no notes) give the same tasks and columns."""
    from pypto.compiler.execute import build
    from pypto.compiler.tile_ir import copy_facts

    noted = 0
    for name, program in examples.items():
        tiles, subgraphs = program.tiles, program.subgraphs
        assert tiles is not None and subgraphs is not None
        facts = copy_facts(tiles)
        noted += facts is not None and facts.first_xfer < len(tiles.buffers)
        ours, plain = build(tiles, subgraphs), build(dataclasses.replace(tiles), subgraphs)
        assert ours == plain == program.execute, name
        assert ours.columns is not None and plain.columns is not None
        for f in dataclasses.fields(ours.columns):
            x, y = getattr(ours.columns, f.name), getattr(plain.columns, f.name)
            assert (x.tolist() if isinstance(x, np.ndarray) else list(x)) == \
                (y.tolist() if isinstance(y, np.ndarray) else list(y)), (name, f.name)
        _check(ours)
    assert noted >= 3  # examples whose partition made copies


@pytest.mark.skipif(not sim_kernel.available(), reason="numba is not installed (or PYPTO_SIM_JIT=0)")
@pytest.mark.parametrize("ordered", [True, False])
def test_successors_and_device_tasks_on_columns_match_a_plain_walk(ordered):
    """The compiled `successors` (one counting pass) is the stable argsort of the predecessors it replaced, and
    `device_of` (a forward pass when every predecessor precedes its task, else the depth-first walk) raises each
    task to its predecessors' latest device task: on random graphs in task order and out of it (where the forward
    pass must give up and walk)."""
    rng = np.random.default_rng(7)
    n = 400
    order = np.arange(n) if ordered else rng.permutation(n)  # a topological order of the ids
    rank = np.argsort(order)
    preds = [sorted({int(order[j]) for j in rng.integers(0, max(1, rank[t]), size=rng.integers(0, 6))})
             if rank[t] else [] for t in range(n)]
    if not ordered:
        assert any(p > t for t in range(n) for p in preds[t])  # the forward pass meets a later predecessor
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(p) for p in preds], out=ptr[1:])
    idx = np.array([p for ps in preds for p in ps], dtype=np.int32)
    succ_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(idx, minlength=n), out=succ_ptr[1:])
    jit = sim_kernel.compiled()
    by_sort = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))[np.argsort(idx, kind="stable")]
    assert jit.successors(ptr, idx, succ_ptr).tolist() == by_sort.tolist()
    window = rng.integers(0, 50, size=n).astype(np.int64)
    want = window.copy()
    for t in order.tolist():  # each task after its predecessors
        want[t] = max([want[t], *(want[p] for p in preds[t])])
    assert jit.device_of(window, ptr, idx).tolist() == want.tolist()


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed (the columns are its compiled path's)")
def test_readers_of_a_run_give_from_its_columns_what_they_give_from_its_tasks(examples, monkeypatch):
    """The lanes a run used, its tasks per core type, its bottleneck and the editor's task times (`server.index`)
    read the sim board's task columns without making a LaneTask each: the same as from the tasks themselves."""
    from pypto.boards.profile import bottleneck
    from pypto.boards.swimlane import TaskColumns, lanes_ran, tasks_per_core
    from server.index import _task_times

    monkeypatch.setenv("PYPTO_SIM_JIT", "1")
    checked = 0
    for name, program in examples.items():
        run = simulate(program, "a2a3")
        assert isinstance(run.tasks, TaskColumns), name
        plain = dataclasses.replace(run, tasks=tuple(run.tasks))
        assert lanes_ran(run) == lanes_ran(plain) == {t.lane for t in run.tasks}, name
        assert tasks_per_core(run) == tasks_per_core(plain), name
        assert bottleneck(run) == bottleneck(plain), name
        a, b = _task_times(run), _task_times(plain)
        assert all(np.array_equal(x, y) for x, y in zip(a[:3], b[:3])) and a[3:] == b[3:], name
        checked += 1
    assert checked >= 10


_LOAD_AND_EXIT = """
import sys
sys.path.insert(0, "tests")
import test_health as health
from pypto.boards import sim_kernel
from pypto.record import compile_record, profile
profile(compile_record(health.KERNELS["many_small"]), "sim")  # a small graph: the Python loop, and the loader starts
print(sim_kernel._WARMING is not None and sim_kernel._WARMING.is_alive())
"""


@pytest.mark.skipif(not sim_kernel._NUMBA, reason="numba is not installed (no loader thread starts)")
def test_a_process_that_ends_while_the_loader_compiles_waits_for_it_and_leaves_the_cache(tmp_path):
    """A short process (a CLI command, a test's script) whose first sim run started the loader thread ends while numba
    still compiles into an empty cache: it waits for the thread at exit, so it exits cleanly (a thread inside LLVM at
    interpreter teardown once aborted CI's run) and leaves numba's cache for the next process."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(root), "PYPTO_SIM_JIT": ""}
    out = subprocess.run([sys.executable, "-c", _LOAD_AND_EXIT], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "True"  # the loader was still at work when the script ended
    assert any(p.suffix == ".nbi" for p in tmp_path.rglob("*")), sorted(tmp_path.rglob("*"))
