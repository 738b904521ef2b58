"""The pass manager: runs the pipeline and calls instruments around each pass.

Passes are pure functions `(Program, PassContext) -> Program` and know nothing about
recording. Everything observational — timing, "changed" fingerprints, snapshots, dumps,
stopping after a stage — is an `Instrument` (or the manager's stage cut-off), in the
manner of MLIR's pass instrumentation. A pass that raises still leaves the snapshot of
its input and the error in the record; a user mistake stays a `PyptoError`, a `MemoryError` stays
itself (the memory cap of the process, which its owner reports), anything else becomes an
`InternalCompilerError` naming the pass.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pypto.compiler.block_ir import Block
from pypto.compiler.execute_ir import ExecGraph
from pypto.compiler.tile_ir import Leaf, Subgraph, TileGraph
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph
from pypto.ir.source import Loc
from pypto.ir.text import to_text

STAGES = ("tensor", "tile", "block", "execute")


@dataclass(frozen=True)
class Program:
    """What the pipeline transforms. Immutable: a pass returns a new Program that shares
    every unchanged part (and every unchanged node) with its input."""

    graph: Graph  # the tensor graph (loops as regions)
    next_id: int = 0  # node ids below this were handed out once: passes never reuse them
    bindings: tuple[tuple[str, int], ...] | None = None  # dynamic dims: the tile stage needs them
    tiles: TileGraph | None = None  # the tile graph (tile stage on)
    subgraphs: tuple[Subgraph, ...] | None = None  # graph partition: one per task
    memory: tuple[str, ...] | None = None  # per tile op (tiles.ops order): its memory and data path
    leaves: tuple[Leaf, ...] | None = None  # isomorphic subgraphs merged
    blocks: tuple[Block, ...] | None = None  # one instruction list per leaf (block stage)
    execute: ExecGraph | None = None  # tasks and their dependencies (execute stage)


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" | "warning" | "info"
    message: str
    loc: Loc = field(default_factory=Loc)
    rule: str = ""


@dataclass
class PassContext:
    """What a pass may read besides the program, and where it reports diagnostics."""

    options: dict[str, Any]
    board: dict[str, Any]
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def report(self, severity: str, message: str, loc: Loc | None = None, rule: str = "") -> None:
        self.diagnostics.append(Diagnostic(severity, message, loc or Loc(), rule))


PassFn = Callable[[Program, PassContext], Program]


@dataclass(frozen=True)
class Pass:
    name: str
    stage: str
    fn: PassFn
    why: str  # one line: what the pass is for (shown in the IDE's pass strip)


class InternalCompilerError(Exception):
    """A bug in a pass (not a user mistake): names the pass; the record keeps the snapshots."""

    def __init__(self, pass_name: str, error: BaseException) -> None:
        super().__init__(f"internal error in pass '{pass_name}': {type(error).__name__}: {error}")
        self.pass_name = pass_name
        self.error = error


class Instrument(Protocol):
    def before(self, index: int, p: Pass, program: Program, ctx: PassContext) -> None: ...

    def after(self, index: int, p: Pass, before: Program, after: Program, ctx: PassContext) -> None: ...

    def failed(self, index: int, p: Pass, program: Program, ctx: PassContext, error: BaseException) -> None: ...


class PassManager:
    def __init__(self, passes: Sequence[Pass], instruments: Sequence[Instrument] = ()) -> None:
        self.passes = list(passes)
        self.instruments = list(instruments)

    def run(self, program: Program, ctx: PassContext, stop_after: str | None = None,
            start_at: str | None = None) -> Program:
        """Run the passes of stages `start_at` through `stop_after` (default: all)."""
        last = STAGES.index(stop_after) if stop_after else len(STAGES) - 1
        first = STAGES.index(start_at) if start_at else 0
        for index, p in enumerate(self.passes):
            if STAGES.index(p.stage) < first:
                continue
            if STAGES.index(p.stage) > last:
                break
            for ins in self.instruments:
                ins.before(index, p, program, ctx)
            try:
                result = p.fn(program, ctx)
            except MemoryError:
                raise  # the process's memory cap, not a compiler bug: its owner reports it (the worker: "ran out")
            except PyptoError as e:
                for ins in self.instruments:
                    ins.failed(index, p, program, ctx, e)
                raise
            except Exception as e:  # noqa: BLE001 - turned into a named internal error
                for ins in self.instruments:
                    ins.failed(index, p, program, ctx, e)
                raise InternalCompilerError(p.name, e) from e
            for ins in self.instruments:
                ins.after(index, p, program, result, ctx)
            program = result
        return program


# ---- recording ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PassRecord:
    index: int
    name: str
    stage: str
    why: str
    changed: bool
    seconds: float
    diagnostics: tuple[Diagnostic, ...]
    snapshot: Program  # the program after the pass (its input, when the pass failed)
    error: str | None = None

    @property
    def node_count(self) -> int:
        """Nodes of the most lowered form the snapshot has (tile ops once tiled)."""
        if self.snapshot.tiles is not None:
            return len(self.snapshot.tiles.ops)
        return len(self.snapshot.graph)


def fingerprint(program: Program, memo: dict[int, str]) -> str:
    """A structural hash of the tensor graph (memoized by identity) and the identity of every
    other part: lowered parts are rebuilt only by the pass that changes them."""
    parts = []
    for f in dataclasses.fields(program):
        value = getattr(program, f.name)
        key = id(value)
        if key not in memo:
            memo[key] = hashlib.sha1(to_text(value).encode()).hexdigest() if isinstance(value, Graph) else str(key)
        parts.append(memo[key])
    return "".join(parts)


class Recorder:
    """Records every pass: changed (fingerprint compare), duration, diagnostics, snapshot."""

    def __init__(self) -> None:
        self.records: list[PassRecord] = []
        self._t0 = 0.0
        self._n_diag = 0
        self._memo: dict[int, str] = {}
        self._keep: list[Any] = []  # keeps memoized objects alive so their ids stay unique

    def before(self, index: int, p: Pass, program: Program, ctx: PassContext) -> None:
        self._n_diag = len(ctx.diagnostics)
        self._t0 = time.perf_counter()

    def after(self, index: int, p: Pass, before: Program, after: Program, ctx: PassContext) -> None:
        seconds = time.perf_counter() - self._t0
        self._keep += [before, after]
        changed = after is not before and fingerprint(after, self._memo) != fingerprint(before, self._memo)
        self.records.append(PassRecord(index, p.name, p.stage, p.why, changed, seconds,
                                       tuple(ctx.diagnostics[self._n_diag:]), after if changed else before))

    def failed(self, index: int, p: Pass, program: Program, ctx: PassContext, error: BaseException) -> None:
        seconds = time.perf_counter() - self._t0
        self.records.append(PassRecord(index, p.name, p.stage, p.why, False, seconds,
                                       tuple(ctx.diagnostics[self._n_diag:]), program,
                                       f"{type(error).__name__}: {error}"))
