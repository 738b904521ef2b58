"""`pypto-ide`: the command line — `examples` (the README's main job) and `compile`.

`pypto-ide examples [DIR]` imports every example in DIR (default: the repository's
`examples/`), runs its `check()` (compile, run on the CPU, compare with torch) and prints,
per example, the kernels it compiled (graph size, loops, tile shapes) and every comparison.
An example that raises is reported with its error and the run goes on; the exit code is
non-zero if anything failed.

`pypto-ide compile FILE[::KERNEL]` compiles the file's kernels without running them (the
arguments come from `pypto.inputs`: annotations or a `pypto-inputs:` docstring block) and
prints every pass (or the CompileRecord as JSON: `--json`, the columns of a big kernel's
record left out; `--record DIR` writes it whole, record.json and record.columns.npz),
optionally dumping each pass's file and exporting the final graph. A mistake — in the
command, the file or the kernel — prints one `file:line: error: …` message and exits 1, never a traceback.

`pypto-ide profile FILE[::KERNEL] --board sim|cpu [--trace OUT]` compiles the kernels and runs
them on a board — the simulated A2/A3 chip (times simulated) or this machine's cores (times
measured) — and prints the makespan, utilization, what bounds the run and the slowest tasks
with their source lines; `--trace` writes the swimlane as a Chrome trace (opens in
Perfetto), PyPTO's `merged_swimlane.json`, our swimlane JSON or a compact text trace.

`pypto-ide open TRACE [--top N] [--json] [--trace OUT --format …]` reads a real run's trace
(`pypto.boards.importers.load_any`: PyPTO's merged_swimlane.json, tilefwk_L1_prof_data.json with
dyn_topo.txt, chip_swimlane_records.json with deps.json, a Chrome trace, our swimlane JSON, or a
folder holding one) and prints the same summary as `profile`, plus what the import could not
place. `profile TRACE` does the same; `report TRACE` points to `open`.

`pypto-ide report FILE[::KERNEL] [--format text|json|md|html|junit|sarif] [--precision]
[--suggest] [--fail-on COND]` is the health report (pypto.analysis) for people and for CI.

`pypto-ide capture [--store DIR] [--all] [--timeout S] -- COMMAND…` runs the user's own test or
script with every kernel call's arguments recorded (`pypto.frontend.capture`); the commands above
then compile a kernel for its captured inputs, and find a kernel made inside a function by its
name (docs/capture.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

try:
    import resource  # Unix: the captured command's memory cap
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

from pypto.analysis import check
from pypto.analysis.advisor import SEARCH_SECONDS
from pypto.analysis.executors import open_executor, parse_executor, report_all
from pypto.analysis.report import (
    KernelReport,
    check_fail_on,
    failures,
    make_report,
    render,
    text_findings,
    text_suggestions,
)
from pypto.boards import passes_dump
from pypto.boards.dfx import records_in
from pypto.boards.importers import load_any
from pypto.boards.profile import bottleneck
from pypto.boards.swimlane import PLACEHOLDER, LaneTask, Swimlane, metrics
from pypto.boards.trace import text_trace, write_trace
from pypto.compiler.block_ir import PEAK_LABEL, buffer_peak
from pypto.compiler.instruments import write_pass_file
from pypto.compiler.manager import STAGES, PassRecord
from pypto.compiler.tensor_passes import RUN_MODE_NPU_RULE
from pypto.frontend import capture
from pypto.frontend.inputs import def_loc, example_arguments
from pypto.frontend.jit import JitKernel, to_numpy
from pypto.ir.columns import inline as inline_columns
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph
from pypto.npu import prepare_for_user_code
from pypto.record import (
    COLUMNS_FILE,
    RECORD_FILE,
    CompileRecord,
    InputInfo,
    captured_text,
    compile_for,
    compile_record,
    profile,
    slowest,
)
from pypto.testing import Check
from pypto.userfiles import enter_folder

REPO = Path(__file__).resolve().parent.parent


def load_module(path: Path, prefix: str = "pypto_example_") -> ModuleType:
    """Import a user file by path (registered in sys.modules, as dataclasses and pickle need); its
    folder goes first on sys.path, so it imports its own sibling modules (pypto.userfiles); a program
    written for the NPU imports as it is (the NPU stand-in, pypto.npu)."""
    prepare_for_user_code()
    enter_folder(str(path.resolve().parent))
    name = f"{prefix}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _graph_summary(g: Graph) -> str:
    nodes = list(g.walk())
    loops = sum(1 for n in nodes if n.op == "loop")
    ops = sum(1 for n in nodes if n.op not in ("param", "carry", "loop_out", "assume", "loop"))
    tiles = ", ".join(f"{t.kind}{list(t.dims) if t.kind == 'vec' else [list(d) for d in t.dims[:3]]}"
                      for t in g.tile_configs)
    return f"{ops} ops, {loops} loop{'s' if loops != 1 else ''}, tiles: {tiles or 'none'}"


def run_examples(directory: Path) -> int:
    files = sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))
    if not files:
        print(f"no examples in {directory}")
        return 1
    failed = 0
    total_checks = 0
    for path in files:
        print(f"\n== {path.relative_to(directory.parent) if directory.parent in path.parents else path}")
        t0 = time.perf_counter()
        try:
            mod = load_module(path)
            doc = (mod.__doc__ or "").strip().splitlines()
            if doc:
                print(f"   {doc[0]}")
            checks: list[Check] = list(mod.check())
        except PyptoError as e:
            print(f"   ERROR {e}")
            failed += 1
            continue
        except Exception:  # noqa: BLE001 - report and go on with the other examples
            print("   ERROR (not a PyptoError: a bug in pypto or the example)")
            print("   " + traceback.format_exc().replace("\n", "\n   "))
            failed += 1
            continue
        dt = time.perf_counter() - t0
        for name in sorted(vars(mod)):
            k = getattr(mod, name)
            if isinstance(k, JitKernel):
                for ck in k.cache.values():
                    print(f"   kernel {ck.name}: {_graph_summary(ck.graph)}  (compiled {k.compile_count}x)")
        for c in checks:
            print(f"   {c}")
        bad = sum(1 for c in checks if not c.ok)
        total_checks += len(checks)
        failed += bad
        print(f"   {len(checks) - bad}/{len(checks)} match torch  [{dt * 1000:.0f} ms, values computed on this CPU]")
    print(f"\n{total_checks - failed} passed, {failed} failed  ({len(files)} examples)")
    return 1 if failed else 0


# ---- compile ------------------------------------------------------------------------------------

EXPORTS = ("graphml", "dot", "model-explorer", "program")


class CliError(Exception):
    """A mistake the command reports as one `file:line: error: message` and exit 1."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: error: {message}")


def _where(e: PyptoError, fallback: str) -> str:
    """The error's `file:line`; a location in this command's own script (a call-site error found
    while compiling from here, with no user frame above) is no location."""
    span = e.loc.span
    if span is None or Path(span.file).resolve() == Path(sys.argv[0]).resolve():
        return fallback
    return f"{span.file}:{span.line}"


