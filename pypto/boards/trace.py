"""Swimlanes as traces other tools open: Chrome Trace Event JSON, PyPTO's `merged_swimlane.json`, and text.

A swimlane is only useful where people look at it. Perfetto and chrome://tracing open Chrome
Trace Event JSON (`chrome_trace`); PyPTO users already have a viewer and scripts for
`merged_swimlane.json` (`merged_swimlane`, the same format in PyPTO's naming); agents and
LLMs read a few hundred lines of text better than a JSON blob (`text_trace`).

Both JSON exports put every time on an integer-nanosecond grid before writing it in µs:
Perfetto stores nanoseconds, and rounding start and end (never start and duration) keeps
the order of every pair of instants, so slices that touch or nest still do after the
viewer's conversion. Slices on one thread are clamped to be disjoint (a task that starts
before its core's previous task ended starts at that end, and says so in its args), so a
trace is valid even when the swimlane it came from is not. Flow arrows bind inside their
slices: an arrow leaves 1 ns before its producer's end and arrives at its consumer's start.

`validate_chrome_trace` is our own check of the format's rules (the PyPI `perfetto`
package downloads its trace processor at first use, which an offline machine cannot do).

Everything a CompileRecord adds (leaf names, source lines, operand regions) is optional and
guarded: a record that does not match the swimlane gives fewer args, never an exception.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pypto.boards.swimlane import PIPES, LaneTask, Swimlane, metrics, ready_counters
from pypto.compiler.pipeline import gc_paused
from pypto.ir.serialize import source_of_json, walk_graph_json

Json = Any

PID = 1  # the one process of a swimlane trace
TOL = 1e-6  # µs (1 ps): the validator's tolerance for float noise in ts + dur
FLOW_CAT = "dependency"
MERGED_FLOW_CAT = "machine-view-last-dep"
MERGED_PROCESS = "Machine View"
METADATA_NAMES = ("process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index")
PHASES = frozenset(("B", "E", "X", "i", "I", "C", "b", "n", "e", "O", "N", "D", "s", "t", "f", "P", "M", "V", "v",
                    "R", "c", "(", ")"))
_SORT_STRIDE = 32  # thread_sort_index: lane i at 32*i, its pipe sub-lanes just after it
_PLUMBING = ("load", "store")  # tile ops left out of a leaf's label


paused_gc = gc_paused  # a 100k-task trace is 10^6 small acyclic dicts: collecting while building costs more


# ---- time grid ----------------------------------------------------------------------------------

def _ns(us: float) -> int:
    return round(us * 1000.0)


def _us(ns: int) -> float:
    return ns / 1000.0


def _disjoint(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans (ns) on one thread made pairwise disjoint (touching is allowed): a span that starts
    before the previous one ended starts at that end (and never ends before it starts)."""
    out = list(spans)
    last = None
    for i in sorted(range(len(spans)), key=lambda k: (spans[k][0], spans[k][1], k)):
        s, e = spans[i]
        if last is not None and s < last:
            s = last
            e = max(e, s)
        out[i] = (s, e)
        last = e if last is None else max(last, e)
    return out


def _lane_spans(sl: Swimlane) -> dict[int, tuple[int, int]]:
    """Task id -> (start, end) in ns, disjoint per lane."""
    per_lane: dict[int, list[LaneTask]] = defaultdict(list)
    for t in sl.tasks:
        per_lane[t.lane].append(t)
    out: dict[int, tuple[int, int]] = {}
    for ts in per_lane.values():
        fitted = _disjoint([(_ns(t.start), _ns(t.end)) for t in ts])
        out.update({t.id: f for t, f in zip(ts, fitted)})
    return out


def _flow_points(producer: tuple[int, int], consumer: tuple[int, int]) -> tuple[int, int] | None:
    """(s, f) instants in ns for an arrow from `producer` to `consumer`: s inside the producer's slice
    (1 ns before its end, or at its start if shorter), f at the consumer's start; None when the
    consumer starts before the producer does (the arrow would point back in time)."""
    ps, pe = producer
    cs = consumer[0]
    s = max(ps, min(pe - 1, cs))
    return None if s > cs else (s, cs)


def _counters(sl: Swimlane) -> Mapping[str, Sequence[tuple[float, float]]]:
    """The board's counters; derived from the boxes (`ready_counters`) when it recorded none."""
    return sl.counters or ready_counters(sl.tasks, sl.lanes)


