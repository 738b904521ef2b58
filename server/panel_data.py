"""What the panels are sent of a kernel's record, for both servers: one implementation.

A small record goes to a panel whole. A big one (over `PANEL_TILE_OPS` tile ops, or a run over
`PANEL_TASKS` tasks) goes slim (`panel_record`): the bulky lists are left out, named in `omitted`,
with `aggregates` in their place, and each view asks for what it draws when it draws it — the
Tiles view's grids (`tile_grids`), a tile's ops (`tile_ops`), a leaf's block (`block_of`), and the
swimlane's windows (`window_bins`, `slowest_tasks`, `dependency_cone`, `match_positions`,
`window_profiles`). The language server (`server.panels`) and the HTTP server (`server.http`,
`server.http_views`) call these on the lists `server.analyze.record_lists` made: pure functions of
the record (plus a small cache of tile indexes), run in the shells, never on user code.
"""

from __future__ import annotations

import bisect
import heapq
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

PANEL_TILE_OPS = 20_000  # above this many tile ops the panels are sent a slim record (`panel_record`)
# A slim record leaves out every per-tile-op column (`tiles.ops`: 4.9 MB of softmax 4096² @32x32 with its sim run),
# `tiles.buffers` and `memory`; each subgraph's tile-op list (1.3 MB); each block's instructions and buffers (1.1 MB)
# and each execute task's GM reads and writes (3.6 MB; no view draws them). What the graph panel draws from them
# comes as aggregates in the record (`panel_aggregates`) or on demand: the Tiles view's grids (`tile_grids`), a
# tile's ops (`tile_ops_of`), a leaf's block (`block_of`) — `pypto/tileGrids`, `pypto/tileOps`, `pypto/block`
# and `GET …/tile-grids`, `…/tile-ops`, `…/blocks/{leaf}`.
PANEL_OMIT_OPS = ("region", "attrs", "inputs", "shape", "dtype")  # what a whole record's tile ops carry beyond a grid's
# What a slim record is made without decoding (`server.analyze.panel_lists`): all it leaves out but the tile ops'
# ids, ops and tensor nodes and the subgraphs' ops, which its aggregates are made of.
PANEL_LEAVE_OUT = frozenset({*(f"tiles.ops.{k}" for k in ("instance", "coord", *PANEL_OMIT_OPS)), "tiles.buffers",
                             "memory", "blocks.instrs", "blocks.buffers", "execute.tasks.reads",
                             "execute.tasks.writes", "run.tasks.preds", "run.tasks.coord"})
# What a slim record sends as columns (`as_rows`), which `server.analyze.panel_lists` keeps as columns from the start
# (`pypto.ir.columns.rows_of`: no object per subgraph and task, their lists of ids as two arrays)
PANEL_ROWS = frozenset({"subgraphs", "execute.tasks"})
PANEL_OMIT_TASK = ("reads", "writes")
PANEL_OMIT_SUBGRAPH = ("ops",)
PANEL_OMIT_BLOCK = ("instrs", "buffers")
# Above this many tasks (or in a record slim for its tile ops) the run is sent without its tasks and pipe
# profiles: the swimlane panel draws it from windows (`pypto/swimlane`, `GET …/swimlane?max_boxes=`).
PANEL_TASKS = 5_000
PANEL_COUNTER_POINTS = 20_000  # a windowed run keeps its ready counters up to this many points in all
GRID_MOVES = frozenset(("load", "store"))  # a grid cell stands for its first other op (webview graph/model.ts cellOp)
TASK_MOVES = frozenset(("load", "store", "copy_in", "copy_out"))  # a task's nodes: others first (webview model.ts)
MAX_TILE_OPS = 4096  # tile ops in one pypto/tileOps or GET …/tile-ops answer


def _drop_each(items: Any, keys: Sequence[str], columns: bool = False) -> tuple[Any, dict[str, int]]:
    """A list of objects without `keys` (with `columns`: as columns, `as_rows`), and how many of them had each (the
    `omitted` entry)."""
    if isinstance(items, dict) and "$rows" in items:  # columns already (`PANEL_ROWS`): the same, without `keys`
        cols = items["$rows"]
        n = len(next(iter(cols.values())))
        return {"$rows": {k: v for k, v in cols.items() if k not in keys}}, {k: n for k in keys if k in cols}
    if not isinstance(items, list) or not items:
        return items, {}
    gone = {k: len(items) for k in keys if isinstance(items[0], dict) and k in items[0]}
    if columns:
        return as_rows(items, keys), gone
    if not gone:
        return items, {}
    return [{k: v for k, v in x.items() if k not in keys} for x in items], gone


