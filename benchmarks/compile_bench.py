"""Full compile with recording: softmax on 4096x4096 fp32 at four vector tile shapes.

Prints, per tile shape: tile count, tile ops, tasks, leaves, wall time of each stage and
in total (trace + every pass, recorded), and peak Python memory of the compile (measured
in a second, separate run under tracemalloc, which slows it down). Targets from issue 3:
under 0.1 s at (64, 512), under 2 s at (32, 32), near-linear growth. Wall-clock figures,
measured on this machine's CPU, best of a few runs.

Then three kernels whose cost once grew worse than linearly (issue 16): matmul 1024^3 fp16 at
64^3 cube tiles (isomorphic matmul tiles share one leaf: leaves and block-stage time), and
exp*2+x on 2048^2 at 2x64 vector tiles (131k tile ops: the partition's GM dependencies go
through a grid index, not every earlier writer of a buffer), and an unrolled loop with tails
(QAT's per-tensor backward: its GM accesses come in several shapes, one index grid each, and a
leaf's many on-chip ranges are found by bisection).

Run: `.venv/bin/python benchmarks/compile_bench.py` (or `make bench`).

`--views [--panel-against REV]`: the editor view and the panels' slim record of the profiled 32x32 record, side
by side in one process. Measured 2026-11-28 (load average 0.8): editor view 0.185 CPU s (0.359 s as at 8b81673,
before its tile index was made with numpy); the slim record 0.402 s from the whole lists, 0.090 s from lists
that never decode what it leaves out (`server.analyze.panel_lists`).

Side by side with another checkout (issue 19 item 2: < 5 µs per tile op, linear):
`git worktree add /tmp/old_compile <commit>` then
`.venv/bin/python benchmarks/compile_bench.py --against /tmp/old_compile [--rounds 3 --reps 2]`:
child processes alternate old, new, old, new … per tile shape; best wall and best CPU time each.
Measured 2026-11-25 on this shared 2-core machine (load average 2.5-6 from other sessions), old =
the compiler of 8a88b71 (pypto/compiler checked out from it, the rest at 5752e22), new = c30ca75,
best of 3 x 2 per side:

      tile   tile ops   old s   new s   old µs/op   new µs/op   speed-up   CPU speed-up
  (64, 512)     7,040   0.139   0.081       19.78       11.49      1.72x          1.73x
  (32, 512)    13,312   0.284   0.155       21.34       11.61      1.84x          1.84x
  (32, 128)    49,920   0.931   0.545       18.66       10.92      1.71x          1.67x
   (32, 32)   196,608   3.670   2.270       18.67       11.54      1.62x          1.63x

Per stage at (32, 32), old/new wall s: tile 2.628/1.630, block 0.108/0.137, execute 0.759/0.320.
Linear: µs per tile op stays flat from 7k to 197k tile ops. The target is not met: on the quiet
machine of issue 19's figures the old compiler took 2.07 s (10.5 µs per tile op) where it takes
3.67 s here, so the new one is about 6.4 µs there. What is left is per-op object work (a TileOp
built, looked up, signed, indexed several times); see ARCHITECTURE.md, "Compile speed".

Second round, measured 2026-11-27 on this 2-core machine at load average ~2-2.5 (another session
running), old = 2482832, new = 5444b09, `--against /tmp/compile_old --rounds 3 --reps 2`:

      tile  tile ops   old s   new s  old µs/op  new µs/op speed-up cpu old µs/op cpu new µs/op cpu speed-up
 (64, 512)      7040   0.046   0.035       6.59       4.91    1.34x          6.25          4.91        1.27x
 (32, 512)     13312   0.079   0.056       5.92       4.24    1.40x          5.61          4.22        1.33x
 (32, 128)     49920   0.271   0.211       5.43       4.23    1.28x          5.38          4.23        1.27x
  (32, 32)    196608   1.354   0.932       6.89       4.74    1.45x          6.77          4.69        1.45x

Per stage at (32, 32), old/new wall s: tile 0.846/0.731, block 0.045/0.047, execute 0.171/0.153; the rest
of the gain is the collector's pass after the pause (gone) and the tile executor (made on first use).
Under 5 µs per tile op at every shape, 196,608 tile ops in 0.93 s; flat from 13k to 197k tile ops.

Third round, measured 2026-11-27 at load average ~2 (another session running), old = 3457cdf (before the
compiler made the execute graph's task columns, which cost +0.05 s at 32x32 and put it at 5.05 µs per tile
op), new = 1ea0a99, `--against /tmp/sim_cold_old --rounds 3 --reps 2` (`mkdir -p /tmp/sim_cold_old && git
archive 3457cdf | tar -x -C /tmp/sim_cold_old`):

      tile  tile ops   old s   new s  old µs/op  new µs/op speed-up cpu old µs/op cpu new µs/op cpu speed-up
 (64, 512)      7040   0.038   0.033       5.38       4.67    1.15x          5.38          4.67        1.15x
 (32, 512)     13312   0.067   0.059       5.01       4.40    1.14x          5.01          4.40        1.14x
 (32, 128)     49920   0.245   0.211       4.91       4.22    1.16x          4.91          4.22        1.16x
  (32, 32)    196608   0.994   0.826       5.06       4.20    1.20x          5.05          4.20        1.20x

Per stage at (32, 32), old/new wall s: tile 0.769/0.692, block 0.050/0.035, execute 0.173/0.096, the task
columns included: the execute stage takes partition's notes on its copies (`tile_ir.CopyFacts`), tile ops
are made at half the cost; see ARCHITECTURE.md, "Compile speed". 196,608 tile ops in 0.83 s, 4.2 µs per
tile op from 13k to 197k tile ops.

The record (issue 19 item 1: for softmax 4096² at 32x32, written in < 0.5 s, < 10 MB on disk, peak RSS of
the whole compile < 300 MB): `.venv/bin/python benchmarks/compile_bench.py --record [--rounds 2]` prints, at
the four tile shapes, the compile's µs per tile op, the record's write time (wall and CPU) and bytes on
disk, and `pypto-ide compile FILE --record DIR`'s wall and CPU time and peak RSS, each in a fresh process;
`--record-against OLD` (a `git worktree` of an older commit) puts OLD's beside this checkout's, alternating.
Measured 2026-11-27 on this shared 2-core machine (load average 4-7 from other sessions), old = a9f1495
(records version 2, example inputs made with values by torch), new = 4b3cb54 (inputs without values, typed
column encoders), best of 3 per side (`--record-against /tmp/old --rounds 3`, run from new's checkout):

      tile  tile ops  side compile s   µs/op cpu µs/op  write s write cpu      MB CLI wall s CLI cpu s CLI RSS MiB
 (64, 512)      7040   old      0.39   55.81     27.35    0.037     0.018    0.34       3.43      1.75         364
 (64, 512)      7040   new      0.07    9.43      7.30    0.027     0.015    0.34       0.77      0.43          52
 (32, 512)     13312   old      0.23   16.95     16.54    0.028     0.028    0.57       1.59      1.68         369
 (32, 512)     13312   new      0.08    6.30      6.30    0.024     0.024    0.57       0.50      0.47          57
 (32, 128)     49920   old      0.44    8.77      8.77    0.104     0.103    2.26       1.98      2.02         398
 (32, 128)     49920   new      0.31    6.21      6.20    0.087     0.087    2.26       0.75      0.85          86
  (32, 32)    196608   old      1.56    7.92      7.78    0.516     0.514    8.08       4.10      4.00         515
  (32, 32)    196608   new      1.38    7.03      7.01    0.436     0.436    8.08       2.58      2.68         199

At 32x32 the three targets are met here: written in 0.44 s, 8.1 MB, 199 MiB peak for the whole
`pypto-ide compile` (old: 515 MiB, of which ~180 MiB torch's import and 128 MiB the two inputs' values,
neither needed to compile). Old's compile s includes making those inputs (0.2-0.3 s). µs per tile op
(issue 19 item 2, not this work) stays about 6-7 CPU µs from 13k to 197k tile ops.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import torch

import pypto

SIZE = 4096
TILES = ((64, 512), (32, 512), (32, 128), (32, 32))
REPS = 3


def make_kernel(tile: tuple[int, int]) -> pypto.JitKernel:
    t = pypto.Tensor([SIZE, SIZE], pypto.DT_FP32)

    @pypto.jit
    def softmax(x: t, out: t):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.softmax(x, -1)

    return softmax


def compile_once(tile: tuple[int, int], x: torch.Tensor, out: torch.Tensor, cpu: list[float] | None = None):
    k = make_kernel(tile)
    c0, t0 = time.process_time(), time.perf_counter()
    ck = k.compile(x, out)
    lowered = ck.lower({})
    seconds = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(time.process_time() - c0)
    return seconds, ck, lowered


def main() -> None:
    x = torch.randn(SIZE, SIZE)
    out = torch.empty_like(x)
    print(f"softmax {SIZE}x{SIZE} fp32, full compile with recording; wall time on this machine "
          f"({platform.machine()}, python {platform.python_version()}), best of {REPS}\n")
    head = f"{'tile':>10} {'tiles':>6} {'tile ops':>9} {'tasks':>6} {'leaves':>6} {'total s':>8} {'per 1k ops':>10}"
    stages = ("tensor", "tile", "block", "execute")
    print(head + "".join(f" {s + ' s':>9}" for s in stages) + f" {'peak MiB':>9}")
    for tile in TILES:
        best = None
        for _ in range(REPS):
            seconds, ck, lw = compile_once(tile, x, out)
            if best is None or seconds < best[0]:
                best = (seconds, ck, lw)
        assert best is not None
        seconds, ck, lw = best
        per_stage = {s: sum(r.seconds for r in ck.passes + lw.passes if r.stage == s) for s in stages}
        tracemalloc.start()
        compile_once(tile, x, out)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        p = lw.program
        tiles = (SIZE // tile[0]) * (SIZE // tile[1])
        print(f"{str(tile):>10} {tiles:>6} {len(p.tiles.ops):>9} {len(p.execute.tasks):>6} {len(p.leaves):>6} "
              f"{seconds:>8.3f} {seconds / len(p.tiles.ops) * 1e3:>10.3f}"
              + "".join(f" {per_stage[s]:>9.3f}" for s in stages) + f" {peak:>9.1f}")

    many_tiles()


def many_tiles() -> None:
    print("\nkernels with many tiles (lowering wall time, best of 2)")
    print(f"{'kernel':<34} {'tile ops':>9} {'tasks':>6} {'leaves':>6} {'lower s':>8} {'block s':>8} "
          f"{'partition s':>12}")

    @pypto.jit
    def mm(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    @pypto.jit
    def ew(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2, 64)
        out[:] = pypto.exp(x) * 2.0 + x

    @pypto.jit
    def unrolled(g: pypto.Tensor(), w: pypto.Tensor(), gw: pypto.Tensor(), gs: pypto.Tensor()):
        # QAT's per-tensor backward, in outline: an unrolled loop whose tails run at other sizes,
        # so its GM accesses come in several shapes, and a big body (spills in UB)
        rows, cols = w.shape
        pypto.set_vec_tile_shapes(4, cols)
        acc = pypto.full([1, 1], 0.0, pypto.DT_FP32)
        for off, size in pypto.loop_unroll(0, rows, 1, name="rows", idx_name="off", unroll_list=[512, 32, 8]):
            gt = pypto.cast(pypto.view(g, [size, cols], [off, 0]), pypto.DT_FP32)
            wt = pypto.cast(pypto.view(w, [size, cols], [off, 0]), pypto.DT_FP32)
            r = pypto.round(wt * 0.5, decimals=0)
            c = pypto.clip(r, -128.0, 127.0)
            mask = pypto.clip(pypto.abs(r - c), 0.0, 1.0) * -1.0 + 1.0
            pypto.assemble(pypto.cast(gt * mask, pypto.DT_BF16), [off, 0], gw)
            part = pypto.sum(gt * c, dim=1, keepdim=True)
            pypto.set_vec_tile_shapes(512, 8)
            acc[:] = acc + pypto.sum(part, dim=0, keepdim=True)
        gs[:] = pypto.cast(acc, pypto.DT_BF16)

    n = 1024
    cases = (("fp16 matmul 1024^3 at 64^3", mm, (torch.randn(n, n).half(), torch.randn(n, n).half(),
                                                  torch.empty(n, n))),
             ("exp*2+x 2048^2 at 2x64", ew, (torch.randn(2048, 2048), torch.empty(2048, 2048))),
             ("unroll 512/32/8, 1160x2048 bf16 at 4x2048", unrolled,
              (torch.randn(1160, 2048).bfloat16(), torch.randn(1160, 2048).bfloat16(),
               torch.empty(1160, 2048).bfloat16(), torch.empty(1, 1).bfloat16())))
    for name, kernel, args in cases:
        best = None
        for _ in range(2):
            ck = kernel.fresh().compile(*args)
            t0 = time.perf_counter()
            lw = ck.lower({})
            seconds = time.perf_counter() - t0
            if best is None or seconds < best[0]:
                best = (seconds, lw)
        assert best is not None
        seconds, lw = best
        p = lw.program
        stage = {r.name: r.seconds for r in lw.passes}
        print(f"{name:<34} {len(p.tiles.ops):>9} {len(p.execute.tasks):>6} {len(p.leaves):>6} {seconds:>8.2f} "
              f"{stage.get('block_schedule', 0.0):>8.2f} {stage.get('graph_partition', 0.0):>12.2f}")


def one(tile: tuple[int, int], reps: int) -> dict[str, float]:
    """Best of `reps` full compiles at `tile` in this process: seconds, tile ops, and per stage."""
    x = torch.randn(SIZE, SIZE)
    out = torch.empty_like(x)
    best: dict[str, float] | None = None
    cpu: list[float] = []
    for _ in range(reps):
        seconds, ck, lw = compile_once(tile, x, out, cpu)
        if best is None or seconds < best["seconds"]:
            best = {"seconds": seconds, "ops": float(len(lw.program.tiles.ops))}
            for r in ck.passes + lw.passes:
                best[r.stage] = best.get(r.stage, 0.0) + r.seconds
    assert best is not None
    best["cpu"] = min(cpu)  # process CPU time: less at the mercy of other processes than wall time
    return best


def against(old: Path, rounds: int, reps: int) -> None:
    """This checkout and the one at `old` (e.g. `git worktree add /tmp/old_compile <commit>`), side by
    side: per tile shape, child processes alternate old, new, old, new …; each reports its best of
    `reps` compiles, and the best over `rounds` rounds is printed (a shared machine's load hits both)."""
    new = Path(__file__).resolve().parent.parent
    print(f"softmax {SIZE}x{SIZE} fp32, full compile with recording, old = {old}, new = {new}; "
          f"best of {rounds} x {reps} per side, alternating\n")
    print("wall: best wall time of the full compile; cpu: best process CPU time of it (less disturbed by other "
          "processes on a shared machine); stage columns: wall seconds of the tile, block and execute stages\n")
    print(f"{'tile':>10} {'tile ops':>9} {'old s':>7} {'new s':>7} {'old µs/op':>10} {'new µs/op':>10} {'speed-up':>8} "
          f"{'cpu old µs/op':>13} {'cpu new µs/op':>13} {'cpu speed-up':>12}"
          + "".join(f" {s + ' old/new':>17}" for s in ("tile", "block", "execute")))
    for tile in TILES:
        best: dict[str, dict[str, float]] = {}
        for _ in range(rounds):
            for name, root in (("old", old), ("new", new)):
                env = {**os.environ, "PYTHONPATH": str(root)}  # pypto from that checkout, `one` from this file
                cmd = [sys.executable, "-c", f"import sys; sys.path.insert(1, {str(Path(__file__).parent)!r}); "
                       f"import compile_bench as b, json; print(json.dumps(b.one({tile!r}, {reps})))"]
                done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True)
                got = json.loads(done.stdout.strip().splitlines()[-1])
                if name not in best or got["seconds"] < best[name]["seconds"]:
                    got["cpu"] = min(got["cpu"], best.get(name, got)["cpu"])
                    best[name] = got
                else:
                    best[name]["cpu"] = min(best[name]["cpu"], got["cpu"])
        o, n = best["old"], best["new"]
        print(f"{str(tile):>10} {int(n['ops']):>9} {o['seconds']:>7.3f} {n['seconds']:>7.3f} "
              f"{o['seconds'] / o['ops'] * 1e6:>10.2f} {n['seconds'] / n['ops'] * 1e6:>10.2f} "
              f"{o['seconds'] / n['seconds']:>7.2f}x "
              f"{o['cpu'] / o['ops'] * 1e6:>13.2f} {n['cpu'] / n['ops'] * 1e6:>13.2f} "
              f"{o['cpu'] / n['cpu']:>11.2f}x"
              + "".join(f" {o.get(s, 0.0):>8.3f}/{n.get(s, 0.0):<8.3f}" for s in ("tile", "block", "execute")))


