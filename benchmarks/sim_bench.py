"""The sim board: how fast it simulates, and its figures beside the spec's published ones.

Part 1 — simulation speed: wall time of `simulate()` alone (the compile is not counted) on
execute graphs of about 1k, 16k and 100k tasks (an elementwise kernel, one task per tile), in
tasks/s, beside the straightforward model it replaced (`tests/sim_reference.py`, the board before
issue 19) and, with `--against TREE`, another checkout's `pypto/boards/sim.py` (loaded from that
tree, run on this one's programs), all run alternately in this process, best of 3 each, the
swimlanes checked equal. "cold" is a board's first run on an execute graph (its cache of task
columns emptied: this tree's board reads the columns the compiler made with the graph), "warm" a
later one, "+metrics" cold and `metrics()` of the swimlane. "build" times the compiler's execute
stage (`execute.build`, gc paused as a compile runs it), this tree's and, with `--against`, the
other tree's: since the compiler makes the task columns (GM regions interned), part of the old
cold cost is there now. Target from issue 19: >= 1M tasks/s (100k tasks under 0.1 s), cold
included. Wall-clock, this machine: compare the columns of one run, not runs on different days or
loads.

`git worktree add /tmp/sim_old a9f1495` then
`.venv/bin/python benchmarks/sim_bench.py --speed --against /tmp/sim_old`, 2026-11-27 on this
shared 2-core machine, load average 7.7 (other sessions), numba 0.68.1 (first call in the
process: 0.36 s, numba imported and loaded from its cache; ~15 s when it compiles):

       tasks   ref s   old s  cold s  warm s  old tasks/s cold tasks/s warm tasks/s  json old  json new
        1000   0.007   0.004   0.002  0.0005      268,567      654,425    2,145,946     0.003     0.001
       16000   0.216   0.086   0.036  0.0051      185,551      447,547    3,148,665     0.045     0.019
      100000   1.913   0.939   0.294  0.0643      106,449      339,988    1,554,536     0.917     0.234

(all "same swimlane"). json: `Swimlane.to_json()`, metrics included, of the old board's swimlane
(LaneTask objects) and of the new one's (columns). Then the cold path (the compiler's columns),
`git archive 3457cdf | tar -x -C /tmp/sim_cold_old`, `--against /tmp/sim_cold_old`, load 0.7-1.2:

   tasks  ref s old cold old warm  cold s  warm s +metrics  old tasks/s cold tasks/s warm tasks/s build old build new
    1000  0.007   0.0015   0.0005  0.0005  0.0004   0.0007      652,944    2,051,379    2,318,448     0.004     0.005
   16000  0.132   0.0291   0.0051  0.0052  0.0049   0.0084      549,287    3,058,189    3,269,430     0.102     0.121
  100000  0.957   0.2145   0.0305  0.0309  0.0298   0.0524      466,139    3,236,865    3,357,618     0.703     0.854

(all "same swimlane"; json old / new at 100k: 0.069 / 0.062 s). The first run of a 100k-task
graph: 0.21 -> 0.031 s, with metrics 0.052 s; the execute stage pays 0.15 s more for it
(interning 300k regions in Python costs ~0.1 s wherever it is done): build plus first run
0.92 -> 0.89 s.

Part 2 — the model against the published A2/A3 figures of ../shared/spec/board-a2a3.md.
Every model figure is SIMULATED (the a2a3 board file, 1.8 GHz); the published ones were
measured by the PyPTO team on real chips, on kernels we only approximate (noted per row).

Run: `.venv/bin/python benchmarks/sim_bench.py [--speed] [--against TREE] [--sizes ROWS…]` (or `make bench`).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

import pypto
from pypto.boards import sim as sim_module
from pypto.boards import sim_kernel
from pypto.boards.sim import simulate
from pypto.boards.swimlane import metrics
from pypto.compiler import execute
from pypto.frontend.jit import to_numpy
from pypto.target import load

BOARD = load("a2a3")


def lower(kernel: pypto.JitKernel, *args: torch.Tensor):  # type: ignore[no-untyped-def]
    ck = kernel.compile(*args)
    arrays = {n: to_numpy(a) for n, a in zip(ck.param_names, args)}
    return ck.lower(ck.bind_symbols(arrays, None)).program  # type: ignore[arg-type]


def elementwise(tile: tuple[int, int]) -> pypto.JitKernel:
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.exp(x) * 2.0 + x
    return k


def _best(fn, *args, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def _load(tree: Path, rel: str, name: str):  # type: ignore[no-untyped-def]
    """A module of another checkout (`rel`, e.g. pypto/boards/sim.py), loaded as a module of its own
    (it imports the rest of pypto from this one: the core model, the swimlane, the execute graph's
    classes, whose names it still finds)."""
    spec = importlib.util.spec_from_file_location(name, tree / rel)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _cold(board, program) -> None:  # type: ignore[no-untyped-def]
    """A board's first run on an execute graph: its cache of task columns emptied (an old board
    without one runs from the objects anyway)."""
    cache = getattr(board, "_COLUMNS", None)
    if cache is not None:
        cache.clear()
    board.simulate(program)


def _cold_metrics(program) -> None:  # type: ignore[no-untyped-def]
    """The first run and the metrics of its swimlane (what a panel shows of a new graph)."""
    sim_module._COLUMNS.clear()
    metrics(simulate(program))


def speed(sizes: tuple[int, ...] = (1000, 16000, 100000), against: Path | None = None) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import sim_reference  # the board before issue 19: one event at a time through small functions

    old = _load(against, "pypto/boards/sim.py", "sim_against") if against is not None else None
    old_execute = _load(against, "pypto/compiler/execute.py", "execute_against") if against is not None else None
    os.environ.setdefault("PYPTO_SIM_JIT", "1")  # compiled from the first run (PYPTO_SIM_JIT=0: the Python loop)
    x = torch.randn(64, 128)
    tiny = lower(elementwise((1, 128)), x, torch.empty_like(x))
    t0 = time.perf_counter()
    simulate(tiny)
    first = time.perf_counter() - t0
    jit = "numba" if sim_kernel.mode() == "on" else "none (the Python loop)"
    print(f"simulation speed: wall time of simulate() only, best of 3, the boards run alternately. JIT: {jit}; "
          f"the first call in this process took {first:.2f} s (numba: loaded from its cache, or compiled)")
    print("  ref: tests/sim_reference.py (the board before issue 19)"
          + (f"; old: {against}/pypto/boards/sim.py" if old else "")
          + "\n  cold: the first run on an execute graph (the board's column cache emptied: this tree's board"
          " reads the columns the compiler made with the graph, an old one may make them from the Task objects);"
          "\n  warm: later runs on it; +metrics: cold and `metrics()` of its swimlane;"
          "\n  build: the compiler's execute stage (execute.build) making the graph"
          + (", this tree's (with its columns) and the old tree's" if old else "")
          + ";\n  json: Swimlane.to_json() (metrics included) of the old board's swimlane"
          " (LaneTask objects) and of the new one's (columns), best of 3")
    base = "old" if old else "ref"
    print(f"{'tasks':>8} {'ref s':>6}" + (f" {'old cold':>8} {'old warm':>8}" if old else "")
          + f" {'cold s':>7} {'warm s':>7} {'+metrics':>8} {base + ' tasks/s':>12} {'cold tasks/s':>12}"
          f" {'warm tasks/s':>12}" + (f" {'build old':>9}" if old else "") + f" {'build new':>9}"
          f" {'json ' + base:>8} {'json new':>8}  target: >= 1M tasks/s cold")
    for rows in sizes:
        x = torch.randn(rows, 128)
        program = lower(elementwise((1, 128)), x, torch.empty_like(x))
        n = len(program.execute.tasks)
        text = json.dumps(simulate(program).to_json())
        same = text == json.dumps(sim_reference.simulate(program).to_json())
        if old is not None:
            same = same and text == json.dumps(old.simulate(program).to_json())
        old_lane, new_lane = (old or sim_reference).simulate(program), simulate(program)
        json_old = _best(old_lane.to_json)  # the swimlane's JSON, metrics included (objects / columns)
        json_new = _best(new_lane.to_json)
        inf = float("inf")
        ref = old_cold = old_warm = cold = warm = cold_m = build_old = build_new = inf
        tiles, subgraphs = program.tiles, program.subgraphs
        for _ in range(3):
            ref = min(ref, _best(sim_reference.simulate, program, repeat=1))
            if old is not None:
                old_cold = min(old_cold, _best(_cold, old, program, repeat=1))
                old_warm = min(old_warm, _best(old.simulate, program, repeat=1))
            cold = min(cold, _best(_cold, sim_module, program, repeat=1))
            warm = min(warm, _best(simulate, program, repeat=1))
            cold_m = min(cold_m, _best(_cold_metrics, program, repeat=1))
            gc.disable()  # as a compile runs its passes
            try:
                if old_execute is not None:
                    build_old = min(build_old, _best(old_execute.build, tiles, subgraphs, repeat=1))
                build_new = min(build_new, _best(execute.build, tiles, subgraphs, repeat=1))
            finally:
                gc.enable()
        before = old_cold if old is not None else ref
        print(f"{n:>8} {ref:>6.3f}" + (f" {old_cold:>8.4f} {old_warm:>8.4f}" if old else "")
              + f" {cold:>7.4f} {warm:>7.4f} {cold_m:>8.4f} {n / before:>12,.0f} {n / cold:>12,.0f}"
              f" {n / warm:>12,.0f}" + (f" {build_old:>9.3f}" if old else "") + f" {build_new:>9.3f}"
              f" {json_old:>8.3f} {json_new:>8.3f}  {'same swimlane' if same else 'SWIMLANES DIFFER'}")


def matmul_kernel(tiles: tuple[list[int], list[int], list[int]]) -> pypto.JitKernel:
    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes(*tiles)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return k


def against_published() -> None:
    print("\nthe model (SIMULATED, a2a3 board file) beside the spec's published figures (measured on chips)")
    rows = []
    # fp16 matmul 6144^3: 2.1 ms plain, 1.6 ms (~290 TFLOP/s) with an L2-blocked loop order
    n = 6144
    a, b = torch.randn(n, n).half(), torch.randn(n, n).half()
    for tiles, what in ((([128, 128], [64, 256], [256, 256]), "128x256 output tiles"),
                        (([64, 64], [64, 128], [64, 64]), "64x64 output tiles")):
        sl = simulate(lower(matmul_kernel(tiles), a, b, torch.empty(n, n)))
        ms = metrics(sl).makespan / 1e3
        rows.append((f"fp16 matmul 6144^3, {what}", f"{ms:.2f} ms ({2 * n**3 / ms / 1e9:.0f} TFLOP/s)",
                     "2.1 ms plain / 1.6 ms L2-blocked (290 TFLOP/s)"))
    # a pure copy: bytes over the HBM bandwidth the board file gives (1.2 TB/s x 0.75)
    x = torch.randn(8192, 8192)
    sl = simulate(lower(elementwise_copy(), x, torch.empty_like(x)))
    us = metrics(sl).makespan
    gbps = 2 * x.numel() * 4 / us / 1e3
    rows.append(("copy 256 MiB in + out (fp32 8192^2)", f"{us:.0f} µs ({gbps:.0f} GB/s)",
                 "Linear stage: 12 MB at 1.2 TB/s x 0.75 = 13.3 µs theory, 16 µs measured"))
    # stitching: 512 root functions, each an attention step (cube -> vector -> cube), beside
    # PyPTO's GLM attention tuning figures (kernel time / end to end at 1, 128, 512)
    m, d, s2 = 16, 64, 128
    q, kt = torch.randn(512 * m, d).half(), torch.randn(d, 512 * s2).half()
    v = torch.randn(512 * s2, d).half()
    program = lower(attention_steps(m, d, s2), q, kt, v, torch.empty(512 * m, d))
    published = {1: (1230, 1590), 128: (180, 803), 512: (150, 977)}
    for k, (kernel_pub, e2e_pub) in published.items():
        info = simulate(program, runtime_options={"stitch_function_max_num": k}).info
        approx = " (not modelled: see below)" if k == 1 else ""
        rows.append((f"stitch_function_max_num {k}: kernel / end to end",
                     f"{info['kernel_us']:.0f} / {info['end_to_end_us']:.0f} µs "
                     f"({info['kernel_us'] / kernel_pub - 1:+.0%} / {info['end_to_end_us'] / e2e_pub - 1:+.0%})",
                     f"GLM attention: {kernel_pub} / {e2e_pub} µs{approx}"))
    # scheduling overhead: task pickup per task
    x = torch.randn(2048, 1024)
    small = metrics(simulate(lower(elementwise((2, 128)), x, torch.empty_like(x))))
    tasks = 2048 // 2 * 1024 // 128
    rows.append((f"many tiny tasks ({tasks} tasks of 2x128)", f"{small.makespan / tasks * 1e3:.0f} ns per task",
                 "task pickup ~0.8 µs per task per AICPU thread (5 threads)"))
    w = max(len(r[0]) for r in rows)
    v = max(len(r[1]) for r in rows)
    print(f"{'case':<{w}}  {'model (simulated)':<{v}}  published")
    for case, model, published in rows:
        print(f"{case:<{w}}  {model:<{v}}  {published}")
    print("\nApproximations: the matmul, copy and GLM rows run our own stand-in kernels, not PyPTO's.\n"
          "The stitch costs (board file: stitch_cycles + stitch_function_cycles per root function,\n"
          "device_task_cycles per launch) are fitted to the GLM figures. At stitch 1 the kernel time is\n"
          "one device task per root function, so it is the step's own critical path: the stand-in's\n"
          "cube -> vector -> cube chain takes several µs in the model, GLM's steps 2.4 µs each on the\n"
          "chip with their launch; that row is not modelled.")


def attention_steps(m: int, d: int, s2: int) -> pypto.JitKernel:
    """A stand-in for GLM attention's root functions: one loop iteration per step, each a score
    matmul, a softmax and a value matmul on its own block (GLM's steps also chain through an
    online softmax, which this does not model)."""
    @pypto.jit
    def k(q: pypto.Tensor(), kt: pypto.Tensor(), v: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(m, s2)
        for i in pypto.loop(0, q.shape[0] // m, 1, name="steps", idx_name="i"):
            pypto.set_cube_tile_shapes([m, m], [d, d], [s2, s2])
            sc = pypto.matmul(pypto.view(q, [m, d], [i * m, 0]), pypto.view(kt, [d, s2], [0, i * s2]), pypto.DT_FP32)
            e = pypto.exp(sc - pypto.amax(sc, dim=-1, keepdim=True))
            p = pypto.cast(e / pypto.sum(e, dim=-1, keepdim=True), pypto.DT_FP16)
            pypto.set_cube_tile_shapes([m, m], [s2, s2], [d, d])
            pypto.assemble(pypto.matmul(p, pypto.view(v, [s2, d], [i * s2, 0]), pypto.DT_FP32), [i * m, 0], out)
    return k


def elementwise_copy() -> pypto.JitKernel:
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(64, 512)
        out[:] = pypto.clone(x)
    return k


def main() -> None:
    ap = argparse.ArgumentParser(description="the sim board: its speed and its figures beside published ones")
    ap.add_argument("--speed", action="store_true", help="only part 1, the simulation speed")
    ap.add_argument("--against", type=Path, metavar="TREE",
                    help="another checkout: its pypto/boards/sim.py timed beside this one (old vs new)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 16000, 100000], help="rows (= tasks) per run")
    args = ap.parse_args()
    print(f"sim board benchmark on {platform.machine()}, python {platform.python_version()}, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    speed(tuple(args.sizes), args.against)
    if not args.speed:
        against_published()


if __name__ == "__main__":
    main()
