"""The reference interpreter: runs a tensor graph with numpy and returns its outputs.

It is the semantics every faster path (tiled execution, boards) is tested against, so it
stays simple: nodes run in order, loops run their body once per index value, and the only
cleverness is liveness — an `assemble` whose destination buffer is dead afterwards
updates it in place instead of copying (otherwise a loop writing rows of a big output
would copy the whole output every iteration).

An optional `observer(node, value)` sees every node's value as it is made (loop bodies once
per iteration): the precision analysis compares runs op by op with it. A value may later be
updated in place (an `assemble` into it): an observer that keeps it copies it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pypto.ir import symbolic as S
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph, Node
from pypto.ir.ops import OPS
from pypto.reference.kernels import KERNELS, Ctx, assemble, crop_to, reshape, valid_common_shape

# ops whose operands meet element by element (a tail view's operand is cropped to the common part)
_ELEMENTWISE = frozenset(name for name, o in OPS.items() if o.kind in ("binary", "where"))


class _Plan:
    """Per graph: for each value, the index of the node that uses it last (len = outputs). Only
    the graph's own values: one a loop body reads from outside is read again by the next
    iteration, so the body never updates it in place."""

    def __init__(self, graph: Graph) -> None:
        self.last_use: dict[int, int] = {}
        for idx, node in enumerate(graph.nodes):
            for v in node.inputs:
                self.last_use[v] = idx
            if node.body is not None:
                for v in _captures(node.body):
                    self.last_use[v] = idx
        for _, v in graph.outputs:
            self.last_use[v] = len(graph.nodes)
        own = {n.id for n in graph.nodes}
        self.last_use = {v: i for v, i in self.last_use.items() if v in own}


def _captures(body: Graph) -> set[int]:
    """Values a body reads from enclosing graphs."""
    defined = {n.id for n in body.walk()}
    used: set[int] = set()
    for n in body.walk():
        used.update(n.inputs)
    used.update(v for _, v in body.outputs)
    return used - defined


class Interpreter:
    def __init__(self, graph: Graph, *, fp64: bool = False,
                 observer: Callable[[Node, Any], None] | None = None) -> None:
        self.graph = graph
        self.fp64 = fp64
        self.observer = observer
        self._plans: dict[int, _Plan] = {}
        self._types = {n.id: n.type for n in graph.walk()}

    def _plan(self, g: Graph) -> _Plan:
        p = self._plans.get(id(g))
        if p is None:
            p = self._plans[id(g)] = _Plan(g)
        return p

    def run(self, inputs: Mapping[str, np.ndarray], syms: Mapping[str, int]) -> dict[str, np.ndarray]:
        """Run the kernel: `inputs` by parameter name, `syms` the dynamic-dim values."""
        ctx = Ctx(dict(syms), self.fp64)
        env: dict[int, np.ndarray] = {}
        # a parameter that may be updated in place gets its own copy: the user's array is
        # only written once the whole kernel has succeeded
        mutable = {n.inputs[0] for n in self.graph.nodes if n.op == "assemble"}
        mutable |= {v for n in self.graph.nodes if n.op == "loop" for v in n.inputs}
        for p in self.graph.params():
            arr = inputs[p.attrs["name"]]
            env[p.id] = arr.copy() if p.id in mutable else arr
        with np.errstate(all="ignore"):
            self._exec(self.graph, env, ctx)
        return {name: env[v] for name, v in self.graph.outputs}

    def _exec(self, g: Graph, env: dict[int, Any], ctx: Ctx) -> None:
        last_use = self._plan(g).last_use
        for idx, node in enumerate(g.nodes):
            op = node.op
            if op in ("param", "carry"):
                continue
            if op == "loop":
                self._loop(node, idx, last_use, env, ctx)
            elif op == "loop_out":
                env[node.id] = env[node.inputs[0]][node.attrs["index"]]
            elif op == "assume":
                self._assume(node, ctx)
            else:
                xs = [env[i] for i in node.inputs]
                try:
                    if op == "assemble":
                        dst = node.inputs[0]
                        env[node.id] = assemble(node, xs, ctx, inplace=last_use.get(dst) == idx and
                                                node.inputs.count(dst) == 1)
                    elif op == "reshape":
                        t = self._types[node.inputs[0]]
                        env[node.id] = reshape(node, xs, ctx, ctx.dims(t.shape) if t is not None else None)
                    else:
                        if op in _ELEMENTWISE and len(xs) > 1:
                            shape = valid_common_shape([np.shape(x) for x in xs])
                            xs = [crop_to(np.asarray(x), shape) for x in xs]
                        env[node.id] = KERNELS[op](node, xs, ctx)
                except PyptoError:
                    raise
                except (ValueError, IndexError, KeyError) as e:
                    raise PyptoError(f"{op} failed at run time: {e}", node.loc) from None
            if self.observer is not None and op not in ("loop", "assume"):
                self.observer(node, env[node.id])

    def _loop(self, node: Node, idx: int, last_use: dict[int, int], env: dict[int, Any], ctx: Ctx) -> None:
        body = node.body
        assert body is not None
        a = node.attrs
        start, stop, step = ctx.dim(a["start"]), ctx.dim(a["stop"]), ctx.dim(a["step"])
        if step == 0:
            raise PyptoError("pypto.loop step is 0", node.loc)
        carried = [env[v] if last_use.get(v) == idx and node.inputs.count(v) == 1 else env[v].copy()
                   for v in node.inputs]
        carry_ids = [n.id for n in body.nodes if n.op == "carry"]
        index = a["index"]
        for i in range(start, stop, step):
            ctx.syms[index] = i
            local = _Scope(env)
            for cid, val in zip(carry_ids, carried):
                local[cid] = val
            self._exec(body, local, ctx)  # type: ignore[arg-type]
            carried = [local[v] for _, v in body.outputs]
        ctx.syms.pop(index, None)
        env[node.id] = carried

    def _assume(self, node: Node, ctx: Ctx) -> None:
        lhs, rhs = node.attrs["lhs"], node.attrs["rhs"]
        a, b = ctx.dim(lhs), ctx.dim(rhs)
        if a != b:
            raise PyptoError(f"{node.attrs.get('what', 'shape check')}: {S.to_str(lhs)} = {a} but "
                             f"{S.to_str(rhs)} = {b} in this call", node.loc)


class _Scope(dict):  # type: ignore[type-arg]
    """A loop body's values, falling back to the enclosing graph's for captured reads."""

    def __init__(self, parent: Mapping[int, Any]) -> None:
        super().__init__()
        self.parent = parent

    def __missing__(self, key: int) -> Any:
        return self.parent[key]