KERNEL_FILE = """\
import pypto

t = pypto.Tensor([{size}, {size}], pypto.DT_FP32)


@pypto.jit
def softmax(x: t, out: t):
    pypto.set_vec_tile_shapes({rows}, {cols})
    out[:] = pypto.softmax(x, -1)
"""


def record_once(tile: tuple[int, int], folder: str) -> dict[str, float]:
    """In a fresh process: compile softmax at `tile` into a CompileRecord from its example inputs (as
    `pypto-ide compile` does: `compile_record(kernel)`) and write it to `folder` — version 2: `record.write`
    (record.json + record.columns.npz); a checkout without it (version 1): its compact JSON
    (`json.dumps(record.to_json())`, what `--json` printed, less the indent). Seconds of each, and bytes."""
    from pypto.record import compile_record

    c0, t0 = time.process_time(), time.perf_counter()
    record = compile_record(make_kernel(tile))
    compiled, compiled_cpu = time.perf_counter() - t0, time.process_time() - c0
    c0, t0 = time.process_time(), time.perf_counter()
    if hasattr(record, "write"):
        paths = list(record.write(folder))
    else:
        path = Path(folder) / "record.json"
        path.write_text(json.dumps(record.to_json()))
        paths = [path]
    written, written_cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"ops": float(len(record.program.tiles.ops)), "compile_s": compiled, "compile_cpu_s": compiled_cpu,
            "write_s": written, "write_cpu_s": written_cpu, "bytes": float(sum(p.stat().st_size for p in paths))}


