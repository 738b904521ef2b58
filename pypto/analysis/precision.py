"""Precision diff: where a kernel's low-precision arithmetic leaves an fp64 reference.

A kernel in fp16/bf16 is right only to some tolerance, and when it is not, the question
is *which line* lost the precision. This module answers it the way PyPTO's pass verify
does: run the kernel's graph after each selected pass — and the final tiled program —
in the kernel's own dtypes and in fp64, compare every op's output, and name the first
op (as a source line) and the first pass whose error exceeds the tolerance. It also
compares two configurations of one kernel (two tile shapes, two dtypes, two option
sets) op by op, and drives `verify_options` for the DSL (`enable_pass_verify`).

**The rule** (`check`), for an output `out` and its reference `ref`, elementwise:

- `tol = (|out| + |ref|)·rtol/2 + atol`; `diff = |out − ref|`; an element with
  `diff > tol` is an *error*, one with `diff > 128·tol` a *hard failure*.
- Non-finite values: an element where out and ref are equal (same infinity) or both NaN
  has `diff = 0`; any other element with a NaN or an infinity on one side is an error and
  a hard failure (`diff = inf`).
- `N` is the element count; `zeros` counts the elements where **both** out and ref are
  exactly 0 (they are right trivially, so they do not earn error allowance);
  `m = N − zeros`.
- The allowed error count is `floor(m·min(rtol, atol))`; when that floor is 0 (every
  tensor with fewer than `1/min(rtol, atol)` non-zero elements), it is
  `floor(min(16, √m / 2))`. Errors are counted, so `errors ≤ x` and `errors ≤ floor(x)`
  agree; the floor matters only for the "is 0" test, and we read it as an element
  count, i.e. floored. Consequence: at rtol = atol = 1e-3, 999 elements may have 15
  errors but 1000 elements only 1 — the rule's own discontinuity, kept as written.
- The output passes when `errors ≤ allowed` and there is no hard failure.
- Also reported: `max_abs = max diff`; `max_rel = max diff/|ref|` over elements with
  `ref ≠ 0` (zeros of the reference are judged by atol alone); `cosine` similarity of
  out and ref over the elements where both are finite (1 when both are all zero, 0 when
  only one is).

**Per op** (`precision_report`). A tensor-stage snapshot runs on the reference
interpreter twice: in the kernel's dtypes (device semantics: fp16/bf16 rounded after
every op) and with `fp64=True`; an interpreter observer records every node's value.
Rows are the ops that compute (data movement — view, assemble, reshape, transpose,
concat, clone, expand — only copies its input's error and is left out); the kernel's
outputs get rows of their own. A node inside a loop runs once per iteration: its row
judges all iterations together, as if they were stacked into one tensor (counts add,
maxima take the max), and names the first iteration that fails on its own. The final
tiled program (and any tile-stage pass asked for) runs tile op by tile op; each
computing tile (not the partials of a split reduction: their combine is the value)
is put back at its place in its node's value, per loop instance, and compared with the
fp64 interpreter's value of that node; its outputs get a per-tile error grid whose
cells are the tiles the program stores into the output (the vec tile shape of the op
that writes it).

**Localizing.** The first failing pass is the first selected pass (in pipeline order,
"final" last) with a failing row; the first failing op is, within it, the failing row
that failed first during the run: the moment its first failing iteration was computed
(or its last iteration, when only the iterations together fail). Outputs come after
every op. Its source line is the node's innermost frame (for a node a pass made, the
line of the node it came from).

**Two configurations** (`compare_configs`): both kernels are compiled and their final
programs run (tile by tile, so tile shapes matter); ops are matched by (source line, op
name, occurrence among the nodes with that line and op, in execution order) and each
matched pair is compared with the same rule (b against a), beside each one's verdict
against its own fp64 reference. Unmatched ops (an autocast a dtype adds) are listed
on their own. The first divergent op is the first matched row, in a's order, whose
b-vs-a comparison fails.

**verify_options** (`verify_compiled`, called by `CompiledKernel.run` when
`enable_pass_verify` is on): the passes named in `pass_verify_pass_filter` (empty: the
default selection), tolerances `pass_verify_error_tol = [rtol, atol]`; the report is
stored on the compiled kernel as `ck.precision`, a failure is a `PrecisionWarning`
naming the first failing op's `file:line`, and the call's results are untouched (the
check runs on its own copies). `pass_verify_save_tensor` writes every compared value
and its fp64 reference as `.npy` into `pass_verify_save_tensor_dir` (default
`./output/<kernel>_<time>/verify/`): one folder per pass (`<index>_<pass>/`), a file per
op and occurrence (`n<id>_<op>_L<line>_<k>.npy` beside `….fp64.npy`; k is the loop
iteration, or the tile instance in a tiled pass), `output_<name>.npy` per output, and the
report as `precision.json`.

Reference semantics used: the interpreter's `fp64=True` mode keeps every float in fp64,
explicit float casts and assembles into fp16/bf16 buffers included (otherwise the
reference would round wherever the kernel does, and agree with it).
"""

from __future__ import annotations

