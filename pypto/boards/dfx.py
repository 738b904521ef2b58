"""PyPTO 3's own run artefacts (`dfx_outputs/`) read into our `Swimlane`, so a run on its runtime opens
in the same swimlane panel and summary as a run on our boards.

A PyPTO 3 run (hw-native-sys/pypto over the simpler runtime) with `RunConfig(enable_chip_swimlane=1..4,
enable_dep_gen=True, enable_pmu=N)` leaves, in `build_output/<Program>_<ts>/dfx_outputs/`:

- `chip_swimlane_records.json` (formerly `l2_swimlane_records.json`): `chip_swimlane_level`,
  `metadata{clock_freq_hz, num_cores, core_types, core_to_thread}`, raw cycle-domain streams:
  `aicore_tasks` rows `[core_id, task_id, reg_task_id, start, end(, receive_to_start)]` (level 1),
  `aicpu_tasks` rows `[core_id, reg_task_id, dispatch, finish]` — the AICPU's stamps of those same
  tasks, joined by `(core_id, reg_task_id)` (level 2) —, per-thread scheduler phases (level 3) and
  orchestrator submit records (level 4). A timestamp of 0 was never stamped.
- `deps.json`: `tasks[{task_id, kernel_ids[aic, aiv0, aiv1], block_num, …}]` and `edges[{pred, succ, …}]`,
  64-bit ids as strings. The records carry no dependencies and no function ids: both come from here.
- `name_map*.json`: `{level, orchestrator_name, callable_id_to_name}` — the function names.
- `pmu.csv`: one row per task and core, `thread_id, core_id, task_id (hex), func_id, core_type,
  pmu_total_cycles, <counters>, event_type`.

What becomes what: one lane per AI core (`AIC_<id>` / `AIV_<id>`, the runtime's core ids), one box per
`aicore_tasks` row (a task of several blocks is one box per block), its `leaf` the function id of
its core type's slot in `kernel_ids`, its name `<function>(<task id>)` (the task id alone when the
function is not known). Dependencies are `deps.json`'s (pred, succ) pairs; a task `deps.json` lists
with no record (a dummy or alloc task the AICPU retires, or a record lost on the device) is bridged
(a → missing → b becomes a → b). Dispatch/finish times, the scheduler and orchestrator phases and
the PMU counters go to `info` (per-task lists, and one-line `notes` the summary prints), the
scheduler and orchestrator activity also to `counters` (1 while a phase runs).

Like every reader here it terminates on any input (the dependency cycles a file may hold are
found in linear time and counted; bridging is bounded) and is bounded in memory by the files' size,
and it says what it did not use: rows without times, AICPU stamps that join no task, edges naming no
task, dependency cycles, fields the documented layout does not have — in `dropped` / `ignored`.
The layouts come from the runtime's documentation (simpler `docs/dfx/chip-swimlane-profiling.md`,
`dep-gen.md`, `profiling-name-map.md`, `pmu-profiling.md`); nothing of its code is used.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pypto.boards.reading import (
    CHIP_DEPS,
    CHIP_RECORDS,
    Json,
    Malformed,
    PathLike,
    Raw,
    build,
    core_lanes,
    get_field,
    guard,
    read_json,
    read_text,
    to_id,
    to_int,
    to_list,
)
from pypto.boards.swimlane import LaneTask, Swimlane

DFX_DIR = "dfx_outputs"
LEGACY_RECORDS = "l2_swimlane_records.json"
PMU_CSV = "pmu.csv"
FORMAT = "pypto3-dfx"
TOP_FIELDS = frozenset({"chip_swimlane_level", "metadata", "aicore_tasks", "aicpu_tasks", "aicpu_scheduler_phases",
                        "aicpu_orchestrator_phases", "host_orchestrator_phases"})
META_FIELDS = frozenset({"clock_freq_hz", "num_cores", "core_types", "core_to_thread", "host_orchestration_origin_ns"})
PMU_FIXED = ("thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles")
BRIDGE_STEPS = 2_000_000  # bridging through tasks without records stops (and says so) after this many steps


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def is_dfx_records(doc: Json) -> bool:
    """Whether `doc` is the runtime's chip swimlane records (it always writes `chip_swimlane_level`)."""
    return isinstance(doc, Mapping) and "chip_swimlane_level" in doc and "metadata" in doc