def cli_once(root: Path, tile: tuple[int, int], folder: Path) -> dict[str, float]:
    """`pypto-ide compile KERNEL --record DIR` as a user runs it (a checkout without `--record`: `--json`, to a
    file), softmax at `tile`, with `root`'s pypto: wall and CPU seconds and peak RSS (MiB) of the process.
    The peak is the process's own VmHWM (/proc/self/status, written at exit): wait4's ru_maxrss would also
    count this benchmark's memory, which a forked child holds until it execs."""
    kernel = folder / "softmax_bench.py"
    kernel.write_text(KERNEL_FILE.format(size=SIZE, rows=tile[0], cols=tile[1]))
    has_record = "--record" in (root / "pypto" / "cli.py").read_text()
    argv = ["pypto-ide", "compile", str(kernel), *(["--record", str(folder / "rec")] if has_record else ["--json"])]
    peak = folder / "peak"
    code = ("import atexit, runpy, sys\n"
            f"def peak():\n    open({str(peak)!r}, 'w').write(next(ln for ln in open('/proc/self/status') "
            "if ln.startswith('VmHWM')))\n"
            f"atexit.register(peak)\nsys.argv = {argv!r}\nrunpy.run_module('server.cli', run_name='__main__')\n")
    env = {**os.environ, "PYTHONPATH": str(root)}
    with open(folder / "stdout", "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=root, env=env, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"pypto-ide compile failed in {root}: {proc.stderr.read().decode() if proc.stderr else ''}")
    rss_kb = int(peak.read_text().split()[1])  # "VmHWM:   202000 kB"
    return {"cli_s": wall, "cli_cpu_s": usage.ru_utime + usage.ru_stime, "cli_rss_mb": rss_kb / 1024}


def record_figures(sides: list[tuple[str, Path]], rounds: int, tiles: tuple[tuple[int, int], ...] = TILES) -> None:
    """Issue 19 item 1's figures, per tile shape and checkout (`sides`: this one, and OLD with
    `--record-against OLD`), side by side: fresh processes alternating between the sides, round by round;
    the best (lowest) of `rounds` of each figure. Per run: (1) a child compiles the kernel into a record and
    writes it (`record_once`: compile s, µs per tile op, write s, bytes on disk); (2) `pypto-ide compile FILE
    --record DIR` as a user runs it (`cli_once`: wall and CPU s, peak RSS of the whole process)."""
    here = Path(__file__).resolve().parent
    print(f"softmax {SIZE}x{SIZE} fp32 (benchmarks/compile_bench.py's kernel) at {len(tiles)} tile shapes; "
          f"{', '.join(f'{n} = {r}' for n, r in sides)}; fresh processes, sides alternating, best of {rounds}; "
          f"{platform.machine()}, {os.cpu_count()} cores, load average at start {os.getloadavg()[0]:.1f}\n")
    print("compile: compile_record from example inputs, every stage (in a child process), wall s, µs per tile op "
          "of wall and of CPU time; write: CompileRecord.write (record.json + record.columns.npz; version 1: "
          "compact JSON), wall and CPU s; MB: on disk; CLI: `pypto-ide compile FILE --record DIR` (version 1: "
          "--json), wall and CPU s, peak RSS MiB (VmHWM). On a shared machine, trust the CPU columns\n")
    print(f"{'tile':>10} {'tile ops':>9} {'side':>5} {'compile s':>9} {'µs/op':>7} {'cpu µs/op':>9} {'write s':>8} "
          f"{'write cpu':>9} {'MB':>7} {'CLI wall s':>10} {'CLI cpu s':>9} {'CLI RSS MiB':>11}")
    for tile in tiles:
        best: dict[str, dict[str, float]] = {}
        for _ in range(rounds):
            for name, root in sides:
                with tempfile.TemporaryDirectory() as folder:
                    env = {**os.environ, "PYTHONPATH": str(root)}
                    cmd = [sys.executable, "-c", f"import sys; sys.path.insert(1, {str(here)!r}); "
                           f"import compile_bench as b, json; print(json.dumps(b.record_once({tile!r}, {folder!r})))"]
                    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True)
                    got = json.loads(done.stdout.strip().splitlines()[-1])
                with tempfile.TemporaryDirectory() as folder:
                    got.update(cli_once(root, tile, Path(folder)))
                mine = best.setdefault(name, got)
                for k, v in got.items():
                    mine[k] = min(mine[k], v)
        for name, _ in sides:
            r = best[name]
            print(f"{str(tile):>10} {int(r['ops']):>9} {name:>5} {r['compile_s']:>9.2f} "
                  f"{r['compile_s'] / r['ops'] * 1e6:>7.2f} {r['compile_cpu_s'] / r['ops'] * 1e6:>9.2f} "
                  f"{r['write_s']:>8.3f} {r['write_cpu_s']:>9.3f} {r['bytes'] / 1e6:>7.2f} "
                  f"{r['cli_s']:>10.2f} {r['cli_cpu_s']:>9.2f} {r['cli_rss_mb']:>11.0f}")