def _def_where(k: JitKernel) -> str:
    span = def_loc(k.fn).span
    return f"{span.file}:{span.line}" if span else "<unknown>"


def _load_user_file(path: Path) -> ModuleType:
    """Import the user's file; any exception becomes a CliError at the file's line that raised it."""
    try:
        return load_module(path, prefix="pypto_user_")
    except PyptoError as e:
        raise CliError(_where(e, f"{path}:1"), e.message) from None
    except SyntaxError as e:
        raise CliError(f"{e.filename or path}:{e.lineno or 1}", f"SyntaxError: {e.msg}") from None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's module raised while importing
        tb = traceback.extract_tb(e.__traceback__)
        frames = [f for f in tb if Path(f.filename) == path]
        line = frames[-1].lineno if frames else 1
        # raised outside the user's own lines (a library it imports): say where, or nobody can tell
        outside = bool(tb) and not (frames and tb[-1] is frames[-1])
        inner = f" (raised in {tb[-1].filename}:{tb[-1].lineno})" if outside else ""
        raise CliError(f"{path}:{line}", f"{type(e).__name__} while importing: {e}{inner}") from None


TRACE_SUFFIXES = (".json", ".txt")


def is_trace(target: str) -> bool:
    """Whether `target` names a trace file (or a folder of run outputs) rather than a kernel file."""
    path = Path(target)
    if path.is_dir():
        return any((path / n).is_file() for n in ("merged_swimlane.json", "tilefwk_L1_prof_data.json")) or \
            records_in(path) is not None
    return path.suffix.lower() in TRACE_SUFFIXES and path.is_file()


def find_kernels(target: str) -> tuple[Path, list[JitKernel]]:
    """The kernels of `FILE[::KERNEL]`: all those defined in FILE, or the one named KERNEL."""
    file, _, name = target.partition("::")
    path = Path(file).resolve()
    if not path.is_file():
        raise CliError(file, "no such file")
    if path.suffix != ".py":
        hint = f"; a trace opens with `pypto-ide open {file}`" if is_trace(file) else ""
        raise CliError(file, f"not a Python file{hint}")
    mod = _load_user_file(path)
    kernels: list[JitKernel] = []
    named: dict[str, JitKernel] = {}
    for attr, value in vars(mod).items():
        if isinstance(value, JitKernel) and Path(value.fn.__code__.co_filename) == path:
            if value not in kernels:
                kernels.append(value)
            named[attr] = named.get(attr, value)
            named.setdefault(value.name, value)
    nested, not_made = capture.nested_kernels(str(path), vars(mod))  # made inside functions, and captured
    for k in nested:
        kernels.append(k)
        for alias in (k.fn.__qualname__, k.fn.__qualname__.replace(".<locals>.", "."), k.name, k.__name__):
            named.setdefault(alias, k)
    for qualname, why in not_made.items():
        print(f"{path}: note: the captured kernel {qualname} cannot be made again: {why}", file=sys.stderr)
    # a `@…jit` indented under a function: a kernel made inside one, found once it is captured
    hint = ("; a kernel made inside a function is found once captured: `pypto-ide capture -- COMMAND` "
            "(docs/capture.md)") if re.search(r"^[ \t]+@.*\bjit\b", path.read_text(errors="replace"), re.M) else ""
    if not kernels:
        raise CliError(f"{path}:1", f"no @pypto.jit kernels in this file{hint}")
    if name:
        why = capture.ambiguous_name(name, nested) if name not in vars(mod) else None
        if why is not None:
            raise CliError(f"{path}:1", why)
        if name not in named:
            listed = ", ".join(k.fn.__qualname__ if k in nested else k.name for k in kernels)
            raise CliError(f"{path}:1", f"no kernel named {name!r} (kernels: {listed})"
                                        f"{hint}")
        return path, [named[name]]
    return path, kernels


def inputs_line(record: CompileRecord) -> str | None:
    """`  inputs: captured from `COMMAND` at TIME (FILE)` when a capture gave the record's inputs."""
    text = captured_text(record.source)
    return None if text is None else f"  inputs: {text}"


def _shape_text(i: InputInfo) -> str:
    if i.dtype is None:
        return f"{i.name}={i.value}"
    return f"{i.name}: {i.dtype}[{', '.join(str(d) for d in i.shape or ())}]"


def pass_table(record: CompileRecord) -> str:
    rows = [f"  {'#':>3}  {'stage':<7} {'pass':<16} {'changed':<7} {'nodes':>7} {'ms':>9} {'diags':>5}"]
    for p in record.passes:
        rows.append(f"  {p.index:>3}  {p.stage:<7} {p.name:<16} {'yes' if p.changed else '–':<7} "
                    f"{p.node_count:>7} {p.seconds * 1000:>9.2f} {len(p.diagnostics):>5}"
                    + (f"  ERROR {p.error}" if p.error else ""))
    return "\n".join(rows)


def _failed_passes(k: JitKernel, e: BaseException) -> list[PassRecord]:
    """The passes a failed compile ran: those attached to the error, after the tensor stage's
    when the failure came later (in lowering)."""
    records: list[PassRecord] = list(getattr(e, "records", []))
    ck = next(iter(k.cache.values()), None)
    if ck is not None and records and records[0].stage != "tensor":
        records = list(ck.passes) + records
    return records


def _export(record: CompileRecord, fmt: str, directory: Path) -> list[Path]:
    from pypto import export  # networkx and pydot: only an export pays their start-up time

    directory.mkdir(parents=True, exist_ok=True)
    name = record.source.kernel
    lowered = record.program.tiles is not None
    if fmt == "graphml":
        return [export.write_graphml(record.graph, directory / f"{name}.graphml")] + (
            [export.write_tile_graphml(record.program, directory / f"{name}.tiles.graphml")] if lowered else [])
    if fmt == "dot":
        return [export.write_dot(record.graph, directory / f"{name}.dot")] + (
            [export.write_tile_dot(record.program, directory / f"{name}.tiles.dot")] if lowered else [])
    if fmt == "model-explorer":
        graph_path = directory / f"{name}.model_explorer.json"
        graph_path.write_text(json.dumps(export.to_model_explorer(record.graph), indent=1))
        # overlay: how late in the pipeline each node was made (0: by the frontend)
        order = {p.name: p.index + 1 for p in record.passes}
        made = {n.id: order.get(n.made_by or "", 0) for n in record.graph.walk()}
        data_path = directory / f"{name}.node_data.json"
        data_path.write_text(json.dumps(export.node_data(record.graph.name, made), indent=1))
        if not lowered:
            return [graph_path, data_path]
        # overlay: how many tasks run each tensor node's tiles
        tasks_path = directory / f"{name}.tasks_node_data.json"
        tasks_path.write_text(json.dumps(export.node_data(record.graph.name, export.tasks_per_node(record.program)),
                                         indent=1))
        return [graph_path, data_path, tasks_path]
    out = directory / name
    out.mkdir(parents=True, exist_ok=True)
    program = out / "program.json"
    program.write_text(json.dumps(export.to_program_json(record.graph), indent=1))
    return [program, *export.write_pass_dumps(record, out)]


