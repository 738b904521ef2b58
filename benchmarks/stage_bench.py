"""Inside one production kernel's compile (issue 28): where its lowering goes, the execute graph made two ways side
by side, and the record document — for the kernel as captured and, with `--edited`, as production_bench's first
tile-shape edit leaves it (Kimi's edit halves a tile: 246 k tile ops from 140 k; gated delta rule's, 200 k from 196 k).
Until session 44 the edit here was not production_bench's for gated delta rule: chosen without the record's
calls in force for a tile op (`_models.tile_call_lines`), it halved a dimension every tile is clipped to, and its
`(edited)` rows below are of the unedited tile graph (195,552 tile ops, the same tasks).

- **passes**: each lowering pass's seconds as the compile recorded them (since session 32, from 50 k tile ops
  `leaf_functions` holds the execute graph's build, made beside it, and `execute_graph` only its labelling);
- **execute graph**: `pypto.compiler.execute.build` of the compiled tile graph and subgraphs with graph partition's GM
  dependencies (`CopyFacts.depends`, what a compile does when partition filed the accesses in program order) and
  finding them itself (the same graph: checked), median of `--runs`, with Python's collector paused as in a compile;
- **tile expansion, stamped and in full**: `pypto.compiler.tile_expand.expand` of the compiled program's graph, with
  an innermost loop's later iterations stamped from an earlier one (`pypto.compiler.stamp`, since session 25) and with
  stamping off, side by side (median of `--runs` each, the collector paused as in a compile), and how many loop
  iterations were stamped (the two tile graphs are checked equal);
- **board, first run**: the sim board's first run on the compiled graph in the process (as a job's: its task
  columns made, then the compiled loop), once; **of it, stitching**: `pypto.boards.stitch.plan` under the kernel's
  own runtime options (which root functions each device task holds; with `max_workspace_kb`, the workspace
  estimate), median of `--runs` (since session 45);
- **document**: `CompileRecord.to_document()` of the profiled record (the record the IDE sends), median of `--runs`;
- **answer round trip**: the record's part of a job's answer (document, columns, the editor's run) pickled and
  unpickled with the collector paused, as a worker sends it and the server reads it, the editor's run then made from
  the columns (`server.analyze.with_editor_run`, since session 24); beside it, the same with the editor's run as
  arrays beside the columns (before session 24), and with the run as lists in the document and the editor (before
  session 21);
- **arrows**: the execute graph's dependencies;
- **fingerprint**: the traced program's fingerprint (`pypto.record.Traced.program_fingerprint`, what every job and
  advice candidate hashes to find a reusable answer), made anew each run.
- **bindings**: `pypto.frontend.jit.read_bindings` of the inputs the trace was made of (the elements of what the
  kernel reads as data: block tables, lengths), bound in bulk since session 29;
- **lanes used, columns / from LaneTasks**: the lanes the board's run used, as the bottleneck and health ask
  (`swimlane.lanes_ran`, from the lane column since session 29) against making the run's LaneTask objects, which
  they did before;
- **parse**: the language server's parse of the kernel file's version (`server.state.parse_kernels`, every didChange;
  statements only since session 29); **from the last version** (`--edited`): the edited version parsed from the
  unedited one's parse, as the server does since session 37 (`server.state.parse_version`: the edited kernel's lines
  only, when the edit is within one);
- **editor view, from the ops / from the document's columns / pickled**: `server.index.editor_view` of the profiled
  record made from the tile ops and from the record document's columns (a job's way since session 33), median of
  `--runs` each (checked equal), and the view's pickle in MB (since session 33 its tile columns in the narrowest int
  types);
- **leaves, then the execute graph / beside each other**: the leaf functions' and execute graph's passes on what
  graph partition made, one after the other and as a compile runs them from 50 k tile ops (the leaves merged in a
  forked child while the graph is built, since session 32; `tile_passes.BESIDE_FROM`), median of `--runs` each, the
  two programs checked equal.

Session 45 (2026-12-02 16:45 UTC, `--runs 3`, the board stitching as PyPTO documents, `pypto/boards/stitch.py`):
gated delta rule's board, first run 0.11 s (0.05 in session 44: one device task of 32 root functions now, all lanes
busy, against 136 one after another), of it the stitching plan 0.018 s (its `max_workspace_kb` budget: the workspace
estimate); Kimi's 0.11 / 0.005 s.

Session 44 (2026-12-02 10:54 UTC, `--edited --runs 2`, production_bench's edit at last: 200,160 tile ops, 76,272
tasks, 173,568 arrows): gated delta rule's passes 0.23 / 0.51 / 0.52 / 0.02 s, tile expansion stamped 0.23 against
0.35 in full (192 iterations stamped), board 0.05, record document 0.57, answer round trip 0.08, leaves then the
execute graph 0.61 against 0.58 beside, editor view 0.24 / 0.19 s.

Session 32 (2026-11-30 22:00 UTC, `--edited --runs 2`, the leaf functions merged in a forked child beside the
execute graph's build): gated delta rule's passes 0.24 / 0.81 / 0.69 / 0.02 s (expansion, partition, leaf functions
with the build, the labelling), its document 0.70 s; Kimi's 0.11 / 1.02 / 0.76 / 0.01 s, document 0.64 s (last
session: leaf functions then execute graph 0.34 + 0.56 and 0.56 + 0.67 s). The new last two columns, `--runs 3` (5 for
the second gated delta rule figure): gated delta rule 0.89 / 0.91 and 0.88 / 0.88 s, Kimi 0.99 / 0.73 s.

Session 29 (2026-11-30 13:45 UTC, `--edited --runs 3`, the new columns only): gated delta rule bindings 0.001 s, lanes
used from the columns 0.002 s against 0.15 s to make its 76 k LaneTasks (0.28 s inside a job, where the collector
and the child's copy-on-write add), parse 0.007 s; glm 0.001 / 0.000 / 0.01 / 0.023 s; compressor's 12.9 k bindings
0.012 s (0.05 s element by element, a scratch timing), parse 0.013 s.

Session 25 (2026-11-29 23:58 UTC, `--edited --runs 3`, this tree after stamping came in; tile expansion stamped and in
full are medians of 3 runs each in this one process; the pass figures are the compile's, once):

| kernel | tile ops | tasks | arrows | tile_expand s | graph_partition s | leaf_functions s | execute_graph s | tile expansion, stamped s | in full s | iterations stamped | partition's arrows taken | execute graph with them s | finding them s | board, first run s | record document s | answer round trip s | with the editor's run beside s | with the run as lists s | fingerprint s |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| gated_delta_rule (edited) | 195,552 | 76,016 | 172,032 | 1.06 | 2.98 | 0.55 | 0.93 | 0.83 | 1.89 | 192 | yes | 0.95 | 1.95 | 0.07 | 1.03 | 0.10 | 0.09 | 0.25 | 0.015 |
| block_attn_res (edited) | 246,336 | 49,216 | 8,421,376 | 0.37 | 3.38 | 0.95 | 0.93 | 0.56 | 1.48 | 62 | yes | 1.09 | 2.63 | 0.25 | 1.51 | 0.18 | 0.22 | 0.98 | 0.002 |

Session 24 (2026-11-29 20:55 UTC, `--edited --runs 3`, the machine slower than in the rows above; the edit is the
first tile-shape call of the kernel's body, which for gated delta rule is in force only for views and changes no
tile op — production_bench's edits now take a call its tile ops are cut by):

| kernel | tile ops | tasks | arrows | tile_expand s | graph_partition s | leaf_functions s | execute_graph s | partition's arrows taken | execute graph with them s | finding them s | board, first run s | record document s | answer round trip s | with the editor's run beside s | with the run as lists s | fingerprint s |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| gated_delta_rule (edited) | 195,552 | 76,016 | 172,032 | 1.52 | 2.66 | 0.66 | 0.91 | yes | 0.92 | 2.01 | 0.06 | 1.24 | 0.10 | 0.11 | 0.31 | 0.016 |
| block_attn_res (edited) | 246,336 | 49,216 | 8,421,376 | 0.92 | 2.23 | 0.55 | 1.04 | yes | 0.99 | 3.14 | 0.26 | 1.63 | 0.14 | 0.20 | 0.74 | 0.003 |

`--pool`: also a worker template's memory (`server.worker.WorkerPool`, one job run), from /proc/PID/smaps_rollup:
what one more template (the language server's spare, `server.slots`) costs.

Each stage here runs in this one process, over and over; a job runs it once, in a process freshly forked from a
warm template, beside its own forked children. The two need not agree: session 39's GM index change took gated delta
rule's partition from 0.56 to 0.49 s here, and from 0.60 to 0.49 s in the job (job_bench `--against`, which prints
each pass as the job ran it); check a stage's gain there.

The kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`). Run:
`.venv/bin/python benchmarks/stage_bench.py --keep DIR [--kernels gated_delta_rule,block_attn_res] [--edited]
[--runs 3] [--pool]`.

Measured 2026-11-29 09:47 UTC (this tree at the commit that added it, 2 cores; the edited row with `--edited`):

| kernel | tile ops | tasks | arrows | tile_expand s | graph_partition s | leaf_functions s | execute_graph s | partition's arrows taken | execute graph with them s | finding them s | record document s |
|---|---|---|---|---|---|---|---|---|---|---|---|
| gated_delta_rule | 195,552 | 76,016 | 172,032 | 0.86 | 1.48 | 0.38 | 0.64 | yes | 0.64 | 1.28 | 0.95 |
| block_attn_res | 139,840 | 41,024 | 4,227,072 | 0.25 | 0.86 | 0.34 | 0.49 | yes | 0.46 | 0.85 | 0.87 |
| block_attn_res (edited) | 246,336 | 49,216 | 8,421,376 | 0.43 | 1.55 | 0.43 | 0.66 | yes | 0.65 | 1.37 | 1.06 |

Again at 11:40 UTC, after session 21 (the run stored as columns in the document, a matmul's tiles sharing their
attribute values); the document's time is the one to compare, the passes did not change (the machine was busier:
the same tree's gated delta rule document measured 0.94-1.04 s against 1.06-1.12 s for b2502f2 in one sitting):

| kernel | tile ops | tasks | arrows | tile_expand s | graph_partition s | leaf_functions s | execute_graph s | partition's arrows taken | execute graph with them s | finding them s | record document s |
|---|---|---|---|---|---|---|---|---|---|---|---|
| gated_delta_rule | 195,552 | 76,016 | 172,032 | 0.89 | 1.51 | 0.37 | 0.67 | yes | 0.74 | 1.43 | 1.15 |
| block_attn_res | 139,840 | 41,024 | 4,227,072 | 0.27 | 0.92 | 0.25 | 0.51 | yes | 0.48 | 0.86 | 0.66 |
| block_attn_res (edited) | 246,336 | 49,216 | 8,421,376 | 0.46 | 1.61 | 0.36 | 0.71 | yes | 0.71 | 1.49 | 0.81 |

The answer's round trip (added in the review; `--kernels block_attn_res --edited`, 12:24 UTC, CI running beside on
the same 2 cores): Kimi edited 0.10 s as sent, 0.44 s with the run as lists (its record document 0.75 s).

`--pool`: a worker template: Rss 369 MB, Pss 171 MB, private 17 MB. The private part depends on when it is
read (its waiting child shares the pages it has not written yet): a scratch read the same day found 132 MB
private, Pss 229 MB.
"""  # noqa: E501

