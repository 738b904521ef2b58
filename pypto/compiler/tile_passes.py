"""Tile-stage passes: from the tensor graph, at this call's concrete shapes, to tiles."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, repeat
from operator import attrgetter
from typing import Any

from pypto.beside import beside_then
from pypto.compiler.execute import build
from pypto.compiler.manager import PassContext, Program
from pypto.compiler.partition import merge_leaves, partition
from pypto.compiler.serialize import field_document
from pypto.compiler.tile_expand import expand, fit_vec_configs
from pypto.compiler.tile_ir import (
    Leaf,
    Subgraph,
    TileGraph,
    TileOp,
    note_columns_ahead,
    note_execute_ahead,
    take_columns_ahead,
)
from pypto.ir.source import Loc
from pypto.tracing.tiling import strict_at, strict_rules


def tile_expand(p: Program, ctx: PassContext) -> Program:
    """Each tensor op becomes tile ops by the vec/cube tile shapes in force at its line."""
    assert p.bindings is not None, "the tile stage runs with concrete dynamic dims"
    graph, refits = fit_vec_configs(p.graph, dict(p.bindings), int(ctx.board["buffers_bytes"]["UB"]))
    for message, node in refits:
        ctx.report("warning", message, node.loc, rule="tile.ub-split")
    tiles, notes, warnings = expand(graph, dict(p.bindings))
    for message, node in notes:
        ctx.report("info", message, node.loc, rule="tile.untiled")
    for message, node in warnings:
        ctx.report("warning", message, node.loc, rule="tile.stale_view")
    if _expanded is not None:
        _expanded(len(tiles.ops))
    return dataclasses.replace(p, tiles=tiles)


_expanded: Callable[[int], None] | None = None  # within `on_expanded`


@contextlib.contextmanager
def on_expanded(told: Callable[[int], None]) -> Iterator[None]:
    """Within, each tile expansion tells `told` how many tile ops it made, before the later passes run: a job shows a
    big kernel's tensor graph while it lowers it (`server.analyze`). For the compile of the job's own kernel, not its
    advice's candidates."""
    global _expanded
    was, _expanded = _expanded, told
    try:
        yield
    finally:
        _expanded = was


def graph_partition(p: Program, ctx: PassContext) -> Program:
    """Tile ops become subgraphs that each fit one core's buffers and run on one core type;
    edges between subgraphs go through GM (copy-in/copy-out inserted)."""
    assert p.tiles is not None
    notes: list[tuple[str, Loc]] = []
    # the advisor's candidates: an overflow is illegal, except at a line where the kernel as written has one
    tiles, subgraphs = partition(p.tiles, p.graph.by_id(), int(ctx.board["buffers_bytes"]["UB"]), notes,
                                 strict_at if strict_rules() else None)
    for message, loc in notes:
        ctx.report("warning", message + " (the sim board models it as if it fit; on the chip the tile would "
                   "have to be split)", loc, rule="tile.ub-overflow")
    return dataclasses.replace(p, tiles=tiles, subgraphs=subgraphs)


# tile ops from which the leaf functions are merged in a forked child while this process builds the execute graph
# (`pypto.beside`; the execute stage then only gives its tasks their leaves). Below, the fork and the copy-on-write
# of the tile graph cost more than it saves; above, the two take 0.3-0.6 s each (stage_bench, edited: Kimi's block
# attention 0.99 -> 0.73 s; gated delta rule 0.88 -> 0.88-0.91 s, its build, the longer side, slowed by the
# copy-on-write as much as the leaves save)
BESIDE_FROM = 50_000


def leaf_functions(p: Program, ctx: PassContext) -> Program:
    """Isomorphic subgraphs (same structure, other coordinates) become one leaf function."""
    tiles, subgraphs = p.tiles, p.subgraphs
    assert tiles is not None and subgraphs is not None
    if len(tiles.ops) < BESIDE_FROM:
        subgraphs, leaves = merge_leaves(tiles, subgraphs)
        return dataclasses.replace(p, subgraphs=subgraphs, leaves=leaves)
    made = subgraphs
    # (within `columns_ahead`, the child goes on to the record document's tile columns)
    (leaf_ids, rows), ahead, later = beside_then(lambda: _leaf_rows(tiles, made), lambda: build(tiles, made),
                                                 (lambda: _tile_columns(tiles)) if _columns_wanted else None)
    if later is not None:
        note_columns_ahead(tiles, later)
    subgraphs = tuple([Subgraph(sg.id, sg.core, sg.instance, sg.ops, sg.peak_bytes, leaf)
                       for sg, leaf in zip(made, leaf_ids)])
    note_execute_ahead(tiles, subgraphs, ahead)
    return dataclasses.replace(p, subgraphs=subgraphs, leaves=tuple([Leaf(*row) for row in rows]))


