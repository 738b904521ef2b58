"""The trace state while a kernel body runs: it turns op calls into graph nodes.

A `Builder` owns the node ids, the open scopes (the kernel, then one per open
`pypto.loop`), the tile shapes and semantic label in force, and the source location of
every node. A tensor handle holds a `Binding` whose current value is a node id; writing into a
tensor rebinds it. When a loop closes, every handle from outside
that the body rebound becomes a carried value of the loop (see `pypto.ir.graph`).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pypto.ir import source
from pypto.ir import symbolic as S
from pypto.ir.errors import PyptoError, Related, ShapeError, op_message
from pypto.ir.graph import Graph, Node, TensorType, TileConfig
from pypto.ir.ops import GATHERMASK_PATTERNS, OPS
from pypto.ir.source import Loc
from pypto.tracing import shape_fixes, tiling

_state = threading.local()


def current() -> Builder | None:
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def require(what: str) -> Builder:
    b = current()
    if b is None:
        raise PyptoError(f"{what} can only be used inside a pypto kernel (a function decorated with "
                         f"@pypto.frontend.jit) while it is being compiled")
    return b


@dataclass
class Scope:
    kind: str  # "kernel" | "loop"
    parent: Scope | None
    nodes: list[Node] = field(default_factory=list)
    written: dict[int, tuple[Binding, int]] = field(default_factory=dict)  # id(binding) -> (binding, value before)
    closed: bool = False
    name: str = ""
    loc: Loc = source.UNKNOWN
    attrs: dict[str, Any] = field(default_factory=dict)
    # once a loop closes: its loop node's id, and its body's outputs (`nodes` is then the body's)
    loop_id: int | None = None
    outputs: list[tuple[str, int]] = field(default_factory=list)

    def encloses(self, other: Scope) -> bool:
        s: Scope | None = other
        while s is not None:
            if s is self:
                return True
            s = s.parent
        return False


@dataclass(eq=False)
class Binding:
    """What a traced tensor (`pypto.tracing.tensor.Tensor`) holds: the trace it belongs to, its
    current value (a node id; writing into the tensor rebinds it), the scope it was made in and
    its name. The builder reads and rebinds bindings, never the tensors around them."""

    builder: Builder
    value: int
    scope: Scope
    name: str | None = None


@dataclass(frozen=True)
class Readable:
    """A kernel input seen through windows: element `idx` of this value is element
    `base[k] + idx[axes[k]]` (axes[k] None: `base[k]`) along each dim k of input `tensor`."""

    tensor: str
    base: tuple[S.Dim, ...]
    axes: tuple[int | None, ...]

    def element(self, idx: tuple[S.Dim, ...]) -> tuple[S.Dim, ...]:
        return tuple(S.add(b, idx[a]) if a is not None else b for b, a in zip(self.base, self.axes))


def _unit_reshape(a: tuple[S.Dim, ...], b: tuple[S.Dim, ...]) -> dict[int, int | None] | None:
    """Where each dim of shape `a` goes in shape `b` when the reshape only adds or drops unit dims
    (a dropped unit dim maps to None); None for any other reshape."""
    def unit(d: S.Dim) -> bool:
        return isinstance(d, int) and d == 1

    big_a = [i for i, d in enumerate(a) if not unit(d)]
    big_b = [i for i, d in enumerate(b) if not unit(d)]
    if len(big_a) != len(big_b) or any(S.equal(a[i], b[j]) is not True for i, j in zip(big_a, big_b)):
        return None
    moved: dict[int, int | None] = {i: None for i in range(len(a))}
    moved.update(zip(big_a, big_b))
    return moved


_COPIES = frozenset({"assemble", "concat", "reshape"})  # ops whose lowering may copy tile by tile
_MADE = frozenset({"full", "arange"})  # values made in the UB, tile by tile

# tile-config index -> dims to use instead of what the kernel's call says (the tuning advisor)
_TILE_OVERRIDES: contextvars.ContextVar[Mapping[int, tuple[Any, ...]] | None] = contextvars.ContextVar(
    "pypto_tile_overrides", default=None)


@contextlib.contextmanager
def tile_overrides(overrides: Mapping[int, tuple[Any, ...]]) -> Iterator[None]:
    """Trace kernels as if their k-th `set_*_tile_shapes` call (tile config k, in trace order)
    had said `overrides[k]` — how the tuning advisor tries a tile shape without editing the
    file. The dims are checked by the same rules as the call's."""
    token = _TILE_OVERRIDES.set(dict(overrides))
    try:
        yield
    finally:
        _TILE_OVERRIDES.reset(token)


