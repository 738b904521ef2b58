"""What each tensor-graph op means: its kind and its shape/dtype inference.

One `OpDef` per op name. `infer(ctx, types, attrs)` returns the output `TensorType` or
raises `ShapeError` with a message a user can act on. `ctx.same(a, b)` decides whether
two dims are equal; when that depends on runtime values (two DYNAMIC axes) it records a
runtime check (`assume`) and answers yes. The numpy semantics live in
`pypto.reference.kernels`; lowering passes read `kind` and `vector`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType, float_of, promote, promote_scalar
from pypto.ir.errors import ShapeError
from pypto.ir.graph import TensorType
from pypto.ir.symbolic import Dim


class InferCtx(Protocol):
    def same(self, a: Dim, b: Dim, what: str) -> Dim: ...


Infer = Callable[[InferCtx, list[TensorType], dict[str, Any]], TensorType]


@dataclass(frozen=True)
class OpDef:
    name: str
    kind: str  # unary | binary | where | reduce | layout | index | create | matmul | control
    infer: Infer
    vector: bool = False  # runs on the vector unit under set_vec_tile_shapes


OPS: dict[str, OpDef] = {}


def _register(name: str, kind: str, infer: Infer, vector: bool = False) -> None:
    OPS[name] = OpDef(name, kind, infer, vector)


def fmt_shape(shape: tuple[Dim, ...]) -> str:
    return "[" + ", ".join(S.to_str(d) for d in shape) + "]"


def norm_dim(dim: int, rank: int, what: str = "dim") -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise ShapeError(f"{what} must be an int, got {dim!r}")
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise ShapeError(f"{what}={dim} is out of range for a tensor of rank {rank}")
    return dim % max(rank, 1)


def broadcast(ctx: InferCtx, a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """NumPy broadcasting; symbolic dims that may differ are checked at run time."""
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out: list[Dim] = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if S.equal(x, y):
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif isinstance(x, int) and isinstance(y, int):
            raise ShapeError(
                f"shapes {fmt_shape(a)} and {fmt_shape(b)} cannot be broadcast "
                f"(dim {i - n}: {x} vs {y})")
        else:
            out.append(ctx.same(x, y, f"broadcast of {fmt_shape(a)} with {fmt_shape(b)}"))
    return tuple(out)


# ---- elementwise ------------------------------------------------------------------------------

FLOAT_UNARY = ("exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal",
               "sin", "cos", "tan", "tanh", "sigmoid", "erf", "erfc")
SAME_UNARY = ("neg", "abs", "sign", "ceil", "floor", "trunc", "round", "relu", "lrelu", "clip")
BOOL_UNARY = ("isnan", "isfinite", "logical_not")
ARITH_BINARY = ("add", "sub", "mul", "maximum", "minimum", "pow", "floor_div", "remainder")
CMP_BINARY = ("eq", "ne", "gt", "ge", "lt", "le")


def _unary(rule: str) -> Infer:
    def infer(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
        (t,) = ts
        if rule == "float":
            return TensorType(t.shape, float_of(t.dtype))
        if rule == "bool":
            return TensorType(t.shape, DataType.DT_BOOL)
        return TensorType(t.shape, t.dtype)

    return infer


def _binary(rule: str) -> Infer:
    def infer(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
        if len(ts) == 2:
            shape = broadcast(ctx, ts[0].shape, ts[1].shape)
            dt = promote(ts[0].dtype, ts[1].dtype)
        else:
            (t,) = ts
            shape = t.shape
            scalar = attrs["scalar"]
            dt = promote_scalar(t.dtype, scalar if not isinstance(scalar, S.SymExpr) else 0)
        if rule == "bool":
            return TensorType(shape, DataType.DT_BOOL)
        if rule == "float":
            return TensorType(shape, float_of(dt))
        return TensorType(shape, dt)

    return infer


def _where(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    # inputs: cond, then the tensor operands among (input, other); scalars live in attrs
    cond, *vals = ts
    if cond.dtype is not DataType.DT_BOOL:
        raise ShapeError(f"where() needs a bool condition, got {cond.dtype.name}")
    shape = cond.shape
    for v in vals:
        shape = broadcast(ctx, shape, v.shape)
    if len(vals) == 2:
        dt = promote(vals[0].dtype, vals[1].dtype)
    elif len(vals) == 1:
        other = attrs.get("input", attrs.get("other"))
        dt = promote_scalar(vals[0].dtype, other)
    else:
        a, b = attrs["input"], attrs["other"]
        dt = DataType.DT_FP32 if isinstance(a, float) or isinstance(b, float) else DataType.DT_INT64
    return TensorType(shape, dt)


def _cast(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    return TensorType(ts[0].shape, attrs["dtype"])


for _n in FLOAT_UNARY:
    _register(_n, "unary", _unary("float"), vector=True)
for _n in SAME_UNARY:
    _register(_n, "unary", _unary("same"), vector=True)
for _n in BOOL_UNARY:
    _register(_n, "unary", _unary("bool"), vector=True)
for _n in ARITH_BINARY:
    _register(_n, "binary", _binary("same"), vector=True)
for _n in CMP_BINARY + ("logical_and",):
    _register(_n, "binary", _binary("bool"), vector=True)
_register("div", "binary", _binary("float"), vector=True)
_register("where", "where", _where, vector=True)
_register("cast", "unary", _cast, vector=True)


def _clip(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    # scalar bounds promote like any tensor-scalar op: torch.clamp(int tensor, 0.5) is fp32
    dt = ts[0].dtype
    for bound in (attrs.get("min"), attrs.get("max")):
        if bound is not None and not isinstance(bound, S.SymExpr):
            dt = promote_scalar(dt, bound)
    return TensorType(ts[0].shape, dt)


_register("clip", "unary", _clip, vector=True)


# ---- reductions and composites ----------------------------------------------------------------

def _reduced(shape: tuple[Dim, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[Dim, ...]:
    if keepdim:
        return tuple(1 if i in dims else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in dims)


def _reduce(rule: str) -> Infer:
    def infer(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
        (t,) = ts
        if t.rank == 0:
            raise ShapeError("cannot reduce a 0-d tensor")
        dim = norm_dim(attrs["dim"], t.rank)
        shape = _reduced(t.shape, (dim,), attrs.get("keepdim", False))
        if rule == "index":
            return TensorType(shape, DataType.DT_INT32)
        if rule == "sum" and t.dtype is DataType.DT_BOOL:
            return TensorType(shape, DataType.DT_INT64)
        return TensorType(shape, t.dtype)

    return infer


def _var(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    dims = attrs.get("dim")
    if dims is None:
        axes = tuple(range(t.rank))
    else:
        axes = tuple(norm_dim(d, t.rank) for d in (dims if isinstance(dims, tuple) else (dims,)))
    return TensorType(_reduced(t.shape, axes, attrs.get("keepdim", False)), float_of(t.dtype))


def _softmax(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    norm_dim(attrs["dim"], t.rank)
    return TensorType(t.shape, float_of(t.dtype))


def _rms_norm(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    t = ts[0]
    if t.rank == 0:
        raise ShapeError("rms_norm needs at least one dim")
    if len(ts) == 2:
        g = ts[1]
        if g.rank != 1:
            raise ShapeError(f"rms_norm gamma must be 1-D over the last dim, got shape {fmt_shape(g.shape)}")
        ctx.same(g.shape[0], t.shape[-1], "rms_norm gamma length vs last dim")
    return TensorType(t.shape, float_of(t.dtype))


for _n in ("sum", "prod"):
    _register(_n, "reduce", _reduce("sum"), vector=True)
for _n in ("amax", "amin"):
    _register(_n, "reduce", _reduce("same"), vector=True)
for _n in ("argmax", "argmin"):
    _register(_n, "reduce", _reduce("index"), vector=True)
_register("var", "reduce", _var, vector=True)
_register("softmax", "reduce", _softmax, vector=True)
_register("rms_norm", "reduce", _rms_norm, vector=True)


# ---- layout and data movement -----------------------------------------------------------------

def _view(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    shape, offsets = attrs["shape"], attrs["offsets"]
    if len(shape) != t.rank or len(offsets) != t.rank:
        raise ShapeError(f"view of a rank-{t.rank} tensor needs {t.rank} sizes and offsets, "
                         f"got shape {fmt_shape(shape)} and offsets {fmt_shape(offsets)}")
    valid = attrs.get("valid_shape")
    given = valid is not None and len(valid) == len(shape)
    extents = valid if given else shape
    for i, (size, off, full) in enumerate(zip(extents, offsets, t.shape)):
        # the window's data is its valid part: with valid_shape the declared shape may run past the
        # end; without, the part past the end is not data (PyPTO infers that valid shape), but the
        # window must start inside the tensor
        end = S.sub(full, S.add(off, size)) if given else S.sub(S.sub(full, off), 1)
        if isinstance(size, int) and size < 0 or isinstance(off, int) and off < 0:
            raise ShapeError(f"view dim {i}: negative size or offset ({S.to_str(size)} at {S.to_str(off)})")
        if given and isinstance(end, int) and end < 0:
            raise ShapeError(f"view dim {i}: window [{S.to_str(off)}, {S.to_str(S.add(off, size))}) "
                             f"runs past the tensor's size {S.to_str(full)}")
        if not given and isinstance(end, int) and end < 0 and size != 0:
            raise ShapeError(f"view dim {i}: offset {S.to_str(off)} is past the tensor's size {S.to_str(full)}")
    dt = attrs.get("dtype") or t.dtype
    if dt is not t.dtype:
        last = shape[-1]
        if not isinstance(last, int) or (last * t.dtype.nbytes) % dt.nbytes:
            raise ShapeError(f"view as {dt.name}: last dim {S.to_str(last)} × {t.dtype.nbytes} bytes "
                             f"is not a multiple of {dt.nbytes} bytes")
        shape = tuple(shape[:-1]) + (last * t.dtype.nbytes // dt.nbytes,)
    return TensorType(tuple(shape), dt)


# ---- indexing along one dim: gather, index_select, scatter (the dim is never cut into tiles) ---------

_INDEX_DTYPES = (DataType.DT_INT32, DataType.DT_INT64)


def _index_of(what: str, t: TensorType) -> None:
    if t.dtype not in _INDEX_DTYPES:
        raise ShapeError(f"{what}: index must be DT_INT32 or DT_INT64, got {t.dtype.name}")


def _index_within(what: str, index: TensorType, other: TensorType, name: str, skip: int | None = None) -> None:
    """`index` has `other`'s rank and is no larger on any dim but `skip` (the indexed one)."""
    if index.rank != other.rank:
        raise ShapeError(f"{what}: index has rank {index.rank}, {name} has rank {other.rank}; they must match")
    for i, (a, b) in enumerate(zip(index.shape, other.shape)):
        if i != skip and isinstance(a, int) and isinstance(b, int) and a > b:
            raise ShapeError(f"{what}: index dim {i} is {a}, more than the {name}'s {b}")


