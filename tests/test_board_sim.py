"""The sim board against analytic bounds, the spec's published directions, and its own rules."""

from __future__ import annotations

import json
import math

import pytest
import torch
from support import EXAMPLES, lowered

import pypto
from pypto.boards.core_model import CoreModel
from pypto.boards.sim import simulate
from pypto.boards.swimlane import Swimlane, metrics
from pypto.cli import load_module
from pypto.target import load

BOARD = load("a2a3")
CLOCK = BOARD["clock_ghz"] * 1e3  # cycles per µs
HBM = BOARD["memory"]["hbm_GBps"] * BOARD["memory"]["hbm_efficiency"] * 1e3  # bytes per µs


def _vec_kernel(tile: tuple[int, int], body):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = body(x)
    return k


def _sim(kernel, *args, **runtime):  # type: ignore[no-untyped-def]
    _, lw, _, _ = lowered(kernel, *args)
    return lw.program, simulate(lw.program, runtime_options=runtime)


def test_models_of_the_same_blocks_share_their_costs_and_runs_and_agree_with_a_fresh_costing():
    """The sim board, the record and the health report each make a `CoreModel` of one program's blocks: the costed
    instructions and the pipe runs are made once per block object and board figures, and are what costing a copy of
    the blocks anew gives (and so is its GM traffic); other figures cost anew; a block's entry goes with it."""
    import copy
    import dataclasses
    import gc

    from pypto.boards import core_model

    x = torch.randn(256, 512)
    program, _ = _sim(_vec_kernel((32, 256), lambda t: pypto.exp(t) + 1.0), x, torch.empty_like(x))
    blocks = program.blocks
    first, again = CoreModel(blocks, BOARD), CoreModel(blocks, load("a2a3"))  # (a board file read anew: equal)
    assert all(a is b for a, b in zip(first.programs, again.programs))
    copies = tuple(dataclasses.replace(b) for b in blocks)
    fresh = CoreModel(copies, BOARD)
    assert all(a is not b and a == b for a, b in zip(first.programs, fresh.programs))
    for h, slow in ((0.0, 1.0), (0.5, 1.3)):
        cycles, row = first.simulate(0, h, slow)
        cycles_again, row_again = again.simulate(0, h, slow)
        cycles_fresh, row_fresh = fresh.simulate(0, h, slow)
        assert cycles == cycles_again == cycles_fresh
        assert first.profiles[row] is again.profiles[row_again]
        assert first.profiles[row] == fresh.profiles[row_fresh]
    assert first.hbm_occupancy(0) == again.hbm_occupancy(0) == fresh.hbm_occupancy(0)
    assert first.hbm_occupancy(0)[1] > 0  # (it reads GM)
    slower = copy.deepcopy(BOARD)
    slower["memory"]["gm_read_latency"] *= 2
    other = CoreModel(blocks, slower)
    assert other.programs[0] is not first.programs[0]
    assert other.simulate(0, 0.0, 1.0)[0] > first.simulate(0, 0.0, 1.0)[0]
    kept = [id(b) for b in copies]
    assert all(k in core_model._COSTED for k in kept)
    del copies, fresh
    gc.collect()
    assert all(k not in core_model._COSTED for k in kept)


# ---- micro-kernels against analytic bounds ----------------------------------------------------

def test_a_pure_copy_runs_within_10_percent_of_bytes_over_hbm_bandwidth():
    x = torch.randn(4096, 4096)
    _, sl = _sim(_vec_kernel((64, 512), pypto.clone), x, torch.empty_like(x))
    moved = 2 * x.numel() * 4  # read once, written once
    bound = moved / HBM
    assert metrics(sl).makespan == pytest.approx(bound, rel=0.10)


def test_a_vector_bound_kernel_runs_within_10_percent_of_its_vector_cycles():
    def many_exps(x):  # type: ignore[no-untyped-def]
        for _ in range(400):  # the loads, stores and dispatch of one wave cost ~5 µs; this is ~60 µs of V
            x = pypto.exp(x)
        return x
    x = torch.randn(48 * 32, 256) * 1e-3  # 48 tiles: one task per AIV core, one wave
    program, sl = _sim(_vec_kernel((32, 256), many_exps), x, torch.empty_like(x))
    assert len(program.execute.tasks) == 48
    v_cycles = CoreModel(program.blocks, BOARD).pipe_cycles(0)["V"]
    assert metrics(sl).makespan == pytest.approx(v_cycles / CLOCK, rel=0.10)


