"""The reference semantics of every op, in numpy: what the right numbers are.

Dtype rules (the hardware's, and torch's on the CPU):
- fp16, bf16 and fp8 values are computed in fp32 and rounded (round-to-nearest-even) to the
  output dtype after every op, as the vector unit does for its fp32-computing ops; a value past
  fp8 e4m3's range (which has no inf) saturates to its largest finite value, as torch converts;
- fp32 ops compute in fp32; integer ops in their own dtype (two's-complement wrap);
- matmul accumulates in fp32 (int32 for int8) whatever the inputs, then rounds once;
- with `fp64=True` (the precision reference of later issues) every float op computes and
  stays in fp64: a cast between float dtypes and an assemble into a low-precision buffer
  keep fp64 values.
Every kernel returns a fresh array, so the interpreter may update a dead buffer in place.
A view or assemble whose window runs past the end of a DYNAMIC axis at run time is a
`PyptoError` at its line (on the device it reads or writes out of bounds); a tail tile
says so with `valid_shape`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from pypto.ir import symbolic as S
from pypto.ir.dtypes import FP8, DataType, from_numpy, promote, promote_scalar
from pypto.ir.enums import CastMode, SaturationMode
from pypto.ir.errors import PyptoError, window_message
from pypto.ir.graph import Node
from pypto.ir.ops import GATHERMASK_PATTERNS


class Ctx:
    """What a kernel needs besides its inputs: symbol values and the precision mode."""

    def __init__(self, syms: dict[str, int], fp64: bool = False) -> None:
        self.syms = syms
        self.fp64 = fp64

    def dim(self, d: S.Dim) -> int:
        return S.evaluate(d, self.syms)

    def dims(self, ds: tuple[S.Dim, ...]) -> tuple[int, ...]:
        return tuple(S.evaluate(d, self.syms) for d in ds)

    def compute_dtype(self, dt: DataType) -> np.dtype:
        if dt.is_float:
            return np.dtype(np.float64) if self.fp64 else np.dtype(np.float32) if dt.nbytes <= 4 else dt.np
        return dt.np

    def up(self, x: np.ndarray, dt: DataType) -> np.ndarray:
        return x.astype(self.compute_dtype(dt), copy=False)

    def down(self, y: Any, dt: DataType) -> np.ndarray:
        target = np.dtype(np.float64) if (self.fp64 and dt.is_float) else dt.np
        return narrow(np.asarray(y), target)  # kernels pass fresh arrays only


_E4M3 = DataType.DT_FP8E4M3.np
_E4M3_MAX = float(ml_dtypes.finfo(_E4M3).max)


def narrow(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """`x` as `target`, rounded to nearest even; fp8 e4m3 has no inf, so what lies past its range
    (an inf too) saturates to ±448 as torch converts, where a plain numpy cast would give NaN."""
    if target == _E4M3 and x.dtype != _E4M3:
        x = np.clip(x, -_E4M3_MAX, _E4M3_MAX)  # NaN stays NaN
    return x.astype(target, copy=False)


Kernel = Callable[[Node, list[np.ndarray], Ctx], np.ndarray]
KERNELS: dict[str, Kernel] = {}


def _dt(x: np.ndarray) -> DataType:
    d = from_numpy(x.dtype)
    assert d is not None, x.dtype
    return d


# ---- elementwise ------------------------------------------------------------------------------

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)

_UNARY: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": lambda x: _erf(x.astype(np.float64)).astype(np.float64),
    "erfc": lambda x: _erfc(x.astype(np.float64)).astype(np.float64),
    "neg": np.negative, "abs": np.abs, "sign": np.sign, "ceil": np.ceil, "floor": np.floor,
    "trunc": np.trunc, "relu": lambda x: np.maximum(x, x.dtype.type(0)),
    "isnan": np.isnan, "isfinite": np.isfinite, "logical_not": lambda x: ~x.astype(bool),
}


def _unary_kernel(name: str) -> Kernel:
    fn = _UNARY[name]

    def kernel(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
        (x,) = xs
        assert node.type is not None
        src = _dt(x)
        if name in ("ceil", "floor", "trunc") and not src.is_float:
            return x.copy()
        if name in ("isnan", "isfinite") and not src.is_float:
            return np.full(x.shape, name == "isfinite")
        return ctx.down(fn(ctx.up(x, node.type.dtype if node.type.dtype.is_float else src)), node.type.dtype)

    return kernel


for _n in _UNARY:
    KERNELS[_n] = _unary_kernel(_n)


def _round(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    (x,) = xs
    return ctx.down(np.round(ctx.up(x, node.type.dtype), node.attr("decimals", 0)), node.type.dtype)


def _lrelu(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    x = ctx.up(xs[0], node.type.dtype)
    return ctx.down(np.where(x > 0, x, x * node.attr("negative_slope", 0.01)), node.type.dtype)


def _clip(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    x = ctx.up(xs[0], node.type.dtype).copy()
    lo, hi = node.attr("min"), node.attr("max")
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return ctx.down(x, node.type.dtype)


KERNELS["round"] = _round
KERNELS["lrelu"] = _lrelu
KERNELS["clip"] = _clip

_BINARY: dict[str, Callable[..., Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "pow": np.power,
    "floor_div": np.floor_divide, "remainder": np.remainder,
    "eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
    "lt": np.less, "le": np.less_equal,
    "logical_and": lambda a, b: np.logical_and(a.astype(bool), b.astype(bool)),
}


def valid_common_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape an elementwise op computes on: its operands' broadcast shape; on an axis where they
    disagree (an operand is a tail view: its valid part is shorter than its type, which the trace
    checked), the shortest — the data past a tail view's valid part is undefined in PyPTO, so the
    result holds only the part every operand has."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        rank = max(len(s) for s in shapes)
        padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
        return tuple(min((d for d in dims if d != 1), default=1) for dims in zip(*padded))


def crop_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`x`'s leading part on each axis longer than `shape`'s (a broadcast axis of 1 kept): a view."""
    k = len(shape) - x.ndim
    if all(d == 1 or d <= shape[i + k] for i, d in enumerate(x.shape)):
        return x
    return x[tuple(slice(0, d if d == 1 else min(d, shape[i + k])) for i, d in enumerate(x.shape))]


