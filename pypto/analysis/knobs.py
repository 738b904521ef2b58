"""The knobs a PyPTO 3 kernel is tuned with: the module-level integer constants that size its slices and
loop steps.

Why it exists: a `@pl.jit` kernel has no `set_*_tile_shapes` call. Its users size the work of a
`pl.at` scope with constants — `ROW_TILE = 32` read by `pl.parallel(0, ROWS, ROW_TILE)` and by
`x[r:r + ROW_TILE, :]` — so those constants are what the tuning advisor (`advisor.Advisor`) proposes
values for, as it proposes tile shapes for a CANN kernel's calls. This module finds them in the
kernel's source (no code runs) and gives each its legal values: the divisors of every extent it
steps or slices (a loop's `stop - start`, the sliced dim of a parameter), at most `MAX_STEPS` steps
of the largest. Whether a value fits the on-chip buffers is the compiler's to say: the advisor
compiles each candidate under `strict_tile_rules()`, where a slice too big for UB is an error.

A constant is a knob only when changing its line and re-running the module gives the same kernel as
changing the value while the body is traced (`values`): it is assigned once, to an int literal, and no
code that runs at import reads it (another constant, a decorator, an annotation, a default value).
So the advisor's figure for a value is the figure the edited file compiles to.
"""

from __future__ import annotations

import ast
import linecache
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.analysis.findings import TextEdit, Where

# a knob's values leave at most this many steps (loop iterations, slices) of its largest extent: tiny
# slices on big tensors compile for long and are never the answer (as the advisor's `max_tiles`)
MAX_STEPS = 1024
LOOPS = ("parallel", "range")  # pl.parallel / pl.range: their third argument is the step


@dataclass(frozen=True)
class Knob:
    """One module-level integer constant that sizes a kernel's slices or loop steps."""

    name: str
    value: int
    file: str
    line: int  # 1-based line of `NAME = value`
    col: int  # the value literal's span on that line (0-based columns)
    end_col: int
    extents: tuple[int, ...]  # what it steps or slices
    values: tuple[int, ...]  # its legal values, ascending (its own among them)

    def text(self, value: int) -> str:
        return f"{self.name} = {value}"

    def edit(self, value: int) -> TextEdit:
        """The edit of the constant's line that sets `value`."""
        return TextEdit(Where(self.file, self.line, self.col, self.line, self.end_col), str(value))


def _source(fn: Any) -> tuple[str, str]:
    """(file, text) of the module the kernel's function was defined in: the text the process loaded
    (linecache holds an editor's unsaved text, `pypto.userfiles`), else the file on disk."""
    file = fn.__code__.co_filename
    lines = linecache.getlines(file, fn.__globals__)
    if lines:
        return file, "".join(lines)
    try:
        return file, Path(file).read_text()
    except OSError:
        return file, ""


def _import_time_names(tree: ast.Module) -> dict[str, int]:
    """How often each name is read by code that runs when the module is imported (function bodies
    excepted; their decorators, defaults and annotations included) or assigned anywhere."""
    reads: dict[str, int] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                visit(d)
            a = node.args
            for x in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
                visit(x)
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None and arg.annotation is not None:
                    visit(arg.annotation)
            if node.returns is not None:
                visit(node.returns)
            for sub in ast.walk(node):  # a name assigned or declared global in a function: not a constant
                if isinstance(sub, ast.Global):
                    for n in sub.names:
                        reads[n] = reads.get(n, 0) + 1
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads[node.id] = reads.get(node.id, 0) + 1
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in tree.body:
        visit(stmt)
    return reads


def _constants(tree: ast.Module) -> dict[str, ast.Assign]:
    """`NAME = <int literal>` at module level, assigned exactly once."""
    out: dict[str, ast.Assign] = {}
    counts: dict[str, int] = {}
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            targets = [stmt.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    counts[n.id] = counts.get(n.id, 0) + 1
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Constant) and type(stmt.value.value) is int
                and stmt.value.value > 0 and stmt.value.end_lineno == stmt.lineno):
            out[stmt.targets[0].id] = stmt
    return {k: v for k, v in out.items() if counts.get(k) == 1}


