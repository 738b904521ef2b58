"""`pypto-ide check` wall time: every example kernel, on 1 and 2 local workers and on Dask.

What a CI job waits for: the whole command (`pypto-ide check DIR --baseline B`, a fresh
process: Python start, importing the kernels, the reports with precision, the comparison),
timed from outside, best of `REPS`. The executors:

- `--workers 1`: the reports in the check process itself;
- `--workers 2`: a local pool of 2 processes (forkserver with pypto and torch preloaded);
- `--executor dask://HOST:PORT`: a Dask LocalCluster of 2 worker processes on 127.0.0.1
  started by this script beforehand (its start-up printed apart; the first run's workers
  are cold, then warm);
- `--executor dask://local --workers 2`: a cluster started and stopped by the command.

Three workloads: the examples (14 kernels, mostly small: about 0.5 s of reports in all, so the
pool's start-up — a forkserver importing torch, about a second — is most of the difference),
the examples copied into four folders (56 kernels), and the heaviest example (softmax, about
0.3 s a report) in 16 folders, where the work outweighs the start-up. The makespans checked are
simulated; the times are wall clock on this machine. Run:
`.venv/bin/python benchmarks/check_bench.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPS = 3


def timed(args: list[str], reps: int = REPS, env: dict[str, str] | None = None) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "server.cli", "check", *args], cwd=REPO, capture_output=True,
                           text=True, env=env)
        took = time.perf_counter() - t
        if r.returncode != 0:
            raise SystemExit(f"check {' '.join(args)} failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        best = min(best, took)
    return best


def main() -> int:
    from distributed import LocalCluster

    print(f"pypto-ide check, wall clock of the whole command, best of {REPS} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        small = root / "examples"
        shutil.copytree(REPO / "examples", small, ignore=shutil.ignore_patterns("__pycache__", "*.md"))
        large = root / "library"
        for k in range(4):
            shutil.copytree(small, large / f"part{k}")
        heavy = root / "softmax16"  # the heaviest example (a 256-task softmax), 16 times
        for k in range(16):
            (heavy / f"part{k}").mkdir(parents=True)
            shutil.copy(small / "softmax.py", heavy / f"part{k}" / "softmax.py")
        t = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=40)
        print(f"Dask LocalCluster (2 worker processes, 127.0.0.1) started in {time.perf_counter() - t:.2f} s")
        dask = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
        cores = str(os.cpu_count() or 1)
        uncapped = {**os.environ, "OMP_NUM_THREADS": cores, "OPENBLAS_NUM_THREADS": cores, "MKL_NUM_THREADS": cores}
        try:
            for name, folder in (("examples (14 kernels)", small), ("examples x4 (56 kernels)", large),
                                 ("softmax.py x16 (16 kernels, the heaviest example)", heavy)):
                base = str(root / f"{folder.name}.baseline.json")
                subprocess.run([sys.executable, "-m", "server.cli", "check", str(folder), "--baseline", base,
                                "--update-baseline", "--workers", "1"], cwd=REPO, capture_output=True, check=True)
                common = [str(folder), "--baseline", base]
                rows = [
                    ("--workers 1 (in process)", timed([*common, "--workers", "1"])),
                    ("--workers 2 (local pool)", timed([*common, "--workers", "2"])),
                    # as before the pool capped its workers' math threads: each worker with every core's
                    # worth of OpenMP/OpenBLAS threads (a variable the user sets wins over the cap)
                    ("--workers 2, math threads not capped", timed([*common, "--workers", "2"], env=uncapped)),
                ]
                cold = timed([*common, "--executor", dask], reps=1)
                rows.append(("dask cluster, cold workers (first run)", cold))
                rows.append(("dask cluster, warm workers", timed([*common, "--executor", dask])))
                rows.append(("dask://local --workers 2 (cluster per run)",
                             timed([*common, "--executor", "dask://local", "--workers", "2"], reps=1)))
                print(f"\n{name}")
                for label, secs in rows:
                    print(f"  {label:<44} {secs:6.2f} s")
        finally:
            cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