_columns_wanted = False  # within `columns_ahead`


@contextlib.contextmanager
def columns_ahead() -> Iterator[None]:
    """Within, a compile that merges its leaf functions in a forked child (from `BESIDE_FROM` tile ops) has the
    child go on to make its tile graph's record columns, which the record document takes
    (`serialize.take_later`): the child would otherwise be done before this process's execute graph, and the
    columns are the document's longest part (Kimi's block attention after its edit: 0.4 of 0.8 s), made here after
    the board's run. For a compile whose record document is made next (a job's own kernel): the child of one that
    is not (an advice candidate's) would work for nothing."""
    global _columns_wanted
    was, _columns_wanted = _columns_wanted, True
    try:
        yield
    finally:
        _columns_wanted = was


def drop_columns_ahead(tiles: TileGraph | None) -> None:
    """The tile columns noted coming for `tiles` (`columns_ahead`) and not taken: their child ended."""
    later = take_columns_ahead(tiles) if tiles is not None else None
    if later is not None:
        later.drop()


def _tile_columns(tiles: TileGraph) -> tuple[Any, dict[str, Any]]:
    """The record document's columns of a compile's tile graph, as `serialize.field_document` makes them."""
    arrays: dict[str, Any] = {}
    return field_document("tiles", tiles, "tiles", arrays), arrays


def _leaf_rows(tiles: TileGraph, subgraphs: tuple[Subgraph, ...]) -> tuple[list[int], list[tuple[Any, ...]]]:
    """`merge_leaves` as plain data, what a forked child sends back cheaply: each subgraph's leaf, and each leaf's
    fields."""
    merged, leaves = merge_leaves(tiles, subgraphs)
    return ([sg.leaf for sg in merged],
            [(lf.id, lf.hash, lf.core, lf.template, lf.count, lf.nodes) for lf in leaves])


# where a tile op's data comes from and goes, by op (others: "UB"): memory types joined by ->, "," for both
_PATHS = {"matmul": "GM->L1->L0A,L0B->L0C->GM", "load": "GM->UB", "store": "UB->GM"}


def _segments(path: str) -> list[str]:
    hops = [h.split(",") for h in path.split("->")]
    return [f"{a}->{b}" for src, dst in zip(hops, hops[1:]) for a in src for b in dst]


def memory_types(p: Program, ctx: PassContext) -> Program:
    """Each tile op's memory and data path (UB for vector work; GM->L1->L0A/L0B->L0C->GM for
    cube tiles; GM between subgraphs), checked against the board's allowed paths — on A2/A3
    there is no L0C->UB and no UB<->L1, so cube results reach vector cores through GM."""
    assert p.tiles is not None and p.subgraphs is not None
    aic = {oid for sg in p.subgraphs if sg.core == "AIC" for oid in sg.ops}  # the others are on AIV
    allowed = set(ctx.board["data_paths"]) | {"L0A->L0C", "L0B->L0C"}  # the cube unit itself
    ops = p.tiles.ops
    kinds = list(map(_OP, ops))
    paths = tuple(map(_PATHS.get, kinds, repeat("UB")))  # by C-level maps: 200k tile ops
    matmuls = set(compress(map(_ID, ops), map("matmul".__eq__, kinds)))
    mixed = {oid for sg in p.subgraphs if sg.core == "MIX" for oid in sg.ops}
    if mixed:  # a MIX task (a PyPTO 3 scope): its matmuls on its cluster's AIC, the rest on its AIVs
        aic |= mixed & matmuls
    if matmuls != aic or any(seg not in allowed for path in set(paths) for seg in _segments(path)):
        _check_paths(ops, aic, allowed)  # says which op, as the loop over them did
    return dataclasses.replace(p, memory=paths)


_OP, _ID = attrgetter("op"), attrgetter("id")


def _check_paths(ops: Sequence[TileOp], aic: set[int], allowed: set[str]) -> None:
    """The first tile op (in program order) on the wrong core type or moving data on a path the
    board does not allow: an AssertionError naming it."""
    checked: set[str] = set()
    for op in ops:
        kind = op.op
        if (kind == "matmul") != (op.id in aic):
            raise AssertionError(f"tile op {op.id} ({kind}) sits on a {'AIC' if op.id in aic else 'AIV'} core")
        path = _PATHS.get(kind, "UB")
        if path not in checked:
            for seg in _segments(path):
                if seg not in allowed:
                    raise AssertionError(f"tile op {op.id} ({op.op}) moves data {seg}, which the board does not allow")
            checked.add(path)
