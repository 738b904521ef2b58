"""PyPTO ops this compiler builds from others: `fillpad` and the experimental
`transposed_batchmatmul`, `gather_in_ub`, `gather_in_l1`.

Each is traced as the ops it is made of (transposes around a batched matmul; index arithmetic, a
gather through the page table and an `index_select` of rows), so its values are exact and the
graph, tiles and swimlane show those parts. The costs are the parts' costs: PyPTO's fused kernels
(a gather straight into UB or L1) may be cheaper on the chip than what the sim board shows here.
"""

from __future__ import annotations

from typing import Any

from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.tracing import api
from pypto.tracing.scalar import wrap
from pypto.tracing.tensor import Tensor, as_tensor, trace_of, traced_tensor


def _fill_value(value: Any, dtype: DataType) -> float | int:
    """PyPTO's fill values include the strings "-inf" / "inf" (its own example writes "-inf")."""
    try:
        v = float(value) if isinstance(value, str) else value
    except ValueError:
        raise PyptoError(f"fillpad: value {value!r} is not a number") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise PyptoError(f"fillpad: value must be a number, got {value!r}")
    if not dtype.is_float:
        if isinstance(v, float) and not v.is_integer():
            raise PyptoError(f"fillpad: value {value!r} is not an integer, but the tensor is {dtype.short}")
        return int(v)
    return float(v)


def fillpad(input: Tensor, mode: str = "constant", value: Any = 0) -> Tensor:
    """The tensor with its padding (what lies past its valid shape, to the right and below) set to
    `value`; same shape and dtype. A tensor whose valid shape is its shape comes back as a copy."""
    x = as_tensor(input)
    if mode != "constant":
        raise PyptoError(f"fillpad: mode {mode!r} is not supported; PyPTO implements only 'constant'")
    if not 1 <= x.type.rank <= 2:
        raise PyptoError(f"fillpad takes a 1-D or 2-D tensor, got shape {x.shape}")
    fill = _fill_value(value, x.type.dtype)
    t = trace_of(x)
    valid = t.builder.valid.get(t.value)
    if valid is None:
        return api.clone(x)
    out = api.full(list(x.type.shape), fill, x.type.dtype)
    zeros = [0] * x.type.rank
    out[tuple(slice(0, v) for v in valid)] = api.view(x, list(valid), zeros)
    return out


def transposed_batchmatmul(tensor_a: Tensor, tensor_b: Tensor, out_dtype: DataType) -> Tensor:
    """`a` (M, B, K) and `b` (B, K, N) to (M, B, N): `a` batched by its middle axis, times `b`."""
    a, b = as_tensor(tensor_a, "tensor_a"), as_tensor(tensor_b, "tensor_b")
    if a.type.rank != 3 or b.type.rank != 3:
        raise PyptoError(f"transposed_batchmatmul takes a (M, B, K) and b (B, K, N), got shapes {a.shape} "
                         f"and {b.shape}")
    if S.equal(a.type.shape[1], b.type.shape[0]) is False:
        raise PyptoError(f"transposed_batchmatmul: the batch of a (dim 1, {S.to_str(a.type.shape[1])}) and of b "
                         f"(dim 0, {S.to_str(b.type.shape[0])}) differ")
    # PyPTO moves the batch axis in the cube's own loads and stores: the two transposes here are
    # marked as that (`cube_operand`), so they take the vector tile in force with leading 1s and do
    # not ask the kernel for a rank-3 set_vec_tile_shapes
    front = _cube_operand_swap(a)
    return _cube_operand_swap(api.matmul(front, b, out_dtype))


def _cube_operand_swap(x: Tensor) -> Tensor:
    """`x` with its first two axes swapped, as a cube op's operand move (`cube_operand`)."""
    t = trace_of(x)
    node = t.builder.emit("transpose", [t.value], {"perm": (1, 0, 2), "cube_operand": True})
    return traced_tensor(t.builder, node.id)