def panel_record(lists: Any, limit: int = PANEL_TILE_OPS, tasks: int = PANEL_TASKS) -> Any:
    """The record (as lists) the panels are sent: itself when it has at most `limit` tile ops and its run at
    most `tasks` tasks. Above `limit` tile ops: a copy without `tiles.ops` and `tiles.buffers`, `memory`, the
    subgraphs' `ops`, the blocks' `instrs` and `buffers` and the execute tasks' `reads` and `writes`, with
    `aggregates` (`panel_aggregates`: each subgraph's tensor nodes, the buffer use per node) in their place, and
    the execute tasks' `preds` as `pred_runs` (`pred_runs`: the same ids, runs of consecutive ones as pairs), the
    subgraphs and the execute tasks as columns (`as_rows`); the
    graph panel asks for the rest when a view draws it (`tile_grids`, `tile_ops_of`, `block_of`). Above `limit`
    tile ops or `tasks` tasks: its run without `tasks` and `pipe_profiles` (and `counters` above
    PANEL_COUNTER_POINTS points), which the swimlane panel asks for by window, and `aggregates.time_share`.
    `omitted` names what was left out in the record's own shape, each list's length in its place (`{"tiles":
    {"ops": {"id": n, …}, "buffers": b}, "memory": n, "subgraphs": {"ops": s}, "blocks": {"instrs": k, "buffers":
    k}, "execute": {"tasks": {"reads": t, "writes": t}}, "run": {"tasks": t, "pipe_profiles": p}}`). The panels
    draw every other view from what is kept (subgraphs' and blocks' figures, leaves, the execute tasks' graph,
    the tile instances, the run's lanes, metrics and info)."""
    if not isinstance(lists, dict):
        return lists
    tiles = lists.get("tiles")
    ops = tiles.get("ops") if isinstance(tiles, dict) else None
    big_tiles = isinstance(ops, dict) and len(ops.get("id") or ()) > limit
    run = lists.get("run")
    run_tasks = run.get("tasks") if isinstance(run, dict) else None
    n_tasks = len(run_tasks.get("id") or ()) if isinstance(run_tasks, dict) else 0
    windowed = isinstance(run_tasks, dict) and (big_tiles or n_tasks > tasks)
    if not big_tiles and not windowed:
        return lists
    out = dict(lists)
    omitted: dict[str, Any] = {}
    aggregates: dict[str, Any] = {}
    if big_tiles:
        assert isinstance(tiles, dict) and isinstance(ops, dict)
        gone_tiles: dict[str, Any] = {"ops": {k: len(v) for k, v in ops.items() if isinstance(v, list)}}
        if "buffers" in tiles:
            gone_tiles["buffers"] = len(tiles["buffers"] or ())
        omitted["tiles"] = gone_tiles
        if lists.get("memory") is not None:
            omitted["memory"] = len(lists["memory"])
        out.pop("memory", None)
        out["tiles"] = {k: v for k, v in tiles.items() if k not in ("buffers", "ops")}
        for key, field, drop in (("subgraphs", None, PANEL_OMIT_SUBGRAPH), ("blocks", None, PANEL_OMIT_BLOCK),
                                 ("execute", "tasks", PANEL_OMIT_TASK)):
            holder = lists.get(key)
            items = holder.get(field) if field and isinstance(holder, dict) else holder
            # the subgraphs and execute tasks (10^4-10^5 objects) as columns: their keys were two thirds of the bytes
            kept, gone = _drop_each(items, drop, columns=key != "blocks")
            if gone:
                omitted[key] = {field: gone} if field else gone
            if kept is not items:
                out[key] = {**holder, field: kept} if field else kept  # type: ignore[dict-item]
        execute = out.get("execute")
        cols = execute["tasks"].get("$rows") if isinstance(execute, dict) and isinstance(execute.get("tasks"), dict) \
            else None
        if cols is not None:  # the tasks' predecessors as runs, the other columns packed
            assert isinstance(execute, dict)
            out["execute"] = {**execute, "tasks": {"$rows": {("pred_runs" if k == "preds" else k):
                                                             (pred_runs(v) if k == "preds" else packed(_listed(v)))
                                                             for k, v in cols.items()}}}
        sgs = out.get("subgraphs")
        if isinstance(sgs, dict) and "$rows" in sgs:
            out["subgraphs"] = {"$rows": {k: packed(_listed(v)) for k, v in sgs["$rows"].items()}}
        aggregates.update(panel_aggregates(lists))
        if isinstance(aggregates.get("subgraph_nodes"), list):
            aggregates["subgraph_nodes"] = packed(aggregates["subgraph_nodes"])
    if windowed:
        assert isinstance(run, dict)
        gone_run: dict[str, Any] = {"tasks": n_tasks, "pipe_profiles": len(run.get("pipe_profiles") or ())}
        counters = run.get("counters") or {}
        drop = {"tasks", "pipe_profiles"}
        if sum(len(v) for v in counters.values()) > PANEL_COUNTER_POINTS:
            gone_run["counters"] = {k: len(v) for k, v in counters.items()}
            drop.add("counters")
        omitted["run"] = gone_run
        out["run"] = {k: v for k, v in run.items() if k not in drop}
        aggregates["time_share"] = time_share(lists)
    out["aggregates"] = aggregates
    out["omitted"] = omitted
    return out


def as_rows(items: list[Any], leave_out: Sequence[str] = ()) -> Any:
    """A list of objects that all have the same keys, in the same order, as `{"$rows": {key: [each one's value]}}`,
    without the keys in `leave_out`: how a slim record sends its subgraphs and execute tasks (`webview/src/model.ts`
    `expandSlimRecord` makes the objects again). Any other list as it is (without those keys)."""
    if not items or not all(isinstance(x, dict) for x in items):
        return items
    keys = tuple(items[0])
    if any(tuple(x) != keys for x in items):
        return [{k: v for k, v in x.items() if k not in leave_out} for x in items] if leave_out else items
    return {"$rows": {k: [x[k] for x in items] for k in keys if k not in leave_out}}


def _listed(column: Any) -> Any:
    """A column as JSON: `ArrayLists` (`PANEL_ROWS`' lists of numbers) as lists, any other as it is."""
    return column if isinstance(column, list) else column.tolist()