def lowering_summary(record: CompileRecord) -> str:
    """One line to compare tile shapes by: what the lowering made of the kernel."""
    p = record.program
    assert p.tiles is not None and p.subgraphs is not None and p.leaves is not None and p.execute is not None
    cores = {c: sum(1 for t in p.execute.tasks if t.core == c) for c in ("AIV", "AIC", "MIX")}
    mix = f", MIX {cores['MIX']}" if cores["MIX"] else ""  # PyPTO 3 scopes with cube and vector work
    blocks = p.blocks or ()
    ub = buffer_peak(blocks, "UB")
    return (f"    tile ops {len(p.tiles.ops)} · tasks {len(p.execute.tasks)} "
            f"(AIV {cores['AIV']}, AIC {cores['AIC']}{mix}) · "
            f"leaves {len(p.leaves)} · widest level {p.execute.width()} tasks · UB peak {ub:,} B ({PEAK_LABEL}) · "
            f"double-buffered leaves {sum(b.double_buffered for b in blocks)}/{len(blocks)} · "
            f"spills {sum(b.spills for b in blocks)}")


JSON_COLUMN_BYTES = 4 << 20  # `compile --json` prints the columns inline up to this size; past it, see --record


def _json_doc(record: CompileRecord, target: str) -> dict[str, Any]:
    """What `compile --json` prints of a record: the document with its columns inline, or, for a big kernel,
    without them and a note on stderr saying how to get them (`--record DIR`)."""
    doc, arrays = record.to_document()
    size = sum(a.nbytes for a in arrays.values())
    if size <= JSON_COLUMN_BYTES:
        doc["columns"]["inline"] = inline_columns(arrays)
        return doc
    doc["columns"]["omitted"] = f"{size:,} bytes of columns: pypto-ide compile {target} --record DIR writes them"
    print(f"note: {record.source.kernel}'s record has {len(arrays)} columns of {size / 2**20:.1f} MiB in all, not "
          f"printed with --json (its lists of tile ops, tasks, instructions); the full record: "
          f"`pypto-ide compile {target} --record DIR` (DIR/{RECORD_FILE} and DIR/{COLUMNS_FILE}, "
          "read by pypto.record.CompileRecord.read)", file=sys.stderr)
    return doc


def run_compile(target: str, stage: str | None = None, dump: Path | None = None, as_json: bool = False,
                export: tuple[str, Path] | None = None, show_listing: bool = False,
                record_dir: Path | None = None) -> int:
    try:
        if export is not None and export[0] not in EXPORTS:
            raise CliError("--export", f"unknown format {export[0]!r}; one of {', '.join(EXPORTS)}")
        _, kernels = find_kernels(target)
    except CliError as e:
        print(e, file=sys.stderr)
        return 1
    records: list[CompileRecord] = []
    failed = 0
    written: list[Path] = []
    for k in kernels:
        record: CompileRecord | None = None
        passes: list[PassRecord] = []  # of a failed compile
        try:
            record = compile_record(k, None, stage)  # example inputs without values: a compile reads shapes
        except PyptoError as e:
            print(f"{_where(e, _def_where(k))}: error: {e.message}", file=sys.stderr)
            passes, failed = _failed_passes(k, e), failed + 1
        except Exception as e:  # noqa: BLE001 - a compiler bug: one line, not a traceback
            print(f"{_def_where(k)}: error: internal compiler error compiling {k.name}: {e}", file=sys.stderr)
            passes, failed = _failed_passes(k, e), failed + 1
        if record is not None:
            records.append(record)
            if not as_json:
                print(f"{record.source.kernel}  {_def_where(k)}  ({', '.join(_shape_text(i) for i in record.inputs)})")
                if inputs_line(record):
                    print(inputs_line(record))
                print(pass_table(record))
                for note in (d.message for p in record.passes for d in p.diagnostics if d.rule == RUN_MODE_NPU_RULE):
                    print(f"    note: {note}")
                if record.program.execute is not None:
                    print(lowering_summary(record))
                if show_listing and record.program.blocks is not None:
                    for text in record.listings():
                        print()
                        print(text)
                elif show_listing:
                    print("(no listing: the compile stopped before the block stage)")
            if export is not None:
                written += _export(record, export[0], export[1])
            if record_dir is not None:
                written += record.write(record_dir if len(kernels) == 1 else record_dir / k.name)
        if dump is not None:
            folder = dump / k.name
            written += [write_pass_file(folder, p, k.name) for p in (record.passes if record else passes)]
            if record is not None:
                written += record.write(folder)
                for leaf, text in enumerate(record.listings() if record.program.blocks is not None else ()):
                    path = folder / f"leaf_{leaf:03d}.pto"
                    path.write_text(text + "\n")
                    written.append(path)
    if as_json:
        docs = [_json_doc(r, target) for r in records]
        print(json.dumps(docs[0] if len(kernels) == 1 and docs else docs, indent=1))
    elif written:
        print(f"wrote {len(written)} files")
    return 1 if failed else 0


# ---- profile ------------------------------------------------------------------------------------

TRACE_FORMATS = ("chrome", "merged", "swimlane", "text")


def swimlane_summary(sl: Swimlane, rows: list[tuple[LaneTask, str]]) -> str:
    """What a tuner reads first: makespan, utilization (and which lanes it counts), waits, the
    bound, the slowest tasks (`rows`: task and its source lines), and what an import dropped."""
    m = metrics(sl)
    bound, why = bottleneck(sl)
    cores = ", ".join(f"{c} {u:.0%}" for c, u in m.core_utilization.items())
    fake = [i for i, ln in enumerate(sl.lanes) if ln.core == PLACEHOLDER]
    lines = [f"  board {sl.board} · {sl.clock}",
             f"  makespan {m.makespan:,.2f} µs · {len(sl.tasks) - m.placeholder_tasks} tasks on {m.active_lanes} of "
             f"{len(sl.lanes)} lanes · utilization {m.utilization:.0%} ({cores})",
             f"  utilization {m.utilization_basis}",
             f"  idle: waiting for dependencies {m.wait_dependency:,.1f} µs, for the scheduler "
             f"{m.wait_scheduler:,.1f} µs (summed over lanes) · critical path {m.critical_path_us:,.2f} µs "
             f"({m.critical_share:.0%} of the makespan, {len(m.critical_path)} tasks)"]
    if fake:
        on_path = sum(1 for t in m.critical_path if sl.tasks[t].lane in fake) if m.critical_path else 0
        lines.append(f"  placeholder lane{'s' if len(fake) > 1 else ''} "
                     f"{', '.join(sl.lanes[i].name for i in fake)}: {m.placeholder_tasks} tasks the trace has no "
                     f"times for (on the critical path at 0 µs: {on_path} of them; in no other figure)")
    lines += [f"  bound: {bound} — {why}", "  slowest tasks:"]
    for t, where in rows:
        tile = f"tile {list(t.coord)}" if t.coord else ""
        name = f"task {t.name}" if sl.board == "imported" and t.name else t.name
        lines.append(f"    #{t.id:<6} {sl.lanes[t.lane].name:<7} leaf {t.leaf:<3} {t.duration:9.3f} µs  "
                     f"{' '.join(x for x in (tile, name) if x)}  {where}".rstrip())
    notes = sl.info.get("notes")
    if isinstance(notes, list) and notes:  # what a reader found beside the tasks (pypto.boards.dfx)
        lines.append("  from the run's files:")
        lines += [f"    {n}" for n in notes]
    dropped = sl.dropped
    if dropped:
        lines.append(f"  not imported ({len(dropped)}):")
        lines += [f"    {d}" for d in dropped]
    if sl.ignored:
        lines.append(f"  not followed ({len(sl.ignored)}):")
        lines += [f"    {d}" for d in sl.ignored]
    return "\n".join(lines)


