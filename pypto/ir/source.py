"""Source locations: where in the user's code a node (or an error) comes from.

A `Loc` is the chain of user frames active when the node was made: `frames[0]` is the
line that made it (possibly inside a helper), the following frames are the lines that
called that helper, out to the kernel body. Frames inside the `pypto` package are
skipped, so a node made by a composite op still points at the user's call.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from dataclasses import dataclass

PYPTO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True, slots=True)
class Span:
    """One frame: file, 1-based line and end line, 0-based columns, and the function name."""

    file: str
    line: int
    col: int = 0
    end_line: int = 0
    end_col: int = 0
    func: str = ""

    def __str__(self) -> str:
        end = f"-{self.end_line}:{self.end_col}" if self.end_line else ""
        func = f" in {self.func}" if self.func else ""
        return f"{self.file}:{self.line}:{self.col}{end}{func}"


@dataclass(frozen=True, slots=True)
class Loc:
    """A span with its callsite chain (innermost first)."""

    frames: tuple[Span, ...] = ()

    @property
    def span(self) -> Span | None:
        return self.frames[0] if self.frames else None

    @property
    def callsite(self) -> tuple[Span, ...]:
        return self.frames[1:]

    def __bool__(self) -> bool:
        return bool(self.frames)

    def __str__(self) -> str:
        return " < ".join(str(f) for f in self.frames)

    def lines_in(self, file: str) -> set[int]:
        """Every line of `file` in the chain (the IDE maps a line to nodes with this)."""
        return {f.line for f in self.frames if f.file == file}


UNKNOWN = Loc()

_positions: dict[types.CodeType, list] = {}


def _span_of(frame: types.FrameType) -> Span:
    code = frame.f_code
    pos = _positions.get(code)
    if pos is None and hasattr(code, "co_positions"):
        pos = _positions[code] = list(code.co_positions())
    line, end_line, col, end_col = frame.f_lineno, 0, 0, 0
    if pos:
        idx = frame.f_lasti // 2
        if 0 <= idx < len(pos):
            p = pos[idx]
            if p[0] is not None:
                line, end_line, col, end_col = p[0], p[1] or p[0], p[2] or 0, p[3] or 0
    return Span(code.co_filename, line, col, end_line, end_col, code.co_name)


def is_user_frame(frame: types.FrameType) -> bool:
    f = frame.f_code.co_filename
    return not (f.startswith(PYPTO_DIR) or f.startswith("<frozen"))


def capture(stop_code: types.CodeType | None = None, skip: int = 1) -> Loc:
    """The user-frame chain of the caller, innermost first, out to the frame running
    `stop_code` (the kernel body) inclusive; without `stop_code`, just the innermost user frame."""
    frame: types.FrameType | None = sys._getframe(skip)
    frames: list[Span] = []
    while frame is not None:
        if is_user_frame(frame):
            frames.append(_span_of(frame))
            if stop_code is None or frame.f_code is stop_code:
                break
        frame = frame.f_back
    return Loc(tuple(frames))


# The kernel body being traced on this thread (innermost last). The tracer (`pypto.tracing.builder`)
# pushes it while a body runs, so that an error raised anywhere below reports the chain of user
# lines out to the body: this layer owns the slot, the layer above fills it.
_traced = threading.local()


def push_kernel(code: types.CodeType | None) -> None:
    _traced.__dict__.setdefault("codes", []).append(code)


def pop_kernel() -> None:
    _traced.codes.pop()


def kernel_code() -> types.CodeType | None:
    """The code of the kernel body being traced on this thread, if any."""
    codes = getattr(_traced, "codes", None)
    return codes[-1] if codes else None
