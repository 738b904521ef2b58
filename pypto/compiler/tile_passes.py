"""Tile-stage passes: from the tensor graph, at this call's concrete shapes, to tiles."""

from __future__ import annotations

import dataclasses

from pypto.compiler.manager import PassContext, Program
from pypto.compiler.partition import merge_leaves, partition
from pypto.compiler.tile_expand import expand


def tile_expand(p: Program, ctx: PassContext) -> Program:
    """Each tensor op becomes tile ops by the vec/cube tile shapes in force at its line."""
    assert p.bindings is not None, "the tile stage runs with concrete dynamic dims"
    tiles, notes = expand(p.graph, dict(p.bindings))
    for message, node in notes:
        ctx.report("info", message, node.loc, rule="tile.untiled")
    return dataclasses.replace(p, tiles=tiles)


def graph_partition(p: Program, ctx: PassContext) -> Program:
    """Tile ops become subgraphs that each fit one core's buffers and run on one core type;
    edges between subgraphs go through GM (copy-in/copy-out inserted)."""
    assert p.tiles is not None
    tiles, subgraphs = partition(p.tiles, p.graph.by_id(), int(ctx.board["buffers_bytes"]["UB"]))
    return dataclasses.replace(p, tiles=tiles, subgraphs=subgraphs)


def leaf_functions(p: Program, ctx: PassContext) -> Program:
    """Isomorphic subgraphs (same structure, other coordinates) become one leaf function."""
    assert p.tiles is not None and p.subgraphs is not None
    subgraphs, leaves = merge_leaves(p.tiles, p.subgraphs)
    return dataclasses.replace(p, subgraphs=subgraphs, leaves=leaves)