from __future__ import annotations

import dataclasses
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _models import kept_models_arguments, tile_call_lines  # noqa: E402
from _timing import median  # noqa: E402
from production_bench import KERNELS, edit_variants  # noqa: E402

from server import analyze  # noqa: E402
from server.state import parse_kernels, parse_version  # noqa: E402

STAGES = ("tile_expand", "graph_partition", "leaf_functions", "execute_graph")


def row(key: str, models: Path, runs: int, edited: bool) -> str:
    from pypto.boards import stitch
    from pypto.boards.swimlane import TaskColumns, lanes_ran
    from pypto.compiler import tile_ir
    from pypto.compiler.execute import build
    from pypto.compiler.partition import merge_leaves, partition
    from pypto.compiler.pipeline import gc_paused, keep_frozen
    from pypto.frontend.inputs import example_arguments
    from pypto.frontend.jit import read_bindings
    from pypto.record import profile, trace_for
    from pypto.target import load as load_board

    k = next(x for x in KERNELS if x.key == key)
    path = models / k.file
    text = path.read_text()
    if edited:  # production_bench's first edit: the calls in force for a tile op first (`tile_call_lines`)
        unedited = analyze._kernel(analyze._load(str(path), text), str(path), k.shown)
        doc, _ = trace_for(unedited, example_arguments(unedited, values=False)).lowered().to_document()
        used, tiling = tile_call_lines(doc, str(path))
        line, new = edit_variants(text, k.name, 1, used, tiling)[0]
        lines = text.split("\n")
        lines[line] = new
        text = "\n".join(lines)
    kernel = analyze._kernel(analyze._load(str(path), text), str(path), k.shown)
    traced = trace_for(kernel, example_arguments(kernel, values=False))
    # the traced program's fingerprint (what every job and advice candidate hashes), made anew each run
    fingerprint = median(lambda: type(traced).program_fingerprint.func(traced), runs)  # type: ignore[attr-defined]
    record = traced.lowered()
    bindings = median(lambda: read_bindings(record.graph, traced.made), runs)
    parse = median(lambda: parse_kernels(text, str(path), {}), runs)
    last, _ = parse_version(path.read_text(), str(path), {})  # the version before the edit, as the server keeps it
    reparse = median(lambda: parse_version(text, str(path), {}, last), runs) if edited else None
    seconds = {p.name: p.seconds for p in record.passes}
    p = record.program
    expanded = next(x.snapshot for x in record.passes if x.name == "tile_expand")
    assert p.tiles is not None and p.execute is not None and expanded is not None and expanded.tiles is not None
    with gc_paused():  # partition again (the compile dropped its arrows), then the execute graph both ways
        ub = int(load_board("a2a3")["buffers_bytes"]["UB"])  # as the compile's partition
        tiles, subgraphs = partition(expanded.tiles, expanded.graph.by_id(), ub, [])
        after_partition = dataclasses.replace(p, tiles=tiles, subgraphs=subgraphs, leaves=None, execute=None)
        serial, beside = leaves_and_execute_seconds(after_partition, runs)
        subgraphs, _ = merge_leaves(tiles, subgraphs)
        facts = tile_ir.copy_facts(tiles)
        assert facts is not None
        taken = median(lambda: build(tiles, subgraphs), runs)
        same = build(tiles, subgraphs)
        assert same == p.execute, "not the compile's execute graph"
        tile_ir.note_copy_facts(tiles, dataclasses.replace(facts, depends=None))
        found = median(lambda: build(tiles, subgraphs), runs)
        assert same == build(tiles, subgraphs), "the two ways differ"
    stamped, in_full, iterations = expansion_seconds(expanded.graph, dict(p.bindings or ()), runs)
    t0 = time.perf_counter()
    profiled = profile(record, "sim", {}, None)  # the graph's first run in this process, as a job's
    board = time.perf_counter() - t0
    runtime = record.source.options.get("runtime_options", {}) if isinstance(record.source.options, dict) else {}
    stitching = median(lambda: stitch.plan(p, dict(runtime)), runs)
    run = profiled.run
    assert run is not None and isinstance(run.tasks, TaskColumns)
    lanes = median(lambda: lanes_ran(run), runs)
    objects = median(lambda: _made_anew(run.tasks), runs)
    gc.freeze()  # as a job does once its record is made (and its template said so: `keep_frozen`)
    keep_frozen()
    document = median(profiled.to_document, runs)
    from_ops, from_columns, editor_mb = editor_seconds(profiled, str(path), runs)
    sent, arrays_in, lists_in = answer_seconds(profiled, runs)
    arrows = sum(len(t.preds) for t in p.execute.tasks)
    passes = " | ".join(f"{seconds.get(s, 0.0):.2f}" for s in STAGES)
    offered = "yes" if facts.depends is not None else "no"
    return (f"| {key}{' (edited)' if edited else ''} | {len(p.tiles.ops):,} | {len(p.execute.tasks):,} | {arrows:,} | "
            f"{passes} | {stamped:.2f} | {in_full:.2f} | {iterations:,} | {offered} | {taken:.2f} | {found:.2f} | "
            f"{board:.2f} | {stitching:.3f} | {document:.2f} | {sent:.2f} | "
            f"{arrays_in:.2f} | {lists_in:.2f} | {fingerprint:.3f} | {bindings:.3f} | {lanes:.3f} | {objects:.2f} | "
            f"{parse:.3f} | {'-' if reparse is None else f'{reparse:.3f}'} | "
            f"{serial:.2f} | {beside:.2f} | {from_ops:.2f} | {from_columns:.2f} | {editor_mb:.1f} |")


