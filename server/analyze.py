"""What a worker process does with a Python file: find its kernels, compile, profile, report.

Everything here runs inside a worker (`server.worker`), never in the language server or
the HTTP server: it executes the user's module. The results are plain JSON so they cross
the process boundary and are what the shells hold:

- `list_kernels(path, text)` executes the module (from the editor's text, under the
  file's real path, so spans point at the document) and lists its `@pypto.jit` kernels
  with their def lines;
- `analyze_kernel(path, text, name, settings)` compiles one kernel for its example inputs
  (`pypto.inputs`: annotations, a `pypto-inputs:` docstring block), profiles it on the
  configured board, runs the health report (and, when asked, the precision diff and the
  tuning advisor) and returns the CompileRecord with the rest — `record`, its document, and
  `record_columns`, the document's columns as .npz bytes (`record_lists` in the shells makes the lists
  version 1 had, for the panels; pickling lists took seconds for a big kernel) — (the HTTP server also
  asks for `snapshots`: the tensor graph after each pass, and `html`: the report page; the
  language server for the panels asks for `listings`, each leaf's PTO listing, and `report`,
  the kernel's entry of `pypto-ide report --format json`; the MCP server asks for `agent`:
  `pypto.analysis.agent.agent_view`, and with `health: False` for nothing after it; the language
  server's job for the panels' record only says `check_advice: False`: its findings' tile shapes are
  withheld, not run on the sim board);
- `load_trace(path)` reads a trace file (ours, a Chrome/Perfetto trace, PyPTO's
  merged_swimlane.json and run outputs: `pypto.boards.importers.load_any`) as a swimlane;
- `load_pass_dump(path, source)` / `load_pass_dump_pass(path, index, source)` read a PyPTO 3 `passes_dump/`
  folder: its pass table, one pass's text and diff (`pypto.boards.passes_dump`; no user code runs).

A long job streams interim results through `progress` (the worker sends them to the server as
they come): the tile search's best shape so far, at most twice a second; and, when the settings ask
for it (`interim`: the language server and `pypto-ide serve` do), the whole answer before the sim board
has checked the tile shapes its health findings propose (each such finding withheld:
`pypto.analysis.advice.withheld`) or searched tile shapes, whose final answer then leaves out what the
interim one had (`INTERIM`).

A user mistake is a result, not an exception: `error` carries the message and the line. So is
every exception the user's code raises, `BaseException`s included (`KeyboardInterrupt`,
`SystemExit` with any code, `GeneratorExit`), at module level or while the kernel is traced:
a module that fails to execute is `{"name", "error", "import_failed": true}` with the error
at the module's line. Each job runs in a fresh child of a template process (`server.worker`),
which has run `warm_up` once: every job executes the module anew, from a clean state.
"""

from __future__ import annotations

import contextlib
import gc
import linecache
import sys
import time
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from server.index import editor_view  # the language server's lookups, made next to the record


def ahead(first: Callable[[], Any], then: Callable[[], Any], fork: bool = True) -> tuple[Any, Any]:
    """A record's document's run and findings made in a forked child while the job makes the rest:
    `pypto.beside.ahead`, imported when a job calls it (the server processes import this module, and never load
    pypto)."""
    from pypto.beside import ahead as in_a_child

    return in_a_child(first, then, fork)


def _none() -> None:
    return None


def no_progress(data: Any) -> None:
    """Outside a worker job, interim results go nowhere."""


# A long job's interim results (the tile search's best so far), JSON-able: the worker sets this to
# send them to the server while the job runs (server.worker), and back to `no_progress` after.
progress: Callable[[Any], None] = no_progress


def no_background() -> None:
    """Outside a worker job, there is no one to yield to."""


# What is left of a job is work no person waits for (the language server's compile once its interim record is
# sent: the advice's check): the worker sets this to lower the job's priority and tell the pool, which stops the
# job while a job a person waits for runs (server.worker, "Background work yields").
to_background: Callable[[], None] = no_background


# What a job that sent its result early (`interim` setting) leaves out of its final answer: the server
# has it from the interim result, which differs from the final one in its health findings only.
INTERIM = ("record", "record_columns", "editor", "pass_graphs", "listings")
# the settings that choose the panels' parts of an answer (`server.live._record_opts`): not in its fingerprint, nor
# `parts_from` (from this many tile ops an answer holds them all the same)
PARTS = ("record", "snapshots", "listings")
# nor these: `parts_from`, the bound of the check of the advice (`advice_seconds`: an answer whose findings propose
# tile shapes is only ever reused with its advice checked again, `server.live`, with the next compile's bound), and
# from how many tile ops the tensor graph is shown first (`graph_first_from`: an open's, not its answer's)
# and whether the compile is one made ahead of an edit (`ahead`: `server.live`'s `compile_ahead`, an answer the edit's
# compile reuses by this fingerprint)
UNPRINTED = ("parts_from", "advice_seconds", "graph_first_from", "ahead")
# a report's figures of the run (`KernelReport.to_json`), which a job that checks the advice of a reused record again
# takes from the earlier answer (`advice_basis`)
REPORT_RUN = ("board", "clock", "metrics")
# what they add to it
PANEL_PARTS = ("record", "record_columns", "pass_graphs", "listings")


def _error(message: str, line: int, col: int = 0, end_line: int = 0, end_col: int = 0,
           rule: str = "compile.error") -> dict[str, Any]:
    return {"message": message, "line": line, "col": col, "end_line": end_line or line, "end_col": end_col,
            "rule": rule}


def _load(path: str, text: str) -> types.ModuleType:
    from pypto.userfiles import load_text

    return load_text(path, text, "pypto_doc_")


