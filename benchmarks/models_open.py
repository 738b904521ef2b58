"""How many of PyPTO's production kernels open in the IDE after one capture of their tests (issue 28).

The yardstick: "of the jit kernels in PyPTO's models/ whose tests run on this CPU, >= 90 % open in the
IDE with a graph and a swimlane and no edit to the user's files, after one capture of their test;
kernels made inside functions included".

1. models/ of hicann/pypto at 883e7dfb0 is exported from the mirror into a temporary folder (`--keep DIR`
   keeps it there; PyPTO's code never enters this repository);
2. every `@…jit` kernel is found by an ast scan of the files (module level, inside functions, in classes);
3. every file with tests (pytest functions — some model files hold theirs beside the kernels — or a
   `test_*.py` script with a `__main__` block) runs once under `pypto-ide capture` in its folder, with a
   time limit (`--timeout`), `-j` at a time; whether it passed is kept;
4. each kernel is opened as the language server opens it: a fresh process runs
   `server.analyze.list_kernels` and then `server.analyze.analyze_kernel(path, text, name, opts)` with the
   options the server's live analysis passes when the panels are open (`LiveAnalysis`: the settings'
   `analysis()`, `editor`, `report`, and `record`/`snapshots`/`listings`), the worker's memory cap (the
   server's default above its size: 2 GiB until 75ca9c1, 4 GiB since) and a time limit. `--live` adds what the
   live loop adds, the record sent first (`interim`) and the template's objects frozen as a worker's are, and says
   per kernel when the record was sent and what became of the advice's check: how many proposed shapes the board
   simulated, why the others were not, and whether the job stopped after its record (the server then keeps the
   record, its advice not checked). (`pypto-ide profile
   FILE::KERNEL --board sim` finds the same kernels
   and inputs — `find_kernels` and `analyze._kernels` both add `capture.nested_kernels` to the module's —
   but skips the health report, the advisor's check, the editor view and the module loader the workers
   use, so it is not what opens a kernel in the editor.) A kernel is **opened** when the answer has no
   error, a record whose graph has nodes and a sim swimlane with tasks; **no capture** when no capture of
   it exists (its tests did not call it, or failed before); **error** (the first line); **timeout**.
5. the files' hashes before and after say whether anything edited the user's files.

Totals: kernels; kernels called by their tests on this CPU (a capture of them exists: a test ran up to the
call) and how many of those opened — the yardstick's figure; kernels in test files with a passing test (a
test file that may call them — the kernel's own file, or a test file of its folder naming its module — ran
with at least one test passing: "yes" every test passed, "partly" some failed; "skipped": its authors
skip every test), which also counts the variants no running test calls, and how many opened; opened in all.

Measured (this tree at 7aad0c1 with the other engineer's compiler work in progress, 2 cores shared with other
sessions; `-j 2 --keep DIR`, then `--no-capture`): 52 kernels (3 made inside functions) in 26 test files; 34
called by their tests on this CPU, **31 opened (91 %)**; 44 in test files with a passing test (28 opened:
the 16 others are variants no running test calls — `_p` prefill, `_950`, `hc_pre_kernel_prefill`,
`compressor_ratio_4*`, kimi's l_max 96/128, one qat backward); 31 of 52 in all; no user file edited. Test
files: 15 pass; 3 partly (deepseek_v32 mla_prolog_quant and sparse_attention_antiquant, glm_attention: one
test each fails, after other tests called the kernels; not examined); 4 fail on a comparison after their
kernels ran (glm attention_fusion: one bf16 ulp over its rtol; moe_fusion, moe_fusion_mix: near-tied top-k ids
swapped; select_experts passes since f2cb367, made after this capture); 4 skipped by their authors. The three
called kernels that do not open:

- glm_v4_5/glm_attention_fusion.py::ifa_func_kernel — the compiler: `graph_partition` runs out of the worker's
  2 GiB (1.05M tasks, 2.1M tile ops; without limits it opens in 242 s at 6.2 GB RSS);
- qat/qat_impl.py::ai_infra_qat_symmetric_per_tensor_backward_kernel — the compiler: out of the worker's
  2 GiB (inputs 38344 x 2048 bf16);
- qwen3_next/gated_delta_rule_impl.py::chunk_gated_delta_rule_unaligned.<locals>.kernel — the server knew a
  file's kernels by name (`server/analyze.py` `_kernels`), and the file's other factory makes a `kernel` too.
  Since effee41 the server names such kernels by qualified name and it opens (26,968 tile ops, 10,436 tasks;
  `--only qwen3_next --no-capture`, which opens a kernel by its qualified name when the server lists it so):
  **32 of 34 (94 %)**.

Since 75ca9c1 (the workers' default cap 4 GiB; 2026-11-28, `--keep DIR --no-capture --only qat_impl` and
`--only glm_attention_fusion`): qat's per-tensor backward opens (1,579,842 tile ops, 90,134 tasks, 36.6 s; it
needs 2.5 GiB above its start), so **33 of 34 (97 %)**; glm's ifa_func_kernel still runs out (its compile alone
takes 35 s and 4.0 GB; the answer would pickle to 570 MB), now reported as "ran out of its memory limit"
(f233302) instead of an internal error.

Session 39 (2026-12-01, glm's ifa_func_kernel opened without a memory cap as this script opens it, `/usr/bin/time -v`):
2a1252e 44.9 s to the answer, 7.43 GB peak RSS; 9c9017d 40.0 s, 6.22 GB (its compile alone, `pypto-ide compile`:
32 s and 5.4 GB -> 26 s and 4.2 GB peak; partition 7.1 -> 5.3 s, its RSS growth 2.9 -> 1.8 GB: the GM index's exact
cells and partition's live flags, docs/ARCHITECTURE.md "Session 39"). Still over the workers' 4 GiB: **33 of 34**.
(This script's driver asks for no interim answer; the language server does, and there its peak is now 5.7 GB, not
6.1 GB: a job lets go of what it sent before it checks the advice.)
Session 40: that 5.7 GB was measured without the worker's frozen objects (`keep_frozen`); as a worker runs it, each of
the advice's three refused shapes left ~1 GB of graph partition's state behind (a cycle the frozen collector never
frees), to 7.7 GB. Partition now lets go of its state from 500 k tile ops and the advice's shapes are lowered in forked
children: 4.8 GB, the views' peak (docs/ARCHITECTURE.md "Session 40"). This script's capped open still runs out,
making the record document's tile columns at 3.95 GB RSS (the cap is 4 GiB of address space): **33 of 34**.
Session 41 (2026-12-02 02:19-02:48 UTC, 0789ebd, `-j 2 --keep DIR`, a fresh export, every test file captured):
**34 of 34 (100 %)**. glm's ifa_func_kernel opened in 83 s (peak RSS 4,447 MB), under the same cap: this driver now
counts the cap from its size after importing what a worker's template preloads (before, from its size before torch
was imported: ~570 MB of address space less than a worker allows), the job makes the views before the columns' .npz
bytes (peak 4.82 -> 4.43 GB), and a worker pickles a big message straight into its file (this driver sends none; a
worker's interim answer of that kernel, ~0.5 GB, had run it out of memory). The qat per-tensor backward kernel
(1,579,842 tile ops) opened in 34.0 s, 1,940 MB; gated delta rule in 20.3 s. Still 31 of the 45 kernels in test files
with a passing test (the others never called by the tests that run, or with no capture), no user file edited.

Session 51 (2026-12-04): **33 of 34**: glm's ifa_func_kernel ran out again with the native build (peak RSS 4,479-4,616
MB; 4,133 MB and open under the Python source). Session 52 (2026-12-04 06:56-07:08 UTC, a7d123b, `-j 2 --keep DIR
--no-capture`, session 51's captures): **34 of 34 (100 %)**, glm's ifa_func_kernel in 61 s (peak RSS 4,418 MB): the
native build no longer makes an int object per id stored in partition's and the GM index's lists and sets
(docs/ARCHITECTURE.md "Session 52"). 31 of the 45 kernels in test files with a passing test, no user file edited.
Session 56 (2026-12-04 20:33-20:41 UTC, 7a91c97's code with ced22d6's partition change, the same command): **33 of
34** again: glm's ifa_func_kernel ran out of its memory limit (peak RSS 4,368 MB; 7a91c97 alone: 4,360 MB, out;
6dd6c49, before session 55: opened in 69 s, 4,505 MB), in the editor view's numbering of the
tasks' node sets (numpy's unique over a void view of a padded copy: three ~133 MB arrays at its 1.09 M tasks). The
view now numbers them by integer keys made a column at a time (`server.index._row_codes`): opened in 51 s (peak RSS
4,451 MB); the whole run (20:51-20:59 UTC, 05061be): **34 of 34 (100 %)**, glm's ifa_func_kernel in 52 s (4,459 MB),
31 of the 45 kernels in test files with a passing test, no user file edited.

Before this work's capture fixes (the first run): hc_pre's test compared zeros (`y.npu()` of a device tensor
was a copy), glm's gate/moe/select tests stopped at `torch.npu.NPUGraph` and an integer `torch.rand`, arctic's
script skipped its run without `TILE_FWK_DEVICE_ID`, kimi's and qat's tests hit the 8 GiB cap, qwen3_next's
factory kernels were refused (`pypto.DYNAMIC` came back as a copy) and deepseek_v32's `MlaTileConfig` lost
its attributes (a `@dataclass` whose `__init__` sets them).

Run: `.venv/bin/python benchmarks/models_open.py [-j 2] [--timeout 900] [--open-timeout 300] [--keep DIR]
[--mirror REPO] [--tree CHECKOUT] [--only SUBSTR] [--live] [--check-longer] [--run-skipped]`. `--tree` runs another
checkout's pypto and server (`PYTHONPATH`), e.g. a worktree of an earlier commit. `--check-longer` (implies `--live`):
where the open's check of the advice left shapes unsimulated (the findings' `check_seconds`), the job the finding's
quick fix then asks for (`pypto.checkAdvice`: the record reused by its traced program's fingerprint, the advice
checked within the longer bound), in a fresh driver as a worker forks a fresh job; its line says what it simulated
and in how long — first as the language server asks for it since session 60 (with the first job's `advice_basis`, so
the kernel is traced, not lowered again), then as before ("without its basis": lowered again), with each job's peak
resident memory (its own; the candidates' forked children apart).

Session 57 (2026-12-04, 22:32-22:50 UTC, 93d47de, `-j 2 --keep DIR`, a fresh export, every test file captured): **34
of 34**, glm's ifa_func_kernel in 51 s (peak RSS 4,444 MB); no user file edited. With `--live` (22:56-23:03 UTC,
`--no-capture`): 34 of 34, every job ending with its answer. The other 32 kernels' records were sent within 4 s (a
kernel whose findings propose no shape sends none before its answer), their advice's shapes all simulated but
mla_prolog_quant_d's (3 of 4, the bound); gated delta rule's record at 2 s, 11 of 11 shapes simulated. qat's
per-tensor backward: record at 19 s, answer at 35 s, 0 of 3 simulated (the 10 s bound). glm's ifa_func_kernel:
record at 25 s, answer at 41 s, 0 of 3 simulated (one child out of memory, two past the bound). That open at
b9a45cc (`--tree`): record at 26 s, then "the job ran out of its memory limit after it sent its record"
(docs/ARCHITECTURE.md, "Session 57"). Then a bounded check stopped beginning shapes whose compile would outlast it
(23:11 UTC, `--only glm_attention_fusion --live`, `--only qat_impl --live`): glm's record at 27 s, answer at 32 s, qat's
per-tensor backward's at 19 and 25 s, each "0 of 3 simulated" with the compile times that said so. The whole
`--live` run again (00:07-00:12 UTC, 12db003): 34 of 34, every other kernel's shapes simulated as in the run before
(glm's record at 30 s, answer at 35 s; qat's at 18 and 23 s).

Session 58 (2026-12-05), `--run-skipped` (the tests their own skip marks skip run too; captured into a fresh
export each, so each run's counts are its own). 01:55-02:18 UTC, a tree at 5dac0a1, `-j 2 --capture-memory-mb 10000`:
39 of 39 called kernels opened, 10 of them never called before (DeepSeek V3.2's mla_prolog_quant_p, 280 k tile ops;
sparse_flash_attention_quant_p, 1.27 M; sparse_attention_antiquant_p, 914 k; their _d_950 variants;
mla_indexer_prolog_quant_p; DeepSeek V4's two MLA prologs and its quantised lightning indexer prolog; GLM's quantised
attention prelude), while five that the default run captured were not: kimi's and qat's lifted cases ran out of that
10 GB cap before their usual cases ran. 02:36-02:42 UTC, a tree at f83b738 (the custom operators on the CPU, the
retarget and SymbolicScalar fixes), `--only deepseek_v4 -j 2`: 10 of 10, the compressor's two ratio-4 kernels among
them (its test file passes whole). `--only qat -j 1` (the default cap, three quarters of the machine): 4 kernels
captured and opened, but the lifted N=153,376 cases exhaust the memory and take the per-tensor backward's usual case
with them: lift marks per test (the editor's lens does) where the lifted cases are big. With the default run's 34,
46 of the 52 kernels open from a capture of their own tests; the other 6 no test that runs calls (DeepSeek V4's
hc_pre_kernel_prefill: only a `te_` function; kimi's l_max 96 and 128, forward and backward; qat's per-channel
backward: only its lifted, memory-exhausting cases).

Session 59 (2026-12-05, 05:11-05:16 UTC, `--keep DIR --no-capture --check-longer --only X`, the three files whose
kernels' checks left shapes unsimulated in session 57's `--live` run): DeepSeek V3.2's mla_prolog_quant_d (248 k tile
ops) 3 of 4 shapes simulated at its open, then the longer check (about 3 s expected, a bound of 12.7 s) 4 of 4 in
10 s, its record reused; QAT's per-tensor backward (1.58 M) 0 of 3, then (about 134 s expected, bound 267 s) 3 of 3
in 31 s, record reused — the estimate counts each shape's whole compile, a shape the board refuses ends sooner; in
both the board found no proposed shape faster, so their findings now say so instead of that the bound stopped them.
glm's fused attention (2.2 M) 0 of 3, then the longer job ran out of the worker's 4 GiB memory cap: a shape whose
child sent nothing whole was lowered in the job itself. Since a shape that runs the job out of memory is left
unsimulated instead (05:33-05:37 UTC, the same open by a scratch script calling `open_in_process`): the longer job
answers in 44 s, 0 of 3 simulated, each child out of memory, and the finding says a bigger memory limit lets the
board simulate them; with `--memory-limit-mb 12000` (05:16-05:18 UTC, before that change): about 62 s expected, bound
123 s, 3 of 3 simulated in 79 s, record reused, none faster.

Session 61 (2026-12-05 11:34-11:50 UTC, 4509cd5, `-j 2 --keep DIR`, a fresh export, every test file captured, then
the runner functions): **36 of 36 (100 %)** — the 34 kernels the tests call and the 2 the runner functions capture
(DeepSeek V4's `hc_pre_kernel_prefill`, GLM's `quant_attention_pre_kernel`); glm's ifa_func_kernel in 38 s (peak RSS
4,433 MB), qat's per-tensor backward in 29 s (1,853 MB), gated delta rule in 18 s; 31 of the 42 kernels in test files
with a passing test; 36 of 52 in all; no user file edited.

Session 62 (2026-12-05, `--live --only glm_attention_fusion`, then `--only qat_impl`, 14:51-14:56 UTC, -j 1): an
open now sends a big kernel's tensor graph first (`graphFirstFrom`, 500,000 tile ops; docs/protocol.md "The tensor graph
first"), and `--live` says when: glm's fused attention's at 3 s, its record at 42 s (2,195,024 tile ops); qat's
per-tensor backward's at 1 s, its record at 25 s (the same run with it off: record at 25 s). The whole run at
14:14-14:35 UTC, before it (`-j 1 --live`): 36 of 36 called kernels open, glm's fused attention's record at 29 s, qat's
at 20 s — the machine slower in the second run.

Session 63 (2026-12-05, `--live --only qat_impl`, `--tree` b1ff482 then this checkout, 17:53-17:54 UTC, -j 1): the
block allocator's work per leaf (docs/ARCHITECTURE.md, "Session 63"): qat's per-tensor backward's record sent at
20 -> 17 s, opened 25.6 -> 22.5 s. With the blocks' document columns made from their fields too
(`serialize.blocks_columns`; 18:38-18:40 UTC, against b1ff482 side by side): record sent at 19 -> 15 s, opened 23.7
-> 20.0 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _models import (
    COMMIT,
    MIRROR,
    ROOT,
    KernelSite,
    TestRun,
    fingerprint,
    kernel_sites,
    models_folder,
    open_in_process,
    python_files,
    run_capture,
    test_command,
    tests_of,
)

from server.worker import MEMORY_LIMIT_MB  # the language server's own cap

RUNS_FILE = "capture_runs.json"  # with --keep DIR: the tests' outcomes, in DIR beside models/
RUNNERS_FILE = "runner_captures.json"  # with --keep DIR: the kernels a runner function's capture called


@dataclass
class Opened:
    site: KernelSite
    status: str  # opened / no capture / error / timeout
    detail: str = ""
    seconds: float = 0.0
    tasks: int = 0
    tile_ops: int = 0
    nodes: int = 0
    pypto: str = ""


def has_capture(site: KernelSite, models: Path) -> bool:
    """A capture of the kernel in a store of its folder or a parent (the lookup the tools make)."""
    for folder in [site.file.parent, *site.file.parents]:
        store = folder / ".pypto" / "captures"
        if store.is_dir():
            for p in store.glob("*.json"):
                try:
                    doc = json.loads(p.read_text())
                except (OSError, ValueError):
                    continue
                k = doc.get("kernel", {})
                if k.get("file") == str(site.file) and k.get("qualname") == site.qualname:
                    return True
        if folder == models.parent:
            break
    return False


def advice_text(advice: dict[str, Any] | None) -> str:
    """What became of the advice's check (`--live`): how many proposed shapes the board simulated, and why others
    were not."""
    if not advice or not (advice.get("proposed") or advice.get("stopped")):
        return ""
    text = f"; advice: {advice['simulated']} of {advice['proposed']} proposed shapes simulated"
    if advice.get("unchecked"):
        text += f", others not ({'; '.join(advice['unchecked'])})"
    if advice.get("stopped"):
        text += f", then {advice['stopped']}"
    return text


def longer_text(longer: dict[str, Any] | None, label: str = "longer check") -> str:
    """What the longer check the finding's quick fix asks for did (`--check-longer`): from the first job's basis (the
    kernel not lowered again), or `without_basis` as before session 60."""
    if not longer:
        return ""
    if longer.get("error"):
        return f"; {label} (up to {longer['bound']:g} s): {longer['error'][:200]}"
    peak = f", peak RSS {longer['peak_rss_mb']:,} MB" if longer.get("peak_rss_mb") else ""
    text = (f"; {label} (about {longer['estimate']:.0f} s expected, up to {longer['bound']:g} s): "
            f"{longer['simulated']} of {longer['proposed']} simulated in {longer['seconds']:.0f} s{peak}, record "
            f"{'reused' if longer.get('reused') else 'made again'}{', from its basis' if longer.get('basis') else ''}")
    if longer.get("unchecked"):
        text += f", others not ({'; '.join(longer['unchecked'])})"
    best = f", the best {longer['best']:.2f}x faster" if longer.get("best") else ""
    return text + f"; {longer['offered']} finding(s) offer a shape{best}"


def open_kernel(site: KernelSite, models: Path, tree: Path, timeout: float, memory_mb: int,
                live: bool = False, longer: bool = False) -> Opened:
    t0 = time.perf_counter()
    try:
        out = open_in_process(site.file, site.name, models, tree, timeout, memory_mb, warm=True,
                              lines=(site.first_line, site.line), qualname=site.qualname, live=live, longer=longer)
    except subprocess.TimeoutExpired:
        return Opened(site, "timeout", f"no answer within {timeout:g} s", time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    peak = f" (peak RSS {out['peak_rss_mb']:,} MB)" if out.get("peak_rss_mb") else ""
    if live and out.get("graph_seconds") is not None:  # a big kernel's tensor graph, shown while it lowers
        peak += f"; tensor graph sent at {out['graph_seconds']:.0f} s"
    if live and out.get("interim_seconds") is not None:
        peak += f"; record sent at {out['interim_seconds']:.0f} s"
    peak += advice_text(out.get("advice")) + longer_text(out.get("longer")) + \
        longer_text(out.get("without_basis"), "without its basis") if live else ""
    if "died" in out:
        return Opened(site, "error" if has_capture(site, models) else "no capture", out["died"], seconds)
    err = out.get("error")
    s = out.get("summary") or {}
    o = Opened(site, "opened", peak, seconds, int(s.get("tasks") or 0), int(s.get("tile_ops") or 0),
               int(out.get("graph_nodes") or 0), str(out.get("pypto", "")))
    if out.get("shadowed_by"):
        o.status = "error"
        o.detail = (f"the server knows a file's kernels by name: the {site.name} at line {out['shadowed_by']} is "
                    "opened in its place (server/analyze.py _kernels)")
    elif err is not None:
        o.status = "error"
        msg = str(err.get("message", "")).strip().splitlines()
        o.detail = f"line {err.get('line')}: {msg[0] if msg else ''}{peak}"
        if out.get("not_made"):
            o.detail += f" [not made again: {json.dumps(out['not_made'])[:200]}]"
        if out.get("list_error"):
            o.detail = f"module: {out['list_error'].get('message', '')} ({o.detail})"
    elif not (o.nodes and o.tasks):
        o.status = "error"
        o.detail = f"no graph ({o.nodes} nodes) or no swimlane ({o.tasks} tasks)"
    if o.status == "error" and not has_capture(site, models):
        o.status, o.detail = "no capture", o.detail
    return o


def runner_captures(sites: list[KernelSite], models: Path, tree: Path, a: argparse.Namespace) -> None:
    """For each of these kernels (no test captured them), what the no-inputs quick fix offers after the tests
    (`server.capture_runner`: a module-level function that needs no argument and reaches the kernel, through the
    file's tests too): the first such runner's command, captured in models/ (the workspace). A runner run once serves
    every kernel it calls."""
    from server.capture_runner import tests_calling

    done: set[tuple[str, str]] = set()
    for s in sites:
        if has_capture(s, models):
            continue  # (a runner run for another kernel called it)
        runners = [f for f in tests_calling(str(models), s.name, near=str(s.file)) if f.target.kind == "call"]
        if not runners or (runners[0].path, runners[0].target.name) in done:
            continue
        found = runners[0]
        done.add((found.path, found.target.name))
        command = [sys.executable if c == "python" else c for c in found.target.command(found.path, str(models))]
        r = run_capture(Path(found.path), tree, a.timeout, a.capture_memory_mb, command=command, cwd=models)
        print(f"  capture {Path(found.path).relative_to(models)}::{found.target.name}() (a runner of "
              f"{s.qualname}): {'TIMEOUT' if r.code is None else f'exit {r.code}'} in {r.seconds:.0f} s; "
              f"captured {len(r.captured)}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=1, help="test files captured at a time (default 1)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per test file's capture (default 900)")
    ap.add_argument("--open-timeout", type=float, default=300.0, help="seconds to open one kernel (default 300)")
    ap.add_argument("--memory-limit-mb", type=int, default=MEMORY_LIMIT_MB,
                    help=f"the worker's cap above its size (the server's default, {MEMORY_LIMIT_MB})")
    ap.add_argument("--capture-memory-mb", type=int, default=None, help="the capture's cap (default: capture's)")
    ap.add_argument("--mirror", type=Path, default=MIRROR, help=f"the hicann/pypto git mirror ({MIRROR})")
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--keep", type=Path, default=None,
                    help="export into DIR and keep it (reused, with its captures, when DIR/models exists)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose pypto and server run (this one)")
    ap.add_argument("--only", default=None, help="only files whose path (under models/) contains this")
    ap.add_argument("--no-capture", action="store_true", help="with --keep: open with the captures already there")
    ap.add_argument("--run-skipped", action="store_true",
                    help="capture with `--run-skipped`: the tests their own skip marks skip run too")
    ap.add_argument("--no-runners", action="store_true",
                    help="capture from the tests only, not then from a runner function of a kernel none called")
    ap.add_argument("--live", action="store_true",
                    help="open as the language server's live loop does (an interim record, then the advice checked)")
    ap.add_argument("--check-longer", action="store_true",
                    help="with --live: where the check left shapes unchecked, then the longer check its quick fix asks")
    a = ap.parse_args()

    models, scratch = models_folder(a.keep, a.mirror, a.commit)
    tree = a.tree.resolve()
    print(f"models_open — models/ of {a.mirror} at {a.commit} in {models}; pypto and server of {tree}; "
          f"-j {a.jobs}, capture timeout {a.timeout:g} s, open timeout {a.open_timeout:g} s", flush=True)
    try:
        before = fingerprint(models)
        files = [f for f in python_files(models) if a.only is None or a.only in str(f.relative_to(models))]
        sites = [s for f in files for s in kernel_sites(f)]
        tests = [f for f in python_files(models) if test_command(f) is not None]
        used = sorted({t for s in sites for t in tests_of(s, tests)})
        runs: dict[Path, TestRun] = {}
        by_runner: list[KernelSite] = []  # kernels no test called, captured from a runner function
        if not a.no_capture:
            def one(t: Path) -> TestRun:
                r = run_capture(t, tree, a.timeout, a.capture_memory_mb, a.run_skipped)
                status = "TIMEOUT" if r.code is None else r.runs
                lifted = f" ({r.unskipped} test(s) run with their skip marks lifted)" if r.unskipped else ""
                print(f"  capture {t.relative_to(models)}: {status} in {r.seconds:.0f} s; {r.summary}; "
                      f"captured {len(r.captured)}{lifted}", flush=True)
                return r
            with ThreadPoolExecutor(max(1, a.jobs)) as pool:
                for r in pool.map(one, used):
                    runs[r.file] = r
            if a.keep is not None:  # beside models/, never in it: a later --no-capture run reads the outcomes
                logs = models.parent / "capture_logs"
                logs.mkdir(exist_ok=True)
                for r in runs.values():
                    (logs / (str(r.file.relative_to(models)).replace("/", "__") + ".log")).write_text(r.log)
                (models.parent / RUNS_FILE).write_text(json.dumps({
                    str(r.file): {"code": r.code, "seconds": r.seconds, "summary": r.summary, "captured": r.captured,
                                  "unskipped": r.unskipped} for r in runs.values()}, indent=1))
            if not a.no_runners:  # then, as the no-inputs quick fix offers after the tests: a runner function
                uncaptured = [s for s in sites if not has_capture(s, models)]
                runner_captures(uncaptured, models, tree, a)
                by_runner = [s for s in uncaptured if has_capture(s, models)]
                if a.keep is not None:  # (a later --no-capture run counts them again)
                    (models.parent / RUNNERS_FILE).write_text(json.dumps([str(s.file) + "::" + s.qualname
                                                                          for s in by_runner]))
        else:
            kept = models.parent / RUNNERS_FILE
            named = set(json.loads(kept.read_text())) if kept.is_file() else set()
            by_runner = [s for s in sites if str(s.file) + "::" + s.qualname in named]
            saved = models.parent / RUNS_FILE
            old = json.loads(saved.read_text()) if saved.is_file() else {}
            runs = {t: TestRun(t, test_command(t) or [], old.get(str(t), {}).get("code", 0),
                               old.get(str(t), {}).get("seconds", 0.0), old.get(str(t), {}).get("summary", "(kept)"),
                               old.get(str(t), {}).get("captured", []),
                               unskipped=old.get(str(t), {}).get("unskipped", 0)) for t in used}
        results: list[Opened] = []
        for s in sites:
            o = open_kernel(s, models, tree, a.open_timeout, a.memory_limit_mb, a.live or a.check_longer,
                            a.check_longer)
            results.append(o)
            print(f"  open {s.file.relative_to(models)}::{s.qualname}: {o.status} in {o.seconds:.0f} s {o.detail}",
                  flush=True)
        after = fingerprint(models)
        edited = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))

        print(f"\npypto imported from: {sorted({o.pypto for o in results if o.pypto})}")
        print("\ntest files (one capture each):")
        for t in used:
            r = runs.get(t)
            if r is None:
                continue
            status = "timeout" if r.code is None else r.runs
            lifted = f" [{r.unskipped} unskipped]" if r.unskipped else ""
            print(f"  {str(t.relative_to(models)):<58} {status:<8} {r.seconds:6.0f} s  {r.summary[:110]}{lifted}")
        print(f"\n{'kernel':<84} {'nested':<6} {'test runs':<9} {'status':<10} {'nodes':>6} {'tile ops':>9} "
              f"{'tasks':>7} {'open s':>7}  detail")
        runs_cpu = opened = opened_runs = called = opened_called = 0
        rank = {"yes": 3, "partly": 2, "skipped": 1, "no": 0}
        for o in results:
            s = o.site
            how = max((runs[t].runs for t in tests_of(s, tests) if t in runs), key=rank.__getitem__, default="none")
            ok = how in ("yes", "partly")
            runs_cpu += ok
            opened += o.status == "opened"
            opened_runs += ok and o.status == "opened"
            called += o.status != "no capture"
            opened_called += o.status == "opened"
            print(f"{str(s.file.relative_to(models)) + '::' + s.qualname:<84} {'yes' if s.nested else '':<6} "
                  f"{how:<9} {o.status:<10} {o.nodes:>6} {o.tile_ops:>9,} {o.tasks:>7,} "
                  f"{o.seconds:7.1f}  {o.detail[:240]}")

        def pct(a: int, b: int) -> str:
            return f"{a} of {b} ({100 * a / b:.0f} %)" if b else "0 of 0"

        print(f"\nkernels: {len(results)} ({sum(s.nested for s in sites)} made inside functions)")
        print(f"called by their tests on this CPU (captured: the test ran up to the call), or by a runner function "
              f"the no-inputs quick fix offers ({len(by_runner)}: {', '.join(s.qualname for s in by_runner) or '-'}): "
              f"{called}; opened: {pct(opened_called, called)}")
        print(f"in test files with a passing test ('yes' / 'partly'; some never called by the tests that run): "
              f"{runs_cpu}; opened: {pct(opened_runs, runs_cpu)}")
        print(f"opened in all: {pct(opened, len(results))}")
        print("user's files edited: " + (", ".join(edited) if edited else "none"))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