def records_in(directory: Path) -> Path | None:
    """The chip swimlane records of a run folder: in it, or in its `dfx_outputs/` (a build_output folder)."""
    for d in (directory, directory / DFX_DIR):
        for name in (CHIP_RECORDS, LEGACY_RECORDS):
            if (d / name).is_file():
                return d / name
    return None


def load_dfx(path: PathLike, doc: Json = None, deps: PathLike | None = None, name_map: PathLike | None = None,
             pmu: PathLike | None = None) -> Swimlane:
    """A PyPTO 3 run: `path` is `chip_swimlane_records.json` or the folder holding it (or its
    `dfx_outputs/`); `deps.json`, a `name_map*.json` and `pmu.csv` are read beside it unless given."""
    p = Path(path)
    if p.is_dir():
        found = records_in(p)
        if found is None:
            raise ValueError(f"{p}: no {CHIP_RECORDS} here or in {DFX_DIR}/")
        p = found
    if doc is None:
        doc = read_json(p)
    side = p.parent
    deps_p = Path(deps) if deps is not None else (side / CHIP_DEPS if (side / CHIP_DEPS).is_file() else None)
    maps = [Path(name_map)] if name_map is not None else sorted(side.glob("name_map*.json"))
    pmu_p = Path(pmu) if pmu is not None else (side / PMU_CSV if (side / PMU_CSV).is_file() else None)
    return guard(str(p), _dfx, str(p), doc, deps_p, maps, pmu_p)


# ---- the records --------------------------------------------------------------------------------------------

class _Run:
    """What is read, before `build` numbers the tasks."""

    def __init__(self) -> None:
        self.raws: list[Raw] = []
        self.task_of: list[str] = []  # raw index -> the runtime's task id
        self.core_of: list[int] = []
        self.rows_of: dict[str, list[int]] = defaultdict(list)  # task id -> raw indices
        self.dispatch: dict[int, float] = {}  # raw index -> µs
        self.finish: dict[int, float] = {}
        self.dropped: list[str] = []
        self.ignored: list[str] = []
        self.notes: list[str] = []
        self.counters: dict[str, list[tuple[float, float]]] = {}
        self.info: dict[str, Json] = {}


def _cycles(v: Any, what: str) -> int:
    c = to_int(v, what)
    if c < 0:
        raise Malformed(f"{what} is {c}, negative")
    return c


def _time_base(doc: Mapping[str, Any], core_rows: list[Any], cpu_rows: list[Any]) -> int:
    """The earliest stamped (non-zero) cycle of the run: times are counted from it, exactly (the
    runtime's counters are absolute, ~1e13 cycles, beyond what a float keeps to the cycle)."""
    stamps = [c for r in core_rows if isinstance(r, list) and len(r) >= 5
              for c in (to_int(r[3], "start_cycles"), to_int(r[4], "end_cycles")) if c > 0]
    stamps += [c for r in cpu_rows if isinstance(r, list) and len(r) >= 4
               for c in (to_int(r[2], "dispatch_cycles"), to_int(r[3], "finish_cycles")) if c > 0]
    return min(stamps, default=0)


