"""The editor features, as pure functions from a document's results to LSP objects.

Diagnostics, hovers, code lenses, inlay hints and code actions are all read off the
results the workers sent (`server.state.Result`: the analysis JSON with its editor view),
so each is a dictionary lookup and some formatting — no compiling, no record parsing, no
pypto import in the language server. Kept apart from the server wiring so the wording
and the ranges can be read (and changed) in one place.

Ranges: the records count lines from 1 and columns from 0 (Python's convention); LSP
counts both from 0. A record range whose end is column 0 of its own line means "the
whole line". A record column is Python's: UTF-8 bytes into the line (`co_positions`,
`ast`), except where a producer says otherwise (a finding's `where`, a SyntaxError: code
points); LSP's is in the encoding the client negotiated (UTF-16 unless it offered another).
`Lines` is the one place that converts. Everything shown about time says where it came
from (the swimlane's clock: "simulated …" or "measured …").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lsprotocol import types as lsp

from server import protocol as P
from server import quickfix
from server.capture_runner import Found, Target
from server.state import Document, Kernel, Result

Json = Any
SOURCE = "pypto"
CAPTURE_COMMAND = "pypto.capture"  # workspace/executeCommand: run `pypto-ide capture` (server.capture_runner)
# workspace/executeCommand: a kernel compiled again, its advice checked within a longer bound (`live.check_advice`)
CHECK_ADVICE_COMMAND = "pypto.checkAdvice"
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "info": lsp.DiagnosticSeverity.Information}
# what a buffer peak is (pypto.compiler.block_ir.PEAK_LABEL, the CLI's and the listing's words): the
# highest byte of the leaf's buffer allocation, the second copies of double-buffered loads included
PEAK_LABEL = "allocated, double buffers included"
FAILURE_TEXT = {
    "timeout": "was stopped: it ran past the time limit",
    "memory": "was stopped: it ran out of its memory limit",
    "crashed": "killed its worker process",
    "error": "could not be analysed",
    "cancelled": "was cancelled",
}


def norm(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


UTF8 = "utf-8"  # Python's columns: bytes of the line's UTF-8 (co_positions, ast col_offset)
CHARS = "utf-32"  # code points: Python str indices (SyntaxError.offset, a finding's `where`)
_EOL = re.compile(r"\r\n|\r|\n")  # what Python and LSP end lines with (not str.splitlines's \f, \u2028, …)


class Lines(list[str]):
    """A document's lines and the client's position encoding ("utf-16" unless it negotiated
    "utf-8" or "utf-32"): every LSP position the server sends is made here from a record's."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        super().__init__(_EOL.split(text))
        self.encoding = encoding

    def text(self, line1: int) -> str:
        return self[line1 - 1] if 0 < line1 <= len(self) else ""

    def units(self, s: str) -> int:
        """The length of `s` in the client's code units."""
        if self.encoding == UTF8:
            return len(s.encode("utf-8"))
        if self.encoding == CHARS:
            return len(s)
        return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)  # UTF-16: astral characters are two units

    def char(self, line1: int, col: int, unit: str = UTF8) -> int:
        """Column `col` of 1-based line `line1`, counted in `unit`, as the client counts it (a
        column inside a character is that character's start; past the end, the line's end)."""
        if col <= 0:
            return 0
        text = self.text(line1)
        prefix = text.encode("utf-8")[:col].decode("utf-8", errors="ignore") if unit == UTF8 else text[:col]
        return self.units(prefix)

    def width(self, line1: int) -> int:
        return self.units(self.text(line1))

    def indent(self, line1: int) -> int:
        text = self.text(line1)
        return self.units(text[:len(text) - len(text.lstrip())])

    def position(self, line1: int, col: int, unit: str = UTF8) -> lsp.Position:
        return lsp.Position(max(0, line1 - 1), self.char(line1, col, unit))


# The units of the columns the analyses send (see the module's docstring): a health finding's
# `where` and edits are code points (pypto.analysis.health converts); a precision finding's and
# the advisor's edits are the spans' own (UTF-8 bytes).
FINDING_UNIT = {"health": CHARS, "precision": UTF8}
SUGGESTION_UNIT = UTF8


def lines_of(doc: Document) -> Lines:
    return Lines(doc.text, doc.encoding)


def make_range(lines: Lines, line: int, col: int = 0, end_line: int = 0, end_col: int = 0,
               unit: str = UTF8) -> lsp.Range:
    """A record range (1-based lines, 0-based columns in `unit`; end column 0 on the same line =
    to the end; no columns at all = the line's text without its indentation)."""
    line = max(1, line)
    end_line = max(line, end_line or line)
    if end_col <= 0 and end_line == line and col <= 0:
        return lsp.Range(lsp.Position(line - 1, lines.indent(line)), lsp.Position(line - 1, lines.width(line)))
    start = lines.position(line, col, unit)
    if end_col <= 0 and end_line == line:
        return lsp.Range(start, lsp.Position(line - 1, max(start.character, lines.width(line))))
    return lsp.Range(start, lines.position(end_line, end_col, unit))


def where_range(lines: Lines, where: Mapping[str, Json] | None, path: str, unit: str = UTF8) -> lsp.Range | None:
    if not where or norm(str(where.get("file", ""))) != norm(path):
        return None
    return make_range(lines, int(where["line"]), int(where.get("col", 0)), int(where.get("end_line", 0)),
                      int(where.get("end_col", 0)), unit)