# ---- what a CompileRecord adds --------------------------------------------------------------------

class _RecordView:
    """Leaf names, source lines and operand regions of a record's tasks, computed once and guarded:
    anything the record lacks (no execute stage, a task id it does not have) is simply absent.

    `record` is a `CompileRecord` or its JSON (`CompileRecord.to_json()`, as a server keeps it):
    the JSON is read directly — parsing a 64k-task record back into objects takes seconds, and a
    trace needs only these few columns."""

    def __init__(self, record: Any | None) -> None:
        self.record = record
        self.kernel = ""
        self.leaf_labels: dict[int, str] = {}
        self.leaf_hashes: dict[int, str] = {}
        self._op_node: dict[int, int] = {}
        self._sub_ops: list[Sequence[int]] = []  # subgraph id -> its tile op ids
        self._tasks: dict[int, tuple[int, int, Sequence[Any], Sequence[Any]]] = {}  # id -> subgraph, root, r, w
        self._roots: dict[int, int] = {}  # root id -> its index
        self._buffers: list[str] = []
        self._nodes: dict[int, Any] | None = None  # JSON records: node id -> node JSON (source lookup)
        self._node_sources: dict[int, list[str]] = {}
        self._sources: dict[int, list[str]] = {}  # subgraph -> source lines
        if record is None:
            return
        try:
            if isinstance(record, Mapping):
                self._from_json(record)
            else:
                self._from_record(record)
        except Exception:  # noqa: BLE001 - a partial record still gives what it has
            pass

    def _from_record(self, record: Any) -> None:
        self.kernel = str(record.source.kernel)
        p = record.program
        op_name = {o.id: o.op for o in p.tiles.ops}
        self._op_node = {o.id: o.node for o in p.tiles.ops}
        self._sub_ops = [sg.ops for sg in p.subgraphs]
        self._buffers = [b.name for b in p.tiles.buffers]
        self._roots = {r: k for k, r in enumerate(p.execute.roots)}
        self._tasks = {t.id: (t.subgraph, t.root, t.reads, t.writes) for t in p.execute.tasks}
        self._leaves([(lf.id, lf.hash, lf.template) for lf in p.leaves], op_name)

    def _from_json(self, doc: Mapping[str, Any]) -> None:
        self.kernel = str(doc.get("source", {}).get("kernel", ""))
        ops = doc["tiles"]["ops"]
        op_name = dict(zip(ops["id"], ops["op"]))
        self._op_node = dict(zip(ops["id"], ops["node"]))
        self._sub_ops = [sg["ops"] for sg in doc["subgraphs"]]
        self._buffers = [b["name"] for b in doc["tiles"]["buffers"]]
        ex = doc["execute"]
        self._roots = {r: k for k, r in enumerate(ex["roots"])}
        self._tasks = {t["id"]: (t["subgraph"], t["root"], t["reads"], t["writes"]) for t in ex["tasks"]}
        self._leaves([(lf["id"], lf["hash"], lf["template"]) for lf in doc["leaves"]], op_name)
        # CompileRecord.source_of on the JSON: the final graph's nodes win, then the latest snapshot's
        nodes: dict[int, Any] = {}
        graphs = [p["snapshot"]["graph"] for p in reversed(doc.get("passes") or ())
                  if isinstance(p.get("snapshot"), Mapping) and p["snapshot"].get("graph")]
        if isinstance(doc.get("traced"), Mapping) and doc["traced"].get("graph"):
            graphs.append(doc["traced"]["graph"])
        for g in [doc["graph"], *graphs]:
            for n in walk_graph_json(g):
                nodes.setdefault(n["id"], n)
        self._nodes = nodes

    def _leaves(self, leaves: Sequence[tuple[int, Any, int]], op_name: Mapping[int, str]) -> None:
        for leaf, digest, template in leaves:
            self.leaf_hashes[leaf] = str(digest)
            names: list[str] = []
            for oid in self._sub_ops[template]:
                op = op_name[oid]
                if op not in _PLUMBING and op not in names:
                    names.append(op)
            label = "+".join(names[:3]) + ("+…" if len(names) > 3 else "")
            self.leaf_labels[leaf] = label or "copy"

    def leaf_name(self, leaf: int) -> str:
        label = self.leaf_labels.get(leaf)
        return f"leaf{leaf}:{label}" if label else f"leaf{leaf}"

    def subgraph_of(self, task_id: int) -> int | None:
        task = self._tasks.get(task_id)
        return None if task is None else task[0]

    def sources(self, task_id: int) -> list[str]:
        """`file:line` of the user lines task `task_id` runs (`record.source_of_task`, memoized per subgraph)."""
        sub = self.subgraph_of(task_id)
        if sub is None:
            return []
        hit = self._sources.get(sub)
        if hit is None:
            try:
                nodes = sorted({self._op_node[o] for o in self._sub_ops[sub]})
            except Exception:  # noqa: BLE001
                nodes = []
            hit = []
            for n in nodes:
                for line in self._node_lines(n):
                    if line not in hit:
                        hit.append(line)
            self._sources[sub] = hit
        return hit

    def _node_lines(self, node: int) -> list[str]:
        hit = self._node_sources.get(node)
        if hit is None:
            try:
                if self._nodes is not None:
                    hit = list(dict.fromkeys(f"{s['file']}:{s['line']}" for s in source_of_json(self._nodes, node)))
                else:
                    hit = list(dict.fromkeys(f"{s.file}:{s.line}" for s in self.record.source_of(node)))
            except Exception:  # noqa: BLE001
                hit = []
            self._node_sources[node] = hit
        return hit

    def operands(self, task_id: int) -> tuple[str, str]:
        """The GM regions a task reads and writes, as `name[a:b, c:d]` lists."""
        task = self._tasks.get(task_id)
        if task is None:
            return "", ""
        try:
            return self._regions(task[2]), self._regions(task[3])
        except Exception:  # noqa: BLE001
            return "", ""

    def _regions(self, regions: Sequence[Any]) -> str:
        parts = []
        for r in regions:
            buffer, offset, shape = (r[0], r[2], r[3]) if isinstance(r, (list, tuple)) else (r.buffer, r.offset,
                                                                                            r.shape)
            parts.append(f"{self._buffers[buffer]}[" + ", ".join(f"{o}:{o + n}" for o, n in zip(offset, shape)) + "]")
        return "; ".join(parts)

    def root_index(self, task_id: int) -> int:
        task = self._tasks.get(task_id)
        return 0 if task is None else self._roots.get(task[1], 0)