def _value(e: ast.expr, consts: Mapping[str, int]) -> int | None:
    """An integer expression of literals and module constants (+ - * //), else None."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.Name):
        return consts.get(e.id)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        a, b = _value(e.left, consts), _value(e.right, consts)
        if a is None or b is None or (isinstance(e.op, ast.FloorDiv) and b == 0):
            return None
        if isinstance(e.op, ast.Add):
            return a + b
        if isinstance(e.op, ast.Sub):
            return a - b
        return a * b if isinstance(e.op, ast.Mult) else a // b
    return None


def _names(e: ast.AST | None) -> set[str]:
    return set() if e is None else {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def _kernel_def(tree: ast.Module, fn: Any) -> ast.FunctionDef | None:
    first = fn.__code__.co_firstlineno
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == fn.__name__ and \
                min([node.lineno] + [d.lineno for d in node.decorator_list]) == first:
            return node
    return None


def _uses(fdef: ast.FunctionDef, knobs: set[str], consts: Mapping[str, int],
          shapes: Mapping[str, tuple[Any, ...]]) -> dict[str, set[int]]:
    """Each candidate constant the body steps a loop or sizes a slice with -> the extents it does so in."""
    out: dict[str, set[int]] = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOOPS \
                and len(node.args) == 3 and isinstance(node.args[2], ast.Name) and node.args[2].id in knobs:
            lo, hi = _value(node.args[0], consts), _value(node.args[1], consts)
            if lo is not None and hi is not None and hi > lo:
                out.setdefault(node.args[2].id, set()).add(hi - lo)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in shapes:
            shape = shapes[node.value.id]
            dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for k, d in enumerate(dims):
                if not isinstance(d, ast.Slice) or k >= len(shape) or not isinstance(shape[k], int):
                    continue
                for name in (_names(d.lower) | _names(d.upper)) & knobs:
                    out.setdefault(name, set()).add(shape[k])
    return out


def find_knobs(kernel: Any) -> tuple[Knob, ...]:
    """The knobs of a PyPTO 3 kernel (`dialect == "pypto3"`), in source order; () for any other kernel."""
    if getattr(kernel, "dialect", "") != "pypto3":
        return ()
    fn = kernel.fn
    file, text = _source(fn)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ()
    fdef = _kernel_def(tree, fn)
    if fdef is None:
        return ()
    consts = _constants(tree)
    values = {k: int(v.value.value) for k, v in consts.items()}  # type: ignore[attr-defined]
    read = _import_time_names(tree)
    annotated = set().union(*(_names(a.annotation) for a in fdef.args.args + fdef.args.kwonlyargs))
    candidates = {k for k in consts if not read.get(k) and k not in annotated}
    shapes = {p: tuple(s.shape) for p, s in kernel.specs().items() if s.shape is not None}
    lines = text.splitlines()
    out = []
    for name, extents in _uses(fdef, candidates, values, shapes).items():
        stmt = consts[name]
        own = values[name]
        whole = math.gcd(*extents)
        top = max(extents)
        legal = sorted(d for d in range(1, whole + 1) if whole % d == 0 and top // d <= MAX_STEPS)
        if own not in legal:
            legal = sorted({*legal, own})
        lit = stmt.value
        line = lines[stmt.lineno - 1] if stmt.lineno <= len(lines) else ""
        end_col = lit.end_col_offset if lit.end_col_offset is not None else len(line)
        out.append(Knob(name, own, file, stmt.lineno, lit.col_offset, end_col, tuple(sorted(extents)), tuple(legal)))
    return tuple(sorted(out, key=lambda k: k.line))


@contextmanager
def knob_values(kernel: Any, values: Mapping[str, int]) -> Iterator[None]:
    """The kernel's module reads these constant values while inside (its body is traced then): what the
    edited line would give (a knob is read by no import-time code)."""
    scope = kernel.fn.__globals__
    saved = {k: scope[k] for k in values if k in scope}
    scope.update(values)
    try:
        yield
    finally:
        for k in values:
            if k in saved:
                scope[k] = saved[k]
            else:
                scope.pop(k, None)
