"""A big kernel's record document, its largest parts made while the last passes still run.

A job lowers its kernel on one core while the machine's second one waits (`server.beside`): the record document
comes after the last pass, and its largest parts are of fields that passes before the last one made final. Gated
delta rule after a tile edit (195k tile ops): the tile graph's part takes ~0.9 s and the subgraphs' ~0.4 s of a
~2 s document, while leaf functions and the execute graph, after graph partition, take ~1.6 s. `Parts` is an
instrument (`pypto.compiler.pipeline.watching`): after each pass of `AFTER` it starts a forked child
(`server.beside.ahead`) that writes those fields' parts (`pypto.compiler.serialize.field_part`), and `made(program)`
collects the ones whose field the final program still holds (the same object: a later pass that made the field
anew makes its part stale, and it is written with the rest, as it would have been). The document is the same
byte for byte (tests/test_parts.py); only when it is written changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.beside import Ahead, ahead

if TYPE_CHECKING:  # (the compiler is imported where a job uses it: the servers import this module too)
    from pypto.compiler.manager import Pass, PassContext, Program
    from pypto.compiler.serialize import Part
    from pypto.ir.columns import Arrays
    from pypto.ir.serialize import Json

# pass -> the program fields no later pass makes anew (pypto.compiler.pipeline.PIPELINE), whose parts start after it
AFTER: dict[str, tuple[str, ...]] = {
    "graph_partition": ("tiles",),
    "leaf_functions": ("subgraphs", "memory", "leaves"),
}


def _parts(values: dict[str, Any]) -> dict[str, tuple[Json, Arrays]]:
    from pypto.compiler.serialize import field_part

    return {name: field_part(name, value) for name, value in values.items()}


class Parts:
    """Document parts started as the passes of `AFTER` end, for a program of at least `from_ops` tile ops (below,
    the fork costs more than it saves: `server.analyze.BESIDE_FROM`)."""

    def __init__(self, from_ops: int) -> None:
        self.from_ops = from_ops
        self._started: list[tuple[dict[str, Any], Ahead[dict[str, tuple[Json, Arrays]]]]] = []

    def before(self, index: int, p: Pass, program: Program, ctx: PassContext) -> None:
        pass

    def failed(self, index: int, p: Pass, program: Program, ctx: PassContext, error: BaseException) -> None:
        self.cancel()

    def after(self, index: int, p: Pass, before: Program, after: Program, ctx: PassContext) -> None:
        names = AFTER.get(p.name, ())
        if not names or after.tiles is None or len(after.tiles.ops) < self.from_ops:
            return
        values = {name: getattr(after, name) for name in names if getattr(after, name) is not None}
        if values:
            self._started.append((values, ahead(lambda: _parts(values))))

    def made(self, program: Program) -> dict[str, Part]:
        """The parts of `program`'s fields that were started (waiting for them); a stale one's child is ended."""
        from pypto.compiler.serialize import Part

        out: dict[str, Part] = {}
        for values, job in self._started:
            if not any(getattr(program, name) is value for name, value in values.items()):
                job.cancel()
                continue
            for name, (document, arrays) in job.result().items():
                if getattr(program, name) is values[name]:
                    out[name] = Part(values[name], document, arrays)
        self._started.clear()
        return out

    def cancel(self) -> None:
        """End every child still running (the job failed, or ends without a document)."""
        for _, job in self._started:
            job.cancel()
        self._started.clear()