def _panel_record_at(rev: str):  # type: ignore[no-untyped-def]
    """`panel_record` as it was at git revision `rev` (its module loaded from `git show`: server/panel_data.py,
    or server/analyze.py before that module was split off)."""
    import importlib.util

    here = Path(__file__).resolve().parent.parent
    shown = [subprocess.run(["git", "show", f"{rev}:server/{name}.py"], cwd=here, capture_output=True, text=True)
             for name in ("panel_data", "analyze")]
    text = next(r.stdout for r in shown if r.returncode == 0)
    path = Path(tempfile.mkdtemp()) / "analyze_then.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("analyze_then", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.panel_record


def _module_at(rev: str, path: str, name: str):  # type: ignore[no-untyped-def]
    """The module at `path` (repository-relative) as it was at git revision `rev`, loaded from `git show`."""
    import importlib.util

    here = Path(__file__).resolve().parent.parent
    text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=here, capture_output=True, text=True, check=True).stdout
    file = Path(tempfile.mkdtemp()) / f"{name}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def views(tile: tuple[int, int] = (32, 32), against: str | None = None) -> None:
    """What the language server's worker and server make of a big profiled record after the compile, side by
    side in one process: the editor view (`server.index.editor_view`; with `against`, also as it was at that
    git revision), and the panels' slim record made from the whole lists (`record_lists`) or from lists that
    never decode what it leaves out (`panel_lists`). CPU s, best of 3, the collector frozen as in a job."""
    import gc

    from pypto.record import compile_record, profile
    from server.analyze import panel_lists, record_lists
    from server.index import editor_view
    from server.panel_data import PANEL_LEAVE_OUT, PANEL_TILE_OPS, panel_record

    x = torch.randn(SIZE, SIZE)
    out = torch.empty_like(x)
    record = profile(compile_record(make_kernel(tile), {"x": x, "out": out}), "sim",
                     {"x": x.numpy(), "out": out.numpy()})
    doc, arrays = record.to_document()
    from pypto.ir.columns import npz_bytes

    cols = npz_bytes(arrays)
    gc.freeze()

    def best(fn):  # type: ignore[no-untyped-def]
        times = []
        for _ in range(3):
            c0 = time.process_time()
            fn()
            times.append(time.process_time() - c0)
        return min(times)

    assert record.run is not None and record.program.tiles is not None
    print(f"softmax {SIZE}x{SIZE} at {tile}: {len(record.program.tiles.ops):,} tile ops, {len(record.run.tasks):,} "
          f"tasks (sim); CPU s, best of 3")
    now = best(lambda: editor_view(record, "softmax_bench.py", doc["run"]))
    then = None
    if against:
        old_view = _module_at(against, "server/index.py", "index_then").editor_view
        then = best(lambda: old_view(record, "softmax_bench.py"))
    print(f"  editor view: {now:.3f}" + (f" (at {against}: {then:.3f})" if then is not None else ""))
    whole = best(lambda: panel_record(record_lists(doc, cols)))
    lean = best(lambda: panel_record(panel_lists(doc, cols, PANEL_LEAVE_OUT, PANEL_TILE_OPS)))
    print(f"  the panels' slim record: from the whole lists {whole:.3f}, from lists without its bulk {lean:.3f}")