def operands(node: Node, xs: list[np.ndarray], ctx: Ctx) -> tuple[Any, Any, DataType]:
    """The two operands of a binary op (a scalar operand from attrs) and their common dtype."""
    if len(xs) == 2:
        a, b = xs
        return a, b, promote(_dt(a), _dt(b))
    (x,) = xs
    s = node.attr("scalar")
    if isinstance(s, S.SymExpr):
        s = ctx.dim(s)
    dt = promote_scalar(_dt(x), s)
    return (s, x, dt) if node.attr("reverse") else (x, s, dt)


def _binary_kernel(name: str) -> Kernel:
    fn = _BINARY[name]

    def kernel(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
        assert node.type is not None
        a, b, dt = operands(node, xs, ctx)
        if name == "div" and not dt.is_float:
            dt = DataType.DT_FP32
        cdt = ctx.compute_dtype(dt)
        a = np.asarray(a).astype(cdt, copy=False)
        b = np.asarray(b).astype(cdt, copy=False)
        if not dt.is_float:
            if name == "pow" and np.any(b < 0):
                raise PyptoError("pow: an integer base with a negative integer exponent has no integer "
                                 "result; cast the base to a float dtype first", node.loc)
            if name in ("floor_div", "remainder") and np.any(b == 0):
                raise PyptoError(f"{'//' if name == 'floor_div' else '%'}: integer division by zero "
                                 f"in this call", node.loc)
        return ctx.down(fn(a, b), node.type.dtype)

    return kernel


for _n in _BINARY:
    KERNELS[_n] = _binary_kernel(_n)


def _where(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    cond, *rest = xs
    vals = []
    it = iter(rest)
    for key in ("input", "other"):
        vals.append(node.attrs[key] if key in node.attrs else next(it))
    cdt = ctx.compute_dtype(node.type.dtype)
    a, b = (np.asarray(v).astype(cdt, copy=False) for v in vals)
    return ctx.down(np.where(cond.astype(bool), a, b), node.type.dtype)


KERNELS["where"] = _where


# ---- cast --------------------------------------------------------------------------------------

_UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _float_round(x: np.ndarray, target: np.dtype, mode: CastMode) -> np.ndarray:
    """Round float array `x` to the narrower float `target` with a rounding mode."""
    y = narrow(x, target)
    if mode in (CastMode.CAST_NONE, CastMode.CAST_RINT, CastMode.CAST_ROUND):
        if mode is CastMode.CAST_ROUND:  # ties away from zero: nudge exact ties outward
            back = y.astype(x.dtype)
            nxt = _step(y, np.sign(x - back))
            tie = (back != x) & (np.abs(nxt.astype(x.dtype) - x) == np.abs(back - x))
            y = np.where(tie & (np.abs(nxt.astype(x.dtype)) > np.abs(back)), nxt, y)
        return y
    back = y.astype(x.dtype)
    if mode is CastMode.CAST_FLOOR:
        return np.where(back > x, _step(y, -1), y)
    if mode is CastMode.CAST_CEIL:
        return np.where(back < x, _step(y, 1), y)
    if mode is CastMode.CAST_TRUNC:
        return np.where(np.abs(back) > np.abs(x), _step(y, -np.sign(x)), y)
    # CAST_ODD: inexact results take the neighbour whose last mantissa bit is 1
    bits = y.view(_UINT_OF[target.itemsize])
    inexact = (back != x) & np.isfinite(x)
    even = (bits & 1) == 0
    return np.where(inexact & even, _step(y, np.sign(x - back)), y)


def _step(y: np.ndarray, direction: Any) -> np.ndarray:
    """One ulp from `y` towards +inf (direction > 0) or -inf (direction < 0), elementwise."""
    u = _UINT_OF[y.dtype.itemsize]
    bits = y.view(u).astype(np.int64)
    direction = np.broadcast_to(np.asarray(direction), y.shape)
    neg = np.signbit(y.astype(np.float32))
    zero = y.astype(np.float32) == 0
    up_mag = np.where(neg, direction < 0, direction > 0)
    stepped = np.where(up_mag, bits + 1, bits - 1)
    sign_bit = 1 << (8 * y.dtype.itemsize - 1)
    stepped = np.where(zero & (direction > 0), 1, stepped)
    stepped = np.where(zero & (direction < 0), sign_bit | 1, stepped)
    out = np.where(direction == 0, bits, stepped)
    return out.astype(u).view(y.dtype)


def _cast(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    (x,) = xs
    src, dst = _dt(x), node.attrs["dtype"]
    mode = CastMode(node.attr("mode", 0))
    sat = SaturationMode(node.attr("satmode", 0)) is SaturationMode.ON
    if dst.is_float:
        if ctx.fp64 and src.is_float:
            return x.astype(np.float64)  # the precision reference: a float stays in fp64
        if src.is_float:
            if dst.nbytes < src.nbytes or dst is DataType.DT_BF16 and src is not DataType.DT_BF16 \
                    or dst in FP8 and src is not dst:
                xf = x.astype(np.float64) if src is DataType.DT_DOUBLE else x.astype(np.float32)
                if sat:
                    lim = float(ml_dtypes.finfo(dst.np).max)
                    xf = np.clip(xf, -lim, lim)
                return _float_round(xf, dst.np, mode)
            return x.astype(dst.np)
        return narrow(x, dst.np)
    if dst is DataType.DT_BOOL:
        return x != 0
    info = np.iinfo(dst.np)
    if src.is_float:
        xf = x.astype(np.float64)
        rounded = {
            CastMode.CAST_NONE: np.trunc, CastMode.CAST_TRUNC: np.trunc, CastMode.CAST_RINT: np.rint,
            CastMode.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
            CastMode.CAST_FLOOR: np.floor, CastMode.CAST_CEIL: np.ceil, CastMode.CAST_ODD: np.rint,
        }[mode](xf)
        rounded = np.nan_to_num(rounded, nan=0.0)
        if sat:
            return np.clip(rounded, info.min, info.max).astype(dst.np)
        wide = np.clip(rounded, -(2.0 ** 63), 2.0 ** 63 - 1).astype(np.int64)
        return wide.astype(dst.np)
    if sat:
        return np.clip(x.astype(np.int64), info.min, info.max).astype(dst.np)
    return x.astype(dst.np)


KERNELS["cast"] = _cast


# ---- reductions ---------------------------------------------------------------------------------

def _reduction(fn: Callable[..., Any]) -> Kernel:
    def kernel(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
        assert node.type is not None
        (x,) = xs
        src = _dt(x)
        xu = ctx.up(x, src) if src.is_float else x.astype(node.type.dtype.np)
        return ctx.down(fn(xu, axis=node.attrs["dim"], keepdims=node.attr("keepdim", False)), node.type.dtype)

    return kernel


def _argreduce(fn: Callable[..., Any]) -> Kernel:
    def kernel(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
        (x,) = xs
        r = fn(x, axis=node.attrs["dim"], keepdims=node.attr("keepdim", False))
        return np.asarray(r).astype(np.int32)

    return kernel


def _var(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    (x,) = xs
    dims = node.attr("dim")
    axis = None if dims is None else dims
    xu = ctx.up(x, node.type.dtype)
    return ctx.down(np.var(xu, axis=axis, ddof=node.attr("correction", 1), keepdims=node.attr("keepdim", False)),
                    node.type.dtype)


def _softmax(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    x = ctx.up(xs[0], node.type.dtype)
    d = node.attrs["dim"]
    e = np.exp(x - np.max(x, axis=d, keepdims=True))
    return ctx.down(e / np.sum(e, axis=d, keepdims=True), node.type.dtype)


def _rms_norm(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    x = ctx.up(xs[0], node.type.dtype)
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + node.attr("epsilon", 1e-6))
    if len(xs) == 2:
        y = y * ctx.up(xs[1], node.type.dtype)
    return ctx.down(y, node.type.dtype)


KERNELS["sum"] = _reduction(np.sum)
KERNELS["prod"] = _reduction(np.prod)
KERNELS["amax"] = _reduction(np.max)
KERNELS["amin"] = _reduction(np.min)
KERNELS["argmax"] = _argreduce(np.argmax)
KERNELS["argmin"] = _argreduce(np.argmin)
KERNELS["var"] = _var
KERNELS["softmax"] = _softmax
KERNELS["rms_norm"] = _rms_norm


# ---- layout -------------------------------------------------------------------------------------

# ---- indexing along one dim -----------------------------------------------------------------------

def index_positions(node: Node, index: np.ndarray, extent: int) -> np.ndarray:
    """The index values as positions along the dim; one out of range is a user error at the op's line."""
    idx = index.astype(np.int64)
    bad = (idx < -extent) | (idx >= extent)
    if bad.any():
        raise PyptoError(f"{node.op}: index {int(idx[bad].flat[0])} is out of range for dim "
                         f"{node.attrs['dim']} of size {extent}", node.loc)
    return np.where(idx < 0, idx + extent, idx)


def _gather(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    x, index = xs
    d = node.attrs["dim"] % x.ndim
    idx = index_positions(node, index, x.shape[d])
    window = x[tuple(slice(0, s) if i != d else slice(None) for i, s in enumerate(idx.shape))]
    return np.take_along_axis(window, idx, axis=d)


def _index_select(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    x, index = xs
    d = node.attrs["dim"] % x.ndim
    idx = index_positions(node, index, x.shape[d])
    if idx.ndim == 1:
        return np.take(x, idx, axis=d)
    # tiles stacked on a leading axis (the tiled executor): one index row per tile
    shape = [1] * x.ndim
    shape[0], shape[d] = idx.shape[0], idx.shape[-1]
    full = np.broadcast_to(idx.reshape(shape), x.shape[:d] + (idx.shape[-1],) + x.shape[d + 1:])
    return np.take_along_axis(x, full, axis=d)


def _scatter(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    """PyPTO's scatter (torch's): out[..., index[i, j, ...], ...] along dim = src[i, j, ...] (or the
    scalar), for every position of index; `reduce` adds or multiplies instead of replacing."""
    x, index, *src = xs
    out = np.array(x, copy=True)
    d = node.attrs["dim"] % x.ndim
    idx = index_positions(node, index, x.shape[d])
    where = list(np.indices(idx.shape, sparse=True))
    where[d] = idx
    at = tuple(where)
    if src:
        vals = src[0][tuple(slice(0, s) for s in idx.shape)]
    else:
        vals = np.asarray(node.attrs["scalar"]).astype(x.dtype)
    reduce = node.attrs.get("reduce")
    if reduce is None:
        out[at] = vals
    else:
        cdt = ctx.compute_dtype(node.type.dtype) if node.type is not None else out.dtype
        wide = out.astype(cdt)
        (np.add if reduce == "add" else np.multiply).at(wide, at, np.broadcast_to(vals, idx.shape).astype(cdt))
        out = ctx.down(wide, node.type.dtype) if node.type is not None else wide.astype(out.dtype)
    return out


def _topk(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    """The k largest (or smallest) along dim, largest first; among equal values the lower index
    first. `part` says whether the node is the values or the (int32) indices of the pair."""
    (x,) = xs
    d = node.attrs["dim"] % x.ndim
    idx = top_order(x, d, node.attrs["k"], node.attrs.get("largest", True))
    if node.attrs.get("part") == "indices":
        return idx.astype(np.int32)
    return np.take_along_axis(x, idx, axis=d)


def top_order(x: np.ndarray, d: int, k: int, largest: bool, ties: np.ndarray | None = None) -> np.ndarray:
    """The positions along `d` of the `k` largest (smallest) of `x`, in order; among equal values
    the lower position first, or the lower of `ties` (the values' own indices) where given."""
    keys = x.astype(np.float64)
    keys = -keys if largest else keys
    order = np.argsort(keys, axis=d, kind="stable") if ties is None else np.lexsort((ties, keys), axis=d)
    return np.take(order, np.arange(k), axis=d)


def _scatter_update(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    """PyPTO's cache update: 2-D, row `index[i, j]` of input takes row `i * s + j` of src; 4-D
    ([blocks, block_size, 1, d]), position `index[i, j]` is block `// block_size`, slot
    `% block_size`, and takes `src[i, j, 0]`. Tiles stacked on a leading axis run one by one."""
    x, index, src = xs
    rank = len(node.type.shape) if node.type is not None else x.ndim
    if x.ndim > rank:
        return np.stack([_scatter_update(node, [x[b], index[b], src[b]], ctx) for b in range(x.shape[0])])
    out = np.array(x, copy=True)
    pos = index.astype(np.int64).reshape(-1)
    if rank == 2:
        rows = index_positions(node, pos, x.shape[0])
        out[rows] = src.reshape(-1, src.shape[-1])[:len(rows)]
    else:
        slots = index_positions(node, pos, x.shape[0] * x.shape[1])
        out[slots // x.shape[1], slots % x.shape[1], 0] = src.reshape(-1, src.shape[-1])[:len(slots)]
    return out


def _gathermask(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    """PyPTO's gathermask: along the last axis, the elements its pattern keeps (`GATHERMASK_PATTERNS`:
    from `first`, every `stride`-th), in order; values are moved, not computed. A valid part whose
    length is no multiple of the stride keeps length // stride of them, as PyPTO's valid shape."""
    (x,) = xs
    first, stride = GATHERMASK_PATTERNS[node.attrs["pattern_mode"]]
    return np.ascontiguousarray(x[..., first::stride][..., :x.shape[-1] // stride])


KERNELS["gather"] = _gather
KERNELS["gathermask"] = _gathermask
KERNELS["scatter_update"] = _scatter_update
KERNELS["topk"] = _topk
KERNELS["index_select"] = _index_select
KERNELS["scatter"] = _scatter


def window(node: Node, ctx: Ctx, offsets: tuple[S.Dim, ...], shape: tuple[S.Dim, ...],
           bounds: tuple[int, ...]) -> tuple[slice, ...]:
    """The slices of a view/assemble window; a window past the tensor's end is a user error
    (on the device it would read or write out of bounds)."""
    offs = ctx.dims(offsets)
    sizes = ctx.dims(shape)
    for axis, (o, s, n) in enumerate(zip(offs, sizes, bounds)):
        if o < 0 or o + s > n:
            raise PyptoError(window_message(node.op, axis, offs, sizes, n), node.loc)
    return tuple(slice(o, o + s) for o, s in zip(offs, sizes))


def view_extent(node: Node, offsets: tuple[int, ...], shape: tuple[int, ...],
                bounds: tuple[int, ...]) -> tuple[int, ...]:
    """The data of a view without valid_shape: the part of its window inside the input (PyPTO
    infers that valid shape); a window that starts past the input is a user error."""
    for axis, (o, s, n) in enumerate(zip(offsets, shape, bounds)):
        if o < 0 or (o >= n and s > 0):
            raise PyptoError(f"view reads outside its input: offset {o} on dim {axis}, which has {n} in this "
                             f"call", node.loc)
    return tuple(min(s, n - o) for o, s, n in zip(offsets, shape, bounds))


def _view(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    (x,) = xs
    valid = node.attr("valid_shape")
    if valid is None:
        offs = ctx.dims(node.attrs["offsets"])
        valid = view_extent(node, offs, ctx.dims(node.attrs["shape"]), x.shape)
    sl = window(node, ctx, node.attrs["offsets"], valid, x.shape)
    out = x[sl].copy()
    dt = node.attr("dtype")
    if dt is not None and dt.np != x.dtype:
        out = np.ascontiguousarray(out).view(dt.np)
    return out


def assemble(node: Node, xs: list[np.ndarray], ctx: Ctx, inplace: bool = False) -> np.ndarray:
    """The `assemble` kernel: `src` written at the node's offsets into a copy of `dst` (into `dst`
    itself when `inplace`, which the interpreter passes when `dst` is dead afterwards)."""
    dst, src = xs
    if ctx.fp64 and dst.dtype != np.float64 and _dt(dst).is_float:
        out = dst.astype(np.float64)  # the precision reference: a low-precision buffer holds fp64 values
    else:
        out = dst if inplace else dst.copy()
    sl = window(node, ctx, node.attrs["offsets"], src.shape, dst.shape)
    out[sl] = src
    return out


def reshape(node: Node, xs: list[np.ndarray], ctx: Ctx, declared: tuple[int, ...] | None = None) -> np.ndarray:
    """The `reshape` kernel. An input that is only its valid part, smaller than its type (`declared`,
    which the interpreter passes: a padded view), is reshaped whole, its padding zero (PyPTO leaves
    it undefined), unless the reshape's own valid_shape is that part."""
    valid = node.attr("valid_shape")
    x = xs[0]
    size = math.prod(ctx.dims(node.attrs["shape"]))
    if valid is not None and x.size == math.prod(ctx.dims(valid)) != size:
        return x.reshape(ctx.dims(valid)).copy()  # the input is only its valid part already: that part, reshaped
    if declared is not None and x.size != size == math.prod(declared) and x.ndim == len(declared) \
            and all(a <= b for a, b in zip(x.shape, declared)):
        padded = np.zeros(declared, x.dtype)
        padded[tuple(slice(0, a) for a in x.shape)] = x
        x = padded
    out = x.reshape(ctx.dims(node.attrs["shape"]))
    if valid is not None:  # only the leading window holds data
        out = out[window(node, ctx, (0,) * out.ndim, valid, out.shape)]
    return out.copy()


def _transpose(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(xs[0], node.attrs["perm"]))


def _unsqueeze(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    return np.expand_dims(xs[0], node.attrs["dim"] % (xs[0].ndim + 1)).copy()


def _concat(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    return np.concatenate(xs, axis=node.attrs["dim"])


def _expand(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    return np.broadcast_to(xs[0], ctx.dims(node.type.shape)).copy()


def _clone(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    return xs[0].copy()


KERNELS["view"] = _view
KERNELS["assemble"] = assemble
KERNELS["reshape"] = reshape
KERNELS["transpose"] = _transpose
KERNELS["unsqueeze"] = _unsqueeze
KERNELS["concat"] = _concat
KERNELS["expand_clone"] = _expand
KERNELS["clone"] = _clone


# ---- creation and matmul ------------------------------------------------------------------------

def _full(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    value = node.attr("value", 0)
    valid = node.attr("valid_shape")
    shape = ctx.dims(valid if valid is not None else node.type.shape)
    return ctx.down(np.full(shape, value), node.type.dtype)


def _arange(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    a = node.attrs
    return np.arange(a["start"], a["end"], a["step"]).astype(node.type.dtype.np)


def _operand(x: np.ndarray, dt: type[np.generic]) -> np.ndarray:
    """`x` as a matmul operand of dtype `dt`: itself when it already is one and BLAS takes its
    layout as it is (each matrix with unit stride along one axis and the other a multiple of the
    item, at least the row: what numpy hands to BLAS without a copy), else a contiguous copy.
    BLAS packs its operands into its own buffers, so a view gives the copy's bytes (a tile's rows
    of A, a column block of B: the tiled executor's operands, no longer copied per tile)."""
    if x.dtype != dt or x.ndim < 2 or not x.flags.aligned:
        return x.astype(dt)
    item = x.itemsize
    s0, s1 = x.strides[-2:]
    rows, cols = x.shape[-2:]
    if (s1 == item and s0 % item == 0 and s0 >= cols * item) or (s0 == item and s1 % item == 0 and s1 >= rows * item):
        return x
    return x.astype(dt)


def _matmul(node: Node, xs: list[np.ndarray], ctx: Ctx) -> np.ndarray:
    assert node.type is not None
    a, b, *extra = xs
    if node.attr("a_trans"):
        a = np.swapaxes(a, -1, -2)
    if node.attr("b_trans"):
        b = np.swapaxes(b, -1, -2)
    if a.shape[-1] != b.shape[-2]:  # the trace checked K: only a valid shape (a run-time tail) differs here
        k = min(a.shape[-1], b.shape[-2])  # the part that exists of the shorter one, and as much of the other
        a, b = a[..., :k], b[..., :k, :]
    src = _dt(a)
    acc_dt = np.int32 if src is DataType.DT_INT8 else (np.float64 if ctx.fp64 else np.float32)
    acc = np.matmul(_operand(a, acc_dt), _operand(b, acc_dt))
    it = iter(extra)
    if node.attr("has_bias"):
        acc = acc + next(it).astype(np.float64 if ctx.fp64 else np.float32)
    if node.attr("has_scale_tensor"):
        acc = acc * next(it).astype(np.float64 if ctx.fp64 else np.float32)
    if node.attr("scale") is not None:
        acc = acc * node.attrs["scale"]
    if node.attr("relu"):
        acc = np.maximum(acc, 0)
    return ctx.down(acc, node.type.dtype)


KERNELS["full"] = _full
KERNELS["tensor"] = _full
KERNELS["arange"] = _arange
KERNELS["matmul"] = _matmul