def leaves_and_execute_seconds(after_partition: Any, runs: int) -> tuple[float, float]:
    """The leaf functions' and the execute graph's passes on the program graph partition made, one after the other
    in this process (`tile_passes.BESIDE_FROM` out of reach) and as a compile runs them at this size (from 50 k tile
    ops: the leaves merged in a forked child beside the execute graph's build), median of `runs` each; the two
    programs must be equal."""
    from pypto.compiler import tile_passes
    from pypto.compiler.execute import execute_graph
    from pypto.compiler.manager import PassContext
    from pypto.target import load as load_board

    ctx = PassContext({}, load_board("a2a3"))
    made = {}
    seconds = {}
    at = tile_passes.BESIDE_FROM
    try:
        for way, threshold in (("serial", 10**12), ("beside", at)):
            tile_passes.BESIDE_FROM = threshold
            seconds[way] = median(lambda: execute_graph(tile_passes.leaf_functions(after_partition, ctx), ctx), runs)
            made[way] = execute_graph(tile_passes.leaf_functions(after_partition, ctx), ctx)
    finally:
        tile_passes.BESIDE_FROM = at
    assert made["serial"].execute == made["beside"].execute and made["serial"].leaves == made["beside"].leaves
    return seconds["serial"], seconds["beside"]


