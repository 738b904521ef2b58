"""The health report: what a compiled (and profiled) kernel wastes, level by level, and where.

A CompileRecord already holds every level PyPTO reports on — the tensor graph, the tile
graph with its subgraphs and leaf functions, each leaf's instruction list (block), the
execute graph, and, after `pypto.record.profile`, a swimlane. `health_report(record)`
reads them once and returns

- `stats`: the numbers per level ("tensor", "tile", "execute", "block", "board"), always
  present, whether or not a rule fires (board only with a run);
- `findings`: `Finding`s (rule id, severity, the numbers with the threshold, a short why,
  the source span it belongs to and a concrete suggestion; a mechanical fix as `TextEdit`s),
  sorted by severity, then line.

Rules and their thresholds are tabled in `pypto/analysis/thresholds.py`. A finding about a
tile shape points at its `set_vec_tile_shapes` / `set_cube_tile_shapes` call; one about an
op at the op's line in the kernel's file; a kernel-wide one at the tile-shape call that
covers most tasks (else the `def` line). Columns in `Where` are character offsets into the
line (Python's own positions are UTF-8 byte offsets; they are converted when the file can be
read), so an edit applies to the file's text as a `str`.

Cost: a few linear passes over the tile ops (a 200k-op record reports in a fraction of a
second), the core model once per leaf function, and the swimlane metrics once.

The modules, in the order a report runs them: `context.py` (the state the levels share, where
things are in the source, `RULES`), `tile_shapes.py` (smaller, larger or tail-free tile-shape
calls to suggest), one module per level (`tensor.py`; `tile.py` for the tile level's numbers and
`tile_rules.py` for its rules; `execute.py`; `block.py`; `board.py`) and `assemble.py` (the run
order and the `HealthReport`). This package's namespace keeps what the rest of PyPTO imports.
"""

from __future__ import annotations

from pypto.analysis.health.assemble import HealthReport, health_report, sorted_findings
from pypto.analysis.health.context import LEVEL_NAMES, RULES

__all__ = ["LEVEL_NAMES", "RULES", "HealthReport", "health_report", "sorted_findings"]
