"""The editor's view of one compile, made in the worker next to the CompileRecord.

The language server answers hovers, inlay hints, code lenses and the panels' linking
requests in milliseconds by looking things up in plain dicts; parsing a CompileRecord
back into objects costs a few hundred milliseconds for a kernel of 10^4 tile ops, and
serializing all of it costs more than this summary. So the worker that compiled the
kernel also runs `editor_view(record, path)` (`server.analyze.analyze_kernel` with the
setting `editor`) and ships, as plain data (JSON's types, but the tile columns numpy arrays):

- `lines`: per source line of the document, the tensor nodes made there, the tile ops,
  leaves and tasks they lower into, and those tasks' share of the run;
- `nodes`: per tensor node of the final graph, its op, type, tile shape and tile count,
  leaves, tasks and source frames;
- `task_nodes` (columnar): which tensor nodes each task runs (`pypto/sourceOf`);
- `tile_configs`: per `set_*_tile_shapes` call, its span, the tiles made under it and the
  on-chip buffer use of the leaves that run them;
- `passes` + `graphs`: each pass's tensor graph (deduplicated: unchanged passes share one);
- `tiles` (columnar, numpy: `shape` and `inputs` are `Ragged`): the final tile graph, for the
  tile-level graph panel;
- `swimlane`: the run (`Swimlane.to_json`, already columnar).

Line numbers are 1-based and columns 0-based, as in the record; the server converts.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from server.panel_data import op_positions

if TYPE_CHECKING:
    import numpy as np

Json = Any


def _norm(file: str) -> str:
    return os.path.normcase(os.path.abspath(file))


def _span(s: Any) -> dict[str, Json]:
    return {"file": s.file, "line": s.line, "col": s.col, "end_line": s.end_line or s.line, "end_col": s.end_col}


def _dims(dims: Any) -> Json:
    if isinstance(dims, (tuple, list)):
        return [_dims(d) for d in dims]
    return dims if isinstance(dims, (int, float, bool)) or dims is None else str(dims)


def _id_runs(ids: np.ndarray) -> list[list[int]]:
    """Sorted distinct ids as inclusive [first, last] runs (0..255 is [[0, 255]]), by array work (a line of a big
    kernel runs 10^4-10^5 tasks)."""
    import numpy as np

    if not len(ids):
        return []
    breaks = np.flatnonzero(np.diff(ids) != 1)
    first = np.concatenate(([0], breaks + 1))
    last = np.append(breaks, len(ids) - 1)
    return np.stack((ids[first], ids[last]), axis=1).tolist()  # type: ignore[no-any-return]


def _union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    """The length of the union of intervals [starts[i], ends[i]] (ends >= starts): intervals by start, each that
    starts after all before it ended opens a segment, which ends at the furthest end before the next opens; the
    segments' lengths summed in order, as a loop over the sorted intervals would."""
    import numpy as np

    n = len(starts)
    if not n:
        return 0.0
    order = np.argsort(starts, kind="stable")
    a, furthest = starts[order], np.maximum.accumulate(ends[order])
    opens = np.flatnonzero(np.concatenate(([True], a[1:] > furthest[:-1])))
    closes = np.append(opens[1:] - 1, n - 1)
    return float(sum((furthest[closes] - a[opens]).tolist()))