PACK_FROM = 1_000  # a `$rows` column of this many values or more is sent packed when that is shorter (`packed`)


def packed(column: list[Any]) -> Any:
    """A slim record's `$rows` column (and its subgraphs' nodes) as sent: ints in one arithmetic progression as
    `{"$range": [first, step, n]}` (ids: 0, 1, 2, …), a column of long runs of one value (ints, strings or lists:
    cores, leaves, instances, coordinates) as `{"$runs": [value, count, value, count, …]}`, any other as it is;
    `webview/src/model.ts` `unpack` makes the list again. glm's fused attention's 1.05 M tasks and subgraphs: their
    ids, subgraphs and cores were 42 of the slim record's 76 MB, their coordinates and nodes 11 more."""
    n = len(column)
    if n < PACK_FROM:
        return column
    import numpy as np  # (here: the language server starts without numpy)

    first = column[0]
    kinds = set(map(type, column))
    if kinds == {list}:  # runs of equal lists (tasks' coordinates, subgraphs' nodes)
        starts = [0]
        limit, prev = n // 4, first
        for i in range(1, n):  # (given up as soon as the runs are too many: a column of short ones costs half a scan)
            x = column[i]
            if x != prev:
                starts.append(i)
                if len(starts) > limit:
                    return column
                prev = x
        starts.append(n)
        return {"$runs": [x for k in range(len(starts) - 1) for x in (column[starts[k]], starts[k + 1] - starts[k])]}
    if kinds not in ({int}, {str}):
        return column  # (bools, floats, None, a mix: as they are)
    try:
        a = np.asarray(column)
    except OverflowError:  # an int beyond 64 bits
        return column
    if a.dtype.kind in "iu":
        steps = np.diff(a)
        if (steps == steps[0]).all():
            return {"$range": [first, int(steps[0]), n]}
    elif a.dtype.kind != "U":
        return column
    starts = np.flatnonzero(a[1:] != a[:-1]) + 1
    if 4 * (len(starts) + 1) > n:  # runs too short: the pairs would be no shorter
        return column
    at = np.concatenate(([0], starts))
    counts = np.diff(np.concatenate((at, [n])))
    return {"$runs": [x for pair in zip(a[at].tolist(), counts.tolist()) for x in pair]}


def _flat(lists: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    """Lists of ints as (every entry in order, offsets: list i is entries offsets[i]:offsets[i + 1]) arrays; an
    `ArrayLists` gives its own two."""
    import numpy as np  # (here: the language server starts without numpy)

    if hasattr(lists, "offsets") and hasattr(lists, "flat"):
        return lists.flat, lists.offsets
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(offsets[-1])), offsets


def pred_runs(preds: Sequence[Sequence[int]]) -> list[list[Any]]:
    """Each task's predecessors with every run of consecutive ids (`i, i+1, …, j`, j > i) as the pair `[i, j]` and
    every other id as itself: what a slim record sends as `pred_runs` in place of `preds` (`webview/src/model.ts`
    `expandSlimRecord` makes them again, in their order). Kimi's block attention, where every task waits for the 128
    tasks that wrote a buffer in slabs: 4.2 M arrows, 49 k runs (28 MB of the record's 32 MB as lists)."""
    import numpy as np  # (here: the language server starts without numpy)

    table, codes = getattr(preds, "table", None), getattr(preds, "codes", None)
    if table is not None and codes is not None:  # `PickedLists`: each distinct list's runs once, picked
        runs = pred_runs(table)
        return [runs[c] for c in codes.tolist()]
    flat, offsets = _flat(preds)
    if not flat.size:
        return [[] for _ in range(len(preds))]
    lengths = np.diff(offsets)
    starts = np.ones(flat.size, dtype=bool)  # where a run starts: a task's first id, or one not after the last
    starts[1:] = flat[1:] != flat[:-1] + 1
    starts[offsets[:-1][lengths > 0]] = True
    at = np.flatnonzero(starts)
    first, last = flat[at].tolist(), flat[np.append(at[1:], flat.size) - 1].tolist()
    items = [a if a == b else [a, b] for a, b in zip(first, last)]
    per_task = np.bincount(np.searchsorted(offsets, at, side="right") - 1, minlength=len(preds)).tolist()
    out, k = [], 0
    for n in per_task:
        out.append(items[k:k + n])
        k += n
    return out


def panel_run(run: Any, tasks: int = PANEL_TASKS) -> Any:
    """A run of the history (a pinned baseline, a compile picked to compare) as the panels are sent it: itself up
    to `tasks` tasks, else its figures only — without `tasks`, `pipe_profiles` and `counters`, named in its own
    `omitted` (`{"tasks": t, "pipe_profiles": p, "counters": c}`); lanes, metrics and info kept. Only the current
    compile's run is drawn from windows; the panel draws such a run by its figures."""
    t = run.get("tasks") if isinstance(run, dict) else None
    n = len(t.get("id") or ()) if isinstance(t, dict) else 0
    if n <= tasks:
        return run
    assert isinstance(run, dict)
    gone = {"tasks": n, "pipe_profiles": len(run.get("pipe_profiles") or ()),
            "counters": sum(len(v) for v in (run.get("counters") or {}).values())}
    return {**{k: v for k, v in run.items() if k not in gone}, "omitted": gone}