def def_range(lines: Lines, r: Result | Kernel) -> lsp.Range:
    """The kernel's name on its `def` line (`def_col` in code points)."""
    text = lines.text(r.def_line)
    name = r.name
    col = r.def_col if text[r.def_col:r.def_col + len(name)] == name else max(0, text.find(name))
    return lsp.Range(lines.position(r.def_line, col, CHARS), lines.position(r.def_line, col + len(name), CHARS))


def overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


# ---- formatting ---------------------------------------------------------------------------------

def n(x: float | int) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:,.1f}"


def us(x: float) -> str:
    return f"{x:,.1f} µs" if x >= 10 else f"{x:,.2f} µs"


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def nbytes(b: int) -> str:
    return f"{b / 1024:,.1f} KiB" if b >= 1024 else f"{b} B"


def shape_text(node: Mapping[str, Json]) -> str:
    if node.get("shape") is None:
        return "—"
    return f"{node.get('dtype') or ''}[{', '.join(str(d) for d in node['shape'])}]"


def clock_word(summary: Mapping[str, Json]) -> str:
    clock = str(summary.get("clock", ""))
    return clock.split(" (")[0] if clock else str(summary.get("board", ""))


def task_runs_text(runs: list[list[int]]) -> str:
    parts = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs[:4]]
    return ", ".join(parts) + (", …" if len(runs) > 4 else "")


# ---- diagnostics --------------------------------------------------------------------------------

def _diag(rng: lsp.Range, message: str, severity: lsp.DiagnosticSeverity, code: str,
          data: Json = None, related: list[lsp.DiagnosticRelatedInformation] | None = None) -> lsp.Diagnostic:
    return lsp.Diagnostic(range=rng, message=message, severity=severity, code=code, source=SOURCE, data=data,
                          related_information=related or None)


def _related(doc: Document, lines: Lines, items: Iterable[Mapping[str, Json]] | None,
             unit: str = UTF8) -> list[lsp.DiagnosticRelatedInformation]:
    """An error's or finding's `related` places in this document ({line, col, end_line, end_col,
    message}) as LSP related information."""
    out = []
    for x in items or ():
        if not isinstance(x, Mapping) or not x.get("line"):
            continue
        rng = make_range(lines, int(x["line"]), int(x.get("col", 0)), int(x.get("end_line", 0)),
                         int(x.get("end_col", 0)), unit)
        out.append(lsp.DiagnosticRelatedInformation(lsp.Location(doc.uri, rng), str(x.get("message", ""))))
    return out


def _finding_message(f: Mapping[str, Json]) -> str:
    out = str(f.get("title", ""))
    if f.get("why"):
        out += "\n" + str(f["why"])
    if f.get("suggestion"):
        out += "\nTry: " + str(f["suggestion"])
    return out


def _module_message(message: str, kernel: str) -> str:
    """What stopped the module importing, and that `kernel` was not compiled: an exception it raised
    (`KeyboardInterrupt`, `SystemExit: 3` and `GeneratorExit` too) reads "KeyboardInterrupt while
    importing the module: k was not compiled"."""
    if message.endswith(" while importing"):
        return f"{message} the module: {kernel} was not compiled"
    return f"{message} (while importing the module to compile {kernel})"


def kernel_diagnostics(doc: Document, r: Result, lines: Lines) -> list[lsp.Diagnostic]:
    out: list[lsp.Diagnostic] = []
    data = {"kernel": r.name}
    if r.not_a_kernel:
        return out
    if r.module_error is not None:
        e = r.module_error
        rule = str(e.get("rule", "python.import"))
        rng = make_range(lines, int(e["line"]), int(e.get("col", 0)), int(e.get("end_line", 0)),
                         int(e.get("end_col", 0)), CHARS if rule == "python.syntax" else UTF8)
        out.append(_diag(rng, _module_message(str(e["message"]), r.name), lsp.DiagnosticSeverity.Error, rule,
                         data))
        return out
    if r.failure is not None:
        kind, message = r.failure
        first = message.strip().splitlines()[0] if message.strip() else kind
        out.append(_diag(def_range(lines, r), f"{r.name} {FAILURE_TEXT.get(kind, kind)} — {first}",
                         lsp.DiagnosticSeverity.Error, f"worker.{kind}", data))
        return out
    if r.analysis is None:
        return out
    err = r.error
    if err is not None:
        rule = str(err.get("rule") or "compile.error")
        if rule == "inputs.missing":
            msg = (f"{r.name} cannot be compiled: it has no example inputs. {err['message']}")
            out.append(_diag(def_range(lines, r), msg, lsp.DiagnosticSeverity.Warning, rule, data))
        else:
            line = int(err.get("line") or r.def_line)
            rng = (def_range(lines, r) if line in (r.line, r.def_line) and not err.get("end_col")
                   else make_range(lines, line, int(err.get("col", 0)), int(err.get("end_line", 0)),
                                   int(err.get("end_col", 0))))
            out.append(_diag(rng, str(err["message"]), lsp.DiagnosticSeverity.Error, rule, data,
                             _related(doc, lines, err.get("related"))))
        return out
    for source, unit in ((r.analysis.get("health"), FINDING_UNIT["health"]),
                         (r.analysis.get("precision"), FINDING_UNIT["precision"])):
        for f in (source or {}).get("findings", ()) if isinstance(source, dict) else ():
            rng = where_range(lines, f.get("where"), doc.path, unit) or def_range(lines, r)
            severity = SEVERITY.get(str(f.get("severity")), lsp.DiagnosticSeverity.Hint)
            out.append(_diag(rng, _finding_message(f), severity, str(f.get("rule")), data,
                             _related(doc, lines, f.get("related"), unit)))
    prec = r.analysis.get("precision")
    if isinstance(prec, dict) and isinstance(prec.get("error"), dict):
        e = prec["error"]
        out.append(_diag(make_range(lines, int(e["line"]), int(e.get("col", 0))), f"precision: {e['message']}",
                         lsp.DiagnosticSeverity.Warning, "precision.error", data))
    return out