def _task_times(run: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The run's tasks' start and end indexed by task id (`timed`: the ids the run has), their busy time summed in
    the run's order and the makespan: from the columns when the board gave them (no object per task; the sim
    board's ids are 0..n-1 in order), else from the tasks."""
    import numpy as np

    from pypto.boards.swimlane import TaskColumns

    tasks = run.tasks if run is not None else ()
    if isinstance(tasks, TaskColumns) and len(tasks):
        _, start, end, _, _ = tasks.columns()
        start_of, end_of = np.asarray(start, np.float64), np.asarray(end, np.float64)
        busy = sum((end_of - start_of).tolist()) or 0.0
        return np.ones(len(tasks), bool), start_of, end_of, busy, float(end_of.max()) - float(start_of.min())
    durations = {t.id: (t.start, t.end) for t in tasks}
    makespan = max(t.end for t in tasks) - min(t.start for t in tasks) if durations else 0.0
    top = max(durations, default=-1) + 1
    timed, start_of, end_of = np.zeros(top, bool), np.zeros(top), np.zeros(top)
    if durations:
        at = np.fromiter(durations, np.int64, len(durations))
        timed[at] = True
        start_of[at] = [a for a, _ in durations.values()]
        end_of[at] = [b for _, b in durations.values()]
    return timed, start_of, end_of, sum(b - a for a, b in durations.values()) or 0.0, makespan


def _branches(record: Any, timed: np.ndarray, start_of: np.ndarray, end_of: np.ndarray) -> dict[int, Json]:
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
            if t.id < len(timed) and timed[t.id]:
                task_us[root] += float(end_of[t.id]) - float(start_of[t.id])
    return {nid: {"side": n.attrs["branch"], "condition": n.attrs.get("condition", ""), "runs": len(runs_of[nid]),
                  "where": runs_of[nid][:8], "tasks": tasks[nid], "task_us": task_us[nid]}
            for nid, n in marked.items()}


@dataclass(frozen=True)
class Ragged:
    """Rows of ints of varying length as two arrays (row i is `flat[start[i]:start[i + 1]]`): a tile graph's
    shapes and inputs at 10^5-10^6 ops, which as lists of lists cost more to make and to pickle than the
    rest of the view."""

    flat: np.ndarray
    start: np.ndarray

    @classmethod
    def of(cls, rows: list[tuple[int, ...]]) -> Ragged:
        import numpy as np

        lengths = np.fromiter(map(len, rows), np.int64, len(rows))
        start = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=start[1:])
        return cls(np.fromiter(chain.from_iterable(rows), np.int64, int(start[-1])), start)

    def __len__(self) -> int:
        return len(self.start) - 1

    def __getitem__(self, i: int) -> list[int]:
        return self.flat[self.start[i]:self.start[i + 1]].tolist()


@dataclass
class _TileIndex:
    """What the editor view needs of the tile ops, per tensor node: its ops' kinds (in order of first
    appearance), shapes and instances, the tasks and leaves that run them; per task, its tensor nodes;
    and the tile graph's columns, by position (each op's inputs too). Made with numpy over the ops' fields: at
    10^5-10^6 tile ops a loop of dict and set updates per op was most of the view's time."""

    kinds: dict[int, dict[str, int]]
    shapes: dict[int, tuple[int, ...]]  # the most common tile shape (the first seen among equals)
    instances: dict[int, int]
    node_tasks: dict[int, np.ndarray]  # sorted task ids
    node_leaves: dict[int, list[int]]  # sorted leaf ids
    task_nodes: Ragged  # per task id (from 0), its sorted node ids
    columns: dict[str, Json]


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (a, b) pairs of two non-negative int arrays, sorted by a then b: their a, b, first
    position and count (one 1-d key per pair: numpy's unique over rows is many times slower)."""
    import numpy as np

    width = int(b.max()) + 1 if len(b) else 1
    keys, first, counts = np.unique(a * width + b, return_index=True, return_counts=True)
    return keys // width, keys % width, first, counts


def _groups(keys: np.ndarray, values: np.ndarray) -> dict[int, np.ndarray]:
    """{key: its values, sorted and unique} for parallel non-negative int arrays."""
    import numpy as np

    if not len(keys):
        return {}
    k, v, _, _ = _pairs(keys, values)
    starts = np.flatnonzero(np.diff(k, prepend=-1))
    ends = np.append(starts[1:], len(k))
    return {key: v[a:b] for key, a, b in zip(k[starts].tolist(), starts.tolist(), ends.tolist(), strict=True)}


def _rows(keys: np.ndarray, values: np.ndarray, n: int) -> Ragged:
    """Row k (0 <= k < n): the sorted distinct values of key k (`_groups` as rows, none for a key not there)."""
    import numpy as np

    k, v, _, _ = _pairs(keys, values)
    start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(k, minlength=n)[:n], out=start[1:])
    return Ragged(v, start)


def _task_sets(task_nodes: Ragged, tasks: Sequence[Any]) -> tuple[list[list[int]], list[int]]:
    """The distinct node sets of `tasks` (each task's row of `task_nodes`, by id), numbered in the order the tasks
    first run one, and each task's number (per task: a dict of tuples and a lookup each was ~0.1 s of gated delta
    rule's view)."""
    import numpy as np

    if not tasks:
        return [], []
    codes, distinct = _row_codes(task_nodes)
    ids = np.fromiter(map(attrgetter("id"), tasks), np.int64, len(tasks))
    numbers, first, inverse = np.unique(codes[ids], return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(numbers), np.int64)
    rank[order] = np.arange(len(numbers), dtype=np.int64)
    return [list(distinct[c]) for c in numbers[order].tolist()], rank[inverse.reshape(-1)].tolist()


