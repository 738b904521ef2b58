"""`precision_report`: each selected pass of one kernel, op by op, against an fp64 reference.

It answers the question a failing fp16/bf16 kernel raises — *which line* lost the precision —
the way PyPTO's pass verify does, with the rule of `pypto.analysis.precision.rule`.

**Per op** (`precision_report`). A tensor-stage snapshot runs on the reference
interpreter twice: in the kernel's dtypes (device semantics: fp16/bf16 rounded after
every op) and with `fp64=True`; an interpreter observer records every node's value.
Rows are the ops that compute (data movement — view, assemble, reshape, transpose,
concat, clone, expand — only copies its input's error and is left out); the kernel's
outputs get rows of their own. A node inside a loop runs once per iteration: its row
judges all iterations together, as if they were stacked into one tensor (counts add,
maxima take the max), and names the first iteration that fails on its own. The final
tiled program (and any tile-stage pass asked for) runs tile op by tile op; each
computing tile (not the partials of a split reduction: their combine is the value)
is put back at its place in its node's value, per loop instance, and compared with the
fp64 interpreter's value of that node; its outputs get a per-tile error grid whose
cells are the tiles the program stores into the output (the vec tile shape of the op
that writes it).

**Localizing.** The first failing pass is the first selected pass (in pipeline order,
"final" last) with a failing row; the first failing op is, within it, the failing row
that failed first during the run: the moment its first failing iteration was computed
(or its last iteration, when only the iterations together fail). Outputs come after
every op. Its source line is the node's innermost frame (for a node a pass made, the
line of the node it came from).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.analysis.precision.results import OpRow, PassResult, PrecisionReport, TileGrid
from pypto.analysis.precision.rule import ACCUMULATING_OPS, Stats, Tolerance, check
from pypto.analysis.precision.targets import prepare_target, tensor_arrays
from pypto.analysis.precision.values import (
    MOVES,
    Locator,
    Reference,
    comparable,
    line_of,
    reference_values,
    tiled_values,
)
from pypto.compiler.tile_exec import TileExecutor
from pypto.compiler.tile_ir import Region, TileGraph
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph, Node
from pypto.record import CompileRecord
from pypto.reference.interpreter import Interpreter

FINAL = "final"  # the pseudo-pass: the final tiled program


class _Saver:
    """`pass_verify_save_tensor`: each compared value and its reference as .npy."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def save(self, folder: str, stem: str, out: np.ndarray, ref: np.ndarray) -> None:
        if self.root is None:
            return
        d = self.root / folder
        d.mkdir(parents=True, exist_ok=True)
        np.save(d / f"{stem}.npy", np.asarray(out))
        np.save(d / f"{stem}.fp64.npy", np.asarray(ref))


def _dtype_short(node: Node | None) -> str:
    return node.type.dtype.short if node is not None and node.type is not None else "?"


def _rows(stats: Mapping[int, Stats], seqs: Mapping[int, list[float]], nodes: Mapping[int, Node],
          order: Iterable[int], locate: Locator) -> list[OpRow]:
    out = []
    for nid in order:
        s = stats.get(nid)
        if s is None:
            continue
        v = s.verdict()
        n = nodes.get(nid)
        seq = seqs[nid][s.first_bad] if s.first_bad is not None else seqs[nid][-1]
        out.append(OpRow(nid, n.op if n is not None else "?", _dtype_short(n), locate(nid), v, s.count, s.first_bad,
                         "op", n.name if n is not None else None, seq))
    return out


def _accumulates(graph: Graph) -> bool:
    """Whether the kernel's outputs may come out of an accumulation (the wider fp32 tolerance)."""
    return any(n.op in ACCUMULATING_OPS for n in graph.walk())


def _tol_of(tol: Tolerance, n: Node | None, accumulated: bool = False) -> tuple[float, float, float]:
    dtype = n.type.dtype if n is not None and n.type is not None else None
    return tol.of(dtype, accumulated or (n is not None and n.op in ACCUMULATING_OPS))


def _output_rows(graph: Graph, outs: Mapping[str, np.ndarray], ref: Reference, tol: Tolerance,
                 locate: Locator, saver: _Saver, folder: str) -> list[OpRow]:
    nodes = graph.by_id()
    rows = []
    acc = _accumulates(graph)
    for name, nid in graph.outputs:
        got, want = outs[name], ref.outputs[name]
        saver.save(folder, f"output_{name}", got, want)
        n = nodes.get(nid)
        rows.append(OpRow(nid, n.op if n is not None else "?", _dtype_short(n), locate(nid),
                          check(got, want, *_tol_of(tol, n, acc)), kind="output", name=name, seq=math.inf))
    return rows


