"""The tiled executor, unbatched vs batched, next to torch eager (printed, not asserted).

Run: `.venv/bin/python benchmarks/executor_bench.py` (or `make bench`). Two kernels: a
4096 x 4096 fp32 softmax over the last axis, compiled at several vector tile shapes, and a
2048 x 2048 x 2048 fp32 matmul at two cube tile shapes; each is run by the functional tile
executor two ways: unbatched (one numpy call per tile op, the reference path) and batched
(isomorphic independent tile ops stacked into one numpy call per group; a wave's matmul
tiles side by side on threads, each at one BLAS thread). Every time is wall-clock on this
machine's CPU, the best of several runs; "plan" is the one-off cost of building the batched
schedule (kept by the executor for later calls). torch eager runs `torch.softmax` / `a @ b`
on the same data in the same process. The machine's load average is printed: other work on
the machine slows both sides, unequally (torch's threads wait for a busy core as ours do).

Old vs new side by side: `git worktree add /tmp/old_exec <commit>`, then
`.venv/bin/python benchmarks/executor_bench.py --against /tmp/old_exec [--rounds 2]`: per
kernel and tile shape, child processes alternate old, new, old, new … (pypto from each
checkout, this file's measuring code); each times the batched run and torch eager, and the
best of the rounds is printed, with both sides' ratio to torch eager and whether old and new
give the same bytes (matmul: not since matmul tiles run at one BLAS thread, see
`pypto.compiler.blas`). `--only softmax|matmul` runs one kernel.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from _timing import best

import pypto
from pypto.compiler.tile_exec import TileExecutor

N = 4096
TILES = ((8, 4096), (64, 512), (32, 512), (32, 128), (32, 32))
MATMUL_N = 2048
MATMUL_TILES = (([128, 256], [128, 256], [128, 256]), ([128, 512], [128, 128], [128, 512]))  # as cpu_board_bench
KINDS = ("softmax", "matmul")


def softmax_kernel(tile: tuple[int, int]) -> pypto.JitKernel:
    tr, tc = tile

    @pypto.jit
    def softmax(x: pypto.Tensor([N, N], pypto.DT_FP32), out: pypto.Tensor([N, N], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(tr, tc)
        out[:] = pypto.softmax(x, -1)

    return softmax


def matmul_kernel(cube: tuple[list[int], list[int], list[int]]) -> pypto.JitKernel:
    t = pypto.Tensor([MATMUL_N, MATMUL_N], pypto.DT_FP32)

    @pypto.jit
    def matmul(a: t, b: t) -> pypto.Tensor():
        pypto.set_cube_tile_shapes(*cube)
        return pypto.matmul(a, b, pypto.DT_FP32)

    return matmul


def case(kind: str, index: int) -> tuple[str, pypto.JitKernel, tuple[torch.Tensor, ...], Callable[[], torch.Tensor]]:
    """Kernel `kind` at its `index`-th tile shape: label, kernel, arguments, torch eager's call."""
    torch.manual_seed(0)
    if kind == "softmax":
        tile = TILES[index]
        x = torch.randn(N, N)
        return (f"softmax {N}^2 {tile[0]}x{tile[1]}", softmax_kernel(tile), (x, torch.empty_like(x)),
                lambda: torch.softmax(x, -1))
    cube = MATMUL_TILES[index]
    a, b = torch.randn(MATMUL_N, MATMUL_N), torch.randn(MATMUL_N, MATMUL_N)
    return f"matmul {MATMUL_N}^3 {cube[0][1]}x{cube[2][1]}", matmul_kernel(cube), (a, b), lambda: a @ b


def cases(only: str | None) -> list[tuple[str, int]]:
    return [(k, i) for k in KINDS if only in (None, k) for i in range(len(TILES if k == "softmax" else MATMUL_TILES))]


