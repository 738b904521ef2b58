"""Quick fixes for operands that do not broadcast, as literal edits of the error's line (issue 29 item 6).

An elementwise op whose operands' shapes do not broadcast is a `PyptoError` at the op's line, and a
user reading it wants the shape that would work, not only the two that do not. When one operand was
made on that line by an op whose shape is written there as a literal — `pypto.full([32, 128], …)`,
`pypto.zeros([…])` / `ones`, `pypto.tensor([…], …)`, a `view(x, [8, 128], [0, 0])` — the error carries
fixes that rewrite that literal: the clashing dims made the other operand's (the shapes agree there)
and, second, made 1 (they broadcast). Nothing else gets a fix, as no edit is sure to compile: a shape
computed by an expression, a reshape (its element count is fixed), an operand made on another line (a
kernel parameter's annotation is what its callers pass), a view whose wider window would leave its
input, symbolic dims. The fixes are `Fix`es like the tile-shape ones: the language server shows them
as quick fixes.
"""

from __future__ import annotations

import ast
import linecache
from collections.abc import Sequence

from pypto.ir.errors import Fix
from pypto.ir.graph import Node, TensorType
from pypto.ir.source import Loc, Span

# ops whose result shape is the literal their call was given, and which take any shape
_MADE = ("full", "tensor", "view")


def _ints(shape: Sequence[object]) -> list[int] | None:
    out = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, int):
            return None
        out.append(d)
    return out


def _text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _call_at(span: Span) -> ast.Call | None:
    """The call expression that starts at `span` in its file's text (as linecache holds it)."""
    try:
        tree = ast.parse("".join(linecache.getlines(span.file)))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == span.line and node.col_offset == span.col:
            return node
    return None


def _literal(call: ast.Call, shape: list[int]) -> tuple[ast.expr, ast.expr] | None:
    """The first and last node of the one literal in the call's arguments that spells `shape` on one
    line: a list or tuple of int constants, or (zeros(32, 128)) the call's positional ints."""
    def value(e: ast.expr) -> int | None:
        return e.value if isinstance(e, ast.Constant) and type(e.value) is int else None

    found: list[tuple[ast.expr, ast.expr]] = []
    for e in [*call.args, *(kw.value for kw in call.keywords)]:
        if isinstance(e, (ast.List, ast.Tuple)) and e.elts and [value(x) for x in e.elts] == shape:
            found.append((e.elts[0], e.elts[-1]))
    args = call.args
    if not found and args and len(args) == len(shape) and [value(a) for a in args] == shape:
        found.append((args[0], args[-1]))
    if len(found) != 1:
        return None
    first, last = found[0]
    return (first, last) if first.lineno == (last.end_lineno or last.lineno) else None


def _fits(node: Node, shape: list[int], types: dict[int, TensorType]) -> bool:
    """A view of `shape` at the node's offsets stays inside its input (a full or tensor takes any)."""
    if node.op != "view":
        return True
    if node.attrs.get("valid_shape") is not None or node.attrs.get("dtype") is not None:
        return False
    ty = types.get(node.inputs[0]) if node.inputs else None
    full = _ints(ty.shape) if ty is not None else None
    offsets = _ints(node.attrs.get("offsets", ()))
    return (full is not None and offsets is not None and len(full) == len(offsets) == len(shape)
            and all(o + s <= f for o, s, f in zip(offsets, shape, full)))


def broadcast_fixes(at: Loc, producers: Sequence[Node | None], types: dict[int, TensorType]) -> tuple[Fix, ...]:
    """The fixes of an op at `at` whose two operands (made by `producers`; `types` of every value) do
    not broadcast: a rewrite of an operand's literal shape on the op's line, the other operand's dims
    where they clash, then 1 there."""
    span = at.span
    if span is None or len(producers) != 2 or any(p is None or p.type is None for p in producers):
        return ()
    shapes = [_ints(p.type.shape) for p in producers if p is not None and p.type is not None]
    if len(shapes) != 2 or shapes[0] is None or shapes[1] is None:
        return ()
    out: list[Fix] = []
    for i in (1, 0):  # the right operand first: `x + bias` more often has the odd one on the right
        node, own, other = producers[i], shapes[i], shapes[1 - i]
        assert node is not None and own is not None and other is not None
        where = node.loc.span
        if node.op not in _MADE or where is None or where.file != span.file \
                or not span.line <= where.line <= (span.end_line or span.line):
            continue
        call = _call_at(where)
        lit = _literal(call, own) if call is not None else None
        if lit is None:
            continue
        clash = [k for k in range(len(own)) if 0 <= (j := k - len(own) + len(other)) and own[k] != other[j]
                 and own[k] != 1 and other[j] != 1]
        if not clash:
            continue
        first, last = lit
        edit = Span(span.file, first.lineno, first.col_offset, first.lineno, last.end_col_offset or 0)
        agree = [other[k - len(own) + len(other)] if k in clash else d for k, d in enumerate(own)]
        ones = [1 if k in clash else d for k, d in enumerate(own)]
        dims = ", ".join(str(k - len(own)) for k in clash)
        along = f"dim{'s' if len(clash) > 1 else ''} {dims}"
        for new, why in ((agree, f"as the other operand's {_text(other)}"), (ones, f"1 broadcasts along {along}")):
            if _fits(node, new, types):
                out.append(Fix(edit, ", ".join(map(str, new)), f"use {_text(new)} for {_text(own)} ({why})"))
    return tuple(out)
