"""The CompileRecord: one versioned, JSON-serializable document per compile.

Everything the IDE shows about a compile — the pass strip, the graph panels, the
source ⇄ node lookups of the language server — reads this record, never the compiler's
live objects, so a record written by one process (a worker, the CLI) is as good as one
built in memory. The JSON form is documented field by field in docs/record-schema.md
and as JSON Schema in docs/compile-record.schema.json.

In memory a record keeps each pass's snapshot as the compiler made it (snapshots share
their unchanged nodes, so keeping them all is cheap); the JSON form carries only the
final program unless asked for the snapshots (`to_json(include_snapshots=True)`), and
one snapshot can be serialized on demand (`snapshot_json(index)`).

Program fields (the tensor graph now; tiles, leaves, execute graph later) are
serialized through `PROGRAM_FIELDS`: adding a field to `Program` takes one
`register_program_field(name, encode, decode)` call, and the field then appears at the
top level of the record and in every snapshot.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import hashlib
import json
import os
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pypto import dtypes
from pypto.boards.swimlane import Swimlane
from pypto.compiler.block import Block, listing
from pypto.compiler.execute import ExecGraph, Task
from pypto.compiler.manager import Diagnostic, PassRecord, Program
from pypto.compiler.tile_ir import Buffer, Instance, Leaf, Region, Subgraph, TileGraph, TileOp
from pypto.dtypes import DataType, from_short
from pypto.ir import symbolic as S
from pypto.ir.graph import Graph, Node, TensorType, TileConfig
from pypto.ir.source import Loc, Span
from pypto.ir.text import decode, fmt_value

if TYPE_CHECKING:
    from pypto.frontend.jit import CompiledKernel

SCHEMA = "pypto-ide/compile-record"
VERSION = 1  # additive changes keep it; a breaking change (rename, removal, new meaning) bumps it

Json = Any  # a value json.dumps accepts


# ---- JSON forms of the IR pieces ----------------------------------------------------------------

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
    return {
        "id": n.id, "op": n.op, "inputs": list(n.inputs), "type": type_json(n.type),
        "attrs": {k: attr_text(v) for k, v in n.attrs.items()}, "loc": loc_json(n.loc),
        "name": n.name, "label": n.label, "tile": n.tile, "origin": list(n.origin), "made_by": n.made_by,
        "body": graph_json(n.body) if n.body is not None else None,
    }


def node_from(d: Mapping[str, Json]) -> Node:
    body = d.get("body")
    return Node(d["id"], d["op"], tuple(d["inputs"]), type_from(d["type"]),
                {k: attr_value(v) for k, v in d["attrs"].items()}, loc_from(d["loc"]), d.get("name"),
                d.get("label"), d.get("tile"), graph_from(body) if body is not None else None,
                tuple(d.get("origin", ())), d.get("made_by"))


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


def diagnostic_json(d: Diagnostic) -> dict[str, Json]:
    return {"severity": d.severity, "message": d.message, "rule": d.rule, "loc": loc_json(d.loc)}


def diagnostic_from(d: Mapping[str, Json]) -> Diagnostic:
    return Diagnostic(d["severity"], d["message"], loc_from(d.get("loc", ())), d.get("rule", ""))


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


# ---- Program fields: the one place a new Program field is taught to the record ------------------

@dataclass(frozen=True)
class FieldCodec:
    encode: Callable[[Any], Json]
    decode: Callable[[Json], Any]


PROGRAM_FIELDS: dict[str, FieldCodec] = {}


def register_program_field(name: str, encode: Callable[[Any], Json], decode: Callable[[Json], Any]) -> None:
    """Serialize `Program.<name>` as the record's top-level key `name` (and in snapshots).
    A field whose value is None is left out; a field with no codec is not serialized."""
    PROGRAM_FIELDS[name] = FieldCodec(encode, decode)


def _bindings_json(b: tuple[tuple[str, int], ...]) -> dict[str, int]:
    return dict(b)


def _bindings_from(d: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(d.items()))


register_program_field("graph", graph_json, graph_from)
# the dynamic dims a program was lowered for; at the record's top level it is the record's own
# `bindings` (the same values, also known for a compile that stopped at the tensor stage)
register_program_field("bindings", _bindings_json, _bindings_from)


# ---- tile, partition and execute stages (columnar: a big kernel has 10^5 tile ops) ---------------

def _region_json(r: Region | None) -> Json:
    return None if r is None else [r.buffer, list(r.layout), list(r.offset), list(r.shape)]


def _region_from(v: Json) -> Region | None:
    if v is None:
        return None
    b, layout, offset, shape = v  # type: ignore[misc]
    return Region(b, tuple(layout), tuple(offset), tuple(shape))


def _tile_attrs_json(attrs: Mapping[str, Any]) -> dict[str, Json]:
    return {k: ([_region_json(r) for r in v] if k == "inputs" else attr_text(v)) for k, v in attrs.items()}


def _tile_attrs_from(d: Mapping[str, Json]) -> dict[str, Any]:
    return {k: (tuple(_region_from(r) for r in v) if k == "inputs" else attr_value(v))  # type: ignore[union-attr]
            for k, v in d.items()}


def tiles_json(t: TileGraph) -> dict[str, Json]:
    ops = t.ops
    return {
        "buffers": [{"id": b.id, "shape": list(b.shape), "dtype": b.dtype.short, "kind": b.kind, "name": b.name,
                     "node": b.node} for b in t.buffers],
        "instances": [{"id": i.id, "root": i.root, "index": dict(i.index)} for i in t.instances],
        "outputs": [[name, _region_json(r)] for name, r in t.outputs],
        "ops": {
            "id": [o.id for o in ops], "op": [o.op for o in ops], "node": [o.node for o in ops],
            "instance": [o.instance for o in ops], "coord": [list(o.coord) for o in ops],
            "shape": [list(o.shape) for o in ops], "dtype": [o.dtype.short for o in ops],
            "inputs": [list(o.inputs) for o in ops], "region": [_region_json(o.region) for o in ops],
            "attrs": [_tile_attrs_json(o.attrs) for o in ops],
        },
    }


def tiles_from(d: Mapping[str, Any]) -> TileGraph:
    c = d["ops"]
    ops = tuple(TileOp(i, op, node, inst, tuple(coord), tuple(shape), from_short(dt), tuple(ins), _region_from(r),
                       _tile_attrs_from(a))
                for i, op, node, inst, coord, shape, dt, ins, r, a in zip(
                    c["id"], c["op"], c["node"], c["instance"], c["coord"], c["shape"], c["dtype"], c["inputs"],
                    c["region"], c["attrs"]))
    buffers = tuple(Buffer(b["id"], tuple(b["shape"]), from_short(b["dtype"]), b["kind"], b["name"], b["node"])
                    for b in d["buffers"])
    instances = tuple(Instance(i["id"], i["root"], tuple(i["index"].items())) for i in d["instances"])
    outputs = tuple((name, _region_from(r)) for name, r in d["outputs"])
    return TileGraph(buffers, ops, instances, outputs)  # type: ignore[arg-type]


def subgraphs_json(sgs: tuple[Subgraph, ...]) -> list[Json]:
    return [{"id": s.id, "core": s.core, "instance": s.instance, "ops": list(s.ops), "peak_bytes": s.peak_bytes,
             "leaf": s.leaf} for s in sgs]


def subgraphs_from(v: list[Mapping[str, Any]]) -> tuple[Subgraph, ...]:
    return tuple(Subgraph(s["id"], s["core"], s["instance"], tuple(s["ops"]), s["peak_bytes"], s["leaf"]) for s in v)


def leaves_json(ls: tuple[Leaf, ...]) -> list[Json]:
    return [{"id": lf.id, "hash": lf.hash, "core": lf.core, "template": lf.template, "count": lf.count,
             "nodes": list(lf.nodes)} for lf in ls]


def leaves_from(v: list[Mapping[str, Any]]) -> tuple[Leaf, ...]:
    return tuple(Leaf(lf["id"], lf["hash"], lf["core"], lf["template"], lf["count"], tuple(lf["nodes"])) for lf in v)


def execute_json(e: ExecGraph) -> dict[str, Json]:
    return {"roots": list(e.roots), "tasks": [
        {"id": t.id, "subgraph": t.subgraph, "leaf": t.leaf, "core": t.core, "instance": t.instance, "root": t.root,
         "coord": list(t.coord), "reads": [_region_json(r) for r in t.reads],
         "writes": [_region_json(r) for r in t.writes], "preds": list(t.preds)} for t in e.tasks]}


def execute_from(d: Mapping[str, Any]) -> ExecGraph:
    return ExecGraph(tuple(Task(t["id"], t["subgraph"], t["leaf"], t["core"], t["instance"], t["root"],
                                tuple(t["coord"]), tuple(_region_from(r) for r in t["reads"]),  # type: ignore[misc]
                                tuple(_region_from(r) for r in t["writes"]), tuple(t["preds"]))  # type: ignore[misc]
                           for t in d["tasks"]), tuple(d["roots"]))


def _dc_json(v: Any) -> Json:
    """A frozen dataclass of ints, strs, bools, DataTypes and tuples, as JSON."""
    if dataclasses.is_dataclass(v):
        return {f.name: _dc_json(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, DataType):
        return v.short
    if isinstance(v, tuple):
        return [_dc_json(x) for x in v]
    return v  # type: ignore[no-any-return]


def _dc_from(tp: Any, v: Json) -> Any:
    """The inverse of `_dc_json`, guided by the type hints."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if v is None:
        return None
    if origin in (typing.Union, types.UnionType):
        return _dc_from(next(a for a in args if a is not type(None)), v)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_dc_from(args[0], x) for x in v)  # type: ignore[union-attr]
        return tuple(_dc_from(a, x) for a, x in zip(args, v))  # type: ignore[arg-type]
    if tp is DataType:
        return from_short(v)  # type: ignore[arg-type]
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return tp(**{k: _dc_from(hints[k], x) for k, x in v.items()})  # type: ignore[union-attr]
    return v


