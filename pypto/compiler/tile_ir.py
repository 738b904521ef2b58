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
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, ClassVar, Final

from pypto.ir.dtypes import DataType

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # mypy is a dev dependency: without it, nothing is compiled
    def mypyc_attr(*_attrs: str, **_kwargs: object) -> Any:  # type: ignore[misc]
        return lambda cls: cls

_ID = attrgetter("id")


class Value:
    """What the IR's many small values share (`Buffer`, `Region`, `TileOp`, `Subgraph`, `execute_ir.Task`): equal
    and hashed by their fields in order (`_key`: the hash the frozen dataclasses they were gave, so a set of them
    iterates as before), shown and pickled by them (`FIELDS` names them). Plain classes with slots, so that in the
    native build they are native classes, which the compiled stages read as C structs and make at ~0.08 µs; not
    frozen at run time (`Final` says it to mypy)."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join([f"{n}={v!r}" for n, v in zip(self.FIELDS, self._key())])
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._key())


class Buffer(Value):
    """A GM buffer: a parameter, a `pypto.tensor` local, a workspace or an output."""

    FIELDS: ClassVar[tuple[str, ...]] = ("id", "shape", "dtype", "kind", "name", "node")
    __slots__ = FIELDS

    id: Final[int]
    shape: Final[tuple[int, ...]]
    dtype: Final[DataType]
    kind: Final[str]  # "param" | "local" | "workspace" | "output"
    name: Final[str]
    node: Final[int]  # the tensor node that made it

    def __init__(self, id: int, shape: tuple[int, ...], dtype: DataType, kind: str, name: str,  # noqa: A002
                 node: int) -> None:
        self.id = id
        self.shape = shape
        self.dtype = dtype
        self.kind = kind
        self.name = name
        self.node = node

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.shape, self.dtype, self.kind, self.name, self.node)


class Region(Value):
    """`shape` elements at `offset` of buffer `buffer` seen with shape `layout` (a reshape)."""

    FIELDS: ClassVar[tuple[str, ...]] = ("buffer", "layout", "offset", "shape")
    __slots__ = FIELDS

    buffer: Final[int]
    layout: Final[tuple[int, ...]]
    offset: Final[tuple[int, ...]]
    shape: Final[tuple[int, ...]]

    def __init__(self, buffer: int, layout: tuple[int, ...], offset: tuple[int, ...], shape: tuple[int, ...]) -> None:
        self.buffer = buffer
        self.layout = layout
        self.offset = offset
        self.shape = shape

    def sub(self, offset: tuple[int, ...], shape: tuple[int, ...]) -> Region:
        """The region at `offset` within this one (the tile stages make 10^5-10^6: the common rank inline)."""
        base = self.offset
        if len(base) == 2 == len(offset):
            at: tuple[int, ...] = (base[0] + offset[0], base[1] + offset[1])
        else:
            at = tuple([a + b for a, b in zip(base, offset)])
        return Region(self.buffer, self.layout, at, shape)

    @property
    def whole(self) -> bool:
        return self.shape == self.layout and not any(self.offset)

    def __eq__(self, other: object) -> bool:  # field by field: regions are dict keys
        if type(other) is not Region:
            return False
        o: Region = other  # type: ignore[assignment]
        return self.buffer == o.buffer and self.layout == o.layout and self.offset == o.offset \
            and self.shape == o.shape

    def __hash__(self) -> int:
        return hash((self.buffer, self.layout, self.offset, self.shape))

    def _key(self) -> tuple[Any, ...]:
        return (self.buffer, self.layout, self.offset, self.shape)


class TileOp(Value):
    """One tile's computation (see the module doc)."""

    FIELDS: ClassVar[tuple[str, ...]] = ("id", "op", "node", "instance", "coord", "shape", "dtype", "inputs", "region",
                                         "attrs")
    __slots__ = FIELDS

    id: Final[int]
    op: Final[str]  # load | store | fill | arange | combine | matmul | a tensor op name (add, exp, amax …)
    node: Final[int]  # the tensor node this tile op lowers
    instance: Final[int]
    coord: Final[tuple[int, ...]]
    shape: Final[tuple[int, ...]]
    dtype: Final[DataType]
    inputs: Final[tuple[int, ...]]
    region: Final[Region | None]
    attrs: Final[dict[str, Any]]

    def __init__(self, id: int, op: str, node: int, instance: int, coord: tuple[int, ...],  # noqa: A002
                 shape: tuple[int, ...], dtype: DataType, inputs: tuple[int, ...] = (), region: Region | None = None,
                 attrs: dict[str, Any] | None = None) -> None:
        self.id = id
        self.op = op
        self.node = node
        self.instance = instance
        self.coord = coord
        self.shape = shape
        self.dtype = dtype
        self.inputs = inputs
        self.region = region
        self.attrs = {} if attrs is None else attrs

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.op, self.node, self.instance, self.coord, self.shape, self.dtype, self.inputs,
                self.region, self.attrs)


@mypyc_attr(native_class=False)
@dataclass(frozen=True, slots=True)
class Instance:
    """One run of a root function: the kernel body (root -1) or one loop iteration."""

    id: int
    root: int  # loop node id, -1 for the kernel body
    index: tuple[tuple[str, int], ...]  # loop index values in force


@mypyc_attr(native_class=False)
@dataclass(frozen=True)
class TileGraph:
    buffers: tuple[Buffer, ...]
    ops: tuple[TileOp, ...]
    instances: tuple[Instance, ...]
    outputs: tuple[tuple[str, Region], ...]  # kernel output name -> where it is (a whole buffer, maybe reshaped)

    def count(self, op: str) -> int:
        return sum(1 for o in self.ops if o.op == op)


