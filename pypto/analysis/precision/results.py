"""The precision report's data: per pass, each op's and output's verdict, and where the precision is first lost.

`precision_report` (`pypto.analysis.precision.passes`) fills these in; everything else — the
CLI report, the language server, `verify_compiled` — only reads them: as JSON, as text, or as the
`precision.fail` finding, whose suggestion `PrecisionReport` derives from the failing op.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.analysis.findings import Finding, Where
from pypto.analysis.precision.rule import HARD_FACTOR, Verdict, json_float
from pypto.ir.dtypes import DataType

_REDUCTIONS = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin", "var", "softmax", "rms_norm"})
_LOW = frozenset({DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP8E4M3, DataType.DT_FP8E5M2})
_HALF_ULP = {DataType.DT_BF16.short: "2^-9", DataType.DT_FP16.short: "2^-11", DataType.DT_FP8E4M3.short: "2^-4",
             DataType.DT_FP8E5M2.short: "2^-3"}


@dataclass
class OpRow:
    """One op (or kernel output) of one pass: its verdict against the fp64 reference."""

    node: int
    op: str
    dtype: str
    where: Where | None
    verdict: Verdict
    occurrences: int = 1  # how many times it ran (loop iterations)
    first_bad: int | None = None  # the first occurrence failing on its own
    kind: str = "op"  # "op" | "output"
    name: str | None = None  # the output's name, or the node's
    seq: float = 0.0  # when it failed during the run (ordering for "first failing")

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def line(self) -> str:
        return f"{self.where.file}:{self.where.line}" if self.where is not None else "<unknown>"

    def label(self) -> str:
        what = f"output {self.name!r} ({self.op})" if self.kind == "output" else f"{self.op} %{self.node}"
        return f"{what} at {self.line}"

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "op": self.op, "dtype": self.dtype, "kind": self.kind, "name": self.name,
                "where": None if self.where is None else self.where.to_json(), "occurrences": self.occurrences,
                "first_bad": self.first_bad, **self.verdict.to_json()}


@dataclass
class TileGrid:
    """Per tile of one output: error count and max abs difference. Cells are the tiles the
    program stores into the output (offsets per axis); a cell no store writes is -1 / nan."""

    name: str
    tile: tuple[int, ...]
    offsets: tuple[tuple[int, ...], ...]  # per axis, the tile offsets
    errors: np.ndarray  # int, grid-shaped
    max_abs: np.ndarray  # float, grid-shaped
    passed: np.ndarray  # bool, grid-shaped

    @property
    def failing_tiles(self) -> int:
        return int(np.count_nonzero(~self.passed & (self.errors >= 0)))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "tile": list(self.tile), "offsets": [list(o) for o in self.offsets],
                "errors": self.errors.tolist(), "max_abs": _nested(self.max_abs.tolist()),
                "passed": self.passed.tolist(), "failing_tiles": self.failing_tiles}


def _nested(v: Any) -> Any:
    """Nested lists of floats as JSON: NaN (a cell no tile covers) as None, infinities as strings."""
    if isinstance(v, list):
        return [_nested(x) for x in v]
    return None if isinstance(v, float) and math.isnan(v) else json_float(v) if isinstance(v, float) else v


@dataclass
class PassResult:
    """The comparison after one pass (or of the final tiled program)."""

    index: int  # the pass's index in the record (len(passes) for "final")
    name: str
    stage: str
    level: str  # "tensor" (reference interpreter) | "tiled" (tile by tile)
    changed: bool
    rows: list[OpRow]
    outputs: list[OpRow]
    grids: dict[str, TileGrid] = field(default_factory=dict)
    skipped: list[int] = field(default_factory=list)  # nodes whose tiles could not be matched to a value
    same_as: str | None = None  # an earlier pass with the same program (same results)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows) and all(r.passed for r in self.outputs)

    @property
    def first_failure(self) -> OpRow | None:
        bad = [r for r in self.rows + self.outputs if not r.passed]
        return min(bad, key=lambda r: r.seq) if bad else None

    def to_json(self) -> dict[str, Any]:
        first = self.first_failure
        return {"index": self.index, "name": self.name, "stage": self.stage, "level": self.level,
                "changed": self.changed, "same_as": self.same_as, "passed": self.passed,
                "first_failure": None if first is None else first.to_json(),
                "rows": [r.to_json() for r in self.rows], "outputs": [r.to_json() for r in self.outputs],
                "grids": {k: g.to_json() for k, g in self.grids.items()}, "skipped": list(self.skipped)}


@dataclass
class PrecisionReport:
    """Every selected pass's op-by-op comparison, and where the precision is first lost."""

    kernel: str
    file: str
    rtol: float
    atol: float
    passes: list[PassResult]
    in_loop: frozenset[int] = frozenset()  # nodes inside loop bodies (for suggestions)
    line_counts: Mapping[tuple[str, int, str], int] = field(default_factory=dict)  # (file, line, op) -> nodes
    tolerance: str = ""  # the tolerances in use, in words (`rule.Tolerance.describe`)

    @property
    def passed(self) -> bool:
        return all(p.passed for p in self.passes)

    @property
    def first_failing_pass(self) -> PassResult | None:
        return next((p for p in self.passes if not p.passed), None)

    @property
    def first_failing_op(self) -> OpRow | None:
        p = self.first_failing_pass
        return p.first_failure if p is not None else None

    @property
    def where(self) -> Where | None:
        row = self.first_failing_op
        return row.where if row is not None else None

    def pass_named(self, name: str) -> PassResult:
        for p in self.passes:
            if p.name == name:
                return p
        raise KeyError(f"no pass {name!r} in this report ({', '.join(p.name for p in self.passes)})")

    def message(self) -> str:
        """One paragraph: passed, or the first failing op with its numbers."""
        row, p = self.first_failing_op, self.first_failing_pass
        if row is None or p is None:
            tol = self.tolerance or f"rtol {self.rtol:g}, atol {self.atol:g}"
            return (f"{self.kernel}: every op within tolerance in {len(self.passes)} pass"
                    f"{'es' if len(self.passes) != 1 else ''} ({tol})")
        it = f", first at iteration {row.first_bad}" if row.occurrences > 1 and row.first_bad is not None else ""
        return (f"{self.kernel}: precision lost at {row.line}: {row.label()} in pass {p.name!r}{it}: "
                f"{row.verdict.describe()}. {self.suggestion(row)}")

    def summary(self) -> str:
        """A text table: per pass, its failing rows (or ok)."""
        lines = [self.message()]
        for p in self.passes:
            bad = [r for r in p.rows + p.outputs if not r.passed]
            lines.append(f"  {p.index:>2} {p.name:<16} {p.level:<6} {'ok' if not bad else f'{len(bad)} failing'}")
            for r in bad:
                lines.append(f"       {r.label()}: {r.verdict.describe()}")
        return "\n".join(lines)

    def suggestion(self, row: OpRow) -> str:
        """What to do about a failing row, from its op, dtype and whether it accumulates."""
        op = row.op
        low = row.dtype in {d.short for d in _LOW}
        where_many = row.where is not None and self.line_counts.get((row.where.file, row.where.line, op), 0) > 1
        on_line = {k[2] for k in self.line_counts if row.where is not None and k[:2] == (row.where.file,
                                                                                       row.where.line)}
        if op in _REDUCTIONS or op in ("combine", "combine_arg") or (op == "cast" and on_line & _REDUCTIONS):
            return ("Compute in fp32: cast before the reduction (pypto.cast(x, pypto.DT_FP32)), reduce, and cast the "
                    "result back once; when partials are combined, use a larger tile in the reduced dim so fewer "
                    "low-precision partials are added.")
        if op in ("add", "sub", "mul") and low and (row.node in self.in_loop or where_many or row.occurrences > 1):
            return ("Accumulate in fp32: keep the accumulator in pypto.DT_FP32 (cast each term up) and cast the "
                    "result to the low-precision dtype once, after the loop.")
        if op == "cast" and low:
            half_ulp = _HALF_ULP.get(row.dtype, "2^-11")
            return (f"This cast rounds to {row.dtype} (a relative error up to {half_ulp}): keep the value in fp32 "
                    f"until the output, or judge the result with a {row.dtype} tolerance (pass_verify_error_tol).")
        if low:
            return "Compute in fp32: cast this op's inputs to pypto.DT_FP32 and cast its result back once."
        return ("The error arises in fp32 or wider: look for cancellation (a difference of nearly equal values) or "
                "a long accumulation; if the error is expected, loosen verify_options pass_verify_error_tol.")

    def findings(self) -> list[Finding]:
        """`precision.fail` (error) at the first failing op's line; nothing when every op passes."""
        row, p = self.first_failing_op, self.first_failing_pass
        if row is None or p is None:
            return []
        v = row.verdict
        numbers: dict[str, Any] = {"pass": p.name, "node": row.node, "op": row.op, "dtype": row.dtype,
                                   **{k: x for k, x in v.to_json().items() if k != "passed"}}
        if row.occurrences > 1:
            numbers.update(iterations=row.occurrences, first_bad_iteration=row.first_bad)
        title = f"{row.op} loses precision: {v.errors} of {v.n} elements over tolerance"
        if v.hard:
            title += f" ({v.hard} over {HARD_FACTOR}x)"
        how = (f"on {v.errors} elements where {v.allowed} are allowed" if v.errors > v.allowed else
               f"by more than {HARD_FACTOR}x that on {v.hard} element{'s' if v.hard != 1 else ''}")
        why = (f"The first op whose {row.dtype} result leaves the fp64 reference by more than "
               f"(|out|+|ref|)*rtol/2+atol {how}, in pass {p.name!r}; every later op inherits the error.")
        return [Finding("precision.fail", "error", "precision", title, why, self.suggestion(row), row.where, numbers)]

    def to_json(self) -> dict[str, Any]:
        first, p = self.first_failing_op, self.first_failing_pass
        return {"kernel": self.kernel, "file": self.file, "rtol": self.rtol, "atol": self.atol,
                "tolerance": self.tolerance or f"rtol {self.rtol:g}, atol {self.atol:g}",
                "passed": self.passed, "first_failing_pass": None if p is None else p.name,
                "first_failing_op": None if first is None else first.to_json(),
                "passes": [x.to_json() for x in self.passes], "findings": [f.to_json() for f in self.findings()]}

    def dumps(self, indent: int | None = None) -> str:
        return json.dumps(self.to_json(), indent=indent)