def _tensor_pass(graph: Graph, ref: Reference, arrays: Mapping[str, np.ndarray], syms: Mapping[str, int],
                 tol: Tolerance, locate: Locator, saver: _Saver, folder: str
                 ) -> tuple[list[OpRow], list[OpRow]]:
    stats: dict[int, Stats] = {}
    seqs: dict[int, list[float]] = {}
    counter = [0]

    def observe(node: Node, value: Any) -> None:
        if node.op in MOVES:
            return
        counter[0] += 1
        s = stats.get(node.id)
        if s is None:
            s = stats[node.id] = Stats(*_tol_of(tol, node))
            seqs[node.id] = []
        k = s.count
        want = ref.values[node.id][k]
        s.add(value, want)
        seqs[node.id].append(counter[0])
        saver.save(folder, f"n{node.id}_{node.op}_L{line_of(locate(node.id))}_{k}", value, want)

    outs = Interpreter(graph, observer=observe).run(arrays, syms)
    rows = _rows(stats, seqs, graph.by_id(), ref.order, locate)
    return rows, _output_rows(graph, outs, ref, tol, locate, saver, folder)


def _tiled_pass(graph: Graph, tiles: TileGraph, ref: Reference, arrays: Mapping[str, np.ndarray], tol: Tolerance,
                locate: Locator, saver: _Saver, folder: str, executor: TileExecutor | None = None
                ) -> tuple[list[OpRow], list[OpRow], dict[str, TileGrid], list[int]]:
    run = tiled_values(graph, tiles, arrays, executor)
    nodes = graph.by_id()
    stats: dict[int, Stats] = {}
    seqs: dict[int, list[float]] = {}
    skipped: list[int] = []
    for nid in run.order:
        got_list, want_list = run.values[nid], ref.values.get(nid, [])
        if len(got_list) != len(want_list):
            skipped.append(nid)
            continue
        s = Stats(*_tol_of(tol, nodes.get(nid)))
        seq: list[float] = []
        for (inst, got), want in zip(got_list, want_list):
            pair = comparable(got, want)
            if pair is None:
                continue
            s.add(*pair)
            seq.append(run.done_at[(nid, inst)])
            n = nodes[nid]
            saver.save(folder, f"n{nid}_{n.op}_L{line_of(locate(nid))}_{inst}", pair[0], pair[1])
        if s.count:
            stats[nid], seqs[nid] = s, seq
        else:
            skipped.append(nid)
    order = sorted(stats, key=lambda nid: seqs[nid][0])
    rows = _rows(stats, seqs, nodes, order, locate)
    outputs = _output_rows(graph, run.outputs, ref, tol, locate, saver, folder)
    acc = _accumulates(graph)
    out_nodes = {name: nodes.get(nid) for name, nid in graph.outputs}
    grids = {name: _grid(name, region, tiles, run.outputs[name], ref.outputs[name],
                         _tol_of(tol, out_nodes.get(name), acc))
             for name, region in tiles.outputs}
    return rows, outputs, grids, skipped