def graphs_after_passes(pass_graphs: Mapping[str, Any]) -> list[Any]:
    """The tensor graph JSON after each pass, from an analysis's `pass_graphs` (which sends a
    graph only where a pass changed it: null means the one before). Pure: the shells call it."""
    current = pass_graphs.get("traced")
    out = []
    for g in pass_graphs.get("passes") or ():
        current = g if g is not None else current
        out.append(current)
    return out


def _module_error(path: str, e: BaseException) -> dict[str, Any]:
    from pypto.ir.errors import PyptoError

    if isinstance(e, SyntaxError):
        return _error(f"SyntaxError: {e.msg}", e.lineno or 1, max(0, (e.offset or 1) - 1), rule="python.syntax")
    if isinstance(e, PyptoError) and e.loc.span is not None and e.loc.span.file == path:
        s = e.loc.span
        return _error(e.message, s.line, s.col, s.end_line, s.end_col)
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
    line = frames[-1].lineno if frames else 1
    return _error(f"{_exception_text(e)} while importing", line or 1, rule="python.import")


def _exception_text(e: BaseException) -> str:
    """`KeyboardInterrupt`, `SystemExit: 3`, `ValueError: no`: the exception as Python shows it."""
    detail = str(e)
    return f"{type(e).__name__}: {detail}" if detail else type(e).__name__


def _kernels(mod: types.ModuleType, path: str) -> dict[str, Any]:
    """The module's kernels by name, and those made inside its functions that have a capture
    (`pypto-ide capture`), made again from it: each is shown at its `def` like any other. Kernels of one
    name made in different functions (two factories that each make a `kernel`) are listed by their
    qualified names (`make.<locals>.kernel`), as the language server names them
    (`server.state.parse_kernels`); `_kernel` finds any kernel by its qualified name too."""
    from pypto.frontend.capture import nested_kernels
    from pypto.frontend.jit import JitKernel

    found: list[Any] = []
    for value in vars(mod).values():
        if isinstance(value, JitKernel) and value.fn.__code__.co_filename == path \
                and value.name not in {k.name for k in found}:
            found.append(value)
    found += nested_kernels(path, vars(mod))[0]
    places: dict[str, set[str]] = {}
    for k in found:
        places.setdefault(k.name, set()).add(k.fn.__qualname__)
    out: dict[str, Any] = {}
    for k in found:
        name = k.fn.__qualname__ if len(places[k.name]) > 1 and "<locals>" in k.fn.__qualname__ else k.name
        out.setdefault(name, k)
    return out


def _kernel(mod: types.ModuleType, path: str, name: str) -> Any:
    """The kernel `name` names: as `_kernels` lists it, or by its qualified name; None if none."""
    kernels = _kernels(mod, path)
    return kernels.get(name) or next((k for k in kernels.values() if k.fn.__qualname__ == name), None)


def _unnamed(mod: types.ModuleType, path: str, name: str) -> str:
    """Why `name` names no kernel of the module: two made inside functions share it, or none has it."""
    from pypto.frontend.capture import ambiguous_name

    kernels = _kernels(mod, path)
    return ambiguous_name(name, kernels.values()) or \
        f"no kernel named {name!r} in this version of the file (kernels: {', '.join(kernels) or 'none'})"


def list_kernels(path: str, text: str) -> dict[str, Any]:
    """{"kernels": [{"name", "line", "end_line"}], "error": None | {...}} for the module."""
    try:
        mod = _load(path, text)
    except MemoryError:
        raise  # the worker reports it
    except BaseException as e:  # noqa: BLE001 - the user's module raised (KeyboardInterrupt, sys.exit too)
        return {"kernels": [], "error": _module_error(path, e)}
    kernels = []
    for name, k in _kernels(mod, path).items():
        code = k.fn.__code__
        lines = [ln for _, _, ln in code.co_lines() if ln is not None]
        kernels.append({"name": name, "line": code.co_firstlineno, "end_line": max(lines, default=code.co_firstlineno)})
    kernels.sort(key=lambda d: d["line"])
    return {"kernels": kernels, "error": None}


def _where_error(e: Any, path: str, fallback: int) -> dict[str, Any]:
    span = e.loc.span if getattr(e, "loc", None) is not None else None
    if span is not None and span.file == path:
        return _error(e.message, span.line, span.col, span.end_line, span.end_col, getattr(e, "rule", None) or
                      "compile.error") | (e.details(path) if hasattr(e, "details") else {})
    return _error(getattr(e, "message", str(e)), fallback)


def _raised(e: BaseException, path: str, name: str, line: int) -> dict[str, Any]:
    """An exception out of compiling the kernel: at the user's line when their code raised it while
    being traced (`python.exception`), else a compiler bug at the innermost user line on the way in."""
    tb = traceback.extract_tb(e.__traceback__)
    mine = [f.lineno for f in tb if f.filename == path and f.lineno]
    if tb and tb[-1].filename == path and mine:
        return _error(f"{_exception_text(e)} (raised while tracing {name})", mine[-1], rule="python.exception")
    return _error(f"internal error compiling {name}: {type(e).__name__}: {e}", mine[-1] if mine else line,
                  rule="internal")


