"""The biggest kernels' late stages, side by side: the block stage, the health report, the record document (as a job
makes it, and with every pass's snapshot: `to_document(include_snapshots=True)`) and the editor's view.

For one kernel (`FILE::KERNEL`, its inputs from a capture beside the file: `pypto-ide capture -- …` of its test), each
process lowers it once and runs the sim board once, then times `block.build_blocks`, `health_report`,
`CompileRecord.to_document` (without and with snapshots) and `server.index.editor_view` (from the document's columns,
as a job makes it) `--runs` times each with Python's collector paused, as a compile and a job have it; `--stages`
picks some. With
`--against TREE` the processes alternate between this checkout and TREE (A B B A for `--rounds 2`), since this
machine's speed drifts over minutes; the table gives each stage's median and range per tree.

Session 55 (QAT's per-tensor backward from PyPTO's models/qat, 1.58 M tile ops, 22 leaves, 170 k instructions;
against 6dd6c49, `--runs 3 --rounds 2`): block stage 7.69 -> 6.87 s (block.py native), health report after the sim
run 3.78 -> 1.78 s (each block costed once per process: `pypto.boards.core_model`), record document 6.91 -> 7.22 s
(within the noise).

Session 56 (against 7a91c97, `--runs 3 --rounds 2`): graph partition hands on the very tile graph when it inserts no
copy, so a record's snapshot of tile expansion is `{"$same": "tiles"}` instead of the tile ops' columns again: gated
delta rule's record document with snapshots 1.16 -> 0.80 s (without them 0.72 s either way). The editor view numbers its
rows (tile shapes, tasks' node sets) by integer keys made a column at a time instead of comparing a padded copy as
bytes: glm's fused attention (2.2 M tile ops) editor view 2.46 [1.72, 3.20] against 3.20 [1.64, 4.76] s (`--runs 2`,
within this noise; its time is fresh arrays' page faults more than sorting), and without the copy's ~400 MB, which
had run that kernel's job out of its memory cap (benchmarks/models_open.py).

Session 63 (QAT's per-tensor backward, `--stages "block stage" --runs 3 --rounds 2`, against b1ff482, 2026-12-05
17:50 UTC): block stage 6.23 [5.85, 6.44] -> 4.63 [4.50, 4.91] s. The block allocator's spill queue is made when a
victim is first looked for (the 22 blocks spill in none of their final allocations; 680 k queue entries were pushed
for them), a trial allocation gives up at its first failed take, the liveness is found once per lowering, not once
per attempt, and the two-ended attempt is skipped after one that asked for no small buffer (it would be the same
run). The blocks are the same (checked equal to b1ff482's on 20 model kernels, and on this one with the UB cut to a
third and an eighth: 2,053 and 5,894 spills). Then the blocks' part of the record document made from the
instructions' fields (`serialize.blocks_columns`: the same spec and arrays as `columnize` of their JSON; that part,
timed by a scratch script, 2.7 -> 0.9 s): record document 6.87 [6.18, 7.10] -> 4.60 [4.49, 4.79] s (`--stages
"record document"`, against b1ff482, 18:40 UTC).

Run: `.venv/bin/python benchmarks/big_stages.py DIR/models/qat/qat_impl.py::KERNEL [--runs 3] [--against TREE
--rounds 2]`. TREE needs its own `python tools/build_native.py`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


STAGES = ("block stage", "health report", "record document", "record document with snapshots", "editor view")


def measure(target: str, runs: int, stages: tuple[str, ...] = STAGES) -> dict[str, list[float]]:
    """This process's figures (its `pypto` is the first on `sys.path`)."""
    from pypto.analysis.health import health_report
    from pypto.compiler import block
    from pypto.frontend.inputs import example_arguments
    from pypto.record import profile, trace_for
    from pypto.target import load as load_board
    from server import analyze
    from server.index import editor_view

    path, name = target.rsplit("::", 1)
    kernel = analyze._kernel(analyze._load(path, Path(path).read_text()), path, name)
    record = profile(trace_for(kernel, example_arguments(kernel, values=False)).lowered(), "sim", {}, None)
    board = load_board("a2a3")
    gc.freeze()
    gc.disable()
    document = record.to_document() if "editor view" in stages else None
    work = {"block stage": lambda: block.build_blocks(record.program, board),
            "health report": lambda: health_report(record),
            "record document": record.to_document,
            "record document with snapshots": lambda: record.to_document(include_snapshots=True),
            "editor view": lambda: editor_view(record, path, {}, document)}
    out: dict[str, list[float]] = {what: [] for what in stages}
    for _ in range(runs):
        for what in stages:
            t = time.perf_counter()
            work[what]()
            out[what].append(time.perf_counter() - t)
    return out


def in_tree(tree: Path, target: str, runs: int, stages: str) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, __file__, target, "--runs", str(runs), "--stages", stages, "--json"],
                          cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="FILE::KERNEL (captured)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--against", help="another checkout, measured alternately")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--stages", default=",".join(STAGES), help="which, comma-separated (default: all)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    stages = tuple(s.strip() for s in a.stages.split(",") if s.strip())
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        ap.error(f"no stage {unknown[0]!r} (the stages: {', '.join(STAGES)})")
    if a.json:
        print(json.dumps(measure(a.target, a.runs, stages)))
        return 0
    trees = [HERE] + ([Path(a.against).resolve()] if a.against else [])
    got: dict[Path, dict[str, list[float]]] = {t: {} for t in trees}
    for r in range(a.rounds if a.against else 1):
        for tree in trees if r % 2 == 0 else trees[::-1]:
            for what, xs in in_tree(tree, a.target, a.runs, ",".join(stages)).items():
                got[tree].setdefault(what, []).extend(xs)
    print(f"big_stages — {a.target}; {os.cpu_count()} cores; seconds, median [min, max]\n")
    print("| stage | " + " | ".join(str(t) for t in trees) + " |\n|---|" + "---|" * len(trees))
    for what in got[HERE]:
        cells = [f"{statistics.median(got[t][what]):.2f} [{min(got[t][what]):.2f}, {max(got[t][what]):.2f}]"
                 for t in trees]
        print(f"| {what} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
