"""PyPTO 3's tensor-level ops (`pl.add`, `pl.row_sum`, `pl.matmul_acc`, ...), each written in the
tracer's ops (`pypto.tracing.api`), so that a `@pl.jit` body lands in the same tensor graph as a
CANN kernel and goes through the one pipeline.

Why it exists: PyPTO 3 names and shapes its ops its own way — `row_sum(x)` keeps a `[rows, 1]`
column, `row_expand_mul(x, r)` broadcasts such a column along each row, `matmul` defaults its
output dtype from its inputs, `matmul_acc(acc, a, b)` adds into an accumulator, `cast` takes
`target_type` and a rounding-mode name. Each function here checks what PyPTO 3's user
documentation says its operands must be (a row-expand operand is `[rows, 1]`, a col-expand one
`[1, cols]`) and emits the equivalent graph. A `pl.Tile` (`pypto/language/tile.py`) is a tensor of
the trace too, so each op takes tiles as it takes tensors: the tile forms (`row_max(tile, tmp_tile)`)
accept their scratch-tile argument, which changes nothing here.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.enums import CastMode
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Node
from pypto.tracing import api
from pypto.tracing.tensor import Tensor, trace_of, traced_tensor

_CAST_MODES = {"none": CastMode.CAST_NONE, "rint": CastMode.CAST_RINT, "round": CastMode.CAST_ROUND,
               "floor": CastMode.CAST_FLOOR, "ceil": CastMode.CAST_CEIL, "trunc": CastMode.CAST_TRUNC,
               "odd": CastMode.CAST_ODD}


def _tensor(op: str, x: Any, role: str = "input") -> Tensor:
    if not isinstance(x, Tensor) or x.trace is None:
        raise PyptoError(f"pl.{op}: {role} must be a tensor or tile inside a PyPTO 3 kernel, got {type(x).__name__}")
    return x


def _operand(op: str, x: Any) -> Any:
    """A right-hand operand: a tensor or a Python number / symbolic scalar (the scalar form)."""
    if isinstance(x, Tensor):
        return _tensor(op, x, "rhs")
    return x


# ---- elementwise ----------------------------------------------------------------------------------

def add(lhs: Any, rhs: Any) -> Tensor:
    """`pl.add(lhs, rhs)`: elementwise sum; a number on the right is the scalar form."""
    return api.add(_tensor("add", lhs, "lhs"), _operand("add", rhs))


def sub(lhs: Any, rhs: Any) -> Tensor:
    """`pl.sub(lhs, rhs)`: elementwise difference."""
    return api.sub(_tensor("sub", lhs, "lhs"), _operand("sub", rhs))


def mul(lhs: Any, rhs: Any) -> Tensor:
    """`pl.mul(lhs, rhs)`: elementwise product."""
    return api.mul(_tensor("mul", lhs, "lhs"), _operand("mul", rhs))


def div(lhs: Any, rhs: Any, high_precision: bool = False) -> Tensor:
    """`pl.div(lhs, rhs)`: elementwise quotient (`high_precision` selects an A5 path: no effect here)."""
    return api.div(_tensor("div", lhs, "lhs"), _operand("div", rhs))


def maximum(lhs: Any, rhs: Any) -> Tensor:
    """`pl.maximum(lhs, rhs)`: elementwise maximum."""
    return api.maximum(_tensor("maximum", lhs, "lhs"), _operand("maximum", rhs))


def minimum(lhs: Any, rhs: Any) -> Tensor:
    """`pl.minimum(lhs, rhs)`: elementwise minimum."""
    return api.minimum(_tensor("minimum", lhs, "lhs"), _operand("minimum", rhs))


def exp(input: Any) -> Tensor:  # noqa: A002 - PyPTO 3's parameter name
    """`pl.exp(x)`."""
    return api.exp(_tensor("exp", input))


def sqrt(input: Any) -> Tensor:  # noqa: A002
    """`pl.sqrt(x)`."""
    return api.sqrt(_tensor("sqrt", input))


def rsqrt(input: Any, high_precision: bool = False) -> Tensor:  # noqa: A002
    """`pl.rsqrt(x)`: 1 / sqrt(x) (`high_precision` changes nothing on this board)."""
    return api.rsqrt(_tensor("rsqrt", input))


def neg(input: Any) -> Tensor:  # noqa: A002
    """`pl.neg(x)`."""
    return api.neg(_tensor("neg", input))


def abs(input: Any) -> Tensor:  # noqa: A001, A002
    """`pl.abs(x)`."""
    return api.abs(_tensor("abs", input))


def relu(input: Any) -> Tensor:  # noqa: A002
    """`pl.relu(x)`: `max(x, 0)`."""
    return api.relu(_tensor("relu", input))


def recip(input: Any, high_precision: bool = False) -> Tensor:  # noqa: A002
    """`pl.recip(x)`: `1 / x` (`high_precision` selects an A5 path: no effect here)."""
    return api.reciprocal(_tensor("recip", input))


def cast(input: Any, target_type: DataType, mode: str | int = "round") -> Tensor:  # noqa: A002
    """`pl.cast(x, target_type, mode="round")`: convert the dtype; `mode` names the rounding
    ("none", "rint", "round", "floor", "ceil", "trunc", "odd", or 0-6)."""
    if not isinstance(target_type, DataType):
        raise PyptoError(f"pl.cast: target_type must be a pl dtype such as pl.FP32, got {target_type!r}")
    if isinstance(mode, str):
        if mode not in _CAST_MODES:
            raise PyptoError(f"pl.cast: mode {mode!r} is not one of {sorted(_CAST_MODES)}")
        cm = _CAST_MODES[mode]
    else:
        cm = CastMode(int(mode))
    return api.cast(_tensor("cast", input), target_type, cm)


# ---- shape and creation ---------------------------------------------------------------------------

def reshape(input: Any, shape: Sequence[Any]) -> Tensor:  # noqa: A002
    """`pl.reshape(x, shape)`: the same elements in another shape."""
    return api.reshape(_tensor("reshape", input), list(shape))


def full(shape: Sequence[Any], dtype: DataType, value: int | float) -> Tensor:
    """`pl.full(shape, dtype, value)`: a tensor filled with `value`."""
    return api.full(list(shape), value, dtype)


def create_tensor(shape: Sequence[Any], dtype: DataType, layout: Any = None, manual_dep: bool = False,
                  init_value: int | float | None = None) -> Tensor:
    """`pl.create_tensor(shape, dtype)`: a new tensor (zero-filled here; `init_value` fills it with
    that value; `layout` and `manual_dep` are the runtime's and change nothing on this board)."""
    if init_value is not None:
        return api.full(list(shape), init_value, dtype)
    return api.tensor(list(shape), dtype)


def slice(input: Any, shape: Sequence[Any], offset: Sequence[Any],  # noqa: A001, A002
          valid_shape: Sequence[Any] | None = None) -> Tensor:
    """`pl.slice(x, shape, offset)`: the sub-region of `shape` at `offset` (`x[a:b, c:d]` too)."""
    return api.view(_tensor("slice", input), list(shape), list(offset),
                    valid_shape=list(valid_shape) if valid_shape is not None else None)


class AtomicType(enum.Enum):
    """How a write combines with what the tensor holds: overwrite (`None_`, the default) or add (`Add`,
    the split-K idiom: each core adds its partial product into one output)."""

    None_ = "None"
    Add = "Add"


def write_region(out: Tensor, src: Tensor, offsets: Sequence[Any], atomic: Any = None) -> Tensor:
    """Write `src` into `out` at `offsets` (added into the region's contents for `AtomicType.Add`); `out`."""
    if atomic is None or atomic is AtomicType.None_:
        api.assemble(src, list(offsets), out)
        return out
    if atomic is not AtomicType.Add:
        raise PyptoError(f"atomic={atomic!r}: must be pl.AtomicType.Add or pl.AtomicType.None_")
    region = api.view(out, list(src.shape), list(offsets))
    api.assemble(api.add(region, src), list(offsets), out)
    return out


def assemble(target: Any, source: Any, offset: Sequence[Any], atomic: Any = None) -> Tensor:
    """`pl.assemble(target, source, offset)`: write `source` into `target` at `offset`; the updated
    target (`target[a:b, c:d] = source` too). `atomic=pl.AtomicType.Add` adds it in instead."""
    t = _tensor("assemble", target, "target")
    return write_region(t, _tensor("assemble", source, "source"), offset, atomic)


def concat(src0: Any, src1: Any) -> Tensor:
    """`pl.concat(a, b)`: `a` and `b` side by side, joined along the columns (the last dim)."""
    a, b = _tensor("concat", src0, "src0"), _tensor("concat", src1, "src1")
    if len(a.shape) != len(b.shape) or not all(_same(x, y) for x, y in zip(a.shape[:-1], b.shape[:-1])):
        raise PyptoError(f"pl.concat: the operands must agree on all but the last dim, got {list(a.shape)} and "
                         f"{list(b.shape)}")
    return api.concat([a, b], dim=-1)


# ---- reductions and broadcasts -----------------------------------------------------------------------

def _rank2(op: str, x: Tensor) -> None:
    if len(x.shape) < 1:
        raise PyptoError(f"pl.{op}: the input must have at least one dim, got a scalar tensor")


def row_sum(input: Any, tmp_tile: Any = None) -> Tensor:  # noqa: A002
    """`pl.row_sum(x)`: each row's sum, kept as a column (`[rows, cols]` -> `[rows, 1]`)."""
    x = _tensor("row_sum", input)
    _rank2("row_sum", x)
    return api.sum(x, dim=-1, keepdim=True)


def row_max(input: Any, tmp_tile: Any = None) -> Tensor:  # noqa: A002
    """`pl.row_max(x)`: each row's maximum, as a `[rows, 1]` column."""
    x = _tensor("row_max", input)
    _rank2("row_max", x)
    return api.amax(x, dim=-1, keepdim=True)


def row_min(input: Any, tmp_tile: Any = None) -> Tensor:  # noqa: A002
    """`pl.row_min(x)`: each row's minimum, as a `[rows, 1]` column."""
    x = _tensor("row_min", input)
    _rank2("row_min", x)
    return api.amin(x, dim=-1, keepdim=True)


def row_expand(target: Any, row_vec: Any) -> Tensor:
    """`pl.row_expand(x, r)`: the `[rows, 1]` column `r` repeated along each row of `x`'s shape."""
    x, r = _row_operand("row_expand", target, row_vec)
    return api.expand_clone(r, list(x.shape))


def col_expand(target: Any, col_vec: Any) -> Tensor:
    """`pl.col_expand(x, c)`: the `[1, cols]` row `c` repeated down each column of `x`'s shape."""
    x, c = _col_operand("col_expand", target, col_vec)
    return api.expand_clone(c, list(x.shape))


def _one(d: Any) -> bool:
    return isinstance(d, int) and d == 1


def _same(a: Any, b: Any) -> bool:
    return not (isinstance(a, int) and isinstance(b, int)) or a == b


def _row_operand(op: str, lhs: Any, rhs: Any) -> tuple[Tensor, Tensor]:
    """`lhs [..., rows, cols]` and a `[..., rows, 1]` column to broadcast along each row."""
    x, r = _tensor(op, lhs, "lhs"), _tensor(op, rhs, "rhs")
    xs, rs = tuple(x.shape), tuple(r.shape)
    if len(xs) != len(rs) or len(xs) < 2 or not _one(rs[-1]) or not all(_same(a, b) for a, b in zip(xs[:-1], rs[:-1])):
        raise PyptoError(f"pl.{op}: rhs must be a [rows, 1] column of lhs {list(xs)} (row_sum / row_max make "
                         f"one), got {list(rs)}")
    return x, r


def _col_operand(op: str, lhs: Any, rhs: Any) -> tuple[Tensor, Tensor]:
    """`lhs [..., rows, cols]` and a `[..., 1, cols]` row to broadcast down each column."""
    x, c = _tensor(op, lhs, "lhs"), _tensor(op, rhs, "rhs")
    xs, cs = tuple(x.shape), tuple(c.shape)
    if len(xs) != len(cs) or len(xs) < 2 or not _one(cs[-2]) or not _same(xs[-1], cs[-1]) \
            or not all(_same(a, b) for a, b in zip(xs[:-2], cs[:-2])):
        raise PyptoError(f"pl.{op}: rhs must be a [1, cols] row of lhs {list(xs)}, got {list(cs)}")
    return x, c


def row_expand_add(lhs: Any, rhs: Any) -> Tensor:
    """`pl.row_expand_add(x, r)`: `x[i, j] + r[i, 0]`."""
    return api.add(*_row_operand("row_expand_add", lhs, rhs))


def row_expand_sub(lhs: Any, rhs: Any) -> Tensor:
    """`pl.row_expand_sub(x, r)`: `x[i, j] - r[i, 0]`."""
    return api.sub(*_row_operand("row_expand_sub", lhs, rhs))


def row_expand_mul(lhs: Any, rhs: Any) -> Tensor:
    """`pl.row_expand_mul(x, r)`: `x[i, j] * r[i, 0]`."""
    return api.mul(*_row_operand("row_expand_mul", lhs, rhs))


def row_expand_div(lhs: Any, rhs: Any) -> Tensor:
    """`pl.row_expand_div(x, r)`: `x[i, j] / r[i, 0]`."""
    return api.div(*_row_operand("row_expand_div", lhs, rhs))


def col_expand_add(lhs: Any, rhs: Any) -> Tensor:
    """`pl.col_expand_add(x, c)`: `x[i, j] + c[0, j]`."""
    return api.add(*_col_operand("col_expand_add", lhs, rhs))


def col_expand_sub(lhs: Any, rhs: Any) -> Tensor:
    """`pl.col_expand_sub(x, c)`: `x[i, j] - c[0, j]`."""
    return api.sub(*_col_operand("col_expand_sub", lhs, rhs))


def col_expand_mul(lhs: Any, rhs: Any) -> Tensor:
    """`pl.col_expand_mul(x, c)`: `x[i, j] * c[0, j]`."""
    return api.mul(*_col_operand("col_expand_mul", lhs, rhs))


def col_expand_div(lhs: Any, rhs: Any) -> Tensor:
    """`pl.col_expand_div(x, c)`: `x[i, j] / c[0, j]`."""
    return api.div(*_col_operand("col_expand_div", lhs, rhs))


# ---- cube ---------------------------------------------------------------------------------------------

def _acc_dtype(a: Tensor, b: Tensor) -> DataType:
    """What the cube accumulates in: FP32 for float operands, INT32 for integer ones."""
    return DataType.DT_FP32 if a.dtype.is_float or b.dtype.is_float else DataType.DT_INT32


def matmul(lhs: Any, rhs: Any, out_dtype: DataType | None = None, a_trans: bool = False, b_trans: bool = False,
           c_matrix_nz: bool = False) -> Tensor:
    """`pl.matmul(a, b, out_dtype=None, a_trans=False, b_trans=False)`: `a @ b`, accumulated in FP32
    (INT32 for integers) and given as `out_dtype` (default: the accumulator's dtype)."""
    a, b = _tensor("matmul", lhs, "lhs"), _tensor("matmul", rhs, "rhs")
    return api.matmul(a, b, out_dtype or _acc_dtype(a, b), a_trans=a_trans, b_trans=b_trans,
                      c_matrix_nz=c_matrix_nz)


def matmul_acc(acc: Any, lhs: Any, rhs: Any, a_trans: bool = False, b_trans: bool = False,
               init_cond: Any = None) -> Tensor:
    """`pl.matmul_acc(acc, a, b)`: `acc + a @ b`, in `acc`'s dtype. `init_cond` (the split-K
    `k == 0` idiom) overwrites instead where it holds; here it must be known when the kernel is
    traced (a Python bool, or a `pl.range` index compared with a number)."""
    c = _tensor("matmul_acc", acc, "acc")
    a, b = _tensor("matmul_acc", lhs, "lhs"), _tensor("matmul_acc", rhs, "rhs")
    if init_cond is not None and not isinstance(init_cond, (bool, int)):
        raise PyptoError("pl.matmul_acc: init_cond must be known when the kernel is traced here (a run-time "
                         "condition is not supported yet); write `if k == 0: acc = pl.matmul(...)`")
    if not init_cond and not a_trans and not b_trans:
        joined = _k_chain(c, a, b)
        if joined is not None:
            return joined
    product = api.matmul(a, b, c.dtype, a_trans=a_trans, b_trans=b_trans)
    if init_cond:
        return product
    return api.add(c, product)


_PLAIN_MATMUL = {"out_dtype", "a_trans", "b_trans", "c_matrix_nz"}


def _k_chain(acc: Tensor, a: Tensor, b: Tensor) -> Tensor | None:
    """`acc + a @ b` as one matmul over the joined K range, when `acc` is a plain matmul of windows of
    the same two tensors that end, along K, where `a`'s and `b`'s windows begin (a K loop of
    `pl.matmul` then `pl.matmul_acc`, as pypto-lib writes a tiled K reduction). Upstream the
    accumulator stays in the cube's L0C across the loop; here the loop becomes the one matmul's k
    steps (the block stage's TMATMULs accumulating in L0C), so the scope's K loop is cube work, not
    a vector add per step. The result is accumulated in FP32 and rounded to `acc`'s dtype once.
    None when the pattern does not hold (the add is then traced as written)."""
    bld = trace_of(acc).builder
    prev = bld.producer(trace_of(acc).value)
    if prev is None or prev.op != "matmul" or set(prev.attrs) - _PLAIN_MATMUL or prev.attrs.get("a_trans") \
            or prev.attrs.get("b_trans") or len(prev.inputs) != 2:
        return None
    pa, pb = bld.producer(prev.inputs[0]), bld.producer(prev.inputs[1])
    na, nb = bld.producer(trace_of(a).value), bld.producer(trace_of(b).value)
    ka = _k_window(pa, na, -1)
    kb = _k_window(pb, nb, -2)
    if ka is None or kb is None or pa is None or pb is None:
        return None
    src_a, src_b = traced_tensor(bld, pa.inputs[0]), traced_tensor(bld, pb.inputs[0])
    wa = api.view(src_a, ka, pa.attrs["offsets"])
    wb = api.view(src_b, kb, pb.attrs["offsets"])
    return api.matmul(wa, wb, acc.dtype, c_matrix_nz=bool(prev.attrs.get("c_matrix_nz")))


def _k_window(prev: Node | None, new: Node | None, k: int) -> tuple[S.Dim, ...] | None:
    """The shape of `prev`'s window joined with `new`'s along axis `k`, when both are plain views of one
    tensor, equal but for `new` starting (a known number of elements) where `prev` ends along `k`."""
    if prev is None or new is None or prev.op != "view" or new.op != "view" or prev.inputs != new.inputs:
        return None
    if set(prev.attrs) != {"shape", "offsets"} or set(new.attrs) != {"shape", "offsets"}:
        return None
    ps, po, ns, no = prev.attrs["shape"], prev.attrs["offsets"], new.attrs["shape"], new.attrs["offsets"]
    if len(ps) < 2 or len(ps) != len(ns):
        return None
    k %= len(ps)
    for d in range(len(ps)):
        if d != k and (S.to_str(ps[d]) != S.to_str(ns[d]) or S.to_str(po[d]) != S.to_str(no[d])):
            return None
    if not all(isinstance(v, int) for v in (ps[k], po[k], ns[k], no[k])) or po[k] + ps[k] != no[k]:
        return None
    return tuple(ps[d] if d != k else ps[k] + ns[k] for d in range(len(ps)))
