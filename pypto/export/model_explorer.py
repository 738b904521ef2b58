"""A tensor graph as Google Model Explorer graph JSON, and node-data overlays for it.

The graph file is a graph collection, the form Model Explorer loads from a JSON file:
`{"label", "graphs": [{"id", "nodes": [{"id", "label", "namespace", "attrs": [{"key",
"value"}], "incomingEdges": [{"sourceNodeId", "sourceNodeOutputId", "targetNodeInputId"}],
"outputsMetadata"}]}]}`. Each loop body is a namespace (nested loops nest: `LOOP_a/LOOP_b`),
with the loop node pinned to the top of its group, so a kernel opens with its loops
collapsed. Node ids are our node ids, so an overlay (`node_data`: `{graphId: {"results":
{nodeId: {"value"}}, "gradient"|"thresholds"}}`) keyed by node id colours the same nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pypto.export.graphs import scoped_nodes
from pypto.ir.graph import Graph, Node
from pypto.ir.text import fmt_loc, fmt_type, fmt_value

DEFAULT_GRADIENT = ({"stop": 0, "bgColor": "#e8f5e9"}, {"stop": 1, "bgColor": "#e53935"})


def _kv(key: str, value: str) -> dict[str, str]:
    return {"key": key, "value": value}


def _namespaces(graph: Graph) -> dict[int, str]:
    """Loop node id -> the namespace of its body (unique among siblings)."""
    out: dict[int, str] = {}
    used: set[str] = set()
    for n, loops in scoped_nodes(graph):
        if n.body is None:
            continue
        parent = out[loops[-1].id] if loops else ""
        seg = str(n.attrs.get("name") or f"loop{n.id}").replace("/", "_")
        ns = f"{parent}/{seg}" if parent else seg
        if ns in used:
            ns = f"{ns}_{n.id}"
        used.add(ns)
        out[n.id] = ns
    return out


def _attrs(n: Node) -> list[dict[str, str]]:
    out = [_kv("op", n.op), _kv("type", fmt_type(n.type))]
    out += [_kv(k, fmt_value(v)) for k, v in n.attrs.items()]
    if n.loc.frames:
        out.append(_kv("loc", fmt_loc(n.loc)))
    for key, value in (("tensor_name", n.name), ("semantic_label", n.label), ("made_by", n.made_by)):
        if value is not None:
            out.append(_kv(key, value))
    if n.tile is not None:
        out.append(_kv("tile", str(n.tile)))
    if n.origin:
        out.append(_kv("origin", ", ".join(f"%{o}" for o in n.origin)))
    return out


def to_model_explorer(graph: Graph, graph_id: str | None = None, label: str | None = None) -> dict[str, Any]:
    """The graph collection JSON (one graph, `graph_id` defaulting to the kernel's name)."""
    namespaces = _namespaces(graph)
    nodes: list[dict[str, Any]] = []
    for n, loops in scoped_nodes(graph):
        node: dict[str, Any] = {
            "id": str(n.id),
            "label": n.op,
            "namespace": namespaces[n.id] if n.body is not None else (namespaces[loops[-1].id] if loops else ""),
            "attrs": _attrs(n),
            "incomingEdges": [{"sourceNodeId": str(src), "sourceNodeOutputId": "0", "targetNodeInputId": str(k)}
                              for k, src in enumerate(n.inputs)],
        }
        if n.type is not None:
            meta = [_kv("tensor_shape", fmt_type(n.type))]
            if n.name is not None:
                meta.append(_kv("__tensor_tag", n.name))
            node["outputsMetadata"] = [{"id": "0", "attrs": meta}]
        if n.body is not None:
            node["config"] = {"pinToGroupTop": True}
        nodes.append(node)
    gid = graph_id or graph.name
    return {"label": label or graph.name, "graphs": [{"id": gid, "nodes": nodes}]}


def node_data(graph_id: str, values: Mapping[int, float], *, thresholds: Sequence[Mapping[str, Any]] | None = None,
              gradient: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """A node-data overlay: a number per node id, coloured by `thresholds` or a `gradient`
    (default: a light-to-red gradient from the smallest value to the largest)."""
    data: dict[str, Any] = {"results": {str(k): {"value": v} for k, v in values.items()}}
    if thresholds is not None:
        data["thresholds"] = [dict(t) for t in thresholds]
    else:
        data["gradient"] = [dict(g) for g in (gradient if gradient is not None else DEFAULT_GRADIENT)]
    return {graph_id: data}
