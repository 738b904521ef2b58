"""A big message from a job to the server, by file or through the pipes, side by side (issue 28: an edit's record).

A job's messages go from its child to its template and on to the pool; from `server.worker.SPILL_FROM` bytes the
child writes the message to a file in the template's folder (in /dev/shm) and only its name crosses the pipes
(`server.worker`, "A big message goes by file"). This script runs, through two real worker pools — one as the
servers make it, one with `spill=False` (every message through the pipes, as before 2026-12-01) — a job whose module
code sends one interim message of `--mb` megabytes (bytes, as a record's columns travel) and measures the time from
just before the job sends it (the job's clock, before pickling) to the pool's `on_progress` getting it (unpickled),
the two pools taking turns, median of `--runs` each.

Kimi's block attention after its tile edit sends ~30 MB twice (its interim record, then its answer); gated delta
rule about as much.

Then, in this process, the job's side alone for a message shaped like a record's (`--mb` of column bytes, 100 k
small dicts, a 2 M-element array): pickled straight into its file (`server.worker._Spill`, since session 41) against
pickled to bytes, copied and written (before: the bytes and their copy were more than a 10^6-tile-op kernel's job had
left under its memory cap), taking turns, median of `--runs`.

Run: `.venv/bin/python benchmarks/answer_bench.py [--mb 30] [--runs 7]`.

Session 41 (2026-12-02 02:00 UTC, beside a test run, `job_side(30, 3)`), the job's side with 30 MB of columns:
pickled into the file 0.163 s, to bytes and then written 0.275 s (0.60).

Measured 2026-12-01 03:10 UTC (2 cores, load average ~0.5, `--runs 7`), medians:

| message | by file s | through the pipes s | ratio |
|---|---|---|---|
| 30 MB | 0.088 | 0.137 | 0.64 |

(by file 0.064-0.103 s, through the pipes 0.130-0.163 s.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.worker import WorkerPool  # noqa: E402

PATH = "/virtual/answer_bench.py"


def source(mb: float) -> str:
    """A file with one small kernel whose module code sends one message of `mb` megabytes, stamped when sent."""
    return (
        "import time\nimport pypto\nimport server.analyze\n"
        f"blob = bytes({int(mb * 1e6)})\n"
        "server.analyze.progress({'sent': time.time(), 'blob': blob})\n\n"
        "@pypto.jit\n"
        "def k(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):\n"
        "    out[:] = pypto.exp(x)\n"
    )


def one(pool: WorkerPool, src: str) -> float:
    """Seconds from the job's send to the pool's `on_progress`."""
    got: list[float] = []

    def arrived(data: dict[str, float]) -> None:
        got.append(time.time() - data["sent"])

    answer = pool.run_blocking("analyze_kernel", PATH, src, "k", {}, on_progress=arrived)
    assert answer["error"] is None and len(got) == 1, answer
    return got[0]


def job_side(mb: float, runs: int) -> str:
    """The job's side of sending a record-shaped message by file, pickled into it against to bytes first."""
    import os
    from multiprocessing.reduction import ForkingPickler

    import numpy as np

    from server.worker import _Spill, _spill_root

    message = ("progress", {"interim": {
        "record": {"nodes": [{"id": i, "op": "exp", "shape": [i, 8], "name": f"n{i}"} for i in range(100_000)]},
        "record_columns": os.urandom(int(mb * 1e6)), "editor": {"ids": np.arange(2_000_000)}}})
    folder = _spill_root() or "."

    def into_the_file(path: str) -> None:
        out = _Spill(path)
        ForkingPickler(out).dump(message)
        assert out.close()

    def bytes_first(path: str) -> None:
        data = bytes(ForkingPickler.dumps(message))
        with open(path, "xb") as f:
            f.write(data)

    times: dict[str, list[float]] = {"into the file": [], "to bytes, then written": []}
    ways = list(zip(times, (into_the_file, bytes_first)))
    for i in range(runs):
        for way, fn in (ways if i % 2 == 0 else ways[::-1]):
            path = os.path.join(folder, f"answer_bench-{os.getpid()}-{i}")
            t = time.perf_counter()
            fn(path)
            times[way].append(time.perf_counter() - t)
            os.unlink(path)
    into, first = (statistics.median(v) for v in times.values())
    return (f"| job's side of a record-shaped message ({mb:g} MB of columns) | pickled into its file {into:.3f} s | "
            f"to bytes, then written {first:.3f} s | {into / first:.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=30.0, help="the message's size, in MB (default 30)")
    ap.add_argument("--runs", type=int, default=7, help="runs per way (default 7)")
    a = ap.parse_args()
    src = source(a.mb)
    pools = {"by file": WorkerPool(size=1, time_limit=60), "through the pipes": WorkerPool(size=1, time_limit=60,
                                                                                           spill=False)}
    times: dict[str, list[float]] = {k: [] for k in pools}
    try:
        for pool in pools.values():  # each template warm, its first job done
            one(pool, src)
        for i in range(a.runs):
            for way in (list(pools) if i % 2 == 0 else list(reversed(pools))):
                times[way].append(one(pools[way], src))
    finally:
        for pool in pools.values():
            pool.close()
    spilled, piped = (statistics.median(times[k]) for k in pools)
    print(f"| message | by file s | through the pipes s | ratio |\n|---|---|---|---|\n"
          f"| {a.mb:g} MB | {spilled:.3f} | {piped:.3f} | {spilled / piped:.2f} |")
    for way, ts in times.items():
        print(f"{way}: " + ", ".join(f"{t:.3f}" for t in ts))
    print(job_side(a.mb, a.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
