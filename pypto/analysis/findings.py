"""The one shape every analysis result takes: a finding anchored to a source span.

Health rules, precision failures and tuning suggestions are all `Finding`s, so the report
formats (text, JSON, Markdown, HTML, JUnit, SARIF), the language server's diagnostics and
the panels render them one way. A finding with a mechanical fix carries it as `TextEdit`s
(exact replacements of a source range), which become quick fixes — never applied silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "info")
LEVELS = ("tensor", "tile", "block", "execute", "board", "precision", "tuning")


@dataclass(frozen=True)
class Where:
    """A source range (1-based lines, 0-based columns; end_line 0 = the whole line)."""

    file: str
    line: int
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "col": self.col, "end_line": self.end_line,
                "end_col": self.end_col}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Where:
        return cls(d["file"], d["line"], d.get("col", 0), d.get("end_line", 0), d.get("end_col", 0))


@dataclass(frozen=True)
class TextEdit:
    """Replace `where` (a range) with `text`."""

    where: Where
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where.to_json(), "text": self.text}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TextEdit:
        return cls(Where.from_json(d["where"]), d["text"])


@dataclass(frozen=True)
class Related:
    """Another place a finding concerns (an op a tile-shape call applies to), with why."""

    where: Where
    message: str

    def to_json(self) -> dict[str, Any]:
        return {**self.where.to_json(), "message": self.message}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Related:
        return cls(Where.from_json(d), d.get("message", ""))


@dataclass(frozen=True)
class Fix:
    """One of several alternative mechanical fixes (each a quick fix of its own): "use 96 or 104"."""

    title: str
    edits: tuple[TextEdit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "edits": [e.to_json() for e in self.edits]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Fix:
        return cls(d["title"], tuple(TextEdit.from_json(e) for e in d.get("edits", ())))


@dataclass(frozen=True)
class Finding:
    rule: str  # a stable id, e.g. "tile.tail-waste"; documented with its threshold
    severity: str  # one of SEVERITIES
    level: str  # one of LEVELS
    title: str  # one line: what is wrong
    why: str  # one or two sentences: why it matters
    suggestion: str  # what to do, concretely
    where: Where | None = None  # the source span it belongs to (None: the kernel as a whole)
    numbers: Mapping[str, Any] = field(default_factory=dict)  # the measured values and the threshold
    edits: tuple[TextEdit, ...] = ()  # a mechanical fix, if there is one
    related: tuple[Related, ...] = ()  # other places it concerns (LSP related information)
    fixes: tuple[Fix, ...] = ()  # alternative fixes, each a quick fix (`edits` is the first one's)

    def to_json(self) -> dict[str, Any]:
        out = {"rule": self.rule, "severity": self.severity, "level": self.level, "title": self.title,
               "why": self.why, "suggestion": self.suggestion,
               "where": None if self.where is None else self.where.to_json(),
               "numbers": dict(self.numbers), "edits": [e.to_json() for e in self.edits]}
        if self.related:
            out["related"] = [r.to_json() for r in self.related]
        if self.fixes:
            out["fixes"] = [f.to_json() for f in self.fixes]
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Finding:
        w = d.get("where")
        return cls(d["rule"], d["severity"], d["level"], d["title"], d["why"], d["suggestion"],
                   Where.from_json(w) if w else None, dict(d.get("numbers", {})),
                   tuple(TextEdit.from_json(e) for e in d.get("edits", ())),
                   tuple(Related.from_json(r) for r in d.get("related", ())),
                   tuple(Fix.from_json(f) for f in d.get("fixes", ())))
