"""A big kernel's record document, its largest parts made while the last passes still run.

A job lowers its kernel on one core while the machine's second one waits (`server.beside`): the record document
comes after the last pass, and its largest parts are of fields that passes before the last one made final. Gated
delta rule after a tile edit (195k tile ops): the tile graph's part takes ~0.9 s and the subgraphs' ~0.4 s of a
~2 s document, while leaf functions and the execute graph, after graph partition, take ~1.6 s. `Parts` is an
instrument (`pypto.compiler.pipeline.watching`): after each pass of `AFTER` it starts a forked child
(`server.beside.ahead`) that writes those fields' parts (`pypto.compiler.serialize.field_part`) — and, once the
subgraphs are made, the editor view's arrays of the tile ops (`server.index.tile_ops_part`, ~0.5 s at that size) —
and `collect(program)` keeps the ones whose fields the final program still holds (the same objects: a later pass
that made a field anew makes its part stale, and it is made with the rest, as it would have been). The document and
the views are the same byte for byte (tests/test_parts.py); only when they are made changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.beside import Ahead, ahead
from server.index import TileOpsPart, tile_ops_part

if TYPE_CHECKING:  # (the compiler is imported where a job uses it: the servers import this module too)
    from pypto.compiler.manager import Pass, PassContext, Program
    from pypto.compiler.serialize import Part

# pass -> the program fields no later pass makes anew (pypto.compiler.pipeline.PIPELINE), whose parts start after it
AFTER: dict[str, tuple[str, ...]] = {
    "graph_partition": ("tiles",),
    "leaf_functions": ("subgraphs", "memory", "leaves"),
}
TILE_OPS = "tile_ops"  # the editor view's part (`server.index.TileOpsPart`), read with the subgraphs


def _parts(values: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The document part of each field of `names`; and with the subgraphs, the editor view's arrays of the tile
    ops (`server.index.tile_ops_part`: the tile graph is final before the subgraphs are)."""
    from pypto.compiler.serialize import field_part

    out: dict[str, Any] = {name: field_part(name, values[name]) for name in names if name in values}
    if "tiles" in values and "subgraphs" in values:
        out[TILE_OPS] = tile_ops_part(values["tiles"].ops, values["subgraphs"])
    return out


class Parts:
    """Document parts started as the passes of `AFTER` end, for a program of at least `from_ops` tile ops (below,
    the fork costs more than it saves: `server.analyze.BESIDE_FROM`)."""

    def __init__(self, from_ops: int) -> None:
        self.from_ops = from_ops
        self._started: list[tuple[dict[str, Any], Ahead[dict[str, Any]]]] = []
        self._made: dict[str, Part] = {}
        self.tile_ops: TileOpsPart | None = None  # the editor view's part of the final program (`collect`)

    def before(self, index: int, p: Pass, program: Program, ctx: PassContext) -> None:
        pass

    def failed(self, index: int, p: Pass, program: Program, ctx: PassContext, error: BaseException) -> None:
        self.cancel()

    def after(self, index: int, p: Pass, before: Program, after: Program, ctx: PassContext) -> None:
        names = AFTER.get(p.name, ())
        if not names or after.tiles is None or len(after.tiles.ops) < self.from_ops:
            return
        values = {name: getattr(after, name) for name in names if getattr(after, name) is not None}
        if "subgraphs" in values:
            values["tiles"] = after.tiles  # (the editor view's part reads both)
        if values:
            self._started.append((values, ahead(lambda: _parts(values, names))))

    def collect(self, program: Program) -> None:
        """Wait for the parts started, and keep those of `program`'s fields (`made`, `tile_ops`); a stale one's
        child is ended."""
        from pypto.compiler.serialize import Part

        for values, job in self._started:
            if not any(getattr(program, name) is value for name, value in values.items()):
                job.cancel()
                continue
            same = {name for name, value in values.items() if getattr(program, name) is value}
            for name, got in job.result().items():
                if name == TILE_OPS:
                    if {"tiles", "subgraphs"} <= same:
                        self.tile_ops = got
                elif name in same:
                    self._made[name] = Part(values[name], *got)
        self._started.clear()

    def made(self, program: Program) -> dict[str, Part]:
        """The document parts of `program`'s fields (`collect`), handed over once."""
        self.collect(program)
        out, self._made = self._made, {}
        return out

    def cancel(self) -> None:
        """End every child still running (the job failed, or ends without a document)."""
        for _, job in self._started:
            job.cancel()
        self._started.clear()
