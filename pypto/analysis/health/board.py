"""The board level: the profiled run's swimlane (makespan, utilization, scheduler and dependency
bubbles, the critical path, busy time per pipe, what bounds it) and its rules: idle cores
(`board.low-utilization`), a scheduler slower than the cores (`board.scheduler-bound`), a chain of
dependent tasks (`board.dependency-bound`) and, always, what bounds the run (`board.bound`).
"""

from __future__ import annotations

import math
from collections import Counter

from pypto.analysis.health.block import PIPE_ADVICE
from pypto.analysis.health.context import MAX_LINES, HealthContext, pct, rounded
from pypto.analysis.health.tile_shapes import grown, shrunk
from pypto.boards.profile import bottleneck, pipe_busy
from pypto.boards.swimlane import lanes_ran, metrics, tasks_per_core


def board_level(h: HealthContext) -> None:
    """The run's stats (`h.stats["board"]`) and its findings (needs `h.record.run`)."""
    sl = h.record.run
    assert sl is not None
    m = metrics(sl)
    bound, why = bottleneck(sl)
    lanes_used = {sl.lanes[i].core for i in lanes_ran(sl)}
    n_lanes = sum(1 for ln in sl.lanes if ln.core in lanes_used)
    lane_time = m.makespan * n_lanes
    sched_share = m.wait_scheduler / lane_time if lane_time else 0.0
    dep_share = m.wait_dependency / lane_time if lane_time else 0.0
    busy = pipe_busy(sl)
    h.stats["board"] = {
        "board": sl.board, "clock": sl.clock, "tasks": len(sl.tasks), "lanes": n_lanes,
        "makespan_us": rounded(m.makespan), "busy_us": rounded(m.busy), "utilization": rounded(m.utilization),
        "core_utilization": {k: rounded(v) for k, v in m.core_utilization.items()},
        "wait_dependency_us": rounded(m.wait_dependency), "wait_scheduler_us": rounded(m.wait_scheduler),
        "dependency_bubble_share": rounded(dep_share), "scheduler_bubble_share": rounded(sched_share),
        "critical_path_tasks": len(m.critical_path), "critical_path_us": rounded(m.critical_path_us),
        "critical_share": rounded(m.critical_share), "bound": bound, "bound_why": why,
        "pipe_busy_us": {p: rounded(v) for p, v in sorted(busy.items(), key=lambda kv: -kv[1])},
    }
    if not sl.tasks:
        return
    where = h.main_where()
    avg_us = m.busy / len(sl.tasks)
    if m.utilization < h.th.utilization:
        h.add("board.low-utilization", "warning",
              f"cores busy {pct(m.utilization)} of the {m.makespan:,.2f} µs makespan [{sl.clock}]",
              f"Bound by {bound}: {why}.",
              _utilization_advice(h, bound), where,
              {"utilization": rounded(m.utilization),
               "core_utilization": {k: rounded(v) for k, v in m.core_utilization.items()},
               "makespan_us": rounded(m.makespan), "lanes": n_lanes, "bound": bound,
               "threshold": h.th.utilization})
    if sched_share >= h.th.scheduler_bubble:
        cid = h.main_config()
        bigger = grown(h, cid)
        tc = h.configs.get(cid) if cid is not None else None
        h.add("board.scheduler-bound", "warning",
              f"cores sat idle with ready tasks {pct(sched_share)} of the time ({m.wait_scheduler:,.1f} "
              f"lane-µs); tasks average {avg_us:,.2f} µs [{sl.clock}]",
              "The AICPU scheduler hands out one task at a time per thread; with short tasks the cores "
              "finish faster than it dispatches.",
              (f"use {h.propose(tc, bigger)}: about half the tasks, each twice as long"
               if bigger is not None and tc is not None else "give each task more work (larger tiles)"),
              where, {"scheduler_bubble_share": rounded(sched_share), "wait_scheduler_us": rounded(m.wait_scheduler),
                      "avg_task_us": rounded(avg_us), "tasks": len(sl.tasks),
                      "threshold": h.th.scheduler_bubble})
    if m.critical_share >= h.th.critical_path and len(m.critical_path) >= h.th.critical_path_tasks:
        lines: Counter[int] = Counter()
        for tid in m.critical_path[:256]:
            for nid in _nodes_of_task(h, tid):
                lines[h.line_of(nid)] += 1
        top = [ln for ln, _ in lines.most_common(MAX_LINES)]
        w = where
        if top:
            first = next((nid for tid in m.critical_path[:256] for nid in _nodes_of_task(h, tid)
                          if h.line_of(nid) == top[0]), None)
            if first is not None:
                w = h.node_where(first)
        h.add("board.dependency-bound", "warning",
              f"a chain of {len(m.critical_path)} dependent tasks takes {pct(m.critical_share)} of the "
              f"makespan",
              "The tasks wait on each other: the run cannot be shorter than this chain, however many cores.",
              "shorten the chain: split serial work (a loop carrying a value from one iteration to the next, "
              "a reduction over a long axis) into independent parts combined once, or make the tasks on it "
              f"cheaper (lines {', '.join(map(str, sorted(top)))})",
              w, {"critical_share": rounded(m.critical_share), "critical_path_tasks": len(m.critical_path),
                  "critical_path_us": rounded(m.critical_path_us), "makespan_us": rounded(m.makespan),
                  "lines": sorted(top), "threshold": h.th.critical_path})
    h.add("board.bound", "info", f"bound by {bound}", why[:1].upper() + why[1:] + ".",
          _bound_advice(bound), where,
          {"bound": bound, "makespan_us": rounded(m.makespan), "utilization": rounded(m.utilization),
           "scheduler_bubble_share": rounded(sched_share), "dependency_bubble_share": rounded(dep_share),
           "critical_share": rounded(m.critical_share)})


