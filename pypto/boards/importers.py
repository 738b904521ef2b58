"""PyPTO's run outputs read into the one swimlane schema, so a measured run sits beside a simulated one.

Users of PyPTO already have swimlanes from real hardware: `merged_swimlane.json` (a Chrome
trace), `tilefwk_L1_prof_data.json` with `dyn_topo.txt` (CANN PyPTO), and
`chip_swimlane_records.json` with `deps.json` (PyPTO 3.0 runtime). Each loader here turns one
of them into a `Swimlane` (board "imported", clock "imported from <file>"), so the metrics,
the exports and the IDE panels treat it like any other board.

Common rules: task ids are renumbered densely 0..n-1 in start order and the file's own id is
kept in `LaneTask.name`; times are shifted so the run starts at 0; lanes are named
`AIC_<i>`, `AIV_<i>`, `AICPU_<i>` (`CPU_<i>` for our CPU board) with the file's own core
numbers. Every lane the file has is kept, PyPTO's "Fake Core" lane too (core `PLACEHOLDER`:
its tasks stay in the dependency graph, see `swimlane.metrics`). Whatever a loader reads and
cannot place (a slice on a thread that is no core, a flow arrow that binds to no slice, a
dependency naming no task, an arrow from a task to itself) is counted in `info["dropped"]`
(`Swimlane.dropped`), one line each, never silently left out; arrows that run back in time
(real traces have them, and cycles) are kept and counted in `info["ignored"]`
(`Swimlane.ignored`): the critical path does not follow them. Malformed input raises a
ValueError that names the file and what is wrong.

`write_l1_prof` and `write_chip_swimlane` write a swimlane in those formats — cheap, and what
lets the loaders (and a user's own scripts) be tested without hardware.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pypto.boards import dfx
from pypto.boards.reading import (
    CHIP_DEPS,
    CHIP_RECORDS,
    FAKE_RE,
    LANE_RE,
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
    to_num,
)
from pypto.boards.swimlane import SCHEMA, LaneTask, Swimlane

TICKS_PER_US = 50.0  # PyPTO's trace counter on A2/A3 (board-a2a3.md)
CLOCK_HZ = 1.8e9  # A2/A3 core clock for cycle -> time (board-a2a3.md)
L1_PROF = "tilefwk_L1_prof_data.json"
DYN_TOPO = "dyn_topo.txt"
MERGED = "merged_swimlane.json"
TOPO_HEADER = ("seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
               "staticSuccCount,successors...")
_PIPE_LANE_RE = re.compile(r"^(AICPU|AIC|AIV|CPU)[_\-\s]?\d+\.\w+$", re.IGNORECASE)  # our pipe sub-lanes
_MERGED_NAME_RE = re.compile(r"^(\d+)-(.+)-(\d+)-(\d+)-(\d+)\((.*)\)$")
_TOL = 1e-6  # µs




# ---- the shared builder -----------------------------------------------------------------------------

















def _source(path_or_doc: Any, default: str) -> tuple[str, Json]:
    if isinstance(path_or_doc, (str, os.PathLike)):
        p = Path(path_or_doc)
        return str(p), read_json(p)
    return default, path_or_doc












def _seq_names(raws: list[Raw], seqs: Sequence[int]) -> None:
    """Name tasks by their file id; with several sequences (device tasks), `seq:id`."""
    if len(set(seqs)) > 1:
        for r, s in zip(raws, seqs):
            r.name = f"{s}:{r.name}"


# ---- merged_swimlane.json (and our own Chrome traces) ------------------------------------------------------

class _Slices:
    """The task slices of one thread, for binding flow endpoints."""

    def __init__(self) -> None:
        self.items: list[tuple[float, float, int]] = []  # (start, end, raw index)
        self.starts: list[float] = []
        self.longest = 0.0

    def add(self, start: float, end: float, k: int) -> None:
        self.items.append((start, end, k))

    def freeze(self) -> None:
        self.items.sort()
        self.starts = [s for s, _, _ in self.items]
        self.longest = max((e - s for s, e, _ in self.items), default=0.0)

    def bind(self, ts: float, ph: str, enclosing: bool) -> int | None:
        """The raw index of the slice a flow endpoint binds to: the enclosing slice whose end (s) or
        start (f) is nearest; for an `f` without `bp: "e"`, else the next slice to start."""
        hi = bisect.bisect_right(self.starts, ts + _TOL)
        best: tuple[float, int] | None = None
        k = hi - 1
        while k >= 0 and self.starts[k] >= ts - self.longest - _TOL:
            s, e, idx = self.items[k]
            if e >= ts - _TOL:
                d = abs(e - ts) if ph == "s" else abs(ts - s)
                if best is None or d < best[0]:
                    best = (d, idx)
            k -= 1
        if best is not None:
            return best[1]
        if not enclosing and hi < len(self.items):
            return self.items[hi][2]
        return None


def _hint(text: Any, key: str) -> str | None:
    """`key`'s value in an event-hint string like `rootHash:…, leafHash:…, TaskId:…`."""
    if not isinstance(text, str):
        return None
    m = re.search(rf"\b{re.escape(key)}\s*[:=]\s*([^,;\s]+)", text)
    return m.group(1) if m else None


