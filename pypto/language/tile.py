"""PyPTO 3's explicit-tile style: `pl.Tile[...]`, `pl.MemorySpace` / `pl.Mem`, `pl.load`, `pl.store`,
`pl.move`, `pl.create_tile`, `pl.PadValue` and the tile-only ops (`pl.tile.*`).

Why it exists: PyPTO 3 lets a kernel say by hand what its tensor-level ops leave to the compiler —
which region of a DDR tensor is brought on chip (`pl.load(tensor, offsets, shapes)`), into which
on-chip buffer (`target_memory=pl.Mem.Vec` / `Mat`, then `pl.move` to the cube's `Left` / `Right`),
and where the result goes back (`pl.store(tile, offsets, tensor)`). We have one pipeline, and it
already tiles tensor graphs, so a tile here is a traced tensor of the tile's shape:

- `pl.load` is a view of the tensor's region (what the tile holds), `pl.store` writes the tile into
  the tensor's region (an assemble), `pl.create_tile` a new zero-filled tensor of the tile's shape;
- a tile remembers the memory space it was placed in (`memory_of`), so the rules PyPTO 3's memory
  model states are checked at the user's line (a DDR load lands only in `Vec` or `Mat`; `Left`,
  `Right` and `Bias` are reached by `pl.move` from an on-chip space); a `pl.move` itself moves no
  data in the graph — our pipeline places operands on the cube's buffers by itself;
- the ops on tiles are the tensor-level ops (`pypto/language/ops.py`): a tile is a tensor of the
  trace, so `pl.add(tile_a, tile_b)` and `pl.matmul(left, right)` are the same graph nodes.

What is not supported yet (a valid shape smaller than the tile, `pl.tile.fillpad` with a pad value
other than zero on a partial tile, ...): docs/pypto3.md.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.language.control import current_block
from pypto.language.ops import (  # the ops that take tiles are the tensor-level ones: `pl.tile.add` is `pl.add`
    AtomicType,
    abs,  # noqa: A004 - PyPTO 3's name
    add,
    cast,
    col_expand,
    col_expand_add,
    col_expand_div,
    col_expand_mul,
    col_expand_sub,
    concat,
    div,
    exp,
    matmul,
    matmul_acc,
    maximum,
    minimum,
    mul,
    neg,
    recip,
    relu,
    reshape,
    row_expand,
    row_expand_add,
    row_expand_div,
    row_expand_mul,
    row_expand_sub,
    row_max,
    row_min,
    row_sum,
    rsqrt,
    sqrt,
    sub,
    write_region,
)
from pypto.language.sort import MaskPattern, SortPairs, arange, ci, mrgsort, sort32
from pypto.language.sort import gather as _gather
from pypto.tracing import api
from pypto.tracing.tensor import Tensor, trace_of, traced_tensor


class MemorySpace(enum.Enum):
    """Where a tile lives: DDR (where `pl.Tensor`s are), the vector unit's buffer (`Vec`), L1 (`Mat`),
    the cube's operand buffers (`Left`, `Right`), its accumulator (`Acc`) and its bias buffer (`Bias`).
    `pl.Mem` is the same enum."""

    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"


Mem = MemorySpace
# what a load from DDR may land in, and what a move may reach (PyPTO 3's memory model)
_LOADABLE = (MemorySpace.Vec, MemorySpace.Mat)
_MOVABLE = (MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias)


class PadValue(enum.Enum):
    """What the part of a tile outside its valid shape reads as (`pl.tile.fillpad`)."""

    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


@dataclass(frozen=True)
class TileType:
    """`pl.Tile[[shape], dtype]` (optionally a third entry, the memory space): a tile's annotation."""

    shape: tuple[Any, ...]
    dtype: DataType
    memory: MemorySpace | None = None


class Tile:
    """`pl.Tile[[rows, cols], pl.FP32]`: the annotation of an on-chip tile (a local's or a parameter's)."""

    def __class_getitem__(cls, item: Any) -> TileType:
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise PyptoError(f"pl.Tile[[shape], dtype] takes a shape list and a dtype, got {item!r}")
        shape, dtype = item[0], item[1]
        memory = item[2] if len(item) == 3 else None
        if not isinstance(shape, (list, tuple)):
            raise PyptoError(f"pl.Tile[[shape], dtype]: the shape must be a list, got {shape!r}")
        if not isinstance(dtype, DataType):
            raise PyptoError(f"pl.Tile[[shape], dtype]: the dtype must be a pl dtype such as pl.FP32, got {dtype!r}")
        if memory is not None and not isinstance(memory, MemorySpace):
            raise PyptoError(f"pl.Tile[[shape], dtype, memory]: memory must be a pl.MemorySpace, got {memory!r}")
        return TileType(tuple(shape), dtype, memory)


