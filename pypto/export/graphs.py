"""A tensor graph as a networkx graph, written as GraphML or DOT.

Nodes are keyed by their id (as a string, which is what GraphML and DOT read back);
loop bodies are flattened into the same graph with a `function` attribute naming the
root function (the kernel, or the loop) each node belongs to. There is one edge per
input operand (a MultiDiGraph: `x * x` has two), carrying the operand's tensor type.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import networkx as nx

from pypto.ir.graph import Graph, Node
from pypto.ir.text import fmt_type


def scoped_nodes(graph: Graph) -> Iterator[tuple[Node, tuple[Node, ...]]]:
    """Every node in program order with the loop nodes enclosing it, outermost first."""

    def walk(g: Graph, loops: tuple[Node, ...]) -> Iterator[tuple[Node, tuple[Node, ...]]]:
        for n in g.nodes:
            yield n, loops
            if n.body is not None:
                yield from walk(n.body, (*loops, n))

    return walk(graph, ())


def function_name(graph: Graph, loops: tuple[Node, ...]) -> str:
    """The root function a node belongs to: the kernel, or its innermost loop's body."""
    if not loops:
        return graph.name
    inner = loops[-1]
    return str(inner.attrs.get("name") or (inner.body.name if inner.body else f"loop{inner.id}"))


def to_networkx(graph: Graph) -> nx.MultiDiGraph:
    """Node attributes: op, type, file, line (0: unknown), label (display text), semantic_label,
    tensor_name, function, made_by; edge attributes: type (the operand's tensor type), operand (its index)."""
    g = nx.MultiDiGraph(name=graph.name)
    types: dict[int, str] = {}
    for n, loops in scoped_nodes(graph):
        span = n.loc.span
        types[n.id] = fmt_type(n.type)
        g.add_node(str(n.id), op=n.op, type=types[n.id], file=span.file if span else "",
                   line=span.line if span else 0, label=f"%{n.id} {n.op}", semantic_label=n.label or "",
                   tensor_name=n.name or "", function=function_name(graph, loops), made_by=n.made_by or "")
    for n in graph.walk():
        for k, src in enumerate(n.inputs):
            g.add_edge(str(src), str(n.id), key=k, type=types.get(src, "none"), operand=k)
    return g


def write_graphml(graph: Graph, path: Path | str) -> Path:
    nx.write_graphml(to_networkx(graph), str(path))
    return Path(path)


def write_dot(graph: Graph, path: Path | str) -> Path:
    """Graphviz DOT (through networkx and pydot)."""
    nx.nx_pydot.write_dot(to_networkx(graph), str(path))
    return Path(path)