class Builder:
    def __init__(self, name: str, kernel_code: types.CodeType | None, opts: dict[str, Any]) -> None:
        self.name = name
        self.kernel_code = kernel_code
        self.next_id = 0
        self.scope = Scope("kernel", None, name=name)
        self.value_scope: dict[int, Scope] = {}
        self.types: dict[int, TensorType] = {}
        self.tile_configs: list[TileConfig] = []
        self.vec: TileConfig | None = None
        self.cube: TileConfig | None = None
        self.label: str | None = None
        # the `pl.at` scope in force (PyPTO 3: one number per `with` entry, `new_incore`), None outside
        self.incore: int | None = None
        self.incore_count = 0
        self.symbols: set[str] = set()
        self.broken_loops: list[Loc] = []
        self._assumed: set[tuple[int, str, str]] = set()
        # values that are a kernel input or a window on one, which `t[i, j]` may read a scalar from
        self.readable: dict[int, Readable] = {}
        self.lifted: dict[int, int] = {}  # a value computed in a closed loop -> its value after the loop
        self.valid: dict[int, tuple[S.Dim, ...]] = {}  # values whose valid part is less than their shape
        # a view's value -> the value it is a window on (through views of views) and its offsets there
        self.windows: dict[int, tuple[int, tuple[S.Dim, ...]]] = {}
        self.disagree: dict[int, str] = {}  # a run-time if's value whose sides disagree in shape: why
        self.push_tile_options(opts)

    # ---- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Builder:
        if not hasattr(_state, "stack"):
            _state.stack = []
        _state.stack.append(self)
        source.push_kernel(self.kernel_code)
        return self

    def __exit__(self, *exc: object) -> None:
        source.pop_kernel()
        _state.stack.pop()

    def loc(self) -> Loc:
        return source.capture(self.kernel_code, skip=2)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    # ---- tile shapes and labels ----------------------------------------------------------------

    def set_vec(self, dims: tuple[int, ...], loc: Loc) -> None:
        override = (_TILE_OVERRIDES.get() or {}).get(len(self.tile_configs))
        if override is not None:
            dims = tiling.check_vec_call(list(override))
        self.vec = TileConfig(len(self.tile_configs), "vec", dims, loc)
        self.tile_configs.append(self.vec)

    def set_cube(self, dims: tuple[Any, ...], loc: Loc) -> None:
        override = (_TILE_OVERRIDES.get() or {}).get(len(self.tile_configs))
        if override is not None:
            dims = (*tiling.check_cube_call(*override[:3]), bool(override[3]) if len(override) > 3 else False)
        self.cube = TileConfig(len(self.tile_configs), "cube", dims, loc)
        self.tile_configs.append(self.cube)

    def push_tile_options(self, opts: dict[str, Any]) -> Callable[[], None]:
        """Apply `vec_tile_shapes` / `cube_tile_shapes` from options; returns the undo."""
        saved = (self.vec, self.cube)
        loc = self.loc() if current() is self else source.UNKNOWN
        try:
            if opts.get("vec_tile_shapes") is not None:
                self.set_vec(tiling.check_vec_call(list(opts["vec_tile_shapes"])), loc)
            if opts.get("cube_tile_shapes") is not None:
                m, k, n, *rest = list(opts["cube_tile_shapes"]) + [False]
                self.set_cube((*tiling.check_cube_call(m, k, n), bool(rest[0])), loc)
        except ShapeError as e:
            raise PyptoError(str(e), loc or None) from None

        def restore() -> None:
            self.vec, self.cube = saved

        return restore

    # ---- nodes ---------------------------------------------------------------------------------

    def same(self, a: S.Dim, b: S.Dim, what: str) -> S.Dim:
        """InferCtx: a == b? Decided now, or checked at run time by an `assume` node."""
        eq = S.equal(a, b)
        if eq:
            return a
        if eq is False:
            raise ShapeError(f"{what}: {S.to_str(a)} != {S.to_str(b)}")
        key = (id(self.scope), S.to_str(a), S.to_str(b))
        if key not in self._assumed:
            self._assumed.add(key)
            self._append(Node(self.new_id(), "assume", (), None, {"lhs": a, "rhs": b, "what": what},
                              self.loc()))
        return b if isinstance(b, int) else a

    def _append(self, node: Node) -> Node:
        self.scope.nodes.append(node)
        self.value_scope[node.id] = self.scope
        if node.type is not None:
            self.types[node.id] = node.type
        return node

    def check_live(self, value: int, loc: Loc) -> int:
        """The id under which `value` can be used here. A tensor computed inside a closed
        `pypto.loop` is its value after the loop's last iteration, as in PyPTO: the loop is made to
        carry it out (`_carry_out`). One computed inside a run-time branch reaches here only when the name had
        no value before the `if` and the other side gives it none (else `merge_branches` made it a
        phi): an error, it has no value when that side is not taken."""
        if value in self.lifted:
            value = self.lifted[value]
        sc = self.value_scope[value]
        if sc.closed and value in self.disagree:
            raise PyptoError(self.disagree[value], loc)
        if sc.closed and self.broken_loops:
            self.finish([])  # the `break` is the real mistake: report it, not its consequence
        if not sc.closed:
            return value
        line = sc.loc.span.line if sc.loc.span else "?"
        if "branch" in sc.attrs:
            raise PyptoError(f"a tensor computed inside the run-time branch `{sc.name}` (line {line}) is used "
                             f"after it, but has no value when that side is not taken: give it one before the "
                             f"`if` or in the other side too (or write it into a tensor made before the `if`)", loc)
        index = sc.attrs["index"]
        if index in set().union(*(S.symbols_of(d) for d in self.types[value].shape)):
            raise PyptoError(f"a tensor computed inside pypto.loop '{sc.name}' (line {line}) is used after the "
                             f"loop, but its shape {[S.to_str(d) for d in self.types[value].shape]} depends on "
                             f"the loop index; write it into an outer tensor with assemble or slice assignment", loc)
        out = self.check_live(self._carry_out(sc, value), loc)
        self.lifted[value] = out
        return out

    def merge_branches(self, before: int | None, then: int | None, after: int, name: str, loc: Loc) -> int:
        """The value a name holds after a run-time `if` (`api.branch_merge`): `after` (its value once
        both sides were traced) if the `else` side computed it, else `then` if the `then` side did,
        else `before` — each side's value carried out of its 0-or-1-iteration loop with the value
        before that side as its init, so the side not taken passes the earlier value on."""
        def side_of(v: int | None) -> Scope | None:  # one of this `if`'s sides (children of this scope)
            if v is None:
                return None
            sc = self.value_scope[self.lifted.get(v, v)]
            return sc if sc.closed and "branch" in sc.attrs and sc.parent is self.scope else None

        def out_of(v: int, sc: Scope, init: int | None) -> int:  # v after side sc; init when not taken
            v = self.lifted.get(v, v)
            if init is not None and self.types[init] != self.types[v]:
                # no single value after the `if`: an error where (if ever) the name is used after it
                line = loc.span.line if loc.span else "?"
                self.disagree[v] = (f"`{name}` is used after the run-time `if {sc.attrs.get('condition', '')}` "
                                    f"(line {line}), whose {sc.attrs['branch']} side makes it "
                                    f"{_shape_text(self.types[v])} and which otherwise leaves it "
                                    f"{_shape_text(self.types[init])}: give it one shape and dtype on both paths")
                return v
            return self.check_live(self._carry_out(sc, v, init), loc)

        s_then, s_after = side_of(then), side_of(after)
        if s_then is None and s_after is None:
            return after  # neither side computed it: as it is (checked where it is used)
        if s_then is s_after:
            s_then = None  # no `else` side assigned it: `after` is the `then` side's value
        if before is None and (s_then is None or s_after is None):
            return after  # one side made it and it had no value before: using it after the `if` is an error
        mid = None
        if before is not None:
            try:
                mid = self.check_live(before, loc)
            except PyptoError:  # it had no usable value before the `if` (made in another if's side)
                mid = None
        if s_then is not None and then is not None:
            mid = out_of(then, s_then, mid)
            if mid in self.disagree:  # the `then` side already leaves no single value
                if s_after is None:
                    return mid
                self.disagree[self.lifted.get(after, after)] = self.disagree[mid]
                return after
        if s_after is None:
            return after if mid is None else mid
        return out_of(after, s_after, mid)

    def _carry_out(self, sc: Scope, value: int, init: int | None = None) -> int:
        """Make closed loop `sc` carry `value` out: `init` (default: a zero-filled tensor made
        before the loop) as its value when the loop runs no iteration, a carry of it into the body,
        `value` as the body's new output, and a `loop_out` after the loop. Returns the loop_out's
        id, in the loop's parent."""
        parent = sc.parent
        assert parent is not None and sc.loop_id is not None
        ty = self.types[value]
        name = next((n.name for n in sc.nodes if n.id == value), None)
        at = next(k for k, n in enumerate(parent.nodes) if n.id == sc.loop_id)
        loop = parent.nodes[at]
        k = len(loop.inputs)
        zeros = Node(self.new_id(), "tensor", (), ty, {"shape": ty.shape, "value": 0, "dtype": ty.dtype}, sc.loc,
                     name) if init is None else None
        carry = Node(self.new_id(), "carry", (), ty, {"index": k}, sc.loc, name)
        out = Node(self.new_id(), "loop_out", (loop.id,), ty, {"index": k}, sc.loc, name)
        for n, where in ((zeros, parent), (carry, sc), (out, parent)):
            if n is not None:
                self.types[n.id] = ty
                self.value_scope[n.id] = where
        sc.nodes.insert(sum(1 for n in sc.nodes if n.op == "carry"), carry)
        sc.outputs.append((name or f"carry{k}", value))
        first = init if zeros is None else zeros.id
        looped = dataclasses.replace(loop, inputs=loop.inputs + (first,))
        parent.nodes[at:at + 1] = [looped] if zeros is None else [zeros, looped]
        after = at + (1 if zeros is None else 2)  # just past the loop, and past its other loop_outs
        parent.nodes.insert(after + sum(1 for n in parent.nodes[after:] if n.op == "loop_out"
                                        and n.inputs == (loop.id,)), out)
        self._rebuild(sc)
        return out.id

    def _rebuild(self, sc: Scope) -> None:
        """After a closed loop's body changed: its loop node, in its parent, gets the new body; a
        closed parent is rebuilt in turn, out to the first open scope."""
        parent = sc.parent
        assert parent is not None
        at = next(k for k, n in enumerate(parent.nodes) if n.id == sc.loop_id)
        parent.nodes[at] = dataclasses.replace(parent.nodes[at],
                                               body=Graph(sc.name, tuple(sc.nodes), tuple(sc.outputs)))
        if parent.closed:
            self._rebuild(parent)

    def emit(self, op: str, inputs: list[int], attrs: dict[str, Any] | None = None, *,
             ty: TensorType | None = None, name: str | None = None, loc: Loc | None = None,
             body: Graph | None = None) -> Node:
        loc = loc or self.loc()
        attrs = attrs or {}
        inputs = [self.check_live(v, loc) for v in inputs]
        opdef = OPS[op]
        in_types = [self.types[v] for v in inputs] if opdef.kind != "control" else []
        tile = None
        if opdef.kind != "control":
            config: TileConfig | None = None
            try:
                ty = opdef.infer(self, in_types, attrs)
                if opdef.vector and self.vec is not None:
                    config, dims = self.vec, self.vec.dims
                    if attrs.get("cube_operand"):  # a cube op's own operand move: one row per leading index
                        dims = (1,) * max(0, ty.rank - len(dims)) + tuple(dims)
                    tiling.check_vec_for_op(dims, ty, in_types, op, _line(self.vec.loc), call=self.vec.loc.span,
                                            attrs=attrs)
                if op == "matmul" and self.cube is not None:
                    config = self.cube
                    m, k, n, _split = self.cube.dims
                    tiling.check_cube_for_matmul(m, k, n, in_types[0].dtype, in_types[1].dtype, _line(self.cube.loc),
                                                 call=self.cube.loc.span)
            except tiling.TileRuleError as e:
                if config is None or not config.loc:
                    raise PyptoError(op_message(op, e), loc) from None
                # the call is what to change: the error is there, the op that breaks the rule related
                at = loc.span
                related = (Related(at, f"{op} here uses these tiles"),) if at is not None else ()
                raise PyptoError(op_message(op, e), config.loc, rule="tile.shape", related=related,
                                 fixes=tiling.call_fixes(config.loc.span, e)) from None
            except ShapeError as e:
                fixes = (shape_fixes.broadcast_fixes(loc, [self._producer(v) for v in inputs], self.types)
                         if opdef.kind == "binary" and len(inputs) == 2 else ())
                raise PyptoError(op_message(op, e), loc, fixes=fixes) from None
            # matmul tiles by the cube config; vector math, the copies that assemble, concat and
            # reshape may make, a view as another dtype (its rows reread), and full / arange (made
            # in the UB, TEXPANDS / TCI) by the vec config in force
            tile = (self.cube.id if op == "matmul" and self.cube else
                    self.vec.id if self.vec and (opdef.vector or op in _COPIES or op in _MADE or
                                                 (op == "view" and attrs.get("dtype") is not None)) else None)
        node = Node(self.new_id(), op, tuple(inputs), ty, attrs, loc, name, self.label, tile, body, scope=self.incore)
        self._track_readable(node)
        self._track_window(node)
        self._track_valid(node, opdef.vector)
        return self._append(node)

    def new_incore(self) -> int:
        """A new `pl.at` scope number (each `with` entry is one: its ops are one task per instance)."""
        self.incore_count += 1
        return self.incore_count - 1

    def producer(self, value: int) -> Node | None:
        """The node that made `value` (None for a value no scope holds)."""
        return self._producer(value)

    def _producer(self, value: int) -> Node | None:
        """The node that made `value` (None for a value no scope holds)."""
        sc = self.value_scope.get(value)
        return next((n for n in sc.nodes if n.id == value), None) if sc is not None else None

    def _track_valid(self, node: Node, vector: bool) -> None:
        """`Tensor.valid_shape`: a view, full or reshape given `valid_shape` has it; vector math on
        such a value keeps it (PyPTO computes the valid part)."""
        ty = node.type
        if ty is None:
            return
        valid = node.attrs.get("valid_shape")
        if valid is not None and len(valid) == ty.rank:
            self.valid[node.id] = tuple(valid)
        elif node.op == "gathermask":  # its last axis shrinks by the pattern's stride, the valid part's too
            got = self.valid.get(node.inputs[0])
            if got is not None:
                stride = GATHERMASK_PATTERNS[node.attrs["pattern_mode"]][1]
                self.valid[node.id] = got[:-1] + (S.floordiv(got[-1], stride),)
        elif vector or node.op in ("cast", "clone"):
            for v in node.inputs:
                got = self.valid.get(v)
                if got is not None and self.types[v].shape == ty.shape:
                    self.valid[node.id] = got
                    return

    def _track_window(self, node: Node) -> None:
        """A view (same dtype and rank) is a window on the memory of what it views: record where."""
        if node.op != "view" or node.type is None:
            return
        src = node.inputs[0]
        st = self.types[src]
        if st.dtype != node.type.dtype or st.rank != node.type.rank:
            return
        offs: tuple[S.Dim, ...] = tuple(node.attrs["offsets"])
        outer = self.windows.get(src)
        if outer is not None:
            src, offs = outer[0], tuple(S.add(a, b) for a, b in zip(outer[1], offs))
        self.windows[node.id] = (src, offs)

    def _track_readable(self, node: Node) -> None:
        """Follow kernel inputs through views and unit-dim reshapes, so a scalar read of a window
        (`row = table[b]; row[j]`) names the input's element."""
        if node.op == "param" and node.type is not None:
            rank = node.type.rank
            self.readable[node.id] = Readable(node.attrs["name"], (0,) * rank, tuple(range(rank)))
            return
        src = self.readable.get(node.inputs[0]) if node.inputs else None
        if src is None or node.type is None:
            return
        if node.op == "view":
            offs = node.attrs["offsets"]
            base = tuple(S.add(b, offs[a]) if a is not None else b for b, a in zip(src.base, src.axes))
            self.readable[node.id] = Readable(src.tensor, base, src.axes)
        elif node.op == "reshape":
            moved = _unit_reshape(self.types[node.inputs[0]].shape, node.type.shape)
            if moved is not None:
                axes = tuple(moved[a] if a is not None else None for a in src.axes)
                self.readable[node.id] = Readable(src.tensor, src.base, axes)

    # ---- writes and loops ------------------------------------------------------------------------

    def bind(self, value: int, name: str | None = None) -> Binding:
        """A new binding of `value`, made in the current scope."""
        return Binding(self, value, self.scope, name)

    def rebind(self, binding: Binding, value: int) -> None:
        """`binding` now holds `value`; loops between here and the binding's scope carry it."""
        s: Scope | None = self.scope
        while s is not None and s is not binding.scope:
            if s.kind == "loop" and id(binding) not in s.written:
                s.written[id(binding)] = (binding, binding.value)
            s = s.parent
        binding.value = value

    def fresh_symbol(self, want: str) -> str:
        name, k = want, 1
        while name in self.symbols:
            name, k = f"{want}_{k}", k + 1
        self.symbols.add(name)
        return name

    def begin_loop(self, attrs: dict[str, Any], loc: Loc) -> Scope:
        self.scope = Scope("loop", self.scope, name=attrs["name"], loc=loc, attrs=attrs)
        return self.scope

    def end_loop(self, scope: Scope) -> None:
        if self.scope is not scope:
            raise PyptoError("pypto.loop scopes closed out of order", scope.loc)
        parent = scope.parent
        assert parent is not None
        carried = list(scope.written.values())
        mapping: dict[int, int] = {}
        carry_nodes = []
        for k, (h, pre) in enumerate(carried):
            cid = self.new_id()
            mapping[pre] = cid
            carry_nodes.append(Node(cid, "carry", (), self.types[pre], {"index": k}, scope.loc, h.name))
            self.types[cid] = self.types[pre]
        nodes = tuple(carry_nodes) + tuple(substitute(n, mapping) for n in scope.nodes)
        outputs = tuple((h.name or f"carry{k}", mapping.get(h.value, h.value)) for k, (h, _) in enumerate(carried))
        body = Graph(scope.name, nodes, outputs)
        scope.closed = True
        scope.nodes, scope.outputs = list(nodes), list(outputs)
        for n in carry_nodes:
            self.value_scope[n.id] = scope
        self.scope = parent
        loop = self.emit("loop", [pre for _, pre in carried], scope.attrs, ty=None, loc=scope.loc, body=body)
        scope.loop_id = loop.id
        for k, (h, pre) in enumerate(carried):
            out = self.emit("loop_out", [loop.id], {"index": k}, ty=self.types[pre], name=h.name, loc=scope.loc)
            self.rebind(h, out.id)

    def abandon_loop(self, scope: Scope) -> None:
        """The loop generator was closed early (`break`, or an exception in the body)."""
        self.broken_loops.append(self.loc() or scope.loc)  # the `break` (or `return`) line
        s: Scope | None = self.scope
        while s is not None and s is not scope.parent:
            s.closed = True
            s = s.parent
        if scope.parent is not None:
            self.scope = scope.parent

    def finish(self, outputs: list[tuple[str, int]]) -> Graph:
        if self.broken_loops:
            raise PyptoError("`break` (or `return`) out of a pypto.loop is not supported: the loop runs on the device "
                             "for every index; use the loop bounds instead", self.broken_loops[0])
        return Graph(self.name, tuple(self.scope.nodes), tuple(outputs), tuple(self.tile_configs))


def _line(loc: Loc) -> int:
    return loc.span.line if loc.span else 0


def substitute(node: Node, mapping: dict[int, int]) -> Node:
    """`node` with input ids (and ids inside its body) renamed by `mapping`."""
    if not mapping:
        return node
    inputs = tuple(mapping.get(v, v) for v in node.inputs)
    body = node.body
    if body is not None:
        body = Graph(body.name, tuple(substitute(n, mapping) for n in body.nodes),
                     tuple((k, mapping.get(v, v)) for k, v in body.outputs), body.tile_configs)
    if inputs == node.inputs and body is node.body:
        return node
    return dataclasses.replace(node, inputs=inputs, body=body)


def _shape_text(t: TensorType) -> str:
    return f"{t.dtype.name}[{', '.join(S.to_str(d) for d in t.shape)}]"