def _numbering() -> defaultdict[Any, int]:
    """A dict that numbers each new key as it is first looked up (0, 1, …): `map(d.__getitem__, keys)` numbers a
    column by C-level calls, the factory called once per distinct key."""
    out: defaultdict[Any, int] = defaultdict(int)
    out.default_factory = out.__len__
    return out


def _op_columns(ops: Any) -> tuple[Any, ...]:
    """The tile ops' fields `_tile_index` reads, from the ops: ids, tensor nodes, instances, op kinds (codes of
    `op_names`, first seen first), shapes (codes of `shape_list`) and shapes and inputs as `Ragged`."""
    import numpy as np

    n = len(ops)
    ids = np.fromiter(map(attrgetter("id"), ops), np.int64, n)
    node = np.fromiter(map(attrgetter("node"), ops), np.int64, n)
    inst = np.fromiter(map(attrgetter("instance"), ops), np.int64, n)
    op_index = _numbering()
    op_code = np.fromiter(map(op_index.__getitem__, map(attrgetter("op"), ops)), np.int64, n)
    shape_of = list(map(attrgetter("shape"), ops))
    shape_index = _numbering()
    shape_code = np.fromiter(map(shape_index.__getitem__, shape_of), np.int64, n)
    return (ids, node, inst, op_code, list(op_index), shape_code, list(shape_index), Ragged.of(shape_of),
            Ragged.of(list(map(attrgetter("inputs"), ops))))


def _op_columns_from(ops: Mapping[str, Json], arrays: Mapping[str, np.ndarray]) -> tuple[Any, ...] | None:
    """`_op_columns` read from the record document's columns of the same ops (its `tiles.ops` and their arrays:
    the job made them already, and at 10^5-10^6 tile ops reading each op's fields again is most of the editor
    view's time); None when the document holds them otherwise (a short tile graph's plain lists)."""
    import numpy as np

    from pypto.ir.columns import MARK, lazy_lists, numbers

    specs = {k: v.get(MARK) if isinstance(v, dict) else None for k, v in ops.items()}
    if any(specs.get(k) is None for k in ("id", "node", "instance", "op", "shape", "inputs")):
        return None
    ints = [numbers(specs[k], arrays) for k in ("id", "node", "instance")]
    shapes, inputs = lazy_lists(specs["shape"], arrays), lazy_lists(specs["inputs"], arrays)
    op = specs["op"]
    n = int(op["n"])
    if "str" in op:
        op_code, op_names = np.asarray(arrays[op["str"]], np.int64), list(op["table"])
    elif "const" in op and isinstance(op["const"], str):
        op_code, op_names = np.zeros(n, np.int64), [op["const"]]
    else:
        return None
    if any(a is None for a in ints) or shapes is None or inputs is None or not hasattr(shapes, "offsets") \
            or not hasattr(inputs, "offsets"):
        return None
    ids, node, inst = (np.asarray(a, np.int64) for a in ints)
    shape = Ragged(np.asarray(shapes.flat, np.int64), np.asarray(shapes.offsets, np.int64))
    shape_code, shape_list = _row_codes(shape)
    return (ids, node, inst, op_code, op_names, shape_code, shape_list, shape,
            Ragged(np.asarray(inputs.flat, np.int64), np.asarray(inputs.offsets, np.int64)))


