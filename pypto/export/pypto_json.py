"""A tensor graph in PyPTO's own file shapes: `program.json` and per-pass dump folders.

PyPTO users have viewers and scripts that read these files; writing them lets a kernel
compiled here open there. The shapes follow ../shared/spec/formats.md (no PyPTO code or
documentation is used). `program.json` is `{version, functions, entryhash}` with one
function per root: the kernel body (the entry) and each `pypto.loop` body. Ids are ours —
one ID space: an operation's `opmagic` and the `magic` of the tensor it makes are the
node id, a loop body's `funcmagic` is its loop node's id (the entry's is 0), so a lookup
in these files lands on the same node the IDE shows.

Per-pass dumps: `computation_graph/Pass_<NN>_<Pass>/Before_<NNN>_<pass>_<func>.json` and
`After_…`, one file per function in the `program.json` function schema.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pypto.export.graphs import function_name, scoped_nodes
from pypto.ir import symbolic as S
from pypto.ir.graph import Graph, Node, TileConfig
from pypto.ir.text import fmt_value
from pypto.record import CompileRecord

VERSION = "1.0"
GRAPH_TYPE = "TENSOR_GRAPH"
MEM_GM = "MEM_DEVICE_DDR"  # every tensor-graph tensor lives in global memory
ENTRY_MAGIC = 0


def _dim(d: S.Dim) -> int | str:
    return d if isinstance(d, int) else S.to_str(d)


def _dims(v: Any) -> list[int | str]:
    return [_dim(d) for d in v] if isinstance(v, tuple) else []


def _file_line(n: Node) -> tuple[str, int]:
    s = n.loc.span
    return (s.file, s.line) if s else ("", 0)


def _raw_of(graph: Graph) -> dict[int, int]:
    """Each tensor's raw tensor: a view, an assemble (a new value of its destination), a carry
    and a loop_out alias the tensor they come from; every other tensor is its own."""
    raw: dict[int, int] = {}
    by_id = graph.by_id()
    carries: dict[int, Node] = {}  # carry id -> its loop node
    for n, loops in scoped_nodes(graph):
        if n.op == "carry" and loops:
            carries[n.id] = loops[-1]
    for n in graph.walk():
        if n.type is None:
            continue
        src: int | None = None
        if n.op in ("view", "assemble") and n.inputs:
            src = n.inputs[0]
        elif n.op == "carry" and n.id in carries:
            loop = carries[n.id]
            idx = n.attrs.get("index", 0)
            src = loop.inputs[idx] if idx < len(loop.inputs) else None
        elif n.op == "loop_out" and n.inputs:
            loop = by_id.get(n.inputs[0])
            idx = n.attrs.get("index", 0)
            src = loop.inputs[idx] if loop is not None and idx < len(loop.inputs) else None
        raw[n.id] = raw.get(src, src) if src is not None else n.id
    return raw


def _tensor(n: Node, raw: dict[int, int]) -> dict[str, Any]:
    assert n.type is not None
    shape = [_dim(d) for d in n.type.shape]
    offset: list[int | str] = _dims(n.attrs.get("offsets")) if n.op == "view" else [0] * len(shape)
    valid = _dims(n.attrs.get("valid_shape")) or shape
    return {"magic": n.id, "rawtensor": raw.get(n.id, n.id), "offset": offset, "shape": shape, "validshape": valid,
            "dtype": n.type.dtype.name, "symbol": n.name or "", "mem_type": {"asis": MEM_GM, "tobe": MEM_GM}}


def _tile(tile: int | None, configs: dict[int, TileConfig]) -> dict[str, Any]:
    tc = configs.get(tile) if tile is not None else None
    dims = json.loads(json.dumps(tc.dims)) if tc is not None else None
    return {"vec": dims if tc is not None and tc.kind == "vec" else None,
            "cube": dims if tc is not None and tc.kind == "cube" else None}


def _operation(n: Node, configs: dict[int, TileConfig], by_id: dict[int, Node]) -> dict[str, Any]:
    """Operands are tensors: a `loop_out`'s input (its loop, which makes no tensor) is not one."""
    file, line = _file_line(n)
    op: dict[str, Any] = {
        "opcode": n.op.upper(), "opmagic": n.id,
        "ioperands": [i for i in n.inputs if i in by_id and by_id[i].type is not None],
        "ooperands": [n.id] if n.type is not None else [], "latency": 0, "subgraphid": -1,
        "semantic_label": {"label": n.label or "", "filename": file, "lineno": line},
        "file": file, "line": line, "tile": _tile(n.tile, configs),
        "attrs": {k: fmt_value(v) for k, v in n.attrs.items()},
    }
    if n.body is not None:
        op["callee"] = n.id  # the funcmagic of the loop body
    if n.op == "loop_out" and n.inputs:
        op["loop"] = n.inputs[0]
    return op