def _dfx(source: str, doc: Json, deps: Path | None, maps: Sequence[Path], pmu: Path | None) -> Swimlane:
    level = to_int(get_field(doc, "chip_swimlane_level", "the document"), "chip_swimlane_level")
    if not 0 <= level <= 4:
        raise Malformed(f"chip_swimlane_level is {level}, expected 0..4")
    meta = get_field(doc, "metadata", "the document")
    if not isinstance(meta, Mapping):
        raise Malformed(f"metadata is {type(meta).__name__}, expected an object")
    clock = to_int(get_field(meta, "clock_freq_hz", "metadata"), "metadata.clock_freq_hz")
    if clock <= 0:
        raise Malformed(f"metadata.clock_freq_hz is {clock}, not positive")
    per_us = clock / 1e6
    core_rows = to_list(doc.get("aicore_tasks", []), "aicore_tasks")
    cpu_rows = to_list(doc.get("aicpu_tasks", []), "aicpu_tasks")
    run = _Run()
    unknown = sorted(str(k) for k in doc if k not in TOP_FIELDS)
    unknown += sorted(f"metadata.{k}" for k in meta if k not in META_FIELDS)
    if unknown:
        run.dropped.append(f"{len(unknown)} fields the documented layout does not have (not read): "
                           f"{', '.join(unknown[:8])}{' …' if len(unknown) > 8 else ''}")
    base = _time_base(doc, core_rows, cpu_rows)

    def us(c: int) -> float:
        return (c - base) / per_us

    max_core = max((to_int(r[0], f"aicore_tasks row {k} core_id") for k, r in enumerate(core_rows)
                    if isinstance(r, list) and r), default=-1)
    num_cores = max(to_int(meta.get("num_cores", 0), "metadata.num_cores"), max_core + 1)
    lanes = core_lanes(meta.get("core_types"), num_cores)
    by_reg: dict[tuple[int, str], list[int]] = defaultdict(list)
    untimed = wide = 0
    for k, row in enumerate(core_rows):
        what = f"aicore_tasks row {k}"
        if not isinstance(row, list) or len(row) < 5:
            raise Malformed(f"{what} is {row!r}, expected [core_id, task_id, reg_task_id, start_cycles, "
                             "end_cycles(, receive_to_start_cycles)]")
        core = to_int(row[0], f"{what} core_id")
        if core < 0:
            raise Malformed(f"{what} core_id {core} is negative")
        task, reg = to_id(row[1], f"{what} task_id"), to_id(row[2], f"{what} reg_task_id")
        start, end = _cycles(row[3], f"{what} start_cycles"), _cycles(row[4], f"{what} end_cycles")
        wide += len(row) > 6
        if start == 0 or end == 0:  # never stamped: a record the AICPU did not commit
            untimed += 1
            continue
        i = len(run.raws)
        run.raws.append(Raw(i, task, lanes[core], us(start), us(end)))
        run.task_of.append(task)
        run.core_of.append(core)
        run.rows_of[task].append(i)
        by_reg[(core, reg)].append(i)
    if untimed:
        run.dropped.append(f"{untimed} aicore_tasks rows without times (start or end never stamped): not imported")
    if wide:
        run.dropped.append(f"{wide} aicore_tasks rows have columns beyond the 6 documented (not read)")
    _join_aicpu(run, cpu_rows, by_reg, us)
    if level < 2 and run.dispatch:
        run.notes.append(f"level {level} records with AICPU dispatch/finish stamps (level 2 data): read anyway")
    _phases(run, doc, level, us)
    if "host_orchestrator_phases" in doc:
        run.dropped.append("host_orchestrator_phases (host times, not on the device clock): not read")
    leaf = [-1] * len(run.raws)
    preds: dict[int, set[int]] = defaultdict(set)
    if deps is not None:
        _deps(run, deps, lanes, leaf, preds)
    names = _name_map(run, maps, leaf)
    for i, r in enumerate(run.raws):
        r.leaf = leaf[i]
        fn = names.get(leaf[i]) or (f"func_{leaf[i]}" if leaf[i] >= 0 else "")
        r.name = f"{fn}({r.name})" if fn else r.name
        r.preds = sorted(preds.get(i, ()))
    run.info.update({"clock_freq_hz": clock, "chip_swimlane_level": level, "base_cycles": base})
    if isinstance(meta.get("core_to_thread"), list):
        run.info["core_to_thread"] = meta["core_to_thread"]
    new_ids: dict[Hashable, int] = {}
    sl = build(source, FORMAT, run.raws, lanes, run.counters, run.info, run.dropped, new_ids)
    return _finish(sl, run, new_ids, pmu)


