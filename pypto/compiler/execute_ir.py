"""The execute stage's data: the tasks the runtime schedules and what each waits for.

A `Task` is one leaf function run at one tile coordinate (one subgraph), with the GM regions
it reads and writes and its predecessors; the `ExecGraph` holds them in a topological order.
`execute.py` builds it; the `Program`, the boards and the record read it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pypto.compiler.tile_ir import Region


@dataclass(frozen=True, slots=True)
class Task:
    id: int
    subgraph: int
    leaf: int
    core: str
    instance: int
    root: int  # loop node id of its root function, -1 for the kernel body
    coord: tuple[int, ...]  # tile coordinates of its first compute op
    reads: tuple[Region, ...]
    writes: tuple[Region, ...]
    preds: tuple[int, ...]


@dataclass(frozen=True)
class ExecGraph:
    tasks: tuple[Task, ...]  # in a topological order
    roots: tuple[int, ...]  # root functions: -1 (kernel body) and loop node ids

    def width(self) -> int:
        """The widest level of the task DAG (tasks that could run at once)."""
        level: dict[int, int] = {}
        for t in self.tasks:
            level[t.id] = 1 + max((level[p] for p in t.preds), default=-1)
        counts: dict[int, int] = defaultdict(int)
        for v in level.values():
            counts[v] += 1
        return max(counts.values(), default=0)