def op_positions(ids: Sequence[int]) -> Any:
    """Each tile op id's position in the `tiles.ops` columns, an int64 array indexed by id (-1: none). The columns are
    in program order and graph partition's copies take the ids after every other op's, so past the first copy an id
    is not its position (a subgraph's `ops`, an op's `inputs` and an instruction's `tile_op` are ids;
    docs/record-schema.md)."""
    import numpy as np  # (here: the language server starts without numpy)

    a = np.asarray(ids, dtype=np.int64)
    out = np.full(int(a.max()) + 1 if len(a) else 0, -1, dtype=np.int64)
    out[a] = np.arange(len(a), dtype=np.int64)
    return out


def panel_aggregates(lists: Mapping[str, Any]) -> dict[str, Any]:
    """What the graph panel would compute from the per-tile-op bulk a slim record leaves out: `subgraph_nodes`
    (per subgraph, by position: the tensor nodes of its tile ops, compute ops' before loads/stores/copies — a
    task's nodes and source lines, webview model.ts `nodesOfTask`) and `buffer_use` (per tensor node id: the
    fullest on-chip memory of the leaves computing it, peak / capacity — the buffer-use overlay, graph/model.ts
    `bufferUse`), and `tile_ops`, how many there are. The subgraphs as objects or as columns (`PANEL_ROWS`)."""
    import numpy as np  # (here: the language server starts without numpy)

    ops = (lists.get("tiles") or {}).get("ops") or {}
    node, kind = ops.get("node") or [], ops.get("op") or []
    sgs = lists.get("subgraphs") or []
    if isinstance(sgs, dict) and "$rows" in sgs:
        cols = sgs["$rows"]
        members = cols.get("ops") or []
        leaves = cols.get("leaf") or [None] * len(members)
    else:
        members, leaves = [sg.get("ops") or () for sg in sgs], [sg.get("leaf") for sg in sgs]
    n = len(members)
    # each subgraph's distinct nodes, its compute ops' first, then its moves', each in program order (its `ops` are
    # ids: their positions in the columns, where the nodes and kinds are)
    flat, offsets = _flat(members)
    if len(flat):
        flat = op_positions(ops.get("id") or ())[flat]
    seg = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    nodes = np.asarray(node, dtype=np.int64)[flat] if len(flat) else np.zeros(0, dtype=np.int64)
    moves = np.fromiter(map(TASK_MOVES.__contains__, kind), dtype=bool, count=len(kind))[flat] \
        if len(flat) else np.zeros(0, dtype=bool)
    order = np.lexsort((np.arange(len(flat)), moves, seg))  # by subgraph, compute ops first, then by place
    seg, nodes = seg[order], nodes[order]
    low = int(nodes.min()) if len(nodes) else 0
    _, first = np.unique(seg * (int(nodes.max()) - low + 1 if len(nodes) else 1) + (nodes - low), return_index=True)
    kept = np.zeros(len(nodes), dtype=bool)
    kept[first] = True
    seg, nodes = seg[kept], nodes[kept]
    ends = np.cumsum(np.bincount(seg, minlength=n)).tolist()
    every = nodes.tolist()
    sg_nodes = [every[a:b] for a, b in zip([0, *ends[:-1]], ends)]
    fullest: dict[int, float] = {}
    for b in lists.get("blocks") or ():
        cap = dict((s, c) for s, c in b.get("capacity_bytes") or ())
        share = max((peak / cap[s] for s, peak in b.get("peak_bytes") or () if cap.get(s)), default=0.0)
        fullest[b["leaf"]] = max(fullest.get(b["leaf"], 0.0), share)
    # per node the fullest share of the subgraphs computing it, the nodes in the order they are met
    shares = [fullest.get(leaf) if leaf is not None else None for leaf in leaves]
    has = np.array([x is not None for x in shares], dtype=bool)
    use: dict[int, float] = {}
    if has.any():
        of = np.array([x if x is not None else 0.0 for x in shares], dtype=np.float64)
        met = has[seg]
        at_nodes, at_share = nodes[met], of[seg[met]]
        keys, first_at, inverse = np.unique(at_nodes, return_index=True, return_inverse=True)
        best = np.zeros(len(keys))  # (as a share of 0.0 would be)
        np.maximum.at(best, inverse.reshape(-1), at_share)
        by_first = np.argsort(first_at, kind="stable")
        use = dict(zip(keys[by_first].tolist(), best[by_first].tolist()))
    return {"tile_ops": len(ops.get("id") or ()), "subgraph_nodes": sg_nodes,
            "buffer_use": {str(k): v for k, v in use.items()}}