import ast
import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.analysis.findings import Finding, Where
from pypto.compiler.tile_exec import TileExecutor, _view
from pypto.compiler.tile_ir import Region, TileGraph
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph, Node
from pypto.language.tiling import PyptoWarning
from pypto.record import CompileRecord, compile_record
from pypto.reference.interpreter import Interpreter
from pypto.reference.kernels import Ctx

HARD_FACTOR = 128  # an element over 128·tol is a hard failure
FINAL = "final"  # the pseudo-pass: the final tiled program
# ops that only move values: their error is their input's (not compared)
MOVES = frozenset({"param", "carry", "loop", "loop_out", "assume", "view", "assemble", "reshape", "unsqueeze",
                   "transpose", "concat", "expand_clone", "clone", "tensor"})
_REDUCTIONS = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin", "var", "softmax", "rms_norm"})
_LOW = frozenset({DataType.DT_FP16, DataType.DT_BF16})
_TILE_OP_OF = {"full": "fill"}  # a node op whose tiles have another name


class PrecisionWarning(PyptoWarning):
    """`enable_pass_verify`: an op's error exceeded `pass_verify_error_tol`."""


# ---- the rule -----------------------------------------------------------------------------------

def allowed_errors(m: int, rtol: float, atol: float) -> int:
    """How many elements of `m` (non-zero) may exceed the tolerance: floor(m·min(rtol, atol)),
    or floor(min(16, √m / 2)) when that is 0."""
    allowed = math.floor(m * min(rtol, atol))
    if allowed <= 0:
        allowed = math.floor(min(16.0, math.sqrt(max(m, 0)) / 2))
    return int(allowed)


@dataclass(frozen=True)
class Verdict:
    """One comparison of an output with its reference, by `check`'s rule."""

    n: int  # elements
    zeros: int  # elements where out and ref are both 0
    errors: int  # elements over tol (hard failures included)
    hard: int  # elements over 128·tol
    allowed: int  # errors allowed
    max_abs: float
    max_rel: float
    cosine: float
    rtol: float
    atol: float

    @property
    def passed(self) -> bool:
        return self.errors <= self.allowed and self.hard == 0

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "zeros": self.zeros, "errors": self.errors, "hard": self.hard,
                "allowed": self.allowed, "max_abs": _num(self.max_abs), "max_rel": _num(self.max_rel),
                "cosine": _num(self.cosine), "rtol": self.rtol, "atol": self.atol, "passed": self.passed}

    def describe(self) -> str:
        return (f"{self.errors} of {self.n} elements over tolerance (allowed {self.allowed}), {self.hard} hard "
                f"failure{'s' if self.hard != 1 else ''}, max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}, "
                f"cosine {self.cosine:.6f} (rtol {self.rtol:g}, atol {self.atol:g})")


def _num(x: float) -> float | str:
    """A float as JSON: non-finite values as strings ("inf", "nan")."""
    return float(x) if math.isfinite(x) else str(x)


def _f64(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return arr.astype(np.float64) if arr.dtype != np.float64 else arr


class Stats:
    """Running sums of the rule's quantities over several (out, ref) pairs — a loop op's
    iterations — so the verdict is the one the pairs stacked into one tensor would get."""

    def __init__(self, rtol: float, atol: float) -> None:
        self.rtol, self.atol = rtol, atol
        self.n = self.zeros = self.errors = self.hard = 0
        self.max_abs = self.max_rel = 0.0
        self.dot = self.oo = self.rr = 0.0
        self.count = 0  # pairs added
        self.first_bad: int | None = None  # the first pair failing on its own

    def add(self, out: Any, ref: Any) -> bool:
        """Add one pair; returns whether that pair passes on its own."""
        o, r = _f64(out).ravel(), _f64(ref).ravel()
        if o.shape != r.shape:
            raise ValueError(f"shapes differ: {np.shape(out)} vs {np.shape(ref)}")
        n = int(o.size)
        errors = hard = zeros = 0
        if n:
            with np.errstate(all="ignore"):
                finite = bool(np.isfinite(o).all() and np.isfinite(r).all())
                ao, ar = np.abs(o), np.abs(r)
                tol = ao + ar
                tol *= self.rtol / 2
                tol += self.atol
                diff = np.abs(o - r)
                if not finite:  # equal or both NaN: 0; a non-finite value on one side only: inf
                    fin = np.isfinite(o) & np.isfinite(r)
                    same = (o == r) | (np.isnan(o) & np.isnan(r))
                    diff = np.where(same, 0.0, np.where(fin, diff, np.inf))
                    tol = np.where(fin, tol, 0.0)
                bad = diff > tol
                errors = int(np.count_nonzero(bad))
                if errors:
                    hard = int(np.count_nonzero(diff[bad] > HARD_FACTOR * tol[bad]))
                zeros = int(np.count_nonzero((o == 0) & (r == 0)))
                self.max_abs = max(self.max_abs, float(diff.max()))
                rel = np.divide(diff, ar, out=np.zeros_like(diff), where=ar != 0)
                if not finite:
                    rel = np.where(fin, rel, np.where(same, 0.0, np.inf))
                    o, r = o[fin], r[fin]
                self.max_rel = max(self.max_rel, float(rel.max()))
                self.dot += float(o @ r)
                self.oo += float(o @ o)
                self.rr += float(r @ r)
        self.n += n
        self.zeros += zeros
        self.errors += errors
        self.hard += hard
        ok = errors <= allowed_errors(n - zeros, self.rtol, self.atol) and hard == 0
        if not ok and self.first_bad is None:
            self.first_bad = self.count
        self.count += 1
        return ok

    def verdict(self) -> Verdict:
        if self.oo == 0 and self.rr == 0:
            cosine = 1.0
        elif self.oo == 0 or self.rr == 0:
            cosine = 0.0
        else:
            cosine = self.dot / (math.sqrt(self.oo) * math.sqrt(self.rr))
        return Verdict(self.n, self.zeros, self.errors, self.hard,
                       allowed_errors(self.n - self.zeros, self.rtol, self.atol), self.max_abs, self.max_rel,
                       cosine, self.rtol, self.atol)


def check(out: Any, ref: Any, rtol: float = 1e-3, atol: float = 1e-3) -> Verdict:
    """Compare `out` with `ref` (same shape; any numeric dtypes) by PyPTO's rule (module doc)."""
    s = Stats(rtol, atol)
    s.add(out, ref)
    return s.verdict()


# ---- report shapes ------------------------------------------------------------------------------

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
    return None if isinstance(v, float) and math.isnan(v) else _num(v) if isinstance(v, float) else v


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
            return (f"{self.kernel}: every op within tolerance in {len(self.passes)} pass"
                    f"{'es' if len(self.passes) != 1 else ''} (rtol {self.rtol:g}, atol {self.atol:g})")
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
            half_ulp = "2^-9" if row.dtype == DataType.DT_BF16.short else "2^-11"
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
                "passed": self.passed, "first_failing_pass": None if p is None else p.name,
                "first_failing_op": None if first is None else first.to_json(),
                "passes": [x.to_json() for x in self.passes], "findings": [f.to_json() for f in self.findings()]}

    def dumps(self, indent: int | None = None) -> str:
        return json.dumps(self.to_json(), indent=indent)


