"""The tuning advisor's quality: its best suggestion against the exhaustive optimum.

For each kernel (each starts from a deliberately poor tile shape), the advisor searches as the IDE
does: its default budget (10 % of the legal space rounded up, at least 6 evaluations) within the
wall-clock budget (`--time`, default 10 s), the kernel's own compile included; then every candidate
of the same space is evaluated. Printed per kernel: the space size, the evaluations the
advisor used (and their share of the space), the baseline, the advisor's and the optimal
SIMULATED makespans (sim board, a2a3 model), the quality (optimal / advisor, target
>= 95 %), and the advisor's wall time on this machine.

Then the realistic kernels (attention 32 heads x 512 x 64 fp16, matmul 4096^3 fp16, layernorm
8192 x 8192 bf16, softmax over a dynamic batch), whose spaces are too large to search
exhaustively: the advisor with the IDE's wall-clock budget (`--time`, default 10 s) against a
long search (`--long`, default 120 s) from the same start, with how much of the space each
searched. `advisor s` includes compiling the kernel as written; `search s` is the search alone
(what the IDE waits for: it has the kernel's record already).

Run: `.venv/bin/python benchmarks/advisor_bench.py [--quick] [--time S] [--long S] [--only small|realistic]`
(or `make bench`). Takes several minutes: the exhaustive pass compiles every candidate.
"""

from __future__ import annotations

import platform
import sys
import time

import torch

import pypto
from pypto.analysis.advisor import Advisor