def get_block_idx() -> Any:
    """`pl.tile.get_block_idx()`: the index of the `pl.spmd` block being traced."""
    return current_block("pl.tile.get_block_idx()")[0]


def get_block_num() -> Any:
    """`pl.tile.get_block_num()`: how many blocks the enclosing `pl.spmd` runs."""
    return current_block("pl.tile.get_block_num()")[1]


def memory_of(x: Any) -> MemorySpace | None:
    """The memory space a tile was placed in (None for a tensor that is not a tile)."""
    m = getattr(x, "_pl_memory", None)
    return m if isinstance(m, MemorySpace) else None


def _placed(t: Tensor, memory: MemorySpace) -> Tensor:
    t._pl_memory = memory  # type: ignore[attr-defined] - a tag on the handle, read by memory_of
    return t


def _tile(op: str, x: Any, role: str = "tile") -> Tensor:
    if not isinstance(x, Tensor) or x.trace is None:
        raise PyptoError(f"pl.{op}: {role} must be a tile or tensor inside a kernel, got {type(x).__name__}")
    return x


def _dims(op: str, what: str, values: Any, rank: int) -> list[Any]:
    if not isinstance(values, (list, tuple)):
        raise PyptoError(f"pl.{op}: {what} must be a list, got {type(values).__name__}")
    if len(values) != rank:
        raise PyptoError(f"pl.{op}: {what} {list(values)} has {len(values)} entries; the tensor has {rank} dims")
    return list(values)