def test_a_large_fp16_matmul_runs_within_15_percent_of_cube_peak_times_its_efficiency():
    n = 4096

    @pypto.jit
    def mm(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b = torch.randn(n, n).half(), torch.randn(n, n).half()
    _, sl = _sim(mm, a, b, torch.empty(n, n))
    peak = 2 * BOARD["cube"]["macs_per_cycle"] * BOARD["cores"]["AIC"] * CLOCK  # flop per µs
    efficiency = 290 / 360  # the spec's published fp16 matmul: ~290 of ~360 TFLOP/s with good tiles
    assert metrics(sl).makespan == pytest.approx(2 * n**3 / (peak * efficiency), rel=0.15)


# ---- directions published in the spec --------------------------------------------------------

def test_unaligned_rows_cost_more_per_element_than_aligned_ones():
    def f(x):  # type: ignore[no-untyped-def]
        return pypto.exp(x) * 2.0 + x
    per_element = []
    for cols in (20, 32):  # 80-byte rows (not 32-byte aligned) against 128-byte rows
        x = torch.randn(16384, cols)
        _, sl = _sim(_vec_kernel((256, 32), f), x, torch.empty_like(x))
        per_element.append(metrics(sl).makespan / x.numel())
    assert per_element[0] > 1.2 * per_element[1]


def test_stitching_more_root_functions_per_device_task_is_faster():
    row_tiles_kernel = load_module(EXAMPLES / "loop_view_assemble.py").row_tiles_kernel
    x = torch.randn(2048, 128)
    _, lw, _, _ = lowered(row_tiles_kernel, x, torch.empty_like(x))
    infos = [simulate(lw.program, runtime_options={"stitch_function_max_num": k}).info for k in (1, 8, 128)]
    kernel = [i["kernel_us"] for i in infos]
    assert kernel[0] > 2 * kernel[1] > 2 * kernel[2] > 0  # the GLM case: 1,230 µs at 1, 180 µs at 128
    assert [i["device_tasks"] for i in infos] == [128, 16, 1]


def test_the_kernel_body_after_a_loop_is_stitched_after_the_loop():
    """paged_decode's body reads what its loop's iterations wrote: with one root function per device
    task, that code runs in the device task of the last iteration it waits on, after them — it
    used to sit in the first device task, which then waited on later ones that were released only
    after it ended ('tasks never ready')."""
    from pypto.boards.sim import device_tasks
    from pypto.boards.stitch import plan
    from pypto.frontend.inputs import example_arguments

    kernel = load_module(EXAMPLES / "paged_attention.py").paged_decode
    program = lowered(kernel, *example_arguments(kernel).values())[1].program
    tasks = program.execute.tasks
    for stitch in (1, 8):
        stitching = plan(program, {"stitch_function_max_num": stitch})
        ranks = sorted({t.instance for t in tasks})
        device = device_tasks(program.execute, dict(zip(ranks, stitching.window.tolist(), strict=True)))
        assert all(device[p] <= device[t.id] for t in tasks for p in t.preds)  # no device task waits on a later one
        body = min(t.instance for t in tasks)
        after_loop = [t for t in tasks if t.instance == body and any(tasks[p].instance != body for p in t.preds)]
        assert after_loop and all(device[t.id] == max(device[p] for p in t.preds) for t in after_loop)
        assert stitch > 1 or all(device[t.id] > 0 for t in after_loop)
        sl = simulate(program, runtime_options={"stitch_function_max_num": stitch})
        assert len(sl.tasks) == len(tasks)
        end = {t.id: t.end for t in sl.tasks}
        start = {t.id: t.start for t in sl.tasks}
        assert all(end[p] <= start[t.id] for t in tasks for p in t.preds)
    kernel_us = [simulate(program, runtime_options={"stitch_function_max_num": k}).info["kernel_us"]
                 for k in (1, 8, 128)]
    assert kernel_us[0] > kernel_us[1] > kernel_us[2]


def test_stitching_costs_each_root_function_on_the_control_thread():
    """End to end includes stitching, which grows with the root functions stitched: one device
    task of all 128 loop iterations cannot start before they are all stitched."""
    row_tiles_kernel = load_module(EXAMPLES / "loop_view_assemble.py").row_tiles_kernel
    x = torch.randn(2048, 128)
    _, lw, _, _ = lowered(row_tiles_kernel, x, torch.empty_like(x))
    cpu = load("a2a3")["aicpu"]
    sl = simulate(lw.program, runtime_options={"stitch_function_max_num": 128})
    functions = len({t.instance for t in lw.program.execute.tasks})
    stitch_us = (cpu["stitch_cycles"] + functions * cpu["stitch_function_cycles"]) / 1e3 / sl.info["clock_ghz"]
    first_start = min(t.start for t in sl.tasks)
    assert first_start >= stitch_us
    assert sl.info["end_to_end_us"] == pytest.approx(max(t.end for t in sl.tasks))
    # one device task: its own time is its launch, then the tasks (the first dispatched after it)
    launch_us = cpu["device_task_cycles"] / 1e3 / sl.info["clock_ghz"]
    dispatch_us = (cpu["schedule_cycles"] + cpu["submit_cycles"]) / 1e3 / sl.info["clock_ghz"]
    assert sl.info["kernel_us"] == pytest.approx(metrics(sl).makespan + launch_us + dispatch_us, rel=1e-6)


def test_more_smaller_tiles_raise_scheduling_overhead_on_the_lanes():
    def f(x):  # type: ignore[no-untyped-def]
        return pypto.exp(x) * 2.0 + x
    x = torch.randn(2048, 1024)
    gaps, utils = [], []
    for tile in ((32, 512), (16, 128), (4, 128)):
        _, sl = _sim(_vec_kernel(tile, f), x, torch.empty_like(x))
        m = metrics(sl)
        by_lane: dict[int, list] = {}
        for t in sl.tasks:
            by_lane.setdefault(t.lane, []).append(t)
        gap = 0.0
        for ts in by_lane.values():
            ts.sort(key=lambda t: t.start)
            gap += sum(b.start - a.end for a, b in zip(ts, ts[1:]))
        gaps.append(gap)
        utils.append(m.utilization)
    assert gaps[0] < gaps[1] < gaps[2]
    assert utils[0] > utils[1] > utils[2]


# ---- the model's own rules -------------------------------------------------------------------

@pytest.fixture(scope="module")
def softmax_run() -> tuple:
    softmax_kernel = load_module(EXAMPLES / "softmax.py").softmax_kernel
    x = torch.randn(256, 1024)
    _, lw, _, _ = lowered(softmax_kernel, x.reshape(32, 8, 1, 1024), torch.empty(32, 8, 1, 1024))
    return lw.program, simulate(lw.program)


def test_the_simulation_is_deterministic(softmax_run):
    program, sl = softmax_run
    assert json.dumps(simulate(program).to_json()) == json.dumps(sl.to_json())


def test_every_task_runs_once_after_its_predecessors_and_lanes_never_overlap(softmax_run):
    program, sl = softmax_run
    assert [t.id for t in sl.tasks] == [t.id for t in program.execute.tasks]
    end = {t.id: t.end for t in sl.tasks}
    for t in sl.tasks:
        assert all(end[p] <= t.start for p in t.preds)
        assert sl.lanes[t.lane].core == program.execute.tasks[t.id].core
    by_lane: dict[int, list] = {}
    for t in sl.tasks:
        by_lane.setdefault(t.lane, []).append(t)
    for ts in by_lane.values():
        ts.sort(key=lambda t: t.start)
        assert all(a.end <= b.start for a, b in zip(ts, ts[1:]))


def test_metrics_are_sane(softmax_run):
    _, sl = softmax_run
    m = metrics(sl)
    assert 0 < m.utilization <= 1 and all(0 <= u <= 1 for u in m.lane_utilization)
    assert 0 < m.critical_path_us <= m.makespan + 1e-9
    assert m.wait_dependency >= 0 and m.wait_scheduler >= 0
    assert sum(s.count for s in m.leaves) == len(sl.tasks)


def test_double_buffering_overlaps_loads_with_compute_in_the_pipe_profile(softmax_run):
    program, sl = softmax_run
    assert any(b.double_buffered for b in program.blocks)
    t = max(sl.tasks, key=lambda t: t.duration)
    pipes = sl.pipes(t)
    assert {"MTE2", "V", "MTE3"} <= set(pipes)
    overlap = sum(max(0.0, min(b1, b2) - max(a1, a2)) for a1, b1 in pipes["MTE2"] for a2, b2 in pipes["V"])
    assert overlap > 0
    assert all(t.start - 1e-9 <= a <= b <= t.end + 1e-9 for spans in pipes.values() for a, b in spans)


def test_hbm_contention_slows_every_streaming_task():
    x1 = torch.randn(64, 512)
    x48 = torch.randn(48 * 64, 512)
    _, alone = _sim(_vec_kernel((64, 512), pypto.clone), x1, torch.empty_like(x1))
    _, crowd = _sim(_vec_kernel((64, 512), pypto.clone), x48, torch.empty_like(x48))
    assert min(t.duration for t in crowd.tasks) >= alone.tasks[0].duration * 0.999
    assert sum(t.duration for t in crowd.tasks) / 48 > 1.5 * alone.tasks[0].duration


def test_pyptos_four_scheduling_modes_run_and_an_unknown_mode_is_refused(softmax_run):
    program, sl = softmax_run
    runs = {m: simulate(program, runtime_options={"device_sched_mode": m}) for m in (0, 1, 2, 3)}
    for m, run in runs.items():
        assert sorted(t.id for t in run.tasks) == sorted(t.id for t in sl.tasks), m
    # the fair modes are modelled as their plain ones (the threads already serve their cores in turn)
    assert [t.start for t in runs[2].tasks] == [t.start for t in runs[0].tasks]
    assert [t.start for t in runs[3].tasks] == [t.start for t in runs[1].tasks]
    with pytest.raises(ValueError, match="device_sched_mode 4"):
        simulate(program, runtime_options={"device_sched_mode": 4})


def test_the_swimlane_round_trips_through_json_and_says_it_is_simulated(softmax_run):
    _, sl = softmax_run
    again = Swimlane.from_json(json.loads(json.dumps(sl.to_json())))
    assert [(t.id, t.lane, t.leaf, t.preds) for t in again.tasks] == [(t.id, t.lane, t.leaf, t.preds) for t in sl.tasks]
    assert all(math.isclose(a.end, b.end, abs_tol=1e-5) for a, b in zip(again.tasks, sl.tasks))
    assert again.clock.startswith("simulated")
    assert [ln.name for ln in sl.lanes][:2] == ["AIC_0", "AIC_1"] and sl.lanes[24].name == "AIV_0"