def analyze_kernel(path: str, text: str, name: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Compile, profile and report one kernel of the module: JSON, and the record's columns as bytes.
    The record is frozen from the collector once made (below); a process that had nothing frozen (a test,
    not a worker's job, whose template is frozen and which ends with its answer) gets it back after."""
    from pypto.compiler.pipeline import frozen as any_frozen

    frozen = any_frozen()
    try:
        return _analyze_kernel(path, text, name, settings)
    finally:
        if not frozen:
            gc.unfreeze()


def _analyze_kernel(path: str, text: str, name: str, settings: Mapping[str, Any] | None) -> dict[str, Any]:
    from pypto.analysis.advice import proposes
    from pypto.boards.profile import bottleneck
    from pypto.boards.swimlane import metrics
    from pypto.compiler.tile_passes import columns_ahead, on_expanded
    from pypto.frontend.inputs import example_arguments
    from pypto.ir.errors import PyptoError
    from pypto.record import trace_for
    from pypto.tracing.options import options as pypto_options

    opts = dict(settings or {})
    # what the server kept of its last answer for this kernel: its fingerprint (`reuse_answer`) and the advice's
    # candidates it traced (`Advisor.traces`)
    reuse = opts.pop("reuse", None)
    reuse = reuse if isinstance(reuse, dict) else {}
    known_traces = dict(reuse.get("traces") or {})
    # fingerprint -> what an earlier job's advisor read of that program's lowering and run, and its findings before
    # the check (`advice_basis`): a reused record's advice is then checked again without lowering the kernel
    bases = reuse.get("basis") or {}
    basis: Mapping[str, Any] | None = None
    try:
        mod = _load(path, text)
    except MemoryError:
        raise  # the worker reports it
    except BaseException as e:  # noqa: BLE001 - the user's module raised (KeyboardInterrupt, sys.exit too)
        return {"name": name, "error": _module_error(path, e), "import_failed": True}
    kernel = _kernel(mod, path, name)
    if kernel is None:
        return {"name": name, "error": _error(_unnamed(mod, path, name), 1), "not_a_kernel": True}
    line = kernel.fn.__code__.co_firstlineno
    board = str(opts.get("board", "sim"))
    out: dict[str, Any] = {"name": name, "line": line, "error": None, "record": None, "health": None,
                           "summary": None, "suggestions": [], "precision": None}
    try:
        # the sim board reads shapes only (compile_for makes values where the kernel reads them)
        args = example_arguments(kernel, values=board != "sim" or bool(opts.get("precision")))
    except PyptoError as e:
        out["error"] = _where_error(e, path, line)
        out["error"]["rule"] = e.rule or "inputs.missing"
        return out
    try:
        # `compile_options`: a `with pypto.options(...)` scope around the compile (an agent's compile tool;
        # the kernel's decorator keywords still win, as in PyPTO); an unknown key is a PyptoError
        given = opts.get("compile_options")
        with pypto_options(**dict(given)) if given else contextlib.nullcontext():
            traced = trace_for(kernel, args)
            if _fingerprinted(board, opts):
                # which parts the answer holds (the panels' record, graphs, listings) is no part of what they hold: the
                # server completes an answer from the panels' record job of the same program (`program`, server.live)
                out["fingerprint"] = traced.fingerprint({k: v for k, v in opts.items()
                                                         if k not in PARTS and k not in UNPRINTED})
                out["program"] = traced.program_fingerprint
                offered = reuse.get("fingerprints") or {}  # fingerprint -> whether that answer holds whole
                if out["fingerprint"] in offered:
                    fresh = {"text_sha256": traced.text_sha256, "inputs_from": traced.origin,
                             "knobs": knob_view(kernel) if opts.get("editor") else None}
                    if offered[out["fingerprint"]]:  # that answer holds: nothing of it was simulated for other code
                        return {"name": name, "line": line, "error": None, "reused": "whole",
                                "fingerprint": out["fingerprint"], **fresh}
                    # its record holds; its advice is checked again below (its candidates are traced anew)
                    progress({"kernel": name, "reused_interim": out["fingerprint"], **fresh})
                    to_background()
                    out["reused"] = "record"
                    basis = bases.get(out["fingerprint"]) if _basis_serves(opts, board) else None
            # the record document is made next (unless the server has it): its tile columns made ahead, beside
            # the compile (tile_passes.columns_ahead)
            document_next = (opts.get("record", True) or opts.get("parts_from") is not None) and \
                out.get("reused") != "record"
            # a big kernel no record of which is shown yet (the language server's `graph_first_from` tile ops): its
            # tensor stage's record is shown while it lowers (`_graph_first`)
            first_from = int(opts.get("graph_first_from") or 0) if out.get("reused") is None else 0

            def first_look(tile_ops: int) -> None:
                if tile_ops >= first_from:
                    shown = _graph_first(kernel, traced, path, name, line, opts, tile_ops)
                    progress({"kernel": name, "lowering": shown})

            if basis is None:  # (else the record shown holds, and what its advice is checked from is known)
                with columns_ahead() if document_next else contextlib.nullcontext(), \
                        on_expanded(first_look) if first_from > 0 else contextlib.nullcontext():
                    record, args = traced.lowered(), traced.made
        if basis is None:
            record, health, made, views = _profiled(record, args, board, opts, out.get("reused") == "record", path)
    except PyptoError as e:
        out["error"] = _where_error(e, path, line)
        return out
    except MemoryError:
        raise  # the worker reports it
    except BaseException as e:  # noqa: BLE001 - a compiler bug, or the user's KeyboardInterrupt, sys.exit, …
        out["error"] = _raised(e, path, name, line)
        return out
    if basis is not None:
        return _advise_again(out, kernel, traced, basis, known_traces, opts, path, name, line)
    assert record.run is not None
    # a reused record was sent already (`reused_interim`) and its advice is checked now: what the interim result
    # holds (INTERIM) is not made again
    early = out.get("reused") == "record" and bool(opts.get("interim")) and \
        (proposes(health) or bool(opts.get("suggest")))
    m = metrics(record.run)
    bound, why = bottleneck(record.run)
    p = record.program
    out["record"] = None
    if made is None and not early:
        made = _document(record, opts)
    if made is not None:  # the document, and its columns as .npz bytes
        out["record"], out["record_columns"] = made
    out["inputs_from"] = record.source.inputs_from  # the capture the inputs came from (docs/capture.md), or None
    out["summary"] = {
        "board": record.run.board, "clock": record.run.clock, "makespan_us": m.makespan, "tasks": len(record.run.tasks),
        "utilization": m.utilization, "core_utilization": dict(m.core_utilization), "bound": bound, "why": why,
        "tile_ops": len(p.tiles.ops) if p.tiles is not None else 0, "leaves": len(p.leaves or ()),
    }
    if opts.get("agent") is not None:  # what an MCP tool reads (server.mcp): small JSON, figures with their lines
        from pypto.analysis.agent import agent_view
        out["agent"] = agent_view(record, opts["agent"])
        if opts.get("health") is False:  # compile, profile, swimlane_text, precision: no findings, no board checks
            if opts.get("precision"):
                out["precision"] = _precision(kernel, args, path, line)[1]
            return out
    if views is None and not early:
        views = _views(record, path, opts)
    if views is not None:
        out.update(views)
        if "editor" in out:  # the run, its predecessors as arrays (`editor_run`)
            if made is not None:  # made where it is read, from the record's run and columns (`with_editor_run`)
                del out["editor"]["swimlane"]  # (editor_view's place for it)
                out["editor"]["swimlane_in_record"] = True
            else:
                out["editor"]["swimlane"] = editor_run(record.run)
            out["editor"]["knobs"] = knob_view(kernel)
    made = views = None  # in `out` (sent, once the interim answer is): not held while the advice's candidates compile
    return _advise(out, kernel, args, record, health, opts, known_traces, path, name, line)


def _profiled(record: Any, args: Mapping[str, Any], board: str, opts: dict[str, Any], reused: bool, path: str
              ) -> tuple[Any, Any, tuple[dict[str, Any], bytes] | None, dict[str, Any] | None]:
    """A lowered record profiled on the board, with its findings and, unless it is `reused` (shown already), its
    document and the editor's views: (record, findings, document, views). A big kernel's compile gives the panels'
    parts too (`opts` gains them)."""
    from pypto.analysis.health import health_report
    from pypto.compiler.tile_passes import drop_columns_ahead
    from pypto.frontend.jit import to_numpy
    from pypto.record import profile, run_document_ahead

    arrays = {n: to_numpy(v) for n, v in args.items() if hasattr(v, "shape")}
    record = profile(record, board, arrays, opts.get("workers"))
    # A job's process lives for this one answer, and the record (10^5-10^6 objects, none garbage
    # while the job lives) would be walked by every full collection of what follows; frozen, the
    # collector walks only what the views make (at 195k tile ops: health 1.0 -> 0.5 s).
    gc.freeze()
    made: tuple[dict[str, Any], bytes] | None = None
    views: dict[str, Any] | None = None
    n_ops = len(record.program.tiles.ops) if record.program.tiles is not None else 0
    if not opts.get("record") and n_ops >= int(opts.get("parts_from") or sys.maxsize):
        # a big kernel's panels' parts: the record document made beside the views costs no time, and the panels
        # open on it without a second compile (`parts_from`: the language server's)
        opts.update(dict.fromkeys(PARTS, True))
    if reused:  # what is made again depends on its findings (`early`, in `_analyze_kernel`)
        health = health_report(record)
    else:  # the findings in a child, which makes the record document's run first; here the rest of the document,
        # then the editor's views from its columns
        # (no document, no run made for it: the child goes straight to the findings)
        run, findings = ahead((lambda: run_document_ahead(record.run)) if opts.get("record", True) else _none,
                              lambda: health_report(record), fork=n_ops >= BESIDE_FROM)
        try:
            made, views = _document_and_views(record, path, opts, run.get)
        except BaseException:
            findings.drop()
            raise
        health = findings.get()
    drop_columns_ahead(record.program.tiles)  # made ahead for a document not made: the child ends
    return record, health, made, views


def _graph_first(kernel: Any, traced: Any, path: str, name: str, line: int, opts: Mapping[str, Any],
                 tile_ops: int) -> dict[str, Any]:
    """What is shown of a big kernel while it lowers, once its tile expansion said how many tile ops it has: the
    record of its tensor stage (its document says `lowering`: the tile ops the later stages are lowering), the editor's
    view and the passes' graphs of that record — the graph, the lines' nodes, the tile-shape calls — and no run,
    summary or findings. The language server shows it until the kernel's record comes (`server.live`); nothing reuses
    it (it has no fingerprint)."""
    from pypto.ir.columns import npz_bytes

    record = traced.record()  # the tensor stage: `lowered` is not cached while the lowering runs
    doc, arrays = record.to_document()
    doc["lowering"] = {"tile_ops": tile_ops}
    out: dict[str, Any] = {"name": name, "line": line, "error": None, "record": doc,
                           "record_columns": npz_bytes(arrays), "health": None, "summary": None, "suggestions": [],
                           "precision": None, "inputs_from": traced.origin, "lowering": {"tile_ops": tile_ops},
                           **_views(record, path, {**opts, "editor": True, "snapshots": True, "listings": False})}
    out["editor"]["knobs"] = knob_view(kernel)
    return out


def _basis_serves(opts: Mapping[str, Any], board: str) -> bool:
    """Whether a job whose record is reused may check its advice again from an earlier job's `advice_basis`, without
    the lowered program: the language server's compile on the sim board (its record was shown already, `interim`),
    not an agent's view or an HTML report, which read the program."""
    return board == "sim" and bool(opts.get("interim")) and opts.get("agent") is None and not opts.get("html")


def _advise_again(out: dict[str, Any], kernel: Any, traced: Any, basis: Mapping[str, Any],
                  known_traces: dict[str, Any], opts: Mapping[str, Any], path: str, name: str, line: int
                  ) -> dict[str, Any]:
    """The answer of a job whose record is reused (sent already) and whose advice is checked again, from the
    `advice_basis` of the earlier answer of the same traced program: its findings before their check, the summary and
    what the advisor read of its lowering and run (`Written`). The kernel is traced, not lowered: a longer check of
    glm's fused attention no longer compiles its 2.2 M tile ops first, nor forks each candidate's child from them."""
    from pypto.analysis.advisor import Written
    from pypto.analysis.health.assemble import HealthReport

    out["record"] = None
    out["inputs_from"] = traced.origin
    out["summary"] = dict(basis["summary"])
    return _advise(out, kernel, traced.made, traced.record(), HealthReport.from_json(basis["health"]), opts,
                   known_traces, path, name, line, Written.from_json(basis["written"]), basis.get("report_run"))


def _advise(out: dict[str, Any], kernel: Any, args: Mapping[str, Any], record: Any, health: Any,
            opts: Mapping[str, Any], known_traces: dict[str, Any], path: str, name: str, line: int,
            written: Any = None, report_run: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The rest of a job's answer once its record and findings are made: the interim answer sent when the advice is
    to be checked, the check, the precision diff, the tile search and the report. `written`: what the advisor reads of
    the lowering and run when `record` is only traced (`_advise_again`, whose report's run figures are `report_run`).
    The answer carries its `advice_basis` when the server may ask for its advice again (`interim_sent`)."""
    from pypto.analysis.advice import ADVICE_SECONDS, adopt_known, proposes, verify_advice, withheld
    from pypto.analysis.advisor import Advisor
    from pypto.ir.errors import PyptoError

    board = str(opts.get("board", "sim"))
    if opts.get("ahead") and proposes(health) and written is None:
        return _ahead(out, record, health, opts, path, name, line)
    unchecked = health
    precision, suggestions = None, []
    advisor = None
    if opts.get("interim") and (proposes(health) or opts.get("suggest")):
        # the record and the findings now; the checked advice and the tile search's suggestions when the
        # board has run them (INTERIM); a reused record was sent before it was made again
        if out.get("reused") != "record":
            progress({"kernel": name, "interim": {**out, "health": withheld(health, board).to_json()}})
        to_background()  # the person has the record: the advice's check is background work
        for key in INTERIM:
            out.pop(key, None)
        out["interim_sent"] = True
    # one bound for the board's work on tile shapes, as in every door: the check of the findings' shapes,
    # then the search in what is left (pypto.analysis.report.make_report)
    # (`advice_seconds`: the check's own bound, None for none: the language server's pypto.adviceSeconds, or a longer
    # one asked for a kernel whose check stopped at it, `server.live.check_advice`; with a search, the longer of the
    # two bounds both)
    bound = opts.get("tile_search_seconds") if opts.get("suggest") else None
    check = opts.get("advice_seconds", ADVICE_SECONDS)
    if opts.get("suggest"):
        check = bound = None if check is None or bound is None else max(float(check), float(bound))
    deadline = None if bound is None else time.monotonic() + float(bound)
    if proposes(health) and opts.get("check_advice") is False:
        health = withheld(health, board)  # a job for the panels' record only: nothing unchecked is offered
    elif proposes(health):  # a shape is offered only when the sim board finds it faster
        try:
            advisor = Advisor(kernel, args, record=record, traces=known_traces, written=written)
            health = verify_advice(health, advisor, seconds=None if check is None else float(check))
        except PyptoError:
            health = withheld(health, board)  # a candidate failed to compile: nothing unchecked is offered
        except MemoryError:
            raise
        except BaseException as e:  # noqa: BLE001 - a candidate's trace raised (KeyboardInterrupt too)
            out["error"] = _raised(e, path, name, line)
            return out
    out["health"] = health.to_json()
    if advisor is not None and out.get("fingerprint"):  # for the next compile of the kernel (server.live)
        out["advice_traces"] = _latest(advisor.traces, MAX_TRACES)
    if opts.get("precision"):
        precision, out["precision"] = _precision(kernel, args, path, line)
    if opts.get("suggest"):
        budget = opts.get("tile_search_budget")
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            advisor = advisor or Advisor(kernel, args, record=record, traces=known_traces, written=written)
            suggestions = advisor.suggest(budget=budget, seconds=left,
                                          progress=lambda s: progress({"kernel": name, "search": s}))
            out["suggestions"] = [s.to_json() for s in suggestions]
            out["search"] = advisor.search_summary()
            health = adopt_known(health, advisor)  # each finding's Apply: the best shape known for its call
            out["health"] = health.to_json()
            if out.get("fingerprint"):
                out["advice_traces"] = _latest(advisor.traces, MAX_TRACES)
        except PyptoError:
            out["suggestions"] = []
        except MemoryError:
            raise
        except BaseException as e:  # noqa: BLE001 - a candidate's trace raised (KeyboardInterrupt too)
            out["suggestions"] = []
            out["suggest_error"] = _raised(e, path, name, line)
    if opts.get("report") or opts.get("html"):
        from pypto.analysis.report import KernelReport, render_html
        kr = KernelReport(name, path, line, record, health, precision, suggestions)
        if opts.get("report"):  # one kernel of `pypto-ide report --format json`
            out["report"] = {**kr.to_json(), **(report_run or {})}
        if opts.get("html"):  # the self-contained HTML report of these results
            out["html"] = render_html([kr])
    if advisor is not None and advisor.written is not None and out.get("interim_sent") and out.get("fingerprint"):
        report = out.get("report")
        out["advice_basis"] = {"health": unchecked.to_json(), "written": advisor.written.to_json(),
                               "summary": out["summary"], "report_run": {k: report[k] for k in REPORT_RUN}
                               if isinstance(report, dict) else None}
    return out


def _ahead(out: dict[str, Any], record: Any, health: Any, opts: Mapping[str, Any], path: str, name: str, line: int
           ) -> dict[str, Any]:
    """The answer of a compile made ahead of an edit (`server.live.LiveCompiler.compile_ahead`) whose findings propose
    tile shapes: its interim answer (the record, each proposal withheld) and the `advice_basis` a later compile of the
    same traced program checks the advice from. The check is the edit's to make, if the edit comes: a compile ahead
    never spends the advice's bound."""
    from pypto.analysis.advice import withheld
    from pypto.analysis.advisor import Written

    report_run = None
    if opts.get("report"):
        from pypto.analysis.report import KernelReport
        report = KernelReport(name, path, line, record, health, None, []).to_json()
        report_run = {k: report[k] for k in REPORT_RUN}
    basis = {"health": health.to_json(), "written": Written.of(record).to_json(), "summary": out["summary"],
             "report_run": report_run}
    return {**out, "health": withheld(health, str(opts.get("board", "sim"))).to_json(), "interim_sent": True,
            "advice_basis": basis}


def _document(record: Any, opts: Mapping[str, Any]) -> tuple[dict[str, Any], bytes] | None:
    """The record's document and its columns as .npz bytes, when the settings ask for the record (the editor's run
    is made where the answer arrives, from the same columns: `with_editor_run`)."""
    from pypto.ir.columns import npz_bytes

    if not opts.get("record", True):
        return None
    doc, arrays = record.to_document()
    return doc, npz_bytes(arrays)


def _document_and_views(record: Any, path: str, opts: Mapping[str, Any], run_part: Callable[[], Any] | None = None
                        ) -> tuple[tuple[dict[str, Any], bytes] | None, dict[str, Any]]:
    """`_document` and `_views`, the views reading the tile ops' fields from the document's columns. `run_part`: the
    document's run, made elsewhere (`to_document`). The views are made before the columns' .npz bytes, and the
    columns' arrays let go of once those are: the peak holds the arrays and the views' own work, or the arrays and
    the bytes, never all three (glm's fused attention, 2.1 M tile ops: ~0.4 GB of the job's peak, which its memory
    cap had stopped in the views)."""
    from pypto.ir.columns import npz_bytes

    if not opts.get("record", True):
        return None, _views(record, path, opts)
    doc, arrays = record.to_document(run_part=run_part)
    views = _views(record, path, opts, (doc, arrays))
    return (doc, npz_bytes(arrays)), views


def with_editor_run(data: Any) -> Any:
    """A job's answer, or its interim result (`{"interim": answer}`), with the editor's run (`editor_run`) made when
    the answer carries it in its record (`swimlane_in_record`): from the document's run and the record's columns.
    The language server's pool does this in its own thread as each answer arrives (`WorkerPool.run(prepare=…)`), so
    the run's arrays cross from the worker once, in the columns' .npz, not twice (Kimi's block attention after its
    tile edit: its 8.4 M predecessors, 34 MB of a 114 MB answer), and the event loop does not make it. An answer
    whose record cannot give it (a kernel that patched what writes the columns) gets no run, as a record without
    one: the server goes on."""
    from pypto.ir.columns import read_npz

    for answer in (data, data.get("interim")) if isinstance(data, dict) else ():
        editor = answer.get("editor") if isinstance(answer, dict) else None
        if isinstance(editor, dict) and editor.get("swimlane_in_record") and "swimlane" not in editor:
            try:
                editor["swimlane"] = editor_run(None, answer["record"]["run"], read_npz(answer["record_columns"]))
            except Exception:  # noqa: BLE001 - the worker's answer is the user's process's: never trusted
                editor["swimlane"] = None
    return data


def editor_run(run: Any, document: Any = None, arrays: Any = None) -> dict[str, Any]:
    """The run as the language server keeps it (`Result.editor["swimlane"]`): its JSON, but its long lists of
    lists — each task's predecessors and coordinates, each ready counter's points — held as two arrays each
    (`pypto.ir.columns.ArrayLists`; `json_default` writes them as lists). Kimi's block attention has 8.4 M arrows
    after a tile edit: as lists they made the answer cost 0.35 s to unpickle instead of 0.13 s, and 0.5 s to
    make. `document`, `arrays`: the run in the record's document and its columns, when made."""
    from pypto.ir import columns as C

    if document is None or arrays is None:
        arrays = {}
        document = run.to_document("run", arrays)
    return C.expand(document, arrays, lazy=True)  # type: ignore[no-any-return]


def _views(record: Any, path: str, opts: Mapping[str, Any], document: Any = None) -> dict[str, Any]:
    """What the settings ask of the editor's views of a profiled record: `editor` (its `swimlane` and `knobs`
    left for the caller: the run is the record document's, the knobs read the kernel), `pass_graphs` (the tensor
    graph after each pass; null: the previous one, unchanged), `listings` (each leaf function's PTO-ISA-style
    listing, with its source lines). Reads the record only: it may run beside the findings (`beside`). `document`:
    the record document and its columns, when made (the editor view reads the tile ops' fields from them)."""
    out: dict[str, Any] = {}
    if opts.get("editor"):
        out["editor"] = editor_view(record, path, {}, document)
    if opts.get("snapshots"):
        from pypto.ir.serialize import graph_json
        prev = record.traced.graph if record.traced is not None else None
        graphs: list[Any] = []
        for p_ in record.passes:
            g = p_.snapshot.graph if p_.snapshot is not None else None
            graphs.append(None if g is None or g is prev else graph_json(g))
            prev = g if g is not None else prev
        out["pass_graphs"] = {"traced": None if record.traced is None else graph_json(record.traced.graph),
                              "passes": graphs}
    if opts.get("listings"):
        blocks = record.program.blocks
        out["listings"] = record.listings() if blocks is not None else None
    return out


# tile ops from which a job makes its findings in a forked child beside the record document and the views
# (`pypto.beside`): the fork costs ~30 ms, and saved nothing below ~25k tile ops when the child made the views
# (glm's attention, 24k: 0.55 s to its record either way; gated delta rule, 195k: 2.3 -> 1.5 s)
BESIDE_FROM = 50_000

MAX_TRACES = 512  # candidates' figures an answer keeps for the next compile (`Advisor.traces`): the latest


def _latest(d: Mapping[str, Any], n: int) -> dict[str, Any]:
    """The last `n` entries of `d` (insertion order: the latest)."""
    items = list(d.items())
    return dict(items[-n:])


def _fingerprinted(board: str, opts: Mapping[str, Any]) -> bool:
    """Whether a job gives its traced program's fingerprint (`pypto.record.Traced.fingerprint`): the language
    server's compiles ask (`fingerprint`), on the sim board, whose run reads shapes only (a cpu board's run is
    a measurement, and a precision check reads the values), so that its next compile of the kernel may reuse
    this answer (`reuse_answer`)."""
    return bool(opts.get("fingerprint")) and board == "sim" and not opts.get("precision")


def not_checked(health: Mapping[str, Any], why: str) -> dict[str, Any]:
    """An interim answer's health (its proposals held for the check: `pypto.analysis.advice.withheld`) once that check
    will not come: the job that sent the record stopped after it (its memory or time limit: `why`). Each finding held
    for the check says its shape was not simulated and why (`numbers["check_failed"]`), and still offers nothing. Runs
    in the language server (JSON only)."""
    def note(f: Any) -> Any:
        numbers = f.get("numbers") if isinstance(f, dict) else None
        board = numbers.get("checking_on") if isinstance(numbers, dict) else None
        if board is None:
            return f
        return {**f, "numbers": {k: v for k, v in numbers.items() if k != "checking_on"} | {"check_failed": why},
                "suggestion": f"no tile shape is offered here: the {board} board's check of the advice did not finish "
                              f"({why})"}
    return {**health, "findings": [note(f) for f in health.get("findings") or ()]}


def reuse_answer(last: Mapping[str, Any], fresh: Mapping[str, Any]) -> dict[str, Any]:
    """The answer of a job that found its kernel's traced program the same as its last answer's (`reuse` with
    that answer's fingerprint): the last answer with what the new text changes — the kernel file's hash in the
    record, whether the kernel changed since its capture, the knobs' places — and the new job's output. Runs in
    the server; the same answer as a compile of the new text (tests/test_reuse.py)."""
    out = {k: v for k, v in last.items() if k not in ("output", "reused", "interim_sent")}
    origin = fresh.get("inputs_from")  # the capture: whether the kernel's text changed since is the new text's
    record = out.get("record")
    if isinstance(record, dict) and isinstance(record.get("source"), dict):
        source = {**record["source"], "text_sha256": fresh.get("text_sha256")}
        if origin:
            source["inputs_from"] = origin
        out["record"] = {**record, "source": source}
    if "inputs_from" in out:
        out["inputs_from"] = origin
    if isinstance(out.get("report"), dict) and "inputs_from" in out["report"]:
        out["report"] = {**out["report"], "inputs_from": origin}
    if isinstance(out.get("editor"), dict) and fresh.get("knobs") is not None:
        out["editor"] = {**out["editor"], "knobs": fresh["knobs"]}
    if "output" in fresh:
        out["output"] = fresh["output"]
    out["reused"] = fresh.get("reused", "whole")
    return out


def whole_fingerprint(answer: Mapping[str, Any] | None) -> str | None:
    """The fingerprint under which a later compile of the kernel, with the same settings, may take `answer` as it is
    (`reuse_answer`) — for a shell that keeps whole answers only (the MCP server; the language server also reuses a
    record whose advice it checks again, `server.live`): an answer of the sim board without an error whose
    findings proposed no tile shape (their check compiles other shapes of the kernel's code, which the fingerprint
    does not cover: `advice_traces`), no tile search and no interim answer; else None."""
    if not answer or answer.get("error") or answer.get("interim_sent") or answer.get("reused") == "record" \
            or "advice_traces" in answer or answer.get("search") is not None or answer.get("suggestions"):
        return None
    fp = answer.get("fingerprint")
    return fp if isinstance(fp, str) else None


def offering(settings: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]
             ) -> tuple[dict[str, Any], dict[str, Mapping[str, Any]]]:
    """`settings` for a job that gives its answer's fingerprint, and offers it the whole ones among `answers` (the
    kernel's latest answers with the same settings, newest first: `whole_fingerprint`); and those answers by
    fingerprint. A job whose answer says `reused: "whole"` for one of them is answered with
    `reuse_answer(offered[fp], its answer)`. Settings no answer may be reused for (another board than sim, a
    precision check, a tile search) are given back as they are."""
    if str(settings.get("board", "sim")) != "sim" or settings.get("precision") or settings.get("suggest"):
        return dict(settings), {}
    offered: dict[str, Mapping[str, Any]] = {}
    for a in answers:
        fp = whole_fingerprint(a)
        if fp is not None and fp not in offered:
            offered[fp] = a
    out = {**settings, "fingerprint": True}
    if offered:
        out["reuse"] = {"fingerprints": dict.fromkeys(offered, True)}
    return out, offered


def knob_view(kernel: Any) -> list[dict[str, Any]]:
    """A PyPTO 3 kernel's slice-size constants (`pypto.analysis.knobs`): where each is set, for the
    editor's lens and the advisor's quick fixes on its line ([] for a CANN kernel)."""
    from pypto.analysis.knobs import find_knobs

    return [{"config": -1 - j, "name": k.name, "value": k.value, "extents": list(k.extents), "values": list(k.values),
             "span": {"file": k.file, "line": k.line, "col": k.col, "end_line": k.line, "end_col": k.end_col}}
            for j, k in enumerate(find_knobs(kernel))]


def _precision(kernel: Any, args: Mapping[str, Any], path: str, line: int) -> tuple[Any, dict[str, Any]]:
    """The precision diff (`pypto.analysis.precision`) and its JSON; a user mistake is the JSON's `error`."""
    from pypto.analysis.precision import precision_report
    from pypto.ir.errors import PyptoError

    try:
        report = precision_report(kernel, args)
    except PyptoError as e:
        return None, {"error": _where_error(e, path, line)}
    return report, report.to_json()


WARM_UP_PATH = "<pypto warm-up>"
WARM_UP = """import pypto


@pypto.jit
def warm_up(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = pypto.exp(x) + x
"""


def warm_up() -> None:
    """Compile, profile and report a tiny built-in kernel, then forget its module: done once in a
    worker's template process (`server.worker`), it leaves the lazy imports and first-call set-ups
    every job needs done, so each job's child starts warm. It waits for the sim board's compiled
    loop to load (`sim_kernel.finish_loading`; 0.1-0.4 s from numba's cache): the template forks
    its job's children next, and a fork must not cut a loading thread."""
    from pypto.boards import sim_kernel
    from pypto.userfiles import forget_loaded

    path = list(sys.path)
    modules = set(sys.modules)
    try:
        analyze_kernel(WARM_UP_PATH, WARM_UP, "warm_up", {"editor": True, "report": True})
        sim_kernel.finish_loading()
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if name.startswith("pypto_doc_"):
                del sys.modules[name]
        forget_loaded()
        linecache.cache.pop(WARM_UP_PATH, None)


def record_lists(record: Mapping[str, Any] | None, columns: bytes | None) -> Any:
    """A worker's `record` with `record_columns` as the lists version 1 had (`pypto.record.expanded`): what
    the panels read. Runs in a shell's process, on demand: pypto's record reader, no user code."""
    if record is None or columns is None:
        return record
    from pypto.ir.columns import read_npz
    from pypto.record import expanded

    return expanded(record, read_npz(columns))


def panel_lists(record: Mapping[str, Any] | None, columns: bytes | None, leave_out: frozenset[str],
                tile_ops: int, rows: frozenset[str] = frozenset()) -> Any:
    """For a record of more than `tile_ops` tile ops (the panels are sent it slim:
    `server.panel_data.panel_record`), `record_lists` without decoding the columns at `leave_out`, which stand
    as Nones, and with the lists of objects at `rows` as their columns (`{"$rows"}`, lists of numbers as
    `ArrayLists`: `pypto.ir.columns.rows_of`): what the slim record leaves out costs nothing to leave out, what it
    sends as columns is not made objects first. None for a smaller record (or none): the whole lists
    (`record_lists`) serve it, and the views that ask for the bulk."""
    if record is None or columns is None:
        return None
    from pypto.ir.columns import MARK, read_npz
    from pypto.record import expanded

    ids = ((record.get("tiles") or {}).get("ops") or {}).get("id")
    n = int(ids[MARK]["n"]) if isinstance(ids, dict) and MARK in ids else len(ids or ())
    return expanded(record, read_npz(columns), leave_out, rows) if n > tile_ops else None


def load_trace(path: str) -> dict[str, Any]:
    """{"path", "format", "label", "run"}: a trace file as our swimlane JSON; a file that is not a
    trace this pypto reads is {"error": message} (naming the file and what is wrong)."""
    from pypto.boards.importers import load_any

    try:
        run = load_any(path)
    except (ValueError, OSError) as e:
        return {"path": path, "error": str(e)}
    return {"path": path, "format": run.board, "label": Path(path).name, "run": run.to_json()}


def load_pass_dump(path: str, source: str | None = None, within: str | None = None) -> dict[str, Any]:
    """A `passes_dump/` folder's pass table (`pypto.boards.passes_dump.dump_json`; the kernel file looked for
    only `within` that folder when given); a folder that is none is {"error": message}."""
    from pypto.boards.passes_dump import dump_json

    try:
        return dump_json(path, source, within)
    except (ValueError, OSError) as e:
        return {"path": path, "error": str(e)}


def load_pass_dump_pass(path: str, index: int, source: str | None = None,
                        within: str | None = None) -> dict[str, Any]:
    """One snapshot of a `passes_dump/` folder with its diff against the one before
    (`pypto.boards.passes_dump.pass_json`); {"error": message} when there is no such folder or snapshot."""
    from pypto.boards.passes_dump import pass_json

    try:
        return pass_json(path, index, source, within=within)
    except (ValueError, OSError) as e:
        return {"path": path, "error": str(e)}


def file_path(uri_or_path: str) -> str:
    """A document URI (file://…) or path as the absolute path Python will see."""
    if uri_or_path.startswith("file://"):
        return str(Path(unquote(urlparse(uri_or_path).path)))
    return str(Path(uri_or_path).resolve())
