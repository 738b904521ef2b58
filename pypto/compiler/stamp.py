"""Loop iterations stamped from the one before, instead of expanded again.

A production kernel's loops run one body many times (gated delta rule: 256 iterations of 764 tile
ops; Kimi's block attention: 64 of 2,185), and tile expansion made each iteration's tile ops anew,
though each is the one before moved: its ids shifted, the workspaces it makes renumbered, its
windows on outside tensors moved by the offsets' step. Here an iteration of an innermost loop (a
body with no loop in it) is made by translating a template iteration `b` when that is what
expanding it would make. The expander's decisions depend on shapes, on the kind and tiling of each
value's placement and on offsets relative to a value's own tiles; ids are only names; absolute
offsets in a buffer matter only to the window checks and the clipping of views. So iteration `k`,
`m` iterations after `b`, is `b` translated when:

- **witness**: the iteration `a` just before `b` was expanded too, and `b` is `a` translated: the
  same tile ops (op, tensor node, coordinates, shape, dtype, attributes by value, an attribute dict
  made per op or shared alike), ids shifted by one step, inputs inside the iteration, every buffer
  they touch either the same one (made before `a`: an outside tensor) or the one made one step later
  (a workspace of the iteration or of the one before it), each region's offset moved by a step of its
  own (that of the view or assemble it was taken through, which `k` moves `m` times); likewise the
  carried values, the writes (assembles), the buffers reshapes share and the view and assemble windows;
- **clean template**: `b` appended no note or warning, met no stale view, clipped no view window,
  changed no tile op made before it, and made every tile op in its own instance (so it placed no
  outside value anew: the first iteration, which stores an outside value's tiles to GM, is never a
  template);
- **same expressions**: every symbolic expression of the body (shapes, valid shapes, view shapes,
  assumptions) has at `k`'s index the value it had at `b`'s, and each view and assemble offset is
  its value at `b` plus `m` times its step from `a` to `b`;
- **same carried values**: the regions `k` starts from are `b`'s, translated;
- **windows inside**: each view and assemble window of `b`, at `k`'s offsets, lies inside its input
  and no view window is clipped.

A stamped iteration's matmul workspaces are not filed for retargeting (`Expander.matmul_tiles`): only an
assemble of a matmul's own value retargets its tiles, and only its own iteration reads that value.

Anything else — a condition unmet, an expression that cannot be evaluated — and the iteration is
expanded in full, so it raises and says what a full expansion does, and a later pair of iterations
may become a new witness. The tile graph is the same, object layout included: attribute dicts made
per op are made per op (the leaf stage numbers op kinds by them), shared ones stay shared
(tests/test_stamp.py compares the tile graphs and records with stamping off).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pypto.compiler.tile_ir import Buffer, Region, TileOp
from pypto.ir import symbolic as S
from pypto.ir.graph import Node
from pypto.reference.kernels import view_extent


class Expanding(Protocol):
    """What a stamper reads and appends to of the tile expander (`tile_expand.Expander`, which imports this module)."""

    ops: list[TileOp]
    buffers: list[Buffer]
    notes: list[tuple[str, Node]]
    warnings: list[tuple[str, Node]]
    clips: int
    stale: int
    journal: list[tuple[Any, ...]] | None
    env: dict[str, int]
    writes: dict[int, list[tuple[Node, Region]]]
    sharers: dict[int, list[int]]


ENABLED = True  # tests turn it off to compare with the full expansion
_stamped = 0  # iterations stamped in this process so far (`stamped`)
WITNESS_TRIES = 3  # pairs of iterations compared per run of a loop before it is expanded in full
_MOVES = object()  # a buffer made by the iterations: the next iteration's is one step on
_FAIL = object()  # two regions that are not one moved
Step = tuple[int, ...] | None


def stamped() -> int:
    """How many loop iterations this process has stamped so far (tests and benchmarks read it before and after a
    compile: the Stamper is native code in a native build, which cannot be patched to count)."""
    return _stamped


@dataclass(frozen=True)
class Body:
    """A loop body's symbolic expressions: those that must not change between iterations, and the
    view and assemble offsets, which may move by a constant step."""

    nodes: dict[int, Node]
    fixed: tuple[S.SymExpr, ...]
    offsets: tuple[tuple[int, tuple[Any, ...]], ...]  # (view or assemble node, its offsets)

    @staticmethod
    def of(loop: Node) -> Body | None:
        """The body's form, or None when it holds a loop (only innermost loops are stamped)."""
        body = loop.body
        assert body is not None
        if any(nd.body is not None for nd in body.nodes):
            return None
        fixed: list[S.SymExpr] = []
        offsets = []
        for nd in body.nodes:
            if nd.type is not None:
                _symbolic(nd.type.shape, fixed)
            for key, v in nd.attrs.items():
                if key == "offsets" and nd.op in ("view", "assemble"):
                    offsets.append((nd.id, tuple(v)))
                else:
                    _symbolic(v, fixed)
        return Body({nd.id: nd for nd in body.nodes}, tuple(fixed), tuple(offsets))

    def values(self, env: dict[str, int]) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]] | None:
        """The expressions' values at `env`, or None when one cannot be evaluated (a run-time read
        out of range: the full expansion says so at its line)."""
        try:
            fixed = tuple([S.evaluate(e, env) for e in self.fixed])
            offsets = tuple([tuple([S.evaluate(d, env) for d in off]) for _, off in self.offsets])
        except Exception:  # noqa: BLE001 - whatever it is, the full expansion meets it again and reports it
            return None
        return fixed, offsets


