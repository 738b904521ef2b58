"""`PyptoError`: the one error type a user mistake raises.

Its location is the user's file and line (with the callsite chain when the mistake is
inside a helper), never a frame inside `pypto`. `str(error)` starts with `file:line:` so
editors and terminals link it, and shows the offending source line.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from typing import Any

from pypto.ir import source
from pypto.ir.source import Loc, Span


@dataclass(frozen=True)
class Related:
    """Another place the error concerns (the ops a bad tile shape applies to), with why."""

    span: Span
    message: str


@dataclass(frozen=True)
class Fix:
    """A mechanical repair: replace `span` (one line, UTF-8 byte columns) with `text`."""

    span: Span
    text: str
    title: str


@dataclass(frozen=True)
class TileEntry:
    """A `set_*_tile_shapes` call one of whose entries breaks a rule of the call alone (not a positive
    int; a cube L1 not a multiple of its L0), as data for an editor that knows the call's earlier
    shapes: `kind` "vec" or "cube", the `call`'s span, `args` the span of its shape arguments as written
    (where another whole shape goes; None when they are not plain positional arguments) and `entry`
    the bad argument — (index into the vector shape, None) or (cube m=0 / k=1 / n=2, index into its
    list or None for an int)."""

    kind: str
    call: Span
    args: Span | None
    entry: tuple[int, int | None]


class PyptoError(Exception):
    """A user error: `message` names the problem, `loc` is where in the user's code."""

    def __init__(self, message: str, loc: Loc | None = None, *, rule: str = "",
                 related: tuple[Related, ...] = (), fixes: tuple[Fix, ...] = (),
                 tile_entry: TileEntry | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc if loc else _user_loc()
        self.rule = rule
        self.related = related
        self.fixes = fixes
        self.tile_entry = tile_entry

    def details(self, path: str) -> dict[str, Any]:
        """The related places and fixes in file `path`, JSON-able, for an error dict (`related`:
        [{line, col, end_line, end_col, message}], `fixes`: [{line, col, end_line, end_col, text,
        title}], and `tile_entry`: {kind, call, args, entry} when set; 1-based lines, columns in UTF-8
        bytes as Python counts them)."""
        def where(s: Span) -> dict[str, Any]:
            return {"line": s.line, "col": s.col, "end_line": s.end_line or s.line, "end_col": s.end_col}

        out: dict[str, Any] = {
            "related": [{**where(r.span), "message": r.message} for r in self.related if r.span.file == path],
            "fixes": [{**where(f.span), "text": f.text, "title": f.title} for f in self.fixes if f.span.file == path]}
        t = self.tile_entry
        if t is not None and t.call.file == path:
            out["tile_entry"] = {"kind": t.kind, "call": where(t.call), "args": where(t.args) if t.args else None,
                                 "entry": list(t.entry)}
        return out

    @property
    def file(self) -> str:
        return self.loc.span.file if self.loc.span else "<unknown>"

    @property
    def line(self) -> int:
        return self.loc.span.line if self.loc.span else 0

    @property
    def col(self) -> int:
        return self.loc.span.col if self.loc.span else 0

    def __str__(self) -> str:
        if not self.loc.span:
            return self.message
        out = [f"{self.file}:{self.line}: {self.message}"]
        for i, fr in enumerate(self.loc.frames):
            text = linecache.getline(fr.file, fr.line).strip()
            where = "  at" if i == 0 else "  called from"
            out.append(f'{where} File "{fr.file}", line {fr.line}' + (f", in {fr.func}" if fr.func else ""))
            if text:
                out.append(f"      {text}")
        for r in self.related:
            out.append(f'  {r.message}: File "{r.span.file}", line {r.span.line}')
        return "\n".join(out)


def _user_loc() -> Loc:
    """The user frames at the raise: while a kernel is traced, the chain out to its body
    (so an error inside a helper also shows the helper's call); else the innermost one."""
    return source.capture(source.kernel_code(), skip=3)


def window_message(what: str, axis: int, offsets: tuple[int, ...], sizes: tuple[int, ...], extent: int) -> str:
    """A view/assemble window past the end of its tensor at run time (one wording everywhere)."""
    o, s = offsets[axis], sizes[axis]
    hint = ("; a tail tile needs valid_shape=[...]" if what == "view"
            else f" (writing a {list(sizes)} tile at offsets {list(offsets)})")
    return (f"{what}: window [{o}, {o + s}) on dim {axis} runs past the "
            f"{'input' if what == 'view' else 'destination'}, which has {extent} in this call{hint}")


def op_message(op: str, e: Exception) -> str:
    """`op: message`, without repeating the op name when the message already starts with it."""
    msg = str(e)
    return msg if msg.startswith(op) else f"{op}: {msg}"


class ShapeError(Exception):
    """Raised by shape/dtype inference; the builder turns it into a PyptoError at the op's line."""
