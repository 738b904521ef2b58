"""The editor's view of one compile, made in the worker next to the CompileRecord.

The language server answers hovers, inlay hints, code lenses and the panels' linking
requests in milliseconds by looking things up in plain dicts; parsing a CompileRecord
back into objects costs a few hundred milliseconds for a kernel of 10^4 tile ops, and
serializing all of it costs more than this summary. So the worker that compiled the
kernel also runs `editor_view(record, path)` (`server.analyze.analyze_kernel` with the
setting `editor`) and ships, as JSON:

- `lines`: per source line of the document, the tensor nodes made there, the tile ops,
  leaves and tasks they lower into, and those tasks' share of the run;
- `nodes`: per tensor node of the final graph, its op, type, tile shape and tile count,
  leaves, tasks and source frames;
- `task_nodes` (columnar): which tensor nodes each task runs (`pypto/sourceOf`);
- `tile_configs`: per `set_*_tile_shapes` call, its span, the tiles made under it and the
  on-chip buffer use of the leaves that run them;
- `passes` + `graphs`: each pass's tensor graph (deduplicated: unchanged passes share one);
- `tiles` (columnar): the final tile graph, for the tile-level graph panel;
- `swimlane`: the run (`Swimlane.to_json`, already columnar).

Line numbers are 1-based and columns 0-based, as in the record; the server converts.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from typing import Any

Json = Any


def _norm(file: str) -> str:
    return os.path.normcase(os.path.abspath(file))


def runs(ids: list[int] | set[int]) -> list[list[int]]:
    """Sorted ids as inclusive [first, last] runs: 0..255 is [[0, 255]]."""
    out: list[list[int]] = []
    for i in sorted(ids):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def _span(s: Any) -> dict[str, Json]:
    return {"file": s.file, "line": s.line, "col": s.col, "end_line": s.end_line or s.line, "end_col": s.end_col}


def _dims(dims: Any) -> Json:
    if isinstance(dims, (tuple, list)):
        return [_dims(d) for d in dims]
    return dims if isinstance(dims, (int, float, bool)) or dims is None else str(dims)


def _union_length(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    start = end
    for a, b in sorted(intervals):
        if a > end:
            if end > start:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if end > start:
        total += end - start
    return total


def _branches(record: Any, durations: dict[int, tuple[float, float]]) -> dict[int, Json]:
    """Per side of each run-time `if` (a loop node marked `branch`): how often it ran, for which
    indices of the loops around it, and its tasks' time. A side runs as an iteration of its
    0-or-1-trip loop, so its runs are the tile graph's instances of that loop."""
    marked = {n.id: n for n in record.graph.walk() if n.op == "loop" and "branch" in n.attrs}
    if not marked:
        return {}
    p = record.program
    tiles = p.tiles
    runs_of: dict[int, list[str]] = defaultdict(list)
    instance_root = {}
    for inst in (tiles.instances if tiles is not None else ()):
        instance_root[inst.id] = inst.root
        if inst.root in marked:
            own = marked[inst.root].attrs["index"]
            runs_of[inst.root].append(", ".join(f"{k}={v}" for k, v in inst.index if k != own))
    task_us: Counter[int] = Counter()
    tasks: Counter[int] = Counter()
    for t in (p.execute.tasks if p.execute is not None else ()):
        root = instance_root.get(t.instance)
        if root in marked:
            tasks[root] += 1
            if t.id in durations:
                a, b = durations[t.id]
                task_us[root] += b - a
    return {nid: {"side": n.attrs["branch"], "condition": n.attrs.get("condition", ""), "runs": len(runs_of[nid]),
                  "where": runs_of[nid][:8], "tasks": tasks[nid], "task_us": task_us[nid]}
            for nid, n in marked.items()}


