"""A language-server job's own time to its record, two ways side by side (issue 28: the job's floor and its
second core).

The job runs as the worker pool runs it (`server.worker`): a template imports what the forkserver preloads,
warms up once and freezes its objects; each run is a child forked from it that warms up again and then runs
`server.analyze.analyze_kernel` with the options the language server passes when the panels are open. The time
is the job's start -> its record (the interim answer when the advice is still to be checked, else the answer).
For each kernel, each row compares two ways, runs alternating, median of `--runs`:

- **views**: the findings and editor views made in a forked child beside the record document (`server.beside`)
  against one after the other (`BESIDE_FROM` set to 0, and out of reach);
- **frozen, compile**: the template's frozen generation kept (`pypto.compiler.pipeline.keep_frozen`, as the
  worker pool does since 2026-11-29) against counted by `gc.get_freeze_count()` at every pipeline run;
- **frozen, reused**: the same, for a job whose traced program is the one of the kernel's last answer (an edit
  of a comment: `reuse`), which only traces.

The kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`, the same
folder; run production_bench.py once without `--no-capture` first).

Run: `.venv/bin/python benchmarks/job_bench.py --keep DIR [--kernels hc_pre,gated_delta_rule] [--runs 3]`.

Measured 2026-11-29 04:30 UTC (this tree at fc189d1, 2 cores, load average 0.0, median of 3):

| kernel: measure | A s | B s | A/B |
|---|---|---|---|
| hc_pre: views beside / one after the other | 0.202 | 0.172 | 1.17 |
| hc_pre: frozen kept / counted, compile | 0.169 | 0.362 | 0.47 |
| hc_pre: frozen kept / counted, reused | 0.087 | 0.200 | 0.43 |
| glm_attention: views beside / one after the other | 0.536 | 0.538 | 1.00 |
| glm_attention: frozen kept / counted, compile | 0.545 | 0.742 | 0.73 |
| glm_attention: frozen kept / counted, reused | 0.064 | 0.180 | 0.35 |
| gated_delta_rule: views beside / one after the other | 5.662 | 5.986 | 0.95 |
| gated_delta_rule: frozen kept / counted, compile | 5.658 | 5.784 | 0.98 |
| gated_delta_rule: frozen kept / counted, reused | 0.060 | 0.162 | 0.37 |

The views beside the record document pay from ~50k tile ops (`server.analyze.BESIDE_FROM`; hc_pre's 3k would
lose 30 ms, glm's 24k break even); in a job's fresh child they save 0.32 s of gated delta rule's 6 s, less than
the 0.8 s they save in one warm process (the child's copy-on-write faults).
"""

from __future__ import annotations

import gc
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _models import kept_models_arguments  # noqa: E402
from production_bench import KERNELS  # noqa: E402

from server import analyze  # noqa: E402
from server.worker import _PRELOAD  # noqa: E402

OPTS = {"editor": True, "report": True, "record": True, "snapshots": True, "listings": True,
        "fingerprint": True, "interim": True}


def in_child(job: Callable[[], Any]) -> Any:
    """`job()`'s result (a float or a str) from a child forked off this template, as a worker's job runs."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            analyze.warm_up()
            out = repr(job())
        except BaseException as e:  # noqa: BLE001 - said to the template
            out = repr(f"{type(e).__name__}: {e}")
        os.write(write, out.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read().decode()
    os.waitpid(pid, 0)
    return eval(data)  # noqa: S307 - our own child's repr of a float or a str


def to_record(path: str, text: str, name: str, opts: dict[str, Any], beside_from: int, kept: bool) -> float:
    """In a job's child: seconds from the job's start to its record."""
    from pypto.compiler import pipeline

    pipeline._kept_frozen = kept
    analyze.BESIDE_FROM = beside_from
    t0 = time.perf_counter()
    sent: list[float] = []
    analyze.progress = lambda data: sent.append(time.perf_counter()) if isinstance(data, dict) and (
        "interim" in data or "reused_interim" in data) else None
    answer = analyze.analyze_kernel(path, text, name, opts)
    if answer.get("error"):
        raise RuntimeError(answer["error"].get("message"))
    return (sent[0] if sent else time.perf_counter()) - t0


def fingerprint(path: str, text: str, name: str) -> str:
    return str(analyze.analyze_kernel(path, text, name, OPTS)["fingerprint"])


def compare(label: str, a: Callable[[], Any], b: Callable[[], Any], runs: int) -> str:
    xs: list[float] = []
    ys: list[float] = []
    for _ in range(runs):
        for f, into in ((a, xs), (b, ys)):
            got = in_child(f)
            if isinstance(got, str):
                return f"| {label} | {got[:60]} | | |"
            into.append(got)
    x, y = statistics.median(xs), statistics.median(ys)
    return f"| {label} | {x:.3f} | {y:.3f} | {x / y:.2f} |"


def kernel_rows(k: Any, models: Path, runs: int) -> list[str]:
    """The three rows of one kernel (see the module doc)."""
    path, name = str(models / k.file), k.shown
    text = Path(path).read_text()
    kept = analyze.BESIDE_FROM
    rows = [compare(f"{k.key}: views beside (A) / one after the other (B)",
                    partial(to_record, path, text, name, OPTS, 0, True),
                    partial(to_record, path, text, name, OPTS, 10**12, True), runs),
            compare(f"{k.key}: frozen kept (A) / counted (B), compile",
                    partial(to_record, path, text, name, OPTS, kept, True),
                    partial(to_record, path, text, name, OPTS, kept, False), runs)]
    reuse = {**OPTS, "reuse": {"fingerprints": {in_child(partial(fingerprint, path, text, name)): True}}}
    edited = text + "\n# a comment\n"  # the traced program as it was
    rows.append(compare(f"{k.key}: frozen kept (A) / counted (B), reused",
                        partial(to_record, path, edited, name, reuse, kept, True),
                        partial(to_record, path, edited, name, reuse, kept, False), runs))
    return rows


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "hc_pre,glm_attention,gated_delta_rule", 3)
    models = a.models
    for m in _PRELOAD:  # the template, as the worker pool makes it
        if importlib.util.find_spec(m.split(".")[0]):
            importlib.import_module(m)
    analyze.warm_up()
    gc.collect()
    gc.freeze()
    print(f"job_bench — {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; median of {a.runs}; "
          "seconds from a job's start to its record")
    print("\n| kernel: measure | A | B | A/B |\n|---|---|---|---|")
    for key in a.kernels.split(","):
        for row in kernel_rows(next(x for x in KERNELS if x.key == key), models, a.runs):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