def _nodes_of_task(h: HealthContext, tid: int) -> list[int]:
    exe, sgs, tiles = h.p.execute, h.p.subgraphs, h.p.tiles
    if exe is None or sgs is None or tiles is None or not 0 <= tid < len(exe.tasks):
        return []
    sg = sgs[exe.tasks[tid].subgraph]
    return sorted({h.by_id[i].node for i in sg.ops})


def _utilization_advice(h: HealthContext, bound: str) -> str:
    """Fewer tasks than cores is the first thing to fix; else what bounds the run."""
    sl = h.record.run
    assert sl is not None
    tasks = tasks_per_core(sl)
    lanes = Counter(ln.core for ln in sl.lanes)
    if "MIX" in tasks:  # a MIX task takes a cluster: one AIC lane and two AIV lanes
        lanes["MIX"] = min(lanes["AIC"], lanes["AIV"] // 2)
    for core, n in sorted(tasks.items()):
        if n < lanes[core]:
            cid = h.main_config(core)
            times = max(1, math.ceil(math.log2(lanes[core] / n)))
            smaller = shrunk(h, cid, times)
            tc = h.configs.get(cid) if cid is not None else None
            more = f"use {h.propose(tc, smaller)} for more, smaller tasks" if smaller is not None and \
                tc is not None else "give the kernel more work per call"
            on = "clusters" if core == "MIX" else f"{core} cores"
            return f"only {n} {core} tasks ran on {lanes[core]} {on}: {more}"
    return _bound_advice(bound)


def _bound_advice(bound: str) -> str:
    if bound == "scheduling":
        return "fewer, larger tasks (larger tiles)"
    if bound == "dependency":
        return "more independent tasks: smaller tiles along the axes that are not reduced, or split serial chains"
    if bound == "latency":
        return ("more independent tiles per task (a larger tile along an axis that is not reduced), so one tile's "
                "loads overlap another's compute; the block.schedule-gap finding names the leaf")
    if bound == "memory":
        return PIPE_ADVICE["MTE2"]
    if bound == "vector":
        return PIPE_ADVICE["V"]
    if bound == "cube":
        return PIPE_ADVICE["M"]
    return "see the block and execute findings"