def editor_view(record: Any, path: str) -> dict[str, Json]:
    """The lookups the language server and the panels need, from a profiled CompileRecord."""
    from pypto.ir.serialize import dim_json, graph_json

    p = record.program
    run = record.run
    tiles = p.tiles
    tile_ops = tiles.ops if tiles is not None else ()
    sub_of = {oid: sg.id for sg in (p.subgraphs or ()) for oid in sg.ops}
    task_of_sub = {t.subgraph: t.id for t in (p.execute.tasks if p.execute is not None else ())}
    leaf_of_sub = {sg.id: sg.leaf for sg in (p.subgraphs or ())}

    kinds: dict[int, Counter[str]] = defaultdict(Counter)
    shapes: dict[int, Counter[tuple[int, ...]]] = defaultdict(Counter)
    instances: dict[int, set[int]] = defaultdict(set)
    node_tasks: dict[int, set[int]] = defaultdict(set)
    node_leaves: dict[int, set[int]] = defaultdict(set)
    task_nodes: dict[int, set[int]] = defaultdict(set)
    op_names: list[str] = []
    op_index: dict[str, int] = {}
    col_op: list[int] = []
    col_node: list[int] = []
    col_instance: list[int] = []
    col_shape: list[list[int]] = []
    col_inputs: list[list[int]] = []
    col_task: list[int] = []
    for o in tile_ops:
        kinds[o.node][o.op] += 1
        shapes[o.node][o.shape] += 1
        instances[o.node].add(o.instance)
        sg = sub_of.get(o.id)
        task = task_of_sub.get(sg, -1) if sg is not None else -1
        if task >= 0:
            node_tasks[o.node].add(task)
            task_nodes[task].add(o.node)
        if sg is not None and leaf_of_sub.get(sg, -1) >= 0:
            node_leaves[o.node].add(leaf_of_sub[sg])
        k = op_index.get(o.op)
        if k is None:
            k = op_index[o.op] = len(op_names)
            op_names.append(o.op)
        col_op.append(k)
        col_node.append(o.node)
        col_instance.append(o.instance)
        col_shape.append(list(o.shape))
        col_inputs.append(list(o.inputs))
        col_task.append(task)

    durations: dict[int, tuple[float, float]] = {}
    makespan = 0.0
    if run is not None and run.tasks:
        durations = {t.id: (t.start, t.end) for t in run.tasks}
        makespan = max(t.end for t in run.tasks) - min(t.start for t in run.tasks)
    busy_total = sum(b - a for a, b in durations.values()) or 0.0

    branches = _branches(record, durations)
    configs = {tc.id: tc for tc in record.source.tile_configs}
    nodes: dict[str, Json] = {}
    for n in record.graph.walk():
        k = kinds.get(n.id, Counter())
        # the node's own tiles: ops named like it (a store for an assemble), else all of them
        own = k.get(n.op, 0) or k.get("store", 0) or k.get("matmul", 0) or sum(k.values())
        shape_counts = shapes.get(n.id)
        tc = configs.get(n.tile) if n.tile is not None else None
        nodes[str(n.id)] = {
            "id": n.id, "op": n.op, "name": n.name,
            "shape": None if n.type is None else [dim_json(d) for d in n.type.shape],
            "dtype": None if n.type is None else n.type.dtype.short,
            "tile_config": n.tile, "tile_dims": None if tc is None else _dims(tc.dims),
            "tile_shape": list(shape_counts.most_common(1)[0][0]) if shape_counts else None,
            "tiles": own, "tile_ops": sum(k.values()), "tile_kinds": dict(k),
            "instances": len(instances.get(n.id, ())),
            "leaves": sorted(node_leaves.get(n.id, ())), "tasks": len(node_tasks.get(n.id, ())),
            "spans": [_span(s) for s in record.source_of(n.id)],
        }
        if n.id in branches:
            nodes[str(n.id)]["branch"] = branches[n.id]

    from pypto.analysis.line_costs import line_costs

    costs = {(_norm(f), ln): c for (f, ln), c in line_costs(record).items()} if run is None or run.board == "sim" \
        else {}
    target = _norm(path)
    lines: dict[str, Json] = {}
    for file, line in record.lines():
        if _norm(file) != target:
            continue
        ids = record.nodes_at(file, line)
        tasks: set[int] = set()
        leaves: set[int] = set()
        for i in ids:
            tasks |= node_tasks.get(i, set())
            leaves |= node_leaves.get(i, set())
        spans = [durations[t] for t in tasks if t in durations]
        busy = sum(b - a for a, b in spans)
        lines[str(line)] = {
            "line": line, "nodes": ids, "tasks": runs(tasks), "task_count": len(tasks), "leaves": sorted(leaves),
            "tiles": sum(nodes[str(i)]["tiles"] for i in ids if str(i) in nodes),
            "task_us": busy, "busy_share": busy / busy_total if busy_total else 0.0,
            "wall_share": _union_length(spans) / makespan if makespan else 0.0,
        }
        cost = costs.get((target, line))
        if cost is not None:
            lines[str(line)]["cost"] = cost.to_json()

    sets: list[list[int]] = []
    set_index: dict[tuple[int, ...], int] = {}
    col_task_set: list[int] = []
    for t in (p.execute.tasks if p.execute is not None else ()):
        key = tuple(sorted(task_nodes.get(t.id, ())))
        if key not in set_index:
            set_index[key] = len(sets)
            sets.append(list(key))
        col_task_set.append(set_index[key])

    peaks = {b.leaf: (dict(b.peak_bytes), dict(b.capacity_bytes)) for b in (p.blocks or ())}
    tile_configs = []
    for tc in record.source.tile_configs:
        members = [n for n in nodes.values() if n["tile_config"] == tc.id]
        leaves = sorted({lf for n in members for lf in n["leaves"]})
        peak: dict[str, int] = {}
        cap: dict[str, int] = {}
        for lf in leaves:
            pk, cp = peaks.get(lf, ({}, {}))
            for space, v in pk.items():
                peak[space] = max(peak.get(space, 0), v)
                cap[space] = cp.get(space, cap.get(space, 0))
        tile_configs.append({
            "id": tc.id, "kind": tc.kind, "dims": _dims(tc.dims),
            "span": _span(tc.loc.frames[0]) if tc.loc.frames else None,
            "nodes": [n["id"] for n in members], "tiles": sum(n["tiles"] for n in members),
            "tile_ops": sum(n["tile_ops"] for n in members), "leaves": leaves,
            "peak_bytes": peak, "capacity_bytes": cap,
        })

    graphs: dict[str, Json] = {}
    refs: dict[int, str] = {}
    passes = []
    for info in record.passes:
        g = info.snapshot.graph if info.snapshot is not None else None
        ref = None
        if g is not None:
            ref = refs.get(id(g))
            if ref is None:
                ref = refs[id(g)] = f"g{len(refs)}"
                graphs[ref] = graph_json(g)
        passes.append({"index": info.index, "name": info.name, "stage": info.stage, "changed": info.changed,
                       "seconds": info.seconds, "node_count": info.node_count, "graph": ref})
    final = refs.get(id(record.graph))
    if final is None:
        final = f"g{len(refs)}"
        graphs[final] = graph_json(record.graph)

    return {
        "lines": lines, "nodes": nodes,
        "task_nodes": {"sets": sets, "task": col_task_set},
        "tile_configs": tile_configs,
        "passes": passes, "graphs": graphs, "final_graph": final,
        "tiles": {"names": op_names, "op": col_op, "node": col_node, "instance": col_instance,
                  "shape": col_shape, "inputs": col_inputs, "task": col_task},
        "swimlane": None if run is None else run.to_json(),
        "makespan_us": makespan, "busy_us": busy_total,
    }