def leaf_names(record: Any | None) -> tuple[Callable[[int], str], Callable[[int], list[str]]]:
    """(leaf name, source lines of a task) as the text trace names them: `leaf3:amax+combine+sub+…` and
    `file:line` strings (`pypto.analysis.agent.run_view` keys its per-leaf figures by these)."""
    view = _RecordView(record)
    return view.leaf_name, view.sources


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# ---- Chrome Trace Event JSON ------------------------------------------------------------------------

def _metadata(name: str, tid: int | None, value: Json) -> dict[str, Json]:
    key = "sort_index" if name.endswith("sort_index") else "name"
    ev: dict[str, Json] = {"ph": "M", "name": name, "pid": PID, "args": {key: value}}
    if tid is not None:
        ev["tid"] = tid
    return ev


def _lane_threads(sl: Swimlane) -> list[dict[str, Json]]:
    out = []
    for i, lane in enumerate(sl.lanes):
        out.append(_metadata("thread_name", i + 1, lane.name))
        out.append(_metadata("thread_sort_index", i + 1, i * _SORT_STRIDE))
    return out


def _flows(sl: Swimlane, spans: Mapping[int, tuple[int, int]], cat: str) -> list[dict[str, Json]]:
    """One s/f pair per dependency edge, ids 1, 2, … in (consumer, producer) order."""
    out: list[dict[str, Json]] = []
    lane_of = {t.id: t.lane for t in sl.tasks}
    fid = 0
    for t in sl.tasks:
        for p in t.preds:
            if p not in spans or p == t.id:
                continue
            points = _flow_points(spans[p], spans[t.id])
            if points is None:
                continue
            fid += 1
            common = {"id": fid, "name": "dep", "cat": cat, "pid": PID}
            out.append({"ph": "s", **common, "tid": lane_of[p] + 1, "ts": _us(points[0])})
            out.append({"ph": "f", "bp": "e", **common, "tid": t.lane + 1, "ts": _us(points[1])})
    return out