def _merged(source: str, doc: Json) -> Swimlane:
    events = doc.get("traceEvents") if isinstance(doc, Mapping) else doc
    events = to_list(events, "traceEvents")
    procs: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for i, ev in enumerate(events):
        if not isinstance(ev, Mapping):
            raise Malformed(f"event {i} is {type(ev).__name__}, expected an object")
        if ev.get("ph") == "M" and isinstance(ev.get("args"), Mapping):
            name = ev["args"].get("name")
            if ev.get("name") == "process_name":
                procs[ev.get("pid")] = str(name)
            elif ev.get("name") == "thread_name" and isinstance(name, str):
                threads[(ev.get("pid"), ev.get("tid"))] = name
    machine = {pid for pid, n in procs.items() if n == "Machine View"}
    lane_of: dict[tuple[Any, Any], str] = {}
    pipe_threads: set[tuple[Any, Any]] = set()
    for (pid, tid), name in threads.items():
        if machine and pid not in machine:
            continue
        m = LANE_RE.match(name.strip())
        if m:
            lane_of[(pid, tid)] = f"{m.group(1).upper()}_{int(m.group(2))}"
        elif FAKE_RE.match(name.strip()):
            lane_of[(pid, tid)] = name.strip()  # kept by its own name; core PLACEHOLDER
        elif _PIPE_LANE_RE.match(name.strip()):
            pipe_threads.add((pid, tid))  # our chrome_trace's per-pipe detail of tasks read from their lanes
    if not any(LANE_RE.match(n) for n in lane_of.values()):
        raise Malformed("no thread named AIC_<i>, AIV_<i>, AICPU_<i> or CPU_<i> (thread_name metadata)")
    raws: list[Raw] = []
    elsewhere: dict[str, int] = defaultdict(int)  # X slices on threads that are no lane, by thread name
    seqs: list[int] = []
    slices: dict[tuple[Any, Any], _Slices] = defaultdict(_Slices)
    leaf_hashes: dict[str, int] = {}
    for i, ev in enumerate(events):
        where = f"event {i} (X {ev.get('name')!r})"
        if ev.get("ph") != "X":
            continue
        if (ev.get("pid"), ev.get("tid")) not in lane_of:
            if (ev.get("pid"), ev.get("tid")) not in pipe_threads:
                elsewhere[threads.get((ev.get("pid"), ev.get("tid")), f"pid {ev.get('pid')} tid {ev.get('tid')}")] += 1
            continue
        ts = to_num(get_field(ev, "ts", where), f"{where} ts")
        dur = to_num(get_field(ev, "dur", where), f"{where} dur")
        args = ev.get("args") if isinstance(ev.get("args"), Mapping) else {}
        hint = args.get("event-hint")
        m = _MERGED_NAME_RE.match(str(ev.get("name", "")))
        task: Any = args.get("taskId", args.get("task", _hint(hint, "TaskId")))
        if task is None and m:
            task = m.group(3)
        task_id = to_id(task, f"{where} taskId") if task is not None else f"#{len(raws)}"
        seq = to_int(args.get("seqNo", m.group(1) if m else 0), f"{where} seqNo")
        leaf_arg = args.get("leafIndex", args.get("leaf"))
        if leaf_arg is not None:
            leaf = to_int(leaf_arg, f"{where} leafIndex")
        else:
            lh = _hint(hint, "leafHash")
            leaf = leaf_hashes.setdefault(lh, len(leaf_hashes)) if lh is not None else -1
        coord = args.get("coord")
        coord_t = tuple(to_int(c, f"{where} coord") for c in coord) if isinstance(coord, list) else ()
        ready = args.get("ready")
        raws.append(Raw((seq, task_id), task_id, lane_of[(ev["pid"], ev["tid"])], ts, ts + dur, leaf, coord_t,
                         None if ready is None else to_num(ready, f"{where} ready")))
        seqs.append(seq)
        slices[(ev["pid"], ev["tid"])].add(ts, ts + dur, len(raws) - 1)
    for s in slices.values():
        s.freeze()
    # dependency flows: pair s and f by (cat, id), bind each to its slice
    ends: dict[tuple[Any, Any], dict[str, int]] = defaultdict(dict)
    unbound = 0
    for ev in events:
        ph = ev.get("ph")
        if ph not in ("s", "f") or "id" not in ev:
            continue
        th = slices.get((ev.get("pid"), ev.get("tid")))
        ts = ev.get("ts")
        k = th.bind(to_num(ts, "flow ts"), ph, ph == "s" or ev.get("bp") == "e") if th is not None else None
        if k is None:
            unbound += 1
            continue
        ends[(ev.get("cat"), ev["id"])][ph] = k
    unpaired = 0
    for pair in ends.values():
        if "s" in pair and "f" in pair:
            raws[pair["f"]].preds.append(raws[pair["s"]].key)
        else:
            unpaired += 1
    counters: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for ev in events:
        if ev.get("ph") == "C" and str(ev.get("name", "")).startswith("ReadyCount"):
            args = ev.get("args")
            if isinstance(args, Mapping) and args:
                value = args.get("value", next(iter(args.values())))
                counters[ev["name"]].append((to_num(ev.get("ts"), "counter ts"), to_num(value, "counter value")))
    _seq_names(raws, seqs)
    info = {"unbound_flow_endpoints": unbound, "unpaired_flows": unpaired} if unbound or unpaired else {}
    dropped = []
    if elsewhere:
        names = ", ".join(f"{n!r} ({c})" for n, c in sorted(elsewhere.items())[:5])
        more = f" and {len(elsewhere) - 5} more threads" if len(elsewhere) > 5 else ""
        dropped.append(f"{sum(elsewhere.values())} slices on threads that are no core lane: {names}{more}")
    if unbound:
        dropped.append(f"{unbound} flow arrow ends bind to no task slice (their dependencies are not imported)")
    if unpaired:
        dropped.append(f"{unpaired} flow arrows have a start or a finish only (not imported)")
    return build(source, "merged_swimlane", raws, list(lane_of.values()),
                  {k: sorted(v, key=lambda x: x[0]) for k, v in counters.items()}, info, dropped)