# ---- running: values per node -------------------------------------------------------------------

@dataclass
class _Ref:
    """The fp64 run of a tensor graph: every computing node's values (per occurrence) and the outputs."""

    values: dict[int, list[np.ndarray]]
    outputs: dict[str, np.ndarray]
    order: list[int]  # nodes by first execution


def _reference(graph: Graph, arrays: Mapping[str, np.ndarray], syms: Mapping[str, int]) -> _Ref:
    values: dict[int, list[np.ndarray]] = {}
    order: list[int] = []

    def observe(node: Node, value: Any) -> None:
        if node.op in MOVES:
            return
        got = values.get(node.id)
        if got is None:
            got = values[node.id] = []
            order.append(node.id)
        got.append(np.array(value, copy=True))  # a later assemble may update it in place

    outs = Interpreter(graph, fp64=True, observer=observe).run(arrays, syms)
    return _Ref(values, {k: np.array(v, copy=True) for k, v in outs.items()}, order)


class _Saver:
    """`pass_verify_save_tensor`: each compared value and its reference as .npy."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def save(self, folder: str, stem: str, out: np.ndarray, ref: np.ndarray) -> None:
        if self.root is None:
            return
        d = self.root / folder
        d.mkdir(parents=True, exist_ok=True)
        np.save(d / f"{stem}.npy", np.asarray(out))
        np.save(d / f"{stem}.fp64.npy", np.asarray(ref))


class _Locator:
    """Node id -> source Where, via the record (a node a pass made: the line it came from)."""

    def __init__(self, record: CompileRecord) -> None:
        self.record = record
        self._cache: dict[int, Where | None] = {}

    def __call__(self, nid: int) -> Where | None:
        if nid not in self._cache:
            try:
                frames = self.record.source_of(nid)
            except KeyError:
                frames = []
            s = frames[0] if frames else None
            self._cache[nid] = None if s is None else Where(s.file, s.line, s.col, s.end_line, s.end_col)
        return self._cache[nid]


def _dtype_short(node: Node | None) -> str:
    return node.type.dtype.short if node is not None and node.type is not None else "?"


def _rows(stats: Mapping[int, Stats], seqs: Mapping[int, list[float]], nodes: Mapping[int, Node],
          order: Iterable[int], locate: _Locator) -> list[OpRow]:
    out = []
    for nid in order:
        s = stats.get(nid)
        if s is None:
            continue
        v = s.verdict()
        n = nodes.get(nid)
        seq = seqs[nid][s.first_bad] if s.first_bad is not None else seqs[nid][-1]
        out.append(OpRow(nid, n.op if n is not None else "?", _dtype_short(n), locate(nid), v, s.count, s.first_bad,
                         "op", n.name if n is not None else None, seq))
    return out


def _output_rows(graph: Graph, outs: Mapping[str, np.ndarray], ref: _Ref, rtol: float, atol: float,
                 locate: _Locator, saver: _Saver, folder: str) -> list[OpRow]:
    nodes = graph.by_id()
    rows = []
    for name, nid in graph.outputs:
        got, want = outs[name], ref.outputs[name]
        saver.save(folder, f"output_{name}", got, want)
        n = nodes.get(nid)
        rows.append(OpRow(nid, n.op if n is not None else "?", _dtype_short(n), locate(nid),
                          check(got, want, rtol, atol), kind="output", name=name, seq=math.inf))
    return rows


def _tensor_pass(graph: Graph, ref: _Ref, arrays: Mapping[str, np.ndarray], syms: Mapping[str, int],
                 rtol: float, atol: float, locate: _Locator, saver: _Saver, folder: str
                 ) -> tuple[list[OpRow], list[OpRow]]:
    stats: dict[int, Stats] = {}
    seqs: dict[int, list[float]] = {}
    counter = [0]

    def observe(node: Node, value: Any) -> None:
        if node.op in MOVES:
            return
        counter[0] += 1
        s = stats.get(node.id)
        if s is None:
            s = stats[node.id] = Stats(rtol, atol)
            seqs[node.id] = []
        k = s.count
        want = ref.values[node.id][k]
        s.add(value, want)
        seqs[node.id].append(counter[0])
        saver.save(folder, f"n{node.id}_{node.op}_L{_line(locate(node.id))}_{k}", value, want)

    outs = Interpreter(graph, observer=observe).run(arrays, syms)
    rows = _rows(stats, seqs, graph.by_id(), ref.order, locate)
    return rows, _output_rows(graph, outs, ref, rtol, atol, locate, saver, folder)


def _line(w: Where | None) -> int:
    return w.line if w is not None else 0


@dataclass
class _Tiled:
    """A tiled run's values: per computing node, per instance, the value put back together."""

    values: dict[int, list[tuple[int, np.ndarray]]]  # node -> [(instance, value)], instance order
    done_at: dict[tuple[int, int], int]  # (node, instance) -> index of its last tile op
    order: list[int]  # nodes by first tile op
    outputs: dict[str, np.ndarray]


