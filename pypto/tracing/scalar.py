"""`SymbolicScalar`: the user-facing integer whose value is known only at run time.

Dynamic dims (`x.shape[0]` of a DYNAMIC axis) and `pypto.loop` indices are symbolic
scalars. Arithmetic builds expressions; using one where Python needs a concrete value
(`range(b)`, `if i == 0:`) is a clear error that names the alternative.
"""

from __future__ import annotations

import warnings
from typing import Any

from pypto.ir import symbolic as S
from pypto.ir.errors import PyptoError
from pypto.tracing.tiling import PyptoWarning


def as_dim(v: Any) -> S.Dim:
    """A Python int or SymbolicScalar as a `Dim`; anything else is a user error."""
    if isinstance(v, SymbolicScalar):
        return v.expr
    if isinstance(v, S.SymExpr):
        return v
    if isinstance(v, bool):
        raise PyptoError(f"expected an int or symbolic scalar, got bool {v!r}")
    if isinstance(v, int):
        return v
    if hasattr(v, "__index__"):
        return int(v.__index__())
    raise PyptoError(f"expected an int or symbolic scalar, got {type(v).__name__} {v!r}")


def wrap(d: S.Dim) -> int | SymbolicScalar:
    return d if isinstance(d, int) else SymbolicScalar(d)


class SymbolicScalar:
    __slots__ = ("expr",)

    def __init__(self, value: Any = 0, initial: Any = None) -> None:
        # PyPTO's constructor takes any Python int, and a bool is one (`symbolic_scalar(flag)`): 0 or 1; or a name
        # with an initial value, which is its value here (the name labels it on the device), or without one
        if isinstance(value, str):
            if initial is None:  # a symbol the device's runtime binds: nothing here knows its value
                warnings.warn(f"pypto.SymbolicScalar({value!r}) has no value: PyPTO's runtime binds such a symbol on "
                              f"the device; this compile takes 0 (give it one, pypto.SymbolicScalar({value!r}, N), "
                              f"to lower the kernel for another)", PyptoWarning, stacklevel=2)
            self.expr = as_dim(0 if initial is None else initial)
            return
        self.expr: S.Dim = as_dim(int(value) if isinstance(value, bool) else value)

    # arithmetic
    def __add__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.add(self.expr, as_dim(o)))

    __radd__ = __add__

    def __sub__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.sub(self.expr, as_dim(o)))

    def __rsub__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.sub(as_dim(o), self.expr))

    def __mul__(self, o: Any) -> Any:
        if getattr(type(o), "__pypto_tensor__", False):  # a tensor (its class says so): tensor * scalar
            return o * self
        return wrap(S.mul(self.expr, as_dim(o)))

    __rmul__ = __mul__

    def __floordiv__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.floordiv(self.expr, as_dim(o)))

    def __rfloordiv__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.floordiv(as_dim(o), self.expr))

    def __mod__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.mod(self.expr, as_dim(o)))

    def __rmod__(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.mod(as_dim(o), self.expr))

    def __neg__(self) -> int | SymbolicScalar:
        return wrap(S.neg(self.expr))

    def max(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.maximum(self.expr, as_dim(o)))

    def min(self, o: Any) -> int | SymbolicScalar:
        return wrap(S.minimum(self.expr, as_dim(o)))

    def as_variable(self) -> None:
        """PyPTO's hint to keep this expression as an intermediate variable of its generated code;
        the value is the same either way, and here it changes nothing."""

    # concreteness
    def is_concrete(self) -> bool:
        return isinstance(self.expr, int)

    def concrete(self) -> int:
        if isinstance(self.expr, int):
            return self.expr
        raise PyptoError(f"symbolic scalar {S.to_str(self.expr)} has no value at compile time")

    def __index__(self) -> int:
        if isinstance(self.expr, int):
            return self.expr
        raise PyptoError(f"{S.to_str(self.expr)} is only known at run time (a DYNAMIC dim or a loop index); "
                         f"use pypto.loop(...) instead of range(...), and symbolic arithmetic instead of ints")

    __int__ = __index__

    def __bool__(self) -> bool:
        if isinstance(self.expr, int):
            return bool(self.expr)
        raise PyptoError(f"{S.to_str(self.expr)} is only known at run time: an `if` statement in the kernel body "
                         f"on it is a runtime branch, but here Python needs its value now (`and`/`or`/`not`, "
                         f"a conditional expression, `while`, or an `if` whose branch returns or breaks)")

    def _cmp(self, o: Any, op: str) -> Any:
        """True/False when decidable now; otherwise the runtime condition (a 0/1 symbolic scalar)."""
        a, b = self.expr, as_dim(o)
        fn = {"eq": S.eq, "ne": S.ne, "lt": S.lt, "le": S.le, "gt": lambda x, y: S.lt(y, x),
              "ge": lambda x, y: S.le(y, x)}[op]
        c = fn(a, b)
        return bool(c) if isinstance(c, int) else SymbolicScalar(c)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return self._cmp(o, "eq")

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return self._cmp(o, "ne")

    def __lt__(self, o: Any) -> Any:
        return self._cmp(o, "lt")

    def __le__(self, o: Any) -> Any:
        return self._cmp(o, "le")

    def __gt__(self, o: Any) -> Any:
        return self._cmp(o, "gt")

    def __ge__(self, o: Any) -> Any:
        return self._cmp(o, "ge")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"SymbolicScalar({S.to_str(self.expr)})"

    __str__ = __repr__


def scalar_min(*args: Any, **kwargs: Any) -> Any:
    """`min(a, b)` in a kernel body (and `pypto.min`): with a symbolic scalar among two positional
    arguments, the symbolic minimum (known at run time); anything else is the builtin `min`."""
    if len(args) == 2 and not kwargs and any(isinstance(a, SymbolicScalar) for a in args):
        return wrap(S.minimum(as_dim(args[0]), as_dim(args[1])))
    return min(*args, **kwargs)


def scalar_max(*args: Any, **kwargs: Any) -> Any:
    """`max(a, b)` in a kernel body (and `pypto.max`): as `scalar_min`, for the maximum."""
    if len(args) == 2 and not kwargs and any(isinstance(a, SymbolicScalar) for a in args):
        return wrap(S.maximum(as_dim(args[0]), as_dim(args[1])))
    return max(*args, **kwargs)


def ceildiv(a: Any, b: Any) -> Any:
    """`pypto.ceildiv(a, b)`: `a / b` rounded up, `(a + b - 1) // b`, on ints or symbolic scalars
    (a symbolic result is known at run time; loop counts and tile counts are its usual use)."""
    return (a + b - 1) // b


def symbolic_scalar(value: Any = 0) -> int | SymbolicScalar:
    """`pypto.symbolic_scalar(x)`: an int (a bool too: 0 or 1) is an int-valued scalar, a symbol stays
    symbolic."""
    if isinstance(value, SymbolicScalar):
        return value
    return SymbolicScalar(value)