def load_merged_swimlane(path_or_doc: PathLike | Mapping[str, Json] | list[Json]) -> Swimlane:
    """A `merged_swimlane.json` (or any Chrome trace with AIC_/AIV_/AICPU_/CPU_ threads, such as our
    `chrome_trace`): one task per X slice on a core thread, task id from args `taskId` (or `task`,
    or the event name), preds from the flow arrows, ReadyCount counters kept."""
    source, doc = _source(path_or_doc, MERGED)
    return guard(source, _merged, source, doc)


# ---- tilefwk_L1_prof_data.json + dyn_topo.txt ------------------------------------------------------------

_L1_CORES = {"AIC": "AIC", "AIV": "AIV", "AI-CPU": "AICPU", "AICPU": "AICPU", "AI_CPU": "AICPU"}


TOPO_LAYOUTS = {  # successors' first column -> the header PyPTO wrote with it
    9: "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,successors",
    10: "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,successors",
    11: "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,staticSuccCount,successors",
}


def _succ_column(header: list[str] | None, rows: list[tuple[int, list[str]]]) -> int:
    """Where a dyn_topo row's successors start. The header names it (10, 11 or 12 columns: without
    wrapId, with it, with staticSuccCount too); without one, the older writers' empty cell before
    the successors (`…,psgId,,succ`) tells the layout; otherwise the newest layout."""
    if header is not None:
        names = [h.lower() for h in header]
        for i, h in enumerate(names):
            if h.startswith("successor"):
                return i
        raise Malformed(f"line 1: a header without a successors column ({','.join(header)}); "
                         f"expected one of: {' | '.join(TOPO_LAYOUTS.values())}")
    for col in (9, 10):
        if rows and all(len(c) > col and c[col] == "" for _, c in rows):
            return col
    return 11


