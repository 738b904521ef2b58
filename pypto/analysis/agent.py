"""What an agent reads about one compile and run: small JSON, every figure beside its source line.

The panels read the whole CompileRecord (megabytes for a big kernel); an agent driving the optimize
loop through MCP (`server.mcp`) needs the few figures a tuner reads first, each pointing at the line to
edit. `agent_view(record)` makes them from a profiled record, in the worker that compiled it:

- `compile`: the pass table (stage, name, changed, nodes, ms), the counts (tensor nodes, tile ops,
  leaves, tasks) and every pass diagnostic that is a warning or an error, with its `file:line`;
- `profile`: makespan, utilization per core type, the bound, the critical path as source lines
  (consecutive repeats folded) and the slowest tasks with their lines (`pypto.record.slowest`);
- `swimlane_text` (when asked): `pypto.boards.trace.text_trace`, the one per-lane text trace that
  `pypto-ide profile --text` prints and serve's `trace.txt` sends, with its size bound;
- `run`: the figures `compare` sets side by side (`run_view`): per leaf, per lane, per core type and
  on the critical path;
- `chrome_trace` (when asked): the run as Chrome Trace Event JSON (`pypto.boards.trace.chrome_trace`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pypto.boards.profile import bottleneck
from pypto.boards.swimlane import Metrics, metrics
from pypto.boards.trace import TEXT_TRACE_MAX_CHARS, chrome_trace, leaf_names, text_trace
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


def profile_view(record: CompileRecord, top: int = 5, m: Metrics | None = None) -> dict[str, Any]:
    """Makespan, utilization per core type, the bound, the critical path's lines, the slowest tasks (`m`:
    the run's metrics when already made)."""
    sl = record.run
    assert sl is not None, "profile the record first (pypto.record.profile)"
    m = metrics(sl) if m is None else m
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


def leaf_key(name: str, lines: list[str]) -> str:
    """A leaf as `compare` matches it across two runs: the first source line it runs (`softmax.py:33`), or
    its ops without one. Leaf numbers and even ops change with tile shapes (a row that fits one tile needs
    no `combine`), the user's line does not; leaves starting at the same line are one entry."""
    return lines[0] if lines else name.partition(":")[2] or name


def run_view(record: CompileRecord, m: Metrics | None = None,
             critical_lines: list[str] | None = None) -> dict[str, Any]:
    """What `compare` reads of one run: per leaf (tasks, total/avg/max µs, µs on the critical path, source
    lines), per lane and per core type (tasks, busy µs, utilization), the critical path (µs, tasks, lines).
    Leaves that start at the same source line are one entry (`leaf_key`)."""
    sl = record.run
    assert sl is not None, "profile the record first (pypto.record.profile)"
    m = metrics(sl) if m is None else m
    name_of, sources = leaf_names(record)
    first_task: dict[int, int] = {}
    for t in sl.tasks:
        first_task.setdefault(t.leaf, t.id)
    key_of: dict[int, str] = {}
    leaves: dict[str, dict[str, Any]] = {}
    for st in m.leaves:
        lines = [_where(*s.rsplit(":", 1)) for s in sources(first_task[st.leaf])[:3]] if st.leaf in first_task else []
        name = name_of(st.leaf) if st.leaf >= 0 else "unknown leaf"
        key = key_of[st.leaf] = leaf_key(name, lines)
        e = leaves.setdefault(key, {"leaf": key, "leaves": [], "lines": lines, "tasks": 0, "total_us": 0.0,
                                    "max_us": 0.0, "critical_us": 0.0})
        e["leaves"].append(name)
        e["tasks"] += st.count
        e["total_us"] += st.total
        e["max_us"] = max(e["max_us"], st.max)
    by_id = {t.id: t for t in sl.tasks}
    for tid in m.critical_path:
        t = by_id.get(tid)
        if t is not None and t.leaf in key_of:
            leaves[key_of[t.leaf]]["critical_us"] += t.duration
    busy = [0.0] * len(sl.lanes)
    count = [0] * len(sl.lanes)
    for t in sl.tasks:
        busy[t.lane] += t.duration
        count[t.lane] += 1
        for h in t.held:  # a MIX task keeps its cluster's AIV lanes too
            busy[h] += t.duration
            count[h] += 1
    lanes = [{"lane": ln.name, "core": ln.core, "tasks": count[i], "busy_us": busy[i],
              "utilization": m.lane_utilization[i] if i < len(m.lane_utilization) else 0.0}
             for i, ln in enumerate(sl.lanes)]
    cores: dict[str, dict[str, Any]] = {}
    for ln in lanes:
        c = cores.setdefault(ln["core"], {"lanes": 0, "tasks": 0, "busy_us": 0.0})
        c["lanes"] += 1
        c["tasks"] += ln["tasks"]
        c["busy_us"] += ln["busy_us"]
    for core, u in m.core_utilization.items():
        if core in cores:
            cores[core]["utilization"] = u
    crit = profile_view(record, 1, m)["critical_path_lines"] if critical_lines is None else critical_lines
    return {"makespan_us": m.makespan, "tasks": len(sl.tasks), "utilization": m.utilization,
            "leaves": [{**e, "avg_us": e["total_us"] / e["tasks"] if e["tasks"] else 0.0} for e in leaves.values()],
            "lanes": lanes, "core_types": cores,
            "critical_path": {"us": m.critical_path_us, "tasks": len(m.critical_path), "share": m.critical_share,
                              "lines": crit}}


def agent_view(record: CompileRecord, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`compile`, `profile` and `run` of a profiled record; `swimlane_text` when `options["swimlane"]` is a
    mapping of `text_trace`'s `lanes`, `window`, `max_tasks_per_lane`, `max_chars`; `chrome_trace` when
    `options["chrome"]`."""
    opts = dict(options or {})
    assert record.run is not None, "profile the record first (pypto.record.profile)"
    m = metrics(record.run)
    prof = profile_view(record, int(opts.get("top", 5)), m)
    out: dict[str, Any] = {"compile": compile_view(record), "profile": prof,
                           "run": run_view(record, m, prof["critical_path_lines"])}
    if opts.get("chrome"):
        assert record.run is not None
        out["chrome_trace"] = chrome_trace(record.run, record)
    sw = opts.get("swimlane")
    if isinstance(sw, Mapping):
        assert record.run is not None
        window = sw.get("window")
        out["swimlane_text"] = text_trace(
            record.run, record, max_tasks_per_lane=int(sw.get("max_tasks_per_lane") or 20),
            lanes=sw.get("lanes"), window=(float(window[0]), float(window[1])) if window else None,
            max_chars=int(sw.get("max_chars") or TEXT_TRACE_MAX_CHARS))
    return out
