"""Rewriting an immutable tensor graph: the one traversal every tensor-stage pass uses.

`rewrite(graph, visit)` walks the nodes in program order (loop bodies included, with
captured values remapped), giving each node — inputs already renamed — to `visit`,
which either keeps it (returns None) or replaces its value by another id (after
emitting new nodes through the `Emitter`). Nodes that nothing touches are shared with
the input graph, and a graph that nothing changed is returned as the same object, which
makes "did this pass change anything" cheap and snapshots free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pypto.ir import symbolic as S
from pypto.ir.errors import ShapeError
from pypto.ir.graph import Graph, Node, TensorType
from pypto.ir.ops import OPS


class _Infer:
    """InferCtx for passes: dims the frontend already checked (or guarded) are taken as equal."""

    def same(self, a: S.Dim, b: S.Dim, what: str) -> S.Dim:
        if S.equal(a, b) is False:
            raise ShapeError(f"{what}: {S.to_str(a)} != {S.to_str(b)}")
        return b if isinstance(b, int) else a


INFER = _Infer()


class Emitter:
    """Makes new nodes for a pass, with fresh ids and provenance from the node they replace."""

    def __init__(self, next_id: int, pass_name: str) -> None:
        self.next_id = next_id
        self.pass_name = pass_name
        self.out: list[Node] = []
        self.types: dict[int, TensorType] = {}
        self.scopes: list[dict[Any, int]] = []  # per open block, innermost last: a pass's memo (CSE)

    def lookup(self, key: Any) -> int | None:
        """A value memoized under `key` in this block or an enclosing one."""
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def __call__(self, op: str, inputs: list[int], attrs: dict[str, Any], like: Node) -> int:
        """Emit `op` (type inferred) located and labelled like `like`, made from `like`."""
        ty = OPS[op].infer(INFER, [self.types[i] for i in inputs], attrs)
        node = Node(self.next_id, op, tuple(inputs), ty, attrs, like.loc, None, like.label, like.tile,
                    origin=(like.id,) + tuple(o for o in like.origin if o != like.id), made_by=self.pass_name,
                    scope=like.scope)
        self.next_id += 1
        self.out.append(node)
        self.types[node.id] = ty
        return node.id

    def type_of(self, value: int) -> TensorType:
        return self.types[value]


Visit = Callable[[Node, Emitter], "int | None"]


def rewrite(graph: Graph, visit: Visit, pass_name: str, next_id: int = 0) -> tuple[Graph, int]:
    """The rewritten graph, and the next free node id (never below `next_id`)."""
    mapping: dict[int, int] = {}
    em = Emitter(max(graph.max_id() + 1, next_id), pass_name)
    for n in graph.walk():
        if n.type is not None:
            em.types[n.id] = n.type

    def block(g: Graph) -> Graph:
        saved, em.out = em.out, []
        em.scopes.append({})
        changed = False
        for n in g.nodes:
            inputs = tuple(mapping.get(v, v) for v in n.inputs)
            body = block(n.body) if n.body is not None else None
            node = n if inputs == n.inputs and body is n.body else dataclasses.replace(n, inputs=inputs, body=body)
            changed |= node is not n
            start = len(em.out)
            replaced = visit(node, em)
            if replaced is None:
                em.out.insert(start, node)  # new nodes emitted for later use follow it
            else:
                mapping[n.id] = replaced
                changed = True
            if len(em.out) != start + (1 if replaced is None else 0):
                changed = True
        outputs = tuple((k, mapping.get(v, v)) for k, v in g.outputs)
        changed |= outputs != g.outputs
        nodes, em.out = em.out, saved
        em.scopes.pop()
        if not changed:
            return g
        return Graph(g.name, tuple(nodes), outputs, g.tile_configs)

    return block(graph), em.next_id