def _topo_succs(path: Path) -> dict[tuple[int, str], list[str]]:
    """(seqNo, taskId) -> successor task ids, from dyn_topo.txt in any of its layouts."""
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        cells = [c.strip() for c in line.split(",")]
        if not line.strip():
            continue
        if not rows and header is None and not cells[0].lstrip("-").isdigit():
            header = cells
            continue
        rows.append((n, cells))
    col = _succ_column(header, rows)
    out: dict[tuple[int, str], list[str]] = {}
    for n, cells in rows:
        if len(cells) < col:
            raise Malformed(f"line {n} has {len(cells)} fields; a row of this layout has at least {col} "
                             f"({TOPO_LAYOUTS.get(col, ','.join(header or ()))})")
        seq = to_int(cells[0], f"line {n} seqNo")
        task = str(to_int(cells[1], f"line {n} taskId"))
        out.setdefault((seq, task), []).extend(str(to_int(c, f"line {n} successor")) for c in cells[col:] if c)
    return out


def _l1(source: str, data: Json, topo: Path | None, ticks_per_us: float) -> Swimlane:
    if ticks_per_us <= 0:
        raise Malformed(f"ticks_per_us must be positive, not {ticks_per_us}")
    cores = to_list(data, "the document")
    raws: list[Raw] = []
    seqs: list[int] = []
    lanes: list[str] = []
    for c, core in enumerate(cores):
        where = f"core {c}"
        kind = str(get_field(core, "coreType", where)).upper()
        if kind not in _L1_CORES:
            raise Malformed(f"{where} coreType {kind!r} (expected AIC, AIV or AI-CPU)")
        lane = f"{_L1_CORES[kind]}_{to_int(get_field(core, 'blockIdx', where), f'{where} blockIdx')}"
        lanes.append(lane)
        for k, t in enumerate(to_list(get_field(core, "tasks", where), f"{where} tasks")):
            w = f"{where} task {k}"
            seq = to_int(t.get("seqNo", 0), f"{w} seqNo") if isinstance(t, Mapping) else 0
            task = to_id(get_field(t, "taskId", w), f"{w} taskId")
            start = to_num(get_field(t, "execStart", w), f"{w} execStart") / ticks_per_us
            end = to_num(get_field(t, "execEnd", w), f"{w} execEnd") / ticks_per_us
            leaf = to_int(t.get("leafIndex", -1), f"{w} leafIndex")
            raws.append(Raw((seq, task), task, lane, start, end, leaf))
            seqs.append(seq)
    dropped: list[str] = []
    if topo is not None:
        try:
            succs = _topo_succs(topo)
        except Malformed as e:
            raise Malformed(f"{topo}: {e}") from None
        dropped = _topo_deps(raws, succs, topo.name)
    _seq_names(raws, seqs)
    return build(source, "tilefwk_L1_prof_data", raws, lanes, None, {"ticks_per_us": ticks_per_us}, dropped)