def _counter_events(sl: Swimlane, t0: float = 0.0) -> list[dict[str, Json]]:
    out = []
    for name, series in _counters(sl).items():
        for ts, value in series:
            if isinstance(value, (int, float)) and math.isfinite(value) and math.isfinite(ts):
                out.append({"ph": "C", "name": name, "pid": PID, "ts": _us(_ns(ts - t0)), "args": {"value": value}})
    return out


def _pipe_events(sl: Swimlane, first_tid: int) -> list[dict[str, Json]]:
    """Per-pipe sub-lanes: thread `<lane>.<pipe>` sorted just below its lane, one slice per busy interval."""
    spans: dict[tuple[int, str], list[tuple[int, int, int]]] = defaultdict(list)
    profiles, isfinite = sl.pipe_profiles, math.isfinite
    for t in sl.tasks:  # Swimlane.pipes(t) and _ns, inlined: 64k tasks × pipes × intervals
        try:
            if t.profile < 0:
                continue
            prof = profiles[t.profile]
        except (IndexError, TypeError):
            continue
        start, d = t.start, t.duration
        for pipe, fractions in prof.items():
            for a, b in fractions:
                x, y = start + a * d, start + b * d
                if isfinite(x) and isfinite(y):
                    spans[(t.lane, pipe)].append((round(x * 1000.0), round(y * 1000.0), t.id))
    order = {p: k for k, p in enumerate(PIPES)}
    keys = sorted(spans, key=lambda k: (k[0], order.get(k[1], len(PIPES)), k[1]))
    out: list[dict[str, Json]] = []
    rank: dict[int, int] = defaultdict(int)
    for n, (lane, pipe) in enumerate(keys):
        tid = first_tid + n
        rank[lane] += 1
        out.append(_metadata("thread_name", tid, f"{sl.lanes[lane].name}.{pipe}"))
        out.append(_metadata("thread_sort_index", tid, lane * _SORT_STRIDE + min(rank[lane], _SORT_STRIDE - 1)))
        items = spans[(lane, pipe)]
        for (s, e), (_, _, task) in zip(_disjoint([(s, e) for s, e, _ in items]), items):
            out.append({"ph": "X", "name": pipe, "cat": "pipe", "pid": PID, "tid": tid, "ts": s / 1000.0,
                        "dur": (e - s) / 1000.0, "args": {"task": task}})
    return out


@paused_gc()
def chrome_trace(sl: Swimlane, record: Any | None = None, pipes: bool = True) -> dict[str, Json]:
    """The swimlane as Chrome Trace Event JSON (Perfetto, chrome://tracing): one thread per lane,
    one slice per task, flow arrows for dependencies, the ready counters, and (`pipes`, sim board)
    one sub-lane per pipe of each core. `record` adds leaf names and source lines."""
    view = _RecordView(record)
    spans = _lane_spans(sl)
    events: list[dict[str, Json]] = [_metadata("process_name", None, f"{sl.board}: {sl.clock}"),
                                     _metadata("process_sort_index", None, 0), *_lane_threads(sl)]
    for t in sl.tasks:
        s, e = spans[t.id]
        base = view.leaf_name(t.leaf) if t.leaf >= 0 else (t.name or "task")
        args: dict[str, Json] = {"task": t.id, "leaf": t.leaf, "coord": list(t.coord), "preds": list(t.preds),
                                 "ready": None if t.ready is None else round(t.ready, 6)}
        if t.name:
            args["name"] = t.name
        if (s, e) != (_ns(t.start), _ns(t.end)):
            args["clamped_from"] = [round(t.start, 6), round(t.end, 6)]
        if record is not None:
            src = view.sources(t.id)
            if src:
                args["source"] = src
        if t.held:  # a MIX task: on its cluster's AIC lane, and the same slice on the AIV lanes it holds
            args["core"] = "MIX"
            args["held"] = [sl.lanes[h].name for h in t.held]
        events.append({"ph": "X", "name": f"{base} #{t.id}", "cat": "MIX" if t.held else sl.lanes[t.lane].core,
                       "pid": PID, "tid": t.lane + 1, "ts": _us(s), "dur": _us(e - s), "args": args})
        for h in t.held:
            events.append({"ph": "X", "name": f"{base} #{t.id} (MIX)", "cat": "MIX", "pid": PID, "tid": h + 1,
                           "ts": _us(s), "dur": _us(e - s),
                           "args": {"task": t.id, "core": "MIX", "held_by": sl.lanes[t.lane].name}})
    events += _flows(sl, spans, FLOW_CAT)
    events += _counter_events(sl)
    if pipes and sl.pipe_profiles:
        events += _pipe_events(sl, len(sl.lanes) + 1)
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"board": sl.board, "clock": sl.clock, "tasks": len(sl.tasks)}}