def _computes(op: Any, node: Node | None) -> bool:
    """Whether tile op `op` computes a tile of its node's value (not a partial, load, store)."""
    if node is None or node.op in MOVES or "partial" in op.attrs:
        return False
    if op.op in ("combine", "combine_arg"):
        return True
    return bool(op.op == _TILE_OP_OF.get(node.op, node.op))


def _tiled_run(graph: Graph, tiles: TileGraph, arrays: Mapping[str, np.ndarray],
               executor: TileExecutor | None = None) -> _Tiled:
    """Run the tile graph op by op (the executor's reference path) and collect every computing
    node's tiles. A tile's place: its coordinate times the full tile size on each axis (the
    size of the tiles at coordinate 0; tails are smaller and last)."""
    ex = executor if executor is not None and executor.tiles is tiles else TileExecutor(graph, tiles)
    nodes = ex.nodes
    bufs = ex.gm(arrays)
    uses: dict[int, int] = {}
    for o in tiles.ops:
        for i in o.inputs:
            uses[i] = uses.get(i, 0) + 1
    vals: dict[int, np.ndarray] = {}
    parts: dict[tuple[int, int], list[tuple[tuple[int, ...], np.ndarray]]] = {}
    done_at: dict[tuple[int, int], int] = {}
    order: list[int] = []
    seen: set[int] = set()
    ctx = Ctx({}, False)
    with np.errstate(all="ignore"):
        for k, op in enumerate(tiles.ops):
            ex._op(op, vals, bufs, ctx)
            node = nodes.get(op.node)
            if _computes(op, node):
                if op.op == "matmul":
                    assert op.region is not None
                    tile = np.array(_view(bufs, op.region), copy=True)
                else:
                    tile = vals[op.id]
                parts.setdefault((op.node, op.instance), []).append((tuple(op.coord), tile))
                done_at[(op.node, op.instance)] = k
                if op.node not in seen:
                    seen.add(op.node)
                    order.append(op.node)
            for i in op.inputs:
                uses[i] -= 1
                if not uses[i]:
                    vals.pop(i, None)
            if op.id not in uses:
                vals.pop(op.id, None)
    values: dict[int, list[tuple[int, np.ndarray]]] = {}
    for (nid, inst), tl in sorted(parts.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        values.setdefault(nid, []).append((inst, _assemble_tiles(tl)))
    for lst in values.values():
        lst.sort(key=lambda x: x[0])
    return _Tiled(values, done_at, order, ex.outputs(bufs))


def _assemble_tiles(tiles: list[tuple[tuple[int, ...], np.ndarray]]) -> np.ndarray:
    first = tiles[0][1]
    rank = first.ndim
    if rank == 0 or len(tiles) == 1:
        return np.array(tiles[-1][1], copy=True)
    size = [0] * rank
    for coord, t in tiles:
        for a in range(rank):
            if coord[a] == 0:
                size[a] = max(size[a], t.shape[a])
    shape = [0] * rank
    for coord, t in tiles:
        for a in range(rank):
            shape[a] = max(shape[a], coord[a] * size[a] + t.shape[a])
    out = np.zeros(shape, dtype=first.dtype)
    for coord, t in tiles:  # a later tile at the same place (split-k) is the final value
        out[tuple(slice(c * s, c * s + n) for c, s, n in zip(coord, size, t.shape))] = t
    return out


def _match(got: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The comparable part of a tiled value and the reference's (a tail view's valid part)."""
    if got.shape == want.shape:
        return got, want
    if got.ndim == want.ndim and all(g <= w for g, w in zip(got.shape, want.shape)):
        return got, want[tuple(slice(0, g) for g in got.shape)]
    if got.size == want.size:
        return got.reshape(want.shape), want
    return None


def _tiled_pass(graph: Graph, tiles: TileGraph, ref: _Ref, arrays: Mapping[str, np.ndarray], rtol: float,
                atol: float, locate: _Locator, saver: _Saver, folder: str, executor: TileExecutor | None = None
                ) -> tuple[list[OpRow], list[OpRow], dict[str, TileGrid], list[int]]:
    run = _tiled_run(graph, tiles, arrays, executor)
    nodes = graph.by_id()
    stats: dict[int, Stats] = {}
    seqs: dict[int, list[float]] = {}
    skipped: list[int] = []
    for nid in run.order:
        got_list, want_list = run.values[nid], ref.values.get(nid, [])
        if len(got_list) != len(want_list):
            skipped.append(nid)
            continue
        s = Stats(rtol, atol)
        seq: list[float] = []
        for (inst, got), want in zip(got_list, want_list):
            pair = _match(got, want)
            if pair is None:
                continue
            s.add(*pair)
            seq.append(run.done_at[(nid, inst)])
            n = nodes[nid]
            saver.save(folder, f"n{nid}_{n.op}_L{_line(locate(nid))}_{inst}", pair[0], pair[1])
        if s.count:
            stats[nid], seqs[nid] = s, seq
        else:
            skipped.append(nid)
    order = sorted(stats, key=lambda nid: seqs[nid][0])
    rows = _rows(stats, seqs, nodes, order, locate)
    outputs = _output_rows(graph, run.outputs, ref, rtol, atol, locate, saver, folder)
    grids = {name: _grid(name, region, tiles, run.outputs[name], ref.outputs[name], rtol, atol)
             for name, region in tiles.outputs}
    return rows, outputs, grids, skipped


def _cells(tiles: TileGraph, target: Region) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The tiles (offset, shape), relative to `target`, that the program stores into it."""
    cells: dict[tuple[tuple[int, ...], tuple[int, ...]], None] = {}
    for o in tiles.ops:
        r = o.region
        if o.op not in ("store", "matmul") or r is None or r.buffer != target.buffer or r.layout != target.layout:
            continue
        rel = tuple(a - b for a, b in zip(r.offset, target.offset))
        if all(0 <= x and x + s <= t for x, s, t in zip(rel, r.shape, target.shape)):
            cells[(rel, tuple(r.shape))] = None
    return list(cells) or [((0,) * len(target.shape), tuple(target.shape))]


def _grid(name: str, target: Region, tiles: TileGraph, got: np.ndarray, want: np.ndarray, rtol: float,
          atol: float) -> TileGrid:
    cells = _cells(tiles, target)
    rank = len(target.shape)
    offsets = tuple(tuple(sorted({off[a] for off, _ in cells})) for a in range(rank))
    shape = tuple(len(o) for o in offsets)
    errors = np.full(shape, -1, dtype=np.int64)
    max_abs = np.full(shape, np.nan)
    passed = np.ones(shape, dtype=bool)
    g, w = (got, want) if got.shape == want.shape else (got.reshape(-1), want.reshape(-1))
    if g.ndim != rank:
        cells = [((0,) * rank, tuple(target.shape))]
        g, w = got.reshape(target.shape), want.reshape(target.shape)
    for off, shp in cells:
        idx = tuple(o.index(x) for o, x in zip(offsets, off))
        sl = tuple(slice(x, x + s) for x, s in zip(off, shp))
        v = check(g[sl], w[sl], rtol, atol)
        errors[idx] = max(int(errors[idx]), 0) + v.errors
        max_abs[idx] = v.max_abs if np.isnan(max_abs[idx]) else max(max_abs[idx], v.max_abs)
        passed[idx] = bool(passed[idx]) and v.passed
    tile = cells[0][1] if cells else tuple(target.shape)
    return TileGrid(name, tuple(tile), offsets, errors, max_abs, passed)


# ---- the report ---------------------------------------------------------------------------------

def _is_tensor(v: Any) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (int, float, bool))


