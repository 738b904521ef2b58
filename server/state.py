"""What the language server remembers: open documents, their kernels, and each kernel's result.

A document version's kernels are found by parsing it here (module-level functions with a
`…jit` decorator), instantly and without running anything, so a change can be matched
against the work in flight the moment it arrives. Each kernel gets a *key*: the hash of
the analysis settings, the file's path, the kernel's own lines and position, and every
line outside all kernels (imports, constants, helpers). A result is reused for as long as
its key is current — typing in one kernel recompiles that kernel only; moving a kernel
(a line added above it) or touching shared code recompiles the ones affected.

A `Result` is the worker's answer for one key (`server.analyze.analyze_kernel` with the
editor view, or a `JobFailed`), with the lazily computed extras (advisor suggestions,
precision, the record for the panels) cached beside it. Only the latest result per kernel is
kept, so a record held for the panels is dropped by the next compile of that kernel.
Line numbers here are the record's: 1-based.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Json = Any


@dataclass(frozen=True)
class Kernel:
    """One kernel of one document version."""

    name: str
    line: int  # its first line (the first decorator), 1-based
    end_line: int
    def_line: int  # the `def` line
    def_col: int  # column of its name on the def line
    key: str


@dataclass
class Result:
    """The worker's answer for one kernel key."""

    key: str
    name: str
    line: int
    def_line: int
    def_col: int
    end_line: int = 0
    analysis: dict[str, Json] | None = None  # analyze_kernel's JSON
    failure: tuple[str, str] | None = None  # (JobFailed kind, message)
    module_error: dict[str, Json] | None = None  # the module failed to import: its error (list_kernels)
    version: int = 0  # the document version it was last published for
    seconds: float = 0.0
    extras: dict[str, asyncio.Future[Any]] = field(default_factory=dict)  # "suggest"/"precision"/"record" -> job
    # this result is an error or a failure: the kernel's last good result, shown marked stale
    last_good: Result | None = None
    interim: bool = False  # shown before its job ended: the advice's tile shapes are still being simulated
    # the interim answer shown before this one, when there was one: what a later compile that reuses this
    # result shows while it checks the advice again (`server.analyze.reuse_answer`)
    interim_analysis: dict[str, Json] | None = None

    @property
    def reused(self) -> bool:
        """Its job found the kernel's traced program unchanged and reused the last compile (or its record)."""
        return bool(self.analysis and self.analysis.get("reused"))

    @property
    def lowering(self) -> int | None:
        """The tile ops a big kernel is being lowered to, while its tensor graph is shown
        (`server.analyze._graph_first`); None for a record of the whole compile."""
        got = (self.analysis or {}).get("lowering")
        return int(got["tile_ops"]) if isinstance(got, dict) and isinstance(got.get("tile_ops"), int) else None

    @property
    def error(self) -> dict[str, Json] | None:
        return None if self.analysis is None else self.analysis.get("error")

    @property
    def summary(self) -> dict[str, Json] | None:
        return None if self.analysis is None else self.analysis.get("summary")

    @property
    def editor(self) -> dict[str, Json] | None:
        return None if self.analysis is None else self.analysis.get("editor")

    @property
    def not_a_kernel(self) -> bool:
        """The parse took it for a kernel (a `…jit` decorator), the module says it is not a pypto one."""
        return self.failure is not None and self.failure[0] == "not-a-kernel"

    @property
    def ok(self) -> bool:
        return self.analysis is not None and self.error is None and self.editor is not None

    def cancel_extras(self) -> None:
        for f in self.extras.values():
            if not f.done():
                f.cancel()


@dataclass
class AheadRun:
    """The compiles ahead of one tile-shape call's edits (`LiveCompiler.compile_ahead`): what they are edits of, the
    task running them, and a row per edit as its compile ends (what the call's hover shows: `features.ahead_text`)."""

    version: int
    kernel: str
    config: int  # the tile config's id
    line: int  # the call's line, 1-based (0: unknown)
    task: asyncio.Task[None] | None = None
    rows: list[dict[str, Json]] = field(default_factory=list)


