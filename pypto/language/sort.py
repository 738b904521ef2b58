"""PyPTO 3's sort and gather ops: `pl.arange` (`ci`), `pl.sort32`, `pl.mrgsort`, `pl.gather` (index
and mask forms) and `pl.tile.MaskPattern`.

Why it exists: PyPTO 3 sorts a row with the vector unit's own primitives. `sort32(src, idx)` sorts
each 32-element block of `src` in descending order and carries `idx` along, giving a tensor of
(value, index) pairs with the last dim doubled — value at even positions, the index's bits at odd
ones; `mrgsort(pairs, block_len=L)` merges each 4 consecutive sorted runs of `L` positions into one;
a mask `gather` then lifts the value lanes (`P0101`) or the index lanes (`P1010`, with
`output_dtype=` the same-width integer type). Our one pipeline has a stable descending `topk`
and an index `gather` (CANN's), so each sort here is one: a block of the row is seen as a row of
its own (a reshape), `topk` over all of it sorts it (among equal values the lower position first,
which is what merging stably sorted runs gives), and `gather` permutes the carried indices.

A pair tensor (`SortPairs`) is therefore not one tensor of the trace but two of the same shape —
the values and the carried indices — that behave as the `[rows, 2 * n]` interleaving: it slices on
pair boundaries (`s[:, 0:2 * k]`), is merged by `mrgsort`, split by a mask `gather`. Other uses of
it (an elementwise op, a store of the interleaved tensor, `P1111`) raise: docs/pypto3.md.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.tracing import api
from pypto.tracing.tensor import Tensor


class MaskPattern:
    """The mask `gather`'s selectors (PyPTO 3's values): which positions of the last dim are kept,
    read right to left — `P0101` positions 0, 2, 4, …; `P1010` 1, 3, 5, …; `P0001` to `P1000` one of
    every four (0, 4, …; 1, 5, …; 2, 6, …; 3, 7, …); `P1111` all."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


_STRIDE = {1: (0, 2), 2: (1, 2), 3: (0, 4), 4: (1, 4), 5: (2, 4), 6: (3, 4), 7: (0, 1)}
_ARANGE_DTYPES = (DataType.DT_INT16, DataType.DT_INT32, DataType.DT_UINT16, DataType.DT_UINT32)
_SORT_VALUE_DTYPES = (DataType.DT_FP32,)
_SORT_INDEX_DTYPES = (DataType.DT_INT32, DataType.DT_UINT32)


def _tensor(op: str, x: Any, role: str = "input") -> Tensor:
    if not isinstance(x, Tensor) or x.trace is None:
        raise PyptoError(f"pl.{op}: {role} must be a tensor or tile inside a PyPTO 3 kernel, got {type(x).__name__}")
    return x


def _static(op: str, what: str, d: Any) -> int:
    if isinstance(d, bool) or not isinstance(d, int):
        raise PyptoError(f"pl.{op}: {what} must be a number known when the kernel is traced, got {d!r}")
    return d


