"""What `pypto-ide serve` does with a production kernel's finished job, in one process, old way and new side by side:
the parts serve_pages_bench.py's page times are made of (session 44).

For each kernel of `--kernels` (production_bench.py's keys, plus `glm_fusion`), its analysis is made once as a
`serve` job makes it (the worker's answer, in this process), then, median of `--runs` each:

- **store**: `http_views.store` of the answer (since session 44 without the run's JSON), and the run's JSON it made
  before (`_dumps` of the run made from the columns);
- **first window's run**: `Results.run` (the run made from the record's columns) against parsing the run's JSON, as
  the first window did before;
- **task click's arrays**: the column file read whole against only the arrays the task index reads
  (`task_index_arrays`);
- **slim record**: `panel_record` plus `json.dumps`, with its long columns as lists and packed (`panel_data.packed`),
  their MB, and the text parsed back with `json.loads` (a stand-in for the page's `JSON.parse`);
- **window beside the history's copy**: a whole-run window (`swimlane_window`, as the swimlane page asks it) alone,
  and while another thread writes the run's JSON (`json_parts`) in slices of 50,000 and of `http_views.SLICE`;
- **block instructions' ops**: the record's block instructions' tile ops found from the ops the compile kept
  (`tile_ir.keep_ops`) against an index of every op made anew (what the record document did before; in a job it
  also copied the pages of every op, the findings' child sharing them).

Run: `.venv/bin/python benchmarks/serve_store_bench.py --keep /tmp/mo3 --kernels gated_delta_rule,glm_fusion`
(glm_fusion: ~30 s to analyse, ~5 GB).
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _models import kept_models_arguments, machine_speed  # noqa: E402
from _timing import median  # noqa: E402
from production_bench import KERNELS  # noqa: E402
from serve_pages_bench import EXTRA  # noqa: E402


def row(models: Path, key: str, runs: int) -> str:
    from pypto.compiler import tile_ir
    from pypto.compiler.pipeline import gc_paused
    from pypto.frontend.inputs import example_arguments
    from pypto.ir.columns import array_names, expand, read_npz
    from pypto.record import trace_for
    from server import analyze, http_views, panel_data
    from server.http import JobRequest, _settings
    from server.jobs import Job

    k = next(x for x in [*KERNELS, *EXTRA] if x.key == key)
    path = models / k.file
    text = path.read_text()
    settings = {**_settings(JobRequest(kernel=f"{k.file}::{k.shown}", action="profile", board="sim")),
                "check_advice": False, "listings": True}
    answer = analyze.analyze_kernel(str(path), text, k.shown, settings)
    job = Job("j", k.file, "profile", settings, 600, status="done", result=answer)
    stored = median(lambda: http_views.store(job, dict(answer)), 1)  # (it pops what it stores: once)
    doc = json.loads(job.extra["record"])
    cols = job.extra["record_columns"]
    with gc_paused():
        run_json = median(lambda: http_views._dumps(expand(doc["run"], read_npz(cols, array_names(doc["run"])))),
                           runs)
        text_of_run = http_views._dumps(expand(doc["run"], read_npz(cols, array_names(doc["run"]))))
        parsed = median(lambda: json.loads(text_of_run), runs)
    made = median(lambda: http_views.Results().run(job), runs)
    whole = median(lambda: read_npz(cols), runs)
    needed = median(lambda: read_npz(cols, http_views.task_index_arrays(doc)), runs)
    n_arrays, n_needed = len(read_npz(cols)), len(http_views.task_index_arrays(doc))

    lists = http_views.Results().panel_lists(job)
    slim: dict[str, list[tuple[float, float, int]]] = {"lists": [], "packed": []}
    real = panel_data.packed
    try:
        for _ in range(runs):
            for way in ("lists", "packed"):
                panel_data.packed = (lambda c: c) if way == "lists" else real  # type: ignore[assignment]
                t0 = time.perf_counter()
                body = json.dumps(panel_data.panel_record(lists), separators=(",", ":"))
                t1 = time.perf_counter()
                json.loads(body)
                slim[way].append((t1 - t0, time.perf_counter() - t1, len(body)))
    finally:
        panel_data.packed = real

    res = http_views.Results()
    run = res.run(job)

    def window() -> None:
        http_views.swimlane_window(run, None, None, None, 5000, 0, 5000, 200, 200, False, None, 1, None)

    alone = median(window, runs)
    beside = {}
    for size in (50_000, http_views.SLICE):
        def write(size: int = size) -> None:
            b"".join(http_views.json_parts(run, size))
        times = []
        for _ in range(runs):
            th = threading.Thread(target=write)
            th.start()
            time.sleep(0.05)  # (the writer under way)
            t0 = time.perf_counter()
            window()
            times.append(time.perf_counter() - t0)
            th.join()
        beside[size] = statistics.median(times)

    kernel = analyze._kernel(analyze._load(str(path), text), str(path), k.shown)
    rec = trace_for(kernel, example_arguments(kernel, values=False)).lowered()
    tiles, blocks = rec.program.tiles, rec.program.blocks
    ids = {ins.tile_op for b in blocks or () for ins in b.instrs if ins.tile_op >= 0}
    found_kept = median(lambda: [tile_ir.op_with_id(tiles, i) for i in ids], runs)

    def index_anew() -> None:
        tile_ir.forget_ops_by_id(tiles)
        by_id = tile_ir.ops_by_id(tiles)
        [by_id.get(i) for i in ids]
    found_index = median(index_anew, runs)

    def med(way: str, i: int) -> float:
        return statistics.median(x[i] for x in slim[way])
    return (f"| {key} | {answer['summary']['tasks']:,} | {stored:.2f} | {run_json:.2f} | {made:.2f} | {parsed:.2f} | "
            f"{needed:.2f} ({n_needed}) | {whole:.2f} ({n_arrays}) | "
            f"{slim['packed'][0][2] / 1e6:.1f} / {slim['lists'][0][2] / 1e6:.1f} | "
            f"{med('packed', 0):.2f} / {med('lists', 0):.2f} | {med('packed', 1):.2f} / {med('lists', 1):.2f} | "
            f"{alone:.2f} | {beside[http_views.SLICE]:.2f} / {beside[50_000]:.2f} | "
            f"{found_kept * 1e3:.1f} / {found_index * 1e3:.0f} ({len(ids)}) |")


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "gated_delta_rule,glm_fusion", 3)
    print(machine_speed())
    print(f"median of {a.runs}; old / new columns side by side where a pair is given")
    print("| kernel | tasks | store s | the run's JSON it made before s | first window's run from columns s | "
          "from JSON s | task click's arrays s (read) | all s (of) | slim record MB, packed / lists | "
          "made and written s | parsed s | window alone s | window beside the history's JSON, slices of "
          "SLICE / 50,000 s | block instructions' ops, kept / an index anew ms (ops) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in a.kernels.split(","):
        print(row(a.models, key, a.runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