def _topo_deps(raws: list[Raw], succs: Mapping[tuple[int, str], list[str]], topo: str) -> list[str]:
    """Add the topology's dependencies to `raws`. A task the topology has and the profile lacks (PyPTO
    draws it on its "Fake Core" lane at made-up times) is bridged: a -> untimed -> b becomes a -> b,
    so the critical path still follows the file's order. Returns what could not be placed."""
    by_key = {r.key: r for r in raws}
    untimed = {k for k in succs if k not in by_key}
    unknown: set[tuple[int, str]] = set()  # named as a successor, but in neither file

    def timed_succs(key: tuple[int, str]) -> set[tuple[int, str]]:
        out: set[tuple[int, str]] = set()
        seen = {key}
        stack = [key]
        while stack:
            seq, task = stack.pop()
            for s in succs.get((seq, task), ()):
                nxt = (seq, s)
                if nxt in seen:
                    continue
                seen.add(nxt)
                if nxt in by_key:
                    out.add(nxt)
                elif nxt in succs:
                    stack.append(nxt)
                else:
                    unknown.add(nxt)
        return out

    bridged = 0
    for key in succs:
        if key not in by_key:
            continue
        direct = {(key[0], s) for s in succs[key]}
        for nxt in timed_succs(key):
            by_key[nxt].preds.append(key)
            bridged += nxt not in direct
    dropped = []
    if untimed:
        edges = sum(len(succs[k]) for k in untimed) + sum(1 for k in succs if k in by_key
                                                           for s in succs[k] if (k[0], s) in untimed)
        dropped.append(f"{len(untimed)} tasks of {topo} have no times in {L1_PROF} (PyPTO's Fake Core tasks): "
                       f"not imported; the {edges} dependencies through them are bridged ({bridged} added "
                       f"between the timed tasks they connect)")
    if unknown:
        dropped.append(f"{len(unknown)} successor ids in {topo} name no task of either file: those "
                       "dependencies are not imported")
    return dropped


def load_l1_prof(prof_path: PathLike, topo_path: PathLike | None = None,
                 ticks_per_us: float = TICKS_PER_US) -> Swimlane:
    """CANN PyPTO's `tilefwk_L1_prof_data.json` (cores with their tasks, times in counter ticks,
    `ticks_per_us` of them per µs) and, if given, `dyn_topo.txt` for the dependencies."""
    p = Path(prof_path)
    return guard(str(p), _l1, str(p), read_json(p), Path(topo_path) if topo_path is not None else None,
                  ticks_per_us)


# ---- chip_swimlane_records.json + deps.json (PyPTO 3.0) -----------------------------------------------------



