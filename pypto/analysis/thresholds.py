"""Every threshold the health report uses, in one documented place.

A health rule compares a number it measured with one of these figures; the finding it
makes carries both (`Finding.numbers`), so a reader always sees which figure fired and
can tune it here (or pass another `Thresholds` to `health_report`). Hardware figures
(core counts, buffer sizes, the AICPU scheduler's costs) are not thresholds: they come from
the board file (`pypto/target/a2a3.json`); a threshold is a judgement about how much waste
is worth a warning.

| rule id                   | sev.  | threshold (field = default)         | why it matters                            |
|---------------------------|-------|-------------------------------------|-------------------------------------------|
| `tensor.high-fan-out`     | info  | `fan_out = 8` reading ops           | each reading op loads a GM tensor again   |
| `tile.tail-waste`         | warn  | `tail_waste = 0.10` of grid capacity| tail tiles: fixed costs, extra leaves     |
|   (its edit)              |       | `fix_scale = 2.0`: new size in      | a fix keeps the tile about as big, and a  |
|                           |       | [t/2, 2t]; growth keeps             | larger tile still fits the buffer         |
|                           |       | `buffer_peak` of the buffer         |                                           |
| `tile.last-dim-unaligned` | warn  | `unaligned_waste = 0.05` padded     | rows padded to 32 B blocks to move, whole |
|                           |       | share of the affected tiles' bytes  | 256 B repeats per row to compute          |
| `tile.buffer-peak`        | warn  | any leaf whose loads could not be   | MTE2 and V take turns                     |
|                           |       | double-buffered                     |                                           |
|                           | info  | `buffer_peak = 0.90` of a memory    | nearly full: larger tiles would spill     |
|                           | error | over capacity                       | cannot be allocated                       |
| `tile.redundant-copy`     | warn  | `redundant_copy_bytes = 0` (any)    | clone of an immutable tile, or a tile     |
|                           |       |                                     | stored to GM and loaded back unchanged    |
| `tile.duplicate-load`     | info  | `duplicate_loads = 1` extra load    | a task loads one GM region twice          |
| `execute.low-parallelism` | warn  | max width < `parallelism = 1.0` x   | cores without a task idle                 |
|                           |       | the cores of the type               |                                           |
| `execute.heterogeneous`   | warn  | leaves / tasks > `heterogeneity =   | each leaf is its own instruction stream;  |
|                           |       | 0.25`, with tasks >=                | many leaves for few tasks = tails         |
|                           |       | `heterogeneity_min_tasks = 8`       |                                           |
| `execute.small-tasks`     | warn  | avg task cycles < `small_task = 1.0`| the AICPU scheduler cannot keep the cores |
|                           |       | x cores x per-task AICPU cycles /   | busy with shorter tasks                   |
|                           |       | scheduler threads (board file)      |                                           |
| `block.spills`            | error | spills > `spills = 0` (warning when | live tiles stored to GM and loaded back:  |
|                           |       | the tile cannot shrink)             | the tiles do not fit the buffer           |
| `block.schedule-gap`      | warn  | scheduled >= `schedule_gap = 2.0` x | the pipes wait on each other (latency,    |
|                           |       | (the busiest pipe's cycles + one GM | flags, single buffering) beyond the one   |
|                           |       | read's and one write's latency)     | round trip no task avoids                 |
| `block.pipe-bound`        | info  | scheduled <= `pipe_bound = 1.25` x  | the busiest pipe is the limit: reduce its |
|                           |       | the busiest pipe's cycles           | work                                      |
|   (block rules)           |       | leaves under `min_leaf_share =      | not worth a finding                       |
|                           |       | 0.05` of all task cycles are skipped|                                           |
| `board.low-utilization`   | warn  | utilization < `utilization = 0.50`  | less than half the cores' time does work  |
| `board.scheduler-bound`   | warn  | idle-with-ready-task share of lane  | the scheduler dispatches slower than the  |
|                           |       | time >= `scheduler_bubble = 0.30`   | cores finish                              |
| `board.dependency-bound`  | warn  | critical path >= `critical_path =   | tasks wait on each other: more cores      |
|                           |       | 0.80` of the makespan, >=           | would not help (a producer and its one    |
|                           |       | `critical_path_tasks = 3` tasks     | consumer is every kernel's least chain)   |
| `board.stitching`         | warn  | >1 device task, <= 300k tasks, and  | device tasks run one after another; a     |
|                           |       | the graph with every root function  | deeper stitch overlaps them (a figure the |
|                           |       | in one device task simulates >= 5 % | sim board ran, not a rule of thumb)       |
|                           |       | faster (`STITCH_GAIN`)              |                                           |
| `board.bound`             | info  | none (always, with a board run)     | what limits the run                       |

A warning that proposes tile shapes claims waste a tile shape wins back; the sim board checks
that claim (`pypto.analysis.advice.verify_advice`). When every shape it proposes is slower, the
finding stays, as `info`, with the figure that ruled its shape out (`numbers["refuted"]`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    """The figures the health rules compare with (see the module docstring for the table)."""

    fan_out: int = 8
    tail_waste: float = 0.10
    fix_scale: float = 2.0
    unaligned_waste: float = 0.05
    buffer_peak: float = 0.90
    redundant_copy_bytes: int = 0
    duplicate_loads: int = 1
    parallelism: float = 1.0
    heterogeneity: float = 0.25
    heterogeneity_min_tasks: int = 8
    small_task: float = 1.0
    spills: int = 0
    schedule_gap: float = 2.0
    pipe_bound: float = 1.25
    min_leaf_share: float = 0.05
    utilization: float = 0.50
    scheduler_bubble: float = 0.30
    critical_path: float = 0.80
    critical_path_tasks: int = 3

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


THRESHOLDS = Thresholds()
