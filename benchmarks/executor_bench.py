"""The tiled executor, unbatched vs batched, next to torch eager (printed, not asserted).

Run: `.venv/bin/python benchmarks/executor_bench.py` (or `make bench`). A 4096 x 4096 fp32
softmax over the last axis is compiled at several vector tile shapes and run by the
functional tile executor two ways: unbatched (one numpy call per tile op, the reference
path) and batched (isomorphic independent tile ops stacked into one numpy call per
group). Every time is wall-clock on this machine's CPU, the best of several runs;
"plan" is the one-off cost of building the batched schedule (kept by the executor for
later calls). torch eager runs `torch.softmax` on the same data in the same process.

Old vs new side by side: `git worktree add /tmp/old_exec <commit>`, then
`.venv/bin/python benchmarks/executor_bench.py --against /tmp/old_exec [--rounds 2]`: per
tile shape, child processes alternate old, new, old, new … (pypto from each checkout, this
file's measuring code); each times the batched run and torch eager, and the best of the
rounds is printed, with both sides' ratio to torch eager and whether old and new give the same
bytes. Figures (issue 19 item 4) are in docs/ARCHITECTURE.md ("Values near torch") and below.
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
from pathlib import Path

import numpy as np
import torch
from _timing import best

import pypto
from pypto.compiler.tile_exec import TileExecutor

N = 4096
TILES = ((8, 4096), (64, 512), (32, 512), (32, 128), (32, 32))



def softmax_kernel(tile: tuple[int, int]) -> pypto.JitKernel:
    tr, tc = tile

    @pypto.jit
    def softmax(x: pypto.Tensor([N, N], pypto.DT_FP32), out: pypto.Tensor([N, N], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(tr, tc)
        out[:] = pypto.softmax(x, -1)

    return softmax


def main() -> None:
    print(f"softmax fp32 [{N}, {N}] over the last axis; wall-clock seconds on this machine's CPU "
          f"({platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs), best of several runs")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads)")
    torch.manual_seed(0)
    x = torch.randn(N, N)
    out = torch.empty_like(x)
    arrays = {"x": x.numpy(), "out": out.numpy()}
    eager = best(lambda: torch.softmax(x, -1), 10)
    want = torch.softmax(x, -1).numpy()
    print(f"{'vec tile':>10} {'tile ops':>9} {'tasks':>6} {'groups':>7} {'waves':>6} {'plan s':>7} "
          f"{'unbatched s':>12} {'batched s':>10} {'speed-up':>9} {'torch s':>8}  identical")
    for tile in TILES:
        ck = softmax_kernel(tile).compile(x, out)
        lowered = ck.lower(ck.bind_symbols(arrays, None))
        program = lowered.program
        assert program.tiles is not None and program.execute is not None
        ex = TileExecutor(program.graph, program.tiles)
        t0 = time.perf_counter()
        plan = ex.plan()
        plan_s = time.perf_counter() - t0
        reps = 3 if len(program.tiles.ops) > 50_000 else 5
        unbatched = best(lambda ex=ex: ex.run(arrays, batched=False), reps)
        batched = best(lambda ex=ex: ex.run(arrays), reps)
        a, b = ex.run(arrays, batched=False)["out"], ex.run(arrays)["out"]
        same = a.tobytes() == b.tobytes()
        err = float(np.abs(b - want).max())
        print(f"{str(tile):>10} {len(program.tiles.ops):>9} {len(program.execute.tasks):>6} {len(plan.steps):>7} "
              f"{plan.waves:>6} {plan_s:>7.3f} {unbatched:>12.3f} {batched:>10.3f} {unbatched / batched:>8.1f}x "
              f"{eager:>8.4f}  {'yes' if same else 'NO'} (max |diff| vs torch {err:.1e})")


def one(tile: tuple[int, int], reps: int) -> dict[str, float | str]:
    """In this process: the batched run at `tile` and torch eager, each the best of `reps`
    (interleaved, so a change in the machine's load hits both), and the output's digest."""
    torch.manual_seed(0)
    x = torch.randn(N, N)
    out = torch.empty_like(x)
    arrays = {"x": x.numpy(), "out": out.numpy()}
    ck = softmax_kernel(tile).compile(x, out)
    program = ck.lower(ck.bind_symbols(arrays, None)).program
    assert program.tiles is not None
    ex = TileExecutor(program.graph, program.tiles)
    t0 = time.perf_counter()
    ex.plan()
    plan_s = time.perf_counter() - t0
    got = ex.run(arrays)["out"]
    batched = eager = float("inf")
    for _ in range(reps):
        batched = min(batched, best(lambda: ex.run(arrays), 1))
        eager = min(eager, best(lambda: torch.softmax(x, -1), 2))
    return {"ops": float(len(program.tiles.ops)), "plan": plan_s, "batched": batched, "torch": eager,
            "digest": hashlib.sha1(np.ascontiguousarray(got).tobytes()).hexdigest()}


def against(old: Path, rounds: int, reps: int) -> None:
    """This checkout and the one at `old`, side by side (child processes alternating)."""
    new = Path(__file__).resolve().parent.parent
    print(f"softmax fp32 [{N}, {N}] over the last axis, the batched executor: old = {old}, new = {new}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; torch "
          f"{torch.__version__} ({torch.get_num_threads()} threads); wall-clock seconds, best of {rounds} rounds x "
          f"{reps} runs per side, alternating; torch eager timed in every child, best of all")
    print(f"{'vec tile':>10} {'tile ops':>9} {'old s':>7} {'new s':>7} {'speed-up':>8} {'torch s':>8} "
          f"{'old/torch':>9} {'new/torch':>9} {'old plan s':>10} {'new plan s':>10}  same bytes")
    for tile in TILES:
        got: dict[str, dict[str, float | str]] = {}
        eager = float("inf")
        for _ in range(rounds):
            for name, root in (("old", old), ("new", new)):
                env = {**os.environ, "PYTHONPATH": str(root)}  # pypto from that checkout, `one` from this file
                cmd = [sys.executable, "-c", f"import sys; sys.path.insert(1, {str(Path(__file__).parent)!r}); "
                       f"import executor_bench as b, json; print(json.dumps(b.one({tile!r}, {reps})))"]
                done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                eager = min(eager, float(r["torch"]))
                if name not in got or float(r["batched"]) < float(got[name]["batched"]):
                    got[name] = r
        o, n = got["old"], got["new"]
        ob, nb = float(o["batched"]), float(n["batched"])
        print(f"{str(tile):>10} {int(float(n['ops'])):>9} {ob:>7.3f} {nb:>7.3f} {ob / nb:>7.2f}x {eager:>8.4f} "
              f"{ob / eager:>8.2f}x {nb / eager:>8.2f}x {float(o['plan']):>10.3f} {float(n['plan']):>10.3f}  "
              f"{'yes' if o['digest'] == n['digest'] else 'NO'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, help="another checkout (old executor) to measure side by side")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if args.against:
        against(args.against, args.rounds, args.reps)
    else:
        main()