def blocks_json(bs: tuple[Block, ...]) -> list[Json]:
    return [_dc_json(b) for b in bs]


def blocks_from(v: list[Json]) -> tuple[Block, ...]:
    return tuple(_dc_from(Block, b) for b in v)


register_program_field("next_id", int, int)
register_program_field("tiles", tiles_json, tiles_from)
register_program_field("memory", list, tuple)
register_program_field("blocks", blocks_json, blocks_from)
register_program_field("subgraphs", subgraphs_json, subgraphs_from)
register_program_field("leaves", leaves_json, leaves_from)
register_program_field("execute", execute_json, execute_from)


def program_json(p: Program) -> dict[str, Json]:
    out: dict[str, Json] = {}
    for f in dataclasses.fields(p):
        codec = PROGRAM_FIELDS.get(f.name)
        value = getattr(p, f.name)
        if codec is not None and value is not None:
            out[f.name] = codec.encode(value)
    return out


def program_from(d: Mapping[str, Json]) -> Program:
    return Program(**{name: codec.decode(d[name]) for name, codec in PROGRAM_FIELDS.items()
                      if d.get(name) is not None})


# ---- the record ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SourceInfo:
    file: str
    kernel: str
    text_sha256: str | None  # of the kernel's file; None when it cannot be read
    options: dict[str, Json]  # the effective options, JSON-safe
    tile_configs: tuple[TileConfig, ...]


