"""Fast construction of tile IR objects: the tile stages make 10^5-10^6 tile ops and regions.

A frozen dataclass's __init__ (one object.__setattr__ per field) costs four times what these do.
Each fills the slots of an object of a twin class (same slots, in the same order, so the same
layout, but plain attributes: a store each), then makes it the frozen class (`__class__`
assignment, which CPython allows between classes of one layout): the very same objects (equal,
same class, every field set). The field lists are checked here, so a field added to TileOp,
Region or Buffer fails at import.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.compiler.tile_ir import Buffer, Region, TileOp
from pypto.ir.dtypes import DataType

_new = object.__new__


def _twin(cls: type, names: tuple[str, ...]) -> type:
    """A plain class with `cls`'s slots, whose objects may become `cls` objects once filled."""
    fields = tuple(f.name for f in dataclasses.fields(cls))
    if fields != names or tuple(getattr(cls, "__slots__", ())) != names:
        raise AssertionError(f"{cls.__name__} has fields {fields}; update pypto.compiler.tile_make")
    twin = type(f"_{cls.__name__}Fill", (), {"__slots__": names})
    probe: Any = _new(twin)
    for n in names:
        setattr(probe, n, None)
    probe.__class__ = cls  # raises here, at import, if the layouts ever differ
    return twin


# the twin classes, for a loop that builds these objects inline (`pypto.compiler.stamp`)
OP_FILL = _twin(TileOp, ("id", "op", "node", "instance", "coord", "shape", "dtype", "inputs", "region", "attrs"))
REGION_FILL = _twin(Region, ("buffer", "layout", "offset", "shape"))
BUFFER_FILL = _twin(Buffer, ("id", "shape", "dtype", "kind", "name", "node"))


def tile_op(tid: int, op: str, node: int, instance: int, coord: tuple[int, ...], shape: tuple[int, ...],
            dtype: DataType, inputs: tuple[int, ...] = (), region: Region | None = None,
            attrs: dict[str, Any] | None = None, _fill: type = OP_FILL, _cls: type = TileOp) -> TileOp:
    """`TileOp(...)`, built at a quarter of the cost (see above); `attrs` None is a fresh empty dict."""
    o: Any = _new(_fill)
    o.id = tid
    o.op = op
    o.node = node
    o.instance = instance
    o.coord = coord
    o.shape = shape
    o.dtype = dtype
    o.inputs = inputs
    o.region = region
    o.attrs = {} if attrs is None else attrs
    o.__class__ = _cls
    return o  # type: ignore[no-any-return]


def region(buffer: int, layout: tuple[int, ...], offset: tuple[int, ...], shape: tuple[int, ...],
           _fill: type = REGION_FILL, _cls: type = Region) -> Region:
    """`Region(...)`, built at a quarter of the cost (see above)."""
    r: Any = _new(_fill)
    r.buffer = buffer
    r.layout = layout
    r.offset = offset
    r.shape = shape
    r.__class__ = _cls
    return r  # type: ignore[no-any-return]


def buffer(bid: int, shape: tuple[int, ...], dtype: DataType, kind: str, name: str, node: int,
           _fill: type = BUFFER_FILL, _cls: type = Buffer) -> Buffer:
    """`Buffer(...)`, built at a quarter of the cost (copy insertion makes one per tile that crosses
    subgraphs)."""
    b: Any = _new(_fill)
    b.id = bid
    b.shape = shape
    b.dtype = dtype
    b.kind = kind
    b.name = name
    b.node = node
    b.__class__ = _cls
    return b  # type: ignore[no-any-return]


def sub(r: Region, offset: tuple[int, ...], shape: tuple[int, ...]) -> Region:
    """`r.sub(offset, shape)`, built at half the cost."""
    base = r.offset
    if len(base) == 2 == len(offset):
        at: tuple[int, ...] = (base[0] + offset[0], base[1] + offset[1])
    else:
        at = tuple(a + b for a, b in zip(base, offset))
    return region(r.buffer, r.layout, at, shape)