def profile_summary(record: CompileRecord, top: int = 5) -> str:
    """What a tuner reads first: makespan, utilization, waits, the bound, the slowest tasks."""
    sl = record.run
    assert sl is not None
    return swimlane_summary(sl, slowest(record, sl, top))


def trace_summary(sl: Swimlane, top: int = 5) -> str:
    """`profile_summary` for a trace: the slowest tasks by the file's ids (placeholders left out)."""
    fake = {i for i, ln in enumerate(sl.lanes) if ln.core == PLACEHOLDER}
    rows = [(t, w) for t, w in slowest(None, sl, len(sl.tasks)) if t.lane not in fake][:top]
    return swimlane_summary(sl, rows)


def _trace_path(path: Path, kernel: str, several: bool) -> Path:
    return path.with_name(f"{path.stem}.{kernel}{path.suffix}") if several else path


def _write_swimlane(sl: Swimlane, out: Path, fmt: str, record: CompileRecord | None = None) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "swimlane":
        out.write_text(json.dumps(sl.to_json()))
    else:
        write_trace(sl, out, record, fmt)


def run_open(target: str, trace: Path | None = None, fmt: str = "chrome", top: int = 5,
             as_json: bool = False) -> int:
    """Read a trace (any format `load_any` reads) and print its summary (or its swimlane JSON)."""
    try:
        if fmt not in TRACE_FORMATS:
            raise CliError("--format", f"unknown trace format {fmt!r}; one of {', '.join(TRACE_FORMATS)}")
        if Path(target).suffix == ".py":
            raise CliError(target, f"a Python file, not a trace: `pypto-ide profile {target}` runs its kernels")
        try:
            sl = load_any(target)
        except ValueError as e:  # the message names the file and what is wrong
            message = str(e)
            raise CliError(target, message.removeprefix(f"{target}: ").removeprefix(f"{Path(target)}: ")) from None
    except CliError as e:
        print(e, file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(sl.to_json(), indent=1))
    else:
        print(f"{target}  ({sl.info.get('format', sl.board)}, {len(sl.tasks)} tasks, {len(sl.lanes)} lanes)")
        print(trace_summary(sl, top))
    if trace is not None:
        _write_swimlane(sl, trace, fmt)
        if not as_json:
            print(f"  wrote {trace}")
    return 0


def run_passes(directory: str, diff: int | None = None, as_json: bool = False, source: str | None = None) -> int:
    """PyPTO 3's passes_dump/: the pass table (with the kernel file its functions link to), or one pass's diff
    against the one before; `as_json`: the documents the passes panel reads (`dump_json`, `pass_json`)."""

    try:
        if as_json:
            doc = (passes_dump.dump_json(directory, source) if diff is None
                   else passes_dump.pass_json(directory, diff, source))
            print(json.dumps(doc, indent=1))
            return 0
        dump = passes_dump.read_passes_dump(directory)
        if diff is None:
            print(passes_dump.pass_table(dump))
            ks, note = (passes_dump.kernel_source(source), "the kernel file given") if source else \
                passes_dump.find_kernel_source(dump)
            if ks is None:
                print(f"  functions not linked to source: {note}")
            else:
                print(f"  functions link to {ks.path} ({note}):")
                for f in passes_dump.functions(dump.snapshots[-1].text):
                    got = ks.link(f.name)
                    where = f"line {got[0]} ({got[1]})" if got else "not linked"
                    print(f"    {f.name:<36} {where}")
            return 0
        text = dump.diff(diff)
    except (ValueError, OSError) as e:
        print(f"{directory}: error: {str(e).removeprefix(f'{directory}: ')}", file=sys.stderr)
        return 1
    snap = dump.snapshots[dump.find(diff)]
    print(text if text else f"{snap.path.name}: no change against the snapshot before it", end="" if text else "\n")
    return 0


def run_profile(target: str, board: str = "sim", trace: Path | None = None, fmt: str = "chrome",
                workers: int | None = None, top: int = 5, as_json: bool = False, text: bool = False,
                lanes: list[str] | None = None, window: tuple[float, float] | None = None) -> int:
    """Profile the file's kernels and print the summary (or, with `text`, the per-lane text trace an agent
    reads through MCP: `pypto.boards.trace.text_trace`, narrowed to `lanes` and `window`)."""
    if is_trace(target):  # a run that already happened: read it, as `open` does
        return run_open(target, trace, fmt, top, as_json)
    try:
        if fmt not in TRACE_FORMATS:
            raise CliError("--format", f"unknown trace format {fmt!r}; one of {', '.join(TRACE_FORMATS)}")
        _, kernels = find_kernels(target)
    except CliError as e:
        print(e, file=sys.stderr)
        return 1
    failed = 0
    docs = []
    for k in kernels:
        try:
            # the sim board reads shapes only: values are made for the cpu board (and where the kernel reads them)
            record, args = compile_for(k, example_arguments(k) if board != "sim" else None)
            inputs = {n: to_numpy(v) for n, v in args.items() if hasattr(v, "shape")}
            record = profile(record, board, inputs, workers)
        except PyptoError as e:
            print(f"{_where(e, _def_where(k))}: error: {e.message}", file=sys.stderr)
            failed += 1
            continue
        except Exception as e:  # noqa: BLE001 - a bug in a board: one line, not a traceback
            print(f"{_def_where(k)}: error: profiling {k.name} on {board} failed: {type(e).__name__}: {e}",
                  file=sys.stderr)
            failed += 1
            continue
        assert record.run is not None
        if as_json:
            docs.append(record.to_json())
        elif text:
            print(f"{record.source.kernel}  {_def_where(k)}")
            print(text_trace(record.run, record, lanes=lanes, window=window), end="")
        else:
            print(f"{record.source.kernel}  {_def_where(k)}  ({', '.join(_shape_text(i) for i in record.inputs)})")
            if inputs_line(record):
                print(inputs_line(record))
            print(profile_summary(record, top))
        if trace is not None:
            out = _trace_path(trace, record.source.kernel, len(kernels) > 1)
            _write_swimlane(record.run, out, fmt, record)
            if not as_json:
                print(f"  wrote {out}")
    if as_json:
        print(json.dumps(docs[0] if len(kernels) == 1 and docs else docs, indent=1))
    return 1 if failed else 0


