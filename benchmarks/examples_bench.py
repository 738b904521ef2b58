"""Trace and compile times of every kernel in examples/ (the new ones of issue 15 among them).

Per kernel, compiled from its file's example inputs (`pypto-inputs:` blocks) by a fresh copy of
the kernel (no compile cache): the trace (the body run once into a tensor graph, including the
traced body's rewrite of run-time `if` / `min` / `max`), the tensor stage, and the later stages
(tile, block, execute) for the example's dims; graph nodes, tile ops and tasks. Best of a few
runs, wall clock, measured on this machine's CPU.

Run: `.venv/bin/python benchmarks/examples_bench.py` (or `make bench`).
"""

from __future__ import annotations

import importlib.util
import platform
import time
import warnings
from pathlib import Path

import pypto
from pypto.frontend.inputs import example_arguments
from pypto.record import bind

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REPS = 3


def kernels() -> list[tuple[str, pypto.JitKernel]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out += [(f"{path.name}::{v.name}", v) for v in vars(mod).values() if isinstance(v, pypto.JitKernel)]
    return out


def measure(kernel: pypto.JitKernel) -> tuple[float, float, float, int, int, int]:
    best = None
    for _ in range(REPS):
        k = kernel.fresh()
        args = example_arguments(k)
        ck = k.compile(**args)
        t0 = time.perf_counter()
        lw = ck.lower(bind(ck.graph, args))
        lower = time.perf_counter() - t0
        row = (ck.trace_seconds, ck.compile_seconds, lower, len(list(ck.graph.walk())),
               len(lw.program.tiles.ops) if lw.program.tiles else 0,
               len(lw.program.execute.tasks) if lw.program.execute else 0)
        best = row if best is None or sum(row[:3]) < sum(best[:3]) else best
    assert best is not None
    return best


def main() -> None:
    print(f"examples: trace and compile, best of {REPS} ({platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}; wall clock on this machine)")
    print(f"{'kernel':52} {'trace ms':>9} {'tensor ms':>10} {'lower ms':>9} {'nodes':>6} {'tile ops':>9} {'tasks':>6}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pypto.PyptoWarning)
        for name, k in kernels():
            trace, tensor, lower, nodes, ops, tasks = measure(k)
            print(f"{name:52} {trace * 1e3:9.2f} {tensor * 1e3:10.2f} {lower * 1e3:9.2f} {nodes:6} {ops:9} {tasks:6}")


if __name__ == "__main__":
    main()
