"""The tuning advisor: which tile shapes to try next, with the simulated makespan to expect.

Human in the loop: the advisor proposes, the user decides. For each `set_vec_tile_shapes` /
`set_cube_tile_shapes` call of a kernel it enumerates the legal shapes (vec: powers of two up
to the largest dim the call tiles, the last entry a multiple of 32 bytes for every dtype it
tiles, plus the dim itself; cube: L0 of 16…256 per m/k/n, k's L1 at 1, 2 or 4 times its
L0), compiles candidates with the call's dims overridden (`builder.tile_overrides`, so the
file is never touched), lowers them and runs the `sim` board. A candidate that does not
compile (a buffer overflow, a rule broken) is illegal and costs one evaluation.

Search: best-first over that grid from the kernel's own shapes and from a "largest tile
that fits" start — the unexplored neighbours (one entry of one call one step up or down)
of the fastest candidates so far are evaluated first, until the budget (default 10 % of
the space rounded up, at least 6 evaluations) is spent. Results are cached by the candidate
and by the lowered program's fingerprint (its leaves and tasks), so two shapes that tile
the same way are simulated once. `exhaustive()` evaluates the whole space (for the benchmark).

A suggestion is an exact text edit of the call at its span, the predicted makespan and
speedup, and the reason: the bound before and after (from `boards.profile.bottleneck`).
The legal space is capped at `max_tiles` tiles per tile config (tiny tiles on big tensors
compile for seconds and are never the answer); the cap is part of the space's definition.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import math
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.analysis.findings import Finding, TextEdit, Where
from pypto.analysis.knobs import Knob, find_knobs, knob_values
from pypto.beside import ChildOutOfMemory, Later, soon
from pypto.boards.profile import bottleneck
from pypto.boards.sim import simulate
from pypto.boards.swimlane import metrics
from pypto.compiler.tile_passes import BESIDE_FROM
from pypto.ir import symbolic as S
from pypto.ir.errors import PyptoError
from pypto.ir.graph import TileConfig
from pypto.record import Traced, bind, compile_record
from pypto.target import load as load_board
from pypto.tracing.builder import tile_overrides
from pypto.tracing.tiling import board_limits_broken, cube_overflows, strict_tile_rules

Dims = tuple[Any, ...]
# (tile config index, dims), sorted; a PyPTO 3 kernel's knob j (`knobs.Knob`) is index -1 - j, its dims (value,)
Overrides = tuple[tuple[int, Dims], ...]

# The default wall-clock bound, in seconds, of every tile-shape search and of the check of the health
# findings' proposed shapes (`advice.ADVICE_SECONDS`), whichever door asks: `pypto-ide report --suggest`
# and `check`, `pypto-ide serve`'s jobs and the language server (its `pypto.tileSearchSeconds` setting
# defaults to the same 10). A search the bound cuts answers with the best shapes found by then and says
# how far it got (`search_text`); `--time 0` (no bound) is for the patient.
SEARCH_SECONDS = 10.0
# the diagnostics of a lowering's board limits (an op's tiles over the UB, a leaf's buffers over capacity): where the
# kernel as written has one, a candidate is not refused for it (`Advisor.tolerated`)
LOWERING_LIMITS = frozenset({"tile.ub-overflow", "block.over-capacity"})


@dataclass(frozen=True)
class Evaluation:
    overrides: Overrides
    makespan: float | None  # µs, simulated; None: illegal
    tasks: int = 0
    utilization: float = 0.0
    bound: str = ""
    why: str = ""
    error: str = ""  # why the candidate is illegal
    seconds: float = 0.0  # compile + simulate wall time

    @property
    def legal(self) -> bool:
        return self.makespan is not None


@dataclass(frozen=True)
class Written:
    """What the advisor reads of the kernel as written's lowered and profiled record, beside its traced program: the
    seconds its compile took here (what a candidate's is expected to take, scaled), the lines where its lowering broke
    a board limit (a candidate is not refused there), its tile ops and its figures on the sim board (the baseline).

    Small, so a job may carry it to a later one (`to_json`): a check of the advice again with the record unchanged (a
    longer bound asked for, an edit of a comment) then traces the kernel but lowers it no more (glm's fused attention:
    a 20 s, 4 GB compile, which each candidate's forked child started from)."""

    seconds: float
    limits: frozenset[tuple[str, int]]
    tile_ops: int | None  # None: no tile graph (a kernel stopped at the tensor stage)
    baseline: Evaluation | None  # None: the record has no sim run (the baseline is then compiled and simulated)

    @classmethod
    def of(cls, record: Any, runtime_options: Mapping[str, Any] | None = None) -> Written:
        """From a compiled (and maybe profiled) record: a run on another board, or with other runtime options, is
        simulated again from its lowered program (not recompiled)."""
        lines = {(d.loc.span.file, d.loc.span.line) for p in record.passes for d in p.diagnostics
                 if d.rule in LOWERING_LIMITS and d.loc.span is not None}
        run = record.run if not runtime_options else None
        program = record.program
        if (run is None or run.board != "sim") and program is not None and program.execute is not None \
                and program.blocks is not None:
            run = simulate(program, "a2a3", runtime_options)  # lowered already: simulated, not recompiled
        baseline = None
        if run is not None and run.board == "sim":
            m = metrics(run)  # the same simulation evaluate(()) would run
            bound, why = bottleneck(run)
            baseline = Evaluation((), m.makespan, len(run.tasks), m.utilization, bound, why)
        tiles = program.tiles if program is not None else None
        return cls(sum(float(p.seconds or 0.0) for p in record.passes), frozenset(lines),
                   len(tiles.ops) if tiles is not None else None, baseline)

    def to_json(self) -> dict[str, Any]:
        b = self.baseline
        return {"seconds": self.seconds, "limits": sorted(self.limits), "tile_ops": self.tile_ops,
                "baseline": None if b is None else [b.makespan, b.tasks, b.utilization, b.bound, b.why]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Written:
        b = d.get("baseline")
        ops = d["tile_ops"]
        return cls(float(d["seconds"]), frozenset((str(f), int(n)) for f, n in d["limits"]),
                   None if ops is None else int(ops),
                   None if b is None else Evaluation((), b[0], int(b[1]), float(b[2]), str(b[3]), str(b[4])))


@dataclass(frozen=True)
class Suggestion:
    rank: int
    config: int  # tile config index (trace order); a knob: -1 - its index in `Advisor.knobs`
    kind: str  # "vec" | "cube" | "const" (a PyPTO 3 kernel's slice-size constant)
    old: Dims
    new: Dims
    text: str  # the new call
    edit: TextEdit | None  # replaces the call's span; None when the config has no call (options)
    makespan_before: float
    makespan_after: float
    reason: str
    changes: Overrides = ()  # every call this suggestion changes (several for multi-call kernels)
    edits: tuple[TextEdit, ...] = ()

    @property
    def speedup(self) -> float:
        return self.makespan_before / self.makespan_after if self.makespan_after > 0 else 0.0

    def finding(self) -> Finding:
        where = self.edit.where if self.edit is not None else None
        fix = f"set {self.text} (and re-profile)" if self.kind == "const" else \
            f"replace the call with {self.text} (and re-profile)"
        return Finding("tuning.tile-shape", "info", "tuning",
                       f"try {self.text}: {self.makespan_after:,.2f} µs simulated, {self.speedup:.2f}x faster",
                       self.reason, fix, where,
                       {"makespan_before_us": self.makespan_before, "makespan_after_us": self.makespan_after,
                        "speedup": self.speedup, "old": _jsonable(self.old), "new": _jsonable(self.new)},
                       self.edits or ((self.edit,) if self.edit is not None else ()))

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "config": self.config, "kind": self.kind, "old": _jsonable(self.old),
                "new": _jsonable(self.new), "text": self.text,
                "edits": [e.to_json() for e in (self.edits or ((self.edit,) if self.edit else ()))],
                "makespan_before_us": self.makespan_before, "makespan_after_us": self.makespan_after,
                "speedup": self.speedup, "reason": self.reason}


def _jsonable(v: Any) -> Any:
    return [_jsonable(x) for x in v] if isinstance(v, (tuple, list)) else v


@dataclass
class _Pending:
    """A candidate being evaluated (`Advisor._begin`): traced, and its lowering and simulation in `later` (a forked
    child's, or to be made here); or known already (`known`: figures, or why it is illegal); or illegal when traced
    (`error`)."""

    overrides: Overrides
    t0: float
    traced: str = ""  # its traced program's fingerprint
    known: Any = None
    later: Later[tuple[str, Any, Any]] | None = None
    error: str = ""

    def drop(self) -> None:
        if self.later is not None:
            self.later.drop()


@dataclass
class Advisor:
    """Tile-shape search for one kernel at fixed inputs (parameter name -> argument)."""

    kernel: Any  # a JitKernel
    inputs: Mapping[str, Any]
    max_tiles: int = 16384
    # from this many tile ops in the kernel as written, a candidate is lowered and simulated in a forked child
    # (`evaluate_all`, `evaluate`): below, the fork costs more than the candidate's teardown it spares
    fork_from: int = BESIDE_FROM
    runtime_options: Mapping[str, Any] | None = None
    cache: dict[Overrides, Evaluation] = field(default_factory=dict)
    by_fingerprint: dict[str, tuple[float, int, float, str, str]] = field(default_factory=dict)
    configs: tuple[TileConfig, ...] = ()
    choices: dict[int, list[Dims]] = field(default_factory=dict)  # config index -> legal-looking dims
    baseline: Evaluation | None = None
    stopped: str = ""  # what ended the last search: "time", "budget" or "explored"
    search_seconds: float = 0.0
    search_given: float | None = None  # the seconds the last search was given (None: no bound)
    _t0: float = 0.0  # when the current (or last) search started
    _by_id: dict[int, TileConfig] = field(default_factory=dict)
    _tiled: dict[int, list[tuple[int, ...]]] = field(default_factory=dict)  # call -> shapes of the ops it tiles
    _rate: float = 0.0  # seconds per unit of `cost` (the slowest evaluation so far): what a candidate will take
    _floor: float = 0.0  # the quickest legal evaluation so far: what any candidate takes at least (tracing, passes)
    _written: float = 0.0  # the seconds the kernel as written took to compile (its record's passes, on this machine)
    knobs: tuple[Knob, ...] = ()  # a PyPTO 3 kernel's slice-size constants (`knobs.find_knobs`): searched as calls are
    # the lines where the kernel as written breaks a board limit: a candidate may too (`strict_tile_rules`)
    tolerated: frozenset[tuple[str, int]] = frozenset()

    record: Any = None  # the kernel as written, compiled (and profiled) already: reused, not redone
    # what the advisor reads of that record's lowering and run, when `record` is only traced (`Written.to_json` of an
    # earlier job's advisor, for the same traced program): the kernel is then not lowered here
    written: Written | None = None
    # a candidate's traced program (`pypto.record.Traced.fingerprint`) -> its figures [makespan, tasks, utilization,
    # bound, why], or why it is illegal: what earlier checks of the kernel found (the language server passes its
    # last compile's in), so a candidate traced as before is neither lowered nor simulated again; filled here
    traces: dict[str, Any] = field(default_factory=dict)
    # candidates not simulated, and why: a forked child that ran out of memory lowering one (glm's fused attention in a
    # worker under its cap: not retried here, where it would likely run out too and end the whole check), or a compile
    # that would outlast the whole of a bounded check (`evaluate_all`); not cached
    lost: dict[Overrides, str] = field(default_factory=dict)
    # of `lost`, those a longer bound would simulate: not begun because the check had too little time left (not the
    # ones whose child ran out of memory, which a longer bound does not help)
    over_bound: set[Overrides] = field(default_factory=set)

    def __post_init__(self) -> None:
        record = self.record if self.record is not None else compile_record(self.kernel, dict(self.inputs))
        self.record = record
        if self.written is None:
            self.written = Written.of(record, self.runtime_options)
        self._written = self.written.seconds
        self.configs = tuple(record.source.tile_configs)
        self._by_id = {tc.id: tc for tc in self.configs}
        self.choices = {tc.id: self._choices(tc) for tc in self.configs}
        self.knobs = find_knobs(self.kernel)
        for j, kb in enumerate(self.knobs):
            self.choices[-1 - j] = [(v,) for v in kb.values]
        self.tolerated = self._limits_as_written()
        if self.written.baseline is not None:
            self.cache[()] = self.written.baseline
        self.baseline = self.evaluate(())

    def _limits_as_written(self) -> frozenset[tuple[str, int]]:
        """The lines where the kernel as written breaks a board limit, which a candidate is not refused for: its
        trace's (traced again here, noting them, warning nothing: a tile-shape call's) and its lowering's (the record's
        diagnostics: an op over the UB, a leaf's buffers over capacity)."""
        lines = set(self.written.limits) if self.written is not None else set()
        with warnings.catch_warnings(), board_limits_broken() as found:
            warnings.simplefilter("ignore")
            try:
                self.kernel.fresh().compile(**self.inputs)
            except PyptoError:
                pass  # (the record was made: a trace that fails now finds what it found until then)
        return frozenset(lines | set(found))

    # ---- the space

    def _shapes_of(self, tc: TileConfig) -> list[tuple[tuple[int, ...], list[int]]]:
        """(output shape, dtype sizes of output and inputs) of every op the config tiles."""
        nodes = {n.id: n for n in self.record.graph.walk()}
        out = []
        for n in nodes.values():
            if n.tile != tc.id or n.type is None:
                continue
            shape = tuple(S.evaluate(d, self.record.bindings) for d in n.type.shape)
            sizes = [n.type.dtype.nbytes] + [nodes[i].type.dtype.nbytes for i in n.inputs
                                             if i in nodes and nodes[i].type is not None]
            out.append((shape, sizes))
        return out

    def _choices(self, tc: TileConfig) -> list[Dims]:
        if tc.kind == "cube":
            return self._cube_choices(tc)
        shapes = self._shapes_of(tc)
        rank = len(tc.dims)
        if not shapes:
            return [tuple(tc.dims)]
        ub = int(load_board("a2a3")["buffers_bytes"]["UB"])
        align = 32 // min(min(s) for _, s in shapes)
        per_pos: list[list[int]] = []
        for pos in range(rank):  # entry `pos` applies to trailing dim rank - pos of each op
            back = rank - pos
            extents = [shape[-back] for shape, _ in shapes if len(shape) >= back]
            if not extents:
                per_pos.append([tc.dims[pos]])
                continue
            top = max(extents)
            if pos == rank - 1:
                vals = {align * 2**j for j in range(20) if align * 2**j <= max(top, align)}
                vals.add(-(-top // align) * align)
            else:
                vals = {2**j for j in range(20) if 2**j <= top} | {top}
            per_pos.append(sorted(vals))
        widest = max(max(s) for _, s in shapes)
        out = []
        for dims in itertools.product(*per_pos):
            elems = math.prod(dims)
            tiles = max(math.prod(-(-shape[-k - 1] // dims[-k - 1]) for k in range(min(len(shape), rank)))
                        for shape, _ in shapes)
            if elems * widest <= ub and tiles <= self.max_tiles:
                out.append(tuple(dims))
        return out or [tuple(tc.dims)]

    def _operand_bytes(self, tc: TileConfig) -> tuple[int, int]:
        """The widest A and B element sizes of the matmuls the cube config tiles (2: fp16 if none)."""
        nodes = {n.id: n for n in self.record.graph.walk()}
        a = b = 0
        for n in nodes.values():
            if n.tile == tc.id and n.op == "matmul" and len(n.inputs) >= 2:
                ta, tb = (nodes[i].type if i in nodes else None for i in n.inputs[:2])
                a = max(a, ta.dtype.nbytes if ta is not None else 2)
                b = max(b, tb.dtype.nbytes if tb is not None else 2)
        return a or 2, b or 2

    def _cube_choices(self, tc: TileConfig) -> list[Dims]:
        """m, k, n of 16…256 (k's L1 at 1, 2 or 4 times its L0) that fit L0A/L0B/L0C/L1 for the
        config's operand dtypes: the analytical prune (an overflowing shape is never the answer,
        and costs a compile to find out)."""
        l0 = (16, 32, 64, 128, 256)
        a, b = self._operand_bytes(tc)
        out = []
        for m, n, k0, kmul in itertools.product(l0, l0, l0, (1, 2, 4)):
            dims = ((m, m), (k0, k0 * kmul), (n, n), bool(tc.dims[3]) if len(tc.dims) > 3 else False)
            if not cube_overflows(dims[0], dims[1], dims[2], a, b):
                out.append(dims)
        return out or [tuple(tc.dims)]

    def _own(self) -> dict[int, Dims]:
        """Each call's dims and each knob's value as the kernel is written."""
        return {tc.id: tuple(tc.dims) for tc in self.configs} | {-1 - j: (kb.value,) for j, kb in enumerate(self.knobs)}

    def _tiles(self, i: int, dims: Dims) -> int:
        """How many tiles call `i` cuts its ops into with `dims` (cube: output tiles; their k
        steps stay inside one task): what a candidate's compile and simulation time grow with.
        A knob: the kernel's tile ops scaled by how many more slices the value makes."""
        if i < 0:
            ops = self.written.tile_ops if self.written is not None and self.written.tile_ops is not None else 1
            return max(1, round(ops * self.knobs[-1 - i].value / max(1, int(dims[0]))))
        tc = self._by_id[i]
        shapes = self._tiled.setdefault(i, [shape for shape, _ in self._shapes_of(tc)])
        if tc.kind == "cube":
            (m, _), _, (n, _), *_ = dims
            return sum(math.prod(s[:-2]) * -(-s[-2] // m) * -(-s[-1] // n) for s in shapes if len(s) >= 2) or 1
        rank = len(dims)
        return sum(math.prod(s[:max(0, len(s) - rank)]) *
                   math.prod(-(-s[-k - 1] // max(1, dims[-k - 1])) for k in range(min(len(s), rank)))
                   for s in shapes) or 1

    def expected_seconds(self, ov: Overrides) -> float:
        """The seconds a candidate's compile is expected to take: the kernel as written's (its record's passes)
        times its tiles against the kernel's (`cost`). What a check that did not reach it would need more
        (`advice.verify_advice`'s `check_seconds`)."""
        return self._written * self.cost(ov)

    def cost(self, ov: Overrides) -> float:
        """A candidate's tiles relative to the kernel as written (1.0: as many): the evaluation time
        to expect, in units of the baseline's."""
        own = self._own()
        cur = {**own, **dict(ov)}
        return sum(self._tiles(i, d) for i, d in cur.items()) / max(1, sum(self._tiles(i, d) for i, d in own.items()))

    def edit_for(self, config: int, dims: Dims) -> tuple[str, TextEdit | None]:
        """The call that sets `dims` on tile call `config`, and the exact edit of it in the file
        (None when the call's span cannot be edited in place); a knob: its line `NAME = value`."""
        if config < 0:
            kb = self.knobs[-1 - config]
            return kb.text(int(dims[0])), kb.edit(int(dims[0]))
        return _call_edit(self._by_id[config], dims)

    def space_size(self) -> int:
        return math.prod(len(c) for c in self.choices.values())

    def space(self) -> Iterable[Overrides]:
        ids = sorted(self.choices)
        for combo in itertools.product(*(self.choices[i] for i in ids)):
            yield self.normalize(dict(zip(ids, combo)))

    def normalize(self, ov: Mapping[int, Dims]) -> Overrides:
        """Overrides without the entries equal to the kernel's own dims, sorted."""
        own = self._own()
        return tuple(sorted((i, tuple(d)) for i, d in ov.items() if tuple(d) != own.get(i)))

    # ---- evaluating

    def evaluate(self, overrides: Overrides) -> Evaluation:
        hit = self.cache.get(overrides)
        if hit is not None:
            return hit
        if overrides in self.lost:
            return Evaluation(overrides, None, error=f"not simulated: {self.lost[overrides]}")
        return self._finish(self._begin(overrides, self._forks()))

    def evaluate_all(self, candidates: Iterable[Overrides], until: Callable[[Overrides], bool] | None = None,
                     deadline: float | None = None) -> None:
        """Each of `candidates` evaluated (into `cache`), in order, until `until(candidate)` says to stop. From
        `fork_from` tile ops in the kernel as written, a candidate is traced here (the user's code) and lowered and
        simulated in a forked child of its own (`pypto.beside.soon`), two at a time: the next one is traced while
        they run, and the children's copies of their programs are never torn down here (glm's fused attention:
        ~2 s of a 4.6 s candidate). `deadline` (`time.monotonic()`): a child not done by then is ended and its
        candidate left out of `cache` (unevaluated), so that the check ends at its bound, not two candidates later
        (gated delta rule's first tile edit: 12.6 s for a bound of 10 s before). With a deadline, a candidate lowered in
        a child whose compile is expected to take longer than the whole check has (the kernel as written's compile
        time, scaled by the candidate's tiles: `cost`) is not started: it is `lost`, with the figures that said so
        (glm's fused attention, 16 s a compile against a bound of 10 s: its three shapes' children were ended at the
        bound, or ran out of memory, and the answer came 16 s after the record for nothing)."""
        fork = self._forks()
        pending: deque[_Pending] = deque()
        whole = None if deadline is None else deadline - time.monotonic()  # what the check has, from its start

        def settle(p: _Pending) -> None:
            if deadline is not None and p.later is not None and not p.later.ready(deadline - time.monotonic()):
                p.drop()  # the bound passed before its child was done
            else:
                self._finish(p)

        try:
            for ov in candidates:
                if ov in self.cache or ov in self.lost or any(p.overrides == ov for p in pending):
                    continue
                if until is not None and until(ov):
                    break
                p = self._begin(ov, fork, whole)
                if p.later is None or not fork:  # known already, or illegal when traced: nothing to wait for
                    self._finish(p)
                    continue
                pending.append(p)
                if len(pending) == 2:
                    settle(pending.popleft())
            while pending:
                settle(pending.popleft())
        finally:
            for p in pending:  # (one of them raised)
                p.drop()

    def _forks(self) -> bool:
        """Whether candidates are lowered in forked children: the kernel as written has `fork_from` tile ops."""
        ops = self.written.tile_ops if self.written is not None else None
        return ops is not None and ops >= self.fork_from

    def _begin(self, overrides: Overrides, fork: bool, whole: float | None = None) -> _Pending:
        """The candidate traced (and fingerprinted) here; its lowering and simulation begun in a forked child when
        `fork` and its traced program is not known already, else left for `_finish` — unless its compile is expected
        to take longer than `whole` seconds (`evaluate_all`): then it is `lost`."""
        t0 = time.perf_counter()
        fresh = self.kernel.fresh()  # an empty cache
        calls = {i: d for i, d in overrides if i >= 0}
        consts = {self.knobs[-1 - i].name: int(d[0]) for i, d in overrides if i < 0}
        try:
            # board limits make a candidate illegal
            with tile_overrides(calls), strict_tile_rules(self.tolerated), knob_values(self.kernel, consts):
                ck = fresh.compile(**self.inputs)
                binds = bind(ck.graph, self.inputs)
                traced = Traced(ck, dict(self.inputs), self.inputs, binds, None).fingerprint(
                    ["advisor: strict tile rules, the sim board", sorted(self.tolerated),
                     _jsonable(self.runtime_options)])
        except PyptoError as e:
            return _Pending(overrides, t0, error=e.message)
        known = self.traces.get(traced)
        if known is not None:
            return _Pending(overrides, t0, traced, known)
        expected = self.expected_seconds(overrides)
        if fork and whole is not None and expected > whole:
            self.over_bound.add(overrides)
            self.lost[overrides] = (f"a compile of this kernel took {self._written:.1f} s here, and this shape's is "
                                    f"expected to take {expected:.1f} s, longer than the {whole:.1f} s the check had")
            return _Pending(overrides, t0, traced)

        def lowered() -> tuple[str, Any, Any]:  # ("illegal", why, None) or ("ok", its figures, their fingerprint)
            with tile_overrides(calls), strict_tile_rules(self.tolerated), knob_values(self.kernel, consts):
                try:
                    lw = ck.lower(binds)
                except PyptoError as e:
                    return ("illegal", e.message, None)
                return ("ok", *self._simulated(lw.program))

        return _Pending(overrides, t0, traced, None, soon(lowered, fork))

    def _finish(self, p: _Pending) -> Evaluation:
        """The candidate's evaluation, cached: its lowering and simulation taken from its child, or made here; not
        simulated (`lost`) when its child ran out of memory, or this process did making it, or it was not begun
        (`_begin`)."""
        if p.overrides in self.lost:
            return self.evaluate(p.overrides)
        known: Any = p.known
        if p.later is not None:
            try:
                kind, got, fp = p.later.get(again_out_of_memory=False)
            except ChildOutOfMemory as e:
                self.lost[p.overrides] = f"{e} lowering and simulating this tile shape"
                return self.evaluate(p.overrides)
            except MemoryError:  # lowered here (no child, or its result not whole) and out of memory: what it made
                # is gone with the exception, and the check goes on without this shape (glm's fused attention at
                # the worker's cap: a longer check's job ended here instead)
                self.lost[p.overrides] = "this process ran out of memory lowering and simulating this tile shape"
                return self.evaluate(p.overrides)
            if kind == "illegal":
                known = got
            else:
                known = list(self.by_fingerprint.setdefault(fp, got))
            self.traces[p.traced] = known
        seconds = time.perf_counter() - p.t0
        if p.error or isinstance(known, str):
            ev = Evaluation(p.overrides, None, error=p.error or known, seconds=seconds)
        else:
            ev = Evaluation(p.overrides, known[0], known[1], known[2], known[3], known[4], seconds=seconds)
        self.cache[p.overrides] = ev
        self._rate = max(self._rate, ev.seconds / max(self.cost(p.overrides), 1e-9))
        if ev.legal:
            self._floor = ev.seconds if not self._floor else min(self._floor, ev.seconds)
        return ev

    def _simulated(self, program: Any) -> tuple[tuple[float, int, float, str, str], str]:
        """A lowered candidate's figures on the sim board (once per execute graph: candidates that lower alike), and
        the execute graph's fingerprint (a forked child's findings are filed by it here)."""
        assert program.execute is not None and program.leaves is not None
        fp = _fingerprint(program)
        known = self.by_fingerprint.get(fp)
        if known is None:
            sl = simulate(program, "a2a3", self.runtime_options)
            m = metrics(sl)
            bound, why = bottleneck(sl)
            known = self.by_fingerprint[fp] = (m.makespan, len(sl.tasks), m.utilization, bound, why)
        return known, fp

    @property
    def evaluations(self) -> int:
        return len(self.cache)

    # ---- searching

    def _neighbours(self, ov: Overrides) -> list[Overrides]:
        cur = self._own()
        cur.update(dict(ov))
        out = []
        for i, dims in cur.items():
            options = self.choices[i]
            for cand in options:
                if cand != dims and _adjacent(dims, cand, options):
                    out.append(self.normalize({**cur, i: cand}))
        return out

    def _step_again(self, before: Overrides, after: Overrides) -> Overrides | None:
        """`after` moved one entry of one call one step from `before`: the same move again."""
        cur_b = self._own() | dict(before)
        cur_a = self._own() | dict(after)
        changed = [i for i in cur_a if cur_a[i] != cur_b[i]]
        if len(changed) != 1:
            return None
        i = changed[0]
        options = self.choices[i]
        for cand in options:
            if cand != cur_a[i] and _adjacent(cur_a[i], cand, options) and _adjacent(cur_b[i], cur_a[i], options):
                fa, fb, fc = (_flat(x) for x in (cur_b[i], cur_a[i], cand))
                k = [j for j, (x, y) in enumerate(zip(fa, fb)) if x != y]
                if k and fc[k[0]] != fb[k[0]] and (fc[k[0]] > fb[k[0]]) == (fb[k[0]] > fa[k[0]]) and \
                        all(fc[j] == fb[j] for j in range(len(fb)) if j != k[0]):
                    return self.normalize({**cur_a, i: cand})
        return None

    def _big_starts(self, count: int) -> dict[int, list[Dims]]:
        """Per call, its shapes from the largest tile area down (halving), at most `count`: the
        largest tile of each area with the longest rows. A tile too big for its buffer makes
        every other shape of its area too big as well, so one try per area suffices."""
        per_call = {}
        for i, options in self.choices.items():
            by_area: dict[int, Dims] = {}
            for d in sorted(options, key=lambda d: (_area(d), _last(d))):
                by_area[_area(d)] = d  # the longest rows of each area win
            per_call[i] = [by_area[a] for a in sorted(by_area, reverse=True)][:max(1, count)]
        return per_call

    def search(self, budget: int | None = None, seconds: float | None = None,
               progress: Callable[[dict[str, Any]], None] | None = None, every: float = 0.5) -> Evaluation:
        """Best-first neighbourhood search from the kernel's shapes and the largest tiles: the
        unexplored neighbours of the fastest candidates so far are evaluated first, until the
        budget (evaluations) or the wall-clock `seconds` are spent or nothing is left to explore;
        the best found. `self.stopped` says which ended it. With `seconds`, a candidate that would not
        finish in time (its `cost` at the slowest rate seen so far) is passed over for cheaper ones,
        so one huge compile does not overrun the budget. `progress`, if given, is called with
        `progress_summary()` (the best so far) after the first evaluation, then at most every
        `every` seconds, and once at the end."""
        budget = budget if budget is not None else max(6, -(-self.space_size() // 10))
        self.search_given = seconds
        t0 = time.perf_counter()
        self._t0 = t0
        told = [t0 - every]
        evaluate = self.evaluate

        def step(ov: Overrides) -> Evaluation:
            ev = evaluate(ov)
            now = time.perf_counter()
            if progress is not None and now - told[0] >= every:
                told[0] = now
                progress(self.progress_summary())
            return ev

        try:
            best = self._search(budget, t0 + seconds if seconds is not None else math.inf, step)
        finally:
            self.search_seconds = time.perf_counter() - t0
        if progress is not None:
            progress(self.progress_summary())
        return best

    def progress_summary(self) -> dict[str, Any]:
        """`search_summary()` so far, with the best shape found yet: its makespan and call text."""
        best, base = self.best(), self.baseline
        out = {**self.search_summary(), "seconds": round(time.perf_counter() - self._t0, 3),
               "baseline_us": base.makespan if base is not None else None, "best_us": best.makespan, "best": ""}
        if best.overrides and best.legal:
            out["best"] = "; ".join(self.edit_for(i, d)[0] for i, d in best.overrides)
        return out

    def _search(self, budget: int, deadline: float, evaluate: Callable[[Overrides], Evaluation]) -> Evaluation:
        self.stopped = "explored"
        frontier: list[tuple[float, int, Overrides]] = []
        tick = itertools.count()

        parent: dict[Overrides, Evaluation] = {}

        def expand(ev: Evaluation) -> None:
            if not ev.legal:
                return
            assert ev.makespan is not None
            up = parent.get(ev.overrides)
            if up is not None and up.legal and ev.makespan < up.makespan:  # type: ignore[operator]
                further = self._step_again(up.overrides, ev.overrides)  # it helped: one more step that way, first
                if further is not None and further not in self.cache:
                    parent.setdefault(further, ev)
                    heapq.heappush(frontier, (ev.makespan - 1e-9, next(tick), further))
            for n in self._neighbours(ev.overrides):
                if n not in self.cache:
                    parent.setdefault(n, ev)
                    heapq.heappush(frontier, (ev.makespan, next(tick), n))

        expand(evaluate(()))
        # the largest tiles that compile: per call with the others as written (calls tile
        # different ops, so their best shapes are nearly independent), then all of them at once
        own = self._own()
        biggest: dict[int, Dims] = {}
        def fits(ov: Overrides) -> bool:  # would it finish before the deadline (as fast as the slowest so far,
            # and no faster than the quickest: a candidate of few tiles still traces and lowers the kernel)?
            return time.perf_counter() + max(self._rate * self.cost(ov), self._floor) < deadline

        for i, shapes in self._big_starts(budget // 3).items():
            for dims in shapes:
                if time.perf_counter() >= deadline:
                    break
                start = self.normalize({**own, i: dims})
                if not fits(start):
                    continue
                ev = evaluate(start)
                if ev.legal:
                    biggest[i] = dims
                    expand(ev)
                    break
        both = self.normalize({**own, **biggest})
        if len(biggest) > 1 and time.perf_counter() < deadline and fits(both):
            expand(evaluate(both))
        skipped = False  # a candidate left out because it would overrun the deadline
        while frontier:
            if self.evaluations >= budget:
                self.stopped = "budget"
                break
            if time.perf_counter() >= deadline:
                self.stopped = "time"
                break
            _, _, cand = heapq.heappop(frontier)
            if cand in self.cache:
                continue
            if not fits(cand):
                skipped = True
                continue
            expand(evaluate(cand))
        if skipped and self.stopped == "explored":
            self.stopped = "time"  # what is left would not finish within the time budget
        return self.best()

    def search_summary(self) -> dict[str, Any]:
        """How far the last search got: shapes simulated of the space, why it stopped, how long."""
        return {"searched": self.evaluations, "space": self.space_size(), "stopped": self.stopped,
                "seconds": round(self.search_seconds, 3),
                "given": None if self.search_given is None else round(self.search_given, 3)}



    def best(self) -> Evaluation:
        """The fastest legal candidate evaluated so far (the baseline if none is faster)."""
        best = self.baseline
        assert best is not None
        for ev in self.cache.values():
            if ev.legal and (not best.legal or ev.makespan < best.makespan):  # type: ignore[operator]
                best = ev
        return best

    def exhaustive(self) -> Evaluation:
        for ov in self.space():
            self.evaluate(ov)
        return self.best()

    # ---- suggesting

    def suggest(self, top: int = 3, budget: int | None = None, seconds: float | None = None,
                progress: Callable[[dict[str, Any]], None] | None = None) -> list[Suggestion]:
        """Up to `top` ranked suggestions strictly faster than the kernel as written, from a search
        of at most `budget` evaluations and `seconds` of wall clock (the best found by then);
        `progress` as in `search`."""
        self.search(budget, seconds, progress)
        base = self.baseline
        assert base is not None
        if not base.legal:
            return []
        ranked = sorted((ev for ev in self.cache.values() if ev.legal and ev.overrides
                         and faster(ev.makespan, base.makespan)),  # type: ignore[arg-type]
                        key=lambda ev: (ev.makespan, ev.overrides))
        out: list[Suggestion] = []
        seen: set[tuple[float, int]] = set()
        for ev in ranked:  # equal makespan and task count: the same program in effect, shown once
            key = (round(ev.makespan, 6), ev.tasks)  # type: ignore[arg-type]
            if key in seen:
                continue
            seen.add(key)
            out.append(self._suggestion(len(out) + 1, ev))
            if len(out) == top:
                break
        return out

    def _suggestion(self, rank: int, ev: Evaluation) -> Suggestion:
        base = self.baseline
        assert base is not None and base.makespan is not None and ev.makespan is not None
        by_id = {tc.id: tc for tc in self.configs}
        edits: list[TextEdit] = []
        texts = []
        for i, dims in ev.overrides:
            text, edit = self.edit_for(i, dims)
            texts.append(text)
            if edit is not None:
                edits.append(edit)
        first_id, first_dims = ev.overrides[0]
        reason = (f"simulated {base.makespan:,.2f} → {ev.makespan:,.2f} µs; was {base.bound}-bound "
                  f"({base.why}); now {base.tasks} → {ev.tasks} tasks, utilization "
                  f"{base.utilization:.0%} → {ev.utilization:.0%}, {ev.bound}-bound")
        kind, old = (("const", (self.knobs[-1 - first_id].value,)) if first_id < 0
                     else (by_id[first_id].kind, tuple(by_id[first_id].dims)))
        return Suggestion(rank, first_id, kind, old, first_dims,
                          "; ".join(texts), edits[0] if edits else None, base.makespan, ev.makespan, reason,
                          ev.overrides, tuple(edits))


# A shape is offered as faster only when it saves at least this share of the makespan: below it the figure moves
# with where the board places a tile, and an edit is not worth making for it (gated delta rule: a finding's shape at
# 7,986.03 µs against 7,986.15 was offered as "1.00x"). The search's suggestions and the findings' check alike.
FASTER_BY = 0.005


def faster(after: float | None, before: float) -> bool:
    """Whether a simulated makespan `after` is worth offering against `before` (`FASTER_BY`)."""
    return after is not None and after < before * (1 - FASTER_BY)


NO_TIME = 0.05  # s: a search given less than this had no time of its own (the check before it spent the bound)


def count_text(n: int) -> str:
    """A count as read: "91,500", and from 10^9 "2.8×10^49" (a search space of 50 digits says nothing more)."""
    if n < 10 ** 9:
        return f"{n:,}"
    mantissa, exponent = f"{n:.1e}".split("e")
    return f"{mantissa}×10^{int(exponent)}"


def search_text(s: Mapping[str, Any]) -> str:
    """`Advisor.search_summary()` in words: "searched 120 of 91,500 shapes in 10.0 s (the time budget ran out)"; a
    search that had (almost) no time of its own says what spent the bound they share: "…(the time budget ran out:
    the check of the findings' shapes, which comes first, left the search 0 s)"."""
    space = count_text(int(s["space"]))
    why = {"time": "the time budget ran out", "budget": "the evaluation budget was spent",
           "explored": "no unexplored neighbour of a fast shape was left"}.get(str(s.get("stopped")), "")
    given = s.get("given")
    if s.get("stopped") == "time" and given is not None and float(given) < NO_TIME:
        why += f": the check of the findings' shapes, which comes first, left the search {float(given):g} s"
    return f"searched {s['searched']:,} of {space} shapes in {float(s['seconds']):.1f} s" + \
        (f" ({why})" if why else "")


def _area(d: Dims) -> int:
    if d and isinstance(d[0], tuple):  # cube: (m, k, n, split)
        return d[0][1] * d[2][1] * d[1][1]
    return math.prod(d)


def _last(d: Dims) -> int:
    return d[2][1] if d and isinstance(d[0], tuple) else d[-1]


def _adjacent(a: Dims, b: Dims, options: list[Dims]) -> bool:
    """b differs from a in one entry, by one step of that entry's values among the options."""
    if a and isinstance(a[0], tuple):
        flat_a, flat_b = _flat_cube(a), _flat_cube(b)
    else:
        flat_a, flat_b = tuple(a), tuple(b)
    diff = [k for k, (x, y) in enumerate(zip(flat_a, flat_b)) if x != y]
    if len(diff) != 1:
        return False
    k = diff[0]
    values = sorted({(_flat_cube(o) if o and isinstance(o[0], tuple) else tuple(o))[k] for o in options})
    if flat_a[k] not in values:
        return True
    i, j = values.index(flat_a[k]), values.index(flat_b[k])
    return abs(i - j) == 1


def _flat(d: Dims) -> tuple[int, ...]:
    return _flat_cube(d) if d and isinstance(d[0], tuple) else tuple(d)


def _flat_cube(d: Dims) -> tuple[int, ...]:
    (m, _), (k0, k1), (n, _), *_ = d
    return (m, k0, k1 // k0, n)


def _fingerprint(program: Any) -> str:
    h = hashlib.sha1()
    h.update(repr([lf.hash for lf in program.leaves]).encode())
    h.update(repr([(t.leaf, t.preds) for t in program.execute.tasks]).encode())
    return h.hexdigest()


def call_text(tc: TileConfig, dims: Dims, original: str | None = None) -> str:
    """The call that sets `dims`, keeping the original call's spelling of the function."""
    fn = f"pypto.set_{tc.kind}_tile_shapes"
    if original and "(" in original:
        fn = original[:original.index("(")]
    if tc.kind == "cube":
        (m0, m1), k, (n0, n1), *rest = dims
        split = ", enable_split_k=True" if rest and rest[0] else ""
        return f"{fn}([{m0}, {m1}], [{', '.join(str(x) for x in k)}], [{n0}, {n1}]{split})"
    return f"{fn}({', '.join(str(x) for x in dims)})"


def _call_edit(tc: TileConfig, dims: Dims) -> tuple[str, TextEdit | None]:
    span = tc.loc.span
    if span is None or not span.file or span.line <= 0:
        return call_text(tc, dims), None
    try:
        lines = Path(span.file).read_text().splitlines()
    except OSError:
        return call_text(tc, dims), None
    end_line = span.end_line or span.line
    if span.end_col <= 0 or end_line != span.line:
        return call_text(tc, dims), None
    original = lines[span.line - 1][span.col:span.end_col]
    text = call_text(tc, dims, original)
    return text, TextEdit(Where(span.file, span.line, span.col, end_line, span.end_col), text)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """The file text with `edits` applied (single-line edits, applied right to left)."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.where.line, e.where.col), reverse=True):
        w = e.where
        line = lines[w.line - 1]
        lines[w.line - 1] = line[:w.col] + e.text + line[w.end_col:]
    return "\n".join(lines)
