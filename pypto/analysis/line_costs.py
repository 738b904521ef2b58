"""Cost per source line on the sim board's core model, as a profiler's source view shows it.

Every instruction of a leaf function comes from a tile op, which comes from a tensor node, which
comes from source lines (the line that made it and the helper calls around it). This module adds
up each working instruction's pipe cycles (uncontended, GM reads missing L2: the record's
`instruction_costs`, from the core model and the board file) times the tasks that run the leaf,
per source line and per pipe, and keeps the line's heaviest instructions. So lines fused into one
leaf still get their own share: the softmax's `exp` line and its `sum` line are told apart.

A line's figure is inclusive: an instruction counts for the line that made it and for every
helper call on the way to it. Shares are of all instructions' cycles, each counted once. The
figures are the model's (simulated), whatever board profiled the run: the cpu board measures
whole tasks, not instructions, and the callers say so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pypto.record import CompileRecord


@dataclass
class LineCost:
    """One source line's share of the program's instruction cycles."""

    file: str
    line: int
    pipes: dict[str, float] = field(default_factory=dict)  # pipe -> cycles over all tasks
    opcodes: Counter[str] = field(default_factory=Counter)  # opcode -> cycles over all tasks
    share: float = 0.0  # of all instructions' cycles

    @property
    def cycles(self) -> float:
        return sum(self.pipes.values())

    def to_json(self) -> dict[str, Any]:
        return {"cycles": self.cycles, "share": self.share, "pipes": dict(self.pipes),
                "opcodes": [[op, c] for op, c in self.opcodes.most_common(3)]}


def line_costs(record: CompileRecord) -> dict[tuple[str, int], LineCost]:
    """Per (file, line): the instruction cycles of the program attributed to it (module doc),
    from `CompileRecord.instruction_costs`; empty when the record was not compiled through the
    block stage."""
    lines_of: dict[int, list[tuple[str, int]]] = {}
    out: dict[tuple[str, int], LineCost] = {}
    total = 0.0
    for node, pipe, opcode, c in record.instruction_costs:
        total += c
        if node is None:
            continue
        keys = lines_of.get(node)
        if keys is None:
            keys = lines_of[node] = list(dict.fromkeys((s.file, s.line) for s in record.source_of(node)))
        for key in keys:
            lc = out.get(key)
            if lc is None:
                lc = out[key] = LineCost(key[0], key[1])
            lc.pipes[pipe] = lc.pipes.get(pipe, 0.0) + c
            lc.opcodes[opcode] += c  # type: ignore[assignment]
    for lc in out.values():
        lc.share = lc.cycles / total if total else 0.0
    return out