def diagnostics(doc: Document) -> list[lsp.Diagnostic]:
    """Everything wrong with the document's latest version, as far as the results go.

    A kernel whose result is for an older version is shown only while its lines still line
    up (`Document.aligned`); a module-level error is shown once."""
    lines = lines_of(doc)
    out: list[lsp.Diagnostic] = []
    if doc.syntax_error is not None:
        e = doc.syntax_error
        out.append(_diag(make_range(lines, e["line"], e["col"], e["end_line"], e["end_col"], CHARS), e["message"],
                         lsp.DiagnosticSeverity.Error, e["rule"]))
        return out
    seen: set[tuple[int, int, str, str]] = set()
    for k in doc.kernels.values():
        r = doc.aligned(k.name)
        if r is None:
            continue
        for d in kernel_diagnostics(doc, r, lines):
            key = (d.range.start.line, d.range.start.character, str(d.code), d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
    return out


# ---- hover --------------------------------------------------------------------------------------

def results_at(doc: Document, line1: int) -> list[tuple[Result, Mapping[str, Json]]]:
    """(result, line entry) of every kernel whose record has nodes made at `line1`."""
    out = []
    for name in doc.kernels:
        r = doc.results.get(name)
        if r is None or not r.ok:
            continue
        entry = r.editor["lines"].get(str(line1)) if r.editor else None
        if entry is not None:
            out.append((r, entry))
    return out


def capture_text(doc: Document, line1: int) -> list[str]:
    """On a kernel's decorator or `def` line: where its inputs came from, when a capture gave them
    (docs/capture.md): the command, when it ran, in which folder, the capture's file."""
    out = []
    for k in doc.kernels.values():
        if not k.line <= line1 <= k.def_line:
            continue
        r = doc.results.get(k.name)
        shown = r if r is None or r.ok else r.last_good
        got = (shown.analysis or {}).get("inputs_from") if shown is not None else None
        if not isinstance(got, Mapping):
            continue
        text = [f"**pypto** · `{k.name}` · inputs captured from `{got.get('command')}` at {got.get('captured_at')}", ""]
        if got.get("cwd"):
            text.append(f"- ran in `{got['cwd']}`")
        if got.get("file"):
            text.append(f"- capture: `{got['file']}`")
        if got.get("signature"):
            params = got.get("parameters")
            kept = f" ({', '.join(map(str, params))})" if isinstance(params, list) and params else ""
            text.append(f"- signature `{got['signature']}`{kept}")
        if got.get("kernel_changed"):
            text.append("- the kernel has changed since it was captured: its inputs may no longer fit it")
        if shown is not r:
            text.append("- (the last good compile's; the kernel's latest compile failed)")
        out.append("\n".join(text))
    return out


def ahead_text(doc: Document, line1: int) -> str | None:
    """On a tile-shape call whose next edits are compiled ahead (`compileAhead`, `server.live`): each edit's figures
    on the board beside the kernel's now, or why it did not compile — while the document is the version they are
    edits of. Rows come as the compiles end."""
    got = doc.ahead_run
    if got is None or got.version != doc.version or got.line != line1 or not got.rows:
        return None
    r = doc.current(got.kernel)
    now = (r.summary if r is not None else None) or {}
    base = now.get("makespan_us")
    rows = ["| edit | makespan | tasks | against now |", "|---|---|---|---|"]
    for row in got.rows:
        s = row.get("summary") or {}
        mk = s.get("makespan_us")
        if row.get("current"):
            rows.append(f"| `{row['call']}` | {us(float(mk)) if mk else '—'} | {n(int(s.get('tasks') or 0))} | "
                        f"the program as it is |")
        elif isinstance(mk, (int, float)) and mk > 0:
            against = f"{base / mk:.2f}× faster" if isinstance(base, (int, float)) and base > mk else \
                f"{mk / base:.2f}× slower" if isinstance(base, (int, float)) and base > 0 else "—"
            rows.append(f"| `{row['call']}` | {us(float(mk))} | {n(int(s.get('tasks') or 0))} | {against} |")
        else:
            why = str(row.get("error") or "no record").splitlines()[0][:120].replace("|", "\\|")
            rows.append(f"| `{row['call']}` | — | — | not compiled: {why} |")
    return "\n".join([f"**pypto** · `{got.kernel}` · these edits of the call are compiled ahead "
                      f"(`pypto.compileAhead`): typed, one is shown at once", "", *rows, "",
                      f"Figures {clock_word(now) or 'simulated'} on the {now.get('board', 'sim')} board."])


def hover_text(doc: Document, line1: int) -> str | None:
    parts = capture_text(doc, line1)
    for r, entry in results_at(doc, line1):
        ed = r.editor
        s = r.summary or {}
        assert ed is not None
        nodes = [ed["nodes"][str(i)] for i in entry["nodes"] if str(i) in ed["nodes"]]
        sides = [x["branch"] for x in nodes if x.get("branch")]
        ops = [x for x in nodes if x["op"] not in ("param",) and not x.get("branch")]
        if sides:
            parts.append(branch_text(r.name, line1, sides))
        if not ops:
            continue
        rows = ["| op | output | tile shape | tiles |", "|---|---|---|---|"]
        for x in ops:
            tile = "—"
            if x.get("tile_shape"):
                tile = f"[{', '.join(map(str, x['tile_shape']))}]"
                if x.get("tile_dims") is not None and x.get("tile_config") is not None:
                    tile += f" (config {x['tile_config']})"
            tiles = n(int(x["tiles"])) if x["tiles"] else "—"
            if x["tiles"] and x.get("instances", 0) > 1:
                tiles += f" ({n(x['tiles'] // x['instances'])} × {x['instances']} instances)"
            rows.append(f"| `{x['op']}` | {shape_text(x)} | {tile} | {tiles} |")
        text = [f"**pypto** · `{r.name}` · line {line1}", "", *rows, ""]
        if r.lowering is not None:  # its tensor stage, shown while the rest lowers
            text.append(f"Its tiles and tasks follow: the kernel is being lowered to {n(r.lowering)} tile ops.")
            parts.append("\n".join(text))
            continue
        if entry["task_count"]:
            leaves = ", ".join(str(v) for v in entry["leaves"])
            text.append(
                f"Feeds leaf {leaves} · {n(entry['task_count'])} tasks ({task_runs_text(entry['tasks'])}): "
                f"{us(entry['task_us'])} of task time = {pct(entry['busy_share'])} of all task time, "
                f"running during {pct(entry['wall_share'])} of the {us(float(s.get('makespan_us', 0)))} makespan "
                f"({clock_word(s)}, {s.get('board', '')} board).")
        else:
            text.append("Runs no task of its own (a view, a parameter or loop bookkeeping).")
        text += cost_text(entry, s)
        if s.get("bound"):
            text += ["", f"Bound: **{s['bound']}** — {s.get('why', '')}"]
        parts.append("\n".join(text))
    ahead = ahead_text(doc, line1)
    if ahead is not None:
        parts.append(ahead)
    return "\n\n---\n\n".join(parts) if parts else None


def cost_text(entry: Mapping[str, Json], summary: Mapping[str, Json]) -> list[str]:
    """The line's own cost, like a profiler's source view: its share of the program's instruction
    cycles on the sim board's core model, per pipe, and its heaviest instructions."""
    cost = entry.get("cost")
    if summary.get("board") not in (None, "sim"):
        return ["", f"Cost per line: not measured on the {summary.get('board')} board (it times whole tasks, "
                    f"not instructions); profile on the sim board for the model's figures."]
    if not isinstance(cost, Mapping) or not cost.get("cycles"):
        return []
    pipes = " · ".join(f"{p} {n(int(c))}" for p, c in sorted(cost["pipes"].items(), key=lambda kv: -kv[1]))
    ops = ", ".join(f"`{op}` {pct(c / cost['cycles'])}" for op, c in cost.get("opcodes", ()))
    return ["", f"Cost: **{pct(float(cost['share']))}** of the program's instruction cycles — {pipes} cycles "
                f"over all tasks ({ops}; simulated, the sim board's core model)."]


def branch_text(kernel: str, line1: int, sides: list[Mapping[str, Json]]) -> str:
    """The hover of a run-time `if`: each side, how often it ran (for which loop indices) and its cost."""
    cond = sides[0].get("condition", "")
    text = [f"**pypto** · `{kernel}` · line {line1}", "", f"Run-time branch `if {cond}`: both sides are compiled; "
            f"each runs only where the condition says.", ""]
    for side in ("then", "else"):
        of = [b for b in sides if b["side"] == side]  # one `if` line traced more than once (unrolled) adds up
        if not of:
            continue
        runs = sum(int(b["runs"]) for b in of)
        seen = [w for b in of for w in b["where"] if w][:8]
        where = ", ".join(f"`{w}`" for w in seen) + (" …" if runs > len(seen) else "")
        text.append(f"- **{side}**: ran {n(runs)}×" + (f" ({where})" if seen else "") +
                    f" · {n(sum(int(b['tasks']) for b in of))} tasks, "
                    f"{us(sum(float(b['task_us']) for b in of))} of task time")
    return "\n".join(text)


# ---- code lenses --------------------------------------------------------------------------------

def _command(title: str, command: str, args: Mapping[str, Json]) -> lsp.Command:
    return lsp.Command(title=title, command=command, arguments=[dict(args)])


def stale_mark(doc: Document, r: Result) -> str:
    """Why the run shown for `r`'s kernel is not the current text's ("" when it is): the document
    does not parse, or the kernel's latest compile failed and its last good run is shown."""
    if doc.syntax_error is not None:
        return f"syntax error at line {doc.syntax_error['line']}"
    if r.ok or r.last_good is None:
        return ""
    if r.error is not None:
        return f"error at line {r.error.get('line', r.def_line)}"
    return f"{r.failure[0]} at line {r.def_line}" if r.failure is not None else "not compiled"


def best_gain(doc: Document, r: Result) -> P.BestGain | None:
    """The best verified gain the kernel's advice offers — a health finding's checked tile shape
    (`numbers.gain`) or a tuning suggestion, from its compile or its finished tile search — or None:
    what the health panel's advice list has at its top. The kernel's CodeLens and its
    `pypto/recordChanged` (the status bar) both say this one figure. None while the result is
    interim (its advice's shapes are still being simulated: nothing is verified yet), stale (the run
    shown is not the current text's) or failed, and when no checked shape is faster."""
    if r.interim or not r.ok or stale_mark(doc, r):
        return None
    outs = [r.analysis or {}]
    for what, fut in r.extras.items():  # "suggest", "suggest+precision": a tile search's answer
        if "suggest" in what.split("+") and fut.done() and not fut.cancelled() and fut.exception() is None:
            outs.append(fut.result() or {})
    summary = r.summary or {}
    clock, board = clock_word(summary), str(summary.get("board", ""))

    def line(edits: Any) -> int | None:  # the first call the advice changes, if it is in this document
        where = edits[0].get("where") if isinstance(edits, Sequence) and edits and isinstance(edits[0], Mapping) \
            else None
        if not isinstance(where, Mapping) or norm(str(where.get("file", ""))) != norm(doc.path):
            return None
        return int(where["line"])

    best: P.BestGain | None = None
    for out in outs:
        found = []
        for f in ((out.get("health") or {}).get("findings") or ()):
            g = (f.get("numbers") or {}).get("gain")
            if isinstance(g, Mapping) and f.get("edits"):
                found.append(P.BestGain(float(g["speedup"]), clock, str(g.get("board", "")), str(g.get("call", "")),
                                        line(f["edits"])))
        found += [P.BestGain(float(x["speedup"]), clock, board, str(x.get("text", "")), line(x.get("edits")))
                  for x in out.get("suggestions") or ()]
        for x in found:
            if x.speedup > 1.0 and (best is None or x.speedup > best.speedup):
                best = x
    return best


def gain_text(g: P.BestGain) -> str:
    """How the CodeLens and the status bar name it: "best advice 1.27× faster (simulated, sim board)"."""
    return f"best advice {g.speedup:.2f}× faster ({g.clock}, {g.board} board)"


def code_lenses(doc: Document) -> list[lsp.CodeLens]:
    lines = lines_of(doc)
    out: list[lsp.CodeLens] = []
    for k in doc.kernels.values():
        r = doc.results.get(k.name)
        at = lsp.Range(lsp.Position(k.line - 1, 0), lsp.Position(k.line - 1, 0))
        args = {"uri": doc.uri, "kernel": k.name}
        if r is None:
            out.append(lsp.CodeLens(range=at, command=_command("pypto: compiling…", "", args)))
            continue
        if r.not_a_kernel:
            continue
        stale = stale_mark(doc, r)
        shown = r if r.ok else r.last_good
        s = shown.summary if shown is not None else None
        if r.ok and r.lowering is not None and not stale:  # a big kernel's tensor graph while it lowers
            out.append(lsp.CodeLens(range=at, command=_command(
                f"pypto: lowering {n(r.lowering)} tile ops… (its tensor graph is shown)", "pypto.openGraph", args)))
            continue
        if s is None or shown is None:
            why = "no record"
            if r.failure is not None:
                why = f"not compiled ({r.failure[0]})"
            elif r.error is not None:
                why = f"not compiled ({r.error.get('rule')})"
            out.append(lsp.CodeLens(range=at, command=_command(f"pypto: {why}", "pypto.openReport", args)))
            continue
        title = (f"pypto: {us(float(s['makespan_us']))} {clock_word(s)} · {n(int(s['tasks']))} tasks · "
                 f"{pct(float(s['utilization']))} utilized · {s['board']} board · {s['bound']}-bound")
        gain = best_gain(doc, r)
        if gain is not None:  # the best verified gain any advice offers: the health panel's top
            title += " · " + gain_text(gain)
        if stale:  # the last good run, marked: the numbers are not the current text's
            title = f"pypto (stale: {stale}): " + title.removeprefix("pypto: ")
        out.append(lsp.CodeLens(range=at, command=_command(title, "pypto.openReport", args)))
        out.append(lsp.CodeLens(range=at, command=_command("graph", "pypto.openGraph", args)))
        out.append(lsp.CodeLens(range=at, command=_command("swimlane", "pypto.openSwimlane", args)))
        captured = (shown.analysis or {}).get("inputs_from")
        if captured:  # the inputs came from `pypto-ide capture` (docs/capture.md): say which run
            out.append(lsp.CodeLens(range=at, command=_command(
                f"inputs: captured from `{captured.get('command')}` at {captured.get('captured_at')}", "", args)))
        if stale or doc.aligned(k.name) is None:
            continue  # the calls' lines may have moved: wait for a new good record
        for tc in r.editor["tile_configs"] if r.editor else ():
            rng = where_range(lines, tc.get("span"), doc.path)
            if rng is None:
                continue
            title = f"{n(int(tc['tiles']))} tiles ({n(int(tc['tile_ops']))} tile ops incl. loads/stores)"
            for space, peak in sorted(tc.get("peak_bytes", {}).items()):
                cap = tc.get("capacity_bytes", {}).get(space, 0)
                title += f" · {space} peak {n(int(peak))} B"
                if cap:
                    title += f" of {nbytes(int(cap))} ({pct(peak / cap)})"
            if tc.get("peak_bytes"):
                title += f" ({PEAK_LABEL})"
            start = lsp.Range(rng.start, rng.start)
            out.append(lsp.CodeLens(range=start, command=_command(
                title, "pypto.openGraph", {**args, "level": "tile", "tileConfig": tc["id"]})))
        tasks = int((r.summary or {}).get("tasks") or 0)
        for knob in r.editor.get("knobs") or () if r.editor else ():  # a PyPTO 3 slice-size constant
            rng = where_range(lines, knob.get("span"), doc.path)
            if rng is None:
                continue
            value, extent = int(knob["value"]), max(int(e) for e in knob["extents"])
            title = (f"{knob['name']}: {n(-(-extent // value))} steps of {n(extent)} · "
                     f"{k.name}: {n(tasks)} tasks")
            out.append(lsp.CodeLens(range=lsp.Range(lsp.Position(rng.start.line, 0), lsp.Position(rng.start.line, 0)),
                                    command=_command(title, "pypto.openSwimlane", args)))
    return out


def capture_lenses(doc: Document, targets: Iterable[Target], cwd: str) -> list[lsp.CodeLens]:
    """"pypto: Capture" on each test function and main block of the document: runs the test (or the
    script) under `pypto-ide capture` in `cwd` (server.capture_runner)."""
    out = []
    for t in targets:
        at = lsp.Range(lsp.Position(t.line - 1, 0), lsp.Position(t.line - 1, 0))
        words = t.command(doc.path, cwd)
        lifted = f" (despite its skip mark: {t.skip})" if t.skip is not None else ""
        out.append(lsp.CodeLens(range=at, command=lsp.Command(
            title="pypto: Capture" + (" (despite its skip mark)" if lifted else ""), command=CAPTURE_COMMAND,
            arguments=[{"command": words, "cwd": cwd, "uri": doc.uri, **_run_skipped(t)}],
            tooltip=f"record the inputs of every kernel this {'test' if t.kind == 'test' else 'script'} calls: "
                    f"pypto-ide capture{' --run-skipped' if lifted else ''} -- {' '.join(words)} (in {cwd}){lifted}")))
    return out


def _run_skipped(t: Target) -> dict[str, bool]:
    """A capture from a test its skip mark would skip runs it (`pypto-ide capture --run-skipped`): the user asked
    for that test."""
    return {"run_skipped": True} if t.skip is not None else {}


# ---- inlay hints --------------------------------------------------------------------------------

def inlay_hints(doc: Document, rng: lsp.Range) -> list[lsp.InlayHint]:
    lines = lines_of(doc)
    out: list[lsp.InlayHint] = []
    done: set[int] = set()
    for k in doc.kernels.values():
        r = doc.aligned(k.name)
        if r is None:
            continue
        stale = stale_mark(doc, r)
        if not r.ok and r.last_good is not None and (r.last_good.line, r.last_good.end_line) == (k.line, k.end_line):
            r = r.last_good  # the kernel's lines line up with its last good run: shown, marked stale
        if not r.ok or r.editor is None:
            continue
        ed = r.editor
        for key, entry in ed["lines"].items():
            line1 = int(key)
            if line1 in done or not (rng.start.line <= line1 - 1 <= rng.end.line) or line1 > len(lines):
                continue
            nodes = [ed["nodes"][str(i)] for i in entry["nodes"] if str(i) in ed["nodes"]]
            shown = [x for x in nodes if x["shape"] is not None and x["op"] not in ("param", "carry", "loop_out")]
            if not shown:
                continue
            last = shown[-1]
            label = f" {shape_text(last)}"
            tiles = sum(int(x["tiles"]) for x in shown)
            if tiles:
                label += f" · {n(tiles)} tiles"
            tip = f"{r.name}: {', '.join(x['op'] for x in shown)}"
            cost = entry.get("cost")
            if isinstance(cost, Mapping) and float(cost.get("share", 0.0)) >= 0.005:
                # the line's heat: its share of the program's instruction cycles (sim board's core model)
                label += f" · {pct(float(cost['share']))} of cycles"
                tip += (f"\n{pct(float(cost['share']))} of the program's instruction cycles on the sim board's core "
                        f"model (simulated): " + ", ".join(f"{p} {n(int(c))}" for p, c in cost["pipes"].items()))
            if stale:  # first: VS Code cuts a hint at its maximum length, and the mark must show
                label = " stale ·" + label
                tip += f"\n(stale: {stale} — the last good run)"
            done.add(line1)
            out.append(lsp.InlayHint(position=lsp.Position(line1 - 1, lines.width(line1)), label=label,
                                     kind=lsp.InlayHintKind.Type, padding_left=True, tooltip=tip))
    return out


# ---- code actions -------------------------------------------------------------------------------

def _edit(doc: Document, lines: Lines, edits: Iterable[Mapping[str, Json]], unit: str) -> lsp.WorkspaceEdit | None:
    out = []
    for e in edits:
        rng = where_range(lines, e.get("where"), doc.path, unit)
        if rng is None:
            return None
        out.append(lsp.TextEdit(range=rng, new_text=str(e["text"])))
    return lsp.WorkspaceEdit(changes={doc.uri: out}) if out else None


def finding_actions(doc: Document, rng: lsp.Range, context: Iterable[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """Health (and precision) findings that carry edits, under the requested range."""
    lines = lines_of(doc)
    out = []
    ctx = list(context)
    for k in doc.kernels.values():
        r = doc.current(k.name)
        if r is None or r.analysis is None:
            continue
        for source, unit in ((r.analysis.get("health"), FINDING_UNIT["health"]),
                             (r.analysis.get("precision"), FINDING_UNIT["precision"])):
            for f in (source or {}).get("findings", ()) if isinstance(source, dict) else ():
                if not f.get("edits") and not f.get("fixes"):
                    continue
                where = where_range(lines, f.get("where"), doc.path, unit)
                if where is None or not overlaps(where, rng):
                    continue
                diags = [d for d in ctx if d.code == f.get("rule") and d.range == where]
                # alternatives ("use 96 or 104"): one quick fix each; else the finding's one fix
                choices = ([(str(x.get("title", "")), x.get("edits") or ()) for x in f["fixes"]] if f.get("fixes")
                           else [(str(f.get("suggestion") or f.get("title")), f["edits"])])
                for title, edits in choices:
                    edit = _edit(doc, lines, edits, unit)
                    if edit is not None:
                        out.append(lsp.CodeAction(title=f"pypto ({f['rule']}): {title}",
                                                  kind=lsp.CodeActionKind.QuickFix, diagnostics=diags or None,
                                                  edit=edit))
    return out + check_actions(doc, rng, ctx)


def check_bound(estimate: float) -> float:
    """The bound a check of the advice is asked for when its shapes' compiles are expected to take `estimate`
    seconds: twice that, and at least ten seconds more (the estimate is the kernel as written's compile scaled by the
    shapes' tiles, summed over its findings, which may share shapes; tracing and simulating them come on top; the
    check ends when it has simulated them)."""
    return round(max(2 * estimate, estimate + 10), 1)


def _unchecked(doc: Document, name: str) -> list[Mapping[str, Json]]:
    """The kernel's current findings whose proposed tile shapes its check of the advice left unsimulated and a longer
    bound would simulate (`numbers["check_seconds"]`); none while its advice is being checked."""
    r = doc.current(name)
    health = r.analysis.get("health") if r is not None and r.analysis is not None and not r.interim else None
    return [f for f in (health.get("findings", ()) if isinstance(health, dict) else ())
            if isinstance((f.get("numbers") or {}).get("check_seconds"), (int, float))]


def advice_bound(doc: Document, name: str, found: list[Mapping[str, Json]] | None = None) -> float | None:
    """The bound a longer check of the kernel's advice is asked for (`check_bound` of its findings' estimates; `found`:
    its `_unchecked` findings, when known), None when no finding has shapes to check."""
    found = _unchecked(doc, name) if found is None else found
    return check_bound(sum(float(f["numbers"]["check_seconds"]) for f in found)) if found else None


def check_actions(doc: Document, rng: lsp.Range, context: Iterable[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """Health findings under the range whose proposed tile shapes the check of the advice did not reach within its
    bound (their `check_seconds`: what simulating them is expected to take): one action per kernel, which checks all
    of its advice with a longer one."""
    lines = lines_of(doc)
    out = []
    ctx = list(context)
    for k in doc.kernels.values():
        unchecked = _unchecked(doc, k.name)
        here = [(f, where) for f in unchecked
                for where in [where_range(lines, f.get("where"), doc.path, FINDING_UNIT["health"])]
                if where is not None and overlaps(where, rng)]
        bound = advice_bound(doc, k.name, unchecked)
        if not here or bound is None:
            continue
        title = f"pypto: simulate the advice's tile shapes for {k.name} on the sim board (up to {bound:g} s)"
        diags = [d for d in ctx for f, where in here if d.code == f.get("rule") and d.range == where]
        out.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=diags or None,
                                  command=_command(title, CHECK_ADVICE_COMMAND,
                                                   {"uri": doc.uri, "kernel": k.name, "seconds": bound})))
    return out


def erring_tile_calls(doc: Document) -> list[str]:
    """The kernels whose current result is an error about a tile entry and that keep no last good result
    (after a restart): their compile history may know the call's last shape that compiled."""
    out = []
    for k in doc.kernels.values():
        r = doc.current(k.name)
        err = r.error if r is not None else None
        if r is not None and isinstance(err, Mapping) and err.get("tile_entry") and r.last_good is None:
            out.append(k.name)
    return out


def error_actions(doc: Document, rng: lsp.Range, context: Iterable[lsp.Diagnostic],
                  past: Mapping[str, Sequence[Mapping[str, Json]]] | None = None) -> list[lsp.CodeAction]:
    """A compile error's `fixes` under the requested range (the error's own range or the fix's): each
    "use N" of its message, as an edit of the call's argument or of a literal shape; for a tile entry
    also, first, the call's last shape that compiled (server.quickfix; `past`: kernel -> its compile
    history, for a kernel with no last good result in memory)."""
    lines = lines_of(doc)
    out = []
    ctx = list(context)
    for k in doc.kernels.values():
        r = doc.current(k.name)
        err = r.error if r is not None and r.analysis is not None else None
        if r is None or not isinstance(err, Mapping):
            continue
        fixes = quickfix.tile_entry_fixes(r, err, doc.text, (past or {}).get(k.name, ())) + list(err.get("fixes") or ())
        if not fixes:
            continue
        where = make_range(lines, int(err["line"]), int(err.get("col", 0)), int(err.get("end_line", 0)),
                           int(err.get("end_col", 0)))
        for fx in fixes:
            at = make_range(lines, int(fx["line"]), int(fx["col"]), int(fx.get("end_line", 0)), int(fx["end_col"]))
            if not (overlaps(where, rng) or overlaps(at, rng)):
                continue
            diags = [d for d in ctx if d.code == err.get("rule") and d.range == where]
            edit = lsp.WorkspaceEdit(changes={doc.uri: [lsp.TextEdit(range=at, new_text=str(fx["text"]))]})
            out.append(lsp.CodeAction(title=f"pypto: {fx.get('title') or 'use ' + str(fx['text'])}",
                                      kind=lsp.CodeActionKind.QuickFix, diagnostics=diags or None, edit=edit,
                                      is_preferred=not out))
    return out


def missing_inputs(doc: Document, rng: lsp.Range,
                   context: Iterable[lsp.Diagnostic]) -> list[tuple[str, lsp.Diagnostic]]:
    """(kernel, diagnostic) of each "cannot make example inputs" warning under the range."""
    out = []
    for d in context:
        data = d.data if isinstance(d.data, Mapping) else {}
        kernel = data.get("kernel")
        if d.code == "inputs.missing" and isinstance(kernel, str) and kernel in doc.kernels and overlaps(d.range, rng):
            out.append((kernel, d))
    return out


def capture_actions(kernel: str, diag: lsp.Diagnostic, found: Iterable[Found], cwd: str) -> list[lsp.CodeAction]:
    """"Capture inputs from TEST" for each test found that names the kernel (server.capture_runner)."""
    out = []
    # a test that runs as it is first, then one with a skip mark, then a runner function (`capture_runner._runners`)
    for f in sorted(found, key=lambda f: (f.target.kind == "call", f.target.skip is not None)):
        words = f.target.command(f.path, cwd)
        where = os.path.relpath(f.path, cwd) if f.path.startswith(cwd.rstrip(os.sep) + os.sep) else f.path
        title = (f"pypto: Capture inputs by calling {where}::{f.target.name}()" if f.target.kind == "call" else
                 f"pypto: Capture inputs from {where}::{f.target.name}")
        if f.target.skip is not None:
            title += " (despite its skip mark)"
        out.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                                  is_preferred=not out, command=lsp.Command(
                                      title=title, command=CAPTURE_COMMAND,
                                      arguments=[{"command": words, "cwd": cwd, "kernel": kernel,
                                                  **_run_skipped(f.target)}])))
    return out


def _editor_items_at(doc: Document, rng: lsp.Range, key: str,
                     from_line_start: bool) -> list[tuple[Result, Mapping[str, Json]]]:
    """(result, item) of every item of the current results' editor view `key` whose span meets the range
    (from its line's start with `from_line_start`)."""
    lines = lines_of(doc)
    out = []
    for k in doc.kernels.values():
        r = doc.current(k.name)
        if r is None or not r.ok or r.editor is None:
            continue
        for item in r.editor.get(key) or ():
            where = where_range(lines, item.get("span"), doc.path)
            if where is not None and from_line_start:
                where = lsp.Range(lsp.Position(where.start.line, 0), where.end)
            if where is not None and overlaps(where, rng):
                out.append((r, item))
    return out


def tile_calls_at(doc: Document, rng: lsp.Range) -> list[tuple[Result, Mapping[str, Json]]]:
    """(result, tile config) of every set_*_tile_shapes call under the range (current results only)."""
    return _editor_items_at(doc, rng, "tile_configs", from_line_start=False)


def knobs_at(doc: Document, rng: lsp.Range) -> list[tuple[Result, Mapping[str, Json]]]:
    """(result, knob) of every PyPTO 3 slice-size constant under the range (current results only): the
    lines the advisor's values for them edit (`pypto.analysis.knobs`)."""
    return _editor_items_at(doc, rng, "knobs", from_line_start=True)


def suggestion_actions(doc: Document, r: Result, suggestions: Iterable[Mapping[str, Json]],
                       config: int | None = None) -> list[lsp.CodeAction]:
    """The advisor's tile shapes as quick fixes (the best one preferred)."""
    lines = lines_of(doc)
    out = []
    clock = clock_word(r.summary or {})
    for s in suggestions:
        if config is not None and s.get("config") not in (None, config):
            continue
        edit = _edit(doc, lines, s.get("edits", ()), SUGGESTION_UNIT)
        if edit is None:
            continue
        title = (f"pypto: {s['text']} — {us(float(s['makespan_before_us']))} → "
                 f"{us(float(s['makespan_after_us']))} {clock} ({float(s['speedup']):.1f}× faster)")
        out.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, edit=edit,
                                  is_preferred=not out, data={"kernel": r.name, "rank": s.get("rank")}))
    return out