# ---- PyPTO merged_swimlane.json ----------------------------------------------------------------------

@paused_gc()
def merged_swimlane(sl: Swimlane, record: Any | None = None) -> dict[str, Json]:
    """The swimlane as PyPTO's `merged_swimlane.json`: process "Machine View", one thread per core,
    one slice per task named `<seq>-<func>-<op>-<rootIndex>-<psgId>(<label>)` with PyPTO's hint args,
    dependency flows and ReadyCount counters. Without a record, hashes and labels are placeholders.
    Besides PyPTO's args each slice carries `leafIndex`, `coord` and `ready` (so it reads back whole)."""
    view = _RecordView(record)
    spans = _lane_spans(sl)
    events: list[dict[str, Json]] = [_metadata("process_name", None, MERGED_PROCESS), *_lane_threads(sl)]
    func_prefix = f"{view.kernel}_" if view.kernel else ""
    for t in sl.tasks:
        s, e = spans[t.id]
        sub = view.subgraph_of(t.id)
        root = view.root_index(t.id)
        psg = sub if sub is not None else max(t.leaf, 0)
        func = f"{func_prefix}leaf{t.leaf}" if t.leaf >= 0 else "task"
        label = view.leaf_labels.get(t.leaf) or t.name or "task"
        leaf_hash = view.leaf_hashes.get(t.leaf, f"leaf{t.leaf}")
        root_hash = _short_hash(f"{view.kernel}:root{root}") if record is not None else f"root{root}"
        reads, writes = view.operands(t.id)
        args: dict[str, Json] = {
            "event-hint": f"rootHash:{root_hash}, callOpMagic:{t.id}, leafHash:{leaf_hash}, TaskId:{t.id}",
            "ioperand-hint": reads, "ooperand-hint": writes,
            "execution-hint": f"core {sl.lanes[t.lane].name}, start {t.start:.3f} us, end {t.end:.3f} us, "
                              f"duration {t.duration:.3f} us",
            "taskId": t.id, "seqNo": 0, "leafIndex": t.leaf, "coord": list(t.coord),
            "ready": None if t.ready is None else round(t.ready, 6)}
        if record is not None:
            src = view.sources(t.id)
            if src:
                args["source"] = src
        events.append({"ph": "X", "name": f"0-{func}-{t.id}-{root}-{psg}({label})", "cat": "task", "pid": PID,
                       "tid": t.lane + 1, "ts": _us(s), "dur": _us(e - s), "args": args})
    events += _flows(sl, spans, MERGED_FLOW_CAT)
    events += _counter_events(sl)
    return {"traceEvents": events, "displayTimeUnit": "ns"}


# ---- validation ---------------------------------------------------------------------------------------

def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_id(v: Any) -> bool:
    return (isinstance(v, (int, str))) and not isinstance(v, bool)


def _check_event(i: int, ev: Mapping[str, Any]) -> list[str]:
    """Field rules of one event (by phase)."""
    ph = ev.get("ph")
    where = f"event {i} (ph {ph!r}, name {ev.get('name')!r})"
    if ph not in PHASES:
        return [f"{where}: unknown phase"]
    out = []

    def need(*keys: str) -> None:
        out.extend(f"{where}: missing {k!r}" for k in keys if k not in ev)

    if ph == "X":
        need("name", "ts", "dur", "pid", "tid")
        if "dur" in ev and not (_finite(ev["dur"]) and ev["dur"] >= 0):
            out.append(f"{where}: dur {ev['dur']!r} is not a finite number >= 0")
    elif ph == "M":
        need("name", "pid")
        name, args = ev.get("name"), ev.get("args")
        if name not in METADATA_NAMES:
            out.append(f"{where}: unknown metadata name (known: {', '.join(METADATA_NAMES)})")
        elif not isinstance(args, Mapping):
            out.append(f"{where}: missing 'args'")
        elif name.endswith("_name") and not isinstance(args.get("name"), str):
            out.append(f"{where}: args.name must be a string")
        elif name.endswith("sort_index") and not _finite(args.get("sort_index")):
            out.append(f"{where}: args.sort_index must be a number")
        if str(name).startswith("thread_") and "tid" not in ev:
            out.append(f"{where}: missing 'tid'")
    elif ph == "C":
        need("name", "ts")
        args = ev.get("args")
        if not isinstance(args, Mapping) or not args:
            out.append(f"{where}: a counter needs args with at least one value")
        else:
            out.extend(f"{where}: counter value {k!r} = {v!r} is not a finite number"
                       for k, v in args.items() if not _finite(v))
    elif ph in ("s", "t", "f"):
        need("id", "ts", "pid", "tid", "cat", "name")
        if "id" in ev and not _is_id(ev["id"]):
            out.append(f"{where}: id {ev['id']!r} is not an int or string")
        if "bp" in ev and (ph != "f" or ev["bp"] != "e"):
            out.append(f"{where}: 'bp' is only allowed on 'f' events, as \"e\"")
    if "ts" in ev and not _finite(ev["ts"]):
        out.append(f"{where}: ts {ev['ts']!r} is not a finite number")
    for k in ("pid", "tid"):
        if k in ev and not _is_id(ev[k]):
            out.append(f"{where}: {k} {ev[k]!r} is not an int or string")
    return out


