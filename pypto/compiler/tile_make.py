"""Construction of tile IR objects: the tile stages make 10^5-10^6 tile ops and regions.

`TileOp`, `Region` and `Buffer` are plain classes with slots (`tile_ir`), native classes when the
compiler is built (`pypto.native`): these are their constructors under the names the stages call,
and `sub`, a region inside another.
"""

from __future__ import annotations

from typing import Any

from pypto.compiler.tile_ir import Buffer, Region, TileOp
from pypto.ir.dtypes import DataType


def tile_op(tid: int, op: str, node: int, instance: int, coord: tuple[int, ...], shape: tuple[int, ...],
            dtype: DataType, inputs: tuple[int, ...] = (), region: Region | None = None,
            attrs: dict[str, Any] | None = None) -> TileOp:
    """`TileOp(...)`; `attrs` None is a fresh empty dict."""
    return TileOp(tid, op, node, instance, coord, shape, dtype, inputs, region, attrs)


def region(buffer: int, layout: tuple[int, ...], offset: tuple[int, ...], shape: tuple[int, ...]) -> Region:
    return Region(buffer, layout, offset, shape)


def buffer(bid: int, shape: tuple[int, ...], dtype: DataType, kind: str, name: str, node: int) -> Buffer:
    return Buffer(bid, shape, dtype, kind, name, node)


def sub(r: Region, offset: tuple[int, ...], shape: tuple[int, ...]) -> Region:
    """`r.sub(offset, shape)`, the common rank inline."""
    base = r.offset
    if len(base) == 2 == len(offset):
        at: tuple[int, ...] = (base[0] + offset[0], base[1] + offset[1])
    else:
        at = tuple([a + b for a, b in zip(base, offset)])
    return Region(r.buffer, r.layout, at, shape)