class SortPairs:
    """The `[rows, 2 * n]` (value, index) pairs of `sort32` / `mrgsort`, held as the values and the
    carried indices (`[rows, n]` each): `shape` and `dtype` are the interleaved tensor's."""

    def __init__(self, values: Tensor, index: Tensor) -> None:
        self.values = values
        self.index = index

    @property
    def shape(self) -> list[Any]:
        s = self.values.shape
        return s[:-1] + [s[-1] * 2]

    @property
    def dtype(self) -> DataType:
        return self.values.dtype

    def __getitem__(self, key: Any) -> SortPairs:
        """A slice of the pairs: the last dim's bounds must fall on pair boundaries (even)."""
        keys = key if isinstance(key, tuple) else (key,)
        rank = len(self.values.shape)
        if len(keys) != rank or not all(isinstance(k, builtins.slice) for k in keys):
            raise PyptoError(f"a sort32/mrgsort pair tensor is sliced with {rank} slices (x[:, a:b]), got {key!r}")
        last = keys[-1]
        width = _static("mrgsort", "the pair tensor's last dim", self.shape[-1])
        start, stop, step = last.indices(width)
        if step != 1 or start % 2 or stop % 2:
            raise PyptoError(f"a sort32/mrgsort pair tensor's last dim is sliced on pair boundaries (even bounds, "
                             f"step 1), got {start}:{stop}:{step}")
        pair_key = (*keys[:-1], builtins.slice(start // 2, stop // 2))
        return SortPairs(self.values[pair_key], self.index[pair_key])


def _pairs(op: str, x: Any) -> SortPairs:
    if not isinstance(x, SortPairs):
        raise PyptoError(f"pl.{op}: the input must be the (value, index) pairs of pl.sort32 / pl.mrgsort, "
                         f"got {type(x).__name__}")
    return x


def _sort_blocks(values: Tensor, index: Tensor, block: int) -> SortPairs:
    """Each `block` consecutive pairs of every row, sorted descending by value (stable), indices carried."""
    shape = values.shape
    rows = math.prod(_static("sort32", "the shape", d) for d in shape[:-1])
    n = _static("sort32", "the last dim", shape[-1])
    v = api.reshape(values, [rows * n // block, block])
    i = api.reshape(index, [rows * n // block, block])
    top_v, top_pos = api.topk(v, block, dim=-1, largest=True)
    top_i = api.gather(i, -1, top_pos)
    return SortPairs(api.reshape(top_v, shape), api.reshape(top_i, shape))


def arange(start: Any, shape: Sequence[Any], dtype: DataType = DataType.DT_INT32,
           descending: bool = False) -> Tensor:
    """`pl.arange(start, shape, dtype=pl.INT32, descending=False)` (PyPTO 3's `ci`): consecutive integers
    along the last dim, `start + k` (`start - k` descending); the leading dims must be 1."""
    dims = [_static("arange", "the shape", d) for d in shape]
    if not dims or dims[-1] < 1 or any(d != 1 for d in dims[:-1]):
        raise PyptoError(f"pl.arange: the shape is [1, …, 1, n] (only the first row is written), got {dims}")
    if dtype not in _ARANGE_DTYPES:
        raise PyptoError(f"pl.arange: dtype must be one of {', '.join(d.name for d in _ARANGE_DTYPES)}, "
                         f"got {getattr(dtype, 'name', dtype)!r}")
    first = _static("arange", "start", start)
    n = dims[-1]
    seq = api.arange(first, first - n, -1, dtype=dtype) if descending else api.arange(first, first + n, 1, dtype=dtype)
    return api.reshape(seq, dims)


ci = arange


def sort32(src: Any, idx: Any) -> SortPairs:
    """`pl.sort32(src, idx)`: each 32-element block of `src`'s last dim sorted descending, `idx` carried
    along; the (value, index) pairs, last dim doubled."""
    s, i = _tensor("sort32", src, "src"), _tensor("sort32", idx, "idx")
    if s.dtype not in _SORT_VALUE_DTYPES:
        raise PyptoError(f"pl.sort32: src must be FP32 here (FP16 pairs are not supported yet), got {s.dtype.name}")
    if i.dtype not in _SORT_INDEX_DTYPES:
        raise PyptoError(f"pl.sort32: idx must be INT32 or UINT32 (the index lanes of FP32 pairs), got {i.dtype.name}")
    if len(s.shape) != len(i.shape) or any(not _eq(a, b) for a, b in zip(s.shape, i.shape)):
        raise PyptoError(f"pl.sort32: idx must have src's shape, got {list(i.shape)} and {list(s.shape)}")
    n = _static("sort32", "src's last dim", s.shape[-1])
    if n % 32:
        raise PyptoError(f"pl.sort32: src's last dim must be a multiple of 32, got {n}")
    return _sort_blocks(s, i, 32)


def _eq(a: Any, b: Any) -> bool:
    return a is b or (isinstance(a, int) and isinstance(b, int) and a == b) or str(a) == str(b)


def mrgsort(src0: Any, src1: Any = None, src2: Any = None, src3: Any = None, tmp: Any = None, *,
            exhausted: bool = False, block_len: Any = None) -> SortPairs:
    """`pl.mrgsort(pairs, block_len=L)`: each 4 consecutive sorted runs of `L` positions (`L / 2` pairs)
    merged into one, descending. `pl.mrgsort(a, b[, c[, d]])`: 2 to 4 sorted pair tensors merged
    into one along the last dim. Among equal values the earlier run's pair comes first."""
    p0 = _pairs("mrgsort", src0)
    others = [x for x in (src1, src2, src3) if x is not None]
    if block_len is not None:
        if others or exhausted:
            raise PyptoError("pl.mrgsort: block_len= (one tensor of runs) and src1, … (2 to 4 tensors) "
                             "are exclusive")
        length = _static("mrgsort", "block_len", block_len)
        width = _static("mrgsort", "the pair tensor's last dim", p0.shape[-1])
        if length <= 0 or length % 64:
            raise PyptoError(f"pl.mrgsort: block_len must be a positive multiple of 64, got {length}")
        if width % length:
            raise PyptoError(f"pl.mrgsort: the last dim ({width}) must be a whole number of runs of block_len "
                             f"{length}")
        group = min(width, 4 * length)
        if width % group:
            raise PyptoError(f"pl.mrgsort: a last dim ({width}) that is not a whole number of 4-run groups "
                             f"({group}) is not supported yet")
        return _sort_blocks(p0.values, p0.index, group // 2)
    if not others:
        raise PyptoError("pl.mrgsort: give block_len= for one tensor of runs, or 2 to 4 sorted pair tensors")
    if exhausted:
        raise PyptoError("pl.mrgsort: exhausted=True is not supported yet")
    ps = [p0, *(_pairs("mrgsort", x) for x in others)]
    values = api.concat([p.values for p in ps], dim=-1)
    index = api.concat([p.index for p in ps], dim=-1)
    width = _static("mrgsort", "the merged last dim", values.shape[-1])
    return _sort_blocks(values, index, width)


def _same_width(op: str, src: DataType, dst: DataType) -> None:
    if src.nbytes != dst.nbytes:
        raise PyptoError(f"pl.{op}: output_dtype must have the input's width ({src.name} is {src.nbytes} bytes), "
                         f"got {dst.name}")


def gather(input: Any, dim: Any = None, index: Any = None, *, mask_pattern: Any = None,  # noqa: A002
           output_dtype: DataType | None = None, **compare: Any) -> Tensor:
    """`pl.gather(input, dim, index)`: `out[b, k] = input[b, index[b, k]]` (dim -1, an INT32 index);
    `pl.gather(input, mask_pattern=…, output_dtype=None)`: the positions of the last dim the pattern
    keeps; on sort32 / mrgsort pairs, `P0101` the values and `P1010` the indices' bits."""
    if compare:
        raise PyptoError(f"pl.gather: the compare form ({', '.join(sorted(compare))}) is not supported yet")
    if mask_pattern is not None:
        if dim is not None or index is not None:
            raise PyptoError("pl.gather: the index form (dim, index) and mask_pattern= are exclusive")
        return _gather_mask(input, mask_pattern, output_dtype)
    if output_dtype is not None:
        raise PyptoError("pl.gather: output_dtype is only for the mask form (mask_pattern=)")
    if dim is None or index is None:
        raise PyptoError("pl.gather: give (dim, index) for the index form or mask_pattern= for the mask form")
    x, i = _tensor("gather", input), _tensor("gather", index, "index")
    if len(x.shape) != 2 or dim not in (-1, 1):
        raise PyptoError(f"pl.gather: the index form gathers along the last dim of a 2-D input (dim=-1), "
                         f"got dim={dim!r} on {list(x.shape)}")
    if i.dtype is not DataType.DT_INT32:
        raise PyptoError(f"pl.gather: index must be INT32, got {i.dtype.name}")
    return api.gather(x, -1, i)


def _gather_mask(input: Any, mask_pattern: Any, output_dtype: DataType | None) -> Tensor:  # noqa: A002
    mode = int(mask_pattern)
    if mode not in _STRIDE or isinstance(mask_pattern, bool):
        raise PyptoError(f"pl.gather: mask_pattern is 1 to 7 (pl.tile.MaskPattern), got {mask_pattern!r}")
    if isinstance(input, SortPairs):
        if mode == MaskPattern.P1111:
            raise PyptoError("pl.gather: P1111 of sort32 / mrgsort pairs (the interleaved tensor) is not "
                             "supported yet")
        first, stride = _STRIDE[mode]
        lane = input.values if first % 2 == 0 else input.index
        if stride == 4:  # one lane of every other pair
            lane = api.gathermask(lane, MaskPattern.P0101 if first < 2 else MaskPattern.P1010)
        dt = output_dtype or input.dtype
        _same_width("gather", input.dtype, dt)
        return lane if lane.dtype is dt else api.view(lane, dtype=dt)
    x = _tensor("gather", input)
    out = api.gathermask(x, mode)
    if output_dtype is None or output_dtype is x.dtype:
        return out
    _same_width("gather", x.dtype, output_dtype)
    return api.view(out, dtype=output_dtype)