def _chip(source: str, doc: Json, deps: Path | None, clock_hz: float | None) -> Swimlane:
    meta = get_field(doc, "metadata", "the document")
    clock = meta.get("clock_freq_hz", clock_hz) if isinstance(meta, Mapping) else clock_hz
    if clock is None:
        raise Malformed("metadata has no clock_freq_hz (pass clock_hz=… to read it anyway)")
    clock = to_num(clock, "metadata.clock_freq_hz")
    if clock <= 0:
        raise Malformed(f"metadata.clock_freq_hz is {clock}, not positive")
    per_us = clock / 1e6
    core_rows = to_list(doc.get("aicore_tasks", []), "aicore_tasks")
    cpu_rows = to_list(doc.get("aicpu_tasks", []), "aicpu_tasks")
    max_core = max((to_int(r[0], f"aicore_tasks row {k} core_id") for k, r in enumerate(core_rows)
                    if isinstance(r, list) and r), default=-1)
    num_cores = max(to_int(meta.get("num_cores", 0), "metadata.num_cores"), max_core + 1)
    lanes_of_cores = core_lanes(meta.get("core_types"), num_cores)
    raws: list[Raw] = []
    by_task: dict[str, list[Hashable]] = defaultdict(list)  # the runtime's task id -> its rows (one per block)
    by_reg: dict[str, list[Hashable]] = defaultdict(list)  # reg_task_id (aicore) / task id (aicpu) -> rows
    for k, row in enumerate(core_rows):
        what = f"aicore_tasks row {k}"
        if not isinstance(row, list) or len(row) < 5:
            raise Malformed(f"{what} is {row!r}, expected [core_id, task_id, reg_task_id, start_cycles, "
                             "end_cycles, …]")
        core = to_int(row[0], f"{what} core_id")
        if core < 0:
            raise Malformed(f"{what} core_id {core} is negative")
        task, reg = to_id(row[1], f"{what} task_id"), to_id(row[2], f"{what} reg_task_id")
        raws.append(Raw(("aicore", k), task, lanes_of_cores[core], to_num(row[3], f"{what} start_cycles") / per_us,
                         to_num(row[4], f"{what} end_cycles") / per_us))
        by_task[task].append(("aicore", k))
        by_reg[reg].append(("aicore", k))
    cpu_lanes = []
    for k, row in enumerate(cpu_rows):
        what = f"aicpu_tasks row {k}"
        if not isinstance(row, list) or len(row) < 4:
            raise Malformed(f"{what} is {row!r}, expected [core_id, task_id, dispatch_cycles, finish_cycles]")
        lane = f"AICPU_{to_int(row[0], f'{what} core_id')}"
        cpu_lanes.append(lane)
        reg = to_id(row[1], f"{what} task_id")
        raws.append(Raw(("aicpu", k), reg, lane, to_num(row[2], f"{what} dispatch_cycles") / per_us,
                         to_num(row[3], f"{what} finish_cycles") / per_us))
        by_reg[reg].append(("aicpu", k))

    def rows_of(ident: str) -> list[Hashable]:
        """The rows an edge's id names: an aicore task's every block, else the one row with that reg id."""
        if ident in by_task:
            return by_task[ident]
        found = by_reg.get(ident, [])
        return found if len(found) == 1 else []

    info: dict[str, Json] = {"clock_freq_hz": clock}
    dropped: list[str] = []
    if deps is not None:
        by_key = {r.key: r for r in raws}
        try:
            try:
                deps_doc = read_json(deps)
            except ValueError as e:
                raise Malformed(str(e)) from None
            edges = to_list(get_field(deps_doc, "edges", "the document"), "edges")
            unmatched = 0
            for k, e in enumerate(edges):
                preds = rows_of(to_id(get_field(e, "pred", f"edge {k}"), f"edge {k} pred"))
                succs = rows_of(to_id(get_field(e, "succ", f"edge {k}"), f"edge {k} succ"))
                if not preds or not succs:
                    unmatched += 1
                for s in succs:
                    by_key[s].preds.extend(preds)
        except Malformed as e:
            raise Malformed(f"{deps}: {e}") from None
        if unmatched:
            info["unmatched_edges"] = unmatched
            dropped.append(f"{unmatched} edges of {deps.name} name a task with no record in {CHIP_RECORDS} "
                           "(not imported)")
    # an id that an aicore task and an aicpu record share must still name tasks apart
    core_names = {r.name for r in raws if r.key[0] == "aicore"}
    for r in raws:
        if r.key[0] == "aicpu" and r.name in core_names:
            r.name = f"aicpu:{r.name}"
    return build(source, "chip_swimlane_records", raws, lanes_of_cores + cpu_lanes, None, info, dropped)


def load_chip_swimlane(records_path: PathLike, deps_path: PathLike | None = None,
                       clock_hz: float | None = None) -> Swimlane:
    """PyPTO 3.0's `chip_swimlane_records.json` (times in cycles of `metadata.clock_freq_hz`;
    `clock_hz` is used only when the file has none) and, if given, `deps.json` for the dependencies.
    An aicore row is `[core_id, task_id, reg_task_id, start, end, …]`: its lane is `<type>_<core_id>`
    and its name the runtime's task id (64-bit, e.g. 4294967296); a task of several blocks has one
    row per block, each bound by the task's edges. Edge ids are matched against the task ids, then
    against a reg_task_id (or aicpu task id) that names one row only."""
    p = Path(records_path)
    return guard(str(p), _chip, str(p), read_json(p), Path(deps_path) if deps_path is not None else None,
                  clock_hz)