def _arrays(inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    from pypto.frontend.jit import to_numpy

    return {k: to_numpy(v) for k, v in inputs.items() if _is_tensor(v)}


def _record_inputs(record: CompileRecord) -> dict[str, Any]:
    """Deterministic inputs for a record's parameters (as `pypto.inputs` makes them, numpy)."""
    from pypto.frontend.inputs import SEED, TensorSpec, make_tensor
    from pypto.ir.dtypes import from_short

    rng = np.random.default_rng(SEED)
    out: dict[str, Any] = {}
    for i in record.inputs:
        if i.dtype is not None and i.shape is not None and all(isinstance(d, int) for d in i.shape):
            out[i.name] = make_tensor(TensorSpec(from_short(i.dtype), tuple(int(d) for d in i.shape)), rng, False)
        elif i.value is not None:
            try:
                out[i.name] = ast.literal_eval(i.value)
            except (ValueError, SyntaxError):
                out[i.name] = i.value
        else:
            raise PyptoError(f"cannot make an input for {i.name!r} of {record.source.kernel} "
                             f"(shape {i.shape}); pass inputs=")
    return out


def _prepare(target: Any, inputs: Mapping[str, Any] | None) -> tuple[CompileRecord, dict[str, Any], Any]:
    """(record, inputs, executor or None) for a JitKernel, CompiledKernel or CompileRecord."""
    from pypto.frontend.jit import CompiledKernel, JitKernel

    if isinstance(target, CompileRecord):
        return target, dict(inputs) if inputs is not None else _record_inputs(target), None
    if isinstance(target, JitKernel):
        from pypto.frontend.inputs import example_arguments

        args = dict(inputs) if inputs is not None else example_arguments(target, use_torch=False)
        return compile_record(target, args), args, None
    if isinstance(target, CompiledKernel):
        if inputs is None:
            raise PyptoError(f"precision of compiled kernel {target.name}: pass inputs=")
        args = dict(inputs)
        syms = target.bind_symbols(_arrays(args), None)  # type: ignore[arg-type]
        lw = target.lower(syms)
        return CompileRecord.from_compiled(target, args, syms), args, lw.executor
    raise TypeError(f"precision_report takes a pypto kernel, a CompiledKernel or a CompileRecord, "
                    f"not {type(target).__name__}")


@dataclass
class _Selected:
    index: int
    name: str
    stage: str
    level: str
    changed: bool
    graph: Graph
    tiles: TileGraph | None

    @property
    def key(self) -> tuple[str, int]:
        return (self.level, id(self.tiles) if self.tiles is not None else id(self.graph))


def _select(record: CompileRecord, passes: Sequence[str | int] | None) -> list[_Selected]:
    available: list[_Selected] = []
    for p in record.passes:
        snap = p.snapshot
        if snap is None or p.error is not None:
            continue
        if p.stage == "tensor":
            available.append(_Selected(p.index, p.name, p.stage, "tensor", p.changed, snap.graph, None))
        elif snap.tiles is not None:
            available.append(_Selected(p.index, p.name, p.stage, "tiled", p.changed, snap.graph, snap.tiles))
    final = None
    if record.program.tiles is not None:
        final = _Selected(len(record.passes), FINAL, "final", "tiled", True, record.program.graph,
                          record.program.tiles)
    if not passes:
        out = [s for s in available if s.level == "tensor"] + ([final] if final is not None else [])
        if not out:  # a record loaded without snapshots: the final tensor graph
            out = [_Selected(len(record.passes), FINAL, "final", "tensor", True, record.graph, None)]
        return out
    chosen: list[_Selected] = []
    names = [s.name for s in available] + ([FINAL] if final is not None else [])
    for want in passes:
        if want == FINAL and final is not None:
            hit = [final]
        else:
            hit = [s for s in available if s.name == want or s.index == want]
        if not hit:
            raise PyptoError(f"pass_verify_pass_filter: no pass {want!r} to verify; known: {', '.join(names)}")
        chosen += [h for h in hit if h not in chosen]
    return sorted(chosen, key=lambda s: s.index)


def precision_report(target: Any, inputs: Mapping[str, Any] | None = None,
                     passes: Sequence[str | int] | None = None, rtol: float = 1e-3, atol: float = 1e-3, *,
                     save_dir: str | Path | None = None) -> PrecisionReport:
    """Compare every op with the fp64 reference after each selected pass (default: every
    tensor-stage pass and the final tiled program) — see the module doc for the rule.
    `target`: a kernel (`@pypto.jit`), a CompiledKernel (then `inputs` is required) or a
    CompileRecord with its snapshots; `inputs` maps parameter names to arguments (default:
    the kernel's example inputs); `passes`: pass names or record indices, "final" for the
    final tiled program; `save_dir`: write every compared value and its reference as .npy."""
    record, args, executor = _prepare(target, inputs)
    arrays = _arrays(args)
    syms = dict(record.bindings)
    selected = _select(record, passes)
    locate = _Locator(record)
    saver = _Saver(Path(save_dir) if save_dir is not None else None)
    # fp64 references, per tensor graph, kept while a later selected pass still needs them
    need: dict[int, int] = {}
    for s in selected:
        need[id(s.graph)] = need.get(id(s.graph), 0) + 1
    refs: dict[int, _Ref] = {}
    done: dict[tuple[str, int], PassResult] = {}
    results: list[PassResult] = []
    for s in selected:
        folder = f"{s.index:02d}_{s.name}"
        prev = done.get(s.key)
        if prev is not None and saver.root is None:
            results.append(PassResult(s.index, s.name, s.stage, s.level, s.changed, prev.rows, prev.outputs,
                                      prev.grids, prev.skipped, prev.same_as or prev.name))
        else:
            ref = refs.get(id(s.graph))
            if ref is None:
                ref = refs[id(s.graph)] = _reference(s.graph, arrays, syms)
            if s.level == "tensor":
                rows, outs = _tensor_pass(s.graph, ref, arrays, syms, rtol, atol, locate, saver, folder)
                res = PassResult(s.index, s.name, s.stage, s.level, s.changed, rows, outs)
            else:
                assert s.tiles is not None
                rows, outs, grids, skipped = _tiled_pass(s.graph, s.tiles, ref, arrays, rtol, atol, locate, saver,
                                                         folder, executor)
                res = PassResult(s.index, s.name, s.stage, s.level, s.changed, rows, outs, grids, skipped)
            done[s.key] = res
            results.append(res)
        need[id(s.graph)] -= 1
        if not need[id(s.graph)]:
            refs.pop(id(s.graph), None)
    in_loop: set[int] = set()
    counts: dict[tuple[str, int, str], int] = {}
    for g in {id(s.graph): s.graph for s in selected}.values():
        for n in g.nodes:
            if n.body is not None:
                in_loop.update(m.id for m in n.body.walk())
        here: dict[tuple[str, int, str], int] = {}
        for n in g.walk():
            w = locate(n.id)
            if w is not None and n.op not in MOVES:
                here[(w.file, w.line, n.op)] = here.get((w.file, w.line, n.op), 0) + 1
        for key, c in here.items():
            counts[key] = max(counts.get(key, 0), c)
    return PrecisionReport(record.source.kernel, record.source.file, rtol, atol, results, frozenset(in_loop), counts)


# ---- two configurations -------------------------------------------------------------------------

@dataclass
class ConfigRow:
    """One op matched across two configurations: each against its fp64 reference, and b against a."""

    key: tuple[str, int, str, int]  # (file, line, op, occurrence); an output: ("", 0, "output", index)
    where: Where | None
    node_a: int | None
    node_b: int | None
    a: Verdict | None  # a against its fp64 reference
    b: Verdict | None
    b_vs_a: Verdict | None  # None: unmatched, or the values do not line up
    kind: str = "op"  # "op" | "output"
    name: str | None = None  # the output's name

    @property
    def matched(self) -> bool:
        return self.node_a is not None and self.node_b is not None

    @property
    def diverges(self) -> bool:
        return self.b_vs_a is not None and not self.b_vs_a.passed

    def to_json(self) -> dict[str, Any]:
        return {"file": self.key[0], "line": self.key[1], "op": self.key[2], "occurrence": self.key[3],
                "kind": self.kind, "name": self.name, "node_a": self.node_a, "node_b": self.node_b,
                "a": None if self.a is None else self.a.to_json(), "b": None if self.b is None else self.b.to_json(),
                "b_vs_a": None if self.b_vs_a is None else self.b_vs_a.to_json(), "diverges": self.diverges}


@dataclass
class ConfigComparison:
    kernel_a: str
    kernel_b: str
    rows: list[ConfigRow]

    @property
    def first_divergent(self) -> ConfigRow | None:
        return next((r for r in self.rows if r.diverges), None)

    def to_json(self) -> dict[str, Any]:
        first = self.first_divergent
        return {"kernel_a": self.kernel_a, "kernel_b": self.kernel_b,
                "first_divergent": None if first is None else first.to_json(),
                "rows": [r.to_json() for r in self.rows]}

    def summary(self) -> str:
        first = self.first_divergent
        head = "no op diverges"
        if first is not None and first.b_vs_a is not None:
            head = f"first divergent op: {first.key[2]} at {first.key[0]}:{first.key[1]} — {first.b_vs_a.describe()}"
        lines = [f"{self.kernel_a} vs {self.kernel_b}: {head}"]
        def m(v: Verdict | None) -> str:
            return "-" if v is None else f"{v.max_abs:.2e}{'' if v.passed else '!'}"

        for r in self.rows:
            file, line, op, k = r.key
            what = f"output {r.name}" if r.kind == "output" else f"{op} {Path(file).name}:{line} #{k}"
            lines.append(f"  {what:<28} a {m(r.a):<10} b {m(r.b):<10} b-a {m(r.b_vs_a)}")
        return "\n".join(lines)


@dataclass
class _ConfigValues:
    values: dict[int, list[np.ndarray]]  # node -> per occurrence (device dtypes)
    ref: _Ref
    order: list[int]
    outputs: dict[str, np.ndarray]
    keys: dict[tuple[str, int, str, int], int]  # match key -> node
    locate: _Locator
    output_nodes: dict[str, int]


def _config_values(target: Any, inputs: Mapping[str, Any] | None, tiled: bool) -> tuple[str, _ConfigValues]:
    record, args, executor = _prepare(target, inputs)
    arrays = _arrays(args)
    syms = dict(record.bindings)
    graph = record.graph
    ref = _reference(graph, arrays, syms)
    locate = _Locator(record)
    if tiled and record.program.tiles is not None:
        run = _tiled_run(graph, record.program.tiles, arrays, executor)
        values = {nid: [v for _, v in lst] for nid, lst in run.values.items()}
        order, outputs = run.order, run.outputs
    else:
        values = {}
        order = []

        def observe(node: Node, value: Any) -> None:
            if node.op not in MOVES:
                if node.id not in values:
                    values[node.id] = []
                    order.append(node.id)
                values[node.id].append(np.array(value, copy=True))

        outputs = Interpreter(graph, observer=observe).run(arrays, syms)
    nodes = graph.by_id()
    keys: dict[tuple[str, int, str, int], int] = {}
    seen: dict[tuple[str, int, str], int] = {}
    for nid in order:
        w = locate(nid)
        base = (w.file if w is not None else "", _line(w), nodes[nid].op)
        k = seen.get(base, 0)
        seen[base] = k + 1
        keys[(*base, k)] = nid
    return record.source.kernel, _ConfigValues(values, ref, order, outputs, keys, locate, dict(graph.outputs))


def _stacked(pairs: Iterable[tuple[np.ndarray, np.ndarray]], rtol: float, atol: float) -> Verdict | None:
    s = Stats(rtol, atol)
    for got, want in pairs:
        m = _match(got, want)
        if m is None:
            return None
        s.add(*m)
    return s.verdict() if s.count else None


def compare_configs(a: Any, b: Any, inputs: Mapping[str, Any] | None = None,
                    inputs_b: Mapping[str, Any] | None = None, *, rtol: float = 1e-3, atol: float = 1e-3,
                    tiled: bool = True) -> ConfigComparison:
    """Compare two configurations of one kernel op by op (module doc). `a`, `b`: kernels,
    CompiledKernels or CompileRecords; `inputs` for a (default: example inputs), `inputs_b`
    for b (default: the same as a's — pass cast copies to compare dtypes); `tiled`: use the
    final tiled programs' values (tile shapes matter), else the reference interpreter's."""
    name_a, va = _config_values(a, inputs, tiled)
    name_b, vb = _config_values(b, inputs_b if inputs_b is not None else inputs, tiled)
    rows: list[ConfigRow] = []

    def own(v: _ConfigValues, nid: int | None) -> Verdict | None:
        if nid is None:
            return None
        return _stacked(zip(v.values[nid], v.ref.values.get(nid, [])), rtol, atol) \
            if len(v.values[nid]) == len(v.ref.values.get(nid, [])) else None

    for key, na in va.keys.items():
        nb = vb.keys.get(key)
        ab = None
        if nb is not None and len(va.values[na]) == len(vb.values[nb]):
            ab = _stacked(zip(vb.values[nb], va.values[na]), rtol, atol)
        rows.append(ConfigRow(key, va.locate(na), na, nb, own(va, na), own(vb, nb), ab))
    for key, nb in vb.keys.items():
        if key not in va.keys:
            rows.append(ConfigRow(key, vb.locate(nb), None, nb, None, own(vb, nb), None))
    for k, (name, got_a) in enumerate(va.outputs.items()):
        got_b = vb.outputs.get(name)
        na, nb = va.output_nodes[name], vb.output_nodes.get(name)
        ab = _stacked([(got_b, got_a)], rtol, atol) if got_b is not None else None
        rows.append(ConfigRow(("", 0, "output", k), va.locate(na), na, nb,
                              check(got_a, va.ref.outputs[name], rtol, atol),
                              check(got_b, vb.ref.outputs[name], rtol, atol) if got_b is not None else None, ab,
                              "output", name))
    return ConfigComparison(name_a, name_b, rows)


# ---- verify_options -----------------------------------------------------------------------------

def verify_compiled(ck: Any, arrays: Mapping[str, np.ndarray],
                    warn: Callable[[str], None] | None = None) -> PrecisionReport:
    """`verify_options={"enable_pass_verify": True}`: the precision check of one call of
    compiled kernel `ck` on `arrays` (never written), its report stored as `ck.precision`;
    a failure warns (PrecisionWarning) naming the first failing op's file:line."""
    vo = ck.options.get("verify_options", {})
    tol = list(vo.get("pass_verify_error_tol") or [1e-3, 1e-3])
    rtol, atol = float(tol[0]), float(tol[1] if len(tol) > 1 else tol[0])
    save_dir: Path | None = None
    if vo.get("pass_verify_save_tensor"):
        if vo.get("pass_verify_save_tensor_dir"):
            save_dir = Path(vo["pass_verify_save_tensor_dir"])
        else:
            from pypto.compiler.instruments import new_run_dir

            save_dir = new_run_dir(ck.name) / "verify"
    inputs = {k: np.array(v, copy=True) for k, v in arrays.items()}
    report = precision_report(ck, inputs, list(vo.get("pass_verify_pass_filter") or []), rtol, atol,
                              save_dir=save_dir)
    ck.precision = report
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        (save_dir / "precision.json").write_text(report.dumps(indent=1))
    if not report.passed:
        msg = f"pypto precision check (enable_pass_verify) failed — {report.message()}"
        if warn is not None:
            warn(msg)
        else:
            warnings.warn(msg, PrecisionWarning, stacklevel=_user_stacklevel())
    return report


def _user_stacklevel() -> int:
    """The stacklevel of warnings.warn (called from verify_compiled) that names the user's frame."""
    import sys

    from pypto.ir.source import is_user_frame

    frame = sys._getframe(1)  # verify_compiled: stacklevel 1
    level = 1
    while frame is not None and not is_user_frame(frame):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level if frame is not None else 1


__all__ = ("FINAL", "ConfigComparison", "ConfigRow", "OpRow", "PassResult", "PrecisionReport", "PrecisionWarning",
           "Stats", "TileGrid", "Verdict", "allowed_errors", "check", "compare_configs", "precision_report",
           "verify_compiled")