def _function(root: Graph, owner: Node | None, kernel: Graph, by_id: dict[int, Node], raw: dict[int, int],
              configs: dict[int, TileConfig]) -> dict[str, Any]:
    magic = owner.id if owner is not None else ENTRY_MAGIC
    name = function_name(kernel, (owner,)) if owner is not None else kernel.name
    defined = {n.id for n in root.nodes}
    free: list[int] = []
    for n in root.nodes:
        for i in n.inputs:
            if i not in defined and i not in free and i in by_id and by_id[i].type is not None:
                free.append(i)
    if owner is None:
        incasts = [n.id for n in root.nodes if n.op == "param"]
    else:
        incasts = [n.id for n in root.nodes if n.op == "carry"] + free
    operations = [_operation(n, configs, by_id) for n in root.nodes]
    tensor_nodes = [by_id[i] for i in free if i in by_id] + list(root.nodes)
    tensors = [_tensor(n, raw) for n in tensor_nodes if n.type is not None]
    raws = {t["rawtensor"] for t in tensors}
    rawtensors = [{"rawmagic": r, "shape": [_dim(d) for d in by_id[r].type.shape], "dtype": by_id[r].type.dtype.name,
                   "symbol": by_id[r].name or ""}
                  for r in sorted(raws) if r in by_id and by_id[r].type is not None]
    body = json.dumps([operations, tensors], sort_keys=True)
    file, line = _file_line(owner if owner is not None else (root.nodes[0] if root.nodes else Node(-1, "", (), None)))
    return {
        "rawname": name, "funcmagic": magic, "func_magicname": f"{name}_{magic}",
        "functype": "ENTRY" if owner is None else "LOOP_BODY", "graphtype": GRAPH_TYPE,
        "hash": hashlib.sha256(body.encode()).hexdigest()[:16],
        "incasts": incasts, "outcasts": [nid for _, nid in root.outputs],
        "operations": operations, "tensors": tensors, "rawtensors": rawtensors, "file": file, "line": line,
    }


def to_program_json(graph: Graph) -> dict[str, Any]:
    """`{version, functions, entryhash}`: the entry function (the kernel body), then one
    function per loop body in program order; the entry's `programs` maps their funcmagics
    to their `func_magicname`s."""
    by_id = graph.by_id()
    raw = _raw_of(graph)
    configs = {tc.id: tc for tc in graph.tile_configs}
    entry = _function(graph, None, graph, by_id, raw, configs)
    loops = [_function(n.body, n, graph, by_id, raw, configs) for n, _ in scoped_nodes(graph) if n.body is not None]
    entry["programs"] = {str(f["funcmagic"]): f["func_magicname"] for f in loops}
    return {"version": VERSION, "functions": [entry, *loops], "entryhash": entry["hash"]}


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def write_pass_dumps(record: CompileRecord, directory: Path | str) -> list[Path]:
    """Each pass's tensor graph before and after it, one file per function, in PyPTO's folder
    layout under `directory/computation_graph/`. Needs the record's snapshots (a record built
    in memory, or loaded from JSON written with `include_snapshots=True`)."""
    if record.traced is None or any(p.snapshot is None for p in record.passes):
        raise ValueError("per-pass dumps need the record's snapshots; this record was loaded without them")
    base = Path(directory) / "computation_graph"
    written: list[Path] = []
    before = record.traced.graph
    for p in record.passes:
        assert p.snapshot is not None
        after = p.snapshot.graph
        folder = base / f"Pass_{p.index:02d}_{_camel(p.name)}"
        folder.mkdir(parents=True, exist_ok=True)
        for when, g in (("Before", before), ("After", after)):
            for func in to_program_json(g)["functions"]:
                path = folder / f"{when}_{p.index:03d}_{p.name}_{_safe(func['rawname'])}.json"
                path.write_text(json.dumps(func, indent=1))
                written.append(path)
        before = after
    return written