def _join_aicpu(run: _Run, rows: list[Any], by_reg: Mapping[tuple[int, str], list[int]], us: Any) -> None:
    """Level 2: the AICPU's dispatch/finish stamps, joined to the AICore rows by (core_id, reg_task_id)."""
    unmatched = unstamped = ambiguous = 0
    for k, row in enumerate(rows):
        what = f"aicpu_tasks row {k}"
        if not isinstance(row, list) or len(row) < 4:
            raise Malformed(f"{what} is {row!r}, expected [core_id, reg_task_id, dispatch_cycles, finish_cycles]")
        key = (to_int(row[0], f"{what} core_id"), to_id(row[1], f"{what} reg_task_id"))
        d, f = _cycles(row[2], f"{what} dispatch_cycles"), _cycles(row[3], f"{what} finish_cycles")
        hits = by_reg.get(key, [])
        if not hits:
            unmatched += 1
            continue
        ambiguous += len(hits) > 1
        if d == 0 or f == 0:
            unstamped += 1
        for i in hits:
            if d:
                run.dispatch[i] = us(d)
            if f:
                run.finish[i] = us(f)
    if unmatched:
        run.dropped.append(f"{unmatched} aicpu_tasks rows join no aicore_tasks row by (core_id, reg_task_id): "
                           "not imported")
    if ambiguous:
        run.dropped.append(f"{ambiguous} aicpu_tasks rows match several aicore_tasks rows (a reg_task_id repeated "
                           "on its core): their stamps given to each")
    if unstamped:
        run.notes.append(f"{unstamped} AICPU records with a dispatch or finish never stamped")


def _phases(run: _Run, doc: Mapping[str, Any], level: int, us: Any) -> None:
    """Levels 3 and 4: the scheduler's per-iteration phases and the orchestrator's submits, per thread:
    a summary note, and a 0/1 counter per thread (1 while a phase runs)."""
    for key, prefix, what in (("aicpu_scheduler_phases", "sched", "scheduler"),
                              ("aicpu_orchestrator_phases", "orch", "orchestrator")):
        threads = to_list(doc.get(key, []), key)
        total: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        bad = 0
        for t, recs in enumerate(threads):
            points: list[tuple[float, float]] = []
            for j, rec in enumerate(to_list(recs, f"{key}[{t}]")):
                if not isinstance(rec, Mapping):
                    raise Malformed(f"{key}[{t}][{j}] is {type(rec).__name__}, expected an object")
                s = _cycles(rec.get("start_cycles", 0), f"{key}[{t}][{j}].start_cycles")
                e = _cycles(rec.get("end_cycles", 0), f"{key}[{t}][{j}].end_cycles")
                if s == 0 or e < s:
                    bad += 1
                    continue
                kind = str(rec.get("kind", rec.get("phase", "orch_submit" if prefix == "orch" else "?")))
                total[kind][0] += 1
                total[kind][1] += us(e) - us(s)
                points += [(us(s), 1.0), (us(e), 0.0)]
            if points:
                points.sort()
                run.counters[f"{prefix}_{t}"] = points
        if bad:
            run.dropped.append(f"{bad} {what} phase records without times, or ending before they start: not read")
        if total:
            parts = ", ".join(f"{k} {n:,} × {t:,.1f} µs" for k, (n, t) in
                              sorted(total.items(), key=lambda kv: -kv[1][1]))
            run.notes.append(f"{what} phases on {_n(len(threads), 'thread')}: {parts} (counters {prefix}_<thread>)")
            run.info[f"{prefix}_phases"] = {k: {"count": int(n), "total_us": t} for k, (n, t) in total.items()}
        elif threads and level >= (3 if prefix == "sched" else 4):
            run.notes.append(f"no {what} phase records at level {level}")


# ---- deps.json ----------------------------------------------------------------------------------------------

def _kernel(kernel_ids: Any, core: str, what: str) -> int:
    """The function id of a task's block on a core of type `core`: `kernel_ids` is [aic, aiv0, aiv1];
    an AIV block takes aiv0, else aiv1 (the records do not say which AIV slot ran)."""
    if not isinstance(kernel_ids, list) or len(kernel_ids) != 3:
        return -1
    ids = [to_int(x, what) for x in kernel_ids]
    if core == "AIC":
        return ids[0] if ids[0] >= 0 else -1
    return next((x for x in ids[1:] if x >= 0), -1)