@dataclass
class Document:
    uri: str
    path: str
    version: int
    text: str
    kernels: dict[str, Kernel] = field(default_factory=dict)  # of the latest parsed version, in order
    parsed_version: int = -1
    parsed: Parsed | None = None  # the latest version that parsed (`parse_version` starts from it)
    syntax_error: dict[str, Json] | None = None  # the latest version does not parse
    shown_stale: bool = False  # the client was sent the syntax error as each kernel's record: undo it on a parse
    results: dict[str, Result] = field(default_factory=dict)  # kernel name -> latest result
    pending: dict[str, asyncio.Future[Result]] = field(default_factory=dict)  # key -> analysis in flight
    update: asyncio.Task[None] | None = None
    changed_at: float = 0.0  # time.monotonic() of the latest change
    burst_until: float = 0.0  # time.monotonic() until which a change is part of a burst of them (`LiveCompiler.change`)
    panels: bool = False  # a client asked for records (pypto/record): compiles include them from now on
    encoding: str = "utf-16"  # the client's position encoding (LSP positionEncoding): what columns count
    accepted: asyncio.Event = field(default_factory=asyncio.Event)  # set as each result is taken (LiveCompiler)
    edited_line: int = 0  # the first line the latest edit changed (1-based; 0: none yet): its kernel compiles first
    watched: str | None = None  # the kernel the panels last asked a record of: next after the edited one
    gains: dict[str, Any] = field(default_factory=dict)  # kernel -> the best gain its last recordChanged said
    # kernel -> its result before the latest (an answer a later compile may reuse: an undo; `server.live`)
    earlier: dict[str, Result] = field(default_factory=dict)
    # kernel -> the bound (seconds) of its next compile's check of the advice, asked for by `LiveCompiler.check_advice`
    recheck: dict[str, float] = field(default_factory=dict)
    # kernel -> fingerprint -> the answer of an edit compiled ahead (`LiveCompiler.compile_ahead`), oldest first
    ahead: dict[str, dict[str, Result]] = field(default_factory=dict)
    ahead_run: AheadRun | None = None  # the compiles ahead of this version (running or done); None after a change

    def current(self, name: str) -> Result | None:
        """The kernel's result if it matches the latest version's key (else None)."""
        k = self.kernels.get(name)
        r = self.results.get(name)
        return r if k is not None and r is not None and r.key == k.key else None

    def aligned(self, name: str) -> Result | None:
        """The kernel's result if its lines still line up with the latest version: current, or
        older but the kernel neither moved nor gained or lost lines (an edit within a line)."""
        k = self.kernels.get(name)
        r = self.results.get(name)
        if k is None or r is None:
            return None
        return r if r.key == k.key or (r.line, r.end_line) == (k.line, k.end_line) else None


def _dotted(e: ast.expr) -> str:
    if isinstance(e, ast.Call):
        return _dotted(e.func)
    if isinstance(e, ast.Attribute):
        return _dotted(e.value) + "." + e.attr
    if isinstance(e, ast.Name):
        return e.id
    return ""


def _is_jit(decorator: ast.expr) -> bool:
    return _dotted(decorator).split(".")[-1] == "jit"