class _Thread:
    """The slices of one (pid, tid), sorted by start, with a running max of ends for containment queries."""

    def __init__(self, slices: list[tuple[float, float]]) -> None:
        slices.sort()
        self.starts = [s for s, _ in slices]
        self.max_end: list[float] = []
        m = -math.inf
        for _, e in slices:
            m = max(m, e)
            self.max_end.append(m)

    def encloses(self, ts: float) -> bool:
        k = bisect.bisect_right(self.starts, ts + TOL)
        return k > 0 and self.max_end[k - 1] >= ts - TOL

    def starts_after(self, ts: float) -> bool:
        return bool(self.starts) and self.starts[-1] >= ts - TOL


@paused_gc()
def validate_chrome_trace(doc: Any) -> list[str]:
    """Problems with a Chrome Trace Event JSON document (empty: valid): fields per phase, finite
    numeric times, slices on one thread nested or disjoint, flows paired (one s, then one f, per
    (cat, name, id)) and bound inside a slice of their thread, numeric counters."""
    if isinstance(doc, Mapping):
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            return ["'traceEvents' is missing or not a list"]
        unit = doc.get("displayTimeUnit", "ms")
        problems = [] if unit in ("ms", "ns") else [f"displayTimeUnit {unit!r} is not 'ms' or 'ns'"]
    elif isinstance(doc, list):
        events, problems = doc, []
    else:
        return [f"a trace is a JSON object or array, not {type(doc).__name__}"]
    slices: dict[tuple[Any, Any], list[tuple[float, float, int]]] = defaultdict(list)
    flows: dict[tuple[Any, Any, Any], list[tuple[str, int, Mapping[str, Any]]]] = defaultdict(list)
    for i, ev in enumerate(events):
        if not isinstance(ev, Mapping):
            problems.append(f"event {i}: not a JSON object")
            continue
        bad = _check_event(i, ev)
        problems += bad
        if bad:
            continue
        if ev["ph"] == "X":
            slices[(ev["pid"], ev["tid"])].append((float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]), i))
        elif ev["ph"] in ("s", "t", "f"):
            flows[(ev["cat"], ev["name"], ev["id"])].append((ev["ph"], i, ev))
    # nesting per thread
    for (pid, tid), items in slices.items():
        items.sort(key=lambda x: (x[0], -x[1], x[2]))
        stack: list[tuple[float, int]] = []
        for s, e, i in items:
            while stack and stack[-1][0] <= s + TOL:
                stack.pop()
            if stack and e > stack[-1][0] + TOL:
                problems.append(f"event {i} (X on pid {pid!r} tid {tid!r}, {s}..{e}) overlaps event "
                                f"{stack[-1][1]} (ends {stack[-1][0]}) without nesting in it")
                continue
            stack.append((e, i))
    # flows: paired, ordered, bound
    threads = {k: _Thread([(s, e) for s, e, _ in v]) for k, v in slices.items()}
    for (cat, name, fid), items in flows.items():
        phases = [ph for ph, _, _ in items]
        where = f"flow id {fid!r} (cat {cat!r}, name {name!r})"
        if phases.count("s") != 1 or phases.count("f") != 1:
            problems.append(f"{where}: {phases.count('s')} 's' and {phases.count('f')} 'f' events (need one each)")
            continue
        s_ev = next(ev for ph, _, ev in items if ph == "s")
        f_ev = next(ev for ph, _, ev in items if ph == "f")
        if s_ev["ts"] > f_ev["ts"] + TOL:
            problems.append(f"{where}: starts at {s_ev['ts']} after it finishes at {f_ev['ts']}")
        for ph, i, ev in items:
            th = threads.get((ev["pid"], ev["tid"]))
            ts = float(ev["ts"])
            bound = th is not None and (th.encloses(ts) or (ph == "f" and ev.get("bp") != "e" and th.starts_after(ts)))
            if not bound:
                problems.append(f"{where}: its '{ph}' (event {i}, ts {ts}) is not inside a slice of "
                                f"pid {ev['pid']!r} tid {ev['tid']!r}")
    return problems