@dataclass(frozen=True)
class InputInfo:
    """One argument of the compile: a tensor (dtype, shape) or a compile-time constant (value)."""

    name: str
    dtype: str | None
    shape: tuple[int | str, ...] | None
    value: str | None = None  # repr of a non-tensor argument


@dataclass(frozen=True)
class PassInfo:
    index: int
    name: str
    stage: str
    why: str
    changed: bool
    seconds: float
    node_count: int
    diagnostics: tuple[Diagnostic, ...]
    error: str | None
    # the program after the pass (its input, when it failed); None when loaded without snapshots
    snapshot: Program | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_pass_record(cls, r: PassRecord) -> PassInfo:
        return cls(r.index, r.name, r.stage, r.why, r.changed, r.seconds, r.node_count, r.diagnostics,
                   r.error, r.snapshot)

    def to_json(self, include_snapshot: bool = False) -> dict[str, Json]:
        out: dict[str, Json] = {
            "index": self.index, "name": self.name, "stage": self.stage, "why": self.why,
            "changed": self.changed, "seconds": self.seconds, "node_count": self.node_count,
            "diagnostics": [diagnostic_json(d) for d in self.diagnostics], "error": self.error}
        if include_snapshot and self.snapshot is not None:
            out["snapshot"] = program_json(self.snapshot)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Json]) -> PassInfo:
        snap = d.get("snapshot")
        return cls(d["index"], d["name"], d["stage"], d["why"], d["changed"], d["seconds"], d["node_count"],
                   tuple(diagnostic_from(x) for x in d["diagnostics"]), d.get("error"),
                   program_from(snap) if snap is not None else None)