def _defs(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's functions and its classes' methods, and those made inside them (a kernel a factory makes: the worker
    compiles it once `pypto-ide capture` has recorded it, docs/capture.md, and else finds no such
    kernel, which is then not shown); a kernel is not looked for inside another kernel."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in body:
        if isinstance(node, ast.ClassDef):  # a kernel that is a class attribute (found once captured, too)
            out += _defs(node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
            if not any(_is_jit(d) for d in node.decorator_list):
                out += [n for n in _statements(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return sorted(out, key=lambda n: n.lineno)


def _statements(node: ast.AST) -> Iterator[ast.AST]:
    """The statements (and except handlers, match cases) nested in `node`, depth first: a `def` or `class` is a
    statement, so no expression is walked (most of a module's nodes: a 1,700-line file's walk took ~40 ms a version)."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.expr):
            yield child
            yield from _statements(child)


def _qualnames(tree: ast.Module) -> dict[ast.AST, str]:
    """Each function's qualified name as Python spells it (`make.<locals>.kernel`, `Attention.kernel`)."""
    out: dict[ast.AST, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):  # holds no `def` or `class` (a lambda is no FunctionDef)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[child] = f"{prefix}{child.name}"
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


Found = tuple[str, int, int, int, int]  # a kernel's name, first line, last line, def line, column of its name


@dataclass(frozen=True)
class Parsed:
    """A version that parsed, kept for the next one's parse (`parse_version`): its text and where its kernels are."""

    text: str
    found: tuple[Found, ...]
    kernels: tuple[Kernel, ...]


# what ends a line for str.splitlines but not for Python's tokenizer (or, for \r, differently): a text holding one
# is parsed whole
_ODD_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def parse_kernels(text: str, path: str, settings: dict[str, Json]) -> tuple[list[Kernel], dict[str, Json] | None]:
    """The kernels of a version (with keys) and None, or [] and the syntax error."""
    parsed, error = parse_version(text, path, settings)
    return ([] if parsed is None else list(parsed.kernels)), error


def parse_version(text: str, path: str, settings: dict[str, Json],
                  last: Parsed | None = None) -> tuple[Parsed | None, dict[str, Json] | None]:
    """A version's kernels with their keys (and None), or None and its syntax error. With `last`, the parse of an
    earlier version: an edit within one kernel's lines parses those lines only (`_within_kernel`: a 1,700-line
    file of five kernels takes 20-33 ms whole, every change); what it finds is what the whole parse finds
    (tests/test_parse_kernels.py)."""
    lines = text.splitlines()
    found = _within_kernel(last, text, lines) if last is not None else None
    if found is None:
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as e:
            line = e.lineno or 1
            col = max(0, (e.offset or 1) - 1)
            return None, {"message": f"SyntaxError: {e.msg}", "line": line, "col": col,
                          "end_line": e.end_lineno or line, "end_col": max(col + 1, (e.end_offset or 0) - 1),
                          "rule": "python.syntax"}
        found = _kernels_of(tree, lines)
    return Parsed(text, found, tuple(_keyed(found, lines, path, settings))), None


def _kernels_of(tree: ast.Module, lines: list[str]) -> tuple[Found, ...]:
    found: list[Found] = []
    jitted = [node for node in _defs(tree.body) if any(_is_jit(d) for d in node.decorator_list)]
    qualname = _qualnames(tree)
    # kernels are known by name; kernels of one name made in different functions (two factories that each
    # make a `kernel`) by their qualified names, as the worker finds them (`server.analyze._kernels`)
    places: dict[str, set[str]] = defaultdict(set)
    for node in jitted:
        places[node.name].add(qualname.get(node, node.name))
    for node in jitted:
        name = node.name
        if len(places[name]) > 1 and "<locals>" in qualname.get(node, ""):
            name = qualname[node]
        found.append(_place(node, name, 0, lines))
    return tuple(found)


def _place(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, offset: int, lines: list[str],
           indent: int = 0) -> Found:
    """Where a kernel's `def` is (parsed from its lines alone: `offset` lines further down the file, `indent` columns
    to the right)."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) + offset
    # the decorator's "@" is one column left of the expression
    def_line = node.lineno + offset
    line_text = lines[def_line - 1] if 0 < def_line <= len(lines) else ""
    col = line_text.find(node.name, max(0, node.col_offset + indent))
    return name, first, (node.end_lineno or node.lineno) + offset, def_line, max(col, 0)


def _within_kernel(last: Parsed, text: str, lines: list[str]) -> tuple[Found, ...] | None:
    """The kernels' places after an edit that changed the lines of one kernel only, when those lines (less the
    kernel's indentation) still parse alone as that kernel: one jit function of its name; else None (parse it all).
    Its lines start a statement in a file that parsed, and their lone parse leaves no string, bracket or block open,
    so every line after them reads as before: the kernels outside keep their places, moved by the lines it gained or
    lost."""
    if _ODD_BREAKS.search(text) or _ODD_BREAKS.search(last.text) or "barry_as_FLUFL" in text:  # (a parser flag)
        return None
    old = last.text.splitlines()
    n = min(len(old), len(lines))
    head = 0
    while head < n and old[head] == lines[head]:
        head += 1
    if head == len(old) == len(lines):
        return last.found
    tail = 0
    while tail < n - head and old[-1 - tail] == lines[-1 - tail]:
        tail += 1
    a, b = head + 1, len(old) - tail  # the edit replaced the old version's lines a..b (b = a - 1: it inserted lines)
    hit = [i for i, f in enumerate(last.found) if (f[1] <= a and b <= f[2] if b >= a else f[1] < a <= f[2])]
    if len(hit) != 1:
        return None
    name, first, end, _, _ = last.found[hit[0]]
    delta = len(lines) - len(old)
    segment = lines[first - 1:end + delta]
    indent = segment[0][:len(segment[0]) - len(segment[0].lstrip())] if segment else ""
    if indent:  # a kernel made inside a function: its lines less its indentation (each line must have it)
        if any(ln.strip() and not ln.startswith(indent) for ln in segment):
            return None
        segment = [ln[len(indent):] for ln in segment]
    try:
        body = ast.parse("\n".join(segment)).body
    except (SyntaxError, ValueError):
        return None
    node = body[0] if len(body) == 1 else None  # (two statements: it ends early, another def or code follows)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != name.split(".")[-1] or \
            not any(_is_jit(d) for d in node.decorator_list):
        return None
    moved = [f if f[1] < first else (f[0], f[1] + delta, f[2] + delta, f[3] + delta, f[4]) for f in last.found]
    moved[hit[0]] = _place(node, name, first - 1, lines, len(indent))
    return tuple(moved)


def _keyed(found: tuple[Found, ...], lines: list[str], path: str, settings: dict[str, Json]) -> list[Kernel]:
    inside = [False] * (len(lines) + 2)
    for _, first, last, _, _ in found:
        for i in range(first, last + 1):
            if i < len(inside):
                inside[i] = True
    outside = "\n".join(ln for i, ln in enumerate(lines, 1) if not inside[i])
    common = hashlib.sha256(json.dumps([path, settings, outside], sort_keys=True).encode()).hexdigest()
    kernels: list[Kernel] = []
    seen: set[str] = set()
    for name, first, last, def_line, col in found:
        if name in seen:  # redefined: the module keeps the last one
            kernels = [k for k in kernels if k.name != name]
        seen.add(name)
        body = "\n".join(lines[first - 1:last])
        key = hashlib.sha256(f"{common}\0{name}\0{first}\0{body}".encode()).hexdigest()[:32]
        kernels.append(Kernel(name, first, last, def_line, col, key))
    return kernels
