"""`pypto-ide open` on real-shaped traces whose dependency arrows form cycles and run back in time.

A merged_swimlane.json captured on a real Ascend chip (PyPTO's own tools) has flows that, bound to
their slices, form cycles and run from a task that starts after its successor; a critical-path walk
that followed them never ended (issue 27). This bench writes traces in PyPTO's layout (a "Machine
View" process, AIC_/AIV_ threads with absolute device timestamps, a "Fake Core_0" lane holding the
placeholders the arrows run through, `machine-view-last-dep` flow pairs, ReadyCount counters) with a
share of arrows reversed so that they run back in time and close cycles, and measures:

- `pypto-ide open FILE` end to end, in a fresh process (`python -m pypto.cli open`): interpreter
  start-up, the import, the read, the metrics and the summary — what a user waits for;
- in-process: `load_any` (the read, with its count of arrows back in time and cycles) and
  `metrics` (the critical path among them) apart.

Sizes: the real trace's shape (113 slices on 57 threads, 281 flow pairs) and two larger ones
(10k and 100k slices). Wall clock on this machine, best of a few runs. The issue's target: a trace
whose flows form cycles returns in under 1 s with its summary.

Run: `.venv/bin/python benchmarks/open_bench.py [--sizes 113,10000,100000]`.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _timing import best

from pypto.boards.importers import load_any
from pypto.boards.swimlane import metrics

BASE = 2383465727000.0  # µs: a real file's absolute device timestamps
FAKE_TID = 1000


def merged_trace(slices: int, threads: int, seed: int = 27, back_share: float = 0.1) -> dict[str, Any]:
    """A merged_swimlane.json of `slices` tasks on `threads` core threads and a Fake Core lane: each task
    depends on one or two earlier ones, a third of them through a placeholder on the Fake Core lane (as
    PyPTO's tool routes arrows the device log lacks); `back_share` of the arrows reversed (back in time,
    most closing a cycle)."""
    rng = random.Random(seed)
    ev: list[dict[str, Any]] = [{"args": {"name": "Machine View"}, "cat": "__metadata", "name": "process_name",
                                 "ph": "M", "pid": 1}]
    names = ["Fake Core_0"] + [f"AIC_{i}" for i in range(threads // 3)] + [
        f"AIV_{i}" for i in range(threads // 3, threads)]
    for k, name in enumerate(names):
        ev.append({"args": {"name": name}, "cat": "__metadata", "name": "thread_name", "ph": "M", "pid": 1,
                   "tid": FAKE_TID + 2 * k})
    lane_free = [0.0] * threads
    placed: list[tuple[int, float, float]] = []  # (tid, start, end) per slice, placeholders included
    task: list[int] = []  # each task's slice
    flows: list[tuple[int, int]] = []  # slice -> slice
    for i in range(slices):
        lane = rng.randrange(threads)
        preds = [task[p] for p in rng.sample(range(max(0, i - 50), i), min(i, rng.choice((1, 2))))] if i else []
        ready = max((placed[p][2] for p in preds), default=0.0)
        start = max(lane_free[lane], ready) + rng.uniform(0.05, 1.0)
        end = start + rng.uniform(0.5, 6.0)
        lane_free[lane] = end
        placed.append((FAKE_TID + 2 * (lane + 1), start, end))
        task.append(len(placed) - 1)
        for p in preds:
            if rng.random() < 1 / 3:  # through a placeholder just before the successor
                placed.append((FAKE_TID, start - 0.04, start - 0.02))
                flows += [(p, len(placed) - 1), (len(placed) - 1, task[i])]
            else:
                flows.append((p, task[i]))
    for k, (tid, start, end) in enumerate(placed):
        ev.append({"args": {"event-hint": f"Task:[0-1-{k}], rootHash:1, callOpMagic:{k}, leafHash:{k % 7}, "
                                          f"TaskId:{65536 + k}", "taskId": 65536 + k, "seqNo": 0, "color": ""},
                   "cat": "event", "id": k, "name": f"0-1-{k}-82-3()", "ph": "X", "pid": 1, "tid": tid,
                   "ts": BASE + start, "dur": end - start})
    for fid, (a, b) in enumerate(flows, 1):
        if rng.random() < back_share:
            a, b = b, a  # a flow drawn the wrong way round: back in time, closing a cycle
        c = {"cat": "machine-view-last-dep", "id": fid, "name": "machine-view-last-dep", "pid": 1}
        ev.append({**c, "ph": "s", "tid": placed[a][0], "ts": BASE + placed[a][2] - 0.01})
        ev.append({**c, "bp": "e", "ph": "f", "tid": placed[b][0], "ts": BASE + placed[b][1]})
    return {"traceEvents": ev}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="113,10000,100000", help="slices per trace, comma-separated")
    args = ap.parse_args()
    print(f"pypto-ide open on merged_swimlane.json traces with cycles ({platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}; wall clock on this machine, best of 3)")
    print(f"{'slices':>8} {'tasks':>8} {'arrows':>8} {'back':>6} {'cyclic':>7} {'load s':>8} {'metrics s':>10} "
          f"{'open (process) s':>17}  summary line")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            path = Path(tmp) / f"merged_swimlane_{n}.json"
            path.write_text(json.dumps(merged_trace(n, 57 if n <= 113 else 72)))
            sl = load_any(path)
            m = metrics(sl)
            arrows = sum(len(t.preds) for t in sl.tasks)
            ignored = sl.ignored[0] if sl.ignored else ""
            cyclic = ignored.split("; ")[1].split(" of them")[0] if ignored else "0"
            t_load = best(lambda p=path: load_any(p), 3)
            t_metrics = best(lambda s=sl: metrics(s), 3)
            reps = 3 if n <= 10_000 else 1
            t_open = best(lambda p=path: subprocess.run([sys.executable, "-m", "pypto.cli", "open", str(p)],
                                                           check=True, capture_output=True, timeout=600), reps)
            print(f"{n:>8} {len(sl.tasks):>8} {arrows:>8} {m.ignored_arrows:>6} {cyclic:>7} {t_load:>8.3f} "
                  f"{t_metrics:>10.3f} {t_open:>17.3f}  critical path {m.critical_path_us:,.1f} µs, "
                  f"{len(m.critical_path)} tasks")


if __name__ == "__main__":
    main()
