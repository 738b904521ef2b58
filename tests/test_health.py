"""The health report: every rule has a kernel here that triggers it and one that does not.

Each finding is checked for its rule id, severity, numbers and the line of this file it
points at (marker comments `# health: NAME`); a finding with a mechanical fix is applied
to this file's text, the copy is loaded as a module, the kernel recompiled and reported
again, and the finding must be gone. Every example kernel reports without exceptions, as
JSON, pointing into its own file.
"""

from __future__ import annotations

import collections
import functools
import json
import math
import pathlib
import re

import pytest
from support import example_records

import pypto
from pypto.analysis import thresholds
from pypto.analysis.findings import SEVERITIES, Finding, TextEdit
from pypto.analysis.health import LEVEL_NAMES, RULES, HealthReport, health_report
from pypto.analysis.thresholds import THRESHOLDS, Thresholds
from pypto.boards.profile import bottleneck
from pypto.cli import load_module
from pypto.compiler import block as block_module
from pypto.frontend.jit import JitKernel
from pypto.record import CompileRecord, compile_record, profile
from pypto.target import load as load_board

HERE = pathlib.Path(__file__).resolve()
TEXT = HERE.read_text()
LINES = TEXT.splitlines()
F32, F16 = pypto.DT_FP32, pypto.DT_FP16


def t32(*shape: int) -> pypto.Tensor:
    return pypto.Tensor(list(shape), F32)


def t16(*shape: int) -> pypto.Tensor:
    return pypto.Tensor(list(shape), F16)


def _line(marker: str) -> int:
    (n,) = [k + 1 for k, text in enumerate(LINES) if text.rstrip().endswith(f"# health: {marker}")]
    return n


# ---- kernels ------------------------------------------------------------------------------------

@pypto.jit
def fan_out(x: t32(64, 128), out: t32(64, 128)):  # health: fan-out def
    pypto.set_vec_tile_shapes(64, 128)
    out[:] = (x * 1.0 + x * 2.0) + (x * 3.0 + x * 4.0) + (x * 5.0 + x * 6.0) + (x * 7.0 + x * 8.0)


@pypto.jit
def few_readers(x: t32(64, 128), out: t32(64, 128)):
    pypto.set_vec_tile_shapes(64, 128)
    out[:] = x * 2.0 + x


@pypto.jit
def tail_vec(x: t32(64, 600), out: t32(64, 600)):
    pypto.set_vec_tile_shapes(32, 512)  # health: tail vec
    out[:] = pypto.exp(x)


@pypto.jit
def no_tail(x: t32(64, 512), out: t32(64, 512)):
    pypto.set_vec_tile_shapes(32, 512)  # health: no tail
    out[:] = pypto.exp(x)


@pypto.jit
def tail_cube(a: t16(96, 256), b: t16(256, 128), c: t32(96, 128)):
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])  # health: tail cube
    c[:] = pypto.matmul(a, b, F32)


@pypto.jit
def unaligned(x: t32(64, 100), out: t32(64, 100)):
    pypto.set_vec_tile_shapes(32, 64)  # health: unaligned tile
    out[:] = pypto.exp(x)  # health: unaligned op


@pypto.jit
def aligned_tail(x: t32(64, 104), out: t32(64, 104)):
    pypto.set_vec_tile_shapes(32, 64)
    out[:] = pypto.exp(x)


