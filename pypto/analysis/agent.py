"""What an agent reads about one compile and run: small JSON, every figure beside its source line.

The panels read the whole CompileRecord (megabytes for a big kernel); an agent driving the optimize
loop through MCP (`server.mcp`) needs the few figures a tuner reads first, each pointing at the line to
edit. `agent_view(record)` makes them from a profiled record, in the worker that compiled it:

- `compile`: the pass table (stage, name, changed, nodes, ms), the counts (tensor nodes, tile ops,
  leaves, tasks) and every pass diagnostic that is a warning or an error, with its `file:line`;
- `profile`: makespan, utilization per core type, the bound, the critical path as source lines
  (consecutive repeats folded) and the slowest tasks with their lines (`pypto.record.slowest`);
- `swimlane_text` (when asked): `pypto.boards.trace.text_trace`, the one per-lane text trace that
  `pypto-ide profile --text` prints and serve's `trace.txt` sends, with its size bound.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pypto.boards.profile import bottleneck
from pypto.boards.swimlane import metrics
from pypto.boards.trace import TEXT_TRACE_MAX_CHARS, text_trace
from pypto.record import CompileRecord, slowest

CRITICAL_LINES = 24  # source lines of the critical path kept (then "…")


def _where(file: str, line: int) -> str:
    return f"{os.path.basename(file)}:{line}"


def compile_view(record: CompileRecord) -> dict[str, Any]:
    """The pass table, the counts and the passes' warnings and errors with their lines."""
    passes, warnings = [], []
    for p in record.passes:
        passes.append({"index": p.index, "stage": p.stage, "pass": p.name, "changed": bool(p.changed),
                       "nodes": p.node_count, "ms": round(p.seconds * 1000, 3), "diagnostics": len(p.diagnostics),
                       **({"error": str(p.error)} if p.error else {})})
        for d in p.diagnostics:
            if d.severity not in ("warning", "error"):
                continue
            span = d.loc.span
            warnings.append({"severity": d.severity, "message": d.message, "rule": d.rule, "pass": p.name,
                             "line": span.line if span is not None else None,
                             "where": _where(span.file, span.line) if span is not None else None})
    prog = record.program
    tensor = [p for p in record.passes if p.stage == "tensor"]
    counts = {"tensor_nodes": tensor[-1].node_count if tensor else None,
              "tile_ops": len(prog.tiles.ops) if prog.tiles is not None else 0,
              "leaves": len(prog.leaves or ()),
              "tasks": len(prog.execute.tasks) if prog.execute is not None else 0}
    return {"passes": passes, "counts": counts, "warnings": warnings}


def profile_view(record: CompileRecord, top: int = 5) -> dict[str, Any]:
    """Makespan, utilization per core type, the bound, the critical path's lines, the slowest tasks."""
    sl = record.run
    assert sl is not None, "profile the record first (pypto.record.profile)"
    m = metrics(sl)
    bound, why = bottleneck(sl)
    crit: list[str] = []
    has_tasks = record.program.execute is not None
    for t in m.critical_path:
        if not has_tasks or t >= len(record.program.execute.tasks):  # type: ignore[union-attr]
            continue
        for s in record.source_of_task(t)[:1]:
            w = _where(s.file, s.line)
            if not crit or crit[-1] != w:
                crit.append(w)
    slow = [{"task": t.id, "lane": sl.lanes[t.lane].name, "leaf": t.leaf, "duration_us": round(t.duration, 4),
             "start_us": round(t.start, 4), "lines": where.split(", ") if where else []}
            for t, where in slowest(record, sl, top)]
    return {"board": sl.board, "clock": sl.clock, "makespan_us": m.makespan, "tasks": len(sl.tasks),
            "utilization": round(m.utilization, 4),
            "utilization_per_core_type": {c: round(u, 4) for c, u in m.core_utilization.items()},
            "bound": bound, "why": why, "critical_path_us": m.critical_path_us,
            "critical_share": round(m.critical_share, 4), "critical_path_tasks": len(m.critical_path),
            "critical_path_lines": crit[:CRITICAL_LINES] + (["…"] if len(crit) > CRITICAL_LINES else []),
            "slowest_tasks": slow}


def agent_view(record: CompileRecord, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`compile` and `profile` of a profiled record, and `swimlane_text` when `options["swimlane"]` is a
    mapping of `text_trace`'s `lanes`, `window`, `max_tasks_per_lane`, `max_chars`."""
    opts = dict(options or {})
    out: dict[str, Any] = {"compile": compile_view(record), "profile": profile_view(record, int(opts.get("top", 5)))}
    sw = opts.get("swimlane")
    if isinstance(sw, Mapping):
        assert record.run is not None
        window = sw.get("window")
        out["swimlane_text"] = text_trace(
            record.run, record, max_tasks_per_lane=int(sw.get("max_tasks_per_lane") or 20),
            lanes=sw.get("lanes"), window=(float(window[0]), float(window[1])) if window else None,
            max_chars=int(sw.get("max_chars") or TEXT_TRACE_MAX_CHARS))
    return out