def _gather(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    x, index = ts
    _index_of("gather", index)
    _index_within("gather", index, x, "input", attrs["dim"])
    return TensorType(index.shape, x.dtype)


def _index_select(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    x, index = ts
    _index_of("index_select", index)
    if index.rank != 1:
        raise ShapeError(f"index_select: index must be 1-D, got rank {index.rank}")
    d = attrs["dim"]
    return TensorType(tuple(index.shape[0] if i == d else s for i, s in enumerate(x.shape)), x.dtype)


def _scatter(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    x, index, *src = ts
    _index_of("scatter", index)
    _index_within("scatter", index, x, "input", attrs["dim"])
    if src:
        if src[0].dtype is not x.dtype:
            raise ShapeError(f"scatter: src is {src[0].dtype.name}, input is {x.dtype.name}; they must match")
        _index_within("scatter", index, src[0], "src")
    if attrs.get("reduce") not in (None, "add", "multiply"):
        raise ShapeError(f"scatter: reduce is 'add', 'multiply' or None, got {attrs.get('reduce')!r}")
    return x


def _topk(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (x,) = ts
    d, k = attrs["dim"], attrs["k"]
    full = x.shape[d]
    if not isinstance(k, int) or k < 1 or isinstance(full, int) and k > full:
        raise ShapeError(f"topk: k={k} must be between 1 and the size of dim {d} ({S.to_str(full)})")
    shape = tuple(k if i == d else s for i, s in enumerate(x.shape))
    return TensorType(shape, x.dtype if attrs.get("part") != "indices" else DataType.DT_INT32)


def _scatter_update(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    x, index, src = ts
    _index_of("scatter_update", index)
    if index.rank != 2:
        raise ShapeError(f"scatter_update: index must be 2-D [b, s], got rank {index.rank}")
    if x.rank not in (2, 4) or src.rank != x.rank:
        raise ShapeError(f"scatter_update: input and src are both 2-D [rows, d] or both 4-D "
                         f"[blocks, block_size, 1, d]; got ranks {x.rank} and {src.rank}")
    if src.dtype is not x.dtype:
        raise ShapeError(f"scatter_update: src is {src.dtype.name}, input is {x.dtype.name}; they must match")
    return x


# PyPTO's gathermask: a built-in bit pattern keeps, along the last axis, the first or second of each
# pair (modes 1, 2), one of each four (modes 3-6: the first to the fourth) or everything (mode 7)
GATHERMASK_PATTERNS: dict[int, tuple[int, int]] = {1: (0, 2), 2: (1, 2), 3: (0, 4), 4: (1, 4), 5: (2, 4),
                                                   6: (3, 4), 7: (0, 1)}  # mode -> (first kept, stride)
GATHERMASK_DTYPES = (DataType.DT_INT16, DataType.DT_UINT16, DataType.DT_INT32, DataType.DT_UINT32,
                     DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)


def _gathermask(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (x,) = ts
    mode = attrs["pattern_mode"]
    if mode not in GATHERMASK_PATTERNS:
        raise ShapeError(f"gathermask: pattern_mode is 1 to 7, got {mode!r}")
    if x.dtype not in GATHERMASK_DTYPES:
        raise ShapeError(f"gathermask: input is {x.dtype.name}; supported: "
                         f"{', '.join(d.name for d in GATHERMASK_DTYPES)}")
    if not 1 <= x.rank <= 4:
        raise ShapeError(f"gathermask: input must have 1 to 4 dims, got shape {fmt_shape(x.shape)}")
    stride = GATHERMASK_PATTERNS[mode][1]
    last = x.shape[-1]
    if isinstance(last, int) and last % stride:
        raise ShapeError(f"gathermask: pattern_mode {mode} keeps one of every {stride} elements of the last "
                         f"axis, which must be a multiple of {stride}; got shape {fmt_shape(x.shape)}")
    return TensorType(x.shape[:-1] + (S.floordiv(last, stride),), x.dtype)


_register("gather", "index", _gather, vector=True)
_register("gathermask", "index", _gathermask, vector=True)
_register("scatter_update", "index", _scatter_update, vector=True)
_register("topk", "index", _topk, vector=True)
_register("index_select", "index", _index_select, vector=True)
_register("scatter", "index", _scatter, vector=True)


def _assemble(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    dst, src = ts
    offsets = attrs["offsets"]
    if src.rank != dst.rank or len(offsets) != dst.rank:
        raise ShapeError(f"assemble of a rank-{src.rank} tensor into a rank-{dst.rank} tensor "
                         f"at offsets {fmt_shape(offsets)}: ranks must match")
    if src.dtype is not dst.dtype:
        raise ShapeError(f"assemble writes {src.dtype.name} into a {dst.dtype.name} tensor; "
                         f"cast it first (pypto.cast(x, pypto.{dst.dtype.name}))")
    written = attrs.get("valid") or src.shape  # a value with a valid shape writes only that part
    for i, (s, off, d) in enumerate(zip(written, offsets, dst.shape)):
        end = S.sub(d, S.add(off, s))
        if isinstance(end, int) and end < 0:
            raise ShapeError(f"assemble dim {i}: a {S.to_str(s)}-wide tile at offset {S.to_str(off)} "
                             f"runs past the destination's size {S.to_str(d)}")
        if attrs.get("exact"):
            ctx.same(s, d, f"assignment of shape {fmt_shape(src.shape)} to shape {fmt_shape(dst.shape)}")
    return dst


def _numel(shape: tuple[Dim, ...]) -> Dim:
    n: Dim = 1
    for d in shape:
        n = S.mul(n, d)
    return n


def _reshape(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    shape = list(attrs["shape"])
    if shape.count(-1) > 1:
        raise ShapeError("reshape: at most one dim may be -1")
    total = _numel(t.shape)
    if -1 in shape:
        rest = _numel(tuple(d for d in shape if not (isinstance(d, int) and d == -1)))
        if not (isinstance(total, int) and isinstance(rest, int)) or rest == 0 or total % rest:
            raise ShapeError(f"reshape {fmt_shape(t.shape)} to {fmt_shape(tuple(shape))}: cannot infer -1")
        shape[shape.index(-1)] = total // rest
    new_total = _numel(tuple(shape))
    eq = S.equal(total, new_total)
    if eq is False:
        raise ShapeError(f"reshape {fmt_shape(t.shape)} ({S.to_str(total)} elements) "
                         f"to {fmt_shape(tuple(shape))} ({S.to_str(new_total)} elements)")
    if eq is None:
        ctx.same(total, new_total, f"reshape {fmt_shape(t.shape)} to {fmt_shape(tuple(shape))}")
    return TensorType(tuple(shape), t.dtype)


def _transpose(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    perm = attrs["perm"]
    if sorted(perm) != list(range(t.rank)):
        raise ShapeError(f"permutation {list(perm)} is not a permutation of the {t.rank} dims")
    return TensorType(tuple(t.shape[p] for p in perm), t.dtype)


def _unsqueeze(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    d = norm_dim(attrs["dim"], t.rank + 1)
    return TensorType(t.shape[:d] + (1,) + t.shape[d:], t.dtype)


def _concat(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    if not ts:
        raise ShapeError("concat needs at least one tensor")
    first = ts[0]
    d = norm_dim(attrs["dim"], first.rank)
    size: Dim = 0
    for k, t in enumerate(ts):
        if t.rank != first.rank:
            raise ShapeError(f"concat: tensor {k} has rank {t.rank}, tensor 0 has rank {first.rank}")
        if t.dtype is not first.dtype:
            raise ShapeError(f"concat: tensor {k} is {t.dtype.name}, tensor 0 is {first.dtype.name}")
        for i, (a, b) in enumerate(zip(t.shape, first.shape)):
            if i != d:
                if S.equal(a, b) is False:
                    raise ShapeError(f"concat along dim {d}: tensor {k} has shape {fmt_shape(t.shape)}, "
                                     f"tensor 0 has {fmt_shape(first.shape)} (dim {i} differs)")
                ctx.same(a, b, "concat")
        size = S.add(size, t.shape[d])
    return TensorType(first.shape[:d] + (size,) + first.shape[d + 1:], first.dtype)


def _expand(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    (t,) = ts
    target = tuple(t.shape[i - (len(attrs["shape"]) - t.rank)] if isinstance(s, int) and s == -1 else s
                   for i, s in enumerate(attrs["shape"]))
    if len(target) < t.rank:
        raise ShapeError(f"expand_clone to {fmt_shape(target)}: fewer dims than the input {fmt_shape(t.shape)}")
    out = broadcast(ctx, t.shape, target)
    for i, (a, b) in enumerate(zip(out, target)):
        if S.equal(a, b) is False:
            raise ShapeError(f"expand_clone of {fmt_shape(t.shape)} to {fmt_shape(target)}: dim {i} cannot expand")
    return TensorType(target, t.dtype)


def _same(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    return ts[0]


_register("view", "layout", _view)
_register("assemble", "layout", _assemble)
_register("reshape", "layout", _reshape)
_register("transpose", "layout", _transpose, vector=True)
_register("unsqueeze", "layout", _unsqueeze)
_register("concat", "layout", _concat, vector=True)
_register("expand_clone", "layout", _expand, vector=True)
_register("clone", "layout", _same, vector=True)


# ---- creation ---------------------------------------------------------------------------------

def _full(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    for d in attrs["shape"]:
        if isinstance(d, int) and d < 0:
            raise ShapeError(f"negative size in shape {fmt_shape(attrs['shape'])}")
    return TensorType(tuple(attrs["shape"]), attrs["dtype"])


def _arange(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    start, end, step = attrs["start"], attrs["end"], attrs["step"]
    if step == 0:
        raise ShapeError("arange step must not be 0")
    n = max(0, math.ceil((end - start) / step))
    return TensorType((n,), attrs["dtype"])


_register("full", "create", _full)
_register("tensor", "create", _full)
_register("arange", "create", _arange)


# ---- matmul -----------------------------------------------------------------------------------

MATMUL_DTYPES = {
    DataType.DT_FP16: (DataType.DT_FP16, DataType.DT_FP32),
    DataType.DT_BF16: (DataType.DT_BF16, DataType.DT_FP32),
    DataType.DT_FP32: (DataType.DT_FP32, DataType.DT_BF16, DataType.DT_FP16),  # the fixpipe rounds the fp32 sum
    DataType.DT_INT8: (DataType.DT_INT32,),
}


def _matmul(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    a, b = ts[0], ts[1]
    out_dt = attrs["out_dtype"]
    for name, t in (("input", a), ("mat2", b)):
        if not 2 <= t.rank <= 4:
            raise ShapeError(f"matmul {name} must have rank 2 to 4, got shape {fmt_shape(t.shape)}")
    if a.dtype is not b.dtype:
        raise ShapeError(f"matmul operands differ in dtype: {a.dtype.name} and {b.dtype.name}")
    allowed = MATMUL_DTYPES.get(a.dtype, ())
    if attrs.get("scale") is not None or attrs.get("has_scale_tensor"):
        allowed = allowed + (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)
    if out_dt not in allowed:
        pairs = ", ".join(f"{k.short}->{'/'.join(v.short for v in vs)}" for k, vs in MATMUL_DTYPES.items())
        raise ShapeError(f"matmul {a.dtype.short} -> {out_dt.short} is not supported (supported: {pairs})")
    m, k = (a.shape[-1], a.shape[-2]) if attrs.get("a_trans") else (a.shape[-2], a.shape[-1])
    k2, n = (b.shape[-1], b.shape[-2]) if attrs.get("b_trans") else (b.shape[-2], b.shape[-1])
    if S.equal(k, k2) is False:
        raise ShapeError(f"matmul inner dims differ: input {fmt_shape(a.shape)}"
                         f"{' (a_trans)' if attrs.get('a_trans') else ''} has K={S.to_str(k)}, mat2 "
                         f"{fmt_shape(b.shape)}{' (b_trans)' if attrs.get('b_trans') else ''} has K={S.to_str(k2)}")
    ctx.same(k, k2, "matmul K")
    batch = broadcast(ctx, a.shape[:-2], b.shape[:-2])
    shape = batch + (m, n)
    if attrs.get("has_bias"):
        bias = ts[2]
        broadcast(ctx, shape, bias.shape)
    return TensorType(shape, out_dt)


_register("matmul", "matmul", _matmul)


# ---- control ----------------------------------------------------------------------------------

def _from_attrs(ctx: InferCtx, ts: list[TensorType], attrs: dict[str, Any]) -> TensorType:
    raise ShapeError("control nodes are typed by the builder")


for _n in ("param", "loop", "loop_out", "carry", "assume"):
    _register(_n, "control", _from_attrs)