def _deps(run: _Run, path: Path, lanes: Sequence[str], leaf: list[int], preds: dict[int, set[int]]) -> None:
    try:
        try:
            doc = read_json(path)
        except ValueError as e:
            raise Malformed(str(e)) from None
        tasks = to_list(doc.get("tasks", []) if isinstance(doc, Mapping) else None, "tasks")
        edges = to_list(get_field(doc, "edges", "the document"), "edges")
        listed: set[str] = set()
        spmd = 0
        for k, t in enumerate(tasks):
            tid = to_id(get_field(t, "task_id", f"task {k}"), f"task {k} task_id")
            listed.add(tid)
            spmd += isinstance(t.get("block_num"), int) and t["block_num"] > 1
            for i in run.rows_of.get(tid, ()):
                leaf[i] = _kernel(t.get("kernel_ids"), lanes[run.core_of[i]].split("_")[0], f"task {k} kernel_ids")
        pairs: set[tuple[str, str]] = set()
        for k, e in enumerate(edges):
            pairs.add((to_id(get_field(e, "pred", f"edge {k}"), f"edge {k} pred"),
                       to_id(get_field(e, "succ", f"edge {k}"), f"edge {k} succ")))
    except Malformed as e:
        raise Malformed(f"{path}: {e}") from None
    run.info.update({"deps_tasks": len(tasks), "deps_edges": len(edges), "deps_pairs": len(pairs)})
    if spmd:
        run.notes.append(f"{_n(spmd, 'SPMD task')} (block_num > 1) in {path.name}: one box per block")
    timed = set(run.rows_of)
    known = timed | listed
    unknown = sum(1 for a, b in pairs if a not in known or b not in known)
    if unknown:
        run.info["unmatched_edges"] = unknown
        run.dropped.append(f"{unknown} edges of {path.name} name a task with no record in {CHIP_RECORDS} "
                           "(not imported)")
    missing = listed - timed
    if missing:
        run.dropped.append(f"{len(missing)} tasks of {path.name} have no record in {CHIP_RECORDS} (dummy or alloc "
                           "tasks the AICPU retires, or records lost on the device): not drawn, the dependencies "
                           "through them bridged")
    cyc = _cycle_edges(pairs)
    if cyc:
        run.ignored.append(f"{cyc[0]} dependency edges of {path.name} lie on {_n(cyc[1], 'cycle')} (e.g. "
                           f"{' → '.join(cyc[2])}): kept; the critical path follows only arrows forward in time")
    into: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        if a in known and b in known and a != b:
            into[b].add(a)
    steps = [0]
    cut = False
    for b in timed:
        ps = _timed_preds(b, into, timed, steps)
        if ps is None:
            cut = True
            break
        for i in run.rows_of[b]:
            preds[i].update(j for a in ps for j in run.rows_of[a])
    if cut:
        run.dropped.append(f"bridging the dependencies through tasks without records stopped after {BRIDGE_STEPS:,} "
                           "steps: some dependencies through them are not imported")


def _timed_preds(b: str, into: Mapping[str, set[str]], timed: set[str], steps: list[int]) -> set[str] | None:
    """The tasks with records `b` depends on: its predecessors, through any chain of tasks without
    records (visited once each, so cycles end); None when the shared step budget is spent."""
    out: set[str] = set()
    seen: set[str] = set()
    stack = list(into.get(b, ()))
    while stack:
        steps[0] += 1
        if steps[0] > BRIDGE_STEPS:
            return None
        a = stack.pop()
        if a in timed:
            out.add(a)
        elif a not in seen:
            seen.add(a)
            stack.extend(into.get(a, ()))
    return out


