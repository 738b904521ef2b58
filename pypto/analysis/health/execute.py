"""The execute level: the task graph the runtime schedules (tasks per core type, depth and width, each
task's cycles on the core model against what the AICPU scheduler needs to keep the cores busy) and
its rules: too few tasks at once for the cores (`execute.low-parallelism`), tasks too short for the
scheduler (`execute.small-tasks`) and many leaf functions for few tasks (`execute.heterogeneous`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pypto.analysis.health.context import HealthContext, rounded
from pypto.analysis.health.tile_shapes import grown, shrunk, tile_ratio
from pypto.boards.core_model import CoreModel
from pypto.compiler.execute_ir import CORE_CODES


def execute_level(h: HealthContext) -> None:
    """The execute graph's stats (`h.stats["execute"]`, each leaf's cycles in `h.leaf_cycles`) and its
    findings (only with a tile graph to suggest tile shapes from)."""
    exe = h.p.execute
    leaves = h.p.leaves
    assert exe is not None and leaves is not None
    tasks = exe.tasks
    if h.p.blocks is not None:
        h.core_model = CoreModel(h.p.blocks, h.board)
        for lf in leaves:
            h.leaf_cycles[lf.id] = h.core_model.run(lf.id, 0.0, 1.0)[0]
    ids, preds, leaf, core_of, names = _task_columns(exe)
    level: list[int] = [0] * len(tasks)
    edges = 0
    at = level.__getitem__
    # a task's level: one past its deepest predecessor's (they come first), by a C-level map; once per predecessor
    # tuple, which many tasks share (`pypto.compiler.execute.build`: Kimi's block attention, edited, has 8.4 M arrows
    # in 128 distinct tuples; each tuple's levels are final once its first task is reached)
    deepest: dict[int, int] = {}
    for i, ps in zip(ids, preds):
        if ps:
            lv = deepest.get(id(ps))
            if lv is None:
                lv = deepest[id(ps)] = max(map(at, ps)) + 1
            edges += len(ps)
        else:
            lv = 0
        level[i] = lv
    # the rest by array work over the tasks in their order (per task, ~0.1 s of gated delta rule's 76 k)
    levels = np.array(level, dtype=np.int64)[np.asarray(ids, dtype=np.int64)] if tasks else np.zeros(0, np.int64)
    known = sorted(h.leaf_cycles)
    cycles_of = np.full(max(int(leaf.max()) if len(leaf) else 0, known[-1] if known else 0) + 1, np.nan)
    cycles_of[known] = [h.leaf_cycles[lf] for lf in known]
    task_cycles = np.where(leaf >= 0, cycles_of[leaf], np.nan)  # (no leaf: no cycles)
    timed = ~np.isnan(task_cycles)
    count = {names[c]: int(k) for c, k in enumerate(np.bincount(core_of, minlength=len(names))) if k}
    cores = {k: int(v) for k, v in h.board["cores"].items()}
    if "MIX" in count:  # a MIX task (a PyPTO 3 scope) takes a cluster: one AIC and two AIVs
        cores["MIX"] = min(cores.get("AIC", 0), cores.get("AIV", 0) // 2)
    cyc: list[float] = task_cycles[timed].tolist()  # in task order: summed as the tasks come
    clock = float(h.board.get("clock_ghz", 1.0))
    cpu = h.board.get("aicpu", {})
    per_task_cpu = sum(float(cpu.get(k, 0)) for k in ("schedule_cycles", "submit_cycles", "completion_cycles",
                                                      "resolve_cycles"))
    threads = max(1, int(cpu.get("sched_threads", 1)))
    per_core: dict[str, dict[str, Any]] = {}
    for core in sorted(count):
        mine = core_of == names.index(core)
        c_cyc: list[float] = task_cycles[mine & timed].tolist()
        per_core[core] = {
            "tasks": count[core], "cores": cores.get(core, 0), "leaves": len(np.unique(leaf[mine])),
            "max_width": int(np.bincount(levels[mine]).max()),
            "avg_task_cycles": rounded(sum(c_cyc) / len(c_cyc), 1) if c_cyc else 0.0,
            "min_task_cycles_to_hide_scheduler": rounded(cores.get(core, 0) * per_task_cpu / threads, 1),
        }
    h.stats["execute"] = {
        "tasks": len(tasks), "leaves": len(leaves), "edges": edges,
        "homogeneity": rounded(len(leaves) / len(tasks), 6) if tasks else 0.0,
        "depth": (max(level) + 1) if level else 0, "max_width": int(np.bincount(levels).max()) if tasks else 0,
        "roots": len(exe.roots),
        "task_cycles": {"min": rounded(min(cyc), 1), "avg": rounded(sum(cyc) / len(cyc), 1),
                        "max": rounded(max(cyc), 1), "min_us": rounded(min(cyc) / clock / 1000),
                        "avg_us": rounded(sum(cyc) / len(cyc) / clock / 1000),
                        "max_us": rounded(max(cyc) / clock / 1000)} if cyc else {},
        "per_core": per_core,
    }
    if h.p.tiles is None:
        return
    for core, s in per_core.items():
        n_cores = s["cores"]
        if not n_cores:
            continue
        if s["max_width"] < h.th.parallelism * n_cores:
            cid = h.main_config(core)
            need = math.ceil(n_cores / max(1, s["max_width"]))
            times = max(1, math.ceil(math.log2(need)))
            smaller = shrunk(h, cid, times)
            tc = h.configs.get(cid) if cid is not None else None
            if smaller is not None and tc is not None:
                more = round(s["tasks"] * tile_ratio(h, cid, smaller))
                sugg = (f"use {h.propose(tc, smaller)} (about {more} tasks) so that "
                        f"more of the {n_cores} {_cores(core)} get work; only worth it if the kernel's time matters")
                sev = "warning"
            else:
                sugg = f"the tensors are too small to split over {n_cores} {_cores(core)}: batch more work per call"
                sev = "info"
            h.add("execute.low-parallelism", sev,
                  f"{s['tasks']} {core} task(s), at most {s['max_width']} at once, for {n_cores} {_cores(core)}",
                  "Cores without a task idle whatever the scheduler does.",
                  sugg, h.main_where(core),
                  {"core": core, "tasks": s["tasks"], "max_width": s["max_width"], "cores": n_cores,
                   "threshold": h.th.parallelism})
        avg, floor = s["avg_task_cycles"], s["min_task_cycles_to_hide_scheduler"]
        if s["tasks"] > n_cores and avg and avg < h.th.small_task * floor:
            cid = h.main_config(core)
            times = max(1, math.ceil(math.log2(floor / avg)))
            bigger = grown(h, cid, times)
            tc = h.configs.get(cid) if cid is not None else None
            sugg = (f"use {h.propose(tc, bigger)}: fewer, longer tasks" if bigger is not None and
                    tc is not None else "give each task more work (larger tiles, or fuse more ops per task)")
            h.add("execute.small-tasks", "warning",
                  f"{core} tasks average {avg:,.0f} cycles; the scheduler needs {floor:,.0f} per task to keep "
                  f"{n_cores} cores busy",
                  f"Each task costs the AICPU scheduler {per_task_cpu:.0f} cycles on one of {threads} threads; "
                  "shorter tasks leave cores waiting to be handed the next one.",
                  sugg, h.main_where(core),
                  {"core": core, "avg_task_cycles": avg, "min_task_cycles": floor, "tasks": s["tasks"],
                   "cores": n_cores, "threshold": h.th.small_task})
    n_tasks, n_leaves = len(tasks), len(leaves)
    if n_tasks >= h.th.heterogeneity_min_tasks and n_leaves / n_tasks > h.th.heterogeneity:
        once = sum(1 for lf in leaves if lf.count == 1)
        tails = sorted(h.cfg, key=lambda cid: -h.cfg[cid].waste)
        tails = [cid for cid in tails if h.cfg[cid].tails]
        if tails:
            line = (h.config_where(tails[0]) or h.kernel_where()).line
            see = " (see tile.tail-waste)" if h.cfg[tails[0]].waste >= h.th.tail_waste else ""
            hint = (f"tile shapes that divide the tensors at line {line}{see} make the tail tasks the same leaf "
                    "as the others")
        else:
            hint = "fewer distinct tile shapes per task (no tails, one shape per loop iteration)"
        h.add("execute.heterogeneous", "warning",
              f"{n_leaves} leaf functions for {n_tasks} tasks ({once} run once)",
              "Every distinct leaf is its own instruction stream to build, cache and load; "
              "many leaves for few tasks usually come from tail tiles.",
              hint, h.main_where(),
              {"leaves": n_leaves, "tasks": n_tasks, "homogeneity": rounded(n_leaves / n_tasks, 6), "run_once": once,
               "threshold": h.th.heterogeneity, "min_tasks": h.th.heterogeneity_min_tasks})


def _task_columns(exe: Any) -> tuple[Sequence[int], Sequence[tuple[int, ...]], np.ndarray, np.ndarray, list[str]]:
    """Per task in the graph's order: its id, predecessors, leaf and core (a code: its name at that index of the
    list returned), from the graph's columns when it has them (task ids are their positions there), else from
    the tasks."""
    tasks = exe.tasks
    cols = exe.columns
    if cols is not None and (len(cols.core) == 0 or int(cols.core.min()) >= 0):
        return range(len(tasks)), cols.preds, cols.leaf, cols.core, sorted(CORE_CODES, key=CORE_CODES.__getitem__)
    names = sorted({t.core for t in tasks})
    code = {c: i for i, c in enumerate(names)}
    return ([t.id for t in tasks], [t.preds for t in tasks], np.fromiter((t.leaf for t in tasks), np.int64, len(tasks)),
            np.fromiter((code[t.core] for t in tasks), np.int64, len(tasks)), names)


def _cores(core: str) -> str:
    """What runs tasks of a core type, in words: `AIV cores`; a MIX task's clusters."""
    return "clusters (1 AIC + 2 AIV each)" if core == "MIX" else f"{core} cores"
