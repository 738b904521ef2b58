"""Trace + graph-build time per example and for a 100-op kernel (printed, not asserted).

Run: `make bench` (or `.venv/bin/python benchmarks/trace_bench.py`). Every figure is wall
time measured on this machine's CPU; each is the best of several runs. "trace" is tracing
the body into the tensor graph (shape inference and tile-shape checks included); the
tensor-stage passes are timed apart; "text" is printing the graph's text form; a kernel
call runs the tiled executor, shown next to the reference interpreter and torch eager
doing the same math in the same run.
"""

from __future__ import annotations

import platform
import statistics
import sys
from pathlib import Path

import torch
from _timing import best

import pypto
from pypto.cli import load_module
from pypto.frontend.jit import JitKernel
from pypto.ir import text
from pypto.reference.interpreter import Interpreter

REPO = Path(__file__).resolve().parent.parent
REPS = 7



def per_example() -> None:
    print(f"{'example kernel':<44} {'nodes':>6} {'trace ms':>9} {'text ms':>8}  (trace: the body into the graph)")
    for path in sorted((REPO / "examples").glob("*.py")):
        mod = load_module(path)
        kernels = [(n, k) for n, k in sorted(vars(mod).items()) if isinstance(k, JitKernel)]
        traces: dict[str, list[float]] = {}
        for _ in range(3):  # re-run the example with cold caches; keep the best trace time
            for _, k in kernels:
                k.cache.clear()
            mod.check()
            for name, k in kernels:
                for i, ck in enumerate(k.cache.values()):
                    traces.setdefault(f"{path.stem}.{name}[{i}]", []).append(ck.trace_seconds)
        for name, k in kernels:
            for i, ck in enumerate(k.cache.values()):
                t_text = best(lambda g=ck.graph: text.to_text(g))
                key = f"{path.stem}.{name}[{i}]"
                print(f"{key:<44} {len(ck.graph):>6} {min(traces[key]) * 1e3:>9.2f} {t_text * 1e3:>8.2f}")


def hundred_op_kernel():
    row = pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32)

    @pypto.jit
    def chain(x: row, y: row, out: row):
        pypto.set_vec_tile_shapes(16, 256)
        t = x
        for k in range(25):  # unrolled at compile time: 4 ops per step, 100 ops
            t = t * 0.5 + y
            t = pypto.maximum(t, x)
            t = pypto.tanh(t) if k % 2 else pypto.sigmoid(t)
        out[:] = t

    return chain


def torch_chain(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    t = x
    for k in range(25):
        t = t * 0.5 + y
        t = torch.maximum(t, x)
        t = torch.tanh(t) if k % 2 else torch.sigmoid(t)
    return t


def hundred_ops() -> None:
    x, y = torch.randn(512, 256), torch.randn(512, 256)
    out = torch.empty_like(x)
    traces, stages = [], []
    for _ in range(REPS):
        k = hundred_op_kernel()
        ck = k.compile(x, y, out)
        traces.append(ck.trace_seconds)
        stages.append(ck.compile_seconds)
    ops = sum(1 for n in ck.graph.walk() if n.op not in ("param", "assume"))
    t_text = best(lambda: text.to_text(ck.graph))
    t_parse = best(lambda: text.parse(text.to_text(ck.graph)))
    arrays = {"x": x.numpy(), "y": y.numpy(), "out": out.numpy()}
    t_ref = best(lambda: Interpreter(ck.program.graph).run(arrays, {"x.d0": 512, "y.d0": 512, "out.d0": 512}))
    k(x, y, out)
    t_run = best(lambda: k(x, y, out))
    t_torch = best(lambda: torch_chain(x, y))
    torch.testing.assert_close(out, torch_chain(x, y), rtol=1e-3, atol=1e-3)
    print(f"\n100-op kernel ({ops} graph ops on 512x256 fp32):")
    print(f"  trace + graph build : {min(traces) * 1e3:8.2f} ms best, {statistics.median(traces) * 1e3:.2f} ms median"
          f"  ({min(traces) / ops * 1e6:.1f} us per op)")
    print(f"  tensor-stage passes : {min(stages) * 1e3:8.2f} ms best (7 passes, recorded)")
    print(f"  text form           : {t_text * 1e3:8.2f} ms print, {t_parse * 1e3:.2f} ms print+parse")
    print(f"  kernel call         : {t_run * 1e3:8.2f} ms (tiled executor)   reference interpreter: "
          f"{t_ref * 1e3:.2f} ms   torch eager: {t_torch * 1e3:.2f} ms (same run, same inputs)")


if __name__ == "__main__":
    print(f"measured on this machine: {platform.processor() or platform.machine()}, "
          f"python {sys.version.split()[0]}, torch {torch.__version__}, torch threads {torch.get_num_threads()}\n")
    per_example()
    hundred_ops()
