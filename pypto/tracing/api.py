"""The PyPTO op functions (`pypto.add`, `pypto.view`, `pypto.loop` …) as they build the graph.

Each function normalizes its arguments the way PyPTO documents them (negative dims,
scalars, list forms), then asks the builder to emit one node. Shape and dtype rules live
in `pypto.ir.ops`; here is only argument handling.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import linecache
import re
import types
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.enums import CastMode, PrecisionType, SaturationMode, TopKAlgo
from pypto.ir.errors import PyptoError, ShapeError, TileEntry, op_message
from pypto.ir.ops import norm_dim
from pypto.ir.source import Loc
from pypto.tracing import builder as _b
from pypto.tracing import tiling
from pypto.tracing.options import global_tile_shapes, set_global_tile_shapes
from pypto.tracing.scalar import SymbolicScalar, as_dim, wrap
from pypto.tracing.tensor import (
    Tensor,
    as_tensor,
    share_storage,
    storage_sharers,
    trace_of,
    traced_tensor,
)
from pypto.tracing.unsupported import UnsupportedDataType


class Element:
    """`pypto.Element(dtype, value)`: a scalar with a dtype of its own."""

    def __init__(self, dtype: DataType, value: Any) -> None:
        self.dtype = dtype
        self.value = value

    def __repr__(self) -> str:
        return f"pypto.Element({self.dtype!r}, {self.value!r})"


def _builder_of(*xs: Any) -> _b.Builder:
    for x in xs:
        if isinstance(x, Tensor):
            return trace_of(x).builder
    return _b.require("this op")


_tensor = as_tensor


def _emit(op: str, inputs: Sequence[Tensor], attrs: dict[str, Any] | None = None,
          b: _b.Builder | None = None) -> Tensor:
    b = b or _builder_of(*inputs)
    node = b.emit(op, [trace_of(t).value for t in inputs], attrs or {})
    return traced_tensor(b, node.id)


def _scalar(x: Any) -> Any:
    """A Python/numpy/symbolic scalar as an attribute value, or None if `x` is not a scalar."""
    if isinstance(x, SymbolicScalar):
        return x.expr
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    return None


def _full_like_scalar(b: _b.Builder, e: Element) -> Tensor:
    return _emit("full", [], {"shape": (), "value": e.value, "dtype": e.dtype}, b)


def _binary(op: str, a: Any, c: Any) -> Tensor:
    if isinstance(a, Tensor) and isinstance(c, Tensor):
        return _emit(op, [a, c])
    if isinstance(a, Element) or isinstance(c, Element):
        b = _builder_of(a, c)
        a = _full_like_scalar(b, a) if isinstance(a, Element) else a
        c = _full_like_scalar(b, c) if isinstance(c, Element) else c
        return _binary(op, a, c)
    if isinstance(a, Tensor):
        s = _scalar(c)
        if s is None:
            raise PyptoError(f"{op}: the second operand must be a tensor or a scalar, got {type(c).__name__}")
        return _emit(op, [a], {"scalar": s, "reverse": False})
    if isinstance(c, Tensor):
        s = _scalar(a)
        if s is None:
            raise PyptoError(f"{op}: the first operand must be a tensor or a scalar, got {type(a).__name__}")
        return _emit(op, [c], {"scalar": s, "reverse": True})
    raise PyptoError(f"{op} needs at least one pypto tensor operand, got {type(a).__name__} and {type(c).__name__}")


# ---- elementwise ------------------------------------------------------------------------------

def add(input: Any, other: Any) -> Tensor:
    return _binary("add", input, other)


def sub(input: Any, other: Any) -> Tensor:
    return _binary("sub", input, other)


def mul(input: Any, other: Any) -> Tensor:
    return _binary("mul", input, other)


def div(input: Any, other: Any, precision_type: PrecisionType = PrecisionType.INTRINSIC) -> Tensor:
    return _binary("div", input, other)


def pow(input: Any, other: Any) -> Tensor:  # noqa: A001 - PyPTO's name
    return _binary("pow", input, other)


def maximum(input: Any, other: Any) -> Tensor:
    return _binary("maximum", input, other)


def minimum(input: Any, other: Any) -> Tensor:
    return _binary("minimum", input, other)


def eq(input: Any, other: Any) -> Tensor:
    return _binary("eq", input, other)


def ne(input: Any, other: Any) -> Tensor:
    return _binary("ne", input, other)


def gt(input: Any, other: Any) -> Tensor:
    return _binary("gt", input, other)


def ge(input: Any, other: Any) -> Tensor:
    return _binary("ge", input, other)


def lt(input: Any, other: Any) -> Tensor:
    return _binary("lt", input, other)


def le(input: Any, other: Any) -> Tensor:
    return _binary("le", input, other)


def logical_and(input: Any, other: Any) -> Tensor:
    return _binary("logical_and", input, other)


def floor_div_op(input: Any, other: Any) -> Tensor:
    """The `//` operator."""
    return _binary("floor_div", input, other)


def remainder_op(input: Any, other: Any) -> Tensor:
    """The `%` operator (Python/torch remainder: the sign of the divisor)."""
    return _binary("remainder", input, other)


def _unary(op: str) -> Any:
    def fn(input: Tensor) -> Tensor:
        return _emit(op, [_tensor(input)])

    fn.__name__ = op
    fn.__doc__ = f"`pypto.{op}(input)`, elementwise."
    return fn


neg = _unary("neg")
abs = _unary("abs")  # noqa: A001
exp = _unary("exp")
exp2 = _unary("exp2")
expm1 = _unary("expm1")
log = _unary("log")
log1p = _unary("log1p")
log2 = _unary("log2")
log10 = _unary("log10")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
reciprocal = _unary("reciprocal")
sign = _unary("sign")
ceil = _unary("ceil")
floor = _unary("floor")
trunc = _unary("trunc")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
relu = _unary("relu")
erf = _unary("erf")
erfc = _unary("erfc")
logical_not = _unary("logical_not")
isnan = _unary("isnan")
isfinite = _unary("isfinite")


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001
    return _emit("round", [_tensor(input)], {"decimals": int(decimals)})


def lrelu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _emit("lrelu", [_tensor(input)], {"negative_slope": float(negative_slope)})


def clip(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    x = _tensor(input)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is not None:
            x = maximum(x, min)
        if max is not None:
            x = minimum(x, max)
        return x
    return _emit("clip", [x], {"min": _scalar(min), "max": _scalar(max)})


def where(condition: Tensor, input: Any, other: Any) -> Tensor:
    cond = _tensor(condition, "condition")
    tensors = [cond]
    attrs: dict[str, Any] = {}
    for key, v in (("input", input), ("other", other)):
        if isinstance(v, Tensor):
            tensors.append(v)
        else:
            s = _scalar(v)
            if s is None:
                raise PyptoError(f"where: {key} must be a tensor or a scalar, got {type(v).__name__}")
            attrs[key] = s
    return _emit("where", tensors, attrs)


def cast(input: Tensor, dtype: DataType, mode: CastMode = CastMode.CAST_NONE,
         satmode: SaturationMode = SaturationMode.OFF) -> Tensor:
    if not isinstance(dtype, DataType):
        if isinstance(dtype, UnsupportedDataType):
            raise dtype.reject()
        raise PyptoError(f"cast: dtype must be a pypto.DT_* value, got {dtype!r}")
    return _emit("cast", [_tensor(input)], {"dtype": dtype, "mode": CastMode(mode), "satmode": SaturationMode(satmode)})


# ---- reductions -------------------------------------------------------------------------------

def _one_dim(op: str, x: Tensor, dim: Any) -> int:
    if isinstance(dim, (list, tuple)):
        if len(dim) != 1:
            raise PyptoError(f"{op} reduces one dim; got dims {list(dim)}")
        dim = dim[0]
    if dim is None:
        raise PyptoError(f"{op} needs a dim (the axis to reduce)")
    try:
        return norm_dim(dim, x.type.rank)
    except ShapeError as e:
        raise PyptoError(op_message(op, e)) from None


def _reduce(op: str) -> Any:
    def fn(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        x = _tensor(input)
        return _emit(op, [x], {"dim": _one_dim(op, x, dim), "keepdim": bool(keepdim)})

    fn.__name__ = op
    fn.__doc__ = f"`pypto.{op}(input, dim, keepdim=False)`."
    return fn


sum = _reduce("sum")  # noqa: A001
amax = _reduce("amax")
amin = _reduce("amin")
prod = _reduce("prod")
argmax = _reduce("argmax")
argmin = _reduce("argmin")


def var(input: Tensor, dim: Any = None, *, correction: int = 1, keepdim: bool = False) -> Tensor:
    x = _tensor(input)
    if dim is not None:
        dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
        try:
            dim = tuple(sorted(norm_dim(d, x.type.rank) for d in dims))
        except ShapeError as e:
            raise PyptoError(op_message("var", e)) from None
    return _emit("var", [x], {"dim": dim, "correction": int(correction), "keepdim": bool(keepdim)})


def softmax(input: Tensor, dim: int = -1) -> Tensor:
    x = _tensor(input)
    return _emit("softmax", [x], {"dim": _one_dim("softmax", x, dim)})


def rms_norm(input: Tensor, gamma: Tensor | None = None, epsilon: float = 1e-6) -> Tensor:
    ins = [_tensor(input)] + ([_tensor(gamma, "gamma")] if gamma is not None else [])
    return _emit("rms_norm", ins, {"epsilon": float(epsilon)})


# ---- layout and data movement -----------------------------------------------------------------

def _dims(values: Any, what: str) -> tuple[S.Dim, ...]:
    if isinstance(values, (int, SymbolicScalar)):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise PyptoError(f"{what} must be a list of ints, got {type(values).__name__}")
    return tuple(as_dim(v) for v in values)


def view(input: Tensor, shape: Any = None, offsets: Any = None, *, valid_shape: Any = None,
         dtype: DataType | None = None) -> Tensor:
    x = _tensor(input)
    shp = x.type.shape if shape is None else _dims(shape, "view shape")
    offs = (0,) * len(shp) if offsets is None else _dims(offsets, "view offsets")
    attrs: dict[str, Any] = {"shape": shp, "offsets": offs}
    if valid_shape is not None:
        attrs["valid_shape"] = _dims(valid_shape, "valid_shape")
    if dtype is not None:
        attrs["dtype"] = dtype
    return _emit("view", [x], attrs)


def _write(out: Tensor, src: Tensor, offsets: tuple[S.Dim, ...], exact: bool = False) -> None:
    b = _builder_of(out, src)
    valid = b.valid.get(trace_of(src).value)  # only the valid part is written: its window is what must fit
    node = b.emit("assemble", [trace_of(out).value, trace_of(src).value],
                  {"offsets": offsets, **({"exact": True} if exact else {}), **({"valid": valid} if valid else {})})
    store(out, node.id)


def store(t: Tensor, value: int) -> None:
    """A write: `t` now holds `value` (a node of `t`'s shape and dtype), and so does every tensor that
    shares its memory (an inplace reshape of it, or what it is an inplace reshape of), in its own shape."""
    b = trace_of(t).builder
    b.rebind(trace_of(t), value)
    for other in storage_sharers(t):
        o = trace_of(other)
        if o.builder is not b:
            continue
        same = b.types[o.value].shape == b.types[value].shape
        b.rebind(o, value if same else b.emit("reshape", [value], {"shape": b.types[o.value].shape}).id)


def assemble(input: Any, offsets: Any = None, out: Tensor | None = None, parallel: bool = False) -> Tensor:
    """Write `input` into `out` at `offsets`; also `assemble([(t, offsets), ...], out)`."""
    if isinstance(input, list):
        if out is None and isinstance(offsets, Tensor):
            out = offsets
        dst = _tensor(out, "out")
        for t, offs in input:
            _write(dst, _tensor(t), _dims(offs, "assemble offsets"))
        return dst
    dst = _tensor(out, "out")
    src = _tensor(input)
    _write(dst, src, _dims(offsets if offsets is not None else [0] * src.type.rank, "assemble offsets"))
    return dst


def reshape(input: Tensor, shape: Any, *, valid_shape: Any = None, inplace: bool = False) -> Tensor:
    """`input` seen with `shape`; with `valid_shape`, only that leading window of it holds data
    (a matmul's padded result read back at its real width): what follows computes on that part.
    `inplace=True` shares `input`'s memory: a later write into either tensor is seen through both
    (a 4-D KV cache updated through its 2-D reshape)."""
    x = _tensor(input)
    attrs: dict[str, Any] = {"shape": _dims(shape, "reshape shape")}
    if valid_shape is not None:
        attrs["valid_shape"] = _dims(valid_shape, "valid_shape")
    out = _emit("reshape", [x], attrs)
    if inplace:
        share_storage(x, out)
    return out


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    x = _tensor(input)
    rank = x.type.rank
    try:
        a, c = norm_dim(dim0, rank, "dim0"), norm_dim(dim1, rank, "dim1")
    except ShapeError as e:
        raise PyptoError(op_message("transpose", e)) from None
    perm = list(range(rank))
    perm[a], perm[c] = perm[c], perm[a]
    return _emit("transpose", [x], {"perm": tuple(perm)})


def permute(input: Tensor, perm: Sequence[int]) -> Tensor:
    x = _tensor(input)
    rank = x.type.rank
    try:
        p = tuple(norm_dim(d, rank, "perm entry") for d in perm)
    except ShapeError as e:
        raise PyptoError(op_message("permute", e)) from None
    return _emit("transpose", [x], {"perm": p})


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    x = _tensor(input)
    try:
        d = norm_dim(dim, x.type.rank + 1)
    except ShapeError as e:
        raise PyptoError(op_message("unsqueeze", e)) from None
    return _emit("unsqueeze", [x], {"dim": d})


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ts = [_tensor(t) for t in tensors]
    if not ts:
        raise PyptoError("concat needs at least one tensor")
    try:
        d = norm_dim(dim, ts[0].type.rank)
    except ShapeError as e:
        raise PyptoError(op_message("concat", e)) from None
    return _emit("concat", ts, {"dim": d})


def expand_clone(input: Tensor, shape: Any, *, valid_shape: Any = None) -> Tensor:
    return _emit("expand_clone", [_tensor(input)], {"shape": _dims(shape, "expand_clone shape")})


def clone(input: Tensor) -> Tensor:
    return _emit("clone", [_tensor(input)])


# ---- creation ---------------------------------------------------------------------------------

def _size(size: Sequence[Any]) -> tuple[S.Dim, ...]:
    if any(isinstance(d, DataType) for d in size):
        raise PyptoError("the dtype of zeros/ones is a keyword argument (`pypto.zeros([m, n], dtype=pypto.DT_FP16)`); "
                         "given by position it would be read as a dim")
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    return _dims(list(size), "size")


def full(size: Any, fill_value: Any, dtype: DataType | None = None, *, valid_shape: Any = None) -> Tensor:
    b = _b.require("pypto.full")
    value = _scalar(fill_value)
    if value is None or isinstance(value, S.SymExpr):
        raise PyptoError(f"full: fill_value must be a number, got {fill_value!r}")
    dt = dtype or (DataType.DT_FP32 if isinstance(value, float) else
                   DataType.DT_BOOL if isinstance(value, bool) else DataType.DT_INT32)
    attrs: dict[str, Any] = {"shape": _size([size]), "value": value, "dtype": dt}
    if valid_shape is not None:
        attrs["valid_shape"] = _dims(valid_shape, "valid_shape")
    return _emit("full", [], attrs, b)


def zeros(*size: Any, dtype: DataType | None = None) -> Tensor:
    return full(list(_size(size)), 0.0 if dtype is None or dtype.is_float else 0, dtype or DataType.DT_FP32)


def ones(*size: Any, dtype: DataType | None = None) -> Tensor:
    return full(list(_size(size)), 1.0 if dtype is None or dtype.is_float else 1, dtype or DataType.DT_FP32)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: DataType | None = None) -> Tensor:
    b = _b.require("pypto.arange")
    if end is None:
        start, end = 0, start
    vals = [_scalar(v) for v in (start, end, step)]
    if any(v is None or isinstance(v, S.SymExpr) for v in vals):
        raise PyptoError("arange takes compile-time numbers for start, end and step")
    dt = dtype or (DataType.DT_FP32 if any(isinstance(v, float) for v in vals) else DataType.DT_INT32)
    return _emit("arange", [], {"start": vals[0], "end": vals[1], "step": vals[2], "dtype": dt}, b)


def tensor(shape: Any = None, dtype: DataType | None = None, name: str | None = None, **kw: Any) -> Tensor:
    """Outside a kernel (or with no shape): an annotation. Inside: a new tensor (zero-filled)."""
    b = _b.current()
    if b is None or shape is None:
        return Tensor(shape, dtype, name=name)
    if dtype is None:
        raise PyptoError("pypto.tensor(shape, dtype) inside a kernel needs a dtype")
    node = b.emit("tensor", [], {"shape": _dims(shape, "tensor shape"), "value": 0, "dtype": dtype}, name=name)
    return traced_tensor(b, node.id, name)


# ---- matmul -----------------------------------------------------------------------------------

def matmul(input: Tensor, mat2: Tensor, out_dtype: DataType, *, a_trans: bool = False, b_trans: bool = False,
           c_matrix_nz: bool = False, extend_params: dict[str, Any] | None = None) -> Tensor:
    a, m2 = _tensor(input), _tensor(mat2, "mat2")
    if not isinstance(out_dtype, DataType):
        raise PyptoError(f"matmul: out_dtype must be a pypto.DT_* value, got {out_dtype!r}")
    ins = [a, m2]
    attrs: dict[str, Any] = {"out_dtype": out_dtype, "a_trans": bool(a_trans), "b_trans": bool(b_trans),
                             "c_matrix_nz": bool(c_matrix_nz)}
    ext = dict(extend_params or {})
    unknown = set(ext) - {"bias_tensor", "scale", "scale_tensor", "relu_type"}
    if unknown:
        raise PyptoError(f"matmul extend_params: unknown keys {sorted(unknown)}; "
                         f"known: bias_tensor, scale, scale_tensor, relu_type")
    if ext.get("bias_tensor") is not None:
        ins.append(_tensor(ext["bias_tensor"], "bias_tensor"))
        attrs["has_bias"] = True
    if ext.get("scale_tensor") is not None:
        ins.append(_tensor(ext["scale_tensor"], "scale_tensor"))
        attrs["has_scale_tensor"] = True
    if ext.get("scale") is not None:
        attrs["scale"] = float(ext["scale"])
    relu = ext.get("relu_type")
    if relu is not None and relu not in (0, "NO_RELU", False):
        attrs["relu"] = True
    return _emit("matmul", ins, attrs)


# ---- indexing ---------------------------------------------------------------------------------

def _index(x: Tensor, key: Any) -> tuple[tuple[S.Dim, ...], tuple[S.Dim, ...], list[int], list[int]]:
    """offsets, sizes, dims indexed by an int (dropped), dims sliced in full (exact)."""
    shape = x.type.shape
    keys = list(key) if isinstance(key, tuple) else [key]
    # `is`, not `==` or `in`: a symbolic scalar or a tensor key compares by building an expression
    ellipses = [i for i, k in enumerate(keys) if k is Ellipsis]
    if len(ellipses) > 1:
        raise PyptoError("an index can have only one ellipsis (...)")
    if ellipses:
        at = ellipses[0]
        keys[at:at + 1] = [slice(None)] * (len(shape) - len(keys) + 1)
    if len(keys) > len(shape):
        raise PyptoError(f"too many indices ({len(keys)}) for a tensor of rank {len(shape)}")
    keys += [slice(None)] * (len(shape) - len(keys))
    offs, sizes, drop, exact = [], [], [], []
    for i, (k, d) in enumerate(zip(keys, shape)):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise PyptoError(f"slice step {k.step} is not supported (dim {i}); only contiguous views")
            start = 0 if k.start is None else as_dim(k.start)
            stop = d if k.stop is None else as_dim(k.stop)
            if isinstance(start, int) and start < 0 and isinstance(d, int):
                start += d
            if isinstance(stop, int) and stop < 0 and isinstance(d, int):
                stop += d
            _check_slice_start(k, i, start, stop, d)
            if isinstance(stop, int) and isinstance(d, int):
                stop = min(stop, d)
            if k.start is None and k.stop is None:
                exact.append(i)
            offs.append(start)
            size = S.sub(stop, start)
            sizes.append(max(size, 0) if isinstance(size, int) else size)
        elif k is None:
            raise PyptoError("indexing with None (new axis) is not supported; use pypto.unsqueeze")
        elif isinstance(k, Tensor):
            raise PyptoError(f"indexing with a tensor (dim {i}) is not a view; use pypto.gather or pypto.index_select")
        else:
            v = as_dim(k)
            if isinstance(v, int) and v < 0 and isinstance(d, int):
                v += d
            offs.append(v)
            sizes.append(1)
            drop.append(i)
    return tuple(offs), tuple(sizes), drop, exact


def _check_slice_start(k: slice, dim: int, start: S.Dim, stop: S.Dim, size: S.Dim) -> None:
    """A slice must start inside its dim, as a view must (PyPTO takes `x[a:b]` as the view at offset `a`):
    a static start past a static size (`x[9:10]`, `x[9:]` of 8 rows), or at it with rows asked for
    (`x[8:9]`), is an error at the slice. A stop past the end is fine (the window's data is the part
    inside), and so is an empty slice at the end (`x[8:]`); symbolic bounds are not checked here."""
    if not (isinstance(start, int) and isinstance(size, int)):
        return
    if start > size or start == size and isinstance(stop, int) and stop > size:
        text = ":".join("" if v is None else S.to_str(as_dim(v)) for v in (k.start, k.stop))
        raise PyptoError(f"slice {text} of dim {dim} starts past its end (size {size})")


# ---- indexing along one dim -----------------------------------------------------------------------

def _index_dim(op: str, x: Tensor, dim: Any) -> int:
    try:
        return norm_dim(dim, x.type.rank)
    except ShapeError as e:
        raise PyptoError(op_message(op, e)) from None


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """`out[i, j, k] = input[index[i, j, k], j, k]` for dim 0 (and so on for the others)."""
    x = _tensor(input)
    return _emit("gather", [x, _tensor(index, "index")], {"dim": _index_dim("gather", x, dim)})


def gathermask(self: Tensor, pattern_mode: int) -> Tensor:
    """PyPTO's gathermask: the elements of the last axis a built-in pattern keeps, in order — mode 1
    (2) the first (second) of every two, modes 3 to 6 the first to fourth of every four, mode 7 all.
    The last axis shrinks by 2, 4 or 1; it must be a multiple of that, as must the vec tile's last
    entry, which cuts the input's last axis (it is never split by a view)."""
    x = _tensor(self)
    if isinstance(pattern_mode, bool) or not isinstance(pattern_mode, int):
        raise PyptoError(f"gathermask: pattern_mode is an int from 1 to 7, got {pattern_mode!r}")
    return _emit("gathermask", [x], {"pattern_mode": pattern_mode})


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of `input` along `dim` at the positions of the 1-D `index`, in its order."""
    x = _tensor(input)
    return _emit("index_select", [x, _tensor(index, "index")], {"dim": _index_dim("index_select", x, dim)})


def scatter_update(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In place: the rows (2-D) or block slots (4-D `[blocks, block_size, 1, d]`) of `input` named by
    `index` ([b, s]) take `src`'s, as a KV cache is updated; returns `input`. `dim` is PyPTO's -2."""
    x = _tensor(input)
    out = _emit("scatter_update", [x, _tensor(index, "index"), _tensor(src, "src")], {"dim": int(dim)})
    store(x, trace_of(out).value)
    return x


def topk(input: Tensor, k: int, dim: int | None = None, largest: bool = True,
         algo: TopKAlgo = TopKAlgo.MERGE_SORT) -> tuple[Tensor, Tensor]:
    """(values, indices): the `k` largest (smallest) along `dim` (default the last), largest first;
    indices are DT_INT32. Two graph nodes, one per result; `algo` is PyPTO's choice of kernel."""
    x = _tensor(input)
    d = _index_dim("topk", x, -1 if dim is None else dim)
    attrs: dict[str, Any] = {"dim": d, "k": int(k), "largest": bool(largest)}
    if algo == TopKAlgo.RADIX_SELECT:  # its tile holds `dim` whole (PyPTO's topk page); merge sort cuts it
        attrs["algo"] = "radix_select"
    return _emit("topk", [x], attrs), _emit("topk", [x], {**attrs, "part": "indices"})


def scatter(input: Tensor, dim: int, index: Tensor, src: Any, *, reduce: str | None = None) -> Tensor:
    """A copy of `input` with `src` (a tensor, or a number for every position) written at `index`
    along `dim`; `reduce='add'` / `'multiply'` combines with what is there instead."""
    x = _tensor(input)
    attrs: dict[str, Any] = {"dim": _index_dim("scatter", x, dim)}
    if reduce is not None:
        attrs["reduce"] = reduce
    ins = [x, _tensor(index, "index")]
    if isinstance(src, Tensor):
        ins.append(_tensor(src, "src"))
    else:
        value = src.value if isinstance(src, Element) else _scalar(src)
        if value is None or isinstance(value, S.SymExpr):
            raise PyptoError(f"scatter: src must be a tensor or a number, got {type(src).__name__}")
        attrs["scalar"] = value
    return _emit("scatter", ins, attrs)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any, *, reduce: str | None = None) -> Tensor:
    """`scatter` in place: `input` itself now holds the result (and is returned)."""
    x = _tensor(input)
    out = scatter(x, dim, index, src, reduce=reduce)
    store(x, trace_of(out).value)
    return x


def getitem(x: Tensor, key: Any, *, valid_shape: Any = None) -> Any:
    """A view (`x[i, 1:]`; `valid_shape` as `pypto.view`'s), or with one int or symbolic index per dim
    of an integer kernel input (`seq_lens[b]`), the element as a symbolic scalar read at run time,
    as PyPTO's GetTensorData."""
    x = _tensor(x)
    read = _scalar_read(x, key) if valid_shape is None else None
    if read is not None:
        return read
    offs, sizes, drop, _ = _index(x, key)
    attrs: dict[str, Any] = {"shape": sizes, "offsets": offs}
    if valid_shape is not None:
        attrs["valid_shape"] = _dims(valid_shape, "valid_shape")
    v = _emit("view", [x], attrs)
    if drop:
        v = reshape(v, [s for i, s in enumerate(sizes) if i not in drop])
    return v


def _scalar_read(x: Tensor, key: Any) -> SymbolicScalar | None:
    keys = list(key) if isinstance(key, tuple) else [key]
    dtype = x.type.dtype
    if len(keys) != x.type.rank or dtype.is_float or dtype is DataType.DT_BOOL \
            or not all(isinstance(k, (int, SymbolicScalar, np.integer)) and not isinstance(k, bool) for k in keys):
        return None
    b = _builder_of(x)
    src = b.readable.get(trace_of(x).value)
    if src is None:
        raise PyptoError("reading a scalar from a tensor the kernel computes is not supported by this compiler "
                         "(it can read kernel inputs, e.g. seq_lens[b], and windows on them); read the element "
                         "from an input tensor")
    idx: list[S.Dim] = []
    for axis, (k, d) in enumerate(zip(keys, x.type.shape)):
        v = as_dim(k)
        if isinstance(v, int) and isinstance(d, int):
            if not -d <= v < d:
                raise PyptoError(f"index {v} is out of range for dim {axis} of size {d}")
            v %= d
        idx.append(v)
    return SymbolicScalar(S.SymExpr(0, ((S.Read(src.tensor, src.element(tuple(idx))), 1),)))


def setitem(x: Tensor, key: Any, value: Any) -> None:
    x = _tensor(x)
    b = _builder_of(x)
    offs, sizes, drop, exact = _index(x, key)
    if not isinstance(value, Tensor):
        s = _scalar(value)
        if isinstance(value, Element):
            s = value.value
        if s is None or isinstance(s, S.SymExpr):
            raise PyptoError(f"cannot assign a {type(value).__name__} into a tensor; assign a tensor or a number")
        value = _emit("full", [], {"shape": sizes, "value": s, "dtype": x.type.dtype}, b)
    v = _tensor(value)
    if _whole(key) and v.type.shape != x.type.shape and _same_but_unit_dims(v.type.shape, x.type.shape):
        _move(x, v)  # PyPTO's `t[:] = v` is `t.move(v)`: a [1, 1] value into a [1] tensor is accepted
        return
    if drop and v.type.rank == len(sizes) - len(drop):
        v = reshape(v, list(sizes))
    if v.type.rank != len(sizes):
        raise PyptoError(f"assigning a rank-{v.type.rank} tensor {_fmt(v.type.shape)} into a rank-{len(sizes)} "
                         f"slice {_fmt(sizes)}")
    for i in range(len(sizes)):
        if i in exact:
            try:
                b.same(v.type.shape[i], sizes[i], f"assignment of shape {_fmt(v.type.shape)} to {_fmt(sizes)}")
            except ShapeError:
                raise PyptoError(f"assigning shape {_fmt(v.type.shape)} to a slice of shape {_fmt(sizes)} "
                                 f"(dim {i}: {S.to_str(v.type.shape[i])} vs {S.to_str(sizes[i])})") from None
    _write(x, v, offs)


def _whole(key: Any) -> bool:
    """PyPTO's "empty slice" key, `t[:]` or `t[:, :]`: its `__setitem__` moves the value into `t`."""
    if isinstance(key, tuple):
        return all(_whole(k) for k in key)
    return isinstance(key, slice) and key.start is None and key.stop is None and key.step is None


def _same_but_unit_dims(a: Sequence[S.Dim], b: Sequence[S.Dim]) -> bool:
    """Whether shapes `a` and `b` are the same once their unit dims are dropped ([1, 1] and [1], [8, 1] and
    [8]): the same elements in the same order."""
    ka = [d for d in a if not S.equal(d, 1)]
    kb = [d for d in b if not S.equal(d, 1)]
    return len(ka) == len(kb) and all(S.equal(p, q) is True for p, q in zip(ka, kb))


def _fmt(shape: Sequence[S.Dim]) -> str:
    return "[" + ", ".join(S.to_str(d) for d in shape) + "]"


# ---- control, tiling, labels ------------------------------------------------------------------

def loop(*args: Any, name: str | None = None, idx_name: str | None = None, submit_before_loop: bool = False,
         parallel: bool = False, unroll_list: Sequence[int] | None = None, **kwargs: Any) -> Iterator[SymbolicScalar]:
    """`pypto.loop(stop)` / `pypto.loop(start, stop, step=1)`: a runtime loop (its body is traced once).
    `unroll_list` is a hint to PyPTO's backend (the loop still yields one index); it is recorded."""
    b = _b.require("pypto.loop")
    loc = b.loc()
    _ignored_keywords("pypto.loop", kwargs, loc)
    start, stop, step = _loop_range("pypto.loop", args, loc)
    if isinstance(step, int) and step == 0:
        raise PyptoError("pypto.loop step must not be 0", loc)
    index = b.fresh_symbol(idx_name or _for_target(loc) or "i")
    lname = name or f"LOOP_{len(b.symbols)}"
    attrs = {"start": as_dim(start), "stop": as_dim(stop), "step": as_dim(step), "index": index,
             "name": lname, "submit_before_loop": bool(submit_before_loop), "parallel": bool(parallel)}
    if unroll_list:
        attrs["unroll_list"] = tuple(int(u) for u in unroll_list)
    return _loop_body(b, attrs, loc)


_LOOP_KEYWORDS = ("name", "idx_name", "submit_before_loop", "parallel", "unroll_list")


def _ignored_keywords(what: str, kwargs: dict[str, Any], loc: Loc) -> None:
    """PyPTO's loops take `**kwargs` and read only the keys they know, so another key is no error:
    it is ignored, with a `PyptoWarning` at the user's line (a misspelt `idx_name` changes nothing)."""
    if not kwargs:
        return
    names = []
    for k in sorted(kwargs):
        close = difflib.get_close_matches(k, _LOOP_KEYWORDS, n=1, cutoff=0.5)
        names.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    msg = (f"{what} ignores the keyword{'s' if len(names) > 1 else ''} {', '.join(names)}: it reads only "
           f"{', '.join(_LOOP_KEYWORDS)}")
    if loc.span is not None:
        warnings.warn_explicit(msg, tiling.PyptoWarning, loc.span.file, loc.span.line)
    else:
        warnings.warn(msg, tiling.PyptoWarning, stacklevel=3)


_FOR = re.compile(r"^\s*for\s+\(?\s*([A-Za-z_]\w*)")


def _for_target(loc: Loc) -> str | None:
    """The loop variable of the `for` statement at `loc` (`for b in pypto.loop(...)` names the index
    `b` in the graph, the tiles and the swimlane); None for anything else."""
    span = loc.span
    if span is None:
        return None
    m = _FOR.match(linecache.getline(span.file, span.line))
    return m.group(1) if m and m.group(1) != "_" else None


def runtime_branch(condition: Any, taken_when: bool, text: str) -> Iterator[None]:
    """One side of an `if` on a run-time condition (the jit rewrites such an `if` into these; see
    `pypto.frontend.body`): a region that runs once when the condition is `taken_when`, else not at
    all — a `pypto.loop` of 0 or 1 iterations, so tensors written in it are carried out of it and
    the tile stage, with the loop indices known, expands only the side that is taken."""
    b = _b.require("if")
    loc = b.loc()
    holds = S.truth(as_dim(condition))
    stop = holds if taken_when else S.logical_not(holds)
    side = "then" if taken_when else "else"
    attrs = {"start": 0, "stop": stop, "step": 1, "index": b.fresh_symbol(f"{side}_"),
             "name": f"if {text}" if taken_when else f"else (if {text})", "submit_before_loop": False,
             "parallel": False, "branch": side, "condition": text}
    for _ in _loop_body(b, attrs, loc):
        yield


def branch_merge(before: Any, then: Any, after: Any, name: str) -> Any:
    """What `name` holds after an `if` on a run-time condition (the jit rewrites such an `if`; see
    `pypto.frontend.body`): `before` the `if`, `then` after tracing its `then` side, `after` after
    tracing both. A tensor a side computed is that side's value when it runs, else what the name held
    before it — a phi, built from the sides' carried-out values. Anything else is Python's value."""
    if not isinstance(after, Tensor):
        return after
    if after is before and then is before:  # the same tensor throughout (at most written into): itself
        return after
    b = _b.require("if")
    ids = [trace_of(v).value if isinstance(v, Tensor) else None for v in (before, then, after)]
    return traced_tensor(b, b.merge_branches(ids[0], ids[1], ids[2], name, b.loc()))


def cond(scalar: Any, file: str | None = None, lineno: int | None = None) -> Any:
    """`if pypto.cond(c):` — the condition itself: the `if` is a runtime branch when `c` is only known
    at run time (in a jit kernel an `if` on such a value is one without `cond` too)."""
    return scalar


def _enclosing_loop(what: str, idx: Any) -> dict[str, Any]:
    b = _b.require(what)
    name = S.to_str(as_dim(idx))
    scope: _b.Scope | None = b.scope
    while scope is not None:
        if scope.kind == "loop" and scope.attrs.get("index") == name and "branch" not in scope.attrs:
            return scope.attrs
        scope = scope.parent
    raise PyptoError(f"{what}({name}): the argument must be the index of an enclosing pypto.loop")


def is_loop_begin(idx: Any) -> int | SymbolicScalar:
    """1 on the first iteration of the pypto.loop whose index is `idx`, else 0 (for an `if`)."""
    attrs = _enclosing_loop("pypto.is_loop_begin", idx)
    return wrap(S.eq(as_dim(idx), attrs["start"]))


def is_loop_end(idx: Any) -> int | SymbolicScalar:
    """1 on the last iteration of the pypto.loop whose index is `idx` (`idx + step >= stop`), else 0."""
    attrs = _enclosing_loop("pypto.is_loop_end", idx)
    return wrap(S.le(attrs["stop"], S.add(as_dim(idx), attrs["step"])))


def _loop_range(what: str, args: tuple[Any, ...], loc: Loc | None = None) -> tuple[Any, Any, Any]:
    """(start, stop, step) of a loop's positional arguments, each an int or a symbolic scalar: anything
    else (`pypto.loop(0, 8, 0.5)`) is an error at the loop naming the argument."""
    if not 1 <= len(args) <= 3:
        raise PyptoError(f"{what} takes (stop) or (start, stop[, step]), got {len(args)} arguments", loc)
    bounds = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    for role, v in zip(("start", "stop", "step"), bounds):
        try:
            as_dim(v)
        except PyptoError:
            raise PyptoError(f"{what}: {role} must be an int or a symbolic scalar, got {type(v).__name__} {v!r}",
                             loc) from None
    return bounds


def loop_unroll(*args: Any, name: str | None = None, idx_name: str | None = None,
                unroll_list: Sequence[int] | None = None, submit_before_loop: bool = False,
                parallel: bool = False, **kwargs: Any) -> Iterator[tuple[int | SymbolicScalar, int]]:
    """`pypto.loop_unroll(start, stop, step, unroll_list=[4, 2, 1])`: yields `(idx, factor)`. As in
    PyPTO, the factors run largest first, each as its own loop (named `<name>_LoopUnroll<factor>`)
    with step `step * factor` over the range the larger factors left: the body is traced once per
    factor, with `factor` a plain int, and covers `factor` steps per iteration. Other keywords are
    ignored, as `pypto.loop` ignores them."""
    b = _b.require("pypto.loop_unroll")
    loc = b.loc()
    _ignored_keywords("pypto.loop_unroll", kwargs, loc)
    start, stop, step = _loop_range("pypto.loop_unroll", args, loc)
    factors = sorted({int(u) for u in (unroll_list or [1])} | {1}, reverse=True)
    if any(f <= 0 for f in factors):
        raise PyptoError(f"pypto.loop_unroll: unroll_list entries must be positive, got {list(unroll_list or [])}")
    lo = start
    for f in factors:
        span = step * f
        left = (stop - start) % span  # PyPTO's rule: the remainder of the whole range, not of what is left
        for idx in loop(lo, stop - left, span, name=f"{name}_LoopUnroll{f}" if name else f"_LoopUnroll{f}",
                        idx_name=idx_name, submit_before_loop=submit_before_loop, parallel=parallel):
            yield idx, f
        lo = stop - left


def _loop_body(b: _b.Builder, attrs: dict[str, Any], loc: Any) -> Iterator[SymbolicScalar]:
    scope = b.begin_loop(attrs, loc)
    try:
        yield SymbolicScalar(S.sym(attrs["index"]))
    except GeneratorExit:
        b.abandon_loop(scope)
        raise
    b.end_loop(scope)


def set_matrix_size(size: Sequence[Any]) -> None:
    """`pypto.set_matrix_size([m, k, n])`: a matmul's m, k, n when its input is an NZ-format tensor
    reshaped before the call. This board keeps tensors in ND format, where the shapes say m, k, n
    themselves, so the hint is accepted and changes nothing."""
    if not isinstance(size, (list, tuple)):
        raise PyptoError(f"pypto.set_matrix_size takes a list [m, k, n], got {type(size).__name__}")


def _tile_call_error(what: str, e: ShapeError, loc: Loc | None) -> PyptoError:
    """A rule of the call alone broken in a kernel's `set_*_tile_shapes` call: an error at the call
    (`tile.shape`) with a fix per nearest legal value of the bad entry, and the entry as data (the
    language server also offers the call's last shape that compiled)."""
    span = loc.span if loc is not None else None
    if not isinstance(e, tiling.TileRuleError) or span is None or e.entry is None:
        return PyptoError(op_message(what, e), loc)
    entry = TileEntry("vec" if what == "set_vec_tile_shapes" else "cube", span, tiling.shape_args(span), e.entry)
    return PyptoError(op_message(what, e), loc, rule="tile.shape", fixes=tiling.call_fixes(span, e), tile_entry=entry)


def set_vec_tile_shapes(*dims: Any) -> None:
    b = _b.current()
    loc = b.loc() if b else None
    try:
        shape = tiling.check_vec_call(list(dims))
    except ShapeError as e:
        raise _tile_call_error("set_vec_tile_shapes", e, loc) from None
    if b is not None:
        assert loc is not None
        b.set_vec(shape, loc)
    else:
        set_global_tile_shapes("vec", list(shape))


def get_vec_tile_shapes() -> list[int] | None:
    b = _b.current()
    if b is not None:
        return list(b.vec.dims) if b.vec else None
    v = global_tile_shapes("vec")
    return list(v) if v else None


def set_cube_tile_shapes(m: Any, k: Any, n: Any, enable_split_k: bool = False) -> None:
    b = _b.current()
    loc = b.loc() if b else None
    try:
        dims = (*tiling.check_cube_call(m, k, n), bool(enable_split_k))
    except ShapeError as e:
        raise _tile_call_error("set_cube_tile_shapes", e, loc) from None
    if b is not None:
        assert loc is not None
        b.set_cube(dims, loc)
    else:
        set_global_tile_shapes("cube", [list(dims[0]), list(dims[1]), list(dims[2]), dims[3]])


def get_cube_tile_shapes() -> list[Any] | None:
    b = _b.current()
    if b is not None:
        return [list(d) if isinstance(d, tuple) else d for d in b.cube.dims] if b.cube else None
    v = global_tile_shapes("cube")
    return list(v) if v else None


def set_semantic_label(label: str | None) -> None:
    b = _b.require("pypto.set_semantic_label")
    b.label = str(label) if label else None


# ---- the Tensor's operators and methods: the op functions above ---------------------------------
# tensor.py defines the handle and knows no op; its operators and op methods are attached here, as
# jax.numpy attaches jax.Array's, so that the dependency runs one way (this module -> tensor.py).

def _matmul_operator(self: Tensor, other: Any) -> Tensor:
    return matmul(self, other, self.dtype if self.dtype is not DataType.DT_INT8 else DataType.DT_INT32)


def _move(self: Tensor, src: Any) -> Tensor:
    """`out.move(other)`: `out` now holds `other`'s data. PyPTO rebinds the handle to `other`; where
    `out`'s memory is observed — a kernel parameter (written back to the caller) or a tensor sharing
    memory with another (`reshape(..., inplace=True)`) — the data is written into it instead, `other`
    reshaped to `out`'s shape when the shapes differ (they must hold as many elements)."""
    if not isinstance(src, Tensor):
        raise PyptoError(f"Tensor.move takes a tensor, got {type(src).__name__}")
    x, v = _tensor(self), _tensor(src)
    if x.type.shape == v.type.shape:
        setitem(x, Ellipsis, v)
        return self
    t, b = trace_of(x), _builder_of(x, v)
    if not x.parameter and not storage_sharers(x) and t.scope is b.scope:
        b.rebind(t, trace_of(v).value)  # PyPTO's move: the handle now holds `other`, in its shape
        return self
    n_out, n_src = _numel(x.type.shape), _numel(v.type.shape)
    if S.equal(n_out, n_src) is False:
        what = f"kernel parameter {x.name!r}" if x.parameter else "a tensor that shares its memory (inplace reshape)"
        raise PyptoError(f"Tensor.move: moving {_fmt(v.type.shape)} ({S.to_str(n_src)} elements) into {what} of "
                         f"shape {_fmt(x.type.shape)} ({S.to_str(n_out)} elements): its data is written there, so "
                         f"the element counts must match")
    _write(x, reshape(v, list(x.type.shape)), (0,) * x.type.rank)
    return self


def _numel(shape: Sequence[S.Dim]) -> S.Dim:
    n: S.Dim = 1
    for d in shape:
        n = S.mul(n, d)
    return n


def _matmul_method(self: Tensor, other: Tensor, out_dtype: DataType | None = None, **kw: Any) -> Tensor:
    return matmul(self, other, out_dtype or self.dtype, **kw)


def _view_method(self: Tensor, shape: Any = None, offsets: Any = None, **kw: Any) -> Tensor:
    return view(self, shape, offsets, **kw)


# looked up when called (as the methods always were), so a patched op function is what runs
_OPERATORS: dict[str, Any] = {
    "__add__": lambda self, o: add(self, o), "__radd__": lambda self, o: add(o, self),
    "__sub__": lambda self, o: sub(self, o), "__rsub__": lambda self, o: sub(o, self),
    "__mul__": lambda self, o: mul(self, o), "__rmul__": lambda self, o: mul(o, self),
    "__truediv__": lambda self, o: div(self, o), "__rtruediv__": lambda self, o: div(o, self),
    "__floordiv__": lambda self, o: floor_div_op(self, o), "__rfloordiv__": lambda self, o: floor_div_op(o, self),
    "__mod__": lambda self, o: remainder_op(self, o), "__rmod__": lambda self, o: remainder_op(o, self),
    "__pow__": lambda self, o: pow(self, o), "__rpow__": lambda self, o: pow(o, self),
    "__matmul__": lambda self, o: _matmul_operator(self, o), "__neg__": lambda self: neg(self),
    "__pos__": lambda self: self, "__abs__": lambda self: abs(self),
    "__eq__": lambda self, o: eq(self, o), "__ne__": lambda self, o: ne(self, o),
    "__lt__": lambda self, o: lt(self, o), "__le__": lambda self, o: le(self, o),
    "__gt__": lambda self, o: gt(self, o), "__ge__": lambda self, o: ge(self, o),
    "__invert__": lambda self: logical_not(self), "__and__": lambda self, o: logical_and(self, o),
    "__getitem__": lambda self, key, *, valid_shape=None: getitem(self, key, valid_shape=valid_shape),
    "__setitem__": lambda self, key, v: setitem(self, key, v),
    "move": _move, "matmul": _matmul_method, "view": _view_method,
}

# methods that are the op function of the same name, the tensor as its first argument
_FORWARDED = (
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "sign", "ceil",
    "floor", "trunc", "round", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "lrelu", "erf", "erfc", "clip",
    "neg", "abs", "isnan", "isfinite", "logical_not", "logical_and", "add", "sub", "mul", "div", "pow",
    "maximum", "minimum", "eq", "ne", "gt", "ge", "lt", "le", "cast", "sum", "amax", "amin", "prod",
    "argmax", "argmin", "var", "softmax", "rms_norm", "reshape", "transpose", "permute", "unsqueeze",
    "expand_clone", "clone", "where", "gather", "gathermask", "index_select", "scatter", "scatter_", "topk",
)


def _attach_tensor_methods() -> None:
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    for name in _FORWARDED:
        setattr(Tensor, name, _forward(name))


def _forward(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return globals()[name](self, *args, **kwargs)

    method.__name__ = name
    return method


_attach_tensor_methods()


# ---- argument checks: a call that does not fit a function's signature is the user's mistake --------

def _signature_checked(fn: Any) -> Any:
    """`fn` whose calls with arguments that do not fit its signature (a missing or extra argument, an
    unknown keyword) raise a `PyptoError` at the user's line naming the signature, not a `TypeError`."""
    sig = inspect.signature(fn)
    params = ", ".join(str(p.replace(annotation=inspect.Parameter.empty)) for p in sig.parameters.values())
    shown = f"pypto.{fn.__name__}({params})"

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PyptoError as e:  # the user's mistake: pypto's frames below this one are noise
            raise e.with_traceback(None) from e.__cause__
        except TypeError:
            try:
                sig.bind(*args, **kwargs)
            except TypeError as bad:
                raise PyptoError(f"{shown}: {bad}") from None
            raise  # the arguments fit: a TypeError from inside is not about the call

    return call


def _check_signatures() -> None:
    """Every public function of this module (the op functions `pypto` exports, the tensor methods
    that forward to them) checks its call's arguments against its signature."""
    module = globals()
    internal = {"store", "getitem", "setitem", "runtime_branch", "branch_merge", "floor_div_op", "remainder_op"}
    for name, fn in list(module.items()):
        if (not name.startswith("_") and name not in internal and isinstance(fn, types.FunctionType)
                and fn.__module__ == __name__):
            module[name] = _signature_checked(fn)


_check_signatures()
