"""Tile-stage passes: from the tensor graph, at this call's concrete shapes, to tiles."""

from __future__ import annotations

import dataclasses

from pypto.compiler.manager import PassContext, Program
from pypto.compiler.tile_expand import expand


def tile_expand(p: Program, ctx: PassContext) -> Program:
    """Each tensor op becomes tile ops by the vec/cube tile shapes in force at its line."""
    assert p.bindings is not None, "the tile stage runs with concrete dynamic dims"
    tiles, notes = expand(p.graph, dict(p.bindings))
    for message, node in notes:
        ctx.report("info", message, node.loc, rule="tile.untiled")
    return dataclasses.replace(p, tiles=tiles)
