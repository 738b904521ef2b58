"""PyPTO names this release accepts but does not implement yet (spec tiers T2 and T3).

Each name exists, so a kernel that uses one fails with a `PyptoError` that names the op,
its tier and the user's line — not with an `AttributeError` from deep inside Python.
Implementing one means deleting its name here and adding it to `pypto.ir.ops`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.errors import PyptoError

T2_OPS = (
    "argsort", "cumsum", "cumprod",
    "tril", "triu", "one_hot", "pad", "quantize", "dequantize", "fmod", "remainder", "floor_div", "ceil_div",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
    "hypot", "atan2", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "signbit",
    "prelu", "axpy_", "atomic_add", "function",
)
T3_OPS = (
    "scaled_mm", "conv", "quant_mx", "pack", "unpack", "interleave", "deinterleave", "uniform",
    "normal", "index_add", "index_add_", "index_put_",
)
EXPERIMENTAL = {"online_softmax": "T2", "online_softmax_update": "T2"}
T3_DTYPES = ("DT_INT4", "DT_FP8", "DT_HF4", "DT_HF8", "DT_FP4", "DT_FP4E2M1",
             "DT_FP4E1M2")


def rejecting(name: str, tier: str) -> Callable[..., Any]:
    def op(*args: Any, **kwargs: Any) -> Any:
        raise PyptoError(f"pypto.{name} is not supported yet (PyPTO API tier {tier}); this release implements "
                         f"tier T1 — see the op list in docs/ARCHITECTURE.md")

    op.__name__ = name
    op.__doc__ = f"Not supported yet (tier {tier}): raises PyptoError."
    return op


def functions() -> dict[str, Callable[..., Any]]:
    out = {n: rejecting(n, "T2") for n in T2_OPS}
    out.update({n: rejecting(n, "T3") for n in T3_OPS})
    return out


class UnsupportedDataType:
    """A T3 dtype name: accepted as a value, rejected when a tensor would use it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"pypto.{self.name}"

    def reject(self) -> PyptoError:
        return PyptoError(f"pypto.{self.name} is not supported on this board (PyPTO API tier T3); "
                          f"use DT_FP16, DT_BF16, DT_FP32 or DT_INT8")


dtypes = {n: UnsupportedDataType(n) for n in T3_DTYPES}
