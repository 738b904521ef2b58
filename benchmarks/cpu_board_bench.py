"""The cpu board next to torch eager and the functional executor (printed, not asserted).

Run: `.venv/bin/python benchmarks/cpu_board_bench.py` (or `make bench`). Two kernels, each
at a few good tile shapes: softmax over the last axis of a 4096 x 4096 fp32 tensor, and a
2048 x 2048 x 2048 fp32 matmul. Each is run by torch eager (`torch.softmax`, `a @ b`, in
this process with torch's own threads), by the functional executor (batched, its default),
and by the cpu board with 1 and 2 worker threads (real tasks on real threads, the way the
device runtime runs them). Every figure is wall-clock seconds measured on this machine, the
best of several runs; the ratios are against torch eager (the issue's target: within 2x of
torch). "identical" says whether the board's bytes equal the executor's. The machine's load
average is printed: other work slows every column, unequally.

Old vs new side by side: `git worktree add /tmp/old_exec <commit>`, then
`.venv/bin/python benchmarks/cpu_board_bench.py --against /tmp/old_exec [--rounds 2]`: per
kernel and tile shape, child processes alternate old, new, old, new … (pypto from each
checkout, this file's measuring code); each times torch eager, the executor and the board
with 1 and 2 workers, and the best of the rounds is printed with each side's ratio to torch.
`--only softmax|matmul` measures one kernel.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

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
    print("(each matmul tile is one BLAS call at one BLAS thread: the executor runs a wave's tiles on its threads, "
          "the board's workers run matmul tasks side by side)")
    print(_load() + " at the start")
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
    print(_load() + " at the end")


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def one(kind: str, index: int, reps: int) -> dict[str, float | str]:
    """In this process: torch eager, the executor and the board (1 and 2 workers) on kernel `kind`
    ("softmax" | "matmul") at its `index`-th tile shape, each the best of `reps`, interleaved."""
    torch.manual_seed(0)
    if kind == "softmax":
        x = torch.randn(SOFTMAX_N, SOFTMAX_N)
        args: tuple[torch.Tensor, ...] = (x, torch.empty_like(x))
        kernel = softmax_kernel(SOFTMAX_TILES[index])
        torch_fn: Callable[[], torch.Tensor] = lambda: torch.softmax(x, -1)  # noqa: E731
    else:
        x = torch.randn(SOFTMAX_N, SOFTMAX_N)  # drawn as main() draws it, so a and b are the same
        a, b = torch.randn(MATMUL_N, MATMUL_N), torch.randn(MATMUL_N, MATMUL_N)
        args = (a, b)
        kernel = matmul_kernel(MATMUL_TILES[index])
        torch_fn = lambda: a @ b  # noqa: E731
    ck = kernel.compile(*args)
    arrays = {n: t.numpy() for n, t in zip(ck.param_names, args)}
    p = ck.lower(ck.bind_symbols(arrays, None)).program  # type: ignore[arg-type]
    assert p.tiles is not None and p.execute is not None
    ex = TileExecutor(p.graph, p.tiles)
    want = ex.run(arrays)
    same = True
    for w in (1, 2):
        got, _ = run_cpu(p, arrays, w, ex)  # also builds the board's per-program plan
        same = same and all(got[k].tobytes() == want[k].tobytes() for k in want)
    t = {"torch": float("inf"), "exec": float("inf"), "cpu1": float("inf"), "cpu2": float("inf")}
    for _ in range(reps):
        t["torch"] = min(t["torch"], best(torch_fn, 2))
        t["exec"] = min(t["exec"], best(lambda: ex.run(arrays), 1))
        t["cpu1"] = min(t["cpu1"], best(lambda: run_cpu(p, arrays, 1, ex), 1))
        t["cpu2"] = min(t["cpu2"], best(lambda: run_cpu(p, arrays, 2, ex), 1))
    digest = hashlib.sha1(b"".join(np.ascontiguousarray(want[k]).tobytes() for k in sorted(want))).hexdigest()
    return {**t, "tasks": float(len(p.execute.tasks)), "same": "yes" if same else "NO", "digest": digest}


def against(old: Path, rounds: int, reps: int, only: str | None = None) -> None:
    """This checkout and the one at `old`, side by side (child processes alternating)."""
    new = Path(__file__).resolve().parent.parent
    print(f"old = {old}, new = {new}; {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads); wall-clock seconds, best of {rounds} rounds "
          f"x {reps} runs per side, alternating; torch eager timed in every child, best of all; {_load()} at the start")
    print(f"{'kernel / tile':>24} {'tasks':>6} {'torch s':>8} {'exec old':>8} {'exec new':>8} {'cpu2 old':>8} "
          f"{'cpu2 new':>8} {'cpu1 old':>8} {'cpu1 new':>8} {'exec/t old':>10} {'exec/t new':>10} {'best/t old':>10} "
          f"{'best/t new':>10}  board = exec, old = new")
    cases = [("softmax", i, f"softmax {SOFTMAX_N}^2 {t[0]}x{t[1]}") for i, t in enumerate(SOFTMAX_TILES)]
    cases += [("matmul", i, f"matmul {MATMUL_N}^3 {c[0][1]}x{c[2][1]}") for i, c in enumerate(MATMUL_TILES)]
    for kind, index, label in (c for c in cases if only in (None, c[0])):
        got: dict[str, dict[str, float | str]] = {}
        for _ in range(rounds):
            for name, root in (("old", old), ("new", new)):
                env = {**os.environ, "PYTHONPATH": str(root)}  # pypto from that checkout, `one` from this file
                cmd = [sys.executable, "-c", f"import sys; sys.path.insert(1, {str(Path(__file__).parent)!r}); "
                       f"import cpu_board_bench as b, json; print(json.dumps(b.one({kind!r}, {index}, {reps})))"]
                done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                if name not in got:
                    got[name] = r
                else:
                    for k in ("torch", "exec", "cpu1", "cpu2"):
                        got[name][k] = min(float(got[name][k]), float(r[k]))
        o, n = got["old"], got["new"]
        eager = min(float(o["torch"]), float(n["torch"]))
        f = {side: {k: float(v[k]) for k in ("exec", "cpu1", "cpu2")} for side, v in got.items()}
        tasks = int(float(n["tasks"]))
        print(f"{label:>24} {tasks:>6} {eager:>8.4f} {f['old']['exec']:>8.4f} {f['new']['exec']:>8.4f} "
              f"{f['old']['cpu2']:>8.4f} {f['new']['cpu2']:>8.4f} {f['old']['cpu1']:>8.4f} {f['new']['cpu1']:>8.4f} "
              f"{f['old']['exec'] / eager:>9.2f}x {f['new']['exec'] / eager:>9.2f}x "
              f"{min(f['old']['cpu1'], f['old']['cpu2']) / eager:>9.2f}x "
              f"{min(f['new']['cpu1'], f['new']['cpu2']) / eager:>9.2f}x  "
              f"{o['same']}/{n['same']}, {'yes' if o['digest'] == n['digest'] else 'NO'}")
    print(_load() + " at the end")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, help="another checkout (old executor and board) to measure side by side")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=("softmax", "matmul"), help="one kernel only (with --against)")
    args = ap.parse_args()
    if args.against:
        against(args.against, args.rounds, args.reps, args.only)
    else:
        main()