class TileIndex:
    """The final program's tile grids (one per tensor node with tile ops: rows = instance and every coordinate
    but the last, columns = the last coordinate, as the graph panel's Tiles view draws them, graph/model.ts
    `tileGrids`) and which tile ops each cell holds."""

    def __init__(self, lists: Mapping[str, Any]) -> None:
        ops = (lists.get("tiles") or {}).get("ops") or {}
        self.ops: Mapping[str, Any] = ops
        self.memory: Sequence[Any] = lists.get("memory") or ()
        ids = ops.get("id") or ()
        n = len(ids)
        at = op_positions(ids).tolist()
        self.subgraph = [-1] * n  # by position, as the cells (a subgraph's `ops` are ids)
        for sg in lists.get("subgraphs") or ():
            for i in sg.get("ops") or ():
                k = at[i] if 0 <= i < len(at) else -1
                if k >= 0:
                    self.subgraph[k] = sg["id"]
        per: dict[int, tuple[dict[str, int], dict[tuple[int, int], list[int]], list[int]]] = {}
        for k, (node, inst, coord) in enumerate(zip(ops.get("node") or (), ops.get("instance") or (),
                                                    ops.get("coord") or (), strict=True)):
            rows, cells, max_col = per.setdefault(node, ({}, {}, [0]))
            col = coord[-1] if coord else 0
            row_key = f"{inst}|{','.join(str(c) for c in coord[:-1])}"
            row = rows.setdefault(row_key, len(rows))
            max_col[0] = max(max_col[0], col)
            cells.setdefault((row, col), []).append(k)
        self.cells: dict[int, list[list[int]]] = {}
        self.grids: list[dict[str, Any]] = []
        kind = ops.get("op") or []
        for node, (rows, cells, max_col) in per.items():
            ncols = max_col[0] + 1
            flat = [cells.get((r, c), []) for r in range(len(rows)) for c in range(ncols)]
            self.cells[node] = flat
            runs: list[int] = []  # [value, count, value, count, …]: each cell's subgraph (-1: none, -2: empty)
            for cell in flat:
                rep = next((k for k in cell if kind[k] not in GRID_MOVES), cell[0]) if cell else -1
                value = self.subgraph[rep] if cell else -2
                if runs and runs[-2] == value:
                    runs[-1] += 1
                else:
                    runs += [value, 1]
            self.grids.append({"node": node, "rows": len(rows), "cols": ncols, "row_keys": list(rows),
                               "tiles": sum(1 for c in flat if c), "subgraph": runs})

    def cell_ops(self, node: int, cell: int) -> list[int]:
        """The tile ops in one cell (row-major) of a node's grid; ValueError when there is no such cell."""
        flat = self.cells.get(node)
        if flat is None:
            raise ValueError(f"tensor node {node} has no tile grid")
        if not 0 <= cell < len(flat):
            raise ValueError(f"no cell {cell} in the tile grid of node {node} (it has {len(flat)})")
        return flat[cell]

    def tile_ops_of(self, want: Sequence[int]) -> dict[str, Any]:
        """Each asked tile op's id, op, subgraph (-1: none), shape, dtype and memory (null), in the order asked;
        ValueError for an index out of range or more than MAX_TILE_OPS."""
        if len(want) > MAX_TILE_OPS:
            raise ValueError(f"at most {MAX_TILE_OPS} tile ops in one request (asked {len(want)})")
        o, n = self.ops, len(self.subgraph)
        bad = [k for k in want if not 0 <= k < n]
        if bad:
            raise ValueError(f"no tile op {bad[0]} (there are {n})")
        shape, dtype = o.get("shape"), o.get("dtype")
        return {"ops": list(want), "id": [o["id"][k] for k in want], "op": [o["op"][k] for k in want],
                "subgraph": [self.subgraph[k] for k in want],
                "shape": [shape[k] if shape else [] for k in want], "dtype": [dtype[k] if dtype else "" for k in want],
                "memory": [self.memory[k] if k < len(self.memory) else None for k in want]}


_TILE_INDEX: dict[int, tuple[Any, TileIndex]] = {}  # id(tiles.ops) -> (it, its index): the latest two asked
_TILE_INDEX_LOCK = threading.Lock()


def tile_index(lists: Mapping[str, Any]) -> TileIndex:
    """The `TileIndex` of a record (as lists), made once for the latest two records asked (a Tiles view's
    grids, then its clicked tiles); ValueError when the record has no tile ops."""
    ops = (lists.get("tiles") or {}).get("ops")
    if not isinstance(ops, dict) or not ops.get("id"):
        raise ValueError("this compile has no tile ops")
    with _TILE_INDEX_LOCK:
        hit = _TILE_INDEX.get(id(ops))
        if hit is not None and hit[0] is ops:
            return hit[1]
    index = TileIndex(lists)
    with _TILE_INDEX_LOCK:
        _TILE_INDEX[id(ops)] = (ops, index)
        while len(_TILE_INDEX) > 2:
            _TILE_INDEX.pop(next(iter(_TILE_INDEX)))
    return index


def tile_grids(lists: Mapping[str, Any]) -> dict[str, Any]:
    """`{"tile_ops", "grids": [{"node", "rows", "cols", "row_keys", "tiles", "subgraph"}]}`: what the Tiles view
    draws — per tensor node its grid's size, its rows' keys (`instance|coord…`), how many cells hold a tile, and
    each cell's colour key run-length encoded, `[value, count, …]` row-major: the subgraph of the cell's first
    op that is not a load or store (-1: not partitioned, -2: no tile)."""
    index = tile_index(lists)
    return {"tile_ops": len(index.subgraph), "grids": index.grids}


def tile_ops(lists: Mapping[str, Any], ops: Sequence[int] | None = None, node: int | None = None,
             cell: int | None = None) -> dict[str, Any]:
    """Some tile ops (`ops`, or those of one grid cell: `node` and `cell`) as `TileIndex.tile_ops_of` gives
    them (with `node` and `cell` echoed); ValueError for what the record does not have."""
    index = tile_index(lists)
    if node is not None or cell is not None:
        if node is None or cell is None or ops:
            raise ValueError("ask for tile ops by their indices (ops) or by a grid cell (node and cell), not both")
        return {**index.tile_ops_of(index.cell_ops(node, cell)), "node": node, "cell": cell}
    return {**index.tile_ops_of(list(ops or ())), "node": None, "cell": None}