def _cells(tiles: TileGraph, target: Region) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The tiles (offset, shape), relative to `target`, that the program stores into it."""
    cells: dict[tuple[tuple[int, ...], tuple[int, ...]], None] = {}
    for o in tiles.ops:
        r = o.region
        if o.op not in ("store", "matmul") or r is None or r.buffer != target.buffer or r.layout != target.layout:
            continue
        rel = tuple(a - b for a, b in zip(r.offset, target.offset))
        if all(0 <= x and x + s <= t for x, s, t in zip(rel, r.shape, target.shape)):
            cells[(rel, tuple(r.shape))] = None
    return list(cells) or [((0,) * len(target.shape), tuple(target.shape))]


def _grid(name: str, target: Region, tiles: TileGraph, got: np.ndarray, want: np.ndarray,
          tol: tuple[float, float, float]) -> TileGrid:
    cells = _cells(tiles, target)
    rank = len(target.shape)
    offsets = tuple(tuple(sorted({off[a] for off, _ in cells})) for a in range(rank))
    shape = tuple(len(o) for o in offsets)
    errors = np.full(shape, -1, dtype=np.int64)
    max_abs = np.full(shape, np.nan)
    passed = np.ones(shape, dtype=bool)
    g, w = (got, want) if got.shape == want.shape else (got.reshape(-1), want.reshape(-1))
    if g.ndim != rank:
        cells = [((0,) * rank, tuple(target.shape))]
        g, w = got.reshape(target.shape), want.reshape(target.shape)
    for off, shp in cells:
        idx = tuple(o.index(x) for o, x in zip(offsets, off))
        sl = tuple(slice(x, x + s) for x, s in zip(off, shp))
        v = check(g[sl], w[sl], *tol)
        errors[idx] = max(int(errors[idx]), 0) + v.errors
        max_abs[idx] = v.max_abs if np.isnan(max_abs[idx]) else max(max_abs[idx], v.max_abs)
        passed[idx] = bool(passed[idx]) and v.passed
    tile = cells[0][1] if cells else tuple(target.shape)
    return TileGrid(name, tuple(tile), offsets, errors, max_abs, passed)


@dataclass
class _Selected:
    index: int
    name: str
    stage: str
    level: str
    changed: bool
    graph: Graph
    tiles: TileGraph | None

    @property
    def key(self) -> tuple[str, int]:
        return (self.level, id(self.tiles) if self.tiles is not None else id(self.graph))


def _select(record: CompileRecord, passes: Sequence[str | int] | None) -> list[_Selected]:
    available: list[_Selected] = []
    for p in record.passes:
        snap = p.snapshot
        if snap is None or p.error is not None:
            continue
        if p.stage == "tensor":
            available.append(_Selected(p.index, p.name, p.stage, "tensor", p.changed, snap.graph, None))
        elif snap.tiles is not None:
            available.append(_Selected(p.index, p.name, p.stage, "tiled", p.changed, snap.graph, snap.tiles))
    final = None
    if record.program.tiles is not None:
        final = _Selected(len(record.passes), FINAL, "final", "tiled", True, record.program.graph,
                          record.program.tiles)
    if not passes:
        out = [s for s in available if s.level == "tensor"] + ([final] if final is not None else [])
        if not out:  # a record loaded without snapshots: the final tensor graph
            out = [_Selected(len(record.passes), FINAL, "final", "tensor", True, record.graph, None)]
        return out
    chosen: list[_Selected] = []
    names = [s.name for s in available] + ([FINAL] if final is not None else [])
    for want in passes:
        if want == FINAL and final is not None:
            hit = [final]
        else:
            hit = [s for s in available if s.name == want or s.index == want]
        if not hit:
            raise PyptoError(f"pass_verify_pass_filter: no pass {want!r} to verify; known: {', '.join(names)}")
        chosen += [h for h in hit if h not in chosen]
    return sorted(chosen, key=lambda s: s.index)


def precision_report(target: Any, inputs: Mapping[str, Any] | None = None,
                     passes: Sequence[str | int] | None = None, rtol: float | None = None,
                     atol: float | None = None, *, save_dir: str | Path | None = None) -> PrecisionReport:
    """Compare every op with the fp64 reference after each selected pass (default: every
    tensor-stage pass and the final tiled program) — see the module doc, and `rule` for the rule.
    `target`: a kernel (`@pypto.jit`), a CompiledKernel (then `inputs` is required) or a
    CompileRecord with its snapshots; `inputs` maps parameter names to arguments (default:
    the kernel's example inputs); `passes`: pass names or record indices, "final" for the
    final tiled program; `save_dir`: write every compared value and its reference as .npy;
    `rtol`/`atol`: fixed tolerances for every value, or (None, the default) each value's dtype's
    (`rule.Tolerance`)."""
    tol = Tolerance(rtol, atol)
    record, args, executor = prepare_target(target, inputs)
    arrays = tensor_arrays(args)
    syms = dict(record.bindings)
    selected = _select(record, passes)
    locate = Locator(record)
    saver = _Saver(Path(save_dir) if save_dir is not None else None)
    # fp64 references, per tensor graph, kept while a later selected pass still needs them
    need: dict[int, int] = {}
    for s in selected:
        need[id(s.graph)] = need.get(id(s.graph), 0) + 1
    refs: dict[int, Reference] = {}
    done: dict[tuple[str, int], PassResult] = {}
    results: list[PassResult] = []
    for s in selected:
        folder = f"{s.index:02d}_{s.name}"
        prev = done.get(s.key)
        if prev is not None and saver.root is None:
            results.append(PassResult(s.index, s.name, s.stage, s.level, s.changed, prev.rows, prev.outputs,
                                      prev.grids, prev.skipped, prev.same_as or prev.name))
        else:
            ref = refs.get(id(s.graph))
            if ref is None:
                ref = refs[id(s.graph)] = reference_values(s.graph, arrays, syms)
            if s.level == "tensor":
                rows, outs = _tensor_pass(s.graph, ref, arrays, syms, tol, locate, saver, folder)
                res = PassResult(s.index, s.name, s.stage, s.level, s.changed, rows, outs)
            else:
                assert s.tiles is not None
                rows, outs, grids, skipped = _tiled_pass(s.graph, s.tiles, ref, arrays, tol, locate, saver,
                                                         folder, executor)
                res = PassResult(s.index, s.name, s.stage, s.level, s.changed, rows, outs, grids, skipped)
            done[s.key] = res
            results.append(res)
        need[id(s.graph)] -= 1
        if not need[id(s.graph)]:
            refs.pop(id(s.graph), None)
    in_loop: set[int] = set()
    counts: dict[tuple[str, int, str], int] = {}
    for g in {id(s.graph): s.graph for s in selected}.values():
        for n in g.nodes:
            if n.body is not None:
                in_loop.update(m.id for m in n.body.walk())
        here: dict[tuple[str, int, str], int] = {}
        for n in g.walk():
            w = locate(n.id)
            if w is not None and n.op not in MOVES:
                here[(w.file, w.line, n.op)] = here.get((w.file, w.line, n.op), 0) + 1
        for key, c in here.items():
            counts[key] = max(counts.get(key, 0), c)
    return PrecisionReport(record.source.kernel, record.source.file, *tol.headline(), results, frozenset(in_loop),
                           counts, tol.describe())