def _cycle_edges(pairs: set[tuple[str, str]]) -> tuple[int, int, list[str]] | None:
    """(edges inside a cycle, cycles = strongly connected components with an edge, one cycle's ids)
    of the (pred, succ) graph, by an iterative Tarjan: linear, no recursion."""
    succ: dict[str, list[str]] = defaultdict(list)
    for a, b in sorted(pairs):
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    comp: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    n_comp = 0
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            nxt = succ.get(v, [])
            if i < len(nxt):
                work.append((v, i + 1))
                w = nxt[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = n_comp
                    if w == v:
                        break
                n_comp += 1
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    inside = [(a, b) for a, b in pairs if comp.get(a) == comp.get(b) and a in comp]
    if not inside:
        return None
    comps = {comp[a] for a, _ in inside}
    a0, b0 = min(inside)
    return len(inside), len(comps), _a_cycle(a0, b0, succ, comp)


def _a_cycle(a: str, b: str, succ: Mapping[str, list[str]], comp: Mapping[str, int]) -> list[str]:
    """One cycle through the edge a → b: a shortest path b ⇝ a inside their component, then a again."""
    if a == b:
        return [a, a]
    prev: dict[str, str] = {b: b}
    queue = [b]
    for v in queue:
        if v == a:
            break
        for w in succ.get(v, ()):
            if w not in prev and comp.get(w) == comp[a]:
                prev[w] = v
                queue.append(w)
    path = [a]
    while path[-1] != b:
        path.append(prev[path[-1]])
    return [a, *reversed(path)][:9]


# ---- name_map*.json -----------------------------------------------------------------------------------------

def _name_map(run: _Run, maps: Sequence[Path], leaf: Sequence[int]) -> dict[int, str]:
    """Function names: the one name map for level 2 (the chip's kernels) beside the records."""
    if not maps:
        return {}
    docs = []
    for m in maps:
        try:
            doc = read_json(m)
        except ValueError as e:
            raise Malformed(str(e)) from None
        if not isinstance(doc, Mapping) or not isinstance(doc.get("callable_id_to_name"), Mapping):
            raise Malformed(f"{m}: not a name map ({{level, orchestrator_name, callable_id_to_name}})")
        docs.append((m, doc))
    chip = [(m, d) for m, d in docs if d.get("level", 2) == 2]
    if len(chip) != 1:
        run.dropped.append(f"{len(docs)} name maps beside the records, {len(chip)} of them for level 2 "
                           f"({', '.join(m.name for m, _ in docs)}): none used, tasks named by function id")
        return {}
    m, doc = chip[0]
    names: dict[int, str] = {}
    bad = 0
    for k, v in doc["callable_id_to_name"].items():
        try:
            names[int(str(k))] = str(v)
        except ValueError:
            bad += 1
    if bad:
        run.dropped.append(f"{bad} entries of {m.name} whose id is not an integer (not read)")
    used = {x for x in leaf if x >= 0}
    run.info["leaf_names"] = {str(k): v for k, v in sorted(names.items())}
    if doc.get("orchestrator_name"):
        run.info["orchestrator_name"] = str(doc["orchestrator_name"])
    nameless = sorted(used - set(names))
    run.notes.append(f"function names from {m.name}: {len(used & set(names))} of the {len(used)} functions run"
                     + (f" (no name for {', '.join(map(str, nameless[:6]))})" if nameless else ""))
    return names


# ---- pmu.csv and the per-task AICPU times -------------------------------------------------------------------

def _finish(sl: Swimlane, run: _Run, new_ids: Mapping[Hashable, int], pmu: Path | None) -> Swimlane:
    """The per-task extras by the swimlane's task ids, the PMU counters, the notes."""
    info = dict(sl.info)
    n = len(sl.tasks)
    t0 = min((r.start for r in run.raws), default=0.0)  # build counted the times from the first start
    if run.dispatch or run.finish:
        disp: list[float | None] = [None] * n
        fin: list[float | None] = [None] * n
        for i, v in run.dispatch.items():
            disp[new_ids[i]] = v - t0
        for i, v in run.finish.items():
            fin[new_ids[i]] = v - t0
        info["dispatch_us"], info["finish_us"] = disp, fin
        pick = [sl.tasks[k].start - d for k, d in enumerate(disp) if d is not None]
        tail = [f - sl.tasks[k].end for k, f in enumerate(fin) if f is not None]
        if pick:
            run.notes.insert(0, f"AICPU dispatch → AICore start (pickup): avg {sum(pick) / len(pick):,.3f} µs, "
                                f"max {max(pick):,.3f} µs over {len(pick)} tasks"
                             + (f"; end → AICPU finish: avg {sum(tail) / len(tail):,.3f} µs" if tail else ""))
    if pmu is not None:
        _pmu(run, info, sl.tasks, {i: new_ids[i] for i in range(len(run.raws))}, pmu)
    info["notes"] = [f"chip swimlane level {info['chip_swimlane_level']}", *run.notes]
    info["dropped"] = [*info.get("dropped", []), *[d for d in run.dropped if d not in info.get("dropped", [])]]
    info["ignored"] = [*run.ignored, *info.get("ignored", [])]
    return Swimlane(sl.board, sl.clock, sl.lanes, sl.tasks, sl.counters, sl.pipe_profiles, info)


def _pmu(run: _Run, info: dict[str, Json], tasks: Sequence[LaneTask], ids: Mapping[int, int], path: Path) -> None:
    """`pmu.csv`: each row joined to a box by (core_id, task_id) (a task dispatched to one core twice:
    its rows in start order); per-task values in `info["pmu"]`, and each counter's share of the
    total cycles per core type in a note."""
    try:
        text = read_text(path)
    except ValueError as e:
        raise Malformed(str(e)) from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise Malformed(f"{path}: the file is empty")
    head = [h.strip() for h in rows[0]]
    missing = [c for c in PMU_FIXED if c not in head]
    if missing:
        raise Malformed(f"{path}: no column {', '.join(missing)} (expected {', '.join(PMU_FIXED)}, counters, "
                         "event_type)")
    col = {h: i for i, h in enumerate(head)}
    counters = [h for h in head if h not in PMU_FIXED and h != "event_type"]
    on_core: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in sorted(range(len(run.raws)), key=lambda i: run.raws[i].start):
        on_core[(run.core_of[i], run.task_of[i])].append(i)
    taken: dict[tuple[int, str], int] = defaultdict(int)
    per_task: dict[str, list[float]] = {}
    share: dict[str, list[float]] = defaultdict(lambda: [0.0] * (len(counters) + 1))
    events: set[str] = set()
    unmatched = 0
    try:
        for n, row in enumerate(rows[1:], start=2):
            if not any(c.strip() for c in row):
                continue
            if len(row) < len(head):
                raise Malformed(f"line {n} has {len(row)} cells, the header {len(head)}")
            key = (to_int(row[col["core_id"]], f"line {n} core_id"), to_id(row[col["task_id"]], f"line {n} task_id"))
            vals = [float(to_int(row[col["pmu_total_cycles"]], f"line {n} pmu_total_cycles"))]
            vals += [float(to_int(row[col[c]], f"line {n} {c}")) for c in counters]
            if "event_type" in col:
                events.add(row[col["event_type"]].strip())
            hits = on_core.get(key, [])
            if taken[key] >= len(hits):
                unmatched += 1
                continue
            i = hits[taken[key]]
            taken[key] += 1
            tid = ids[i]
            per_task[str(tid)] = vals
            acc = share[run.raws[i].lane.split("_")[0]]
            for j, v in enumerate(vals):
                acc[j] += v
    except Malformed as e:
        raise Malformed(f"{path}: {e}") from None
    info["pmu"] = {"event_type": sorted(events), "columns": ["pmu_total_cycles", *counters], "tasks": per_task}
    if unmatched:
        run.dropped.append(f"{unmatched} rows of {path.name} join no box by (core_id, task_id): not imported")
    parts = []
    for core, acc in sorted(share.items()):
        busy = [(c, acc[j + 1] / acc[0]) for j, c in enumerate(counters) if acc[0] > 0 and c.endswith("_cycles")]
        if busy:
            parts.append(f"{core} " + ", ".join(f"{c.removesuffix('_busy_cycles').removesuffix('_cycles')} {v:.0%}"
                                                for c, v in busy))
    run.notes.append(f"PMU (event type {'/'.join(sorted(events)) or '?'}): {len(per_task)} of {len(tasks)} boxes"
                     + (f"; busy share of the total cycles: {'; '.join(parts)}" if parts else ""))
