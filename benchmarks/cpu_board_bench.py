"""The cpu board next to torch eager and the functional executor (printed, not asserted).

Run: `.venv/bin/python benchmarks/cpu_board_bench.py` (or `make bench`). Two kernels, each
at a few good tile shapes: softmax over the last axis of a 4096 x 4096 fp32 tensor, and a
2048 x 2048 x 2048 fp32 matmul. Each is run by torch eager (`torch.softmax`, `a @ b`, in
this process with torch's own threads), by the functional executor (batched, its default),
and by the cpu board with 1 and 2 worker threads (real tasks on real threads, the way the
device runtime runs them). Every figure is wall-clock seconds measured on this machine, the
best of several runs; the ratios are against torch eager (the issue's target: the cpu board
within 3x of torch). "identical" says whether the board's bytes equal the executor's.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable

import numpy as np
import torch
from _timing import best

import pypto
from pypto.boards.cpu import run_cpu
from pypto.boards.swimlane import metrics
from pypto.compiler.tile_exec import TileExecutor

SOFTMAX_N = 4096
SOFTMAX_TILES = ((64, 512), (8, 4096), (8, 2048))
MATMUL_N = 2048
MATMUL_TILES = (([128, 256], [128, 256], [128, 256]), ([128, 512], [128, 128], [128, 512]))
REPS = 5


def softmax_kernel(tile: tuple[int, int]) -> pypto.JitKernel:
    t = pypto.Tensor([SOFTMAX_N, SOFTMAX_N], pypto.DT_FP32)

    @pypto.jit
    def softmax(x: t, out: t):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.softmax(x, -1)

    return softmax


def matmul_kernel(cube: tuple[list[int], list[int], list[int]]) -> pypto.JitKernel:
    t = pypto.Tensor([MATMUL_N, MATMUL_N], pypto.DT_FP32)

    @pypto.jit
    def matmul(a: t, b: t) -> pypto.Tensor():
        pypto.set_cube_tile_shapes(*cube)
        return pypto.matmul(a, b, pypto.DT_FP32)

    return matmul


def row(label: str, kernel: pypto.JitKernel, args: tuple[torch.Tensor, ...],
        torch_fn: Callable[[], torch.Tensor]) -> None:
    ck = kernel.compile(*args)
    arrays = {n: a.numpy() for n, a in zip(ck.param_names, args)}
    lw = ck.lower(ck.bind_symbols(arrays, None))  # type: ignore[arg-type]
    p = lw.program
    assert p.tiles is not None and p.execute is not None
    ex = TileExecutor(p.graph, p.tiles)
    want = ex.run(arrays)
    batched = best(lambda: ex.run(arrays), REPS)
    board: dict[int, float] = {}
    same = True
    util = {}
    for workers in (1, 2):
        got, sl = run_cpu(p, arrays, workers, ex)  # also builds the board's per-program plan
        same = same and all(got[k].tobytes() == want[k].tobytes() for k in want)
        board[workers] = best(lambda w=workers: run_cpu(p, arrays, w, ex), REPS)
        util[workers] = metrics(sl).utilization
    eager = best(torch_fn, 2 * REPS)  # next to the others: the machine's load varies over a run
    err = max(float(np.abs(v - torch_fn().numpy()).max()) for v in want.values())
    fastest = min(board.values())
    print(f"{label:>24} {len(p.execute.tasks):>6} {eager:>8.4f} {batched:>8.4f} {board[1]:>8.4f} {board[2]:>8.4f} "
          f"{batched / eager:>7.2f}x {board[1] / eager:>7.2f}x {board[2] / eager:>7.2f}x {fastest / eager:>7.2f}x "
          f"{util[1]:>5.2f} {util[2]:>5.2f}  {'yes' if same else 'NO'} (max |diff| vs torch {err:.1e})")


def main() -> None:
    print(f"measured on this machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"python {sys.version.split()[0]}, numpy {np.__version__}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); wall-clock seconds, best of {REPS}")
    print("(BLAS runs each matmul tile on every CPU with its own threads; the board's workers take turns at it)")
    print(f"{'kernel / tile':>24} {'tasks':>6} {'torch s':>8} {'exec s':>8} {'cpu1 s':>8} {'cpu2 s':>8} "
          f"{'exec/t':>8} {'cpu1/t':>8} {'cpu2/t':>8} {'best/t':>8} {'util1':>5} {'util2':>5}  identical")
    torch.manual_seed(0)
    x = torch.randn(SOFTMAX_N, SOFTMAX_N)
    out = torch.empty_like(x)
    for tile in SOFTMAX_TILES:
        row(f"softmax {SOFTMAX_N}^2 {tile[0]}x{tile[1]}", softmax_kernel(tile), (x, out), lambda: torch.softmax(x, -1))
    a = torch.randn(MATMUL_N, MATMUL_N)
    b = torch.randn(MATMUL_N, MATMUL_N)
    for cube in MATMUL_TILES:
        row(f"matmul {MATMUL_N}^3 {cube[0][1]}x{cube[2][1]}", matmul_kernel(cube), (a, b), lambda: a @ b)


if __name__ == "__main__":
    main()