# ---- any of them ------------------------------------------------------------------------------------------

def load_any(path: PathLike) -> Swimlane:
    """Whatever swimlane `path` holds, by content: our swimlane JSON, a Chrome trace (ours or
    merged_swimlane.json), tilefwk_L1_prof_data.json (with dyn_topo.txt beside it, if there),
    chip_swimlane_records.json (with deps.json beside it, if there). A directory is searched
    for those file names."""

    p = Path(path)
    records = dfx.records_in(p) if p.is_dir() else None
    if records is not None:  # chip swimlane records, here or in dfx_outputs/ (a build_output folder)
        return load_any(records)
    if p.is_dir():
        for name in (CHIP_RECORDS, L1_PROF, MERGED):
            if (p / name).exists():
                return load_any(p / name)
        raise ValueError(f"{p}: no {CHIP_RECORDS}, {L1_PROF} or {MERGED} in this directory")
    if p.name == DYN_TOPO:
        raise ValueError(f"{p}: a {DYN_TOPO} holds dependencies only; load {L1_PROF} (it is read beside it)")
    doc = read_json(p)
    if isinstance(doc, Mapping) and doc.get("schema") == SCHEMA:
        try:
            return Swimlane.from_json(doc)
        except (KeyError, TypeError, IndexError, ValueError) as e:
            raise ValueError(f"{p}: malformed swimlane ({type(e).__name__}: {e})") from None
    if (isinstance(doc, Mapping) and "traceEvents" in doc) or (
            isinstance(doc, list) and doc and isinstance(doc[0], Mapping) and "ph" in doc[0]):
        return load_merged_swimlane(p)
    if isinstance(doc, list) and all(isinstance(c, Mapping) and "coreType" in c for c in doc):
        topo = p.parent / DYN_TOPO
        return guard(str(p), _l1, str(p), doc, topo if topo.exists() else None, TICKS_PER_US)
    if dfx.is_dfx_records(doc):  # the runtime's own layout (chip_swimlane_level, aicpu rows joined to aicore)
        return dfx.load_dfx(p, doc=doc)
    if isinstance(doc, Mapping) and ("aicore_tasks" in doc or "aicpu_tasks" in doc):
        deps = p.parent / CHIP_DEPS
        return guard(str(p), _chip, str(p), doc, deps if deps.exists() else None, None)
    if isinstance(doc, Mapping) and "edges" in doc:
        raise ValueError(f"{p}: a deps.json holds dependencies only; load {CHIP_RECORDS} (it is read beside it)")
    raise ValueError(f"{p}: not a swimlane format this pypto reads (our swimlane JSON, a Chrome trace, "
                     f"{L1_PROF}, {CHIP_RECORDS})")


# ---- writers (cheap, and what lets the loaders be tested without hardware) ---------------------------------

def _per_core_index(sl: Swimlane) -> list[int]:
    """Each lane's index among the lanes of its core type (the number in its name when it has one)."""
    count: dict[str, int] = defaultdict(int)
    out = []
    for ln in sl.lanes:
        m = LANE_RE.match(ln.name)
        out.append(int(m.group(2)) if m and m.group(1).upper() == ln.core else count[ln.core])
        count[ln.core] += 1
    return out


def _successors(sl: Swimlane) -> dict[int, list[int]]:
    succ: dict[int, list[int]] = defaultdict(list)
    for t in sl.tasks:
        for p in t.preds:
            succ[p].append(t.id)
    return succ