def _static(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _check_region(op: str, shape: Sequence[Any], offsets: Sequence[Any], sizes: Sequence[Any]) -> None:
    """A region known when traced must lie inside the tensor (PyPTO 3 rejects one that provably does not)."""
    for i, (d, o, s) in enumerate(zip(shape, offsets, sizes)):
        dd, oo, ss = _static(d), _static(o), _static(s)
        if oo is not None and oo < 0:
            raise PyptoError(f"pl.{op}: offset {oo} of dim {i} is negative")
        if ss is not None and ss <= 0:
            raise PyptoError(f"pl.{op}: size {ss} of dim {i} must be positive")
        if dd is not None and oo is not None and ss is not None and oo + ss > dd:
            raise PyptoError(f"pl.{op}: the region [{oo}, {oo + ss}) of dim {i} runs past the tensor's {dd}")


def load(tensor: Any, offsets: Sequence[Any], shapes: Sequence[Any], valid_shape: Sequence[Any] | None = None,
         target_memory: MemorySpace = MemorySpace.Vec, clamp: bool = False, *,
         valid_shapes: Sequence[Any] | None = None, transpose: bool = False) -> Tensor:
    """`pl.load(tensor, offsets, shapes, target_memory=pl.Mem.Vec)`: the tile holding the region of
    `tensor` of size `shapes` at `offsets`, placed in `Vec` (default) or `Mat` (a cube operand's L1).
    `transpose=True` gives the region transposed. A `valid_shape` smaller than `shapes` is not
    supported yet."""
    t = _tile("load", tensor, "tensor")
    if not isinstance(target_memory, MemorySpace):
        raise PyptoError(f"pl.load: target_memory must be a pl.MemorySpace, got {target_memory!r}")
    if target_memory not in _LOADABLE:
        raise PyptoError(f"pl.load: a load from DDR lands in pl.Mem.Vec or pl.Mem.Mat, not "
                         f"pl.Mem.{target_memory.name}; "
                         f"load into Mat and pl.move it to {target_memory.name}")
    if memory_of(t) is not None:
        raise PyptoError("pl.load: the source must be a DDR tensor, got a tile (pl.move moves tiles between buffers)")
    rank = len(t.shape)
    offs = _dims("load", "offsets", offsets, rank)
    sizes = _dims("load", "shapes", shapes, rank)
    valid = valid_shape if valid_shape is not None else valid_shapes
    if valid is not None:
        v = _dims("load", "valid_shape", valid, rank)
        if any(_static(a) is None or _static(a) != _static(b) for a, b in zip(v, sizes)):
            raise PyptoError(f"pl.load: a valid_shape {list(v)} smaller than the tile {list(sizes)} is not supported "
                             f"yet (docs/pypto3.md)")
    if not clamp:
        _check_region("load", list(t.shape), offs, sizes)
    tile = api.view(t, sizes, offs)
    if transpose:
        if rank != 2:
            raise PyptoError(f"pl.load(..., transpose=True) takes a 2-D region, got {rank} dims")
        tile = api.transpose(tile, 0, 1)
    return _placed(tile, target_memory)


def store(tile: Any, offsets: Sequence[Any], output_tensor: Any, shapes: Sequence[Any] | None = None, *,
          atomic: Any = None) -> Tensor:
    """`pl.store(tile, offsets, tensor)`: write the tile into `tensor` at `offsets`; the updated tensor.
    A tile of another dtype than the tensor's is converted (the accumulator's FP32 into a BF16
    output). `atomic=pl.AtomicType.Add` adds the tile into the tensor's region instead."""
    src = _tile("store", tile)
    out = _tile("store", output_tensor, "output_tensor")
    if memory_of(out) is not None:
        raise PyptoError("pl.store: the destination must be a DDR tensor, got a tile (pl.move moves tiles)")
    rank = len(out.shape)
    offs = _dims("store", "offsets", offsets, rank)
    if len(src.shape) != rank:
        raise PyptoError(f"pl.store: a {len(src.shape)}-D tile into a {rank}-D tensor")
    _check_region("store", list(out.shape), offs, list(src.shape))
    if src.dtype != out.dtype:
        src = api.cast(src, out.dtype)
    return write_region(out, src, offs, atomic)


def move(tile: Any, target_memory: MemorySpace, blayout: Any = None, slayout: Any = None) -> Tensor:
    """`pl.move(tile, target_memory=pl.Mem.Left)`: the tile in another on-chip buffer (the only way into
    `Left`, `Right` and `Bias`). No data moves in the graph; the tile is placed in the new space."""
    t = _tile("move", tile)
    if not isinstance(target_memory, MemorySpace):
        raise PyptoError(f"pl.move: target_memory must be a pl.MemorySpace, got {target_memory!r}")
    if target_memory not in _MOVABLE:
        raise PyptoError(f"pl.move: a tile moves between on-chip buffers ({', '.join(m.name for m in _MOVABLE)}), "
                         f"not to pl.Mem.{target_memory.name}")
    if memory_of(t) is None:
        raise PyptoError("pl.move: the source must be a tile (pl.load a tensor's region first)")
    b = trace_of(t).builder
    return _placed(traced_tensor(b, trace_of(t).value), target_memory)


def create_tile(shape: Sequence[Any], dtype: DataType, target_memory: MemorySpace = MemorySpace.Vec,
                **_layout: Any) -> Tensor:
    """`pl.create_tile(shape, dtype, target_memory=pl.Mem.Vec)`: a new on-chip buffer (zero-filled here)."""
    if not isinstance(dtype, DataType):
        raise PyptoError(f"pl.create_tile: dtype must be a pl dtype such as pl.FP32, got {dtype!r}")
    if not isinstance(target_memory, MemorySpace) or target_memory is MemorySpace.DDR:
        raise PyptoError(f"pl.create_tile: target_memory must be an on-chip pl.MemorySpace, got {target_memory!r}")
    return _placed(api.tensor(list(shape), dtype), target_memory)


create = create_tile


def transpose_view(tile: Any) -> Tensor:
    """`pl.tile.transpose_view(t)`: a 2-D tile seen transposed (`[k, n]` read as `[n, k]`)."""
    t = _tile("tile.transpose_view", tile)
    if len(t.shape) != 2:
        raise PyptoError(f"pl.tile.transpose_view takes a 2-D tile, got {len(t.shape)} dims")
    return _placed(api.transpose(t, 0, 1), memory_of(t) or MemorySpace.Vec)


def fillpad(tile: Any, pad_value: PadValue | int | float = PadValue.zero) -> Tensor:
    """`pl.tile.fillpad(t, pad_value)`: fill the part of `t` outside its valid shape. Tiles here are
    always wholly valid (a smaller valid shape is not supported yet), so this is `t` itself."""
    t = _tile("tile.fillpad", tile)
    return t


def gather_mask(src: Tensor | SortPairs, mask_pattern: int, *, output_dtype: DataType | None = None) -> Tensor:
    """`pl.tile.gather_mask(src, mask_pattern, output_dtype=None)`: `pl.gather`'s mask form."""
    return _gather(src, mask_pattern=mask_pattern, output_dtype=output_dtype)


__all__ = [
    "MaskPattern", "arange", "ci", "gather_mask", "mrgsort", "sort32",
    "AtomicType", "Mem", "MemorySpace", "PadValue", "Tile", "TileType", "abs", "add", "cast", "col_expand",
    "col_expand_add", "col_expand_div", "col_expand_mul", "col_expand_sub", "concat", "create", "create_tile", "div",
    "exp", "fillpad", "get_block_idx", "get_block_num",
    "load", "matmul", "matmul_acc", "maximum", "memory_of", "minimum", "move", "mul", "neg",
    "recip", "relu", "reshape", "row_expand", "row_expand_add", "row_expand_div", "row_expand_mul", "row_expand_sub",
    "row_max", "row_min", "row_sum", "rsqrt", "sqrt", "store", "sub", "transpose_view",
]
