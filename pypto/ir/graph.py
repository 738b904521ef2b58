"""The tensor graph: one immutable `Node` type and the `Graph` that orders nodes.

The graph is pure SSA. Writing into a tensor (`out[i:] = e`, `assemble`, `move`) makes a
new value of it (`assemble(dst, src)`), so every node is a function of its inputs. A
`pypto.loop` is one `loop` node whose `body` is a nested `Graph` (its own root function):
the body starts with `carry` nodes (the tensors written in the loop, as they are at the
start of an iteration), may read any value of enclosing graphs directly, and its
`outputs` are the carried tensors at the end of an iteration. `loop_out` nodes after
the loop give the carried tensors' final values. Node ids are unique across a kernel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.source import UNKNOWN, Loc
from pypto.ir.symbolic import Dim, SymExpr, reads_of, to_str


@dataclass(frozen=True, slots=True)
class TensorType:
    shape: tuple[Dim, ...]
    dtype: DataType

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"{self.dtype.short}[{', '.join(to_str(d) for d in self.shape)}]"


@dataclass(frozen=True, slots=True)
class TileConfig:
    """One `set_vec_tile_shapes` / `set_cube_tile_shapes` call (or an options default)."""

    id: int
    kind: str  # "vec" | "cube"
    dims: tuple[Any, ...]  # vec: ints; cube: (m, k, n, enable_split_k) with m/k/n tuples
    loc: Loc = UNKNOWN


@dataclass(frozen=True, eq=True)
class Node:
    """One operation. `type` is None for nodes that make no tensor (`loop`, `assume`)."""

    id: int
    op: str
    inputs: tuple[int, ...]
    type: TensorType | None
    attrs: dict[str, Any] = field(default_factory=dict)  # never mutated; values are hashable
    loc: Loc = UNKNOWN
    name: str | None = None  # the user's name for the tensor, when known
    label: str | None = None  # pypto.set_semantic_label in force
    tile: int | None = None  # TileConfig id in force (vec for vector ops, cube for matmul)
    body: Graph | None = None  # loop bodies
    origin: tuple[int, ...] = ()  # provenance: ids of the nodes a pass made this one from
    made_by: str | None = None  # provenance: the pass that made it (None: the frontend)
    # the `pl.at` scope it was traced in (one per `with` entry; None outside one, and in every CANN
    # kernel): graph partition makes all tile ops of one scope instance one task
    scope: int | None = None

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)


@dataclass(frozen=True, eq=True)
class Graph:
    name: str
    nodes: tuple[Node, ...]
    outputs: tuple[tuple[str, int], ...]  # (name, node id): kernel outputs, or a body's carried values
    tile_configs: tuple[TileConfig, ...] = ()

    def walk(self) -> Iterator[Node]:
        """Every node, loop bodies included, in program order."""
        for n in self.nodes:
            yield n
            if n.body is not None:
                yield from n.body.walk()

    def by_id(self) -> dict[int, Node]:
        return {n.id: n for n in self.walk()}

    def max_id(self) -> int:
        return max((n.id for n in self.walk()), default=-1)

    def params(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "param"]

    def __len__(self) -> int:
        return sum(1 for _ in self.walk())


def scalar_reads(graph: Graph) -> frozenset[str]:
    """The kernel inputs whose elements the program reads as scalars at run time (`seq_lens[b]`
    in a loop bound, an offset, a shape): the callers bind those elements (`read_bindings`)."""
    out: set[str] = set()

    def scan(v: Any) -> None:
        if isinstance(v, SymExpr):
            out.update(reads_of(v))
        elif isinstance(v, (tuple, list)):
            for x in v:
                scan(x)

    for n in graph.walk():
        for v in n.attrs.values():
            scan(v)
        if n.type is not None:
            scan(n.type.shape)
    return frozenset(out)
