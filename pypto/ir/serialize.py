"""The JSON forms of the IR: spans, locations, dims, types, attributes, nodes and graphs.

Each `x_json` has its inverse `x_from`; `walk_graph_json` and `source_of_json` read a graph's
JSON without rebuilding it (a server keeps records as JSON). The CompileRecord
(`pypto.record`) and the compiler's pass dumps are assembled from these forms.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pypto.ir import dtypes
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.graph import Graph, Node, TensorType, TileConfig
from pypto.ir.source import Loc, Span
from pypto.ir.text import decode, fmt_value

Json = Any  # a value json.dumps accepts


def span_json(s: Span) -> dict[str, Json]:
    return {"file": s.file, "line": s.line, "col": s.col, "end_line": s.end_line, "end_col": s.end_col,
            "func": s.func}


def span_from(d: Mapping[str, Json]) -> Span:
    return Span(d["file"], d["line"], d.get("col", 0), d.get("end_line", 0), d.get("end_col", 0), d.get("func", ""))


def loc_json(loc: Loc) -> list[dict[str, Json]]:
    return [span_json(s) for s in loc.frames]


def loc_from(frames: Iterable[Mapping[str, Json]]) -> Loc:
    return Loc(tuple(span_from(f) for f in frames))


def dim_json(d: S.Dim) -> int | str:
    """A dim: an int, or the text of a symbolic expression (`"x.d0"`, `"(n + 15) // 16"`)."""
    return d if isinstance(d, int) else S.to_str(d)


def dim_from(v: int | str) -> S.Dim:
    return v if isinstance(v, int) else S.parse(v)


def type_json(t: TensorType | None) -> dict[str, Json] | None:
    if t is None:
        return None
    return {"dtype": t.dtype.short, "shape": [dim_json(d) for d in t.shape]}


def type_from(d: Mapping[str, Json] | None) -> TensorType | None:
    if d is None:
        return None
    return TensorType(tuple(dim_from(x) for x in d["shape"]), dtypes.from_short(d["dtype"]))


def attr_text(value: Any) -> str:
    """An attribute value in the graph text form (`pypto.ir.text.fmt_value`)."""
    return fmt_value(value)


def attr_value(text: str) -> Any:
    """An attribute value from its text form (`pypto.ir.text.decode`)."""
    return decode(ast.parse(text, mode="eval").body)


def _tuples(v: Json) -> Any:
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def tile_config_json(tc: TileConfig) -> dict[str, Json]:
    return {"id": tc.id, "kind": tc.kind, "dims": json_safe(tc.dims), "loc": loc_json(tc.loc)}


def tile_config_from(d: Mapping[str, Json]) -> TileConfig:
    return TileConfig(d["id"], d["kind"], _tuples(d["dims"]), loc_from(d["loc"]))


def node_json(n: Node) -> dict[str, Json]:
    d = {
        "id": n.id, "op": n.op, "inputs": list(n.inputs), "type": type_json(n.type),
        "attrs": {k: attr_text(v) for k, v in n.attrs.items()}, "loc": loc_json(n.loc),
        "name": n.name, "label": n.label, "tile": n.tile, "origin": list(n.origin), "made_by": n.made_by,
        "body": graph_json(n.body) if n.body is not None else None,
    }
    if n.scope is not None:  # a `pl.at` scope's op (PyPTO 3 kernels only)
        d["scope"] = n.scope
    return d


def node_from(d: Mapping[str, Json]) -> Node:
    body = d.get("body")
    return Node(d["id"], d["op"], tuple(d["inputs"]), type_from(d["type"]),
                {k: attr_value(v) for k, v in d["attrs"].items()}, loc_from(d["loc"]), d.get("name"),
                d.get("label"), d.get("tile"), graph_from(body) if body is not None else None,
                tuple(d.get("origin", ())), d.get("made_by"), d.get("scope"))


def graph_json(g: Graph) -> dict[str, Json]:
    return {"name": g.name, "nodes": [node_json(n) for n in g.nodes],
            "outputs": [[name, nid] for name, nid in g.outputs],
            "tile_configs": [tile_config_json(t) for t in g.tile_configs]}


def graph_from(d: Mapping[str, Json]) -> Graph:
    return Graph(d["name"], tuple(node_from(n) for n in d["nodes"]),
                 tuple((name, nid) for name, nid in d["outputs"]),
                 tuple(tile_config_from(t) for t in d.get("tile_configs", ())))


def walk_graph_json(graph: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every node of a graph's JSON (`graph_json`), loop bodies included, in program order."""
    for n in graph.get("nodes", ()):
        yield n
        if n.get("body"):
            yield from walk_graph_json(n["body"])


def source_of_json(nodes: Mapping[int, Mapping[str, Any]], node_id: int) -> list[Mapping[str, Any]]:
    """`CompileRecord.source_of` on JSON nodes by id: the node's frames; a node without a
    location takes its origins' (for readers of a record's JSON that do not rebuild it)."""
    out: list[Mapping[str, Any]] = []
    stack, seen = [node_id], set()
    while stack:
        nid = stack.pop(0)
        if nid in seen or nid not in nodes:
            continue
        seen.add(nid)
        n = nodes[nid]
        if n.get("loc"):
            out += [s for s in n["loc"] if s not in out]
        else:
            stack += list(n.get("origin") or ())
    return out

def json_safe(value: Any) -> Json:
    """Options and other plain values as JSON: enums by name, tuples as lists, keys as strings."""
    if isinstance(value, DataType):
        return value.name
    if isinstance(value, enum.Enum):
        return value.name
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, S.SymExpr):
        return S.to_str(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return repr(value)

