"""The board level: the profiled run's swimlane (makespan, utilization, scheduler and dependency
bubbles, the critical path, busy time per pipe, what bounds it) and its rules: idle cores
(`board.low-utilization`), a scheduler slower than the cores (`board.scheduler-bound`), a chain of
dependent tasks (`board.dependency-bound`), device tasks that a deeper stitch would overlap, simulated
(`board.stitching`) and, always, what bounds the run (`board.bound`).
"""

from __future__ import annotations

import ast
import linecache
import math
from collections import Counter
from typing import Any

from pypto.analysis.findings import TextEdit, Where
from pypto.analysis.health.block import PIPE_ADVICE
from pypto.analysis.health.context import MAX_LINES, HealthContext, pct, rounded
from pypto.analysis.health.tile_shapes import grown, shrunk
from pypto.boards import stitch
from pypto.boards.profile import bottleneck, pipe_busy
from pypto.boards.sim import simulate
from pypto.boards.swimlane import lanes_ran, metrics, tasks_per_core

# `board.stitching` simulates the execute graph once more (with every root function in one device task) up to this
# many tasks (~1 s of the sim board), and speaks when that is at least this much faster
STITCH_CHECK_TASKS = 300_000
STITCH_GAIN = 1.05


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
    _stitching(h, m.makespan, where)
    h.add("board.bound", "info", f"bound by {bound}", why[:1].upper() + why[1:] + ".",
          _bound_advice(bound), where,
          {"bound": bound, "makespan_us": rounded(m.makespan), "utilization": rounded(m.utilization),
           "scheduler_bubble_share": rounded(sched_share), "dependency_bubble_share": rounded(dep_share),
           "critical_share": rounded(m.critical_share)})


def _stitching(h: HealthContext, makespan: float, where: Any) -> None:
    """`board.stitching`: the sim board's run had several device tasks, one after another; the same execute graph
    simulated with every root function in one device task (`stitch_function_max_num` their count, PyPTO's limit
    1,024) is at least `STITCH_GAIN` times faster. A verified figure, not a rule of thumb: nothing is said when it
    is not faster, or when the graph has more than `STITCH_CHECK_TASKS` tasks (the check is one more run)."""
    sl = h.record.run
    assert sl is not None
    devices = int(sl.info.get("device_tasks", 0) or 0)
    roots = int(sl.info.get("root_functions", 0) or 0)
    if sl.board != "sim" or devices <= 1 or not roots or len(sl.tasks) > STITCH_CHECK_TASKS or h.p.execute is None:
        return
    options = h.record.source.options.get("runtime_options", {}) if isinstance(h.record.source.options, dict) else {}
    options = dict(options) if isinstance(options, dict) else {}
    k = min(roots, stitch.MAX_STITCH)
    deeper = simulate(h.p, str(sl.info.get("board") or "a2a3"),
                      {**options, "stitch_function_max_num": k, "max_workspace_kb": 0})
    after = metrics(deeper).makespan
    if not 0 < after * STITCH_GAIN <= makespan:
        return
    plan = stitch.plan(h.p, {"stitch_function_max_num": k})
    per_root = stitch.root_workspace(h.p, stitch.task_instances(h.p.execute), plan.root_function)
    need_kb = math.ceil(float(per_root[:k].sum()) / 1024) if len(per_root) else 0
    mode = sl.info.get("stitch_mode")
    # the Apply: the decorator's stitch_function_max_num set to k, which is what was simulated only in count mode
    edit = _stitch_edit(h.file, h.kernel_where().line, k) if mode == "count" else None
    gain = {"speedup": makespan / after, "makespan_us": after, "before_us": makespan, "board": sl.board,
            "call": f"runtime_options stitch_function_max_num {k}", "from": "board"}
    how = (f"max_workspace_kb {sl.info.get('max_workspace_kb')} held {roots / devices:.1f} of them on average"
           if mode == "memory" else f"stitch_function_max_num {sl.info.get('stitch_function_max_num')}")
    budget = f"max_workspace_kb above ~{need_kb:,} KB (the workspace of {k} root functions, estimated)"
    options_text = (f"raise runtime_options {budget}, or set it to 0 with stitch_function_max_num {k} (in "
                    f"memory-driven stitching stitch_function_max_num bounds nothing)" if mode == "memory" else
                    f"set runtime_options stitch_function_max_num {k}, or {budget}: PyPTO's memory-driven stitching")
    if edit is not None:  # said where it would change
        where = Where(edit.where.file, edit.where.line)
    h.add("board.stitching", "warning",
          f"{devices} device tasks ran one after another ({roots} root functions, {how}) [{sl.clock}]",
          "The runtime launches a device task when the one before it has finished, so a task waits for its device "
          "task even when its inputs are ready; root functions stitched into one device task overlap.",
          f"{options_text} — simulated on the {sl.board} board with {k} root functions to a device task: "
          f"{after:,.2f} µs against {makespan:,.2f} µs now ({makespan / after:.2f}x faster)",
          where, {"device_tasks": devices, "root_functions": roots, "stitch_mode": mode,
                  "stitch_function_max_num": k, "workspace_kb": need_kb, "makespan_us": rounded(makespan),
                  "simulated_us": rounded(after), "speedup": rounded(makespan / after), "checked_on": sl.board,
                  **({"gain": gain} if edit is not None else {})},
          edits=(edit,) if edit is not None else ())


def _stitch_edit(file: str, def_line: int, k: int) -> TextEdit | None:
    """The kernel's decorator with `stitch_function_max_num` set to `k`: the value of that key in its
    `runtime_options={...}` replaced, or the key put first in it; None when the options are not a dict written in
    the decorator (a name, a call). The text is the one the kernel was loaded from (`linecache`: the editor's)."""
    lines = linecache.getlines(file)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.lineno != def_line:
            continue
        for dec in node.decorator_list:
            options = next((kw.value for kw in dec.keywords if kw.arg == "runtime_options"), None) \
                if isinstance(dec, ast.Call) else None
            if not isinstance(options, ast.Dict):
                continue
            for key, value in zip(options.keys, options.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "stitch_function_max_num":
                    return TextEdit(_where(file, lines, value, value), str(k))
            if not options.keys:  # `{}`
                return TextEdit(_where(file, lines, options, options), f'{{"stitch_function_max_num": {k}}}')
            at = _where(file, lines, options, options)  # right after its `{`
            return TextEdit(Where(file, at.line, at.col + 1, at.line, at.col + 1), f'"stitch_function_max_num": {k}, ')
    return None


def _where(file: str, lines: list[str], first: ast.expr, last: ast.expr) -> Where:
    """`first`'s start to `last`'s end as a range of characters (`ast` counts UTF-8 bytes)."""
    def col(line: int, byte: int) -> int:
        return len(lines[line - 1].encode()[:byte].decode(errors="ignore"))
    end_line = last.end_lineno or last.lineno
    return Where(file, first.lineno, col(first.lineno, first.col_offset), end_line,
                 col(end_line, last.end_col_offset or 0))


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