# ---- text -------------------------------------------------------------------------------------------------

def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


# The most characters `text_trace` returns by default, whatever the run's size: ~16k tokens, what an agent
# can read in one go. Past it, whole lines are dropped from the lanes' part and a last line says how many.
TEXT_TRACE_MAX_CHARS = 64_000


def _lane_wanted(lane: Any, index: int, lanes: Sequence[str | int] | None) -> bool:
    """Whether a lane is asked for: by its index, its name (`AIV_3`) or its core type (`AIV`: every AIV lane)."""
    if lanes is None:
        return True
    return any(x == index if isinstance(x, int) else (x == lane.name or x == lane.core) for x in lanes)


@paused_gc()
def text_trace(sl: Swimlane, record: Any | None = None, max_tasks_per_lane: int = 20,
               lanes: Sequence[str | int] | None = None, window: tuple[float, float] | None = None,
               max_chars: int = TEXT_TRACE_MAX_CHARS) -> str:
    """The swimlane as text, for agents (the MCP tool `swimlane_text`, `pypto-ide profile --text`, serve's
    `trace.txt`): one trace, read by a person in the swimlane panel and by an agent here.

    Order: a header with the figures a tuner reads first (tasks, lanes, makespan, utilization per core
    type, the critical path as task ids, idle time, the critical path as source lines), the leaves (count, times, source
    lines), then each lane with a task in the window, in the board's lane order: `NAME: utilization U,
    N tasks`, then its tasks by start time, `#id leaf start–end µs (duration) file:line` — at most
    `max_tasks_per_lane`, then `… N more`. `lanes` keeps the lanes named (index, name such as `AIV_3`, or
    core type such as `AIV`); `window=(t0, t1)` keeps the tasks that overlap [t0, t1] µs, and a lane's
    utilization is then its busy share of the window.

    Size: at most `max_chars` characters (default `TEXT_TRACE_MAX_CHARS`, whatever the run's size; 0: no
    bound): past it, the last lines are dropped and `… truncated: N more lines (narrow with lanes= or
    window=)` ends the text. The header and leaves come first, so they are kept before any lane."""
    view = _RecordView(record)
    m = metrics(sl)
    cores: dict[str, int] = defaultdict(int)
    for ln in sl.lanes:
        cores[ln.core] += 1
    with_record = record is not None
    crit_lines: list[str] = []
    if with_record:
        for t in m.critical_path:
            for src in view.sources(t)[:1]:
                short = os.path.basename(src)
                if not crit_lines or crit_lines[-1] != short:
                    crit_lines.append(short)
    lines = [f"swimlane: board {sl.board}; clock {sl.clock}",
             f"{_n(len(sl.tasks), 'task')} on {_n(len(sl.lanes), 'lane')} ("
             + ", ".join(f"{c} {n}" for c, n in cores.items()) + f"); makespan {m.makespan:.3f} µs",
             f"utilization {_pct(m.utilization)} ("
             + ", ".join(f"{c} {_pct(u)}" for c, u in m.core_utilization.items()) + f") {m.utilization_basis}",
             f"critical path {m.critical_path_us:.3f} µs = {_pct(m.critical_share)} of makespan, "
             f"{_n(len(m.critical_path), 'task')}: " + " → ".join(f"#{i}" for i in m.critical_path[:12])
             + (" → …" if len(m.critical_path) > 12 else "")]
    lines.append(f"idle lane time: waiting for dependencies {m.wait_dependency:.3f} µs, "
                 f"waiting for the scheduler {m.wait_scheduler:.3f} µs")
    if crit_lines:
        lines.append("critical path lines: " + " → ".join(crit_lines[:16]) + (" → …" if len(crit_lines) > 16 else ""))
    if sl.dropped:
        lines.append(f"not imported: {'; '.join(sl.dropped)}")
    if sl.ignored:
        lines.append(f"not followed: {'; '.join(sl.ignored)}")
    if m.leaves:
        lines.append("leaves:")
        first_task = {}
        for t in sl.tasks:
            first_task.setdefault(t.leaf, t.id)
        for st in m.leaves:
            name = view.leaf_name(st.leaf) if st.leaf >= 0 else "unknown leaf"
            src = view.sources(first_task[st.leaf]) if with_record else []
            where = f"  [{', '.join(os.path.basename(s) for s in src[:3])}{', …' if len(src) > 3 else ''}]" \
                if src else ""
            lines.append(f"  {name} ×{st.count}: avg {st.avg:.3f} µs (min {st.min:.3f}, max {st.max:.3f}), "
                         f"total {st.total:.3f} µs{where}")
    t0, t1 = (float(window[0]), float(window[1])) if window is not None else (0.0, m.makespan)
    per_lane: dict[int, list[LaneTask]] = defaultdict(list)
    for t in sl.tasks:
        if window is None or (t.end >= t0 and t.start <= t1):
            per_lane[t.lane].append(t)
    shown = [i for i, ln in enumerate(sl.lanes) if _lane_wanted(ln, i, lanes)]
    idle = [sl.lanes[i].name for i in shown if i not in per_lane]
    scope = ("" if lanes is None else f" {', '.join(str(x) for x in lanes)}") \
        + ("" if window is None else f" in {t0:.3f}–{t1:.3f} µs")
    lines.append(f"lanes{scope}:")
    span = max(t1 - t0, 1e-12)
    for i in shown:
        ln = sl.lanes[i]
        ts = sorted(per_lane.get(i, ()), key=lambda x: (x.start, x.id))
        if not ts:
            continue
        util = m.lane_utilization[i] if window is None else \
            sum(max(0.0, min(t.end, t1) - max(t.start, t0)) for t in ts) / span
        lines.append(f"{ln.name}: utilization {_pct(util)}, {_n(len(ts), 'task')}")
        for t in ts[:max_tasks_per_lane]:
            name = view.leaf_name(t.leaf) if t.leaf >= 0 else (t.name or "task")
            label = f" [{t.name}]" if t.name else ""  # an imported task's id in its file
            src = view.sources(t.id)[:1] if with_record else []
            where = f" {os.path.basename(src[0])}" if src else ""
            lines.append(f"  #{t.id} {name}{label} {t.start:.3f}–{t.end:.3f} µs ({t.duration:.3f}){where}")
        if len(ts) > max_tasks_per_lane:
            lines.append(f"  … {len(ts) - max_tasks_per_lane} more")
    if idle:
        lines.append(f"{len(idle)} idle lanes: {', '.join(idle[:8])}{', …' if len(idle) > 8 else ''}")
    return _bounded(lines, max_chars)