def write_l1_prof(sl: Swimlane, directory: PathLike, ticks_per_us: float = TICKS_PER_US) -> tuple[Path, Path]:
    """Write `tilefwk_L1_prof_data.json` (times rounded to whole ticks) and `dyn_topo.txt` into
    `directory`; lanes of core AIC, AIV or AICPU only (the format has no CPU-thread cores)."""
    kinds = {"AIC": "AIC", "AIV": "AIV", "AICPU": "AI-CPU"}
    bad = sorted({ln.core for ln in sl.lanes} - set(kinds))
    if bad:
        raise ValueError(f"{L1_PROF} has AIC, AIV and AI-CPU cores only; this swimlane has {', '.join(bad)} lanes")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    per_lane: dict[int, list[LaneTask]] = defaultdict(list)
    for t in sl.tasks:
        per_lane[t.lane].append(t)
    cores = [{"blockIdx": idx, "coreType": kinds[ln.core],
              "tasks": [{"seqNo": 0, "leafIndex": t.leaf, "taskId": t.id, "execStart": round(t.start * ticks_per_us),
                         "execEnd": round(t.end * ticks_per_us)} for t in sorted(per_lane[i], key=lambda x: x.start)]}
             for i, (ln, idx) in enumerate(zip(sl.lanes, _per_core_index(sl)))]
    succ = _successors(sl)
    rows = [TOPO_HEADER]
    for t in sl.tasks:
        nxt = succ.get(t.id, [])
        rows.append(",".join(str(x) for x in (0, t.id, 0, 0, t.id, t.leaf, 0, kinds[sl.lanes[t.lane].core],
                                              max(t.leaf, 0), 0, len(nxt), *nxt)))
    prof, topo = d / L1_PROF, d / DYN_TOPO
    prof.write_text(json.dumps(cores, indent=1))
    topo.write_text("\n".join(rows) + "\n")
    return prof, topo


def write_chip_swimlane(sl: Swimlane, directory: PathLike, clock_hz: float = CLOCK_HZ) -> tuple[Path, Path]:
    """Write `chip_swimlane_records.json` (times in whole cycles at `clock_hz`; AIC/AIV lanes are
    aicore ids in lane order, so they read back as `<core>_<id>` with ids counted over both types;
    AICPU lanes aicpu ids; rows `[core_id, task_id, row on its core, start, end]`) and `deps.json`
    (edges by task id, as strings, as the runtime writes its 64-bit ids)."""
    bad = sorted({ln.core for ln in sl.lanes} - {"AIC", "AIV", "AICPU"})
    if bad:
        raise ValueError(f"{CHIP_RECORDS} has AI cores and AICPUs only; this swimlane has {', '.join(bad)} lanes")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    per_us = clock_hz / 1e6
    core_ids: dict[int, int] = {}
    cpu_ids: dict[int, int] = {}
    for i, ln in enumerate(sl.lanes):
        (cpu_ids if ln.core == "AICPU" else core_ids)[i] = len(cpu_ids if ln.core == "AICPU" else core_ids)
    core_types = [sl.lanes[i].core for i in core_ids]
    aicore, aicpu = [], []
    rows_on: dict[int, int] = defaultdict(int)
    for t in sorted(sl.tasks, key=lambda x: (x.start, x.id)):
        s, e = round(t.start * per_us), round(t.end * per_us)
        if t.lane in cpu_ids:
            aicpu.append([cpu_ids[t.lane], t.id, s, e])
        else:
            rows_on[t.lane] += 1
            aicore.append([core_ids[t.lane], t.id, rows_on[t.lane], s, e])
    records = {"metadata": {"clock_freq_hz": clock_hz, "num_cores": len(core_ids), "core_types": core_types},
               "aicore_tasks": aicore, "aicpu_tasks": aicpu}

    ids = {t.id for t in sl.tasks}
    deps = {"tasks": [{"task_id": str(t.id), "core": sl.lanes[t.lane].core} for t in sl.tasks], "tensors": [],
            "edges": [{"pred": str(p), "succ": str(t.id)} for t in sl.tasks for p in t.preds if p in ids]}
    rec, dep = d / CHIP_RECORDS, d / CHIP_DEPS
    rec.write_text(json.dumps(records))
    dep.write_text(json.dumps(deps))
    return rec, dep
