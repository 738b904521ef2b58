"""The answers to the panels' pypto/* requests, computed from a kernel's result.

Pure functions from (document, result, params) to the typed results of
`server.protocol`: a pass's graph (whole, or aggregated into loop / source-line /
tensor-node groups with drill-down), a window of the swimlane (task boxes, or per-lane
bins when the window holds more than the client wants to draw), the health report, the
precision report, the advisor's suggestions, the two linking lookups (source line ->
nodes and tasks; task or node -> source ranges), and what the VS Code panels show whole:
the CompileRecord with its listings, one pass's graph, the kernel's report. Bad params
raise `ParamsError` (sent back as InvalidParams); nothing here can take the server down.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.uris import from_fs_path

from server import protocol as P
from server.analyze import graphs_after_passes, panel_lists, record_lists
from server.features import CHARS, FINDING_UNIT, SUGGESTION_UNIT, Lines, lines_of, make_range, norm, where_range
from server.panel_data import (
    PANEL_LEAVE_OUT,
    PANEL_ROWS,
    PANEL_TILE_OPS,
    block_of,
    dependency_cone,
    panel_record,
    slowest_tasks,
    window_bins,
    window_counters,
    window_match,
    window_profiles,
    window_tasks,
)
from server.panel_data import tile_grids as tile_grids_of
from server.panel_data import tile_ops as tile_ops_of
from server.state import Document, Result

Json = Any


def _editor(r: Result) -> dict[str, Json]:
    assert r.editor is not None
    return r.editor


def _location(doc: Document, lines: Lines, span: Mapping[str, Json]) -> lsp.Location:
    file = str(span["file"])
    if norm(file) == norm(doc.path):
        return lsp.Location(uri=doc.uri, range=make_range(lines, int(span["line"]), int(span.get("col", 0)),
                                                        int(span.get("end_line", 0)), int(span.get("end_col", 0))))
    line = max(0, int(span["line"]) - 1)
    end = int(span.get("end_col", 0)) or int(span.get("col", 0))
    return lsp.Location(uri=from_fs_path(file) or file,
                        range=lsp.Range(lsp.Position(line, int(span.get("col", 0))), lsp.Position(line, end)))


# ---- graph --------------------------------------------------------------------------------------

def _pick_pass(ed: Mapping[str, Json], which: int | str | None) -> tuple[P.PassInfo | None, str]:
    passes = ed["passes"]
    if which is None:
        p = passes[-1] if passes else None
        return (P.PassInfo(p["index"], p["name"], p["stage"], p["changed"]) if p else None), ed["final_graph"]
    for p in passes:
        if (isinstance(which, int) and p["index"] == which) or (isinstance(which, str) and p["name"] == which):
            if p["graph"] is None:
                raise P.ParamsError(f"pass {p['name']} has no snapshot in this record")
            return P.PassInfo(p["index"], p["name"], p["stage"], p["changed"]), p["graph"]
    names = ", ".join(f"{p['index']} {p['name']}" for p in passes)
    raise P.ParamsError(f"no pass {which!r} in this compile (passes: {names})")


def _flatten(graph: Mapping[str, Json], parent: str | None, out: list[tuple[dict[str, Json], str | None]]) -> None:
    for node in graph["nodes"]:
        out.append((node, parent))
        if node.get("body"):
            _flatten(node["body"], f"g:loop{node['id']}", out)


def _node_line(node: Mapping[str, Json]) -> Mapping[str, Json] | None:
    loc = node.get("loc") or []
    return loc[-1] if loc else None  # the kernel's own line (outermost frame)


def _assemble(nodes: dict[str, P.GraphNode], parents: dict[str, str | None], edges: list[tuple[str, str]],
              collapsed: set[str]) -> tuple[list[P.GraphNode], list[P.GraphEdge]]:
    def rep(x: str) -> str:
        chain = []
        p = parents.get(x)
        while p is not None:
            chain.append(p)
            p = parents.get(p)
        for g in reversed(chain):
            if g in collapsed:
                return g
        return x

    visible = [v for k, v in nodes.items() if rep(k) == k]
    counts: Counter[tuple[str, str]] = Counter()
    for a, b in edges:
        ra, rb = rep(a), rep(b)
        if ra != rb:
            counts[(ra, rb)] += 1
    return visible, [P.GraphEdge(a, b, c) for (a, b), c in counts.items()]


def graph(doc: Document, r: Result, params: P.GraphParams) -> P.GraphResult:
    if params.max_nodes < 1:
        raise P.ParamsError("maxNodes must be at least 1")
    params = attrs.evolve(params, max_nodes=min(params.max_nodes, P.MAX_NODES))
    ed = _editor(r)
    lines = lines_of(doc)
    info, ref = _pick_pass(ed, params.after_pass)
    passes = [P.PassInfo(p["index"], p["name"], p["stage"], p["changed"]) for p in ed["passes"]]
    if params.level == "tile":
        return _tile_graph(doc, r, params, info, passes, lines)
    flat: list[tuple[dict[str, Json], str | None]] = []
    _flatten(ed["graphs"][ref], None, flat)
    nodes: dict[str, P.GraphNode] = {}
    parents: dict[str, str | None] = {}
    edges: list[tuple[str, str]] = []
    members: Counter[str] = Counter()
    for node, parent in flat:
        span = _node_line(node)
        rng = where_range(lines, span, doc.path) if span else None
        t = node.get("type") or {}
        nid = f"n{node['id']}"
        label = node["op"] + (f" {node['name']}" if node.get("name") else "")
        if node.get("body"):
            gid = f"g:loop{node['id']}"
            name = str(node.get("attrs", {}).get("name", "")).strip("'")
            nodes[gid] = P.GraphNode(gid, "group", "loop", f"loop {name}".strip(), None, None, parent, 0, rng)
            parents[gid] = parent
        nodes[nid] = P.GraphNode(nid, "node", node["op"], label, t.get("shape"), t.get("dtype"), parent, 1, rng)
        parents[nid] = parent
        if parent is not None:
            members[parent] += 1
        edges += [(f"n{i}", nid) for i in node.get("inputs", ())]
        if node.get("body"):
            edges.append((nid, f"g:loop{node['id']}"))
    for gid, c in members.items():
        if gid in nodes:
            nodes[gid].count = c
    total = sum(1 for v in nodes.values() if v.kind == "node")
    expand = set(params.expand)
    unknown = [g for g in expand if g not in nodes or nodes[g].kind != "group"]
    collapsed: set[str] = set()
    aggregated = False
    if total > params.max_nodes:
        aggregated = True
        collapsed = {g for g, v in nodes.items() if v.kind == "group" and g not in expand}
        visible, _ = _assemble(nodes, parents, edges, collapsed)
        if len(visible) > params.max_nodes:
            # still too many: group the top-level nodes by their source line
            by_line: defaultdict[int, list[str]] = defaultdict(list)
            for k, v in nodes.items():
                if v.kind == "node" and parents.get(k) is None and v.range is not None:
                    by_line[v.range.start.line].append(k)
            for line, ids in by_line.items():
                if len(ids) < 2:
                    continue
                gid = f"g:line{line + 1}"
                first = nodes[ids[0]]
                nodes[gid] = P.GraphNode(gid, "group", "line", f"line {line + 1}", None, None, None, len(ids),
                                         first.range)
                parents[gid] = None
                for k in ids:
                    parents[k] = gid
                    nodes[k].parent = gid
                if gid not in expand:
                    collapsed.add(gid)
        unknown = [g for g in expand if g not in nodes or nodes[g].kind != "group"]
    if unknown:
        raise P.ParamsError(f"no group {', '.join(sorted(unknown))} in this graph")
    visible, agg_edges = _assemble(nodes, parents, edges, collapsed)
    return P.GraphResult(doc.uri, r.name, r.version, info, passes, "tensor", aggregated, total, visible, agg_edges)


def _tile_graph(doc: Document, r: Result, params: P.GraphParams, info: P.PassInfo | None,
                passes: list[P.PassInfo], lines: Lines) -> P.GraphResult:
    ed = _editor(r)
    t = ed["tiles"]  # numpy columns; shape and inputs Ragged (server.index)
    count = len(t["op"])
    node_of, op_of = t["node"].tolist(), t["op"].tolist()
    tensor_nodes = ed["nodes"]
    nodes: dict[str, P.GraphNode] = {}
    parents: dict[str, str | None] = {}
    for nid, size in Counter(node_of).items():
        tn = tensor_nodes.get(str(nid), {})
        spans = tn.get("spans") or []
        rng = where_range(lines, spans[-1], doc.path) if spans else None
        gid = f"g:node{nid}"
        nodes[gid] = P.GraphNode(gid, "group", str(tn.get("op", "?")), f"{tn.get('op', '?')} (node {nid})",
                                 tn.get("shape"), tn.get("dtype"), None, size, rng)
        parents[gid] = None
    expand = set(params.expand)
    unknown = [g for g in expand if g not in nodes]
    if unknown:
        raise P.ParamsError(f"no group {', '.join(sorted(unknown))} in this tile graph")
    aggregated = count > params.max_nodes
    show_all = not aggregated
    wanted = {int(g[len("g:node"):]) for g in expand}
    per_group: Counter[int] = Counter()
    edges: list[tuple[str, str]] = []
    for i in range(count):
        node = node_of[i]
        if not (show_all or node in wanted):
            continue
        if not show_all and per_group[node] >= params.max_nodes:
            continue  # a huge group: the first max_nodes of its tiles
        per_group[node] += 1
        tid = f"t{i}"
        name = t["names"][op_of[i]]
        gid = f"g:node{node}"
        shape = t["shape"][i]
        nodes[tid] = P.GraphNode(tid, "node", name, f"{name} {shape}", shape,
                                 tensor_nodes.get(str(node), {}).get("dtype"), gid, 1, nodes[gid].range)
        parents[tid] = gid
    inputs = t["inputs"]
    flat, start = inputs.flat.tolist(), inputs.start.tolist()
    for i in range(count):
        for j in flat[start[i]:start[i + 1]]:
            a = f"t{j}" if f"t{j}" in nodes else f"g:node{node_of[j]}"
            b = f"t{i}" if f"t{i}" in nodes else f"g:node{node_of[i]}"
            edges.append((a, b))
    collapsed = set() if show_all else {g for g in nodes if g.startswith("g:") and g not in expand}
    visible, agg_edges = _assemble(nodes, parents, edges, collapsed)
    return P.GraphResult(doc.uri, r.name, r.version, info, passes, "tile", aggregated, count, visible, agg_edges)


# ---- swimlane -----------------------------------------------------------------------------------

def swimlane(doc: Document, r: Result, params: P.SwimlaneParams) -> P.SwimlaneResult:
    sl = _editor(r).get("swimlane")
    if sl is None:
        raise P.ParamsError(f"{r.name} has no run")
    if params.max_boxes < 0 or params.bins < 1 or params.slowest < 0 or params.depth < 0:
        raise P.ParamsError("maxBoxes, slowest and depth must be >= 0 and bins >= 1")
    if not all(math.isfinite(x) for x in (params.start, params.end) if x is not None):
        raise P.ParamsError("start and end must be finite numbers")
    if params.match is not None and len(params.match) > P.MAX_MATCH_RANGES:
        raise P.ParamsError(f"match: at most {P.MAX_MATCH_RANGES} id ranges")
    if params.match is not None and not all(len(m) == 2 for m in params.match):
        raise P.ParamsError("match: id ranges [first, last]")
    nbins, max_boxes = min(params.bins, P.MAX_BINS), min(params.max_boxes, P.MAX_BOXES)
    c = sl["tasks"]
    ids, lanes_of, starts, ends, leaves = c["id"], c["lane"], c["start"], c["end"], c["leaf"]
    preds = c.get("preds") or [[] for _ in ids]
    held = c.get("held")  # a MIX task's other lanes (a PyPTO 3 kernel's mixed scopes), else absent
    t0 = min(starts, default=0.0)
    t1 = max(ends, default=0.0)
    start = t0 if params.start is None else params.start
    end = t1 if params.end is None else params.end
    if end < start:
        raise P.ParamsError(f"end ({end}) is before start ({start})")
    inside = window_tasks(starts, ends, start, end)
    lanes = [P.Lane(x["name"], x["core"]) for x in sl["lanes"]]
    metrics = dict(sl.get("metrics", {}))
    makespan = float(metrics.get("makespan", t1 - t0))

    def box(k: int, profile: int = -1) -> P.Box:
        return P.Box(ids[k], lanes_of[k], starts[k], ends[k], leaves[k], list(preds[k] or ()), profile,
                     list(held[k] or ()) if held is not None else [])

    boxes: list[P.Box] = []
    bins: list[P.Bin] = []
    profiles: list[Any] = []
    counters: dict[str, list[list[float]]] = {}
    if len(inside) <= max_boxes:
        detail = "boxes"
        # with the boxes what a small run draws from the record: their pipe profiles and the ready counters
        # (scheduler bubbles) in the window
        which, profiles = window_profiles(c.get("profile"), sl.get("pipe_profiles") or [], inside)
        boxes = [box(k, p) for k, p in zip(inside, which, strict=True)]
        ready = {name: points for name, points in (sl.get("counters") or {}).items() if name.startswith("ReadyCount")}
        counters = window_counters(ready, start, end)
    else:
        detail = "bins"
        bins = [P.Bin(*b) for b in window_bins(inside, lanes_of, starts, ends, start, end, nbins, held)]
    slowest = [box(k) for k in slowest_tasks(starts, ends, ids, min(params.slowest, P.MAX_SLOWEST))]
    linked = [] if params.around is None else \
        [box(k) for k in dependency_cone(ids, preds, params.around, min(params.depth, P.MAX_DEPTH))]
    out = P.SwimlaneResult(doc.uri, r.name, r.version, sl["board"], sl["clock"], makespan, start, end, detail,
                           len(ids), len(inside), lanes, boxes, bins, metrics, nbins, max_boxes, slowest,
                           profiles, counters, linked)
    if params.match is not None:
        hits, hits_in, first = window_match(ids, starts, params.match, inside)
        out.matched, out.matched_in_window = len(hits), len(hits_in)
        out.first_match = None if first is None else box(first)
        if detail == "bins":
            out.match_bins = [P.Bin(*b) for b in window_bins(hits_in, lanes_of, starts, ends, start, end, nbins, held)]
    return out


# ---- reports ------------------------------------------------------------------------------------

def _edits(doc: Document, lines: Lines, edits: Any, unit: str) -> list[P.TextEditInfo]:
    out = []
    for e in edits or ():
        rng = where_range(lines, e.get("where"), doc.path, unit)
        if rng is not None:
            out.append(P.TextEditInfo(rng, str(e["text"])))
    return out


def findings(doc: Document, items: Any, unit: str = CHARS) -> list[P.Finding]:
    lines = lines_of(doc)
    return [P.Finding(f["rule"], f["severity"], f["level"], f["title"], f["why"], f["suggestion"],
                      where_range(lines, f.get("where"), doc.path, unit), dict(f.get("numbers") or {}),
                      _edits(doc, lines, f.get("edits"), unit))
            for f in items or ()]


def health(doc: Document, r: Result) -> P.HealthResult:
    h = (r.analysis or {}).get("health") or {}
    return P.HealthResult(doc.uri, r.name, r.version, findings(doc, h.get("findings"), FINDING_UNIT["health"]),
                          dict(h.get("stats") or {}))


def suggestions(doc: Document, r: Result, items: list[Mapping[str, Json]],
                search: Mapping[str, Json] | None = None) -> P.SuggestionsResult:
    lines = lines_of(doc)
    return P.SuggestionsResult(doc.uri, r.name, r.version, [
        P.Suggestion(int(s.get("rank", i + 1)), str(s["text"]), str(s.get("reason", "")),
                     float(s["makespan_before_us"]), float(s["makespan_after_us"]), float(s["speedup"]),
                     _edits(doc, lines, s.get("edits"), SUGGESTION_UNIT))
        for i, s in enumerate(items)], dict(search) if search else None)


def precision(doc: Document, r: Result, report: Mapping[str, Json]) -> P.PrecisionResult:
    lines = lines_of(doc)
    if isinstance(report.get("error"), dict):
        return P.PrecisionResult(doc.uri, r.name, r.version, None, None, [], dict(report))
    failures = []
    for p in report.get("passes", ()):
        for row in list(p.get("rows", ())) + list(p.get("outputs", ())):
            if not row.get("passed", True):
                failures.append(P.PrecisionRow(str(p["name"]), str(row["op"]), int(row["node"]), False,
                                               row.get("max_abs"), row.get("max_rel"),
                                               where_range(lines, row.get("where"), doc.path)))
    return P.PrecisionResult(doc.uri, r.name, r.version, report.get("passed"), report.get("first_failing_pass"),
                             failures, dict(report))


# ---- linking ------------------------------------------------------------------------------------

def nodes_at(doc: Document, line0: int) -> P.NodesAtResult:
    out = []
    for name in doc.kernels:
        r = doc.results.get(name)
        if r is None or not r.ok:
            continue
        ed = _editor(r)
        entry = ed["lines"].get(str(line0 + 1))
        if entry is None:
            continue
        nodes = [ed["nodes"][str(i)] for i in entry["nodes"] if str(i) in ed["nodes"]]
        out.append(P.KernelNodes(name, r.version, [
            P.NodeInfo(x["id"], x["op"], x["shape"], x["dtype"], int(x["tiles"]), x.get("tile_shape"))
            for x in nodes], entry["tasks"], entry["task_count"], entry["leaves"]))
    return P.NodesAtResult(doc.uri, line0, out)


def source_of(doc: Document, r: Result, params: P.SourceOfParams) -> P.SourceOfResult:
    if (params.task is None) == (params.node is None):
        raise P.ParamsError("give exactly one of task and node")
    ed = _editor(r)
    if params.task is not None:
        col = ed["task_nodes"]["task"]
        if not 0 <= params.task < len(col):
            raise P.ParamsError(f"no task {params.task} in {r.name} (it has {len(col)} tasks)")
        node_ids = list(ed["task_nodes"]["sets"][col[params.task]])
    else:
        if str(params.node) not in ed["nodes"]:
            raise P.ParamsError(f"no node {params.node} in {r.name}'s final graph")
        node_ids = [int(params.node)]  # type: ignore[arg-type]
    lines = lines_of(doc)
    seen: set[tuple[str, int, int]] = set()
    locations = []
    for i in node_ids:
        for span in ed["nodes"][str(i)]["spans"]:
            key = (str(span["file"]), int(span["line"]), int(span.get("col", 0)))
            if key not in seen:
                seen.add(key)
                locations.append(_location(doc, lines, span))
    return P.SourceOfResult(r.name, r.version, node_ids, locations)


# ---- the panels' whole documents --------------------------------------------------------------------

def record(doc: Document, r: Result, out: Mapping[str, Json]) -> P.RecordResult:
    """The record of `out` (the analysis holding it) with the traced graph as `traced`; the
    passes' graphs are answered one at a time by `pass_graph`. A big record is sent slim (`panel_record`:
    its per-tile-op bulk left out and named in `omitted`)."""
    return P.RecordResult(doc.uri, r.name, r.version, _record_text(r, out), out.get("listings"))


def _record_text(r: Result, out: Mapping[str, Json]) -> P.RawJson:
    """The panels' record of the analysis as JSON text, made once for the latest two analyses asked: each open
    panel asks for it (glm's fused attention, 1.05 M tasks: 2.2-2.9 s to make, 0.9 s to write, 76 MB; kept as text,
    not as the ~10x larger objects)."""
    def make() -> P.RawJson:
        rec = panel_record(_slim_lists(out))
        if not isinstance(rec, dict):
            raise P.ParamsError(f"{r.name}: this compile has no record")
        graphs = out.get("pass_graphs") or {}
        if graphs.get("traced") is not None:
            rec = {**rec, "traced": {"graph": graphs["traced"]}}  # a copy: the cached lists stay as they were
        return P.RawJson(json.dumps(rec, separators=(",", ":")))
    cols = out.get("record_columns")
    return _per_analysis(_PANEL, cols, make) if isinstance(cols, bytes) else make()  # type: ignore[no-any-return]


_LISTS: OrderedDict[int, tuple[Any, Json]] = OrderedDict()  # id(columns bytes) -> (them, the record as lists)
_PANEL: OrderedDict[int, tuple[Any, P.RawJson]] = OrderedDict()  # id(columns bytes) -> (them, the panels' record)
_LISTS_LOCK = threading.Lock()


def _per_analysis(cache: OrderedDict[int, tuple[Any, Any]], cols: bytes, make: Callable[[], Any]) -> Any:
    """`make()` once per analysis (its columns' bytes, by identity) for the latest two analyses asked."""
    with _LISTS_LOCK:
        hit = cache.get(id(cols))
        if hit is not None and hit[0] is cols:
            cache.move_to_end(id(cols))
            return hit[1]
    value = make()
    with _LISTS_LOCK:
        cache[id(cols)] = (cols, value)
        while len(cache) > 2:
            cache.popitem(last=False)
    return value


def _lists(out: Mapping[str, Json]) -> Json:
    """The analysis's record as the lists the panels read (`server.analyze.record_lists`), made once for the
    latest two analyses asked."""
    cols = out.get("record_columns")
    if not isinstance(cols, bytes):
        return out.get("record")
    return _per_analysis(_LISTS, cols, lambda: record_lists(out.get("record"), cols))  # type: ignore[arg-type]


def _slim_lists(out: Mapping[str, Json]) -> Json:
    """What `panel_record` needs of the analysis's record: the whole lists when they are made already (or the
    record is small), else lists without the bulk a slim record leaves out (`server.analyze.panel_lists`)."""
    cols = out.get("record_columns")
    if isinstance(cols, bytes):
        with _LISTS_LOCK:
            hit = _LISTS.get(id(cols))
        if hit is None or hit[0] is not cols:
            lean = panel_lists(out.get("record"), cols, PANEL_LEAVE_OUT, PANEL_TILE_OPS,  # type: ignore[arg-type]
                               PANEL_ROWS)
            if lean is not None:
                return lean
    return _lists(out)


def tile_ops(doc: Document, r: Result, out: Mapping[str, Json], params: P.TileOpsParams) -> P.TileOpsResult:
    """Tile ops by index, or those of one tile-grid cell: their shape, dtype and memory — what a slim record
    (`panel_record`) left out — and id, op and subgraph, for the tile a panel shows (`server.panel_data.tile_ops`)."""
    try:
        got = tile_ops_of(_lists(out), params.ops, params.node, params.cell)
    except ValueError as e:
        raise P.ParamsError(f"{r.name}: {e}") from None
    return P.TileOpsResult(doc.uri, r.name, r.version, got["ops"], got["shape"], got["dtype"], got["memory"],
                           got["id"], got["op"], got["subgraph"], got["node"], got["cell"])


def tile_grids(doc: Document, r: Result, out: Mapping[str, Json]) -> P.TileGridsResult:
    """The final program's tile grids (`server.panel_data.tile_grids`): what the Tiles view draws of a slim record."""
    try:
        got = tile_grids_of(_lists(out))
    except ValueError as e:
        raise P.ParamsError(f"{r.name}: {e}") from None
    return P.TileGridsResult(doc.uri, r.name, r.version, got["tile_ops"],
                             [P.TileGrid(g["node"], g["rows"], g["cols"], g["row_keys"], g["tiles"], g["subgraph"])
                              for g in got["grids"]])


def block(doc: Document, r: Result, out: Mapping[str, Json], params: P.BlockParams) -> P.BlockResult:
    """One leaf's block (`server.panel_data.block_of`): what the Leaves view draws of a slim record."""
    rec = _lists(out)
    try:
        b = block_of(rec if isinstance(rec, dict) else {}, params.leaf)
    except ValueError as e:
        raise P.ParamsError(f"{r.name}: {e}") from None
    return P.BlockResult(doc.uri, r.name, r.version, b["leaf"], b.get("core", ""), b.get("tasks", 0),
                         b.get("peak_bytes") or [], b.get("capacity_bytes") or [], bool(b.get("double_buffered")),
                         b.get("spills", 0), [P.BlockInstr(i["opcode"], i["pipe"], i["tile_op"], i["node"], i["note"])
                                              for i in b["instrs"]])


def pass_graph(doc: Document, r: Result, out: Mapping[str, Json], params: P.PassParams) -> P.PassResult:
    """The tensor graph after pass `params.index` (-1: the traced graph) as `snapshot: {"graph"}`:
    the page of its top-level nodes from `offset` holding at most `maxNodes` nodes, bodies included."""
    if params.offset < 0 or params.max_nodes < 1:
        raise P.ParamsError("offset must be >= 0 and maxNodes >= 1")
    graphs = out.get("pass_graphs")
    rec = out.get("record")
    if not isinstance(graphs, dict) or not isinstance(rec, dict):
        raise P.ParamsError(f"{r.name}: this compile kept no pass graphs")
    if params.index == -1:
        return _pass_page(doc, r, params, graphs.get("traced"))
    for p, g in zip(rec["passes"], graphs_after_passes(graphs)):
        if p["index"] == params.index:
            return _pass_page(doc, r, params, g)
    raise P.ParamsError(f"no pass {params.index} in {r.name} (passes: {[p['index'] for p in rec['passes']]})")


def _size(node: Mapping[str, Json]) -> int:
    body = node.get("body")
    return 1 + (sum(_size(n) for n in body["nodes"]) if body else 0)


def _pass_page(doc: Document, r: Result, params: P.PassParams, graph: Mapping[str, Json] | None) -> P.PassResult:
    if graph is None:
        return P.PassResult(doc.uri, r.name, r.version, params.index, None)
    nodes = graph["nodes"]
    limit = min(params.max_nodes, P.MAX_PASS_NODES)
    if params.offset > len(nodes):
        raise P.ParamsError(f"offset {params.offset} is past the graph's {len(nodes)} top-level nodes")
    stop, size = params.offset, 0
    while stop < len(nodes) and (stop == params.offset or size + _size(nodes[stop]) <= limit):
        size += _size(nodes[stop])
        stop += 1
    page = graph if (params.offset, stop) == (0, len(nodes)) else {**graph, "nodes": nodes[params.offset:stop]}
    return P.PassResult(doc.uri, r.name, r.version, params.index, {"graph": page}, len(nodes), params.offset,
                        stop if stop < len(nodes) else None)


def report(doc: Document, r: Result, out: Mapping[str, Json]) -> P.ReportResult:
    """The kernel's report from an analysis: the compile's own, or one made with the advisor
    and/or the precision diff."""
    rep = out.get("report")
    if not isinstance(rep, dict):
        raise P.ParamsError(f"{r.name}: this compile has no report")
    return P.ReportResult(doc.uri, r.name, r.version, rep)
