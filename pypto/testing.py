"""Comparing kernel outputs with a golden reference (torch), as examples and tests do.

`compare` follows PyPTO's example practice: elementwise `|got - want| <= atol + rtol·|want|`
(numpy's allclose rule), with the max-abs difference reported; bf16 results are judged by
max-abs difference alone. `report` prints one line per check and returns an exit code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Check:
    name: str
    max_abs: float
    rtol: float
    atol: float
    ok: bool
    shape: tuple[int, ...] = ()

    def __str__(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return (f"{mark} {self.name:<40} shape={list(self.shape)!s:<18} max|diff|={self.max_abs:.3e} "
                f"(rtol={self.rtol:g}, atol={self.atol:g})")


def _np(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach"):
        t = x.detach().cpu()
        if str(t.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):  # no numpy type
            t = t.float()
        return np.asarray(t.numpy())
    return np.asarray(x)


def compare(name: str, got: Any, want: Any, *, rtol: float = 1e-3, atol: float = 1e-3,
            max_abs_only: bool = False) -> Check:
    g = _np(got).astype(np.float64)
    w = _np(want).astype(np.float64)
    if g.shape != w.shape:
        return Check(f"{name} (shape {list(g.shape)} != {list(w.shape)})", float("inf"), rtol, atol, False, g.shape)
    if g.size == 0:
        return Check(name, 0.0, rtol, atol, True, g.shape)
    same_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):  # inf - inf: handled just below
        diff = np.where(same_nan, 0.0, np.abs(g - w))
    both_inf = np.isinf(g) & np.isinf(w) & (np.sign(g) == np.sign(w))
    diff = np.where(both_inf, 0.0, diff)
    max_abs = float(np.max(diff))
    if max_abs_only:
        ok = max_abs <= atol
    else:
        ok = bool(np.all(diff <= atol + rtol * np.where(np.isinf(w), 0.0, np.abs(w))))
    return Check(name, max_abs, rtol, atol, ok, g.shape)


def report(checks: Iterable[Check], title: str = "") -> int:
    checks = list(checks)
    if title:
        print(title)
    for c in checks:
        print(f"  {c}")
    bad = [c for c in checks if not c.ok]
    print(f"  {len(checks) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0