def block_of(lists: Mapping[str, Any], leaf: int) -> dict[str, Any]:
    """A leaf function's block as the Leaves view draws it: its figures and its instructions as `{opcode, pipe,
    tile_op, node, note}` (`node`: the tensor node of the instruction's tile op, -1 none), without their operands
    and the block's buffers; ValueError when the leaf has no block."""
    block = next((b for b in lists.get("blocks") or () if b.get("leaf") == leaf), None)
    if block is None:
        raise ValueError(f"no block of leaf {leaf}")
    ops = (lists.get("tiles") or {}).get("ops") or {}
    node, at = ops.get("node") or [], op_positions(ops.get("id") or ()).tolist()  # an instruction's tile_op: an id
    instrs = [{"opcode": i["opcode"], "pipe": i["pipe"], "tile_op": i["tile_op"],
               "node": node[at[i["tile_op"]]] if 0 <= i["tile_op"] < len(at) and at[i["tile_op"]] >= 0 else -1,
               "note": i.get("note") or ""}
              for i in block.get("instrs") or ()]
    return {**{k: v for k, v in block.items() if k not in PANEL_OMIT_BLOCK}, "instrs": instrs}


def _column(items: Any, key: str) -> Any:
    """`[x[key] for x in items]` of a list of objects, or that column of one held as columns (`PANEL_ROWS`)."""
    if isinstance(items, dict) and "$rows" in items:
        return items["$rows"][key]
    return [x[key] for x in items]


def time_share(lists: Mapping[str, Any]) -> dict[str, float]:
    """µs of task time per tensor node id (str): each task's duration split evenly over its subgraph's tile ops,
    as the graph panel's time-share overlay sums it from a whole run (webview/src/graph/model.ts `timeShare`); the
    nodes in the order the run's tasks meet them. The subgraphs and execute tasks as objects or as columns."""
    import numpy as np  # (here: the language server starts without numpy)

    run, ex, sgs = lists.get("run") or {}, lists.get("execute") or {}, lists.get("subgraphs")
    ops = (lists.get("tiles") or {}).get("ops") or {}
    t, node = run.get("tasks"), ops.get("node")
    tasks = ex.get("tasks") if ex else None
    if not t or not sgs or not tasks or node is None:
        return {}
    subgraph = dict(zip(_column(tasks, "id"), _column(tasks, "subgraph")))
    flat, offsets = _flat(_column(sgs, "ops"))
    n_sg = len(offsets) - 1
    sg = np.array([subgraph.get(tid, -1) for tid in t["id"]], dtype=np.int64)
    sg[(sg < 0) | (sg >= n_sg)] = -1
    known = sg >= 0
    count = np.where(known, np.diff(offsets)[np.where(known, sg, 0)], 0)
    runs = count > 0
    sg, count = sg[runs], count[runs]
    per = (np.asarray(t["end"], dtype=np.float64)[runs] - np.asarray(t["start"], dtype=np.float64)[runs]) / count
    # each task's share to each of its subgraph's tile ops, in the run's order, summed per node in that order
    starts = offsets[sg]
    at = np.repeat(starts - np.concatenate(([0], np.cumsum(count)[:-1])), count) + np.arange(int(count.sum()))
    nodes = np.asarray(node, dtype=np.int64)[op_positions(ops.get("id") or ())[flat[at]]] if len(at) \
        else np.zeros(0, dtype=np.int64)
    if not len(nodes):
        return {}
    keys, first, inverse = np.unique(nodes, return_index=True, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=np.repeat(per, count), minlength=len(keys))
    order = np.argsort(first, kind="stable")
    return {str(k): v for k, v in zip(keys[order].tolist(), sums[order].tolist())}


def window_tasks(starts: Sequence[float], ends: Sequence[float], start: float, end: float) -> list[int]:
    """Positions of the tasks a swimlane window [start, end] holds, in position order: those overlapping it
    (a task that only touches an edge is not in it), every task for the whole run. One rule for both
    servers' windows, their bins and their matches."""
    t0, t1 = min(starts, default=0.0), max(ends, default=0.0)
    if start <= t0 and end >= t1:
        return list(range(len(starts)))
    return [k for k in range(len(starts)) if starts[k] < end and ends[k] > start]


def window_counters(counters: Mapping[str, Sequence[Sequence[float]]], start: float,
                    end: float) -> dict[str, list[list[float]]]:
    """Each counter's points in [start, end], after the one in force at `start`: a window's ready counters."""
    return {name: [list(p) for p in points if p[0] < start][-1:] + [list(p) for p in points if start <= p[0] <= end]
            for name, points in counters.items()}


def window_match(ids: Sequence[int], starts: Sequence[float], ranges: Sequence[Sequence[int]],
                 held: Sequence[int]) -> tuple[list[int], list[int], int | None]:
    """Where a search's tasks (id `ranges`) are: (their positions over the whole run, those of them the window
    holds — `held`, its `window_tasks` — and the first to start, or None)."""
    hits = match_positions(ids, ranges)
    inside = set(held) if hits else set()
    first = min(hits, key=lambda k: (starts[k], ids[k])) if hits else None
    return hits, [k for k in hits if k in inside], first