class Subgraph(Value):
    """Tile ops that run together as one task on one core (graph partition's unit)."""

    FIELDS: ClassVar[tuple[str, ...]] = ("id", "core", "instance", "ops", "peak_bytes", "leaf")
    __slots__ = FIELDS

    id: Final[int]
    core: Final[str]  # "AIV" (vector) | "AIC" (cube) | "MIX" (a PyPTO 3 scope with both: one AIC + two AIVs)
    instance: Final[int]
    ops: Final[tuple[int, ...]]  # tile op ids, in execution order
    peak_bytes: Final[int]  # on-chip bytes at the busiest point (UB for AIV, L1 for AIC)
    leaf: Final[int]  # the leaf function it instantiates (set by leaf dedup)

    def __init__(self, id: int, core: str, instance: int, ops: tuple[int, ...], peak_bytes: int,  # noqa: A002
                 leaf: int = -1) -> None:
        self.id = id
        self.core = core
        self.instance = instance
        self.ops = ops
        self.peak_bytes = peak_bytes
        self.leaf = leaf

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.core, self.instance, self.ops, self.peak_bytes, self.leaf)


@mypyc_attr(native_class=False)
@dataclass(frozen=True, slots=True)
class Leaf:
    """A leaf function: isomorphic subgraphs merged by structural hash."""

    id: int
    hash: str
    core: str
    template: int  # the subgraph whose ops are this leaf's body
    count: int  # how many subgraphs (tasks) instantiate it
    nodes: tuple[int, ...]  # the tensor nodes it lowers (provenance)


@mypyc_attr(native_class=False)
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


def op_with_id(tiles: TileGraph, op_id: int) -> TileOp | None:
    """Tile op `op_id` (None for none): at its id's position, where a compile puts it, else by `ops_by_id`. For a
    reader of a few ops (a listing's, a record's per-node costs): a job's record is shared copy-on-write with a
    forked child, and an index of every op made there copied the pages of every op it read (Kimi's block attention
    after its edit: ~0.1 s)."""
    ops = tiles.ops
    if 0 <= op_id < len(ops):
        o = ops[op_id]
        if o.id == op_id:
            return o
    if op_id < 0:
        return None
    facts = _derived(tiles)
    kept: dict[int, TileOp] | None = facts.get("kept")
    if kept is not None and op_id in kept:
        return kept[op_id]
    return ops_by_id(tiles).get(op_id)


def keep_ops(tiles: TileGraph, ids: set[int]) -> None:
    """Note the ops of `ids` for `op_with_id` while the compile's index of every op is at hand (`ops_by_id`, let go
    of at the compile's end): the block instructions' ops, which a record's per-node costs and the listings read.
    After copy insertion an op's id is not its position, and glm's fused attention's job made the index again after
    it forked its findings' child, copying the pages of its 2.1 M ops (0.8 s)."""
    facts = _derived(tiles)
    by_id: dict[int, TileOp] | None = facts.get("by_id")
    if by_id is not None:  # (not made for nothing: a compile whose stages did not make it reads few ops)
        facts["kept"] = {i: by_id[i] for i in ids if i in by_id}


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


def note_execute_ahead(tiles: TileGraph, subgraphs: tuple[Subgraph, ...], graph: Any) -> None:
    """The execute graph of `tiles` in `subgraphs`, made before their leaf functions were known and given their
    leaves since (`leaf_functions` builds it beside merging them): the execute stage takes it (`take_execute_ahead`)
    instead of building it again."""
    _derived(tiles)["ahead"] = (subgraphs, graph)


def take_execute_ahead(tiles: TileGraph, subgraphs: tuple[Subgraph, ...]) -> Any:
    """The execute graph noted for `tiles` in these very `subgraphs` (the tuple `leaf_functions` made; a pass that
    made others would not get it), dropped from the note; None if there is none."""
    hit = _DERIVED.get(id(tiles))
    if hit is None or hit[0]() is not tiles:
        return None
    made = hit[1].pop("ahead", None)
    return made[1] if made is not None and made[0] is subgraphs else None


_columns_ahead: list[Any] = []  # the one pending `note_columns_ahead` (its child ended when another is noted)


def note_columns_ahead(tiles: TileGraph, later: Any) -> None:
    """The record document's columns of `tiles` (`serialize.field_document("tiles", tiles, "tiles", ...)`), coming
    (`pypto.beside.Later`: a forked child makes them while the compile goes on): the document takes them
    (`serialize.take_later`). One at a time: a note not taken is dropped (its child ended) by the next."""
    for pending in _columns_ahead:
        pending.drop()
    _columns_ahead[:] = [later]
    _derived(tiles)["columns"] = later


def columns_coming(tiles: TileGraph) -> bool:
    """Whether columns of `tiles` are noted coming (`note_columns_ahead`)."""
    hit = _DERIVED.get(id(tiles))
    return hit is not None and hit[0]() is tiles and "columns" in hit[1]


def take_columns_ahead(tiles: TileGraph) -> Any:
    """The columns noted coming for `tiles` (a `Later`), dropped from the note; None if there are none."""
    hit = _DERIVED.get(id(tiles))
    if hit is None or hit[0]() is not tiles:
        return None
    later = hit[1].pop("columns", None)
    if later is not None and later in _columns_ahead:
        _columns_ahead.remove(later)
    return later


def copy_facts(tiles: TileGraph) -> CopyFacts | None:
    """What graph partition noted of `tiles` when it made them (None: it did not make this object)."""
    hit = _DERIVED.get(id(tiles))
    return hit[1].get("copies") if hit is not None and hit[0]() is tiles else None


def note_copy_facts(tiles: TileGraph, facts: CopyFacts) -> None:
    _derived(tiles)["copies"] = facts
