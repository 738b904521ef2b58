"""The execute stage's data: the tasks the runtime schedules and what each waits for.

A `Task` is one leaf function run at one tile coordinate (one subgraph), with the GM regions
it reads and writes and its predecessors; the `ExecGraph` holds them in a topological order.
`execute.py` builds it, with the same tasks as `ExecColumns` (arrays, GM regions interned), which
the sim board reads instead of 100k Task objects; the `Program`, the boards and the record read it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np

from pypto.compiler.tile_ir import Region, Value, mypyc_attr


class Task(Value):
    """One leaf function run at one tile coordinate (a subgraph): a `tile_ir.Value`."""

    FIELDS: ClassVar[tuple[str, ...]] = ("id", "subgraph", "leaf", "core", "instance", "root", "coord", "reads",
                                         "writes", "preds")
    __slots__ = FIELDS

    id: Final[int]
    subgraph: Final[int]
    leaf: Final[int]
    core: Final[str]
    instance: Final[int]
    root: Final[int]  # loop node id of its root function, -1 for the kernel body
    coord: Final[tuple[int, ...]]  # tile coordinates of its first compute op
    reads: Final[tuple[Region, ...]]
    writes: Final[tuple[Region, ...]]
    preds: Final[tuple[int, ...]]

    def __init__(self, id: int, subgraph: int, leaf: int, core: str, instance: int, root: int,  # noqa: A002
                 coord: tuple[int, ...], reads: tuple[Region, ...], writes: tuple[Region, ...],
                 preds: tuple[int, ...]) -> None:
        self.id = id
        self.subgraph = subgraph
        self.leaf = leaf
        self.core = core
        self.instance = instance
        self.root = root
        self.coord = coord
        self.reads = reads
        self.writes = writes
        self.preds = preds

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.subgraph, self.leaf, self.core, self.instance, self.root, self.coord, self.reads,
                self.writes, self.preds)


# `ExecColumns.core`: a task's core type as a number (-1: another); MIX: a PyPTO 3 scope's cube and
# vector work as one task on a cluster's AIC and its two AIVs together (1c2v)
CORE_CODES = {"AIC": 0, "AIV": 1, "MIX": 2}


@mypyc_attr(native_class=False)
@dataclass(frozen=True, eq=False)
class ExecColumns:
    """An execute graph's tasks as columns, task i at row i (task ids are their positions): int64
    arrays, CSR offsets (n + 1) and entries for the predecessors and for the GM regions read and
    written, the regions interned (one id per distinct (buffer, offset, shape, layout), in order of
    first access, reads before writes, with its buffer and element count), and the tasks' coords,
    predecessor tuples and instances as Python sequences (the Task objects' own). Made by
    `execute.build` with the tasks, so that a reader of every task (the sim board) need not visit
    100k objects; a graph made otherwise (`serialize.execute_from`) has none."""

    leaf: np.ndarray
    core: np.ndarray  # CORE_CODES
    instance: np.ndarray
    pred_ptr: np.ndarray
    pred_idx: np.ndarray
    rd_ptr: np.ndarray
    rd_reg: np.ndarray
    wr_ptr: np.ndarray
    wr_reg: np.ndarray
    reg_buffer: np.ndarray  # per region id: its buffer
    reg_elems: np.ndarray  # per region id: its element count (the product of its shape)
    coord: Sequence[tuple[int, ...]]
    preds: Sequence[tuple[int, ...]]
    instances: Sequence[int]


def intern_regions(regions: Iterable[Region]) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Each region's id, one per distinct (buffer, offset, shape, layout), numbered in order of first
    appearance; and per id (int64 arrays), its buffer and element count. Grouped by buffer, then
    (layout, shape) (a buffer has few), then offset: one dict lookup of an offset per region, cheaper
    than hashing a key of all four when most regions are distinct (measured: 300k regions of 2
    buffers, 200k distinct, ~0.09 s vs ~0.11 s; 114k of 20k workspace buffers, ~0.045 vs ~0.035 s)."""
    groups: dict[int, list[tuple[tuple[int, ...], tuple[int, ...], dict[tuple[int, ...], Any], int]]] = {}
    group_buffer: list[int] = []
    group_elems: list[int] = []
    group_of_id: list[int] = []  # per region id, its group
    ids: list[Any] = []  # (each id the one object the dict holds: `gm_index.Owner`'s reason)
    n = 0
    for r in regions:
        b, layout, shape = r.buffer, r.layout, r.shape
        group = groups.get(b)
        if group is None:
            group = groups[b] = []
        for g in group:
            if g[1] == shape and (g[0] is layout or g[0] == layout):
                _, _, by_offset, k = g
                break
        else:
            by_offset, k = {}, len(group_buffer)
            group.append((layout, shape, by_offset, k))
            group_buffer.append(b)
            group_elems.append(math.prod(shape))
        fresh: Any = n
        i: Any = by_offset.setdefault(r.offset, fresh)
        if i is fresh:
            n += 1
            group_of_id.append(k)
        ids.append(i)  # (not through a bound method: compiled, that is a generic call per region)
    at = np.array(group_of_id, dtype=np.int64)
    return ids, np.array(group_buffer, dtype=np.int64)[at], np.array(group_elems, dtype=np.int64)[at]


@mypyc_attr(native_class=False)  # the sim board's cache takes weak references to it
@dataclass(frozen=True)
class ExecGraph:
    tasks: tuple[Task, ...]  # in a topological order
    roots: tuple[int, ...]  # root functions: -1 (kernel body) and loop node ids
    # the tasks as columns (made by execute.build; None: a reader makes its own from `tasks`). Not part
    # of the graph's value (equality, the record); a graph with other tasks must not carry them over.
    columns: ExecColumns | None = field(default=None, compare=False, repr=False)

    def width(self) -> int:
        """The widest level of the task DAG (tasks that could run at once)."""
        level: dict[int, int] = {}
        for t in self.tasks:
            level[t.id] = 1 + max((level[p] for p in t.preds), default=-1)
        counts: dict[int, int] = defaultdict(int)
        for v in level.values():
            counts[v] += 1
        return max(counts.values(), default=0)