def _row_codes(rows: Ragged) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """A code per row of `rows` and the distinct rows as tuples (code i: `distinct[i]`), numbered as the rows sort
    when each is padded with -1 to the longest, its length beside, and compared as int64 bytes. Told apart by one
    integer key per row made a column at a time (`_row_keys`), never a padded copy of the rows: comparing that copy
    as bytes (numpy's unique over a void view) took three ~133 MB arrays for the node sets of glm's fused attention's
    1.09 M tasks, which pushed its job past its 4 GB cap, and ~1 s; the keys take ~9 MB each."""
    import numpy as np

    n = len(rows)
    if n == 0:
        return np.zeros(0, np.int64), []
    starts, lengths = rows.start[:-1], np.diff(rows.start)
    width = int(lengths.max())

    def column(j: int) -> np.ndarray:  # the rows' j-th values (-1 past a row's end); the last column: the lengths
        if j == width:
            return lengths.astype(np.int64)
        out = np.full(n, -1, np.int64)
        inside = lengths > j
        out[inside] = rows.flat[starts[inside] + j]
        return out

    _, first, codes = np.unique(_row_keys(column, width + 1, n), return_index=True, return_inverse=True)
    distinct = [tuple(rows[int(i)]) for i in first]
    padded = np.array([[*r, *[-1] * (width - len(r)), len(r)] for r in distinct], np.int64)
    order = np.argsort(padded.view(np.dtype((np.void, padded.itemsize * (width + 1)))).ravel(), kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[codes.reshape(-1)], [distinct[i] for i in order.tolist()]


def _row_keys(column: Callable[[int], np.ndarray], m: int, n: int) -> np.ndarray:
    """One int64 for each of `n` rows of `m` columns (`column(j)`), equal exactly when the rows are: the columns as
    digits of a mixed radix (each column's range), the digits so far renumbered densely (their distinct values,
    0..k-1) whenever the next column would overflow. Never a hash: no two rows collide."""
    import numpy as np

    key = np.zeros(n, np.int64)
    span = 1  # key < span
    for j in range(m):
        col = column(j)
        lo = int(col.min())
        radix = int(col.max()) - lo + 1
        if span * radix >= 1 << 62:
            _, dense = np.unique(key, return_inverse=True)
            key, span = dense.reshape(-1).astype(np.int64), int(dense.max()) + 1
            if span * radix >= 1 << 62:  # a column of values too far apart (near int64's ends): rows compared whole
                whole = np.stack([column(i) for i in range(m)], axis=1)
                return np.unique(whole, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = key * radix + (col - lo)
        span *= radix
    return key


def _tile_index(ops: Any, p: Any, made: tuple[Any, ...] | None = None) -> _TileIndex:
    """`made`: `_op_columns` of the ops when the caller has them (`_op_columns_from` the record document)."""
    import numpy as np

    ids, node, inst, op_code, op_names, shape_code, shape_list, shape, inputs = made or _op_columns(ops)
    n = len(ids)

    # each op's subgraph, task and leaf (-1: none); an op in two subgraphs is the later one's, a subgraph
    # that two tasks run the later task's
    sgs = p.subgraphs or ()
    size = int(ids.max()) + 1 if n else 0
    sub = np.full(size, -1, np.int64)
    if sgs and n:
        lengths = np.fromiter(map(len, map(attrgetter("ops"), sgs)), np.int64, len(sgs))
        members = np.fromiter(chain.from_iterable(map(attrgetter("ops"), sgs)), np.int64, int(lengths.sum()))
        keep = members < size
        sub[members[keep]] = np.repeat(np.fromiter(map(attrgetter("id"), sgs), np.int64, len(sgs)), lengths)[keep]
    width = max((sg.id for sg in sgs), default=-1) + 1
    task_of_sub = np.full(width + 1, -1, np.int64)  # the last entry: no subgraph
    leaf_of_sub = np.full(width + 1, -1, np.int64)
    for task in (p.execute.tasks if p.execute is not None else ()):
        if 0 <= task.subgraph < width:
            task_of_sub[task.subgraph] = task.id
    for sg in sgs:
        leaf_of_sub[sg.id] = sg.leaf
    op_sub = sub[ids]
    op_sub[op_sub < 0] = width
    task = task_of_sub[op_sub]
    leaf = leaf_of_sub[op_sub]

    kinds: dict[int, dict[str, int]] = defaultdict(dict)
    shapes: dict[int, tuple[int, ...]] = {}
    instances: dict[int, int] = {}
    if n:
        a, b, first, counts = _pairs(node, op_code)
        for k in np.argsort(first, kind="stable").tolist():  # a node's kinds in the order its ops come
            kinds[int(a[k])][op_names[int(b[k])]] = int(counts[k])
        a, b, first, counts = _pairs(node, shape_code)
        for k in np.lexsort((first, -counts, a)).tolist():  # per node: most ops, then seen first
            shapes.setdefault(int(a[k]), shape_list[int(b[k])])
        a, _, _, _ = _pairs(node, inst)
        distinct, per = np.unique(a, return_counts=True)
        instances = dict(zip(distinct.tolist(), per.tolist(), strict=True))
    run = task >= 0
    node_tasks = _groups(node[run], task[run])
    tasks = len(p.execute.tasks) if p.execute is not None else 0
    task_nodes = _rows(task[run], node[run], max(tasks, int(task.max()) + 1 if n else 0))
    has_leaf = leaf >= 0
    node_leaves = {k: v.tolist() for k, v in _groups(node[has_leaf], leaf[has_leaf]).items()}
    # each op's inputs by their positions, as the panels number the tile ops (`server.panels`): the ids are not the
    # positions where graph partition put copies (their ids come after the others')
    inputs = Ragged(op_positions(ids)[inputs.flat], inputs.start)
    # in the narrowest int types (they cross two pipes in a job's answer: Kimi's block attention after its edit,
    # 20 MB of int64 -> 6 MB; their readers take lists)
    from pypto.ir.columns import narrowed as small

    columns = {"names": op_names, "op": small(op_code), "node": small(node), "instance": small(inst),
               "shape": Ragged(small(shape.flat), small(shape.start)),
               "inputs": Ragged(small(inputs.flat), small(inputs.start)), "task": small(task)}
    return _TileIndex(dict(kinds), shapes, instances, node_tasks, node_leaves, task_nodes, columns)


def _union(arrays: list[np.ndarray]) -> np.ndarray:
    """The sorted union of sorted int arrays."""
    import numpy as np

    if not arrays:
        return np.zeros(0, np.int64)
    return np.unique(np.concatenate(arrays)) if len(arrays) > 1 else arrays[0]


def editor_view(record: Any, path: str, run_json: Json = None,
                document: tuple[Mapping[str, Json], Mapping[str, np.ndarray]] | None = None) -> dict[str, Json]:
    """The lookups the language server and the panels need, from a profiled CompileRecord. `run_json`: the
    run's `to_json()` when the caller made it already (the record document's `run`): the view shares it, and
    a pickle of both carries it once. `document`: the record's document and its columns when the caller made them
    (the tile ops' fields are read from them)."""

    from pypto.ir.serialize import dim_json, graph_json

    p = record.program
    run = record.run
    tiles = p.tiles
    ops = (document[0].get("tiles") or {}).get("ops") if document is not None else None
    made = _op_columns_from(ops, document[1]) if isinstance(ops, dict) and document is not None else None
    t = _tile_index(tiles.ops if tiles is not None else (), p, made)
    kinds, shapes, instances = t.kinds, t.shapes, t.instances
    node_tasks, node_leaves = t.node_tasks, t.node_leaves

    timed, start_of, end_of, busy_total, makespan = _task_times(run)
    top = len(timed)

    branches = _branches(record, timed, start_of, end_of)
    configs = {tc.id: tc for tc in record.source.tile_configs}
    nodes: dict[str, Json] = {}
    for n in record.graph.walk():
        k = kinds.get(n.id, {})
        # the node's own tiles: ops named like it (a store for an assemble), else all of them
        own = k.get(n.op, 0) or k.get("store", 0) or k.get("matmul", 0) or sum(k.values())
        shape = shapes.get(n.id)
        tc = configs.get(n.tile) if n.tile is not None else None
        nodes[str(n.id)] = {
            "id": n.id, "op": n.op, "name": n.name,
            "shape": None if n.type is None else [dim_json(d) for d in n.type.shape],
            "dtype": None if n.type is None else n.type.dtype.short,
            "tile_config": n.tile, "tile_dims": None if tc is None else _dims(tc.dims),
            "tile_shape": list(shape) if shape is not None else None,
            "tiles": own, "tile_ops": sum(k.values()), "tile_kinds": dict(k),
            "instances": instances.get(n.id, 0),
            "leaves": node_leaves.get(n.id, []), "tasks": len(node_tasks.get(n.id, ())),
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
        tasks = _union([node_tasks[i] for i in ids if i in node_tasks])
        leaves = {lf for i in ids for lf in node_leaves.get(i, ())}
        ran = tasks[tasks < top]
        ran = ran[timed[ran]]
        starts, ends = start_of[ran], end_of[ran]
        busy = sum((ends - starts).tolist())  # in task order, as the loop it replaces
        lines[str(line)] = {
            "line": line, "nodes": ids, "tasks": _id_runs(tasks), "task_count": len(tasks), "leaves": sorted(leaves),
            "tiles": sum(nodes[str(i)]["tiles"] for i in ids if str(i) in nodes),
            "task_us": busy, "busy_share": busy / busy_total if busy_total else 0.0,
            "wall_share": _union_length(starts, ends) / makespan if makespan else 0.0,
        }
        cost = costs.get((target, line))
        if cost is not None:
            lines[str(line)]["cost"] = cost.to_json()

    sets, col_task_set = _task_sets(t.task_nodes, p.execute.tasks if p.execute is not None else ())

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
        "tiles": t.columns,
        "swimlane": None if run is None else run_json if run_json is not None else run.to_json(),
        "makespan_us": makespan, "busy_us": busy_total,
    }