def slowest_tasks(starts: Sequence[float], ends: Sequence[float], ids: Sequence[int], count: int) -> list[int]:
    """The positions of the `count` longest tasks, longest first (ties: the lower id first): the swimlane
    panel's table of a run it draws from windows."""
    if count <= 0:
        return []
    return heapq.nsmallest(count, range(len(starts)), key=lambda k: (starts[k] - ends[k], ids[k]))


def start_order(picked: list[int], starts: Sequence[float], ids: Sequence[int]) -> list[int]:
    """Task positions by start, then id (a window's boxes in the order they are sent); from `NUMPY_FROM` of them a
    stable numpy sort by the same keys (glm's fused attention's whole run, 1.05 M tasks: 0.24 -> 0.11 s)."""
    if len(picked) < NUMPY_FROM:
        return sorted(picked, key=lambda k: (starts[k], ids[k]))
    import numpy as np

    at = np.asarray(picked, dtype=np.int64)
    order = np.lexsort((np.asarray(ids)[at], np.asarray(starts, dtype=np.float64)[at]))
    return at[order].tolist()  # type: ignore[no-any-return]


def window_bins(inside: Sequence[int], lanes_of: Sequence[int], starts: Sequence[float], ends: Sequence[float],
                start: float, end: float, nbins: int, held: Sequence[Sequence[int]] | None = None
                ) -> list[tuple[int, float, float, float, int]]:
    """Per lane and bin of [start, end]: (lane, bin start, bin end, the share of the bin its tasks ran, how many
    overlap it), non-empty bins only, by lane then time; a task counts on its lane and on each lane it holds
    (`held`, the run's column: a MIX task's cluster AIVs). Linear in tasks + lanes x bins (a task spanning many
    bins adds to their difference arrays). From `NUMPY_FROM` tasks in numpy, the same figures to the last bit
    (`_bins_numpy`: glm's fused attention's whole run, 1.05 M tasks: 1.21 -> 0.20 s)."""
    if len(inside) >= NUMPY_FROM:
        return _bins_numpy(inside, lanes_of, starts, ends, start, end, nbins, held)
    return _bins_python(inside, lanes_of, starts, ends, start, end, nbins, held)


NUMPY_FROM = 20_000  # tasks from which `window_bins` and `start_order` work in numpy


def _bins_python(inside: Sequence[int], lanes_of: Sequence[int], starts: Sequence[float], ends: Sequence[float],
                 start: float, end: float, nbins: int, held: Sequence[Sequence[int]] | None = None
                 ) -> list[tuple[int, float, float, float, int]]:
    width = (end - start) / nbins if end > start else 1.0
    edges = [start + i * width for i in range(nbins + 1)]
    count: dict[int, list[int]] = {}  # lane -> difference array of tasks overlapping each bin
    full: dict[int, list[int]] = {}  # lane -> difference array of tasks covering each bin whole
    part: defaultdict[tuple[int, int], float] = defaultdict(float)  # (lane, bin) -> partial overlaps
    for k, lane in _on_lanes(inside, lanes_of, held):
        a, b = max(starts[k], start), min(ends[k], end)
        first = min(nbins - 1, max(0, bisect.bisect_right(edges, a) - 1))
        last = max(first, min(nbins - 1, max(0, bisect.bisect_left(edges, b) - 1)))
        cd = count.get(lane) or count.setdefault(lane, [0] * (nbins + 1))
        cd[first] += 1
        cd[last + 1] -= 1
        if first == last:
            part[(lane, first)] += max(0.0, b - a)
            continue
        part[(lane, first)] += max(0.0, edges[first + 1] - a)
        part[(lane, last)] += max(0.0, b - edges[last])
        if last > first + 1:
            fd = full.get(lane) or full.setdefault(lane, [0] * (nbins + 1))
            fd[first + 1] += 1
            fd[last] -= 1
    out: list[tuple[int, float, float, float, int]] = []
    for lane in sorted(count):
        cd, fd = count[lane], full.get(lane)
        tasks = covered = 0
        for i in range(nbins):
            tasks += cd[i]
            covered += fd[i] if fd is not None else 0
            if tasks:
                busy = part.get((lane, i), 0.0) + covered * width
                out.append((lane, edges[i], edges[i + 1], min(1.0, busy / width), tasks))
    return out