@dataclass(frozen=True)
class ErrorInfo:
    """Why a compile failed: the message and, for a user mistake, where."""

    message: str
    loc: Loc = Loc()
    pass_name: str | None = None


def _norm(file: str) -> str:
    return os.path.normcase(os.path.abspath(file))


def _file_sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (int, float, bool))


def _input_info(name: str, value: Any) -> InputInfo:
    if _is_tensor(value):
        dt = dtypes.from_numpy(value.dtype) if type(value).__module__ == "numpy" else dtypes.from_torch(value.dtype)
        return InputInfo(name, dt.short if dt is not None else str(value.dtype), tuple(int(d) for d in value.shape))
    return InputInfo(name, None, None, repr(value))


def bind(graph: Graph, inputs: Mapping[str, Any]) -> dict[str, int]:
    """The value of each dynamic-dim symbol given the actual input tensors."""
    out: dict[str, int] = {}
    for p in graph.params():
        value = inputs.get(p.attrs.get("name", ""))
        if p.type is None or value is None or not _is_tensor(value):
            continue
        for d, actual in zip(p.type.shape, value.shape):
            if isinstance(d, S.SymExpr):
                syms = S.symbols_of(d)
                if len(syms) == 1 and d == S.sym(next(iter(syms))):
                    out.setdefault(next(iter(syms)), int(actual))
    return out