def _page_rows(indices: Tensor, block_table: Tensor, block_size: int, op: str) -> Tensor:
    """The cache rows of token positions `indices` [1, k] through a page table [1, blocks]:
    block_table[0, pos // block_size] * block_size + pos % block_size, as a [k] int tensor."""
    idx, table = as_tensor(indices, "indices"), as_tensor(block_table, "block_table")
    for name, t in (("indices", idx), ("block_table", table)):
        if t.type.rank != 2 or S.equal(t.type.shape[0], 1) is False:
            raise PyptoError(f"{op}: {name} must have shape [1, n], got {t.shape}")
        if t.type.dtype.is_float:
            raise PyptoError(f"{op}: {name} must be an integer tensor, got {t.type.dtype.short}")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size <= 0:
        raise PyptoError(f"{op}: block_size must be a positive int, got {block_size!r}")
    if trace_of(idx).builder.valid.get(trace_of(idx).value) is not None:
        # PyPTO reads only the valid positions (a top-k shorter than its tile); what lies past them
        # may be anything (-1 padding): read as position 0, so no lookup leaves the table
        idx = fillpad(idx, "constant", 0)
    blocks = api.gather(table, 1, idx // block_size)
    rows = blocks * block_size + idx % block_size
    return api.reshape(rows, [idx.type.shape[1]])


def _cache_rows(param: Tensor, cols: S.Dim, rows: Tensor) -> tuple[Tensor, Tensor]:
    """What the rows are taken from, and the rows there. PyPTO's gather moves rows from `param`'s
    memory by address: row r is `param`'s first row plus r rows, whatever `param`'s own shape. A
    view of a bigger cache (its models pass a tile-sized window `view(cache, [k, d], [0, 0])` and
    page through the whole cache) therefore reads the cache past the window's end; here the rows
    index the viewed tensor itself, shifted by the window's row offset, over the window's columns
    (the first `cols` of them)."""
    t = trace_of(param)
    win = t.builder.windows.get(t.value)
    if win is None or param.type.rank != 2:
        return api.view(param, [param.type.shape[0], cols], [0, 0]), rows
    src, (row0, col0) = win
    whole = traced_tensor(t.builder, src)
    if S.equal(row0, 0) is not True:
        rows = rows + wrap(row0)
    if S.equal(col0, 0) is True and S.equal(cols, whole.type.shape[1]) is True:
        return whole, rows
    return api.view(whole, [whole.type.shape[0], cols], [0, col0]), rows


def _valid_like(out: Tensor, indices: Tensor, param: Tensor | None) -> Tensor:
    """As PyPTO: the result's valid rows are the indices' valid columns (a top-k result shorter than
    its tile), its valid columns `param`'s."""
    b = trace_of(out).builder
    iv = b.valid.get(trace_of(indices).value)
    pv = b.valid.get(trace_of(param).value) if param is not None else None
    if iv is None and pv is None:
        return out
    rows, cols = out.type.shape
    b.valid[trace_of(out).value] = (iv[1] if iv is not None else rows, pv[1] if pv is not None else cols)
    return out


def gather_in_ub(param: Tensor, indices: Tensor, block_table: Tensor, block_size: int, axis: int) -> Tensor:
    """The rows of a paged cache `param` [tokens, hidden] at token positions `indices` [1, k] (a
    top-k result), through the page table `block_table` [1, blocks]: [k, hidden]."""
    p = as_tensor(param, "param")
    if axis != -2:
        raise PyptoError(f"gather_in_ub: axis must be -2 (as in PyPTO), got {axis!r}")
    if p.type.rank != 2:
        raise PyptoError(f"gather_in_ub: param must be 2-D [tokens, hidden], got shape {p.shape}")
    rows = _page_rows(indices, block_table, block_size, "gather_in_ub")
    cache, rows = _cache_rows(p, p.type.shape[1], rows)
    return _valid_like(api.index_select(cache, 0, rows), indices, p)


def gather_in_l1(src: Tensor, indices: Tensor, block_table: Tensor, block_size: int, size: int,
                 is_b_matrix: bool, is_trans: bool) -> Tensor:
    """The first `size` columns of the rows of `src` at `indices` [1, n] through the page table:
    [n, size]. `is_b_matrix` and `is_trans` say how PyPTO lays the result out in L1 for the matmul
    that takes it (as its B matrix, transposed); neither changes the values or the shape — PyPTO's
    own kernels assemble an `is_trans` result as [n, size] rows."""
    s = as_tensor(src, "src")
    if s.type.rank != 2:
        raise PyptoError(f"gather_in_l1: src must be 2-D, got shape {s.shape}")
    cols = s.type.shape[1]
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0 or \
            (isinstance(cols, int) and size > cols):
        raise PyptoError(f"gather_in_l1: size must be an int in [1, {S.to_str(cols)}], got {size!r}")
    rows = _page_rows(indices, block_table, block_size, "gather_in_l1")
    cache, rows = _cache_rows(s, size, rows)
    return _valid_like(api.index_select(cache, 0, rows), indices, None)
