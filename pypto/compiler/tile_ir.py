"""The tile graph: what a kernel becomes once every tensor op is cut into tiles.

Data lives in GM `Buffer`s (parameters, `pypto.tensor` locals, workspaces for values that
cross a subgraph or root-function boundary) or in on-chip tiles. A `TileOp` computes one
tile: it names the tensor node it lowers (provenance: tile op -> tensor node -> source
line), the root-function `Instance` it belongs to (the kernel body, or one iteration of a
`pypto.loop`), its tile coordinates, shape (tails are smaller) and dtype, its input tile
ops, and for `load` / `store` / `matmul` the GM `Region` it reads or writes. Ops are kept
in program order, which is a topological order.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from pypto.ir.dtypes import DataType

_ID = attrgetter("id")


@dataclass(frozen=True, slots=True)
class Buffer:
    id: int
    shape: tuple[int, ...]
    dtype: DataType
    kind: str  # "param" | "local" | "workspace" | "output"
    name: str
    node: int  # the tensor node that made it


@dataclass(frozen=True, slots=True)
class Region:
    """`shape` elements at `offset` of buffer `buffer` seen with shape `layout` (a reshape)."""

    buffer: int
    layout: tuple[int, ...]
    offset: tuple[int, ...]
    shape: tuple[int, ...]

    def sub(self, offset: tuple[int, ...], shape: tuple[int, ...]) -> Region:
        return Region(self.buffer, self.layout, tuple(a + b for a, b in zip(self.offset, offset)), shape)

    @property
    def whole(self) -> bool:
        return self.shape == self.layout and not any(self.offset)


@dataclass(frozen=True, slots=True)
class TileOp:
    id: int
    op: str  # load | store | fill | arange | combine | matmul | a tensor op name (add, exp, amax …)
    node: int  # the tensor node this tile op lowers
    instance: int
    coord: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: DataType
    inputs: tuple[int, ...] = ()
    region: Region | None = None
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Instance:
    """One run of a root function: the kernel body (root -1) or one loop iteration."""

    id: int
    root: int  # loop node id, -1 for the kernel body
    index: tuple[tuple[str, int], ...]  # loop index values in force


@dataclass(frozen=True)
class TileGraph:
    buffers: tuple[Buffer, ...]
    ops: tuple[TileOp, ...]
    instances: tuple[Instance, ...]
    outputs: tuple[tuple[str, Region], ...]  # kernel output name -> where it is (a whole buffer, maybe reshaped)

    def count(self, op: str) -> int:
        return sum(1 for o in self.ops if o.op == op)


@dataclass(frozen=True, slots=True)
class Subgraph:
    """Tile ops that run together as one task on one core (graph partition's unit)."""

    id: int
    core: str  # "AIV" (vector) | "AIC" (cube) | "MIX" (a PyPTO 3 scope with both: one AIC + two AIVs)
    instance: int
    ops: tuple[int, ...]  # tile op ids, in execution order
    peak_bytes: int  # on-chip bytes at the busiest point (UB for AIV, L1 for AIC)
    leaf: int = -1  # the leaf function it instantiates (set by leaf dedup)


@dataclass(frozen=True, slots=True)
class Leaf:
    """A leaf function: isomorphic subgraphs merged by structural hash."""

    id: int
    hash: str
    core: str
    template: int  # the subgraph whose ops are this leaf's body
    count: int  # how many subgraphs (tasks) instantiate it
    nodes: tuple[int, ...]  # the tensor nodes it lowers (provenance)


@dataclass(frozen=True, slots=True)
class CopyFacts:
    """What graph partition knows of the tile graph it returns, for the execute stage (which would
    otherwise scan every op again): the buffers seen through more than one layout and the buffers
    some op writes, both of the graph before copy insertion, and the first of the workspace buffers
    copy insertion added (`xfer…`, ids from `first_xfer` on). Each of those is one tile: written
    once, whole, by one store, then only read, whole, by loads after it (the same `Region`). `depends`: each
    subgraph's dependencies through the other buffers' accesses (by subgraph id; none: no entry), what the
    execute stage would find by filing them in program order, when partition filed them in that order (else
    None: the execute stage finds them itself)."""

    reshaped: frozenset[int]
    written: frozenset[int]
    first_xfer: int
    depends: Mapping[int, Set[int]] | None = None


# facts derived from a tile graph, kept while it lives: by identity, so a graph made otherwise (by
# `dataclasses.replace`, read back from JSON) never carries another graph's. Not part of its value.
_DERIVED: dict[int, tuple[weakref.ref[TileGraph], dict[str, Any]]] = {}


def _derived(tiles: TileGraph) -> dict[str, Any]:
    key = id(tiles)
    hit = _DERIVED.get(key)
    if hit is not None and hit[0]() is tiles:
        return hit[1]
    facts: dict[str, Any] = {}
    _DERIVED[key] = (weakref.ref(tiles, lambda _ref, key=key: _DERIVED.pop(key, None)), facts)  # type: ignore[misc]
    return facts


def ops_by_id(tiles: TileGraph) -> dict[int, TileOp]:
    """`{o.id: o for o in tiles.ops}`, made once per tile graph (leaf functions, the block and
    execute stages and the listings each read it: 11 ms at 200k tile ops). Read only."""
    facts = _derived(tiles)
    by_id = facts.get("by_id")
    if by_id is None:
        by_id = facts["by_id"] = dict(zip(map(_ID, tiles.ops), tiles.ops))
    return by_id


def forget_ops_by_id(tiles: TileGraph) -> None:
    """Drop `ops_by_id(tiles)` (the compile's end: a program kept for long need not keep it, ~12 MB at
    200k tile ops; a later reader makes it again)."""
    hit = _DERIVED.get(id(tiles))
    if hit is not None and hit[0]() is tiles:
        hit[1].pop("by_id", None)


def forget_depends(tiles: TileGraph) -> None:
    """Drop the subgraphs' dependencies graph partition noted (`CopyFacts.depends`) once the execute stage read
    them (the compile's end: 10^6 arrows at Kimi's size); a later execute stage finds them itself."""
    facts = copy_facts(tiles)
    if facts is not None and facts.depends is not None:
        _derived(tiles)["copies"] = dataclasses.replace(facts, depends=None)


def copy_facts(tiles: TileGraph) -> CopyFacts | None:
    """What graph partition noted of `tiles` when it made them (None: it did not make this object)."""
    hit = _DERIVED.get(id(tiles))
    return hit[1].get("copies") if hit is not None and hit[0]() is tiles else None


def note_copy_facts(tiles: TileGraph, facts: CopyFacts) -> None:
    _derived(tiles)["copies"] = facts