@dataclass(frozen=True)
class CompileRecord:
    """One compile: its source, inputs, every pass, and the final program."""

    source: SourceInfo
    inputs: list[InputInfo]
    bindings: dict[str, int]
    passes: list[PassInfo]
    program: Program = field(repr=False)  # the final program (after the last pass that ran)
    traced: Program | None = field(default=None, compare=False, repr=False)  # the frontend's graph
    error: ErrorInfo | None = None
    run: Swimlane | None = field(default=None, compare=False, repr=False)  # a board's profile of the program

    # ---- building

    @classmethod
    def from_compiled(cls, ck: CompiledKernel, inputs: Mapping[str, Any] | None = None,
                      bindings: Mapping[str, int] | None = None) -> CompileRecord:
        """The record of a compiled kernel; `inputs` maps parameter names to the arguments
        (tensors or constants); without it the inputs are read off the graph's parameters.
        When the kernel was lowered for these bindings (`ck.lower(bindings)`), the record goes
        on through the later stages; it never compiles anything itself."""
        assert ck.program is not None
        binds = dict(bindings) if bindings is not None else bind(ck.graph, inputs) if inputs is not None else {}
        passes = [PassInfo.from_pass_record(r) for r in ck.passes]
        program = ck.program
        lowered = getattr(ck, "lowered", {}).get(tuple(sorted(binds.items())))
        if lowered is not None:
            passes += [PassInfo.from_pass_record(r) for r in lowered.passes]
            program = lowered.program
        return cls.build(ck.name, ck.file, ck.options, passes, program, Program(ck.graph), inputs, binds)

    @classmethod
    def from_failure(cls, kernel: str, file: str, options: Mapping[str, Any], error: BaseException,
                     inputs: Mapping[str, Any] | None = None) -> CompileRecord | None:
        """The record of a compile whose pipeline raised (the passes are attached to the error by
        `run_pipeline`); None when the error happened before any pass ran (while tracing)."""
        records: list[PassRecord] = getattr(error, "records", [])
        if not records:
            return None
        passes = [PassInfo.from_pass_record(r) for r in records]
        loc = getattr(error, "loc", None)
        info = ErrorInfo(getattr(error, "message", str(error)), loc if isinstance(loc, Loc) else Loc(),
                         records[-1].name)
        # an unchanged (or failed) first pass's snapshot is its input: the traced graph
        first = records[0].snapshot if not records[0].changed else None
        return cls.build(kernel, file, options, passes, records[-1].snapshot, first, inputs, None, info)

    @classmethod
    def build(cls, kernel: str, file: str, options: Mapping[str, Any], passes: list[PassInfo], program: Program,
              traced: Program | None = None, inputs: Mapping[str, Any] | None = None,
              bindings: Mapping[str, int] | None = None, error: ErrorInfo | None = None) -> CompileRecord:
        base = traced.graph if traced is not None else program.graph
        if inputs is not None:
            infos = [_input_info(k, v) for k, v in inputs.items()]
            binds = dict(bindings) if bindings is not None else bind(base, inputs)
        else:
            infos = [InputInfo(p.attrs.get("name", p.name or f"%{p.id}"), p.type.dtype.short,
                               tuple(dim_json(d) for d in p.type.shape))
                     for p in base.params() if p.type is not None]
            binds = dict(bindings or {})
        src = SourceInfo(file, kernel, _file_sha256(file), json_safe(dict(options)), base.tile_configs)
        return cls(src, infos, binds, passes, program, traced, error)

    # ---- JSON

    def to_json(self, include_snapshots: bool = False) -> dict[str, Json]:
        out: dict[str, Json] = {
            "schema": SCHEMA, "version": VERSION,
            "source": {"file": self.source.file, "kernel": self.source.kernel,
                       "text_sha256": self.source.text_sha256, "options": self.source.options,
                       "tile_configs": [tile_config_json(t) for t in self.source.tile_configs]},
            "inputs": [_input_json(i) for i in self.inputs],
            "bindings": dict(self.bindings),
            "passes": [p.to_json(include_snapshots) for p in self.passes],
            "error": None if self.error is None else {
                "message": self.error.message, "loc": loc_json(self.error.loc), "pass": self.error.pass_name},
            "run": None if self.run is None else self.run.to_json(),
        }
        out.update(program_json(self.program))
        if include_snapshots and self.traced is not None:
            out["traced"] = program_json(self.traced)
        return out

    def dumps(self, include_snapshots: bool = False, indent: int | None = None) -> str:
        return json.dumps(self.to_json(include_snapshots), indent=indent)

    @classmethod
    def from_json(cls, d: Mapping[str, Json]) -> CompileRecord:
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a compile record (schema {d.get('schema')!r}, expected {SCHEMA!r})")
        if d.get("version") != VERSION:
            raise ValueError(f"compile record version {d.get('version')!r}; this pypto reads version {VERSION}")
        s = d["source"]
        src = SourceInfo(s["file"], s["kernel"], s.get("text_sha256"), dict(s.get("options", {})),
                         tuple(tile_config_from(t) for t in s.get("tile_configs", ())))
        inputs = [InputInfo(i["name"], i.get("dtype"), tuple(i["shape"]) if i.get("shape") is not None else None,
                            i.get("value")) for i in d["inputs"]]
        err = d.get("error")
        error = None if err is None else ErrorInfo(err["message"], loc_from(err.get("loc", ())), err.get("pass"))
        traced = d.get("traced")
        run = d.get("run")
        return cls(src, inputs, dict(d["bindings"]), [PassInfo.from_json(p) for p in d["passes"]], program_from(d),
                   program_from(traced) if traced is not None else None, error,
                   Swimlane.from_json(run) if run is not None else None)

    @classmethod
    def loads(cls, text: str) -> CompileRecord:
        return cls.from_json(json.loads(text))

    def snapshot_json(self, pass_index: int) -> dict[str, Json]:
        """The program after pass `pass_index` (its input, if that pass failed), serialized now."""
        p = self._pass(pass_index)
        if p.snapshot is None:
            raise LookupError(f"pass {pass_index} ({p.name}) has no snapshot: the record was loaded without them")
        return program_json(p.snapshot)

    def _pass(self, index: int) -> PassInfo:
        for p in self.passes:
            if p.index == index:
                return p
        raise IndexError(f"no pass with index {index} (passes: {[p.index for p in self.passes]})")

    # ---- queries (the language server's and the panels' lookups)

    @property
    def graph(self) -> Graph:
        """The final tensor graph."""
        return self.program.graph

    @cached_property
    def _final_nodes(self) -> dict[int, Node]:
        return self.graph.by_id()

    @cached_property
    def _all_nodes(self) -> dict[int, Node]:
        """Every node the compile made, the final graph's version winning, then the latest snapshot's."""
        out: dict[int, Node] = {}
        graphs = [p.snapshot.graph for p in reversed(self.passes) if p.snapshot is not None]
        if self.traced is not None:
            graphs.append(self.traced.graph)
        seen: set[int] = set()
        for g in graphs:
            if id(g) in seen:
                continue
            seen.add(id(g))
            for n in g.walk():
                out.setdefault(n.id, n)
        out.update(self._final_nodes)
        return out

    @cached_property
    def _by_line(self) -> dict[tuple[str, int], list[int]]:
        """(normalized file, line) -> ids of the final graph's nodes there, in program order."""
        out: dict[tuple[str, int], list[int]] = {}
        for n in self.graph.walk():
            for s in self.source_of(n.id):
                ids = out.setdefault((_norm(s.file), s.line), [])
                if n.id not in ids:
                    ids.append(n.id)
        return out

    @cached_property
    def _file_names(self) -> dict[str, str]:
        """Normalized file -> the file as the record spells it."""
        return {_norm(s.file): s.file for n in self.graph.walk() for s in self.source_of(n.id)}

    def node(self, node_id: int) -> Node:
        """A node by id: from the final graph, else from the latest snapshot that has it."""
        try:
            return self._all_nodes[node_id]
        except KeyError:
            raise KeyError(f"no node %{node_id} in this compile") from None

    def source_of(self, node_id: int) -> list[Span]:
        """The node's source frames (innermost first); a node a pass made without a location
        gets those of the nodes it came from (`origin`)."""
        out: list[Span] = []
        stack, seen = [node_id], set()
        while stack:
            nid = stack.pop(0)
            if nid in seen or nid not in self._all_nodes:
                continue
            seen.add(nid)
            n = self._all_nodes[nid]
            if n.loc.frames:
                out += [s for s in n.loc.frames if s not in out]
            else:
                stack += list(n.origin)
        return out

    def nodes_at(self, file: str, line: int) -> list[int]:
        """Ids of the final graph's nodes (loop bodies included) whose source chain includes `file:line`."""
        return list(self._by_line.get((_norm(file), line), ()))

    # ---- across levels: source line <-> tensor node <-> tile op <-> leaf <-> task

    @cached_property
    def _tile_index(self) -> tuple[dict[int, list[int]], dict[int, int], dict[int, int]]:
        """node -> tile op ids, tile op -> subgraph, subgraph -> task."""
        by_node: dict[int, list[int]] = {}
        p = self.program
        for o in (p.tiles.ops if p.tiles is not None else ()):
            by_node.setdefault(o.node, []).append(o.id)
        sub_of = {oid: sg.id for sg in (p.subgraphs or ()) for oid in sg.ops}
        task_of = {t.subgraph: t.id for t in (p.execute.tasks if p.execute is not None else ())}
        return by_node, sub_of, task_of

    def tile_ops_of(self, node_id: int) -> list[int]:
        """The tile ops that lower tensor node `node_id`."""
        return list(self._tile_index[0].get(node_id, ()))

    def leaves_of(self, node_id: int) -> list[int]:
        """The leaf functions whose body lowers tensor node `node_id`."""
        return [lf.id for lf in (self.program.leaves or ()) if node_id in lf.nodes]

    def tasks_of(self, node_id: int) -> list[int]:
        """The tasks that run some tile of tensor node `node_id`, in task order."""
        _, sub_of, task_of = self._tile_index
        return sorted({task_of[sub_of[t]] for t in self.tile_ops_of(node_id) if sub_of.get(t) in task_of})

    def tasks_at(self, file: str, line: int) -> list[int]:
        """The tasks running anything made at `file:line`."""
        return sorted({t for n in self.nodes_at(file, line) for t in self.tasks_of(n)})

    def listing(self, leaf: int) -> str:
        """The PTO-ISA-style listing of leaf function `leaf` (block stage on)."""
        assert self.program.blocks is not None, "this compile stopped before the block stage"
        return listing(self.program.blocks[leaf], self.program)

    def task(self, task_id: int) -> Task:
        assert self.program.execute is not None, "this compile stopped before the execute stage"
        return self.program.execute.tasks[task_id]

    def nodes_of_task(self, task_id: int) -> list[int]:
        """The tensor nodes whose tiles task `task_id` runs."""
        assert self.program.subgraphs is not None and self.program.tiles is not None
        ops = {o.id: o for o in self.program.tiles.ops}
        sg = self.program.subgraphs[self.task(task_id).subgraph]
        return sorted({ops[i].node for i in sg.ops})

    def source_of_task(self, task_id: int) -> list[Span]:
        """The user lines a task runs (the source frames of its tensor nodes)."""
        out: list[Span] = []
        for n in self.nodes_of_task(task_id):
            out += [s for s in self.source_of(n) if s not in out]
        return out

    def lines(self) -> list[tuple[str, int]]:
        """Every (file, line) that some node of the final graph comes from, sorted."""
        return sorted((self._file_names[f], line) for f, line in self._by_line)

    def passes_changing(self, node_id: int) -> list[PassInfo]:
        """The passes that created, replaced or removed node `node_id`: its value differs between
        the pass's input and its snapshot. Without snapshots: the pass named in its `made_by`."""
        if any(p.snapshot is None for p in self.passes):
            made_by = self._all_nodes[node_id].made_by if node_id in self._all_nodes else None
            return [p for p in self.passes if p.name == made_by]
        out = []
        before = self._index(self.traced.graph) if self.traced is not None else {}
        for p in self.passes:
            assert p.snapshot is not None
            after = self._index(p.snapshot.graph)
            a, b = before.get(node_id), after.get(node_id)
            if a is not b and a != b:
                out.append(p)
            before = after
        return out

    def _index(self, g: Graph) -> dict[int, Node]:
        cache: dict[int, tuple[Graph, dict[int, Node]]] = self.__dict__.setdefault("_index_cache", {})
        hit = cache.get(id(g))
        if hit is None or hit[0] is not g:
            hit = cache[id(g)] = (g, g.by_id())
        return hit[1]