def transport(tile: tuple[int, int] = (32, 32), against: str | None = None) -> None:
    """What a worker's answer costs to cross to the server (`server.analyze`: pickled through a pipe): the
    record as the lists version 1 had, against version 2's document and its columns' .npz bytes; and what the
    HTTP server's store made of each (compact JSON); and the record a panel is sent, whole and slim
    (`server.panel_data.panel_record`). Best of 3, CPU seconds (the machine is shared)."""
    import pickle

    from pypto.ir.columns import npz_bytes
    from pypto.record import compile_record, expanded

    x = torch.randn(SIZE, SIZE)
    out = torch.empty_like(x)
    record = compile_record(make_kernel(tile), {"x": x, "out": out})

    def best(fn):  # type: ignore[no-untyped-def]
        times, value = [], None
        for _ in range(3):
            c0 = time.process_time()
            value = fn()
            times.append(time.process_time() - c0)
        return min(times), value

    print(f"softmax {SIZE}x{SIZE} at {tile}: {len(record.program.tiles.ops):,} tile ops; CPU s, best of 3\n")
    t_doc, (doc, arrays) = best(lambda: record.to_document())
    t_npz, npz = best(lambda: npz_bytes(arrays))
    t_lists, lists = best(lambda: expanded(doc, arrays))
    t_pl, pl = best(lambda: pickle.dumps(lists, protocol=5))
    t_ul, _ = best(lambda: pickle.loads(pl))
    t_pc, pc = best(lambda: pickle.dumps((doc, npz), protocol=5))
    t_uc, _ = best(lambda: pickle.loads(pc))
    t_jl, _ = best(lambda: json.dumps(lists, separators=(",", ":")))
    t_jc, _ = best(lambda: json.dumps(doc, separators=(",", ":")))
    print(f"{'':34} {'make':>6} {'pickle':>7} {'unpickle':>9} {'MB':>6} {'store JSON':>10}")
    print(f"{'v1: the record as lists':34} {t_doc + t_lists:>6.3f} {t_pl:>7.3f} {t_ul:>9.3f} {len(pl) / 1e6:>6.1f} "
          f"{t_jl:>10.3f}")
    print(f"{'v2: document + columns (.npz)':34} {t_doc + t_npz:>6.3f} {t_pc:>7.3f} {t_uc:>9.3f} "
          f"{len(pc) / 1e6:>6.1f} {t_jc:>10.3f}")
    print("(v1's lists are made here from v2's columns; the old compiler's to_json made them in about twice that)")
    # what a panel is sent (`pypto/record`, GET /jobs/{id}/record?panel=true): the slim record of a big kernel
    from server.panel_data import panel_record

    t_slim, slim = best(lambda: json.dumps(panel_record(lists), separators=(",", ":")))
    whole = json.dumps(lists, separators=(",", ":"))
    print(f"\nthe record a panel is sent (JSON): whole {len(whole):,} B, slim {len(slim):,} B "
          f"({len(slim) / len(whole):.0%}), slimmed and dumped in {t_slim:.3f} CPU s")
    # with its sim run, as the servers hold it: what the graph and swimlane panels get, per top-level key
    from pypto.record import profile

    ran = profile(record, "sim", {"x": x.numpy(), "out": out.numpy()})
    doc2, arrays2 = ran.to_document()
    full = expanded(doc2, arrays2)
    panel = panel_record(full)
    then = _panel_record_at(against)(full) if against else None
    size = lambda v: len(json.dumps(v, separators=(",", ":")))  # noqa: E731
    print(f"\nwith its sim run ({len(full['run']['tasks']['id']):,} tasks): whole {size(full):,} B, the panels' record "
          f"{size(panel):,} B{f' ({size(then):,} B at {against})' if then is not None else ''}; per key (whole -> "
          f"{f'at {against} -> ' if then is not None else ''}the panels'), the rest asked on demand (omitted: "
          f"{json.dumps(panel.get('omitted'))}):")
    for key in sorted(set(full) | set(panel), key=lambda k: -size(full.get(k))):
        a, b = size(full.get(k)) if (k := key) in full else 0, size(panel[key]) if key in panel else 0
        c = (size(then[key]) if key in then else 0) if then is not None else None
        if max(a, b, c or 0) >= 1_000:
            print(f"  {key:12} {a:>12,} -> {'' if c is None else f'{c:>12,} -> '}{b:>12,}")
    print(f"  {'(all)':12} {size(full):>12,} -> {'' if then is None else f'{size(then):>12,} -> '}{size(panel):>12,}")
    # what the graph panel asks for instead, each when a view draws it (server/panel_data.py)
    from server.panel_data import block_of, tile_grids, tile_ops

    c0 = time.process_time()
    grids = tile_grids(full)
    t_grids = time.process_time() - c0
    g = grids["grids"][0]
    print(f"  on demand: the Tiles view's grids {size(grids):,} B ({len(grids['grids'])} grids, made in {t_grids:.3f} "
          f"CPU s, then cached), a tile's ops {size(tile_ops(full, node=g['node'], cell=0)):,} B, a leaf's block "
          f"{max(size(block_of(full, b['leaf'])) for b in full['blocks']):,} B at most")
    print("  (the swimlane panel draws the run from pypto/swimlane windows: the whole run's bins or boxes, "
          "a few kB to ~0.5 MB each)")


