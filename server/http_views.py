"""What the HTTP API derives from one job's result: pass graphs, swimlane windows, task and node
details, exports.

A job's result is JSON made by a worker (the CompileRecord with its swimlane, the health
report, the tensor graph after each pass). Everything here is pure computation on that
JSON in the server process — `pypto.record.CompileRecord.from_json`, `pypto.boards.trace`,
`pypto.export` — and never runs user code. A result is stored as compact JSON bytes
(`store`, with a small task → source index so a click on a task needs no record parse) and
parsed on demand into a small cache (`Results`). Views keep their answers small: a graph
view collapses loop bodies unless asked to drill down, a swimlane window holds only the
tasks that overlap it (at most `limit`), and source locations are relative to the workspace.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from server.analyze import graphs_after_passes, panel_lists, record_lists
from server.http_safety import Refused
from server.jobs import Job
from server.panel_data import (
    PANEL_LEAVE_OUT,
    PANEL_ROWS,
    PANEL_TILE_OPS,
    dependency_cone,
    slowest_tasks,
    start_order,
    window_bins,
    window_counters,
    window_match,
    window_profiles,
    window_tasks,
)

EXPORTS: dict[str, str] = {
    "record": "the CompileRecord JSON (record.json)",
    "swimlane": "the swimlane JSON (swimlane.json)",
    "chrome": "Chrome Trace Event JSON for Perfetto / chrome://tracing (trace.json)",
    "merged": "PyPTO's merged_swimlane.json",
    "text": "a compact text trace (trace.txt)",
    "model-explorer": "Google Model Explorer graph JSON of a pass's tensor graph",
    "graphml": "GraphML of a pass's tensor graph (yEd, Gephi)",
    "dot": "Graphviz DOT of a pass's tensor graph",
    "program": "PyPTO's program.json of a pass's tensor graph",
    "html": "the self-contained HTML report (jobs with action 'report')",
}
Rel = Callable[[str], str]


# ---- the job's pieces -------------------------------------------------------------------------------

def result_of(job: Job) -> dict[str, Any]:
    if job.status != "done" or job.result is None:
        detail = f"job {job.id} is {job.status}"
        if job.failure:
            detail += f" ({job.failure['kind']}: {job.failure['message']})"
        raise Refused(409, detail + "; results exist once it is done")
    return job.result


def record_of(job: Job) -> None:
    """Refused (409) unless the job's record may be read: the job is done, or running with its record stored
    early (`early_record`: its interim answer, while the board checks the advice's tile shapes)."""
    if not (job.status == "running" and job.extra.get("early_record")):
        result_of(job)


def store(job: Job, result: dict[str, Any]) -> None:
    """Move the bulk of a worker's answer into the job as bytes (a record as Python objects takes about ten
    times its JSON size): the record (its document as compact JSON and its columns' .npz, as the
    worker sent them), its swimlane, the pass graphs, the HTML. With Python's collector paused, as `Results` parses:
    the run's lists are 10^6 small objects (glm's fused attention's job end: 10.9 -> 4.8 s, with the task index made
    on the first ask; 3.8 s with the run read from only its own arrays)."""
    from pypto.compiler.pipeline import gc_paused

    with gc_paused():
        _store(job, result)


def _store(job: Job, result: dict[str, Any]) -> None:
    rec = result.pop("record", None)
    columns = result.pop("record_columns", None)
    graphs = result.pop("pass_graphs", None)
    if graphs is not None:
        job.extra["pass_graphs"] = _dumps(graphs)
    if "listings" in result:  # (null: the compile did not reach the block stage)
        job.extra["listings"] = _dumps(result.pop("listings"))
    if rec is not None:
        job.extra["record"] = _dumps(rec)  # the document: its long lists are in record_columns
        if columns is not None:
            job.extra["record_columns"] = columns
        job.extra["passes"] = _dumps({"passes": rec["passes"], "graph": rec["graph"]})  # pass graphs, unparsed record
        # the run (the swimlane) is in the document and its columns: made as lists on the first ask (`Results.run`),
        # as JSON only for what writes it out (`run_bytes`: the history, a pin, the export); glm's fused attention's
        # job end made its 130 MB of JSON, 2.2 of its 3.1 s, for a history that keeps only figures at that size
        job.extra["has_run"] = rec.get("run") is not None
        # (the task index is made on the first ask, `Results.tasks`: 3 s of glm's fused attention's job end, for a
        # click no page makes)
    html = result.pop("html", None)
    if html is not None:
        job.extra["html"] = html.encode()


def task_index(rec: Mapping[str, Any], graphs: Mapping[str, Any] | None,
               arrays: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a click on a task asks, answerable without parsing the record back into objects: the
    tensor nodes each task runs (`sets[task_set[i]]` for task i of the execute graph) and each such
    node's source frames. Mirrors `CompileRecord.nodes_of_task` / `source_of` (a node without a
    location takes its `origin`'s, looked up in the final graph and every pass's graph). `rec` is the
    document with its columns' `arrays` (`read_npz`), or a record as lists: only the columns it reads
    (tile ops' ids and nodes, subgraphs' ids and ops, tasks' subgraphs) are decoded."""
    from pypto.ir.columns import expand, expand_key
    from pypto.ir.serialize import source_of_json

    arrays = arrays or {}
    ops = rec["tiles"]["ops"]
    node_of_op = dict(zip(expand(ops["id"], arrays), expand(ops["node"], arrays)))
    sgs = rec.get("subgraphs") or []
    subgraphs = dict(zip(expand_key(sgs, "id", arrays), expand_key(sgs, "ops", arrays)))
    sets: list[list[int]] = []
    set_of: dict[tuple[int, ...], int] = {}
    task_set: list[int] = []
    for sub in expand_key(rec["execute"]["tasks"], "subgraph", arrays):
        key = tuple(sorted({node_of_op[o] for o in subgraphs.get(sub, ()) if o in node_of_op}))
        if key not in set_of:
            set_of[key] = len(sets)
            sets.append(list(key))
        task_set.append(set_of[key])
    known: dict[int, Mapping[str, Any]] = {}  # the final graph's nodes win, then the latest pass's
    for g in [(graphs or {}).get("traced"), *((graphs or {}).get("passes") or ()), rec["graph"]]:
        if g is not None:
            known.update({n["id"]: n for n, _ in _walk(g)})

    used = {i for ids in sets for i in ids}
    return {"task_set": task_set, "sets": sets,
            "nodes": {str(i): {"id": i, "op": known[i]["op"], "name": known[i].get("name"),
                               "label": known[i].get("label"), "spans": source_of_json(known, i)}
                      for i in sorted(used) if i in known}}


def task_index_arrays(rec: Mapping[str, Any]) -> set[str]:
    """The arrays of the record's column file `task_index` reads (glm's fused attention: 1.8 s to read all)."""
    from pypto.ir.columns import array_names, key_array_names

    ops, sgs, tasks = rec["tiles"]["ops"], rec.get("subgraphs") or [], rec["execute"]["tasks"]
    return (array_names(ops["id"]) | array_names(ops["node"]) | key_array_names(sgs, "id")
            | key_array_names(sgs, "ops") | key_array_names(tasks, "subgraph"))


def stored_bytes(job: Job) -> int:
    """What a finished job's results take (computed once: they do not change)."""
    if "size" not in job.extra:
        job.extra["size"] = sum(len(v) for v in job.extra.values() if isinstance(v, bytes)) + len(
            json.dumps(job.result or {}))
    return int(job.extra["size"])


class Results:
    """Parsed forms of the stored results, for the most recently asked jobs only (parsing a large
    record takes a while and its objects are large): JSON documents and CompileRecords."""

    def __init__(self, docs: int = 6, records: int = 2, exports: int = 2, panels: int = 2) -> None:
        self._docs: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._records: OrderedDict[str, Any] = OrderedDict()
        self._exports: OrderedDict[tuple[str, str, str | None], tuple[bytes, str, str]] = OrderedDict()
        self._panels: OrderedDict[tuple[str, bool], bytes] = OrderedDict()
        self._sizes = {"docs": docs, "records": records, "exports": exports, "panels": panels}
        self._lock = threading.Lock()
        self._making: dict[tuple[int, Any], threading.Event] = {}  # (cache, key) -> set once a thread made it

    def _cached(self, cache: OrderedDict[Any, Any], key: Any, size: int, make: Callable[[], Any]) -> Any:
        """`make()`'s value for `key`, made once for the threads that ask while it is made (a page's windows, the
        history's copy of a run a window is making)."""
        from pypto.compiler.pipeline import gc_paused

        mark = (id(cache), key)
        while True:
            with self._lock:
                if key in cache:
                    cache.move_to_end(key)
                    return cache[key]
                busy = self._making.get(mark)
                if busy is None:
                    busy = self._making[mark] = threading.Event()
                    break
            busy.wait()  # then its value, or (it failed, or went already) made here
        try:
            with gc_paused():  # parsing makes millions of small acyclic objects: collecting meanwhile only slows it
                value = make()
            with self._lock:
                cache[key] = value
                while len(cache) > size:
                    cache.popitem(last=False)
            return value
        finally:
            with self._lock:
                self._making.pop(mark, None)
            busy.set()

    def blob(self, job: Job, key: str) -> bytes:
        """The stored bytes of `key`; "record" is the record as the lists version 1 had (`record_lists`), its
        JSON made on the first ask (the API's and the panels' shape)."""
        record_of(job)
        if key == "record" and "record_columns" in job.extra:
            lists = job.extra.get("record_lists")
            if lists is None:
                lists = job.extra["record_lists"] = _dumps(self.record(job))
            return lists  # type: ignore[no-any-return]
        data = job.extra.get(key)
        if data is None:
            if key in ("record", "passes"):
                err = (job.result or {}).get("error") or {}
                raise Refused(409, f"{job.kernel} did not compile: {err.get('message', 'no record')} "
                                   f"(line {err.get('line')})")
            if key == "pass_graphs":
                raise Refused(409, f"job {job.id} ran without pass snapshots; submit it with \"snapshots\": true")
            raise Refused(409, f"job {job.id} has no {key}")
        return data  # type: ignore[no-any-return]

    def doc(self, job: Job, key: str) -> Any:
        """The stored JSON `key` ("record", "passes", "pass_graphs") of a done job, parsed; the
        record as lists (`record_lists`)."""
        if key == "record" and "record_columns" in job.extra:
            data, cols = self._stored(job, "record"), job.extra["record_columns"]
            return self._cached(self._docs, (job.id, key), self._sizes["docs"],
                                lambda: record_lists(json.loads(data), cols))
        data = self.blob(job, key)
        return self._cached(self._docs, (job.id, key), self._sizes["docs"], lambda: json.loads(data))

    def _stored(self, job: Job, key: str) -> bytes:
        """The bytes stored under `key` as they are (the record: its document)."""
        record_of(job)
        data = job.extra.get(key)
        if data is None:
            return self.blob(job, key)  # refused as blob refuses it
        return data  # type: ignore[no-any-return]

    def record(self, job: Job) -> dict[str, Any]:
        return self.doc(job, "record")  # type: ignore[no-any-return]

    def panel_lists(self, job: Job) -> dict[str, Any]:
        """What `panel_record` needs of the job's record: the whole lists when they are cached already (or the
        record is small), else lists without the bulk a slim record leaves out, not cached
        (`server.analyze.panel_lists`)."""
        if "record_columns" in job.extra:
            with self._lock:
                cached = (job.id, "record") in self._docs
            if not cached:
                data, cols = self._stored(job, "record"), job.extra["record_columns"]
                lean = panel_lists(json.loads(data), cols, PANEL_LEAVE_OUT, PANEL_TILE_OPS,
                                   PANEL_ROWS)
                if lean is not None:
                    return lean  # type: ignore[no-any-return]
        return self.record(job)

    def run(self, job: Job, keep: bool = True) -> dict[str, Any]:
        """The job's run (its swimlane) as lists: from the record's document and only the run's arrays of its
        columns, not parsed from JSON (glm's fused attention, 1.05 M tasks: 0.67 s, against 1.1 s to parse it).
        `keep=False` (what writes it out once: the history's copy, a pin, the export): the cached one, or the one a
        window is making, else made and not cached (a 10^6-task run's lists are hundreds of MB, and the history
        copies every job's run, asked by a page or not)."""
        from pypto.compiler.pipeline import gc_paused
        from pypto.ir.columns import array_names, expand, read_npz

        data = self._stored(job, "record")
        key = (job.id, "run")

        def make() -> dict[str, Any]:
            run = json.loads(data).get("run")
            if run is None:
                raise Refused(409, f"job {job.id} has no run")
            cols = job.extra.get("record_columns")
            return expand(run, read_npz(cols, array_names(run)) if cols is not None else {})  # type: ignore[no-any-return]
        if not keep:
            with self._lock:
                shared = key in self._docs or (id(self._docs), key) in self._making
            if not shared:
                with gc_paused():
                    return make()
        return self._cached(self._docs, key, self._sizes["docs"], make)  # type: ignore[no-any-return]

    def tasks(self, job: Job) -> dict[str, Any]:
        """The job's task index (`task_index`), made on the first ask from the stored record, its columns and pass
        graphs, then kept with the latest documents."""
        from pypto.ir.columns import read_npz

        data = self._stored(job, "record")
        cols, graphs = job.extra.get("record_columns"), job.extra.get("pass_graphs")

        def make() -> dict[str, Any]:
            rec = json.loads(data)
            if rec.get("execute") is None or rec.get("tiles") is None:
                raise Refused(409, f"job {job.id} has no execute graph")
            return task_index(rec, json.loads(graphs) if graphs is not None else None,
                              read_npz(cols, task_index_arrays(rec)) if cols is not None else None)
        return self._cached(self._docs, (job.id, "tasks"), self._sizes["docs"], make)  # type: ignore[no-any-return]

    def swimlane(self, job: Job) -> Any:
        """The job's `pypto.boards.swimlane.Swimlane`."""
        from pypto.boards.swimlane import Swimlane

        run = self.run(job)
        return self._cached(self._docs, (job.id, "swimlane-object"), self._sizes["docs"],
                            lambda: Swimlane.from_json(run))

    def panel(self, job: Job, snapshots: bool, make: Callable[[], bytes]) -> bytes:
        """The JSON bytes of the record the panels are sent (`record?panel=true`), made once for the latest few
        asked: a page opened again, or a second page on the same job, is not made to wait again (glm's fused
        attention, 1.05 M tasks: its slim record, 76 MB, took 6-11 s to make)."""
        record_of(job)
        return self._cached(self._panels, (job.id, snapshots), self._sizes["panels"], make)  # type: ignore[no-any-return]

    def export(self, job: Job, fmt: str, which: str | None, make: Callable[[], tuple[bytes, str, str]]) \
            -> tuple[bytes, str, str]:
        """An export of a done job, made once (a job's results never change) for the latest few asked."""
        return self._cached(self._exports, (job.id, fmt, which), self._sizes["exports"],  # type: ignore[no-any-return]
                            make)

    def compiled(self, job: Job) -> Any:
        """The job's `pypto.record.CompileRecord` (for the source / node / task queries)."""
        from pypto.ir.columns import read_npz
        from pypto.record import CompileRecord

        data, cols = self._stored(job, "record"), job.extra.get("record_columns")
        return self._cached(self._records, job.id, self._sizes["records"],
                            lambda: CompileRecord.from_json(json.loads(data), read_npz(cols) if cols else None))


def span_out(span: Mapping[str, Any], rel: Rel) -> dict[str, Any]:
    return {**span, "file": rel(str(span.get("file", "")))}


# ---- the swimlane ---------------------------------------------------------------------------------

MAX_TASKS = 200_000  # tasks in one swimlane window answer (`limit`); more: the next `offset`
MAX_GRAPH_NODES = 20_000  # nodes in one graph answer (`limit`); more: the next `offset`


def graph_page(view: dict[str, Any], limit: int, offset: int) -> dict[str, Any]:
    """`limit` of a graph view's nodes from `offset` with the edges into them; `count`, `offset`,
    `next_offset` (null: the last page) and `truncated` say where the page sits."""
    nodes = view["nodes"]
    if offset > len(nodes):
        raise Refused(422, f"offset {offset} is past the view's {len(nodes)} nodes")
    page = nodes[offset:offset + limit]
    whole = len(page) == len(nodes)
    ids = {n["id"] for n in page}
    edges = view["edges"] if whole else [e for e in view["edges"] if e["to"] in ids]
    nxt = offset + len(page) if offset + len(page) < len(nodes) else None
    return {**view, "nodes": page, "edges": edges, "count": len(page), "offset": offset, "next_offset": nxt,
            "truncated": nxt is not None}


def swimlane_window(run: Mapping[str, Any], start: float | None, end: float | None, lanes: list[int] | None,
                    limit: int, offset: int = 0, max_boxes: int | None = None, bins: int = 200,
                    slowest: int = 0, pipes: bool = True, around: int | None = None, depth: int = 1,
                    match: list[list[int]] | None = None) -> dict[str, Any]:
    """The tasks overlapping [start, end] µs (default: the run's first start to last end) on `lanes` (all by
    default), in start order, at most `limit` from the `offset`-th (then `truncated`, and `next_offset` the next
    page's); counters clipped to the window (with the value in force at its start). With `max_boxes`, a window
    holding more tasks is answered with per-lane `bins` instead of its tasks and counters (`detail: "bins"`, as
    `pypto/swimlane`); `slowest`: the run's that many longest tasks, longest first, as task columns; `pipes=False`:
    not the run's pipe profiles but the page's tasks' own (their `profile` column renumbered); `around`: that task
    and its predecessors and successors to `depth` levels (`linked`); `match`: where the tasks of those id ranges
    are (`matched`, `matched_in_window`, `first_match`, and `match_bins` with bins)."""
    t = run["tasks"]
    n = len(t["id"])
    makespan = max(t["end"], default=0.0)
    lo = min(t["start"], default=0.0) if start is None else start
    hi = makespan if end is None else end
    if hi < lo:
        raise Refused(400, f"the window ends ({hi}) before it starts ({lo})")
    wanted = None if lanes is None else set(lanes)
    inside = window_tasks(t["start"], t["end"], lo, hi)
    held = t.get("held")  # a MIX task's other lanes: on a lane it holds, it is on that lane too
    pick = [k for k in inside if wanted is None or t["lane"][k] in wanted
            or (held is not None and not wanted.isdisjoint(held[k] or ()))]
    pick = start_order(pick, t["start"], t["id"])
    total = len(pick)
    binned: list[dict[str, Any]] = []
    detail = "boxes"
    if max_boxes is not None and total > max_boxes:
        detail = "bins"
        binned = [{"lane": lane, "start": a, "end": b, "busy": busy, "tasks": c}
                  for lane, a, b, busy, c in window_bins(pick, t["lane"], t["start"], t["end"], lo, hi, bins, held)
                  if wanted is None or lane in wanted]
        pick = []
    else:
        pick = pick[offset:offset + limit]
    nxt = offset + len(pick) if detail == "boxes" and offset + len(pick) < total else None
    counters = window_counters(run.get("counters") or {}, lo, hi) if detail == "boxes" else {}
    tasks = {key: [col[k] for k in pick] for key, col in t.items()}
    profiles = run.get("pipe_profiles", [])
    if not pipes:
        tasks["profile"], profiles = window_profiles(t.get("profile"), profiles, pick)
    out = {
        "board": run["board"], "clock": run["clock"], "time_unit": run.get("time_unit", "us"),
        "lanes": [{"index": i, **lane} for i, lane in enumerate(run["lanes"])],
        "window": {"start": lo, "end": hi}, "makespan_us": makespan, "total_tasks": n,
        "in_window": total, "count": len(pick), "truncated": nxt is not None, "offset": offset, "next_offset": nxt,
        "detail": detail, "tasks": tasks, "bins": binned,
        "counters": counters, "pipe_profiles": profiles,
        "metrics": {k: v for k, v in (run.get("metrics") or {}).items() if k not in ("critical_path", "leaves")},
    }
    box = ("id", "lane", "start", "end", "leaf")

    def columns(ks: Sequence[int], keys: Sequence[str] = (*box, "preds")) -> dict[str, Any]:
        return {key: [t[key][k] for k in ks] for key in keys if key in t}
    if slowest > 0:
        out["slowest"] = columns(slowest_tasks(t["start"], t["end"], t["id"], slowest), box)
    if around is not None:
        out["linked"] = columns(dependency_cone(t["id"], t.get("preds") or [[] for _ in range(n)], around, depth))
    if match is not None:
        hits, hits_in, first = window_match(t["id"], t["start"], match, inside)
        out.update(matched=len(hits), matched_in_window=len(hits_in),
                   first_match=None if first is None else {k: v[0] for k, v in columns([first]).items()},
                   match_bins=[] if detail != "bins" else [
                       {"lane": lane, "start": a, "end": b, "busy": busy, "tasks": c}
                       for lane, a, b, busy, c in window_bins(hits_in, t["lane"], t["start"], t["end"], lo, hi, bins,
                                                              held)])
    return out


def task_detail(job: Job, res: Results, task_id: int, rel: Rel) -> dict[str, Any]:
    """One task of the swimlane with the tensor nodes it runs and their source lines."""
    run = res.run(job)
    t = run["tasks"]
    try:
        k = t["id"].index(task_id)
    except ValueError:
        raise Refused(404, f"no task {task_id} in job {job.id} ({len(t['id'])} tasks)") from None
    index = res.tasks(job)
    nodes = [index["nodes"][str(i)] for i in index["sets"][index["task_set"][task_id]]] \
        if 0 <= task_id < len(index["task_set"]) else []
    spans: list[dict[str, Any]] = []
    for n in nodes:
        spans += [s for s in n["spans"] if s not in spans]
    lane = run["lanes"][t["lane"][k]]
    return {
        "job": job.id, "kernel": job.kernel, "task": task_id, "lane": {"index": t["lane"][k], **lane},
        "start": t["start"][k], "end": t["end"][k], "duration": t["end"][k] - t["start"][k],
        "leaf": t["leaf"][k], "coord": t["coord"][k], "preds": t["preds"][k], "ready": t["ready"][k],
        "time_unit": run.get("time_unit", "us"), "clock": run["clock"],
        "nodes": [{k: n[k] for k in ("id", "op", "name", "label")} for n in nodes],
        "source": [span_out(s, rel) for s in spans],
    }


def _span(s: Any, rel: Rel) -> dict[str, Any]:
    return {"file": rel(s.file), "line": s.line, "col": s.col, "end_line": s.end_line, "end_col": s.end_col,
            "func": s.func}


def _node_brief(n: Any) -> dict[str, Any]:
    return {"id": n.id, "op": n.op, "name": n.name, "label": n.label}


def node_detail(job: Job, res: Results, node_id: int, rel: Rel, max_tasks: int = 1000) -> dict[str, Any]:
    """A tensor node across levels: its source, the passes that changed it, its tile ops, leaves, tasks."""
    rec = res.compiled(job)
    try:
        n = rec.node(node_id)
    except KeyError:
        raise Refused(404, f"no node %{node_id} in job {job.id}") from None
    tasks = rec.tasks_of(node_id)
    return {
        "job": job.id, "kernel": job.kernel, **_node_brief(n), "made_by": n.made_by, "origin": list(n.origin),
        "source": [_span(s, rel) for s in rec.source_of(node_id)],
        "passes_changing": [p.name for p in rec.passes_changing(node_id)],
        "tile_ops": len(rec.tile_ops_of(node_id)), "leaves": rec.leaves_of(node_id),
        "tasks": tasks[:max_tasks], "tasks_total": len(tasks),
    }


def listings(job: Job, res: Results) -> list[str]:
    """Each leaf function's PTO-ISA-style listing (block stage), with its source lines: as the job's worker made them
    (`store`), else made here from the record read back (a job stored without them: glm's fused attention's record,
    1.05 M tasks, took 30 s to read back)."""
    made = job.extra.get("listings")
    if made is not None:
        record_of(job)
        got = json.loads(made)
        if got is None:
            raise Refused(409, f"job {job.id}'s compile did not reach the block stage")
        return got  # type: ignore[no-any-return]
    rec = res.compiled(job)
    if rec.program.blocks is None:
        raise Refused(409, f"job {job.id}'s compile did not reach the block stage")
    return rec.listings()


def record_with_graphs(job: Job, res: Results, record: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record (the job's, or `record`: the panels' slim one of it) with `snapshot: {"graph"}` on every pass and
    `traced: {"graph"}`: the tensor graph after each pass (only the tensor graph — a tile-stage pass's other program
    fields are not kept)."""
    rec = dict(res.record(job) if record is None else record)
    graphs = res.doc(job, "pass_graphs")
    rec["passes"] = [{**p, "snapshot": {"graph": g}} for p, g in zip(rec["passes"], graphs_after_passes(graphs))]
    rec["traced"] = {"graph": graphs["traced"]}
    return rec


# ---- pass graphs ------------------------------------------------------------------------------------

def pass_graph(job: Job, res: Results, which: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the tensor graph JSON, which pass it is after) for `which`: None/'final', 'traced' or a pass index."""
    rec = res.doc(job, "passes")
    passes = rec["passes"]
    if which in (None, "", "final"):
        last = passes[-1] if passes else None
        return rec["graph"], {"index": last["index"] if last else None, "name": last["name"] if last else None,
                              "stage": last["stage"] if last else None, "final": True}
    graphs = res.doc(job, "pass_graphs")
    if which == "traced":
        return graphs["traced"], {"index": None, "name": "traced", "stage": None, "final": False}
    try:
        index = int(which)
    except ValueError:
        raise Refused(400, f"pass must be 'final', 'traced' or a pass index, not {which!r}") from None
    for p, g in zip(passes, graphs_after_passes(graphs)):
        if p["index"] == index:
            return g, {"index": index, "name": p["name"], "stage": p["stage"],
                             "final": p is passes[-1], "changed": p["changed"]}
    raise Refused(404, f"no pass {index}; passes: {[p['index'] for p in passes]}")


def _walk(graph: Mapping[str, Any], parent: int | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
    for n in graph["nodes"]:
        yield n, parent
        if n.get("body"):
            yield from _walk(n["body"], n["id"])


def _body_ids(node: Mapping[str, Any]) -> set[int]:
    return {n["id"] for n, _ in _walk(node["body"])} if node.get("body") else set()


def _uses(node: Mapping[str, Any]) -> set[int]:
    """Every id the node and (for a loop) its body read."""
    out = set(node["inputs"])
    for n, _ in _walk(node["body"]) if node.get("body") else ():
        out.update(n["inputs"])
    return out


def _view_node(n: Mapping[str, Any], rel: Rel, parent: int | None = None) -> dict[str, Any]:
    out = {k: v for k, v in n.items() if k not in ("body", "loc")}
    out["loc"] = [span_out(s, rel) for s in n.get("loc", ())]
    if n.get("body"):
        out["body_size"] = sum(1 for _ in _walk(n["body"]))
    if parent is not None:
        out["parent"] = parent
    return out


def graph_view(graph: Mapping[str, Any], rel: Rel, view: str = "aggregated", loop: int | None = None) -> dict[str, Any]:
    """`aggregated`: one level (the kernel, or the body of loop `loop` — the drill-down), nested
    loops collapsed to one node with `body_size`; an edge per operand, plus `implicit` edges into
    a loop from what its body reads. `full`: every node flattened with its `parent` loop."""
    index = {n["id"]: (n, p) for n, p in _walk(graph)}
    if view == "full":
        nodes = [_view_node(n, rel, p) for n, p in _walk(graph)]
        edges = [{"from": src, "to": n["id"], "operand": k}
                 for n, _ in _walk(graph) for k, src in enumerate(n["inputs"])]
        return {"view": "full", "loop": None, "nodes": nodes, "edges": edges, "external": [],
                "total_nodes": len(index)}
    level: Mapping[str, Any] = graph
    if loop is not None:
        owner = index.get(loop)
        if owner is None or not owner[0].get("body"):
            raise Refused(404, f"no loop node %{loop} in this graph")
        level = owner[0]["body"]
    visible = {n["id"] for n in level["nodes"]}
    inner = {n["id"]: _body_ids(n) for n in level["nodes"] if n.get("body")}
    nodes, edges, external = [], [], set()
    for n in level["nodes"]:
        nodes.append(_view_node(n, rel))
        for k, src in enumerate(n["inputs"]):
            edges.append({"from": src, "to": n["id"], "operand": k})
            if src not in visible:
                external.add(src)
        if n.get("body"):
            for src in sorted(_uses(n) - inner[n["id"]] - set(n["inputs"])):
                if src in visible:
                    edges.append({"from": src, "to": n["id"], "implicit": True})
                else:
                    external.add(src)
    ext = [{"id": i, "op": index[i][0]["op"], "name": index[i][0].get("name"), "parent": index[i][1]}
           for i in sorted(external) if i in index]
    return {"view": "aggregated", "loop": loop, "nodes": nodes, "edges": edges, "external": ext,
            "total_nodes": len(index)}


def leaf_graph(job: Job, res: Results) -> dict[str, Any]:
    """The execute level aggregated by leaf function: a node per leaf (its task count and tensor
    nodes), an edge per (leaf, leaf) pair some task dependency joins, with how many."""
    rec = res.record(job)
    leaves = rec.get("leaves") or []
    tasks = (rec.get("execute") or {}).get("tasks") or []
    if not leaves or not tasks:
        raise Refused(409, f"job {job.id}'s compile did not reach the execute stage")
    leaf_of = {t["id"]: t["leaf"] for t in tasks}
    pairs: dict[tuple[int, int], int] = {}
    for t in tasks:
        for p in t["preds"]:
            key = (leaf_of[p], t["leaf"])
            pairs[key] = pairs.get(key, 0) + 1
    nodes = [{"id": lf["id"], "core": lf["core"], "count": lf["count"], "nodes": lf["nodes"],
              "template": lf["template"]} for lf in leaves]
    edges = [{"from": a, "to": b, "count": c} for (a, b), c in sorted(pairs.items())]
    return {"view": "leaves", "nodes": nodes, "edges": edges, "tasks": len(tasks)}


# ---- exports ----------------------------------------------------------------------------------------

def export(job: Job, res: Results, fmt: str, which: str | None = None) -> tuple[bytes, str, str]:
    """(content, media type, file name) of one export of the job's result."""
    if fmt not in EXPORTS:
        raise Refused(404, f"unknown export {fmt!r}; one of {', '.join(EXPORTS)}")
    result_of(job)
    if fmt in ("record", "swimlane", "html"):
        return _export(job, res, fmt, which)
    if fmt in ("chrome", "merged", "text"):
        which = None  # not a graph: one export whatever the pass
    return res.export(job, fmt, which, lambda: _export(job, res, fmt, which))


def _export(job: Job, res: Results, fmt: str, which: str | None) -> tuple[bytes, str, str]:
    kernel = job.kernel.rpartition("::")[2]
    if fmt == "html":
        html = job.extra.get("html")
        if html is None:
            raise Refused(409, "the HTML report is made by jobs with action 'report'")
        return html, "text/html; charset=utf-8", f"{kernel}.report.html"
    if fmt == "record":
        return res.blob(job, "record"), "application/json", f"{kernel}.record.json"
    if fmt in ("swimlane", "chrome", "merged", "text"):
        if fmt == "swimlane":
            return run_bytes(job, res), "application/json", "swimlane.json"
        from pypto.boards.trace import chrome_trace, merged_swimlane, text_trace

        # the traces read the record's JSON directly (parsing it back into a CompileRecord takes seconds)
        sl, rec = res.swimlane(job), res.record(job)
        if fmt == "chrome":
            return _dumps(chrome_trace(sl, rec)), "application/json", "trace.json"
        if fmt == "merged":
            return _dumps(merged_swimlane(sl, rec)), "application/json", "merged_swimlane.json"
        return text_trace(sl, rec).encode(), "text/plain; charset=utf-8", "trace.txt"
    from pypto.ir.serialize import graph_from

    graph_doc, info = pass_graph(job, res, which)
    graph = graph_from(graph_doc)
    suffix = "" if info.get("final") else f".{info['name']}"
    if fmt == "model-explorer":
        from pypto.export import to_model_explorer
        return _dumps(to_model_explorer(graph)), "application/json", f"{kernel}{suffix}.model_explorer.json"
    if fmt == "program":
        from pypto.export import to_program_json
        return _dumps(to_program_json(graph)), "application/json", "program.json"
    import networkx as nx

    from pypto.export import to_networkx
    g = to_networkx(graph)
    if fmt == "graphml":
        return "\n".join(nx.generate_graphml(g)).encode(), "application/xml", f"{kernel}{suffix}.graphml"
    return nx.nx_pydot.to_pydot(g).to_string().encode(), "text/vnd.graphviz", f"{kernel}{suffix}.dot"


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def run_bytes(job: Job, res: Results) -> bytes:
    """The job's run as compact JSON (the swimlane export, the history's copy, a pin's), made when asked and in
    parts (`json_parts`): it is the history's thread that makes it at a job's end, while the pages ask for their
    record and windows."""
    return b"".join(json_parts(res.run(job, keep=False)))


# a long list's elements written by one json.dumps call (`json_parts`): no slower than one call for the whole, and
# a whole-run window of glm's fused attention made beside the history's copy of its run took 1.2 s, against 1.9-2.0
# with slices of 50,000 (0.67 s alone): a call holds the GIL throughout
SLICE = 5_000


def json_parts(doc: Any, slice_: int = SLICE) -> Iterator[bytes]:
    """`_dumps(doc)` in parts, the same bytes: a dict's values and a long list's slices of `slice_` elements one
    `json.dumps` each, so that a thread writing a big document lets the others run between them (one call holds
    the GIL throughout: 2.2 s for the run of glm's fused attention, 1.05 M tasks, which stalled the event loop)."""
    if isinstance(doc, dict) and all(isinstance(k, str) for k in doc):
        yield b"{"
        for i, (k, v) in enumerate(doc.items()):
            yield (b',"' if i else b'"') + json.dumps(k)[1:].encode() + b":"
            yield from json_parts(v, slice_)
        yield b"}"
    elif isinstance(doc, list) and len(doc) > slice_:
        yield b"["
        for at in range(0, len(doc), slice_):
            part = _dumps(doc[at:at + slice_])
            yield part[1:-1] if at == 0 else b"," + part[1:-1]
        yield b"]"
    else:
        yield _dumps(doc)
