"""The browser door on production kernels: how long `pypto-ide serve`'s graph and swimlane pages take to draw a
kernel's record (issue 28's first record, through the browser instead of the editor).

For each kernel of `--kernels` (production_bench.py's keys, plus `glm_fusion`: glm's fused attention, 1.05 M
tasks) and each page (`graph`, `swimlane`), a fresh `pypto-ide serve` on the captured models/ folder
(production_bench.py's `--keep`) with one worker, and a page of it opened in headless Chromium the moment the
server is ready (benchmarks/serve_pages_bench.mjs): the page starts the kernel's profile job, as a user's would.
Printed per page: its job's queue and run time (as the server reports them), the page opened -> the record drawn,
what of that came after the job's end (the answers the page reads and the drawing), and the biggest answers it
read with when it had them. `--against TREE` runs the same pages with another tree's server beside (a `git
worktree` of an earlier commit; its `webview/dist` is used, built or linked), one after the other per page.

Wall-clock on this machine, one page at a time; the makespans inside the records are simulated (sim board).
It needs the node packages (`npm ci`), Debian's chromium (`make chromium`), a built bundle (`npm run
build:webview`) and production_bench.py's folder.

Run: `.venv/bin/python benchmarks/serve_pages_bench.py --keep /tmp/mo3 --kernels gated_delta_rule,glm_fusion`.

Session 44 (2026-12-02, machine-speed line 0.70-0.73 s; glm_fusion only, one run per row, this tree at each step;
the job ran 32-41 s): graph page 39.1 (3.1) at the session's start, 38.0 (0.5) and 37.4 (0.6) once a job's end no
longer made its run's 130 MB of JSON (bb6e7a7), 40.0 (-0.7) with the slim record's columns packed (df1bf95: 77.9 ->
15.0 MB with the pass graphs); swimlane page 41.3 (5.5), 41.0 (4.1) and 45.0 (0.6), then 39.5 (2.8). Each answer's
`asked at` is new: the swimlane page asks its first window ~2 s after its record arrives at 10^6 tasks (the page
makes the tasks' and subgraphs' objects).

Session 43 (2026-12-02, the machine-speed line 0.69-0.70 s; native built in both trees). Before: a worktree of
0c369a0 (this session's start) with the pages' bundle of that code (07:45-07:53 UTC); now: this tree (08:34-08:41
UTC). Page opened -> drawn, s (of it after the job's end; negative: drawn from the job's record before its advice was
checked):

| kernel | tile ops | tasks | job ran s | graph, before | graph, now | swimlane, before | swimlane, now |
|---|---|---|---|---|---|---|---|
| gated_delta_rule | 195,552 | 76,016 | 11.6-12.5 | 21.6 (-4.7) * | 7.7 (-7.4) | 18.8 (2.1) | 7.9 (-7.7) |
| block_attn_res | 139,840 | 41,024 | 2.5-3.0 | 12.7 (5.4) | 6.9 (0.7) | 9.2 (2.0) | 6.8 (1.0) |
| glm_fusion | 2,122,536 | 1,053,484 | 31-35 | 83.7 (44.7) | 39.8 (4.2) | 56.9 (18.8) | 41.8 (6.5) |

(*) its job queued 13.3 s behind the workers' start (3.2-4.1 s in every other run); with the old server and the new
pages (08:34 UTC) gated delta rule's graph page drew in 10.4 s (-5.5).

What changed: `/listings` made the leaves' listings by reading the whole record back into objects (glm's fused
attention: 30 s; Kimi's: ~4 s), now the worker makes them with its program (c792bc6); the pages' record with the pass
graphs (`record?panel=true&snapshots=true`) was made from the whole record's lists (12 s), now from the lean ones
(3.4 s); a job's end stored its results with the collector running and made a task index no page asks (10.9 -> 4.8
s, f79a845; 3.8 s reading only the run's arrays, 512b004, after this table); the swimlane page draws the job's record
before its advice is checked (its history and pin at the end); a window's bins are counted in numpy (47ba9de).
`--against` runs the other tree's server with that tree's `webview/dist`: build it there, or link this one's to time
the old server with the new pages.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _models import kept_models_arguments, machine_speed  # noqa: E402
from production_bench import KERNELS, Kernel  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EXTRA = [Kernel("glm_fusion", "glm_v4_5/glm_attention_fusion.py", "ifa_func_kernel",
                "glm_v4_5/glm_attention_fusion.py")]
PAGES = ("graph", "swimlane")


def kernel_id(k: Kernel) -> str:
    """The kernel as serve names it: its file under models/ and its (qualified) name."""
    return f"{k.file}::{k.shown}"


def page(models: Path, k: Kernel, panel: str, tree: Path) -> dict[str, object]:
    got = subprocess.run(["node", str(REPO / "benchmarks" / "serve_pages_bench.mjs"), str(models), kernel_id(k),
                          panel, str(tree)], cwd=REPO, capture_output=True, text=True, timeout=1200)
    lines = [x for x in got.stdout.splitlines() if x.startswith("{")]
    if got.returncode or not lines:
        return {"error": (got.stderr or got.stdout).strip().splitlines()[-1:] or [f"exit {got.returncode}"]}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def biggest(reads: list[dict[str, object]], n: int = 2) -> str:
    top = sorted(reads, key=lambda r: -int(r["bytes"]))[:n]  # type: ignore[call-overload]
    def when(r: dict[str, object]) -> str:  # (page time)
        return f"asked at {float(r.get('asked_s', r['at_s'])):.1f}, read at {float(r['at_s']):.1f} s"  # type: ignore[arg-type]
    return "; ".join(f"{str(r['path']).split('/')[-1].split('?')[0]} {int(r['bytes']) / 1e6:.1f} MB "  # type: ignore[call-overload]
                     f"{when(r)}" for r in top)


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "gated_delta_rule,glm_fusion", None, values=("--against",))
    if shutil.which("node") is None or not (REPO / "node_modules" / "playwright-core").is_dir():
        print("skipped: the node packages are not installed (npm ci)")
        return 0
    if not Path("/usr/bin/chromium").exists():
        print("skipped: no chromium (make chromium)")
        return 0
    if not (REPO / "webview" / "dist" / "graph.js").exists():
        print("skipped: the bundle is not built (npm run build:webview)")
        return 0
    known = {k.key: k for k in [*KERNELS, *EXTRA]}
    kernels = [known[x] for x in a.kernels.split(",")]
    trees = [REPO] + ([Path(a.against).resolve()] if a.against else [])
    print(machine_speed())
    print("| kernel | page | tree | tile ops | tasks | job queued / ran s | page drawn s | of it after the job s | "
          "biggest answers read |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in kernels:
        for panel in PAGES:
            for tree in trees:
                r = page(a.models, k, panel, tree)
                name = "this tree" if tree == REPO else tree.name
                if "error" in r:
                    print(f"| {k.key} | {panel} | {name} | failed: {r['error']} |||||")
                    continue
                job = r["job"]
                assert isinstance(job, dict)
                ran = f"{job['queued_s']:.1f} / {job['ran_s']:.1f}" if job.get("ran_s") is not None else "-"
                after = r.get("after_job_s")
                print(f"| {k.key} | {panel} | {name} | {r.get('tile_ops') or '-'} | {r.get('tasks') or '-'} | {ran} | "
                      f"{float(r['drawn_s']):.1f} | {'-' if after is None else f'{float(after):.1f}'} | "  # type: ignore[arg-type]
                      f"{biggest(r['reads'])} |", flush=True)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
