"""What the language server does with a big kernel's answer and its panels' record (issue 28: the server's side of an
edit), each figure two ways side by side in one process:

- **unpickle**: the worker's answer (a compile with the panels' parts, as `server.live` asks it) read back, with
  Python's cyclic collector on and paused (`server.worker.collector_paused`, as the pool reads it), while the process
  holds the kernel's answer before it (the server keeps the latest and the one before);
- **panel record**: `pypto/record`'s slim record made (`server.panels.record`, collector paused, as the language
  server makes it), its JSON bytes and serialisation seconds (the collector on and paused) — and the bytes of the
  same record with its subgraphs and execute tasks as objects and their predecessors as lists (the form before
  `as_rows` and `pred_runs`).

The kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`; run it once
without `--no-capture` first). Median of `--runs`.

Run: `.venv/bin/python benchmarks/panel_bench.py --keep DIR [--kernels gated_delta_rule,block_attn_res] [--runs 3]
[--edited]` (`--edited`: the kernel as production_bench's first tile-shape edit of its body leaves it).

Measured 2026-11-29 07:25 UTC (this tree at 969b420, 2 cores, load average ~0.5):

| kernel | answer MB | unpickle, collector on s | paused s | panel record made s | its JSON MB | serialised, collector on s | paused s | as objects and lists MB |
|---|---|---|---|---|---|---|---|---|
| gated_delta_rule | 39.2 | 0.62 | 0.15 | 0.57 | 6.4 | 0.11 | 0.11 | 15.1 |
| block_attn_res | 60.8 | 1.22 | 0.21 | 0.36 | 3.5 | 0.05 | 0.05 | 31.6 |

Session 24 (2026-11-29 20:58 UTC, `--edited`; the slim record made from columns, `server.panel_data.PANEL_ROWS`, and
the editor's run left in the record, `swimlane_in_record`; made in 1.07 s for gated delta rule and 1.1-1.5 s for Kimi
before, measured alone in one process):

| kernel | answer MB | unpickle, collector on s | paused s | panel record made s | its JSON MB | serialised, collector on s | paused s | as objects and lists MB |
|---|---|---|---|---|---|---|---|---|
| gated_delta_rule (edited) | 36.4 | 0.46 | 0.08 | 0.36 | 6.4 | 0.25 | 0.24 | 15.1 |
| block_attn_res (edited) | 74.8 | 0.12 | 0.10 | 0.36 | 4.2 | 0.20 | 0.20 | 57.6 |
"""  # noqa: E501

from __future__ import annotations

import gc
import json
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _models import kept_models_arguments  # noqa: E402
from job_bench import OPTS  # noqa: E402
from production_bench import KERNELS, edit_variants  # noqa: E402

from server import analyze, panels  # noqa: E402
from server.lsp import _serialize  # noqa: E402
from server.worker import collector_paused  # noqa: E402


def as_objects(record: dict[str, Any]) -> dict[str, Any]:
    """The slim record with its columns (`$rows`) as objects and its predecessor runs as lists: the form before."""
    def objects(x: Any) -> Any:
        if not (isinstance(x, dict) and "$rows" in x):
            return x
        cols = x["$rows"]
        n = len(next(iter(cols.values()), []))
        return [{k: v[i] for k, v in cols.items()} for i in range(n)]

    tasks = objects((record.get("execute") or {}).get("tasks"))
    for t in tasks or ():
        if "pred_runs" in t:
            t["preds"] = [i for x in t.pop("pred_runs")
                          for i in (range(x[0], x[1] + 1) if isinstance(x, list) else [x])]
    return {**record, "subgraphs": objects(record.get("subgraphs")), "execute": {**record["execute"], "tasks": tasks}}


def timed(paused: bool, fn: Any, *args: Any) -> float:
    """Seconds of `fn(*args)`, with the collector paused or not."""
    if paused:
        with collector_paused:
            t = time.perf_counter()
            fn(*args)
            return time.perf_counter() - t
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def row(key: str, models: Path, runs: int, edited: bool = False) -> str:
    k = next(x for x in KERNELS if x.key == key)
    path = models / k.file
    text = path.read_text()
    if edited:  # as production_bench's first tile-shape edit of the kernel's body leaves it
        line, new = edit_variants(text, k.name, 1, [])[0]
        lines = text.split("\n")
        lines[line] = new
        text = "\n".join(lines)
        key += " (edited)"
    opts = {**OPTS, "interim": False, "check_advice": False}
    held = analyze.analyze_kernel(str(path), text, k.shown, opts)  # noqa: F841 - the answer before, held as the server does
    answer = analyze.analyze_kernel(str(path), text, k.shown, opts)
    if answer.get("error"):
        return f"| {key} | {answer['error'].get('message', '')[:80]} | | | | | | | |"
    data = pickle.dumps(answer)  # (the default protocol, as a multiprocessing connection sends it)
    on = statistics.median(timed(False, pickle.loads, data) for _ in range(runs))
    off = statistics.median(timed(True, pickle.loads, data) for _ in range(runs))

    class Doc:
        uri = path.as_uri()

    class Res:
        name, version = k.shown, 1

    made = []
    for _ in range(runs):
        panels._LISTS.clear()
        made.append(timed(True, panels.record, Doc, Res, answer))
    rec = panels.record(Doc, Res, answer)  # type: ignore[arg-type]
    ser_on = statistics.median(timed(False, _serialize, rec) for _ in range(runs))
    ser_off = statistics.median(timed(True, _serialize, rec) for _ in range(runs))
    wire = _serialize(rec).text
    sent = json.loads(wire)
    before = json.dumps({**sent, "record": as_objects(sent["record"])}, separators=(",", ":"))
    return (f"| {key} | {len(data) / 1e6:.1f} | {on:.2f} | {off:.2f} | {statistics.median(made):.2f} | "
            f"{len(wire) / 1e6:.1f} | {ser_on:.2f} | {ser_off:.2f} | {len(before) / 1e6:.1f} |")


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "gated_delta_rule,block_attn_res", 3, ("--edited",))
    models = a.models
    analyze.warm_up()
    print(f"panel_bench — median of {a.runs}\n")
    print("| kernel | answer MB | unpickle, collector on s | paused s | panel record made s | its JSON MB "
          "| serialised, collector on s | paused s | as objects and lists MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in a.kernels.split(","):
        print(row(key, models, a.runs, a.edited), flush=True)
        gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
