"""PyPTO 3's parameter types: `pl.Tensor[[M, N], pl.FP32]`, `pl.Out[...]`, `pl.InOut[...]`,
`pl.Scalar[dtype]`, `pl.dynamic(name)` and the dtype names (`pl.FP32`, `pl.BF16`, ...).

Why it exists: a `@pl.jit` kernel declares its parameters with these subscript forms, not with
CANN PyPTO's `pypto.Tensor(shape, dtype)`. They are annotations only — inside a kernel the
parameters are the tracer's tensor handles (`pypto.tracing.tensor.Tensor`) — and `spec_of`
turns one into the jit's `ParamSpec`, so both dialects bind arguments the same way. The dtype
names are the IR's `DataType` members themselves: a `pl.FP32` is a `pypto.DT_FP32`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from pypto.frontend.jit import ParamSpec
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.tracing.scalar import SymbolicScalar

BOOL = DataType.DT_BOOL
INT8 = DataType.DT_INT8
INT16 = DataType.DT_INT16
INT32 = DataType.DT_INT32
INT64 = DataType.DT_INT64
UINT8 = DataType.DT_UINT8
UINT16 = DataType.DT_UINT16
UINT32 = DataType.DT_UINT32
UINT64 = DataType.DT_UINT64
FP16 = DataType.DT_FP16
BF16 = DataType.DT_BF16
FP32 = DataType.DT_FP32
# PyPTO 3's INDEX is the 64-bit integer of loop variables and dims
INDEX = DataType.DT_INT64
DTYPES = {"BOOL": BOOL, "INT8": INT8, "INT16": INT16, "INT32": INT32, "INT64": INT64, "UINT8": UINT8,
          "UINT16": UINT16, "UINT32": UINT32, "UINT64": UINT64, "FP16": FP16, "BF16": BF16, "FP32": FP32,
          "INDEX": INDEX}


class Direction(enum.Enum):
    """How a kernel uses a tensor parameter: read (`In`, the default), written (`Out`) or both."""

    IN = "In"
    OUT = "Out"
    INOUT = "InOut"


@dataclass(frozen=True)
class TensorType:
    """`pl.Tensor[[shape], dtype]`: a DDR tensor parameter's declared shape and dtype (either may be
    None: `pl.Tensor` alone takes both from the argument), and its direction."""

    shape: tuple[Any, ...] | None
    dtype: DataType | None
    direction: Direction = Direction.IN


@dataclass(frozen=True)
class ScalarType:
    """`pl.Scalar[dtype]`: a value passed by value (here: a compile-time constant of the trace)."""

    dtype: DataType


def _dtype(value: Any, what: str) -> DataType:
    if not isinstance(value, DataType):
        raise PyptoError(f"{what}: the dtype must be a pl dtype such as pl.FP32, got {value!r}")
    return value


class Tensor:
    """`pl.Tensor[[M, N], pl.FP32]` (subscripting makes the annotation); `pl.Tensor` alone is a
    tensor of any shape and dtype."""

    def __class_getitem__(cls, item: Any) -> TensorType:
        if not isinstance(item, tuple) or len(item) != 2:
            raise PyptoError(f"pl.Tensor[[shape], dtype] takes a shape list and a dtype, got {item!r}")
        shape, dtype = item
        if not isinstance(shape, (list, tuple)):
            raise PyptoError(f"pl.Tensor[[shape], dtype]: the shape must be a list, got {shape!r}")
        return TensorType(tuple(shape), _dtype(dtype, "pl.Tensor"))


def _directed(item: Any, direction: Direction, what: str) -> TensorType:
    if item is Tensor:
        return TensorType(None, None, direction)
    if not isinstance(item, TensorType):
        raise PyptoError(f"{what}[...] wraps a pl.Tensor[...] annotation, got {item!r}")
    return TensorType(item.shape, item.dtype, direction)


class Out:
    """`pl.Out[pl.Tensor[...]]`: a parameter the kernel only writes."""

    def __class_getitem__(cls, item: Any) -> TensorType:
        return _directed(item, Direction.OUT, "pl.Out")


class InOut:
    """`pl.InOut[pl.Tensor[...]]`: a parameter the kernel reads and writes."""

    def __class_getitem__(cls, item: Any) -> TensorType:
        return _directed(item, Direction.INOUT, "pl.InOut")


class Scalar:
    """`pl.Scalar[pl.FP32]`: a scalar parameter."""

    def __class_getitem__(cls, item: Any) -> ScalarType:
        return ScalarType(_dtype(item, "pl.Scalar"))


def dynamic(name: str) -> SymbolicScalar:
    """`pl.dynamic("M")`: a dimension bound per call from the argument's shape."""
    return SymbolicScalar(S.sym(str(name)))


def spec_of(name: str, index: int, ann: Any) -> ParamSpec | None:
    """The jit's `ParamSpec` for a tensor annotation; None for a scalar or an unannotated parameter."""
    if ann is Tensor:
        ann = TensorType(None, None)
    if not isinstance(ann, TensorType):
        return None
    if ann.shape is None:
        return ParamSpec(name, index, None, ann.dtype, True)
    entries: list[Any] = []
    for i, d in enumerate(ann.shape):
        if isinstance(d, SymbolicScalar) and not d.is_concrete() and isinstance(d.expr, S.SymExpr) \
                and len(S.symbols_of(d.expr)) == 1 and d.expr == S.sym(next(iter(S.symbols_of(d.expr)))):
            entries.append(("sym", next(iter(S.symbols_of(d.expr)))))
        elif isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            entries.append(d)
        else:
            raise PyptoError(f"parameter {name!r}: shape entry {i} is {d!r}; use an int or a pl.dynamic(name)")
    return ParamSpec(name, index, tuple(entries), ann.dtype, False)