def _symbolic(v: Any, out: list[S.SymExpr]) -> None:
    if isinstance(v, S.SymExpr):
        out.append(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _symbolic(x, out)


@dataclass
class Iteration:
    """One iteration expanded in full: where its tile ops and buffers are, what it started from and
    left, and what it did besides (the expander's journal)."""

    instance: int
    ops: range
    buffers: range
    carried_in: list[Region]
    carried_out: list[Region]
    journal: list[tuple[Any, ...]]
    clean: bool
    values: tuple[tuple[int, ...], tuple[tuple[int, ...], ...]] | None


@dataclass
class Translation:
    """How the iterations after a template `b` follow from it (see the module doc)."""

    template: Iteration
    moves: dict[int, object]  # buffer b touches -> _MOVES (made by the iterations), or None (an outside tensor)
    # each region's offset step per iteration (None: it stays): of b's tile ops, of the regions in their
    # attributes (by the tuple's id), of what b starts from and carries on, of its writes
    op_steps: list[Step]
    attr_steps: dict[int, tuple[Step, ...]]
    carried_steps: tuple[list[Step], list[Step]]
    write_steps: list[Step]
    fresh: set[int]  # ids of b's attribute dicts made per op (copied per stamped op)
    offsets: tuple[tuple[int, ...], ...]  # each view and assemble offset's step per iteration
    m: int = 0  # iterations stamped from it so far


class Stamper:
    """One run of an innermost loop: records its full iterations, finds a witness, stamps."""

    def __init__(self, ex: Expanding, body: Body) -> None:
        self.ex = ex
        self.body = body
        self.last: Iteration | None = None  # the iteration just before, when expanded in full
        self.tries = WITNESS_TRIES
        self.plan: Translation | None = None
        self._mark: tuple[int, int, int, int, int, int, list[Region]] | None = None

    # ---- a full iteration ------------------------------------------------------------------------

    def begin(self, carried: list[Region]) -> None:
        ex = self.ex
        self.plan = None  # a full iteration ends the run of stamped ones
        self._mark = (len(ex.ops), len(ex.buffers), len(ex.notes), len(ex.warnings), ex.clips, ex.stale, carried)
        ex.journal = []

    def end(self, instance: int, carried: list[Region]) -> None:
        ex = self.ex
        assert self._mark is not None and ex.journal is not None
        o0, b0, notes, warnings, clips, stale, carried_in = self._mark
        journal, ex.journal = ex.journal, None
        clean = (len(ex.notes) == notes and len(ex.warnings) == warnings and ex.clips == clips
                 and ex.stale == stale and all(e[1] >= o0 for e in journal if e[0] == "retarget"))
        it = Iteration(instance, range(o0, len(ex.ops)), range(b0, len(ex.buffers)), carried_in, carried,
                       journal, clean, self.body.values(ex.env))
        a, self.last = self.last, it
        if a is not None and self.tries > 0 and it.clean:
            self.tries -= 1
            self.plan = self._witness(a, it)
            if self.plan is not None:
                self.last = None

    def _witness(self, a: Iteration, b: Iteration) -> Translation | None:
        """`b` as `a` translated, or None."""
        ex = self.ex
        if a.values is None or b.values is None or a.values[0] != b.values[0] or a.ops.stop != b.ops.start \
                or len(a.ops) != len(b.ops) or a.buffers.stop != b.buffers.start or len(a.buffers) != len(b.buffers):
            return None
        dop, dbuf = len(b.ops), len(b.buffers)
        for bx, by in zip(ex.buffers[a.buffers.start:a.buffers.stop], ex.buffers[b.buffers.start:b.buffers.stop]):
            if (bx.shape, bx.dtype, bx.kind, bx.name, bx.node) != (by.shape, by.dtype, by.kind, by.name, by.node):
                return None
        moves: dict[int, object] = {}  # buffer -> _MOVES, or None: an outside tensor
        first = a.buffers.start  # buffers from here on are made by a or b

        def same_buffer(x: int, y: int) -> bool:
            if x == y:
                return y < first and moves.setdefault(y, None) is not _MOVES
            return y == x + dbuf and y >= first and moves.setdefault(y, _MOVES) is _MOVES

        def step(r: Region | None, s: Region | None) -> Any:
            """How far `s` is from `r` (None: same offset), or _FAIL."""
            if r is None or s is None:
                return None if r is None and s is None else _FAIL
            if r.layout != s.layout or r.shape != s.shape or not same_buffer(r.buffer, s.buffer):
                return _FAIL
            if r.offset == s.offset:
                return None
            return tuple([q - p for p, q in zip(r.offset, s.offset)])

        fresh: set[int] = set()
        ops = ex.ops
        inside = b.ops
        op_steps: list[Step] = []
        attr_steps: dict[int, tuple[Step, ...]] = {}
        for x, y in zip(ops[a.ops.start:a.ops.stop], ops[b.ops.start:b.ops.stop]):
            if x.op != y.op or x.node != y.node or x.coord != y.coord or x.shape != y.shape or x.dtype is not y.dtype \
                    or x.instance != a.instance or y.instance != b.instance or len(x.inputs) != len(y.inputs):
                return None
            for p, q in zip(x.inputs, y.inputs):
                if q != p + dop or q not in inside:
                    return None
            d = step(x.region, y.region)
            if d is _FAIL:
                return None
            op_steps.append(d)
            xa, ya = x.attrs, y.attrs
            if xa is ya:
                continue
            if list(xa) != list(ya):
                return None
            for key, v in ya.items():
                w = xa[key]
                if key == "inputs" and type(v) is tuple and all(type(r) is Region for r in v):
                    ds = tuple(map(step, w, v)) if type(w) is tuple and len(w) == len(v) else (_FAIL,)
                    if _FAIL in ds or attr_steps.setdefault(id(v), ds) != ds:
                        return None
                elif type(v) is not type(w) or not _equal(v, w):
                    return None
            fresh.add(id(ya))
        carried_steps = (list(map(step, a.carried_in, b.carried_in)), list(map(step, a.carried_out, b.carried_out)))
        if len(a.carried_in) != len(b.carried_in) or _FAIL in carried_steps[0] or _FAIL in carried_steps[1] \
                or len(a.journal) != len(b.journal):
            return None
        write_steps: list[Step] = []
        for e, f in zip(a.journal, b.journal):
            if e[0] != f[0]:
                return None
            kind = e[0]
            if kind == "window":
                if e[1:] != f[1:]:
                    return None
            elif kind == "write":
                d = step(e[2][1], f[2][1])
                if e[2][0] is not f[2][0] or d is _FAIL:
                    return None
                write_steps.append(d)
            elif kind == "share":
                if e[2] != f[2] or not same_buffer(e[1], f[1]):
                    return None
            elif kind == "retarget":
                if f[1] != e[1] + dop:
                    return None
            else:
                return None
        assert a.values is not None and b.values is not None
        offset_steps = tuple(tuple([q - p for p, q in zip(x, y)]) for x, y in zip(a.values[1], b.values[1]))
        return Translation(b, moves, op_steps, attr_steps, carried_steps, write_steps, fresh, offset_steps)

    # ---- a stamped iteration ---------------------------------------------------------------------

    def stamp(self, instance: int, carried: list[Region]) -> list[Region] | None:
        """Append the iteration at the loop index in force (root instance `instance`) as the template
        translated, and return what it carries on; None when it must be expanded in full."""
        global _stamped
        plan = self.plan
        if plan is None:
            return None
        ex = self.ex
        b = plan.template
        m = plan.m + 1
        dop, dbuf = m * len(b.ops), m * len(b.buffers)
        if len(ex.ops) != b.ops.start + dop or len(ex.buffers) != b.buffers.start + dbuf:
            return None
        values = self.body.values(ex.env)
        assert b.values is not None
        if values is None or values[0] != b.values[0]:
            return None
        offsets = values[1]
        for off, was, step in zip(offsets, b.values[1], plan.offsets):
            for at, at_b, s in zip(off, was, step):
                if at != at_b + m * s:
                    return None
        moves = plan.moves

        def moved(r: Region, d: Step) -> Region:
            bid = r.buffer + dbuf if moves[r.buffer] is _MOVES else r.buffer
            if d is None:
                return r if bid == r.buffer else Region(bid, r.layout, r.offset, r.shape)
            return Region(bid, r.layout, tuple([o + m * e for o, e in zip(r.offset, d)]), r.shape)

        if len(carried) != len(b.carried_in) \
                or any(c != moved(r, d) for c, r, d in zip(carried, b.carried_in, plan.carried_steps[0])):
            return None
        if not self._inside(b.journal, offsets):
            return None
        # every check passed: nothing below can fail
        for bx in ex.buffers[b.buffers.start:b.buffers.stop]:
            ex.buffers.append(Buffer(bx.id + dbuf, bx.shape, bx.dtype, bx.kind, bx.name, bx.node))
        fresh = plan.fresh
        copies: dict[int, dict[str, Any]] = {}
        inputs_of: dict[int, tuple[Region, ...]] = {}
        out: list[TileOp] = ex.ops  # (appended to directly: a bound method is a generic call, compiled)
        for o, d in zip(ex.ops[b.ops.start:b.ops.stop], plan.op_steps):  # the hot loop
            attrs = o.attrs
            if id(attrs) in fresh:
                copy = copies.get(id(attrs))
                if copy is None:
                    copy = copies[id(attrs)] = dict(attrs)
                    regions = attrs.get("inputs")
                    ds = plan.attr_steps.get(id(regions))
                    if ds is not None:
                        made = inputs_of.get(id(regions))
                        if made is None:
                            made = inputs_of[id(regions)] = tuple(map(moved, regions, ds))  # type: ignore[arg-type]
                        copy["inputs"] = made
                attrs = copy
            r = o.region
            if r is not None:
                bid = r.buffer
                if moves[bid] is _MOVES:
                    bid += dbuf
                if d is not None or bid != r.buffer:
                    moved_to = r.offset if d is None else tuple([x + m * e for x, e in zip(r.offset, d)])
                    r = Region(bid, r.layout, moved_to, r.shape)
            t = TileOp(o.id + dop, o.op, o.node, instance, o.coord, o.shape, o.dtype,
                       tuple([i + dop for i in o.inputs]) if o.inputs else (), r, attrs)
            out.append(t)
        writes = iter(plan.write_steps)
        for e in b.journal:
            if e[0] == "write":
                node, r = e[2]
                w = moved(r, next(writes))
                ex.writes.setdefault(w.buffer, []).append((node, w))
            elif e[0] == "share":
                ex.sharers.setdefault(e[1] + dbuf if moves.get(e[1]) is _MOVES else e[1], []).extend(e[2])
        plan.m = m
        _stamped += 1
        return [moved(r, d) for r, d in zip(b.carried_out, plan.carried_steps[1])]

    def _inside(self, journal: Sequence[tuple[Any, ...]], offsets: tuple[tuple[int, ...], ...]) -> bool:
        """Whether each view and assemble window of the template, at these offsets, lies inside its
        input, and no view window is clipped."""
        at = dict(zip((nid for nid, _ in self.body.offsets), offsets))
        for e in journal:
            if e[0] != "window":
                continue
            _, nid, bounds, shape, may_clip = e
            off = at[nid]
            if may_clip:
                try:
                    if view_extent(self.body.nodes[nid], off, shape, bounds) != shape:
                        return False
                except Exception:  # noqa: BLE001 - the full expansion raises it at its line
                    return False
            if any(o < 0 or o + s > n for o, s, n in zip(off, shape, bounds)):
                return False
        return True


def _equal(v: Any, w: Any) -> bool:
    try:
        return bool(v == w)
    except Exception:  # noqa: BLE001 - an attribute with no truth value (an array): not stamped
        return False

