"""The quick fix only the language server can make for a compile error: the call's last shape that compiled.

A `set_*_tile_shapes` entry of 0, a negative one or a fraction (`64 / 3`) is an error at the call
(`tile.shape`), and pypto's error already carries a fix per nearest legal value ("use 1 for 0").
What pypto cannot know is what the call held before the user broke it; the language server does:
the kernel's last good result (`Result.last_good`, kept while the kernel fails) and, after a restart,
the compile history (`server.history`, whose entries keep each call's kind and dims). So the error also
carries `tile_entry` — the call's kind, its span, the span of its shape arguments as written, the bad
entry — and this module turns the last good dims of that call into one more fix: the shape arguments
replaced by those dims, offered first. "That call" is the one of the same kind on the same line once the
kernel's move is taken out (last good result), or on the same line (history); else the only call of
that kind the kernel had. Pure: JSON and `Result`s in, fix dicts out (the error's own form: 1-based
lines, UTF-8 byte columns, `text`, `title`); `server.features.error_actions` makes them code actions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from server.state import Result

Json = Any
_EOL = re.compile(r"\r\n|\r|\n")  # as server.features.Lines splits a document


def text_in(text: str, line: int, col: int, end_line: int, end_col: int) -> str:
    """The document's text in a record range (1-based lines, UTF-8 byte columns)."""
    lines = [s.encode("utf-8") for s in _EOL.split(text)]
    if not 0 < line <= end_line <= len(lines):
        return ""
    if line == end_line:
        return lines[line - 1][col:end_col].decode("utf-8", "replace")
    chunk = [lines[line - 1][col:], *lines[line:end_line - 1], lines[end_line - 1][:end_col]]
    return "\n".join(c.decode("utf-8", "replace") for c in chunk)


def _call_name(kind: str) -> str:
    return "set_vec_tile_shapes" if kind == "vec" else "set_cube_tile_shapes"


def _pick(calls: Iterable[tuple[str, int | None, Json]], kind: str, line: int) -> Json:
    """The dims of the call of `kind` at `line`, else of the only call of that kind (by dims), else None."""
    same = [(at, dims) for k, at, dims in calls if k == kind and dims]
    for at, dims in same:
        if at == line:
            return dims
    distinct = {repr(d) for _, d in same}
    return same[0][1] if len(distinct) == 1 else None


def last_good_dims(r: Result, kind: str, line: int, past: Sequence[Mapping[str, Json]] = ()) -> Json:
    """The dims the `kind` call now at `line` (1-based) had in the kernel's last good compile: its last
    good result's tile configs, else the newest entry of its compile history (`past`, oldest first)."""
    good = r.last_good
    if good is not None and good.editor is not None:
        shift = r.line - good.line  # the kernel moved (lines added above it): its calls moved with it
        calls = [(tc.get("kind"), (tc.get("span") or {}).get("line", 0) + shift, tc.get("dims"))
                 for tc in good.editor.get("tile_configs", ())]
        dims = _pick(calls, kind, line)
        if dims is not None:
            return dims
    for e in reversed(past):
        calls = [(c.get("kind"), c.get("line"), c.get("dims")) for c in e.get("tile_calls") or ()]
        if calls:
            return _pick(calls, kind, line)
    return None


def _size(d: Json) -> str:
    return "[" + ", ".join(map(str, d)) + "]" if isinstance(d, (list, tuple)) else str(d)


def shape_text(kind: str, dims: Json) -> str | None:
    """Dims as a call's shape arguments: `8, 64` for a vector call, `[16, 16], [32, 64], [16, 16]` for a
    cube call (its m, k and n; split-k is another argument)."""
    if not isinstance(dims, (list, tuple)) or not dims:
        return None
    if kind == "vec":
        return ", ".join(map(str, dims)) if all(isinstance(d, int) and not isinstance(d, bool) for d in dims) else None
    if len(dims) < 3:
        return None
    return ", ".join(_size(d) for d in dims[:3])


def _entry_text(kind: str, dims: Json, entry: Sequence[int | None]) -> str | None:
    """The last good value of the one entry `entry` names (when the shape arguments are not plain)."""
    i, j = (list(entry) + [None, None])[:2]
    if not isinstance(i, int) or not isinstance(dims, (list, tuple)) or not -len(dims) <= i < len(dims):
        return None
    value = dims[i]
    if kind == "vec":
        return str(value) if isinstance(value, int) else None
    if isinstance(j, int):
        return str(value[j]) if isinstance(value, (list, tuple)) and -len(value) <= j < len(value) else None
    if isinstance(value, (list, tuple)) and len(set(value)) == 1:
        return str(value[0])  # an int argument stands for [v, v]
    return _size(value)


def tile_entry_fixes(r: Result, err: Mapping[str, Json], text: str,
                     past: Sequence[Mapping[str, Json]] = ()) -> list[dict[str, Json]]:
    """The fix restoring the last shape of the erring call that compiled (none when the error is not
    about a tile entry, no earlier shape of that call is known, or it reads so already in `text`, the
    document's)."""
    te = err.get("tile_entry")
    if not isinstance(te, Mapping) or te.get("kind") not in ("vec", "cube"):
        return []
    kind = str(te["kind"])
    call = te.get("call") or {}
    dims = last_good_dims(r, kind, int(call.get("line", err.get("line", 0))), past)
    if dims is None:
        return []
    shown = f"{_call_name(kind)}({shape_text(kind, dims) or _size(dims)})"
    args = te.get("args")
    where: Mapping[str, Json] | None = None
    new: str | None = None
    if isinstance(args, Mapping):
        where, new = args, shape_text(kind, dims)
    elif err.get("fixes"):  # keyword arguments: the one bad entry, where pypto's own fixes put a value
        where, new = err["fixes"][0], _entry_text(kind, dims, te.get("entry") or ())
    if where is None or new is None:
        return []
    span = {k: int(where.get(k, 0)) for k in ("line", "col", "end_line", "end_col")}
    if text_in(text, span["line"], span["col"], span["end_line"], span["end_col"]) == new:
        return []
    return [{**span, "text": new, "title": f"use the last shape that compiled: {shown}"}]