def _input_json(i: InputInfo) -> dict[str, Json]:
    out: dict[str, Json] = {"name": i.name, "dtype": i.dtype, "shape": list(i.shape) if i.shape is not None else None}
    if i.value is not None:
        out["value"] = i.value
    return out


# ---- compiling a kernel into a record (what the CLI and the language server call) ---------------

def stage_option(stage: str) -> Any:
    """The `host_options["compile_stage"]` value that stops compiling after `stage`."""
    from pypto.compiler.pipeline import stop_stage
    from pypto.enums import CompStage

    for cs in CompStage:
        if stop_stage({"host_options": {"compile_stage": cs}}) == stage:
            return cs
    raise ValueError(f"unknown stage {stage!r}")


def compile_record(kernel: Any, inputs: Mapping[str, Any] | None = None, stage: str | None = None) -> CompileRecord:
    """Compile `kernel` (a JitKernel) for `inputs` (parameter name -> argument; default: its
    example inputs, see `pypto.inputs`) through `stage` (default: every stage) without running
    it, and return the record. A user mistake raises PyptoError (with `records` attached when
    a pass found it)."""
    import contextlib

    from pypto.compiler.pipeline import stop_stage
    from pypto.inputs import example_arguments
    from pypto.options import options

    args = dict(inputs) if inputs is not None else example_arguments(kernel)
    scope = options(host_options={"compile_stage": stage_option(stage)}) if stage else contextlib.nullcontext()
    with scope:
        ck = kernel.compile(**args)
    binds = bind(ck.graph, args)
    if stop_stage(ck.options) != "tensor" and hasattr(ck, "lower"):
        ck.lower(binds)
    return CompileRecord.from_compiled(ck, args, binds)