def memory_top(tile: tuple[int, int] = (32, 32), count: int = 15) -> None:
    """What holds the memory of a compiled record: tracemalloc's top allocation sites (by line) of
    `compile_record`, the record kept alive, and the peak while compiling."""
    from pypto.record import compile_record

    x = torch.randn(SIZE, SIZE)
    out = torch.empty_like(x)
    tracemalloc.start(1)
    record = compile_record(make_kernel(tile), {"x": x, "out": out})
    snap = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"softmax {SIZE}x{SIZE} at {tile}: {len(record.program.tiles.ops):,} tile ops; Python memory held by the "
          f"record {current / 2**20:.0f} MiB, peak while compiling {peak / 2**20:.0f} MiB; top sites:")
    for stat in snap.statistics("lineno")[:count]:
        frame = stat.traceback[0]
        print(f"  {stat.size / 2**20:7.1f} MiB {stat.count:>9,} blocks  {frame.filename.rsplit('/pypto/', 1)[-1]}:"
              f"{frame.lineno}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, help="another checkout (old compiler) to measure side by side")
    ap.add_argument("--record", action="store_true",
                    help="issue 19 item 1's figures at the four tile shapes: µs per tile op, record write time and "
                         "bytes, peak RSS of `pypto-ide compile --record DIR`")
    ap.add_argument("--record-against", type=Path, metavar="OLD",
                    help="--record's figures, side by side with checkout OLD (e.g. a `git worktree`)")
    ap.add_argument("--memory", action="store_true", help="tracemalloc's top sites of a compiled record (32x32)")
    ap.add_argument("--transport", action="store_true",
                    help="a worker's answer: the record as lists vs document + columns, pickled; "
                         "the panel's record, whole vs slim (32x32)")
    ap.add_argument("--panel-against", metavar="REV",
                    help="with --transport: also the panels' record as made at git revision REV")
    ap.add_argument("--views", action="store_true",
                    help="the editor view and the panels' slim record of a profiled 32x32 record (with "
                         "--panel-against REV, the editor view at REV too)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    if args.record or args.record_against:
        here = Path(__file__).resolve().parent.parent
        sides = [("old", args.record_against), ("new", here)] if args.record_against else [("this", here)]
        record_figures(sides, args.rounds)
    elif args.memory:
        memory_top()
    elif args.transport:
        transport(against=args.panel_against)
    elif args.views:
        views(against=args.panel_against)
    elif args.against:
        against(args.against, args.rounds, args.reps)
    else:
        main()
