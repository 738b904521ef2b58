"""PyPTO's tolerance rule: whether an output is close enough to its reference, and by how much it is not.

Every judgement of the precision analysis — an op against its fp64 reference, one tile of an
output, one configuration against another — applies this one rule (`check`, or `Stats` to judge
a loop op's iterations together), so it lives apart from what is being compared.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.ir.dtypes import DataType

HARD_FACTOR = 128  # an element over 128·tol is a hard failure


def allowed_errors(m: int, rtol: float, atol: float, share: float = 0.0) -> int:
    """How many elements of `m` (non-zero) may exceed the tolerance: floor(m·min(rtol, atol)),
    or floor(min(16, √m / 2)) when that is 0 — and at least floor(m·share) (a dtype's tolerance)."""
    allowed = math.floor(m * min(rtol, atol))
    if allowed <= 0:
        allowed = math.floor(min(16.0, math.sqrt(max(m, 0)) / 2))
    return int(max(allowed, math.floor(max(m, 0) * share)))


# The tolerances PyPTO's own golden checks use, by the dtype of the value judged (rtol, atol); fp32
# values that come out of an accumulation (a reduction, softmax, a matmul) get the wider figure.
BY_DTYPE: dict[DataType, tuple[float, float]] = {
    DataType.DT_BF16: (2.0 ** -7, 1e-4),
    DataType.DT_FP16: (1e-3, 1e-3),
    DataType.DT_FP32: (1e-3, 1e-3),
    # PyPTO's checks name no fp8 figures: one unit in the last place of each format (3 and 2 mantissa
    # bits), and its smallest subnormal
    DataType.DT_FP8E4M3: (2.0 ** -3, 2.0 ** -9),
    DataType.DT_FP8E5M2: (2.0 ** -2, 2.0 ** -16),
}
FP32_ACCUMULATED = (3e-3, 3e-3)
ACCUMULATING_OPS = frozenset({"sum", "prod", "var", "softmax", "rms_norm", "matmul", "combine"})
OUTLIER_SHARE = 0.005  # PyPTO's checks let 0.5 % of the elements fall outside the bounds


@dataclass(frozen=True)
class Tolerance:
    """What "close enough" means for a report: fixed `rtol`/`atol` for every value (the rule as the
    module doc states it; `pass_verify_error_tol`), or — both None, the default — by each value's
    dtype as PyPTO's golden checks judge it (`BY_DTYPE`), with `OUTLIER_SHARE` of the elements
    allowed outside the bounds."""

    rtol: float | None = None
    atol: float | None = None

    @property
    def by_dtype(self) -> bool:
        return self.rtol is None and self.atol is None

    def of(self, dtype: DataType | None, accumulated: bool = False) -> tuple[float, float, float]:
        """(rtol, atol, share of elements allowed past them) for a value of `dtype`."""
        if not self.by_dtype:
            rtol = self.rtol if self.rtol is not None else self.atol
            atol = self.atol if self.atol is not None else self.rtol
            assert rtol is not None and atol is not None
            return rtol, atol, 0.0
        if dtype is DataType.DT_FP32 and accumulated:
            return (*FP32_ACCUMULATED, OUTLIER_SHARE)
        if dtype is not None and dtype.is_float:
            return (*BY_DTYPE.get(dtype, BY_DTYPE[DataType.DT_FP32]), OUTLIER_SHARE)
        return 1e-3, 1e-3, 0.0  # integers and bools: exact, as before

    def headline(self) -> tuple[float, float]:
        """One (rtol, atol) to show for the report: the fixed pair, or fp32's."""
        return self.of(DataType.DT_FP32)[:2]

    def describe(self) -> str:
        if not self.by_dtype:
            rtol, atol, _ = self.of(None)
            return f"rtol {rtol:g}, atol {atol:g}"
        parts = [f"{d.short} rtol {r:g} atol {a:g}" for d, (r, a) in BY_DTYPE.items()]
        return (f"by dtype: {'; '.join(parts)} (fp32 after a reduction or matmul: rtol {FP32_ACCUMULATED[0]:g}); "
                f"{OUTLIER_SHARE:.1%} of elements may exceed")


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
                "allowed": self.allowed, "max_abs": json_float(self.max_abs), "max_rel": json_float(self.max_rel),
                "cosine": json_float(self.cosine), "rtol": self.rtol, "atol": self.atol, "passed": self.passed}

    def describe(self) -> str:
        return (f"{self.errors} of {self.n} elements over tolerance (allowed {self.allowed}), {self.hard} hard "
                f"failure{'s' if self.hard != 1 else ''}, max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}, "
                f"cosine {self.cosine:.6f} (rtol {self.rtol:g}, atol {self.atol:g})")


def json_float(x: float) -> float | str:
    """A float as JSON: non-finite values as strings ("inf", "nan")."""
    return float(x) if math.isfinite(x) else str(x)


def _f64(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return arr.astype(np.float64) if arr.dtype != np.float64 else arr


class Stats:
    """Running sums of the rule's quantities over several (out, ref) pairs — a loop op's
    iterations — so the verdict is the one the pairs stacked into one tensor would get."""

    def __init__(self, rtol: float, atol: float, share: float = 0.0) -> None:
        self.rtol, self.atol, self.share = rtol, atol, share
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
        ok = errors <= allowed_errors(n - zeros, self.rtol, self.atol, self.share) and hard == 0
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
                       allowed_errors(self.n - self.zeros, self.rtol, self.atol, self.share), self.max_abs,
                       self.max_rel,
                       cosine, self.rtol, self.atol)


def check(out: Any, ref: Any, rtol: float = 1e-3, atol: float = 1e-3, share: float = 0.0) -> Verdict:
    """Compare `out` with `ref` (same shape; any numeric dtypes) by PyPTO's rule (module doc); `share`
    of the non-zero elements may exceed the tolerance besides."""
    s = Stats(rtol, atol, share)
    s.add(out, ref)
    return s.verdict()