@pypto.jit
def single_buffered(x: t32(64, 256), y: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(64, 256)  # health: single buffered
    out[:] = x + y


@pypto.jit
def double_buffered(x: t32(64, 256), y: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(16, 256)
    out[:] = x + y


@pypto.jit
def cloned(x: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(32, 128)
    a = pypto.exp(x)
    b = a.clone()  # health: clone
    out[:] = b + a


@pypto.jit
def via_local(x: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(32, 128)
    t = pypto.tensor([64, 256], F32)
    t[:] = pypto.exp(x)  # health: local write
    out[:] = t * 2.0  # health: local read


@pypto.jit
def direct(x: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(32, 128)
    a = pypto.exp(x)
    out[:] = a * 2.0 + a


@pypto.jit
def read_twice(x: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(32, 128)
    out[:] = x * x + x  # health: read twice


@pypto.jit
def read_once(x: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(32, 128)
    v = x + 0.0
    out[:] = v * v + v


@pypto.jit
def many_small(x: t32(512, 256), out: t32(512, 256)):
    pypto.set_vec_tile_shapes(8, 256)  # health: many small
    out[:] = x + 1.0


@pypto.jit
def long_tasks(x: t32(6144, 512), out: t32(6144, 512)):
    pypto.set_vec_tile_shapes(64, 512)
    out[:] = pypto.sin(pypto.exp(x))


@pypto.jit
def heterogeneous(x: t32(36, 600), out: t32(36, 600)):
    pypto.set_vec_tile_shapes(8, 512)  # health: heterogeneous
    out[:] = pypto.exp(x)


@pypto.jit
def homogeneous(x: t32(64, 512), out: t32(64, 512)):
    pypto.set_vec_tile_shapes(8, 512)
    out[:] = pypto.exp(x)


@pypto.jit
def spilling(x: t32(16, 3000), y: t32(16, 3000), out: t32(16, 3000)):
    pypto.set_vec_tile_shapes(16, 512)  # health: spilling
    a = pypto.exp(x)
    b = pypto.sin(y)
    c = a * b
    out[:] = c + a * pypto.cos(b) - pypto.amax(c, -1, keepdim=True)


@pypto.jit
def not_spilling(x: t32(16, 3000), y: t32(16, 3000), out: t32(16, 3000)):
    pypto.set_vec_tile_shapes(8, 512)
    a = pypto.exp(x)
    b = pypto.sin(y)
    c = a * b
    out[:] = c + a * pypto.cos(b) - pypto.amax(c, -1, keepdim=True)


@pypto.jit
def split_rows(x: t32(64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(4, 64)  # health: split rows
    e = pypto.exp(x - pypto.amax(x, -1, keepdim=True))
    out[:] = e / pypto.sum(e, -1, keepdim=True)


@pypto.jit
def sin_chain(x: t32(16, 512), out: t32(16, 512)):
    pypto.set_vec_tile_shapes(16, 512)  # health: sin chain
    y = x
    for _ in range(60):
        y = pypto.sin(y)
    out[:] = y


@pypto.jit
def carried(x: t32(8, 64, 256), out: t32(64, 256)):
    pypto.set_vec_tile_shapes(64, 256)
    out[:] = pypto.exp(x[0:1, ...].reshape([64, 256]))
    for i in pypto.loop(1, 8, 1, name="L", idx_name="i"):
        out[:] = out * 0.5 + x[i:i + 1, ...].reshape([64, 256])  # health: carried


KERNELS: dict[str, JitKernel] = {k: v for k, v in dict(globals()).items() if isinstance(v, JitKernel)}


# ---- helpers ------------------------------------------------------------------------------------

@functools.cache
def record(name: str) -> CompileRecord:
    return profile(compile_record(KERNELS[name]), "sim")


@functools.cache
def report(name: str) -> HealthReport:
    return health_report(record(name))


def fired(name: str, rule: str) -> list[Finding]:
    return report(name).of(rule)


def one(name: str, rule: str) -> Finding:
    found = fired(name, rule)
    assert len(found) == 1, (rule, [f.title for f in report(name).findings])
    return found[0]


def text_at(f: Finding) -> str:
    """The source text a finding's range covers (in this file)."""
    w = f.where
    assert w is not None and w.file == str(HERE) and w.line == w.end_line
    return LINES[w.line - 1][w.col:w.end_col]


def apply(text: str, edits: tuple[TextEdit, ...]) -> str:
    lines = text.splitlines(keepends=True)

    def offset(line: int, col: int) -> int:
        return sum(len(x) for x in lines[:line - 1]) + col

    for e in sorted(edits, key=lambda e: (e.where.line, e.where.col), reverse=True):
        a, b = offset(e.where.line, e.where.col), offset(e.where.end_line, e.where.end_col)
        text = text[:a] + e.text + text[b:]
    return text


def refixed(tmp_path: pathlib.Path, name: str, f: Finding) -> tuple[str, HealthReport]:
    """Apply a finding's edits to this file, load the copy, recompile `name` and report again."""
    assert f.edits
    fixed = apply(TEXT, f.edits)
    path = tmp_path / f"health_fixed_{name}.py"
    path.write_text(fixed)
    mod = load_module(path, prefix="pypto_health_")
    return fixed, health_report(profile(compile_record(getattr(mod, name)), "sim"))


# ---- tensor graph -------------------------------------------------------------------------------

def test_high_fan_out_points_at_the_parameter_read_by_eight_ops():
    f = one("fan_out", "tensor.high-fan-out")
    assert f.severity == "info" and f.level == "tensor"
    assert f.numbers["readers"] == 8 and f.numbers["threshold"] == THRESHOLDS.fan_out
    assert f.where is not None and f.where.line == _line("fan-out def")  # a parameter: its name in the def
    assert text_at(f) == "x"
    assert "`x`" in f.title
    assert not fired("few_readers", "tensor.high-fan-out")
    assert report("fan_out").stats["tensor"]["max_fan_out"] == 8


# ---- tile graph ---------------------------------------------------------------------------------

def test_tail_waste_names_the_tail_points_at_the_call_and_its_edit_removes_it(tmp_path):
    f = one("tail_vec", "tile.tail-waste")
    assert f.severity == "warning" and f.level == "tile"
    assert f.numbers["waste"] == pytest.approx(1 - 600 / 1024, abs=1e-4)
    assert f.numbers["tails"] == ["600 = 1 x 512 + 88"]
    assert f.where is not None and f.where.line == _line("tail vec")
    assert text_at(f) == "pypto.set_vec_tile_shapes(32, 512)"
    assert f.numbers["suggested_dims"] == [32, 600] and "set_vec_tile_shapes(32, 600)" in f.suggestion
    (edit,) = f.edits
    assert edit.text == "pypto.set_vec_tile_shapes(32, 600)"
    fixed, again = refixed(tmp_path, "tail_vec", f)
    assert "pypto.set_vec_tile_shapes(32, 600)  # health: tail vec" in fixed
    assert not again.of("tile.tail-waste")
    assert again.stats["tile"]["tail_waste"]["0"]["waste"] == 0.0
    assert not fired("no_tail", "tile.tail-waste")
    assert report("no_tail").stats["tile"]["tail_waste"]["0"]["waste"] == 0.0


def test_tail_waste_of_a_cube_tile_edits_the_cube_call(tmp_path):
    f = one("tail_cube", "tile.tail-waste")
    assert f.numbers["waste"] == pytest.approx(0.25) and f.numbers["tails"] == ["96 = 1 x 64 + 32"]
    assert f.where is not None and f.where.line == _line("tail cube")
    assert text_at(f) == "pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])"
    (edit,) = f.edits
    assert edit.text == "pypto.set_cube_tile_shapes([32, 96], [64, 128], [64, 64])"
    _, again = refixed(tmp_path, "tail_cube", f)
    assert not again.of("tile.tail-waste")


def test_a_tail_no_tile_size_can_remove_has_no_edit_and_says_to_pad():
    f = one("unaligned", "tile.tail-waste")
    assert f.where is not None and f.where.line == _line("unaligned tile")
    assert f.edits == () and "pad 100 to 128" in f.suggestion


def test_an_unaligned_last_dim_points_at_the_op_and_names_the_padding():
    f = one("unaligned", "tile.last-dim-unaligned")
    assert f.severity == "warning"
    assert f.numbers["last_dim"] == 100 and f.numbers["elem_bytes"] == 4 and f.numbers["padded_to"] == 104
    assert f.numbers["tile_last_dims"] == [36]
    # the 36-wide tail rows: 144 bytes moved as 160, computed as one 256-byte repeat each
    assert f.numbers["moved_waste"] == pytest.approx(16 / (256 + 160), abs=1e-4)
    assert f.numbers["vector_waste"] == pytest.approx(112 / 512, abs=1e-4)
    assert f.where is not None and f.where.line == _line("unaligned op")
    assert text_at(f) == "pypto.exp(x)"
    assert not fired("aligned_tail", "tile.last-dim-unaligned")  # 104 fp32 = 416 bytes: tails of 40 are aligned


def test_a_leaf_that_cannot_double_buffer_is_a_buffer_peak_warning():
    f = one("single_buffered", "tile.buffer-peak")
    assert f.severity == "warning"
    assert f.numbers["memory"] == "UB" and f.numbers["peak_bytes"] == 2 * 64 * 256 * 4
    assert f.numbers["capacity_bytes"] == load_board()["buffers_bytes"]["UB"]
    assert f.numbers["double_buffered"] is False
    assert f.where is not None and f.where.line == _line("single buffered")
    assert "set_vec_tile_shapes(32, 256)" in f.suggestion
    assert not fired("double_buffered", "tile.buffer-peak")
    peak = report("single_buffered").stats["tile"]["peak_memory"]["UB"]
    assert peak["peak_bytes"] == 131072 and peak["share"] == pytest.approx(131072 / 196608, abs=1e-4)


def test_a_clone_and_a_round_trip_through_a_local_tensor_are_redundant_copies():
    f = one("cloned", "tile.redundant-copy")
    assert f.severity == "warning"
    assert f.numbers["tiles"] == 4 and f.numbers["bytes"] == 64 * 256 * 4
    assert f.where is not None and f.where.line == _line("clone") and text_at(f) == "a.clone()"
    g = one("via_local", "tile.redundant-copy")
    assert g.numbers["tiles"] == 4 and g.numbers["read_at"] == [_line("local read")]
    assert g.where is not None and g.where.line == _line("local write")
    assert report("via_local").stats["tile"]["round_trips"] == 4
    assert not fired("direct", "tile.redundant-copy")
    # a value carried from one loop iteration to the next must go through GM: not redundant
    assert not fired("carried", "tile.redundant-copy")


def test_one_task_loading_the_same_tile_twice_is_a_duplicate_load():
    f = one("read_twice", "tile.duplicate-load")
    assert f.severity == "info"
    # per task: x's tile loaded for each operand of x * x and again for + x
    assert f.numbers["extra_loads"] == 2 * 4 and f.numbers["bytes"] == 8 * 32 * 128 * 4 and f.numbers["tasks"] == 4
    assert f.numbers["buffers"] == ["x"]
    assert f.where is not None and f.where.line == _line("read twice")
    assert not fired("read_once", "tile.duplicate-load")


# ---- execute graph ------------------------------------------------------------------------------

def test_fewer_tasks_than_cores_is_low_parallelism():
    f = one("no_tail", "execute.low-parallelism")
    assert f.severity == "warning" and f.level == "execute"
    tried = f.numbers["try"]  # the shape it proposes, for the board to check (pypto.analysis.advice)
    assert {k: v for k, v in f.numbers.items() if k != "try"} == \
        {"core": "AIV", "tasks": 2, "max_width": 2, "cores": 48, "threshold": THRESHOLDS.parallelism}
    assert f.where is not None and f.where.line == _line("no tail")
    assert len(tried) == 1 and tried[0]["call"] in f.suggestion and tried[0]["config"] == 0
    assert not fired("many_small", "execute.low-parallelism")  # 64 independent tasks
    ex = report("many_small").stats["execute"]
    assert ex["tasks"] == 64 and ex["max_width"] == 64 and ex["leaves"] == 1


def test_many_leaves_for_few_tasks_is_heterogeneous():
    f = one("heterogeneous", "execute.heterogeneous")
    assert f.severity == "warning"
    assert f.numbers["leaves"] == 4 and f.numbers["tasks"] == 10 and f.numbers["homogeneity"] == 0.4
    assert f.where is not None and f.where.line == _line("heterogeneous")
    assert "tile.tail-waste" in f.suggestion
    assert not fired("homogeneous", "execute.heterogeneous")
    assert report("homogeneous").stats["execute"]["homogeneity"] == pytest.approx(1 / 8)


def test_tasks_shorter_than_the_scheduler_can_feed_are_small_tasks():
    board = load_board()
    cpu = board["aicpu"]
    floor = board["cores"]["AIV"] * (cpu["schedule_cycles"] + cpu["submit_cycles"] + cpu["completion_cycles"]
                                     + cpu["resolve_cycles"]) / cpu["sched_threads"]
    f = one("many_small", "execute.small-tasks")
    assert f.severity == "warning"
    assert f.numbers["min_task_cycles"] == pytest.approx(floor) and f.numbers["avg_task_cycles"] < floor
    assert f.where is not None and f.where.line == _line("many small")
    # 2,166 cycles against 8,928: three doublings of the row count, which UB has room for
    assert "set_vec_tile_shapes(64, 256)" in f.suggestion
    assert not fired("long_tasks", "execute.small-tasks")
    cyc = report("long_tasks").stats["execute"]["task_cycles"]
    assert cyc["min"] == cyc["avg"] == cyc["max"] > floor


# ---- block level --------------------------------------------------------------------------------

def test_a_leaf_that_spills_is_an_error_and_the_suggested_tile_does_not_spill(monkeypatch):
    """`spilling`'s leaf fits in the depth-first order the block stage tries where program order spills
    (`block_order`); in program order it spills one buffer: the block stage keeps program order here, as it does
    for a block no order helps."""
    assert not fired("spilling", "block.spills")  # as compiled: the depth-first order fits
    monkeypatch.setattr(block_module, "dfs_order", lambda order, ops: list(order))
    monkeypatch.setattr(block_module, "streamed_loads", lambda order, ops: frozenset())

    def spills(name: str) -> HealthReport:
        return health_report(profile(compile_record(KERNELS[name].fresh()), "sim"))  # not the cached compile

    (f,) = spills("spilling").of("block.spills")
    assert f.severity == "error" and f.level == "block"
    assert f.numbers["spills"] >= 1
    assert f.where is not None and f.where.line == _line("spilling")
    assert "set_vec_tile_shapes(8, 512)" in f.suggestion
    assert not spills("not_spilling").of("block.spills")  # the suggested tile
    assert spills("not_spilling").stats["block"]["spills"] == 0


def test_pipes_waiting_on_each_other_beyond_one_gm_round_trip_is_a_schedule_gap():
    """A row reduced over four tiles: the reductions wait on each other tile by tile, far beyond the busiest
    pipe's work plus the one GM read and write latency every task has."""
    f = one("split_rows", "block.schedule-gap")
    assert f.severity == "warning"
    assert f.numbers["ratio"] >= f.numbers["floor_ratio"] >= THRESHOLDS.schedule_gap
    assert f.numbers["scheduled_cycles"] == pytest.approx(f.numbers["ratio"] * f.numbers["min_cycles"], rel=1e-3)
    assert f.numbers["min_cycles"] == max(f.numbers["pipe_cycles"].values())
    mem = load_board("a2a3")["memory"]
    assert f.numbers["floor_cycles"] == pytest.approx(
        f.numbers["min_cycles"] + mem["gm_read_latency"] + mem["gm_write_latency"], abs=0.2)
    assert f.where is not None and f.where.line == _line("split rows")
    assert not fired("sin_chain", "block.schedule-gap")


def test_a_task_that_is_one_gm_round_trip_is_no_schedule_gap():
    """Load, exp, store: the task is all latency (the busiest pipe is a small share of it), which no
    schedule hides: the gap is measured against the busiest pipe plus one GM read and write."""
    leaf = report("no_tail").stats["block"]["leaf_stats"][0]
    assert leaf["gap"] >= THRESHOLDS.schedule_gap > leaf["floor_gap"]
    assert not fired("no_tail", "block.schedule-gap")


def test_a_leaf_running_at_its_busiest_pipe_is_pipe_bound():
    f = one("sin_chain", "block.pipe-bound")
    assert f.severity == "info"
    assert f.numbers["busiest_pipe"] == "V" and f.numbers["ratio"] <= THRESHOLDS.pipe_bound
    assert f.where is not None and f.where.line == _line("sin chain")
    assert "vector" in f.title
    assert not fired("no_tail", "block.pipe-bound")
    leaf = report("sin_chain").stats["block"]["leaf_stats"][0]
    assert leaf["busiest_pipe"] == "V" and leaf["double_buffered"] and leaf["spills"] == 0


# ---- board --------------------------------------------------------------------------------------

def test_low_utilization_and_its_absence():
    f = one("no_tail", "board.low-utilization")
    assert f.severity == "warning" and f.level == "board"
    assert f.numbers["utilization"] < THRESHOLDS.utilization and f.numbers["lanes"] == 48
    assert "only 2 AIV tasks" in f.suggestion
    assert not fired("long_tasks", "board.low-utilization")
    assert report("long_tasks").stats["board"]["utilization"] >= THRESHOLDS.utilization


def test_cores_waiting_with_ready_tasks_is_scheduler_bound():
    f = one("many_small", "board.scheduler-bound")
    assert f.numbers["scheduler_bubble_share"] >= THRESHOLDS.scheduler_bubble and f.numbers["tasks"] == 64
    assert f.where is not None and f.where.line == _line("many small")
    assert "set_vec_tile_shapes(16, 256)" in f.suggestion
    assert not fired("long_tasks", "board.scheduler-bound")


def test_a_loop_carrying_a_value_is_dependency_bound_at_the_loop_body():
    f = one("carried", "board.dependency-bound")
    assert f.numbers["critical_share"] >= THRESHOLDS.critical_path and f.numbers["critical_path_tasks"] >= 2
    assert f.where is not None and f.where.line == _line("carried")
    assert not fired("long_tasks", "board.dependency-bound")
    assert not fired("many_small", "board.dependency-bound")


def test_the_bound_is_reported_with_a_run_only():
    f = one("many_small", "board.bound")
    assert f.severity == "info" and f.numbers["bound"] == bottleneck(record("many_small").run)[0] == "scheduling"
    bare = health_report(compile_record(KERNELS["many_small"]))
    assert not bare.of("board.bound") and bare.stats["board"] == {"available": False}
    assert not [f for f in bare.findings if f.level == "board"]


# ---- the report as a whole ----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_report_has_all_levels_json_and_sorted_findings_in_this_file(name):
    rep = report(name)
    assert set(rep.stats) == set(LEVEL_NAMES)
    assert rep.stats["tensor"]["ops"] > 0 and rep.stats["tile"]["ops"] > 0 and rep.stats["execute"]["tasks"] > 0
    assert rep.stats["block"]["leaves"] > 0 and rep.stats["board"]["makespan_us"] > 0
    doc = json.loads(json.dumps(rep.to_json()))
    assert [Finding.from_json(f) for f in doc["findings"]] == list(rep.findings)
    order = [(SEVERITIES.index(f.severity), f.where.line if f.where else 0) for f in rep.findings]
    assert order == sorted(order)
    for f in rep.findings:
        assert f.where is not None and f.where.file == str(HERE) and f.where.line > 0
        assert f.why and f.suggestion and f.title and f.rule.startswith(f.level + ".")
        assert all(isinstance(k, str) for k in f.numbers)


def test_the_stats_are_there_when_no_rule_fires_at_a_level():
    rep = report("homogeneous")
    assert not [f for f in rep.findings if f.level == "tile"]
    tile = rep.stats["tile"]
    assert tile["loads"] == tile["stores"] == 8 and tile["compute"] == 8 and tile["depth"] == 3
    assert tile["max_fan_in"] == 1 and tile["max_fan_out"] == 1 and tile["width"] == 8
    assert rep.stats["tensor"]["ops"] >= 2 and rep.stats["tensor"]["depth"] >= 2


@pytest.mark.parametrize("stage", ["tensor", "tile", "block", "execute"])
def test_a_compile_stopped_at_any_stage_reports_what_it_has(stage):
    rep = health_report(compile_record(KERNELS["tail_vec"], stage=stage))
    json.dumps(rep.to_json())
    reached = {"tensor": {"tensor"}, "tile": {"tensor", "tile"}, "block": {"tensor", "tile", "block"},
               "execute": {"tensor", "tile", "block", "execute"}}[stage]
    for level in LEVEL_NAMES:
        assert (rep.stats[level] == {"available": False}) == (level not in reached), level
    assert bool(rep.of("tile.tail-waste")) == (stage != "tensor")
    assert {f.level for f in rep.findings} <= reached


def test_every_rule_is_tabled_with_its_threshold_and_tested_here():
    tabled = re.findall(r"^\| `([a-z]+\.[a-z0-9-]+)`", thresholds.__doc__ or "", re.M)
    assert tabled == list(RULES)
    for rule in RULES:
        assert f'"{rule}"' in TEXT, f"no test names {rule}"
    for name in vars(Thresholds()):
        assert f"`{name} = " in (thresholds.__doc__ or ""), name


def test_thresholds_decide_and_a_record_read_back_from_json_reports_the_same():
    rec = record("tail_vec")
    assert not health_report(rec, Thresholds(tail_waste=0.5)).of("tile.tail-waste")
    back = CompileRecord.loads(rec.dumps())
    assert health_report(back).to_json() == report("tail_vec").to_json()


def test_every_example_reports_as_json_pointing_into_its_own_file():
    reports = {}
    for name, rec in example_records():
        rep = reports[name] = health_report(profile(rec, "sim"))
        json.dumps(rep.to_json())
        assert set(rep.stats) == set(LEVEL_NAMES), name
        assert any(f.rule == "board.bound" for f in rep.findings), name
        for f in rep.findings:
            assert f.where is not None and f.where.file == rec.source.file, (name, f.rule)
            assert f.severity in SEVERITIES
            for e in f.edits:  # an edit replaces exactly the tile-shape call the finding points at
                assert (e.where.line, e.where.col, e.where.end_col) == (f.where.line, f.where.col, f.where.end_col)
        ex = rep.stats["execute"]  # the task graph's shape, against a plain longest-path walk of its arrows
        tasks = rec.program.execute.tasks
        level: dict[int, int] = {}
        for t in tasks:
            level[t.id] = max((level[q] + 1 for q in t.preds), default=0)
        widths = collections.Counter(level.values())
        assert (ex["depth"], ex["max_width"], ex["edges"]) == \
            (max(level.values()) + 1, max(widths.values()), sum(len(t.preds) for t in tasks)), name
    softmax = reports["softmax.softmax_kernel"]
    assert not softmax.of("tile.tail-waste") and not softmax.of("block.spills")
    assert math.isclose(softmax.stats["execute"]["homogeneity"], 1 / 256, rel_tol=1e-3)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_execute_level_reads_the_graphs_columns_or_its_tasks_alike(name):
    """The execute level reads the tasks' columns when the graph has them (a compile's) and the tasks otherwise (a
    graph read back from an older record): the same stats and findings either way."""
    import dataclasses

    rec = record(name)
    exe = rec.program.execute
    assert exe is not None and exe.columns is not None
    bare = dataclasses.replace(rec, program=dataclasses.replace(rec.program,
                                                                execute=dataclasses.replace(exe, columns=None)))
    assert health_report(bare).to_json() == health_report(rec).to_json()


def test_device_tasks_a_deeper_stitch_would_overlap_are_a_finding_with_the_boards_figure():
    """One root function per device task: `board.stitching` says how many ran one after another and what the sim
    board simulated with them all in one (faster: the figure is that run's); a kernel already in one device task
    gets no such finding."""
    import torch
    from test_stitch import ROWS, _rows_kernel

    from pypto.boards.sim import simulate
    from pypto.boards.swimlane import metrics
    from pypto.record import compile_for

    x, w = torch.randn(ROWS, 32), torch.randn(32, 32)
    inputs = {"x": x, "w": w, "out": torch.empty_like(x)}
    record = profile(compile_for(_rows_kernel(None, stitch_function_max_num=1), inputs)[0], "sim")
    found = [f for f in health_report(record).findings if f.rule == "board.stitching"]
    assert len(found) == 1
    f = found[0]
    assert f.numbers["device_tasks"] == record.run.info["device_tasks"] > 1
    k = f.numbers["stitch_function_max_num"]
    deep = metrics(simulate(record.program, runtime_options={"stitch_function_max_num": k})).makespan
    assert f.numbers["simulated_us"] == pytest.approx(deep, rel=1e-3)
    assert deep < metrics(record.run).makespan / 1.05
    assert f"stitch_function_max_num {k}" in f.suggestion and "simulated on the sim board" in f.suggestion
    whole = profile(compile_for(_rows_kernel(None), inputs)[0], "sim")
    assert whole.run.info["device_tasks"] == 1
    assert not [f for f in health_report(whole).findings if f.rule == "board.stitching"]


STITCHED = '''
import pypto

OPTIONS = {{"stitch_function_max_num": 1}}


@pypto.frontend.jit(runtime_options={options})
def rows(x: pypto.Tensor([160, 32], pypto.DT_FP32), w: pypto.Tensor([32, 32], pypto.DT_FP32),
         out: pypto.Tensor([160, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    for i in pypto.loop(0, 10, 1, name="ROWS", idx_name="i"):
        part = pypto.view(x, [16, 32], [i * 16, 0])
        pypto.assemble(pypto.exp(pypto.matmul(part, w, pypto.DT_FP32)), [i * 16, 0], out)
'''


@pytest.mark.parametrize("options", ['{"device_sched_mode": 0, "stitch_function_max_num": 1}', "OPTIONS"])
def test_the_stitching_finding_applies_what_the_board_simulated(tmp_path, options):
    """Its Apply sets the decorator's stitch_function_max_num, and the kernel so edited runs in the figure the
    finding gave; runtime options held in a name get the figure without an edit."""
    import torch

    from pypto.analysis.advisor import apply_edits
    from pypto.boards.swimlane import metrics
    from pypto.record import compile_for

    path = tmp_path / "stitched.py"
    path.write_text(STITCHED.format(options=options))
    inputs = {"x": torch.randn(160, 32), "w": torch.randn(32, 32), "out": torch.empty(160, 32)}
    record = profile(compile_for(load_module(path, "stitched_a_").rows, inputs)[0], "sim")
    (f,) = [f for f in health_report(record).findings if f.rule == "board.stitching"]
    if options == "OPTIONS":
        assert not f.edits and "gain" not in f.numbers
        return
    (edit,) = f.edits
    assert f.where.line == edit.where.line == 7  # the decorator's line
    k = f.numbers["stitch_function_max_num"]
    assert f.numbers["gain"]["speedup"] == pytest.approx(f.numbers["speedup"], rel=1e-2)
    assert f.numbers["gain"]["speedup"] > 1.05
    edited = apply_edits(path.read_text(), f.edits)
    decorator = edited.splitlines()[6]
    assert f'"stitch_function_max_num": {k}' in decorator and decorator.count("stitch_function_max_num") == 1
    path.write_text(edited)
    again = profile(compile_for(load_module(path, "stitched_b_").rows, inputs)[0], "sim")
    assert metrics(again.run).makespan == pytest.approx(f.numbers["gain"]["makespan_us"], rel=1e-9)
    assert again.run.info["device_tasks"] == 1
    assert not [g for g in health_report(again).findings if g.rule == "board.stitching"]


@pytest.mark.parametrize(("options", "after"), [
    ('{"device_sched_mode": 1}', '{"stitch_function_max_num": 32, "device_sched_mode": 1}'),
    ("{}", '{"stitch_function_max_num": 32}'),
    ('{**BASE, "stitch_function_max_num": 2}', '{**BASE, "stitch_function_max_num": 32}'),
    ('{**BASE}', '{"stitch_function_max_num": 32, **BASE}'),
    ("BASE", None),
])
def test_the_stitching_edit_sets_the_key_in_the_decorators_dict(tmp_path, options, after):
    import linecache

    from pypto.analysis.advisor import apply_edits
    from pypto.analysis.health.board import _stitch_edit

    text = f"import pypto\nBASE = {{}}\n\n\n@pypto.frontend.jit(runtime_options={options})  # é\ndef k(x):\n    pass\n"
    path = tmp_path / "k.py"
    path.write_text(text)
    linecache.checkcache(str(path))
    edit = _stitch_edit(str(path), 6, 32)
    if after is None:
        assert edit is None
        return
    assert edit is not None and edit.where.line == 5
    assert apply_edits(text, [edit]).splitlines()[4] == f"@pypto.frontend.jit(runtime_options={after})  # é"


def test_in_memory_driven_stitching_the_finding_raises_the_budget_and_offers_no_edit():
    """A budget that holds about three root functions: several device tasks; stitch_function_max_num bounds nothing
    then, so the finding says to raise max_workspace_kb (or set it to 0 with that count), without an Apply."""
    import torch
    from test_stitch import ROWS, _program, _rows_kernel

    from pypto.boards import stitch
    from pypto.record import compile_for

    program = _program()
    ranks = sorted({t.instance for t in program.execute.tasks})
    largest = int(stitch.root_workspace(program, ranks, stitch.plan(program, {}).root_function).max())
    x, w = torch.randn(ROWS, 32), torch.randn(32, 32)
    kernel = _rows_kernel(None, stitch_function_max_num=1, max_workspace_kb=(3 * largest) // 1024 + 1)
    record = profile(compile_for(kernel, {"x": x, "w": w, "out": torch.empty_like(x)})[0], "sim")
    assert record.run.info["stitch_mode"] == "memory" and record.run.info["device_tasks"] > 1
    (f,) = [f for f in health_report(record).findings if f.rule == "board.stitching"]
    assert f.suggestion.startswith("raise runtime_options max_workspace_kb above ~")
    assert "stitch_function_max_num bounds nothing" in f.suggestion and not f.edits and "gain" not in f.numbers


def test_tiles_cut_short_by_a_valid_shape_say_no_tile_shape_changes_them():
    """Aligned tiles over a view whose valid part is shorter (a run-time length, as DeepSeek V4's compress attention
    reads): the rows are padded, but asking for an aligned tile size, as the finding did, changes nothing."""
    import torch

    @pypto.jit
    def short_rows(x: pypto.Tensor([16, 640], pypto.DT_FP16), out: pypto.Tensor([16, 640], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(16, 640)
        v = pypto.view(x, [16, 640], [0, 0], valid_shape=[16, 191])
        out[:] = pypto.exp(v)

    x = torch.randn(16, 640, dtype=torch.float16)
    (f,) = health_report(profile(compile_record(short_rows, {"x": x, "out": torch.empty_like(x)}), "sim")) \
        .of("tile.last-dim-unaligned")
    assert f.numbers["tile_last_dims"] == [191] and f.numbers["vector_waste"] > 0.2
    assert "640 (set_vec_tile_shapes(16, 640)), is aligned" in f.suggestion and "191 wide because" in f.suggestion
    assert "choose a tile" not in f.suggestion and not f.edits


def test_unaligned_rows_wider_than_the_result_are_said_to_be_the_inputs():
    """A transpose reads rows its result does not have (gated delta rule's: 2-15 wide into a last dim of 8): the
    finding does not call them tiles "of a last dim of 8"."""
    import torch

    @pypto.jit
    def turned(x: pypto.Tensor([8, 12], pypto.DT_FP32), out: pypto.Tensor([12, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 64)
        out[:] = pypto.transpose(x, 1, 0)

    report = health_report(profile(compile_record(turned, {"x": torch.randn(8, 12), "out": torch.empty(12, 8)}), "sim"))
    (f,) = report.of("tile.last-dim-unaligned")
    assert f.title.startswith("tiles 12 wide (its inputs' rows: its result's last dim is 8)"), f.title
