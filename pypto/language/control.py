"""PyPTO 3's loops and scopes in a `@pl.jit` body: `pl.range`, `pl.parallel`, `pl.pipeline`, `pl.spmd`,
`pl.at`, `pl.Level`.

Why it exists: PyPTO 3 parses a kernel's source, so a Python name rebound in a loop
(`acc = pl.add(acc, t)`) is a loop-carried value and an `if` on the loop index picks a branch per
iteration. We trace by running the body, so the loops are chosen to keep that meaning:

- `pl.range(...)` with bounds known when the kernel is traced is a Python loop over the indices:
  each iteration is traced (unrolled), so rebinding, `if kb == 0:` and `pl.matmul_acc` chains mean
  what they mean upstream. With a bound only known at run time (a `pl.dynamic` dim, an enclosing
  `pl.parallel` index) it is the tracer's `pypto.loop`, traced once: tensors written by slice
  assignment carry across iterations, a rebound Python name does not (docs/pypto3.md).
- `pl.parallel(...)` is the tracer's parallel `pypto.loop`, traced once: its iterations are
  independent chunks, each its own tasks in the execute graph; an `if` on its index is a run-time
  branch (`pypto.frontend.body`).
- `pl.pipeline(..., stage=F)` is `pl.range` (its replicated buffers' overlap is not modelled);
  `pl.spmd(n)` (`for i in ...` or `with ...`) is a parallel loop over the blocks whose body is one
  in-core scope, where `pl.tile.get_block_idx()` reads the block's index.
- `with pl.at(level=pl.Level.CORE_GROUP, name_hint=...)` labels the ops inside with `name_hint` (the
  graph, the tasks and the swimlane carry it) and gives them the scope's number (`Node.scope`, one per
  `with` entry). Each op's tile is the whole slice it works on (the kernel's tile shapes are the slice
  sizes, as in PyPTO 3), and graph partition makes each scope instance (the scope in one loop
  iteration) one task: AIV, AIC, or MIX when it holds both cube and vector work.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from pypto.ir.errors import PyptoError
from pypto.tracing import api
from pypto.tracing import builder as _b
from pypto.tracing.scalar import SymbolicScalar


class Level(enum.Enum):
    """Where a `pl.at` scope runs, from one core up to a cluster. Only `CORE_GROUP` (an in-core task)
    is compiled here."""

    AIV = "AIV"
    AIC = "AIC"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    CHIP = "CHIP"
    HOST = "HOST"
    CLUSTER_0 = "CLUSTER_0"
    CLUSTER_1 = "CLUSTER_1"
    CLUSTER_2 = "CLUSTER_2"
    GLOBAL = "GLOBAL"


def _bounds(what: str, args: tuple[Any, ...]) -> tuple[Any, Any, Any]:
    if not 1 <= len(args) <= 3:
        raise PyptoError(f"pl.{what} takes (stop), (start, stop) or (start, stop, step), got {len(args)} arguments")
    if len(args) == 1:
        return 0, args[0], 1
    return args[0], args[1], args[2] if len(args) == 3 else 1


def _known(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, SymbolicScalar) and v.is_concrete():
        return int(v.concrete())
    return None


def _no_init_values(what: str, init_values: Any) -> None:
    if init_values is not None:
        raise PyptoError(f"pl.{what}(..., init_values=...) (explicit iteration arguments with pl.yield_) is not "
                         f"supported yet; rebind the name in the loop body instead (docs/pypto3.md)")


def range(*args: Any, init_values: Any = None) -> Iterator[Any]:  # noqa: A001 - PyPTO 3's name
    """`pl.range(stop)` / `pl.range(start, stop[, step])`: a sequential loop."""
    _no_init_values("range", init_values)
    start, stop, step = _bounds("range", args)
    known = [_known(v) for v in (start, stop, step)]
    if all(k is not None for k in known):
        a, z, s = (int(k) for k in known if k is not None)
        if s == 0:
            raise PyptoError("pl.range: step must not be 0")
        return iter(builtins.range(a, z, s))
    return api.loop(start, stop, step)


def parallel(*args: Any, init_values: Any = None) -> Iterator[Any]:
    """`pl.parallel(stop)` / `pl.parallel(start, stop[, step])`: independent iterations."""
    _no_init_values("parallel", init_values)
    start, stop, step = _bounds("parallel", args)
    if isinstance(step, int) and step == 0:
        raise PyptoError("pl.parallel: step must not be 0")
    return api.loop(start, stop, step, parallel=True)


def pipeline(*args: Any, stage: Any = None, init_values: Any = None) -> Iterator[Any]:
    """`pl.pipeline(stop, stage=F)` / `pl.pipeline(start, stop[, step], stage=F)`: a sequential loop whose body
    PyPTO 3 replicates `stage` times per outer iteration so that buffers can ping-pong. The iterations and
    their order are `pl.range`'s, and so are the values; here it is `pl.range`. The overlap the replicated
    buffers allow is not modelled on the sim board (docs/pypto3.md)."""
    _no_init_values("pipeline", init_values)
    if stage is None:
        raise PyptoError("pl.pipeline needs stage= (how many copies of the body ping-pong, a positive int, "
                         "typically 2-4)")
    known = _known(stage)
    if known is None or known < 1:
        raise PyptoError(f"pl.pipeline: stage must be a positive int, got {stage!r}")
    _bounds("pipeline", args)
    return range(*args)


# The pl.spmd blocks being traced, innermost last: (the block index, the number of blocks), what
# `pl.tile.get_block_idx()` / `get_block_num()` read.
_BLOCKS: list[tuple[Any, Any]] = []


def current_block(what: str) -> tuple[Any, Any]:
    """The innermost `pl.spmd` block's (index, count); an error at the user's line outside one."""
    if not _BLOCKS:
        raise PyptoError(f"{what} reads the block index of a pl.spmd block: call it inside `for i in pl.spmd(n):` "
                         f"or `with pl.spmd(n):`")
    return _BLOCKS[-1]


class Spmd:
    """`pl.spmd(n)`: the same body on `n` blocks, each block one in-core task (a parallel loop whose body is
    one `pl.at` scope). The loop form, `for i in pl.spmd(n):`, binds the block's index to `i`; the `with
    pl.spmd(n):` form traces its body once as such a block, where `pl.tile.get_block_idx()` is the index
    (a body that calls a `@pl.jit.incore` function runs it inline, as everywhere here). `as tid` gives None:
    task ids and `deps=` are the runtime's, not modelled."""

    def __init__(self, core_num: Any, name_hint: str) -> None:
        known = _known(core_num)
        if known is not None and known < 1:
            raise PyptoError(f"pl.spmd: the number of blocks must be at least 1, got {core_num!r}")
        if known is None and not isinstance(core_num, SymbolicScalar):
            raise PyptoError(f"pl.spmd: the number of blocks must be an int or a pl.Scalar, got {core_num!r}")
        self.core_num = core_num
        self.name_hint = name_hint or "spmd"
        self._open: list[tuple[Iterator[Any], AtScope]] = []

    def _open_block(self) -> Any:
        """Open the parallel loop's body, then the block's scope; the block's index."""
        body = api.loop(0, self.core_num, 1, parallel=True)
        index = next(body)  # the loop's body is open: what follows is traced as one block
        scope = AtScope(Level.CORE_GROUP, self.name_hint)
        scope.__enter__()
        self._open.append((body, scope))
        _BLOCKS.append((index, self.core_num))
        return index

    def _close_block(self, kind: type[BaseException] | None, exc: BaseException | None,
                     tb: TracebackType | None) -> None:
        body, scope = self._open.pop()
        _BLOCKS.pop()  # blocks close innermost first
        scope.__exit__(kind, exc, tb)
        if kind is not None:
            close = getattr(body, "close", None)
            if close is not None:
                close()  # the loop is abandoned; the exception goes on
            return
        for _ in body:  # closes the loop's body
            pass

    def __iter__(self) -> Iterator[Any]:
        index = self._open_block()
        try:
            yield index
        except BaseException as e:  # the body raised, or the loop was left (GeneratorExit)
            self._close_block(type(e), e, e.__traceback__)
            raise
        self._close_block(None, None, None)

    def __enter__(self) -> None:
        self._open_block()
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._close_block(kind, exc, tb)


def spmd(core_num: Any, *, sync_start: bool = False, name_hint: str = "", optimizations: Any = None,
         deps: Any = None, allow_early_resolve: bool = False, predicate: Any = None) -> Spmd:
    """`for i in pl.spmd(n):`: `n` blocks of the body, each one task (`Spmd`). `sync_start`, `optimizations`,
    `deps`, `allow_early_resolve` and `predicate` are the runtime's: accepted, with no effect on this board."""
    return Spmd(core_num, name_hint)


class AtScope:
    """`with pl.at(level=..., name_hint=...)`: the ops inside carry `name_hint` as their label."""

    def __init__(self, level: Level, name_hint: str) -> None:
        if not isinstance(level, Level):
            raise PyptoError(f"pl.at: level must be a pl.Level, got {level!r}")
        if level is not Level.CORE_GROUP:
            raise PyptoError(f"pl.at(level=pl.Level.{level.name}): only pl.Level.CORE_GROUP (an in-core task) is "
                             f"supported yet (docs/pypto3.md)")
        self.level = level
        self.name_hint = name_hint
        self._saved: str | None = None
        self._saved_incore: int | None = None
        self._builder: _b.Builder | None = None

    def __enter__(self) -> AtScope:
        b = _b.require("pl.at")
        self._builder = b
        self._saved, self._saved_incore = b.label, b.incore
        b.label = self.name_hint or "incore"
        if b.incore is None:  # a scope (or `@pl.jit.incore` call) inside a scope is part of its task
            b.incore = b.new_incore()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._builder is not None:
            self._builder.label, self._builder.incore = self._saved, self._saved_incore


class SplitMode(enum.Enum):
    """How a mixed cube/vector scope is split across the two vector lanes: by rows (`UP_DOWN`), by
    columns (`LEFT_RIGHT`), or not at all (`NONE`)."""

    NONE = "NONE"
    UP_DOWN = "UP_DOWN"
    LEFT_RIGHT = "LEFT_RIGHT"


class Optimization:
    """An entry of `pl.at(..., optimizations=[...])`: a hint to the runtime's scheduler. Accepted and
    checked; a mixed scope is one MIX task either way and the split of its vector work across the two
    AIVs is not modelled, so it changes nothing here."""

    def __init__(self, kind: str, value: Any) -> None:
        self.kind = kind
        self.value = value

    def __repr__(self) -> str:
        return f"pl.{self.kind}({self.value!r})"


def split(mode: SplitMode) -> Optimization:
    """`pl.split(pl.SplitMode.UP_DOWN)`: split a mixed cube/vector scope's tiles across the vector lanes."""
    if not isinstance(mode, SplitMode):
        raise PyptoError(f"pl.split: mode must be a pl.SplitMode, got {mode!r}")
    return Optimization("split", mode)


def cross_core_slot(slot_num: int) -> Optimization:
    """`pl.cross_core_slot(slot_num=N)`: the depth of the cube-to-vector ring of a mixed scope."""
    if isinstance(slot_num, bool) or not isinstance(slot_num, int) or slot_num < 1:
        raise PyptoError(f"pl.cross_core_slot: slot_num must be a positive int, got {slot_num!r}")
    return Optimization("cross_core_slot", slot_num)


def at(level: Level, role: Any = None, *, optimizations: Any = None, deps: Any = None, no_dep_args: Any = None,
       dumps: Any = None, allow_early_resolve: bool = False, name_hint: str = "", windowize: bool = False) -> AtScope:
    """`pl.at(level=pl.Level.CORE_GROUP, name_hint="...")`: the region one in-core task runs.
    `role`, `optimizations`, `deps`, `no_dep_args`, `dumps`, `allow_early_resolve` and `windowize` are
    the runtime's scheduling hints: accepted, with no effect on this board."""
    for o in optimizations or ():
        if not isinstance(o, Optimization):
            raise PyptoError(f"pl.at: optimizations= takes pl.split(...) and pl.cross_core_slot(...) entries, "
                             f"got {o!r}")
    return AtScope(level, str(name_hint or ""))