def _bounded(lines: list[str], max_chars: int) -> str:
    """The lines joined, each ending in a newline, in at most `max_chars` characters (0: no bound): the
    first lines that fit, then one that says how many were dropped."""
    text = "\n".join(lines) + "\n"
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    out: list[str] = []
    used = 0
    reserve = 80  # the closing line
    for k, line in enumerate(lines):
        if used + len(line) + 1 > max_chars - reserve:
            out.append(f"… truncated: {len(lines) - k} more lines (narrow with lanes= or window=)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out) + "\n"


# ---- files ----------------------------------------------------------------------------------------------

def write_trace(sl: Swimlane, path: str | os.PathLike[str], record: Any | None = None, fmt: str = "chrome") -> Path:
    """Write the swimlane as `fmt`: "chrome" (Chrome Trace Event JSON), "merged" (PyPTO's
    merged_swimlane.json) or "text"."""
    out = Path(path)
    if fmt == "chrome":
        out.write_text(json.dumps(chrome_trace(sl, record)))
    elif fmt == "merged":
        out.write_text(json.dumps(merged_swimlane(sl, record)))
    elif fmt == "text":
        out.write_text(text_trace(sl, record))
    else:
        raise ValueError(f"unknown trace format {fmt!r} (chrome, merged or text)")
    return out