# ---- report -------------------------------------------------------------------------------------

def kernels_in(target: str) -> list[JitKernel]:
    """The kernels of `FILE[::KERNEL]`, or of every Python file under a folder (files without
    kernels skipped; hidden folders and virtualenvs too)."""
    if is_trace(target):
        raise CliError(target, f"a trace, not a kernel file: `pypto-ide open {target}` prints its summary")
    if not Path(target).is_dir():
        return find_kernels(target)[1]
    kernels: list[JitKernel] = []
    for path in sorted(Path(target).rglob("*.py")):
        if any(part.startswith(".") or part in ("node_modules", "__pycache__") for part in path.parts[:-1]):
            continue
        try:
            kernels += find_kernels(str(path))[1]
        except CliError as e:
            if "no @pypto.jit kernels" not in str(e):
                raise
    return kernels


def run_report(target: str, fmt: str = "text", board: str = "sim", precision: bool = False, suggest: bool = False,
               fail_on: list[str] | None = None, output: Path | None = None, budget: int | None = None,
               seconds: float | None = SEARCH_SECONDS, exhaustive: bool = False) -> int:
    """`pypto-ide report`. The text report on the terminal comes in two steps per kernel: its findings
    as soon as they are known, then (with `--suggest`) the tile search's suggestions once it ends, its
    progress on stderr meanwhile; the search (and the check of the findings' proposed shapes) is bounded
    by `seconds` (`SEARCH_SECONDS`; 0 or None: no bound). `exhaustive`: no bound on time or evaluations."""
    if seconds is not None and seconds < 0:
        print(f"--time {seconds:g}: seconds, at least 0 (0: no time bound)", file=sys.stderr)
        return 1
    bound = None if exhaustive or not seconds else seconds
    try:
        for spec in fail_on or ():
            try:
                check_fail_on(spec)
            except ValueError as e:
                raise CliError("--fail-on", str(e)) from None
        kernels = kernels_in(target)
    except CliError as e:
        print(e, file=sys.stderr)
        return 1
    stream = fmt == "text" and output is None  # the terminal's report: findings first, suggestions as they come
    reports = []
    for k in kernels:
        told: list[bool] = []

        def shown(r: KernelReport, told: list[bool] = told) -> None:
            told.append(True)
            if stream:
                sys.stdout.write("\n".join(text_findings(r)) + "\n")
                sys.stdout.flush()
            if suggest and r.error is None:
                limit = "no time bound" if bound is None else f"up to {bound:g} s; --time 0: no bound"
                print(f"{r.kernel}: searching tile shapes on the sim board ({limit})…", file=sys.stderr, flush=True)

        best: list[float] = []

        def progress(p: dict[str, Any], name: str = k.name, best: list[float] = best) -> None:
            if p.get("best") and p.get("best_us") is not None and (not best or p["best_us"] < best[-1] - 1e-9):
                best.append(float(p["best_us"]))
                speedup = f" ({p['baseline_us'] / p['best_us']:.2f}x)" if p.get("baseline_us") else ""
                print(f"{name}: {p['seconds']:.1f} s, {p['searched']:,} of {p['space']:,} shapes: best so far "
                      f"{p['best_us']:,.2f} µs{speedup} with {p['best']}", file=sys.stderr, flush=True)

        r = make_report(k, board, precision, suggest, budget=budget, seconds=bound, on_findings=shown,
                        progress=progress if suggest else None, exhaustive=exhaustive)
        if r.error is not None:
            if stream and not told:
                sys.stdout.write("\n".join(text_findings(r)) + "\n")
            print(f"{r.file}:{r.error_line or r.line}: error: {r.error}", file=sys.stderr)
        if stream:
            sys.stdout.write("\n".join([*text_suggestions(r), ""]) + "\n")
            sys.stdout.flush()
        reports.append(r)
    if not stream:
        text = render(reports, fmt, fail_on or ())
        if output is not None:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text)
            print(f"wrote {output}", file=sys.stderr)
        else:
            sys.stdout.write(text)
    failed = failures(reports, fail_on or ())
    for line in failed:
        print(f"fail: {line}", file=sys.stderr)
    return 1 if failed or any(r.error is not None for r in reports) else 0


# ---- check --------------------------------------------------------------------------------------

