"""Data types: the `DataType` enum, its sizes, and the numpy/torch types that carry it on the CPU.

One table maps every PyPTO dtype to its byte size, its numpy dtype (bfloat16 and the fp8
formats come from `ml_dtypes`, so they are real bfloat16 / float8, never a silent fp32) and its
torch name. Type promotion between operands follows torch's rules, so kernels compute what users
expect; like torch, no fp8 type promotes with another type (cast first).
"""

from __future__ import annotations

import enum
from typing import Any

import ml_dtypes
import numpy as np

from pypto.ir.errors import ShapeError


class DataType(enum.Enum):
    """PyPTO's element types. The value is the short name used in graph text (`fp32`)."""

    DT_FP32 = "fp32"
    DT_FP16 = "fp16"
    DT_BF16 = "bf16"
    DT_INT8 = "int8"
    DT_INT16 = "int16"
    DT_INT32 = "int32"
    DT_INT64 = "int64"
    DT_UINT8 = "uint8"
    DT_BOOL = "bool"
    DT_UINT16 = "uint16"
    DT_UINT32 = "uint32"
    DT_UINT64 = "uint64"
    DT_DOUBLE = "fp64"
    DT_FP8E4M3 = "fp8e4m3"  # torch.float8_e4m3fn: 4 exponent bits, 3 mantissa bits, no inf
    DT_FP8E5M2 = "fp8e5m2"  # torch.float8_e5m2: 5 exponent bits, 2 mantissa bits

    def __repr__(self) -> str:
        return f"pypto.{self.name}"

    @property
    def short(self) -> str:
        return self.value

    @property
    def is_float(self) -> bool:
        return self in _FLOATS

    @property
    def is_int(self) -> bool:
        return not self.is_float and self is not DataType.DT_BOOL

    @property
    def is_signed(self) -> bool:
        return self.is_float or self in (DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64)

    @property
    def nbytes(self) -> int:
        return _SIZE[self]

    @property
    def np(self) -> np.dtype:
        return _NP[self]


_FLOATS = {DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16, DataType.DT_DOUBLE, DataType.DT_FP8E4M3,
           DataType.DT_FP8E5M2}
FP8 = frozenset({DataType.DT_FP8E4M3, DataType.DT_FP8E5M2})
_SIZE = {
    DataType.DT_FP32: 4, DataType.DT_FP16: 2, DataType.DT_BF16: 2, DataType.DT_INT8: 1,
    DataType.DT_INT16: 2, DataType.DT_INT32: 4, DataType.DT_INT64: 8, DataType.DT_UINT8: 1,
    DataType.DT_BOOL: 1, DataType.DT_UINT16: 2, DataType.DT_UINT32: 4, DataType.DT_UINT64: 8,
    DataType.DT_DOUBLE: 8, DataType.DT_FP8E4M3: 1, DataType.DT_FP8E5M2: 1,
}
_NP: dict[DataType, np.dtype] = {
    DataType.DT_FP32: np.dtype(np.float32), DataType.DT_FP16: np.dtype(np.float16),
    DataType.DT_BF16: np.dtype(ml_dtypes.bfloat16), DataType.DT_INT8: np.dtype(np.int8),
    DataType.DT_INT16: np.dtype(np.int16), DataType.DT_INT32: np.dtype(np.int32),
    DataType.DT_INT64: np.dtype(np.int64), DataType.DT_UINT8: np.dtype(np.uint8),
    DataType.DT_BOOL: np.dtype(np.bool_), DataType.DT_UINT16: np.dtype(np.uint16),
    DataType.DT_UINT32: np.dtype(np.uint32), DataType.DT_UINT64: np.dtype(np.uint64),
    DataType.DT_DOUBLE: np.dtype(np.float64), DataType.DT_FP8E4M3: np.dtype(ml_dtypes.float8_e4m3fn),
    DataType.DT_FP8E5M2: np.dtype(ml_dtypes.float8_e5m2),
}
_FROM_NP = {v: k for k, v in _NP.items()}
_BY_SHORT = {d.short: d for d in DataType}

# torch dtype attribute names, looked up lazily so that importing pypto never imports torch.
_TORCH_NAME = {
    DataType.DT_FP32: "float32", DataType.DT_FP16: "float16", DataType.DT_BF16: "bfloat16",
    DataType.DT_INT8: "int8", DataType.DT_INT16: "int16", DataType.DT_INT32: "int32",
    DataType.DT_INT64: "int64", DataType.DT_UINT8: "uint8", DataType.DT_BOOL: "bool",
    DataType.DT_UINT16: "uint16", DataType.DT_UINT32: "uint32", DataType.DT_UINT64: "uint64",
    DataType.DT_DOUBLE: "float64", DataType.DT_FP8E4M3: "float8_e4m3fn", DataType.DT_FP8E5M2: "float8_e5m2",
}
_FROM_TORCH_NAME = {f"torch.{v}": k for k, v in _TORCH_NAME.items()}



def bytes_of(dtype: DataType) -> int:
    """Size of one element of `dtype` in bytes (PyPTO's `bytes_of`)."""
    return dtype.nbytes


def from_short(name: str) -> DataType:
    return _BY_SHORT[name]


def from_numpy(dt: np.dtype) -> DataType | None:
    return _FROM_NP.get(np.dtype(dt))


def from_torch(dt: Any) -> DataType | None:
    return _FROM_TORCH_NAME.get(str(dt))


def torch_dtype(dtype: DataType) -> Any:
    import torch

    return getattr(torch, _TORCH_NAME[dtype])


# ---- promotion (torch's rules: category first, then size) -----------------------------------

def _category(d: DataType) -> int:
    return 0 if d is DataType.DT_BOOL else (2 if d.is_float else 1)


def promote(a: DataType, b: DataType) -> DataType:
    """Result dtype of a binary op on two tensors, as torch computes it."""
    if a is b:
        return a
    if a in FP8 or b in FP8:
        raise ShapeError(f"{a.name} and {b.name} do not promote (as in torch, no fp8 type promotes with "
                         f"another type): cast one of them first")
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {DataType.DT_FP16, DataType.DT_BF16}:
            return DataType.DT_FP32
        return a if a.nbytes >= b.nbytes else b
    if ca == 1:
        if a.is_signed != b.is_signed:
            signed, unsigned = (a, b) if a.is_signed else (b, a)
            if signed.nbytes > unsigned.nbytes:
                return signed
            return {1: DataType.DT_INT16, 2: DataType.DT_INT32}.get(unsigned.nbytes, DataType.DT_INT64)
        return a if a.nbytes >= b.nbytes else b
    return a


def promote_scalar(t: DataType, scalar: object) -> DataType:
    """Result dtype of tensor-op-python-scalar: the scalar only lifts the category (torch)."""
    if isinstance(scalar, bool):
        return t
    if isinstance(scalar, float):
        return t if t.is_float else DataType.DT_FP32
    if isinstance(scalar, int):
        return DataType.DT_INT64 if t is DataType.DT_BOOL else t
    return t


def float_of(t: DataType) -> DataType:
    """The dtype a float-valued op (exp, div …) returns for an input of dtype `t`."""
    return t if t.is_float else DataType.DT_FP32
