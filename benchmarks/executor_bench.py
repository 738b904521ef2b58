"""The tiled executor, unbatched vs batched, next to torch eager (printed, not asserted).

Run: `.venv/bin/python benchmarks/executor_bench.py` (or `make bench`). A 4096 x 4096 fp32
softmax over the last axis is compiled at several vector tile shapes and run by the
functional tile executor two ways: unbatched (one numpy call per tile op, the reference
path) and batched (isomorphic independent tile ops stacked into one numpy call per
group). Every time is wall-clock on this machine's CPU, the best of several runs;
"plan" is the one-off cost of building the batched schedule (kept by the executor for
later calls). torch eager runs `torch.softmax` on the same data in the same process.
"""

from __future__ import annotations

import os
import platform
import sys
import time

import numpy as np
import torch
from _timing import best

import pypto
from pypto.compiler.tile_exec import TileExecutor

N = 4096
TILES = ((64, 512), (32, 512), (32, 128), (32, 32))



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


if __name__ == "__main__":
    main()