def editor_seconds(profiled: Any, path: str, runs: int) -> tuple[float, float, float]:
    """The editor view (`server.index.editor_view`) made from the tile ops and from the record document's columns
    (as a job makes it since session 33), median of `runs` each, and its pickle's size in MB (it crosses two pipes
    in a job's answer); the two views must be equal."""
    import json
    import pickle

    from server.index import editor_view

    def plain(x: Any) -> Any:  # the view's numpy columns and Ragged lists as JSON
        return x.tolist() if hasattr(x, "tolist") else [x.flat.tolist(), x.start.tolist()]

    made = profiled.to_document()
    seconds = [median(lambda d=d: editor_view(profiled, path, {}, d), runs) for d in (None, made)]
    a, b = editor_view(profiled, path, {}), editor_view(profiled, path, {}, made)
    assert json.dumps(a, default=plain) == json.dumps(b, default=plain), "the two editor views differ"
    return seconds[0], seconds[1], len(pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL)) / 1e6


def _made_anew(tasks: Any) -> None:
    """A run's LaneTask objects made from its columns, as the first reader of objects makes them (the cache emptied)."""
    tasks._tuple = None  # noqa: SLF001 - the columns' cache of their objects
    tasks.as_tuple()


def expansion_seconds(graph: Any, bindings: dict[str, int], runs: int) -> tuple[float, float, int]:
    """Tile expansion of `graph` (the program's, its vec tiles refitted already) with stamping on and off, median of
    `runs` each, and how many iterations the stamped one stamped; the two tile graphs must be equal."""
    from pypto.compiler import stamp
    from pypto.compiler.pipeline import gc_paused
    from pypto.compiler.tile_expand import expand

    made = {}
    seconds = {}
    try:
        for enabled in (True, False):
            stamp.ENABLED = enabled
            with gc_paused():
                seconds[enabled] = median(lambda: expand(graph, bindings), runs)
                before = stamp.stamped()
                made[enabled] = expand(graph, bindings)[0]
            if enabled:
                iterations = stamp.stamped() - before
    finally:
        stamp.ENABLED = True
    assert made[True] == made[False], "stamping changed the tile graph"
    return seconds[True], seconds[False], iterations


