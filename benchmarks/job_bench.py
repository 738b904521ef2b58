"""A language-server job's own time to its record, two ways side by side (issue 28: the job's floor and its
second core).

The job runs as the worker pool runs it (`server.worker`): a template imports what the forkserver preloads,
warms up once and freezes its objects; each run is a child forked from it that warms up again and then runs
`server.analyze.analyze_kernel` with the options the language server passes when the panels are open. The time
is the job's start -> its record (the interim answer when the advice is still to be checked, else the answer).
For each kernel, each row compares two ways, runs alternating, median of `--runs`:

- **views**: the findings and editor views made in a forked child beside the record document (`pypto.beside`)
  against one after the other (`BESIDE_FROM` set to 0, and out of reach);
- **frozen, compile**: the template's frozen generation kept (`pypto.compiler.pipeline.keep_frozen`, as the
  worker pool does since 2026-11-29) against counted by `gc.get_freeze_count()` at every pipeline run;
- **frozen, reused**: the same, for a job whose traced program is the one of the kernel's last answer (an edit
  of a comment: `reuse`), which only traces.

With `--against OTHER` (another checkout, e.g. `git worktree add /tmp/before REV`, its native build made there with
`python tools/build_native.py`), one row per kernel instead: **first tile edit**, this tree (A) against OTHER (B) —
production_bench's first tile-shape edit of the kernel, each run a fresh template of its tree (a process of this
script with that tree first on the import path, `--tree`) and one job forked from it, the trees taking turns to go
first; then a row for each pass of the job's compile that took 10 ms or more, the seconds its record holds, median of
the same runs (since session 39: a stage timed in one process, as stage_bench times it, need not gain what it gains
in a job, a freshly forked process beside its forked children; and a scratch script that puts another checkout
first on `sys.path` after this one's `pypto` was imported still runs this one's native build).

The kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`, the same
folder; run production_bench.py once without `--no-capture` first).

Session 28 (2026-11-30 09:16 UTC, 2 cores; 34a48c3's code against a63764c, `--against`): gated delta rule's first
tile edit 4.96 [4.96, 4.59, 5.02] against 6.47 [5.25, 6.47, 8.33] s, Kimi's block attention 5.51 against 6.22 s,
glm 0.65 against 0.82 s (`--runs 2`). hc_pre 0.45 against 0.31 s, but by the order: in each pair the first run took
~0.46 s and the second ~0.30 s whichever tree went first, and 3 runs put this tree first twice; use an even `--runs`.
At bf235fe (09:49 UTC, `--runs 4`): gated delta rule 5.38 against 6.45 s, Kimi 5.42 against 7.40 s, glm 0.89
against 0.82 s (its lowering's gain eaten by its Python readers of the native objects: docs/ARCHITECTURE.md).
Session 29 (11:45 UTC, `--runs 4`, against f0b19c0): gated delta rule 4.49 [4.06, 5.04, 3.97, 4.93] against 4.89
[4.99, 4.31, 4.79, 5.65] s, Kimi's block attention 6.08 against 6.06 s, glm 0.77 against 1.13 s, compressor 0.68
against 0.72 s (the run's readers on its columns, bulk bindings).
Session 35 (2026-12-01, `--runs 4` against da1fe67, `beside`'s child no longer blocked on its first result): Kimi's
block attention 2.94 [3.14, 2.98, 2.89, 2.91] against 3.08 [3.08, 3.07, 2.92, 3.17] s, gated delta rule 2.95 against
3.07 s, glm 0.51 against 0.52 s; then the findings' child making the document's run first (`--runs 6` against
44a0642): gated delta rule 2.97 against 3.21 s, Kimi 3.15 against 3.15 s (the machine noisier: 2.9-4.2 s).
Session 36 (2026-12-01 10:10 UTC, `--runs 4` against 3641e91, partition's shared unions, the execute graph's order over
lists, the views' task sets and health's execute level by array work): Kimi's block attention 2.59 [2.96, 2.53, 2.64,
2.53] against 2.92 [2.91, 2.9, 2.92, 2.97] s, gated delta rule 2.68 [2.65, 2.67, 2.68, 2.77] against 2.71 [2.71, 2.72,
2.66, 2.86] s.
Session 38 (2026-12-01 17:02 UTC, `--runs 4` against 1c9adec; the leaf merge's signature, partition's and the execute
graph's per-op facts written for mypyc): Kimi's block attention 1.94 [1.93, 1.94, 1.94, 2.0] against 2.12 [2.1, 2.12,
2.12, 2.22] s, gated delta rule 2.11 against 2.27 s, glm 0.371 against 0.392 s.
Session 39 (2026-12-01 19:00 UTC, `--runs 4` against 2a1252e, the GM index's exact cells and partition's live flags):
gated delta rule 2.009 [2.02, 2.0, 2.03, 1.91] against 2.130 [2.11, 2.23, 2.14, 2.12] s, its partition 0.487 against
0.603 s; Kimi's block attention 1.839 against 1.973 s, its partition 0.510 against 0.609 s; glm 0.352 against 0.358 s,
its partition 0.045 against 0.053 s. Then producers in a list and copy insertion's flags, against 8e2a719: partition
0.481 against 0.491 s (gated delta rule), 0.511 against 0.519 s (Kimi).
Session 53 (2026-12-04, `--runs 4` against 441ac48, the leaf merge's signature and the execute graph's order): Kimi's
block attention 2.085 [1.97, 2.04, 2.13, 2.15] against 2.286 s, its leaf functions' pass 0.438 against 0.586 s; gated
delta rule 2.486 against 2.778 s; a second run, Kimi 2.033 against 2.182 s, gated delta rule 2.491 against 2.480 s.
Since session 41 `--against` also prints the job's whole answer: the seconds from its start to it (the advice's
tile shapes checked, bounded at 10 s), how many of the findings' proposed shapes were checked and unchecked, and the
job's peak memory (resident, address space — the worker's cap limits that — and its forked children's largest
resident peak). 2026-12-02 01:15 UTC, `--runs 4` against 7448d5d, the advice's check ended at its bound
(`Advisor.evaluate_all(deadline=…)`): gated delta rule's whole answer 13.27 s (9 shapes checked, 3 unchecked) against
15.50 s (12 and 0), its record 3.09 against 2.89 s (the machine slower than the day before: its partition 0.82
against 0.76 s, no change there), peak RSS 701 MB, address space 1,388 MB, children 862 MB, either tree; Kimi's block
attention 2.73 against 2.67 s (2 shapes, both checked), 758 MB; glm 1.39 against 1.49 s (4 shapes), 370 MB.

Run: `.venv/bin/python benchmarks/job_bench.py --keep DIR [--kernels hc_pre,gated_delta_rule] [--runs 3]
[--against OTHER]`.

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
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if "--tree" in sys.argv:  # a run of another checkout (`--against`): its pypto and server, imported below
    sys.path.insert(0, sys.argv[sys.argv.index("--tree") + 1])

from _models import kept_models_arguments, machine_speed  # noqa: E402
from production_bench import KERNELS, edit_variants  # noqa: E402

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


def to_record(path: str, text: str, name: str, opts: dict[str, Any], beside_from: int, kept: bool,
              passes: dict[str, float] | None = None, whole: dict[str, float] | None = None) -> float:
    """In a job's child: seconds from the job's start to its record. `passes`: given each pass's seconds as the job's
    compile recorded them (its record's); `whole`: given the whole answer's figures (`answer_facts`)."""
    from pypto.compiler import pipeline

    pipeline._kept_frozen = kept
    analyze.BESIDE_FROM = beside_from
    t0 = time.perf_counter()
    sent: list[float] = []

    def record_passes(answer: Any) -> None:
        if passes is not None and isinstance(answer, dict) and isinstance(answer.get("record"), dict):
            passes.update({p["name"]: p["seconds"] for p in answer["record"].get("passes", ())})

    def progress(data: Any) -> None:
        if isinstance(data, dict) and ("interim" in data or "reused_interim" in data):
            sent.append(time.perf_counter())
            record_passes(data.get("interim"))

    analyze.progress = progress
    answer = analyze.analyze_kernel(path, text, name, opts)
    if answer.get("error"):
        raise RuntimeError(answer["error"].get("message"))
    record_passes(answer)  # (an answer with no advice to check has its record)
    if whole is not None:
        whole.update(answer_facts(answer, time.perf_counter() - t0))
    return (sent[0] if sent else time.perf_counter()) - t0


def answer_facts(answer: dict[str, Any], seconds: float) -> dict[str, float]:
    """In a job's child, at its end: the seconds to its whole answer (the advice's shapes checked), how many of the
    findings' proposed shapes the sim board checked and how many its time bound left unchecked, and this process's
    peak memory: resident (`ru_maxrss`; a forked job's counts the template's pages it maps) and its address space
    (VmPeak, which the worker's cap limits: `server.worker`), with the largest of its forked children's resident
    peaks (the leaves, the findings, the advice's candidates)."""
    tries = [t for f in answer.get("health", {}).get("findings", ()) for t in f.get("numbers", {}).get("try", ())]
    vm_peak = 0.0
    with suppress(OSError):
        status = Path("/proc/self/status").read_text()
        vm_peak = next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmPeak:")), 0.0)
    return {"whole answer s": seconds,
            "shapes checked": float(sum(1 for t in tries if "makespan_us" in t)),
            "shapes unchecked": float(sum(1 for t in tries if t.get("unchecked"))),
            "peak RSS MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "peak address space MB": vm_peak,
            "children's peak RSS MB": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


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


def first_edit(k: Any, models: Path) -> tuple[str, str]:
    """The kernel file's path and its text after production_bench's first tile-shape edit of the kernel."""
    path = models / k.file
    text = path.read_text()
    line, new = edit_variants(text, k.name, 1, [])[0]
    lines = text.split("\n")
    lines[line] = new
    return str(path), "\n".join(lines)


def edit_rows(k: Any, models: Path, other: str, runs: int) -> list[str]:
    """`--against`: the first tile edit's job in this tree and in `other`, each run a fresh template process; then,
    with the same runs, each pass of the job's compile that took 10 ms or more (the seconds its record holds: a stage
    as it runs in a job — in a freshly forked process, beside its forked children — which a stage timed in one
    process, as stage_bench does, need not show)."""
    def once(tree: str) -> tuple[float, dict[str, float], dict[str, float]]:
        cmd = [sys.executable, __file__, "--keep", str(models.parent), "--kernels", k.key, "--tree", tree, "--once"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"{tree}: {(done.stdout + done.stderr).strip()[-300:]}")
        last = done.stdout.strip().splitlines()[-1]
        if not last.startswith("["):  # the job's error, as `in_child` said it
            raise RuntimeError(f"{tree}: {last[-300:]}")
        seconds, passes, whole = json.loads(last)
        return float(seconds), passes, whole

    trees = (str(Path(__file__).resolve().parents[1]), other)  # A, B (by position: `other` may be this tree)
    times: tuple[list[float], list[float]] = ([], [])
    stages: tuple[dict[str, list[float]], dict[str, list[float]]] = ({}, {})
    facts: tuple[dict[str, list[float]], dict[str, list[float]]] = ({}, {})
    for r in range(runs):
        for i in ((0, 1) if r % 2 == 0 else (1, 0)):
            seconds, passes, whole = once(trees[i])
            times[i].append(seconds)
            for into, got in ((stages[i], passes), (facts[i], whole)):
                for name, s in got.items():
                    into.setdefault(name, []).append(s)
    x, y = statistics.median(times[0]), statistics.median(times[1])
    each = f"{[round(v, 2) for v in times[0]]} / {[round(v, 2) for v in times[1]]}"
    rows = [f"| {k.key}: first tile edit, this tree (A) / {other} (B) {each} | {x:.3f} | {y:.3f} | {x / y:.2f} |"]
    for name, xs in stages[0].items():
        ys = stages[1].get(name)
        if ys and max(statistics.median(xs), statistics.median(ys)) >= 0.01:
            px, py = statistics.median(xs), statistics.median(ys)
            rows.append(f"| {k.key}: its pass {name} | {px:.3f} | {py:.3f} | {px / py:.2f} |")
    for name, xs in facts[0].items():  # the whole answer: the advice's check and the job's memory
        ys = facts[1].get(name)
        if ys:
            fx, fy = statistics.median(xs), statistics.median(ys)
            ratio = f"{fx / fy:.2f}" if fy else "-"
            rows.append(f"| {k.key}: its {name} | {fx:.3f} | {fy:.3f} | {ratio} |" if name.endswith(" s") else
                        f"| {k.key}: its {name} | {fx:,.0f} | {fy:,.0f} | {ratio} |")
    return rows


def _once(path: str, text: str, name: str) -> str:
    """In a job's child: `[seconds to the record, {pass: seconds}, {whole answer's figure: value}]` as JSON."""
    passes: dict[str, float] = {}
    whole: dict[str, float] = {}
    return json.dumps([to_record(path, text, name, OPTS, analyze.BESIDE_FROM, True, passes, whole), passes, whole])


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "hc_pre,glm_attention,gated_delta_rule", 3,
                              flags=("--once",), values=("--against", "--tree"))
    models = a.models
    if a.against:
        print(f"job_bench — {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {machine_speed()}; "
              f"median of {a.runs}; "
              "seconds from a job's start to its record; each run a fresh template")
        print("\n| kernel: measure | A | B | A/B |\n|---|---|---|---|")
        for key in a.kernels.split(","):
            for row in edit_rows(next(x for x in KERNELS if x.key == key), models, str(Path(a.against).resolve()),
                                 a.runs):
                print(row, flush=True)
        return 0
    for m in _PRELOAD:  # the template, as the worker pool makes it
        if importlib.util.find_spec(m.split(".")[0]):
            importlib.import_module(m)
    analyze.warm_up()
    gc.collect()
    gc.freeze()
    if a.once:  # one job of `--against`'s: the first tile edit of the one kernel, in this process's tree
        k = next(x for x in KERNELS if x.key == a.kernels)
        path, text = first_edit(k, models)
        print(in_child(partial(_once, path, text, k.shown)))
        return 0
    print(f"job_bench — {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {machine_speed()}; "
              f"median of {a.runs}; "
          "seconds from a job's start to its record")
    print("\n| kernel: measure | A | B | A/B |\n|---|---|---|---|")
    for key in a.kernels.split(","):
        for row in kernel_rows(next(x for x in KERNELS if x.key == key), models, a.runs):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