def _executor(kernel: pypto.JitKernel,
              args: tuple[torch.Tensor, ...]) -> tuple[TileExecutor, dict[str, np.ndarray], int]:
    ck = kernel.compile(*args)
    arrays = {n: a.numpy() for n, a in zip(ck.param_names, args)}
    program = ck.lower(ck.bind_symbols(arrays, None)).program  # type: ignore[arg-type]
    assert program.tiles is not None and program.execute is not None
    return TileExecutor(program.graph, program.tiles), arrays, len(program.execute.tasks)


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def main(only: str | None) -> None:
    print(f"softmax fp32 [{N}, {N}] over the last axis, matmul fp32 {MATMUL_N}^3; wall-clock seconds on this "
          f"machine's CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs), best of "
          f"several runs; {_load()} at the start")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads)")
    print(f"{'kernel / tile':>24} {'tile ops':>9} {'tasks':>6} {'groups':>7} {'waves':>6} {'plan s':>7} "
          f"{'unbatched s':>12} {'batched s':>10} {'speed-up':>9} {'torch s':>8} {'/torch':>7}  identical")
    for kind, index in cases(only):
        label, kernel, args, torch_fn = case(kind, index)
        ex, arrays, tasks = _executor(kernel, args)
        t0 = time.perf_counter()
        plan = ex.plan()
        plan_s = time.perf_counter() - t0
        reps = 3 if len(ex.tiles.ops) > 50_000 else 5
        unbatched = best(lambda ex=ex, arrays=arrays: ex.run(arrays, batched=False), reps)
        batched = best(lambda ex=ex, arrays=arrays: ex.run(arrays), reps)
        eager = best(torch_fn, 10)  # next to the others: the machine's load varies over a run
        a, b = ex.run(arrays, batched=False), ex.run(arrays)
        same = all(a[k].tobytes() == b[k].tobytes() for k in a)
        want = torch_fn().numpy()
        err = max(float(np.abs(v - want).max()) for v in b.values())
        print(f"{label:>24} {len(ex.tiles.ops):>9} {tasks:>6} {len(plan.steps):>7} "
              f"{plan.waves:>6} {plan_s:>7.3f} {unbatched:>12.3f} {batched:>10.3f} {unbatched / batched:>8.1f}x "
              f"{eager:>8.4f} {batched / eager:>6.2f}x  {'yes' if same else 'NO'} (max |diff| vs torch {err:.1e})")
    print(_load() + " at the end")


def one(kind: str, index: int, reps: int) -> dict[str, float | str]:
    """In this process: the batched run of `kind` at its `index`-th tile shape and torch eager, each
    the best of `reps` (interleaved, so a change in the machine's load hits both), and the outputs' digest."""
    _, kernel, args, torch_fn = case(kind, index)
    ex, arrays, _ = _executor(kernel, args)
    t0 = time.perf_counter()
    ex.plan()
    plan_s = time.perf_counter() - t0
    got = ex.run(arrays)
    batched = eager = float("inf")
    for _ in range(reps):
        batched = min(batched, best(lambda: ex.run(arrays), 1))
        eager = min(eager, best(torch_fn, 2))
    digest = hashlib.sha1(b"".join(np.ascontiguousarray(got[k]).tobytes() for k in sorted(got))).hexdigest()
    return {"ops": float(len(ex.tiles.ops)), "plan": plan_s, "batched": batched, "torch": eager, "digest": digest}


def against(old: Path, rounds: int, reps: int, only: str | None) -> None:
    """This checkout and the one at `old`, side by side (child processes alternating)."""
    new = Path(__file__).resolve().parent.parent
    print(f"the batched executor: old = {old}, new = {new}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} logical CPUs; torch {torch.__version__} ({torch.get_num_threads()} threads); wall-clock "
          f"seconds, best of {rounds} rounds x {reps} runs per side, alternating; torch eager timed in every child, "
          f"best of all; {_load()} at the start")
    print(f"{'kernel / tile':>24} {'tile ops':>9} {'old s':>7} {'new s':>7} {'speed-up':>8} {'torch s':>8} "
          f"{'old/torch':>9} {'new/torch':>9} {'old plan s':>10} {'new plan s':>10}  same bytes")
    for kind, index in cases(only):
        label = case(kind, index)[0]
        got: dict[str, dict[str, float | str]] = {}
        eager = float("inf")
        for _ in range(rounds):
            for name, root in (("old", old), ("new", new)):
                env = {**os.environ, "PYTHONPATH": str(root)}  # pypto from that checkout, `one` from this file
                cmd = [sys.executable, "-c", f"import sys; sys.path.insert(1, {str(Path(__file__).parent)!r}); "
                       f"import executor_bench as b, json; print(json.dumps(b.one({kind!r}, {index}, {reps})))"]
                done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                eager = min(eager, float(r["torch"]))
                if name not in got or float(r["batched"]) < float(got[name]["batched"]):
                    got[name] = r
        o, n = got["old"], got["new"]
        ob, nb = float(o["batched"]), float(n["batched"])
        print(f"{label:>24} {int(float(n['ops'])):>9} {ob:>7.3f} {nb:>7.3f} {ob / nb:>7.2f}x {eager:>8.4f} "
              f"{ob / eager:>8.2f}x {nb / eager:>8.2f}x {float(o['plan']):>10.3f} {float(n['plan']):>10.3f}  "
              f"{'yes' if o['digest'] == n['digest'] else 'NO'}")
    print(_load() + " at the end")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, help="another checkout (old executor) to measure side by side")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=KINDS, help="one kernel only")
    args = ap.parse_args()
    if args.against:
        against(args.against, args.rounds, args.reps, args.only)
    else:
        main(args.only)
