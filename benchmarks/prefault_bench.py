"""A job's memory faulted in ahead, against not (`server.prefault`, session 30): the worker pool's jobs side by side.

Each run is a fresh process with a `server.worker.WorkerPool` of one template, started with the prefault on or off
(`PYPTO_IDE_PREFAULT=0` in its environment), that runs production_bench's first tile edit of the kernel `--jobs`
times, a pause between jobs (the next job's child faults in what the last one used while it waits: its first job has
nothing noted, so it is left out). The figure is each later job's time from `pool.run` to its record (its interim
answer, as the language server shows it; the advice is not checked). The runs alternate on and off.

The kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`).

Run: `.venv/bin/python benchmarks/prefault_bench.py --keep DIR [--kernels gated_delta_rule,block_attn_res]
[--runs 2] [--jobs 3]`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _models import kept_models_arguments  # noqa: E402
from job_bench import OPTS, first_edit  # noqa: E402
from production_bench import KERNELS  # noqa: E402

from server import prefault  # noqa: E402

PAUSE = 2.0  # seconds between two jobs: the next child's wait


async def _jobs(key: str, models: Path, jobs: int) -> list[float]:
    """In this process: a pool of one template, `jobs` edits of `key`; each job's seconds to its record."""
    from server.worker import WorkerPool

    k = next(x for x in KERNELS if x.key == key)
    path, text = first_edit(k, models)
    pool = WorkerPool(1, time_limit=600)
    out = []
    try:
        for i in range(jobs):
            sent: list[float] = []
            t0 = time.perf_counter()
            await pool.run("analyze_kernel", path, f"{text}\n# job {i}\n", k.shown, {**OPTS, "check_advice": False},
                           on_progress=lambda _, into=sent: into.append(time.perf_counter()))
            out.append((sent[0] if sent else time.perf_counter()) - t0)
            await asyncio.sleep(PAUSE)
    finally:
        pool.close()
    return out


def _run(key: str, keep: Path, jobs: int, on: bool) -> list[float]:
    env = {**os.environ, prefault.OFF: "1" if on else "0"}
    cmd = [sys.executable, __file__, "--keep", str(keep), "--kernels", key, "--jobs", str(jobs), "--once"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if done.returncode != 0:
        raise RuntimeError((done.stdout + done.stderr).strip()[-500:])
    return [float(x) for x in done.stdout.split()[-jobs:]][1:]  # the first job had nothing noted ahead


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "gated_delta_rule,block_attn_res", 2, ("--once",),
                              ("--jobs",))
    jobs = int(a.jobs or 3)
    if a.once:  # one run, in this process (the environment says on or off)
        print(" ".join(f"{t:.4f}" for t in asyncio.run(_jobs(a.kernels, a.models, jobs))))
        return 0
    print(f"prefault_bench — {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {a.runs} runs each way, "
          f"{jobs - 1} measured jobs a run; seconds from a job's start to its record")
    print("\n| kernel | prefault on s | off s | on/off | on, each job | off, each job |\n|---|---|---|---|---|---|")
    for key in a.kernels.split(","):
        on: list[float] = []
        off: list[float] = []
        for r in range(a.runs):
            for flag in ((True, False) if r % 2 == 0 else (False, True)):
                (on if flag else off).extend(_run(key, a.keep, jobs, flag))
        x, y = statistics.median(on), statistics.median(off)
        print(f"| {key} | {x:.2f} | {y:.2f} | {x / y:.2f} | {[round(v, 2) for v in on]} | "
              f"{[round(v, 2) for v in off]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