def _bins_numpy(inside: Sequence[int], lanes_of: Sequence[int], starts: Sequence[float], ends: Sequence[float],
                start: float, end: float, nbins: int, held: Sequence[Sequence[int]] | None = None
                ) -> list[tuple[int, float, float, float, int]]:
    """`_bins_python` with arrays: each task's first and last bin found by one sorted search, the bins' task counts
    and whole-bin coverage as difference arrays, the partial overlaps summed per (lane, bin) by `bincount`, which
    adds in the order given — each task's share at its first bin, then at its last, task after task, as the loop
    adds them: the same sums to the last bit."""
    import numpy as np  # (here: the language server starts without numpy)

    width = (end - start) / nbins if end > start else 1.0
    edges = start + np.arange(nbins + 1, dtype=np.float64) * width
    if held is None:
        ks = np.asarray(inside, dtype=np.int64)
        lanes = np.asarray(lanes_of, dtype=np.int64)[ks] if len(ks) else np.zeros(0, dtype=np.int64)
    else:
        pairs = np.array(list(_on_lanes(inside, lanes_of, held)), dtype=np.int64).reshape(-1, 2)
        ks, lanes = pairs[:, 0], pairs[:, 1]
    if not len(ks):
        return []
    a = np.maximum(np.asarray(starts, dtype=np.float64)[ks], start)
    b = np.minimum(np.asarray(ends, dtype=np.float64)[ks], end)
    first = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, nbins - 1)
    last = np.maximum(first, np.clip(np.searchsorted(edges, b, side="left") - 1, 0, nbins - 1))
    names, lane_at = np.unique(lanes, return_inverse=True)
    cells = len(names) * (nbins + 1)
    row = lane_at * (nbins + 1)
    count = np.bincount(row + first, minlength=cells) - np.bincount(row + last + 1, minlength=cells)
    spans = last > first + 1
    full = np.bincount(row[spans] + first[spans] + 1, minlength=cells) - \
        np.bincount(row[spans] + last[spans], minlength=cells)
    one = first == last
    head = np.where(one, np.maximum(0.0, b - a), np.maximum(0.0, edges[np.minimum(first + 1, nbins)] - a))
    tail = np.where(one, 0.0, np.maximum(0.0, b - edges[last]))
    keys = np.column_stack((row + first, row + last)).ravel()
    part = np.bincount(keys, weights=np.column_stack((head, tail)).ravel(), minlength=cells)
    tasks = np.cumsum(count.reshape(len(names), nbins + 1)[:, :nbins], axis=1)
    covered = np.cumsum(full.reshape(len(names), nbins + 1)[:, :nbins], axis=1)
    busy = part.reshape(len(names), nbins + 1)[:, :nbins] + covered * width
    share = np.minimum(1.0, busy / width)
    li, bi = np.nonzero(tasks)
    return list(zip(names[li].tolist(), edges[bi].tolist(), edges[bi + 1].tolist(), share[li, bi].tolist(),
                    tasks[li, bi].tolist()))


def _on_lanes(inside: Sequence[int], lanes_of: Sequence[int], held: Sequence[Sequence[int]] | None
              ) -> Iterator[tuple[int, int]]:
    """(task, lane) for each lane each task occupies: its own, then those it holds."""
    for k in inside:
        yield k, lanes_of[k]
        if held is not None and k < len(held):
            for lane in held[k] or ():
                yield k, lane


MAX_LINKED = 1_000  # a window's dependency cone of one task: tasks at most
MAX_DEPTH = 5  # levels of predecessors and successors in that cone
MAX_MATCH_RANGES = 10_000  # id ranges a window's match may name


def _position(ids: Sequence[int]) -> Callable[[int], int]:
    """Task id -> position in the columns (-1: none); ids are usually their positions."""
    n = len(ids)
    index: dict[int, int] | None = None

    def pos(task: int) -> int:
        nonlocal index
        if 0 <= task < n and ids[task] == task:
            return task
        if index is None:
            index = {int(x): k for k, x in enumerate(ids)}
        return index.get(task, -1)
    return pos


def dependency_cone(ids: Sequence[int], preds: Sequence[Sequence[int]], around: int, depth: int,
                    cap: int = MAX_LINKED) -> list[int]:
    """Positions of task `around` and its predecessors and successors to `depth` levels (at most `cap`, nearest
    levels first): what the swimlane panel draws arrows to from a selected task, in view or not."""
    pos = _position(ids)
    k0 = pos(around)
    if k0 < 0:
        return []
    succ: dict[int, list[int]] = defaultdict(list)
    for k, ps in enumerate(preds):
        for p in ps or ():
            succ[int(p)].append(k)
    out = [k0]
    seen = {k0}
    for step in (lambda k: [pos(int(p)) for p in preds[k] or ()], lambda k: succ.get(int(ids[k]), [])):
        frontier = [k0]
        for _ in range(depth):
            nxt: list[int] = []
            for k in frontier:
                for j in step(k):
                    if j >= 0 and j not in seen and len(out) < cap:
                        seen.add(j)
                        out.append(j)
                        nxt.append(j)
            frontier = nxt
    return out


def match_positions(ids: Sequence[int], ranges: Sequence[Sequence[int]]) -> list[int]:
    """Positions of the tasks whose id lies in one of `ranges` ([first, last] inclusive): the tasks a panel's
    search, line filter or leaf highlight found in the record, placed over the whole run."""
    spans = sorted((int(r[0]), int(r[1])) for r in ranges if len(r) == 2 and r[0] <= r[1])
    if not spans:
        return []
    firsts = [a for a, _ in spans]
    out = []
    for k, x in enumerate(ids):
        i = bisect.bisect_right(firsts, x) - 1
        if i >= 0 and x <= spans[i][1]:
            out.append(k)
    return out


def window_profiles(profile_of: Sequence[int | None] | None, profiles: Sequence[Any],
                    picks: Sequence[int]) -> tuple[list[int], list[Any]]:
    """The pipe profiles of the tasks at `picks`, renumbered: (each pick's index in the list or -1, the list) —
    a window's pipe sub-lanes without the run's every profile."""
    if not profile_of or not profiles:
        return [-1] * len(picks), []
    renumber: dict[int, int] = {}
    out: list[int] = []
    for k in picks:
        p = profile_of[k]
        if p is None or not 0 <= p < len(profiles):
            out.append(-1)
            continue
        out.append(renumber.setdefault(int(p), len(renumber)))
    return out, [profiles[p] for p in renumber]
