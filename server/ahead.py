"""Which edits to compile ahead: the tile-shape call under the cursor, one step off in each entry.

A kernel engineer tunes a tile shape by halving or doubling one of its entries and looking at the new run. When the
`compileAhead` setting asks for it, the language server compiles such edits of the call the cursor rests on before
they are typed (`server.live.LiveCompiler.compile_ahead`); an edit whose traced program is one of theirs then reuses
that answer, as an undo does. The program's fingerprint holds its source spans, so an edit is written as a person
makes it: the one entry, as a number, in place of its text. This module only writes the edited texts; it runs nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from server.features import norm
from server.quickfix import shape_text

Json = Any
_CALLEE = re.compile(r"[A-Za-z_][\w.]*")  # `pypto.set_vec_tile_shapes`, `set_vec_tile_shapes`, `pto.set_…`


def _halved_doubled(v: int) -> list[int]:
    return ([v // 2] if v >= 2 and v % 2 == 0 else []) + [2 * v]


def shapes(kind: str, dims: Sequence[Json]) -> list[list[Json]]:
    """The call's dims one step off, in the order they are compiled: each entry halved, then doubled, the last entry
    first (a vec call's trailing entries are the ones an op of lower rank takes); a cube call's `[m0, m1]`, `[k0, k1]`,
    `[n0, n1]` halved or doubled as a pair (n, then k, then m: a pair stays an L0/L1 pair), its split-k flag kept."""
    out: list[list[Json]] = []
    if kind == "cube":
        if len(dims) < 3 or not all(isinstance(p, list) for p in dims[:3]):
            return []
        pairs = [list(p) for p in dims[:3]]
        for i in (2, 1, 0):
            if not all(isinstance(x, int) and x > 0 for x in pairs[i]):
                continue
            for step in ("half", "double"):
                if step == "half" and not all(x >= 2 and x % 2 == 0 for x in pairs[i]):
                    continue
                new = [list(p) for p in pairs]
                new[i] = [x // 2 if step == "half" else 2 * x for x in pairs[i]]
                out.append([*new, *dims[3:]])
        return out
    for i in reversed(range(len(dims))):
        v = dims[i]
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            out += [[*dims[:i], w, *dims[i + 1:]] for w in _halved_doubled(v)]
    return out


def rewritten(call: str, kind: str, dims: Sequence[Json], new: Sequence[Json]) -> str:
    """The call's text (`fn(...)` as the document has it) setting `new` in place of `dims`, as a person edits it: only
    the entries that change are written, as numbers (a cube call's pair as `[a, b]`), every other argument's text
    kept (`d`, `c1_tile[0]`, a comment-free expression), so that an edit typing the number where the expression was
    is the same text. A call whose arguments do not line up with its dims (`*shape`, keywords) is written whole."""
    try:
        tree = ast.parse(call, mode="eval").body
    except SyntaxError:
        tree = None
    args = tree.args if isinstance(tree, ast.Call) else []
    width = 3 if kind == "cube" else len(dims)
    if not isinstance(tree, ast.Call) or len(args) < width or any(isinstance(a, ast.Starred) for a in args) or (
            kind == "vec" and (len(args) != width or tree.keywords)):
        return call_text(call[:call.index("(")], kind, new)
    raw = call.encode()
    for i in reversed(range(width)):  # right to left: the offsets before it hold
        if new[i] == dims[i]:
            continue
        a = args[i]
        value = f"[{shape_text('vec', new[i])}]" if kind == "cube" else str(new[i])
        raw = raw[:a.col_offset] + value.encode() + raw[a.end_col_offset or a.col_offset:]
    return raw.decode()


def call_text(fn: str, kind: str, dims: Sequence[Json]) -> str:
    """The call setting `dims`, spelt `fn(...)` as the document spells the function (a cube call's split-k flag
    kept)."""
    split = ", enable_split_k=True" if kind == "cube" and len(dims) > 3 and dims[3] else ""
    return f"{fn}({shape_text(kind, dims)}{split})"


def edits(text: str, path: str, config: Mapping[str, Json], limit: int) -> list[tuple[str, str]]:
    """Up to `limit` (call, text): the call as edited, and the document with it, for the tile-shape call `config` (an
    item of an editor view's
    `tile_configs`: kind, dims, span in UTF-8 columns) one step off (`shapes`), the entry that changes written in
    place (`rewritten`). None for a call in another file, a call written over several lines, or a span whose text is
    not a call."""
    span = config.get("span")
    kind, dims = config.get("kind"), config.get("dims")
    if limit <= 0 or not isinstance(span, Mapping) or not isinstance(dims, list) or kind not in ("vec", "cube"):
        return []
    line, col, end_col = span.get("line"), span.get("col"), span.get("end_col")
    if not isinstance(span.get("file"), str) or norm(span["file"]) != norm(path) or \
            (span.get("end_line") or line) != line or not all(isinstance(x, int) for x in (line, col, end_col)):
        return []
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return []
    raw = lines[line - 1].encode()
    original = raw[col:end_col].decode(errors="replace")
    fn = original[:original.index("(")] if "(" in original else ""
    if not original.endswith(")") or not _CALLEE.fullmatch(fn) or fn.split(".")[-1] != f"set_{kind}_tile_shapes":
        return []
    out: list[tuple[str, str]] = []
    for new in shapes(str(kind), dims):
        call = rewritten(original, str(kind), dims, new)
        written = raw[:col] + call.encode() + raw[end_col:]
        out.append((call, "\n".join([*lines[:line - 1], written.decode(errors="replace"), *lines[line:]])))
        if len(out) >= limit:
            break
    return out
