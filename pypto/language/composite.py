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
from pypto.language import api
from pypto.language.tensor import Tensor, as_tensor, trace_of, traced_tensor


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
    blocks = api.gather(table, 1, idx // block_size)
    rows = blocks * block_size + idx % block_size
    return api.reshape(rows, [idx.type.shape[1]])


def gather_in_ub(param: Tensor, indices: Tensor, block_table: Tensor, block_size: int, axis: int) -> Tensor:
    """The rows of a paged cache `param` [tokens, hidden] at token positions `indices` [1, k] (a
    top-k result), through the page table `block_table` [1, blocks]: [k, hidden]."""
    p = as_tensor(param, "param")
    if axis != -2:
        raise PyptoError(f"gather_in_ub: axis must be -2 (as in PyPTO), got {axis!r}")
    if p.type.rank != 2:
        raise PyptoError(f"gather_in_ub: param must be 2-D [tokens, hidden], got shape {p.shape}")
    return api.index_select(p, 0, _page_rows(indices, block_table, block_size, "gather_in_ub"))


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
    return api.index_select(api.view(s, [s.type.shape[0], size], [0, 0]), 0, rows)