def softmax(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.softmax(x, -1)
    return k


def elementwise(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.exp(x) * 2.0 + x
    return k


def bias_gelu(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        y = x + b
        out[:] = y * pypto.sigmoid(y * 1.702)
    return k


def rmsnorm(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        ms = pypto.sum(x * x, dim=-1, keepdim=True) / x.shape[-1]
        out[:] = x * pypto.rsqrt(ms + 1e-6)
    return k


def row_sum(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.sum(x, dim=-1, keepdim=True)
    return k


def matmul(cube):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes(*cube)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return k


def layernorm(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        c = x - pypto.sum(x, dim=-1, keepdim=True) / x.shape[-1]
        var = pypto.sum(c * c, dim=-1, keepdim=True) / x.shape[-1]
        out[:] = c * pypto.rsqrt(var + 1e-5)
    return k


def attention(cube, tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(q: pypto.Tensor(), kk: pypto.Tensor(), v: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes(*cube)
        pypto.set_vec_tile_shapes(*tile)
        for h in pypto.loop(0, q.shape[0], 1, name="heads"):
            s = pypto.matmul(q[h:h + 1, ...], kk[h:h + 1, ...], pypto.DT_FP32, b_trans=True) * 0.125
            e = pypto.exp(s - pypto.amax(s, dim=-1, keepdim=True))
            p = pypto.cast(e / pypto.sum(e, dim=-1, keepdim=True), pypto.DT_FP16)
            out[h:, ...] = pypto.matmul(p, v[h:h + 1, ...], pypto.DT_FP32)
    return k


def dynamic_softmax(tile):  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 4096], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 4096],
          pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        for i in pypto.loop(0, x.shape[0], 64, name="rows"):
            rows = x[i:i + 64, :]
            out[i:i + 64, :] = pypto.softmax(rows, -1)
    return k


def realistic():  # type: ignore[no-untyped-def]
    t = torch.randn
    yield ("attention 32x512x64 fp16", attention(([64, 128], [64, 128], [64, 128]), (1, 32, 512)),
           {"q": t(32, 512, 64).half(), "kk": t(32, 512, 64).half(), "v": t(32, 512, 64).half(),
            "out": t(32, 512, 64)})
    yield ("fp16 matmul 4096^3", matmul(([64, 64], [64, 64], [64, 64])),
           {"a": t(4096, 4096).half(), "b": t(4096, 4096).half(), "c": torch.empty(4096, 4096)})
    yield ("bf16 layernorm 8192x8192", layernorm((8, 512)),
           {"x": t(8192, 8192).bfloat16(), "out": torch.empty(8192, 8192, dtype=torch.bfloat16)})
    yield "softmax over a dynamic batch (1024 rows)", dynamic_softmax((8, 512)), {"x": t(1024, 4096),
                                                                                    "out": t(1024, 4096)}


def cases():  # type: ignore[no-untyped-def]
    t = torch.randn
    yield "softmax 1024x1024 from (4, 64)", softmax((4, 64)), {"x": t(1024, 1024), "out": t(1024, 1024)}
    yield "softmax 2048x512 from (64, 32)", softmax((64, 32)), {"x": t(2048, 512), "out": t(2048, 512)}
    yield "exp*2+x 2048x2048 from (2, 64)", elementwise((2, 64)), {"x": t(2048, 2048), "out": t(2048, 2048)}
    yield ("bias+gelu 1024x2048 from (8, 32)", bias_gelu((8, 32)),
           {"x": t(1024, 2048), "b": t(2048), "out": t(1024, 2048)})
    yield "rmsnorm 2048x1024 from (1, 128)", rmsnorm((1, 128)), {"x": t(2048, 1024), "out": t(2048, 1024)}
    yield "row sum 4096x512 from (512, 16)", row_sum((512, 16)), {"x": t(4096, 512), "out": t(4096, 1)}
    yield ("fp16 matmul 1024^3 from m=n=k=16", matmul(([16, 16], [16, 16], [16, 16])),
           {"a": t(1024, 1024).half(), "b": t(1024, 1024).half(), "c": t(1024, 1024)})
    yield "layernorm 1024x2048 from (64, 32)", layernorm((64, 32)), {"x": t(1024, 2048), "out": t(1024, 2048)}


def _arg(name: str, default: float) -> float:
    return float(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main() -> None:
    quick = "--quick" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    print(f"tuning advisor against the exhaustive optimum (makespans SIMULATED on the sim board; "
          f"wall times on {platform.machine()}, python {platform.python_version()})\n")
    if only != "realistic":
        small(quick, _arg("--time", 10.0))
    if only != "small":
        large(_arg("--time", 10.0), _arg("--long", 120.0))


def large(seconds: float, long: float) -> None:
    print(f"\nrealistic kernels: the advisor with a {seconds:g} s budget against a {long:g} s search")
    head = (f"{'kernel':<44} {'space':>8} {'evals':>6} {'advisor s':>10} {'search s':>9} {'advisor µs':>11} "
            f"{'long evals':>10} {'long µs':>10} {'baseline µs':>12} {'quality':>8}")
    print(head)
    for name, kernel, inputs in realistic():
        t0 = time.perf_counter()
        adv = Advisor(kernel, inputs)
        found = adv.search(budget=10**9, seconds=seconds)
        wall = time.perf_counter() - t0
        ref = Advisor(kernel, inputs)
        best = ref.search(budget=10**9, seconds=long)
        assert found.makespan is not None and best.makespan is not None and adv.baseline is not None
        best_ms = min(best.makespan, found.makespan)
        print(f"{name:<44} {adv.space_size():>8,} {adv.evaluations:>6} {wall:>10.1f} {adv.search_seconds:>9.1f} "
              f"{found.makespan:>11,.2f} "
              f"{ref.evaluations:>10} {best.makespan:>10,.2f} {adv.baseline.makespan or 0:>12,.2f} "
              f"{best_ms / found.makespan:>8.1%}")


def small(quick: bool, seconds: float) -> None:
    head = (f"{'kernel':<54} {'space':>6} {'evals':>6} {'share':>6} {'baseline µs':>12} {'advisor µs':>11} "
            f"{'optimum µs':>11} {'quality':>8} {'advisor s':>10}")
    print(head)
    qualities, shares = [], []
    for name, kernel, inputs in cases():
        t0 = time.perf_counter()
        adv = Advisor(kernel, inputs)
        found = adv.search(seconds=seconds)  # as the IDE searches: its default budget and time limit
        wall = time.perf_counter() - t0
        evals = adv.evaluations
        space = adv.space_size()
        assert found.makespan is not None and adv.baseline is not None and adv.baseline.makespan is not None
        if quick:
            best = found
        else:
            best = adv.exhaustive()
        assert best.makespan is not None
        quality = best.makespan / found.makespan
        qualities.append(quality)
        shares.append(evals / space)
        print(f"{name:<54} {space:>6} {evals:>6} {evals / space:>6.0%} {adv.baseline.makespan:>12,.2f} "
              f"{found.makespan:>11,.2f} {best.makespan:>11,.2f} {quality:>8.1%} {wall:>10.2f}")
    print(f"\nmean quality {sum(qualities) / len(qualities):.1%} (min {min(qualities):.1%}); "
          f"mean evaluations {sum(shares) / len(shares):.0%} of the space (max {max(shares):.0%})"
          + (" — --quick: no exhaustive pass, quality not measured" if quick else ""))


if __name__ == "__main__":
    main()