def run_check(paths: list[str], baseline: Path, update: bool = False, fmt: str = "text", output: Path | None = None,
              precision: bool = True, makespan_tol: float | None = None, utilization_tol: float | None = None,
              executor: str = "local", workers: int | None = None) -> int:
    root = baseline.resolve().parent
    try:
        # the arguments first (open_executor checks them too, but only after the baseline is read)
        parse_executor(executor)
        if workers is not None and workers < 1:
            raise ValueError(f"--workers {workers}: at least 1")
        base = None if update else check.load_baseline(baseline)
        with open_executor(executor, workers) as runner:  # a local pool starts while the kernels are imported
            kernels = [k for p in (paths or ["."]) for k in kernels_in(p)]
            reports = report_all(kernels, runner, "sim", precision)
    except CliError as e:
        print(e, file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if update:
        tol = dict(check.DEFAULT_TOLERANCE)
        if makespan_tol is not None:
            tol["makespan"] = makespan_tol
        if utilization_tol is not None:
            tol["utilization"] = utilization_tol
        baseline.parent.mkdir(parents=True, exist_ok=True)
        baseline.write_text(json.dumps(check.baseline_doc(reports, root, tol), indent=1, sort_keys=True) + "\n")
        print(f"wrote {baseline}: {len(reports)} kernel(s)", file=sys.stderr)
        return 1 if any(r.error for r in reports) else 0
    assert base is not None
    if makespan_tol is not None:
        base.setdefault("tolerance", {})["makespan"] = makespan_tol
    if utilization_tol is not None:
        base.setdefault("tolerance", {})["utilization"] = utilization_tol
    results = check.compare(reports, base, root, check.scope_of(paths or ["."]))
    failed = [c for c in results if not c.passed]
    text = check.render(results, reports, fmt)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
    else:
        sys.stdout.write(text)
    for c in failed:
        print(f"regression: {c.key}: {'; '.join(c.regressions)}", file=sys.stderr)
    return 1 if failed else 0


# ---- capture ------------------------------------------------------------------------------------

CAPTURE_TIMEOUT = 600.0  # seconds the captured command may run (--timeout)
def _capture_memory_mb() -> int:
    """The captured command's default address-space cap: three quarters of this machine's memory, at least
    8 GiB (a model's test may hold 10 GiB of tensors on a machine that has them; the cap is there to stop a
    runaway command before the machine swaps, not to refuse a test that fits)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8192
    return max(8192, (total * 3 // 4) >> 20)


CAPTURE_MEMORY_MB = _capture_memory_mb()  # its address space (--memory-limit-mb; 0: no limit)


def _capture_limits(memory_mb: int) -> Any:
    def limit() -> None:  # in the child, before it executes the command
        if memory_mb > 0 and resource is not None:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    return limit


# put first on the captured command's path (a folder of its own, removed after the run): every Python process
# the command starts gets the torch_npu stand-in (pypto.npu, docs/npu.md) as the tools' processes do, then runs
# the sitecustomize it would have run
CAPTURE_SITE = """# written by pypto-ide capture (docs/capture.md): the torch_npu stand-in for the captured command
import os as _os
import sys as _sys

try:
    import pypto.npu as _npu

    _npu.prepare_for_user_code()
except Exception as _e:  # noqa: BLE001
    print(f"pypto capture: the torch_npu stand-in is not in place: {_e}", file=_sys.stderr)
_here = _os.path.dirname(_os.path.abspath(__file__))
for _d in _sys.path:
    _p = _os.path.join(_d, "sitecustomize.py")
    if _os.path.abspath(_d or ".") != _here and _os.path.isfile(_p):
        with open(_p) as _f:
            exec(compile(_f.read(), _p, "exec"), {"__name__": "sitecustomize", "__file__": _p})
        break
"""


def run_capture(command: list[str], store: Path | None = None, every: bool = False,
                timeout: float = CAPTURE_TIMEOUT, memory_mb: int = CAPTURE_MEMORY_MB, npu: bool = True,
                run_skipped: bool = False) -> int:
    """Run the user's own COMMAND (a test, a script) with this `pypto` first on its path and every jit
    call recorded (`pypto.frontend.capture`) into STORE; print what was captured, and the tests its pytest
    skipped (`pypto.frontend.capture_pytest`; with `run_skipped`, those its skip marks would skip run). The command
    runs in its own process group, under a time limit (the whole group is stopped at it) and a memory cap; with
    `npu`, `import torch_npu` finds the stand-in (unless a real one is installed)."""
    command = command[1:] if command[:1] == ["--"] else list(command)
    if not command:
        print("capture: error: no command: pypto-ide capture [--store DIR] [--all] -- COMMAND…", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="pypto-capture-") as site:
        if npu:
            (Path(site) / "sitecustomize.py").write_text(CAPTURE_SITE)
        return _capture(command, store, every, timeout, memory_mb, [site] if npu else [],
                        NPU_ENVIRONMENT if npu else {}, Path(site) / "skipped.jsonl", run_skipped)


# what an Ascend machine's environment says and an NPU program reads before it runs (PyPTO's scripts skip
# their run without a device id): with the stand-in, the command sees it unless it sets its own
NPU_ENVIRONMENT = {"TILE_FWK_DEVICE_ID": "0"}


MAX_SKIPPED = 200  # skipped tests reported at most (a suite may skip thousands)
MAX_SKIPPED_BYTES = 1 << 20  # of the file they are written to, read at most


def _skipped(path: Path) -> list[dict[str, Any]]:
    """The tests the command's pytest skipped or ran unskipped, as `pypto.frontend.capture_pytest` wrote them (the
    user's process wrote the file: its first MiB is read, and a line that is not such an entry is passed over)."""
    out: list[dict[str, Any]] = []
    with contextlib.suppress(OSError), path.open("rb") as f:
        for line in f.read(MAX_SKIPPED_BYTES).decode("utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError, RecursionError):
                e = json.loads(line)
                if isinstance(e, dict) and isinstance(e.get("test"), str) and isinstance(e.get("reason"), str):
                    out.append({"test": e["test"][:500], "reason": " ".join(e["reason"].split())[:300],
                                "marked": e.get("marked") is True, "lifted": e.get("lifted") is True})
            if len(out) >= MAX_SKIPPED:
                break
    return out


def _killed(text: str, signum: int, memory_mb: int) -> str:
    """What a captured command killed by a signal is told: the signal by name, and for a SIGKILL this capture did
    not send (it sends one only at its time limit), where one comes from: the command's own memory cap makes it
    raise MemoryError instead, so it is the system's out-of-memory killer (the machine's memory, not the cap, ran
    out: other processes' too) or another process."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    said = f"`{text}` was killed by {name} (signal {signum})"
    if signum == getattr(signal, "SIGKILL", -1):
        cap = (f"its memory cap ({memory_mb} MB) would have raised MemoryError" if memory_mb > 0 else
               "it had no memory cap")
        said += (f", not by this capture: by the system's out-of-memory killer (the machine ran out of memory; {cap}; "
                 f"run fewer commands at once or lower --memory-limit-mb) or by another process")
    return said


def _capture(command: list[str], store: Path | None, every: bool, timeout: float, memory_mb: int,
             path: list[str], defaults: dict[str, str], skips: Path, run_skipped: bool) -> int:
    folder = (store if store is not None else Path.cwd() / capture.STORE).resolve()
    session = uuid.uuid4().hex
    argv = list(command)
    if argv[0] in ("python", "python3"):  # the interpreter pypto-ide runs under: it has pypto's dependencies
        argv[0] = sys.executable
    text = shlex.join(command)
    env = {**defaults, **os.environ}
    env["PYTHONPATH"] = os.pathsep.join([*path, str(REPO), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    env.update({capture.ENV_STORE: str(folder), capture.ENV_MODE: "all" if every else "first",
                capture.ENV_SESSION: session, capture.ENV_COMMAND: text})
    # the command's pytest, if it runs one, reports what it skipped (and with run_skipped, lifts its skip marks)
    env["PYTEST_PLUGINS"] = ",".join([*filter(None, [env.get("PYTEST_PLUGINS", "")]), capture.PYTEST_PLUGIN])
    env[capture.ENV_SKIPS] = str(skips)
    env.pop(capture.ENV_RUN_SKIPPED, None)
    if run_skipped:
        env[capture.ENV_RUN_SKIPPED] = "1"
    print(f"capture: running `{text}` (captures to {folder}; time limit {timeout:g} s)", file=sys.stderr, flush=True)
    try:
        proc = subprocess.Popen(argv, env=env, start_new_session=True,  # noqa: S603 - the user's own command
                                preexec_fn=_capture_limits(memory_mb))  # noqa: PLW1509
    except OSError as e:
        print(f"capture: error: cannot run `{text}`: {e.strerror or e}", file=sys.stderr)
        return 1
    problem = None
    try:
        code = proc.wait(timeout=timeout)
        if code != 0:
            problem = f"`{text}` exited with status {code}" if code > 0 else _killed(text, -code, memory_mb)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        problem = f"`{text}` did not finish within {timeout:g} s (--timeout): stopped"
    except KeyboardInterrupt:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        problem = f"`{text}` interrupted"
    # the report on lines of its own, whatever the command printed last: after output without a final newline, its
    # first line ("captured …", "capture: error: …", which the language server reads) would end that line
    print(flush=True)
    made = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            c = capture.read(path)
        except ValueError:
            continue
        if c.doc.get("session") == session:
            made.append(c)
    made.sort(key=lambda c: (c.kernel.file, c.kernel.line, c.captured_at))
    for c in made:
        kid = c.kernel
        print(f"captured {kid.qualname}  {kid.file}:{kid.line}  {c.summary()}")
        if c.doc.get("closure"):
            print(f"    closure: {c.closure_text()}")
        for name, why in c.unstored.items():
            print(f"    not stored: {name}: {why}")
        print(f"    -> {c.path}")
    skipped = _skipped(skips)
    for entry in skipped:  # (the language server reads these lines: server.capture_runner)
        how = ("unskipped", "(its skip mark lifted)") if entry["lifted"] else \
            ("skipped", "by its skip mark" if entry["marked"] else "at run time")
        print(f"{how[0]} {entry['test']}  {how[1]}: {entry['reason']}")
    if problem:
        kept = f"; the {len(made)} capture(s) made before are kept" if made else "; nothing was captured"
        print(f"capture: error: {problem}{kept}", file=sys.stderr)
        return 1
    if not made:
        marked = sum(1 for e in skipped if e["marked"] and not e["lifted"])
        hint = (f"; pytest skipped {marked} test(s) by their skip marks: --run-skipped runs them" if marked else
                f"; pytest skipped {len(skipped)} test(s)" if skipped else "")
        print(f"capture: error: `{text}` called no @pypto.jit kernel (with this pypto, {REPO / 'pypto'}): "
              f"nothing captured{hint}", file=sys.stderr)
        return 1
    print(f"capture: {len(made)} capture(s) in {folder}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pypto-ide", description="PyPTO IDE: compile, profile, report and "
                                                                   "check PyPTO kernels")
    sub = parser.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("examples", help="compile and run the examples, compare each with torch",
                        description="Import every example of DIRECTORY (default: the repository's examples/), run "
                                    "its check() — compile, run on this machine's CPU, compare with torch — and "
                                    "print each example's kernels and comparisons. Exit 1 if anything failed.")
    ex.add_argument("directory", nargs="?", default=str(REPO / "examples"))
    co = sub.add_parser("compile", help="compile a file's kernels without running them; show every pass",
                        description="Compile a file's kernels (or FILE::KERNEL) for their example inputs without "
                                    "running them, and print every pass: stage, whether it changed the graph, "
                                    "nodes, time. --json prints the CompileRecord, --dump/--record write it, "
                                    "--listing adds each leaf function's PTO listing.")
    co.add_argument("target", metavar="FILE[::KERNEL]", help="a Python file, optionally ::the kernel to compile")
    co.add_argument("--stage", choices=STAGES, help="stop after this stage (default: every stage)")
    co.add_argument("--dump", metavar="DIR", type=Path,
                    help=f"write DIR/<kernel>/NNN_<pass>.json, {RECORD_FILE} and {COLUMNS_FILE}")
    co.add_argument("--json", action="store_true",
                    help="print the CompileRecord JSON (a list for several kernels); a big kernel's columns "
                         "are left out: see --record")
    co.add_argument("--record", metavar="DIR", type=Path,
                    help=f"write the CompileRecord: DIR/{RECORD_FILE} and DIR/{COLUMNS_FILE} (DIR/<kernel>/… "
                         "for several kernels)")
    co.add_argument("--listing", action="store_true", help="print each leaf function's PTO-ISA-style listing")
    co.add_argument("--export", nargs=2, metavar=("FORMAT", "DIR"),
                    help=f"write the final graph as one of: {', '.join(EXPORTS)}")
    pr = sub.add_parser("profile", help="compile and run a file's kernels on a board; print the swimlane summary",
                        description="Compile a file's kernels and run them on a board — the simulated A2/A3 chip "
                                    "(sim, times simulated) or this machine's cores (cpu, times measured) — and "
                                    "print the makespan, utilization, what bounds the run and the slowest tasks "
                                    "with their source lines; --trace writes the swimlane (Chrome/Perfetto, "
                                    "PyPTO's merged_swimlane.json, …). A trace file is read as `open` reads it.")
    pr.add_argument("target", metavar="FILE[::KERNEL]", help="a Python file, optionally ::the kernel to profile")
    pr.add_argument("--board", choices=("sim", "cpu"), default="sim",
                    help="sim: the simulated A2/A3 chip (default); cpu: this machine's cores, measured")
    pr.add_argument("--trace", metavar="OUT", type=Path, help="write the swimlane to OUT (one file per kernel)")
    pr.add_argument("--format", choices=TRACE_FORMATS, default="chrome",
                    help="of --trace: chrome (Perfetto), merged (PyPTO merged_swimlane.json), swimlane, text")
    pr.add_argument("--workers", type=int, help="cpu board: worker threads (default: one per core)")
    pr.add_argument("--top", type=int, default=5, help="how many of the slowest tasks to list")
    pr.add_argument("--json", action="store_true", help="print the CompileRecord with its run as JSON")
    pr.add_argument("--text", action="store_true",
                    help="print the per-lane text trace instead of the summary (what MCP's swimlane_text answers; "
                         "at most 64000 characters, docs/agents.md)")
    pr.add_argument("--lanes", nargs="+", metavar="LANE",
                    help="with --text: only these lanes (AIV_3) or core types (AIV)")
    pr.add_argument("--window", nargs=2, type=float, metavar=("T0", "T1"),
                    help="with --text: only tasks overlapping [T0, T1] µs")
    rp = sub.add_parser("report", help="health report (and precision, tuning suggestions) of a file's kernels",
                        description="The health report of a file's (or a folder's) kernels: the profile's figures "
                                    "and findings pointing at source lines; --precision compares every op with "
                                    "fp64, --suggest searches tile shapes on the sim board (bounded by --time). "
                                    "Formats for people (text, md, html) and for CI (json, junit, sarif: a "
                                    "failure only for what --fail-on fails on). Exit 1 when a kernel does not "
                                    "compile or a --fail-on condition is met.")
    rp.add_argument("target", metavar="FILE[::KERNEL]|DIR",
                    help="a Python file, optionally ::the kernel to report on, or a folder of them")
    rp.add_argument("--format", choices=("text", "json", "md", "html", "junit", "sarif"), default="text")
    rp.add_argument("--board", choices=("sim", "cpu"), default="sim", help="where to profile (default: sim)")
    rp.add_argument("--precision", action="store_true", help="compare every op with an fp64 reference, per pass")
    rp.add_argument("--suggest", action="store_true", help="search tile shapes on the sim board and suggest edits")
    rp.add_argument("--budget", type=int, help="--suggest: evaluations at most (default: 10%% of the space)")
    rp.add_argument("--time", type=float, metavar="SECONDS", default=SEARCH_SECONDS,
                    help=f"wall-clock seconds for the sim board's work on tile shapes (checking the findings' "
                         f"proposed shapes, then the --suggest search), then the best found so far "
                         f"(default {SEARCH_SECONDS:g}, as in the editor and `serve`; 0: no time bound)")
    rp.add_argument("--exhaustive", action="store_true",
                    help="--suggest: no time bound and no evaluation budget: search until nothing is left to "
                         "explore (minutes to hours on a large kernel)")
    rp.add_argument("--fail-on", action="append", metavar="COND",
                    help="exit 1 when met: a severity (error, warning, info), 'precision', or a condition such as "
                         "'utilization<0.5' / 'makespan>120' (µs); repeatable")
    rp.add_argument("--output", "-o", type=Path, help="write the report to this file instead of stdout")
    ck = sub.add_parser("check", help="CI gate: every kernel's makespan, utilization, precision and errors "
                                      "against a baseline file",
                        description="The regression gate for CI: report every kernel under PATHs (sim board, "
                                    "health, precision) and compare it with the baseline file. Exit 1 on a "
                                    "regression — makespan above the baseline or utilization below it by more "
                                    "than the tolerance, precision that passed and fails now, a new "
                                    "error-severity finding, a kernel that no longer compiles — and on nothing "
                                    "else: JUnit has a <failure>, SARIF an error, exactly per regression. Only "
                                    "the kernels under PATHs are reported. --update-baseline writes the current "
                                    "figures as the baseline.")
    ck.add_argument("paths", nargs="*", metavar="PATH", help="files (FILE[::KERNEL]) or folders (default: .)")
    ck.add_argument("--baseline", type=Path, required=True, help="the baseline JSON (committed with the kernels)")
    ck.add_argument("--update-baseline", action="store_true", help="write the current figures as the baseline")
    ck.add_argument("--format", choices=("text", "md", "json", "junit", "sarif"), default="text")
    ck.add_argument("--output", "-o", type=Path, help="write the result here instead of stdout")
    ck.add_argument("--no-precision", action="store_true", help="skip the precision check (faster)")
    ck.add_argument("--makespan-tolerance", type=float, help="allowed relative makespan growth (default 0.05)")
    ck.add_argument("--utilization-tolerance", type=float, help="allowed utilization drop (default 0.05)")
    ck.add_argument("--workers", type=int, help="kernels reported at once (default: one per core; 1: in this process)")
    ck.add_argument("--executor", default="local", metavar="WHERE",
                    help="local (a process pool, the default), dask://HOST:PORT (an existing Dask cluster) or "
                         "dask://local (a Dask cluster of --workers processes on 127.0.0.1 for this run)")
    op = sub.add_parser("open", help="read a run's trace (merged_swimlane.json, chip_swimlane_records.json, …); "
                                     "print the swimlane summary",
                        description="Read a real run's trace — PyPTO's merged_swimlane.json, "
                                    "tilefwk_L1_prof_data.json with dyn_topo.txt, chip_swimlane_records.json with "
                                    "deps.json, a Chrome trace, our swimlane JSON, or a folder holding one — and "
                                    "print the same summary as `profile`, with what the import could not place.")
    op.add_argument("trace_file", metavar="TRACE", help="a trace file, or a folder of PyPTO run outputs")
    op.add_argument("--trace", metavar="OUT", type=Path, help="also write the swimlane to OUT (converted)")
    op.add_argument("--format", choices=TRACE_FORMATS, default="chrome",
                    help="of --trace: chrome (Perfetto), merged (PyPTO merged_swimlane.json), swimlane, text")
    op.add_argument("--top", type=int, default=5, help="how many of the slowest tasks to list")
    op.add_argument("--json", action="store_true", help="print the imported swimlane as JSON (with its metrics)")
    ps = sub.add_parser("passes", help="read a PyPTO 3 passes_dump/ folder: the pass table, a pass's diff",
                        description="Read PyPTO 3's per-pass IR dumps (passes_dump/00_frontend.py, "
                                    "NN_after_<Pass>.py): print one line per pass with what it changed, or with "
                                    "--diff NN the unified diff of pass NN against the one before.")
    ps.add_argument("directory", metavar="DIR", help="a passes_dump/ folder, or the build folder holding one")
    ps.add_argument("--diff", type=int, metavar="NN", help="print snapshot NN's diff against the previous one")
    ps.add_argument("--json", action="store_true", dest="as_json",
                    help="print the passes panel's document: the pass table, or with --diff NN that pass (its text, "
                         "bounded diff, functions linked to the kernel file)")
    ps.add_argument("--source", metavar="FILE",
                    help="the kernel file the functions link to (default: looked for near the build output)")
    cp = sub.add_parser("capture", help="run your own test or script and record every kernel call's inputs "
                                        "for the other commands",
                        description="Run COMMAND (your own test or script, after --) with this pypto first on its "
                                    "path, in a process group of its own under a time limit and a memory cap, "
                                    "and record every kernel call's arguments; the other commands then compile "
                                    "a kernel for its captured inputs (docs/capture.md).")
    cp.add_argument("--store", type=Path, metavar="DIR",
                    help=f"where to write the captures (default: ./{capture.STORE.as_posix()})")
    cp.add_argument("--all", action="store_true", dest="every",
                    help="record every call (default: each kernel's first call)")
    cp.add_argument("--timeout", type=float, default=CAPTURE_TIMEOUT,
                    help=f"seconds the command may run (default {CAPTURE_TIMEOUT:g})")
    cp.add_argument("--memory-limit-mb", type=int, default=CAPTURE_MEMORY_MB,
                    help=f"the command's address space (default {CAPTURE_MEMORY_MB}; 0: no limit)")
    cp.add_argument("--run-skipped", action="store_true",
                    help="run the tests pytest would skip by their own skip/skipif marks (PyPTO's biggest cases are "
                         "marked skip, often the only callers of a kernel); a test that skips itself at run time "
                         "still skips")
    cp.add_argument("--no-npu-standin", action="store_false", dest="npu",
                    help="do not give the command the torch_npu stand-in (default: `import torch_npu` finds it, "
                         "unless a real torch_npu is installed; docs/npu.md)")
    cp.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND…",
                    help="the command to run, after --: python -m pytest tests/test_x.py::test_ifa, python kernel.py")
    args = parser.parse_args(argv)
    if args.cmd == "capture":
        return run_capture(args.command, args.store, args.every, args.timeout, args.memory_limit_mb, args.npu,
                           args.run_skipped)
    if args.cmd == "examples":
        return run_examples(Path(args.directory).resolve())
    if args.cmd == "compile":
        export = (args.export[0], Path(args.export[1])) if args.export else None
        return run_compile(args.target, args.stage, args.dump, args.json, export, args.listing, args.record)
    if args.cmd == "check":
        return run_check(args.paths, args.baseline, args.update_baseline, args.format, args.output,
                         not args.no_precision, args.makespan_tolerance, args.utilization_tolerance, args.executor,
                         args.workers)
    if args.cmd == "report":
        return run_report(args.target, args.format, args.board, args.precision, args.suggest, args.fail_on,
                          args.output, args.budget, args.time, args.exhaustive)
    if args.cmd == "profile":
        return run_profile(args.target, args.board, args.trace, args.format, args.workers, args.top, args.json,
                           args.text, args.lanes, tuple(args.window) if args.window else None)
    if args.cmd == "open":
        return run_open(args.trace_file, args.trace, args.format, args.top, args.json)
    if args.cmd == "passes":
        return run_passes(args.directory, args.diff, args.as_json, args.source)
    return 2


if __name__ == "__main__":
    sys.exit(main())