def answer_seconds(profiled: Any, runs: int) -> tuple[float, float, float]:
    """The record's part of a job's answer — its document, columns and the editor's run — pickled and unpickled
    as the server reads it (the collector paused), median of `runs`: as sent (the editor's run left in the record,
    `swimlane_in_record`: the server makes it from the columns, `server.analyze.with_editor_run`, counted here),
    with the editor's run as arrays beside the columns (how it was sent before session 24, `editor_run`), and with
    the run as lists in both (before session 21)."""
    import pickle

    doc, npz = analyze._document(profiled, {})
    run = analyze.editor_run(profiled.run)
    lists = profiled.run.to_json()
    forms = ({"record": doc, "record_columns": npz, "editor": {"swimlane_in_record": True}},
             {"record": doc, "record_columns": npz, "editor": {"swimlane": run}},
             {"record": {**doc, "run": lists}, "record_columns": npz, "editor": {"swimlane": lists}})
    out = []
    for answer in forms:
        def trip(answer: Any = answer) -> None:
            analyze.with_editor_run(pickle.loads(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)))
        was = gc.isenabled()
        gc.disable()
        try:
            out.append(median(trip, runs))
        finally:
            if was:
                gc.enable()
    return out[0], out[1], out[2]


def pool_memory() -> str:
    from server.worker import WorkerPool

    pool = WorkerPool(size=1, time_limit=60)
    try:
        pool.run_blocking("list_kernels", "/__pypto_stage_bench__.py", "")
        pid = pool._idle[0].process.pid
        fields = {}
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
                fields[name] = int(rest.split()[0]) / 1024
    finally:
        pool.close()
    private = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return (f"a worker template: Rss {fields.get('Rss', 0):.0f} MB, Pss {fields.get('Pss', 0):.0f} MB, "
            f"private {private:.0f} MB")


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "gated_delta_rule,block_attn_res", 3, ("--edited", "--pool"))
    analyze.warm_up()
    print(f"stage_bench — median of {a.runs}\n")
    print("| kernel | tile ops | tasks | arrows | " + " | ".join(f"{s} s" for s in STAGES)
          + " | tile expansion, stamped s | in full s | iterations stamped"
          + " | partition's arrows taken | execute graph with them s | finding them s | board, first run s"
          + " | of it, stitching s"
          + " | record document s | answer round trip s | with the editor's run beside s | with the run as lists s"
          + " | fingerprint s | bindings s | lanes used, columns s | from LaneTasks s | parse s"
          + " | from the last version s"
          + " | leaves, then the execute graph s | beside each other s"
          + " | editor view, from the ops s | from the document's columns s | editor view pickled MB |")
    print("|---|---|---|---|" + "---|" * len(STAGES) + "---|" * 23)
    for key in a.kernels.split(","):
        print(row(key, a.models, a.runs, a.edited), flush=True)
    if a.pool:
        print("\n" + pool_memory())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
