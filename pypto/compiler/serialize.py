"""The JSON forms of what the compiler makes: a `Program` (every stage's output) and a pass's entry.

A `Program` field is serialized through `PROGRAM_FIELDS`: adding a field to `Program` takes
one `register_program_field(name, encode, decode)` call, and the field then appears at the
top level of the CompileRecord and in every snapshot and pass dump. `VERSION` is the version
of these forms and of the record built from them.

Each field has two forms: the JSON of `encode` (`program_json`: pass dumps, and what a record's
reader gets back), and the compact one of `program_document`, where the long lists are typed
columns (`pypto.ir.columns`); `columns_of` makes it straight from the objects for the bulky
fields (tile ops, tasks), whose JSON is too slow to build first. Expanding the compact form
gives the JSON form exactly.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain, compress, repeat
from numbers import Integral
from operator import attrgetter, is_not
from typing import Any, Protocol

import numpy as np

from pypto.compiler.block_ir import Block, Instr, Operand
from pypto.compiler.execute_ir import ExecGraph, Task
from pypto.compiler.manager import Diagnostic, Program
from pypto.compiler.tile_ir import (
    Buffer,
    Instance,
    Leaf,
    Region,
    Subgraph,
    TileGraph,
    TileOp,
    columns_coming,
    take_columns_ahead,
)
from pypto.ir import columns as C
from pypto.ir.columns import Arrays, columnize
from pypto.ir.dtypes import DataType, from_short
from pypto.ir.serialize import Json, attr_text, attr_value, graph_from, graph_json, loc_from, loc_json

# additive changes keep it; a breaking change (rename, removal, new meaning) bumps it.
# 2: the record's long lists are typed columns, stored beside the document (docs/record-schema.md)
VERSION = 2


def diagnostic_json(d: Diagnostic) -> dict[str, Json]:
    return {"severity": d.severity, "message": d.message, "rule": d.rule, "loc": loc_json(d.loc)}


def diagnostic_from(d: Mapping[str, Json]) -> Diagnostic:
    return Diagnostic(d["severity"], d["message"], loc_from(d.get("loc", ())), d.get("rule", ""))


class PassEntry(Protocol):
    """What a pass's entry shows: a `PassRecord` as the pass manager made it, or the record's `PassInfo`."""

    index: int
    name: str
    stage: str
    why: str
    changed: bool
    seconds: float
    node_count: int
    diagnostics: tuple[Diagnostic, ...]
    error: str | None


def pass_json(p: PassEntry) -> dict[str, Json]:
    return {"index": p.index, "name": p.name, "stage": p.stage, "why": p.why, "changed": p.changed,
            "seconds": p.seconds, "node_count": p.node_count,
            "diagnostics": [diagnostic_json(d) for d in p.diagnostics], "error": p.error}


# ---- Program fields: the one place a new Program field is taught its JSON ------------------

ColumnsOf = Callable[[Any, str, Arrays], Json]


@dataclass(frozen=True)
class FieldCodec:
    encode: Callable[[Any], Json]
    decode: Callable[[Json], Any]
    columns: ColumnsOf | None = None  # the compact form straight from the value (else: columnize(encode(value)))
    plain: bool = False  # the compact form is the JSON form (the tensor graph: readers walk it)


PROGRAM_FIELDS: dict[str, FieldCodec] = {}


def register_program_field(name: str, encode: Callable[[Any], Json], decode: Callable[[Json], Any],
                           columns: ColumnsOf | None = None, plain: bool = False) -> None:
    """Serialize `Program.<name>` as the record's top-level key `name` (and in snapshots).
    A field whose value is None is left out; a field with no codec is not serialized. `columns`,
    when given, makes the field's compact form from the value: `pypto.ir.columns.expand` of it must
    equal `encode(value)`; `plain` keeps the JSON form in the compact one too."""
    PROGRAM_FIELDS[name] = FieldCodec(encode, decode, columns, plain)


def _bindings_json(b: tuple[tuple[str, int], ...]) -> dict[str, int]:
    return dict(b)


def _bindings_from(d: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(d.items()))


register_program_field("graph", graph_json, graph_from, plain=True)
# the dynamic dims a program was lowered for; at the record's top level it is the record's own
# `bindings` (the same values, also known for a compile that stopped at the tensor stage)
register_program_field("bindings", _bindings_json, _bindings_from, plain=True)


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


_SCALARS = frozenset({int, bool, str, float})


def _attrs_columns(attrs: list[Mapping[str, Any]], name: str, arrays: Arrays) -> Json:
    """The spec of `[_tile_attrs_json(a) for a in attrs]`: each distinct attrs (scalars by value and type, the
    others by their JSON form) made once and picked (`{"pick"}`); the generic spec when more than a quarter are
    distinct (what `pypto.ir.columns.table` makes of them)."""
    n = len(attrs)
    rows = list(compress(range(n), attrs))  # most ops have none: only the others are looked at
    table: list[dict[str, Json]] = [{}] if len(rows) < n else []
    codes = np.zeros(n, dtype=np.int64)
    found: dict[Any, int] = {}
    by_dict: dict[int, int] = {}  # id(attrs) -> its code: the tiles of one tensor op share their dict
    text_of: dict[int, str] = {}  # id(value) -> attr_text(value): a matmul's tiles share all but their positions
    inputs_of: dict[int, tuple[Any, list[Json]]] = {}  # id(a matmul's inputs) -> (their key, their JSON)
    row_codes = []
    for i in rows:
        a = attrs[i]
        code = by_dict.get(id(a))
        if code is None:
            types = tuple(map(type, a.values()))
            if _SCALARS.issuperset(types):  # by value and type (1, 1.0 and True are three)
                key: Any = (tuple(a.items()), types)
                entry: dict[str, Json] | None = None
            else:  # by the JSON form itself, each value's text made once per object (the values live meanwhile)
                entry, parts = {}, []
                for k, v in a.items():
                    if k == "inputs":
                        made = inputs_of.get(id(v))
                        if made is None:
                            made = inputs_of[id(v)] = (tuple((r.buffer, r.layout, r.offset, r.shape) for r in v),
                                                       [_region_json(r) for r in v])
                        entry[k] = list(made[1])
                        parts.append((k, made[0]))
                    else:
                        t = text_of.get(id(v))
                        if t is None:
                            t = text_of[id(v)] = attr_text(v)
                        entry[k] = t
                        parts.append((k, t))
                key = tuple(parts)
            code = found.get(key)
            if code is None:
                code = found[key] = len(table)
                table.append(entry if entry is not None else _tile_attrs_json(a))
            by_dict[id(a)] = code
        row_codes.append(code)
    codes[rows] = row_codes
    if n == 0 or len(table) > max(1, int(n * 0.25)):
        return C.encode([table[c] for c in codes.tolist()], name, arrays)
    return C.picks(table, codes, name, arrays)


def _dtypes(dts: list[DataType], name: str, arrays: Arrays) -> Json:
    """The spec of each dtype's short name."""
    return C.labels(dts, _SHORT, name, arrays)


_SHORT = attrgetter("short")


def _regions(rs: list[Region | None]) -> list[Any]:
    return [None if r is None else (r.buffer, r.layout, r.offset, r.shape) for r in rs]


def _region_columns(rs: list[Region | None], name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of a list of regions (`_region_json` each; null for None)."""
    present = list(map(is_not, rs, repeat(None)))
    some: list[Region] = [r for r in rs if r is not None]
    n = len(some)
    # the three int tuples of each region joined end to end, in one compiled pass (an execute graph's 10^5 reads and
    # writes: three passes of a field's getter each, then the lists' joins, were ~0.16 s of gated delta rule's)
    layouts: list[int] = []
    offsets: list[int] = []
    shapes: list[int] = []
    layout_len: list[int] = []
    offset_len: list[int] = []
    shape_len: list[int] = []
    for r in some:
        layouts.extend(r.layout)
        layout_len.append(len(r.layout))
        offsets.extend(r.offset)
        offset_len.append(len(r.offset))
        shapes.extend(r.shape)
        shape_len.append(len(r.shape))
    parts = [C.ints(map(attrgetter("buffer"), some), n, f"{name}.buffer", arrays),
             C.joined_lists(layouts, layout_len, f"{name}.layout", arrays),
             C.joined_lists(offsets, offset_len, f"{name}.offset", arrays),
             C.joined_lists(shapes, shape_len, f"{name}.shape", arrays)]
    return C.nullable(present, C.tuples(parts, n), name, arrays)


def _buffer_columns(bs: tuple[Buffer, ...], name: str, arrays: Arrays) -> Json:
    """`columnize` of `tiles_json`'s buffers, made from the buffers' fields."""
    n = len(bs)
    if n < C.MIN_ROWS:
        return columnize(tiles_json(TileGraph(bs, (), (), ()))["buffers"], name, arrays)

    def get(field: str) -> list[Any]:
        return list(map(attrgetter(field), bs))

    cols = {"id": C.ints(get("id"), n, f"{name}.id", arrays), "shape": C.int_lists(get("shape"), n, f"{name}.shape",
                                                                                    arrays),
            "dtype": _dtypes(get("dtype"), f"{name}.dtype", arrays),
            "kind": C.strs(get("kind"), f"{name}.kind", arrays), "name": C.strs(get("name"), f"{name}.name", arrays),
            "node": C.encode(get("node"), f"{name}.node", arrays)}
    return {C.MARK: C.objects(cols, n)}


def tiles_columns(t: TileGraph, name: str, arrays: Arrays) -> Json:
    """`columnize(tiles_json(t))`, the tile ops' columns made from their fields."""
    ops = t.ops
    n = len(ops)
    if n < C.MIN_ROWS:
        return columnize(tiles_json(t), name, arrays)
    out = columnize(tiles_json(TileGraph((), (), t.instances, t.outputs)), name, arrays)
    out["buffers"] = _buffer_columns(t.buffers, f"{name}.buffers", arrays)

    def get(field: str) -> list[Any]:
        return list(map(attrgetter(field), ops))

    def at(field: str) -> str:
        return f"{name}.ops.{field}"

    def ints(field: str) -> Json:  # straight into numpy, no list between
        return C.ints(map(attrgetter(field), ops), n, at(field), arrays)

    out["ops"] = {
        "id": ints("id"), "op": C.strs(get("op"), at("op"), arrays), "node": ints("node"),
        "instance": ints("instance"),
        "coord": C.int_lists(get("coord"), n, at("coord"), arrays),
        "shape": C.int_lists(get("shape"), n, at("shape"), arrays),
        "dtype": _dtypes(get("dtype"), at("dtype"), arrays),
        "inputs": C.int_lists(get("inputs"), n, at("inputs"), arrays),
        "region": _region_columns(get("region"), at("region"), arrays),
        "attrs": _attrs_columns(get("attrs"), at("attrs"), arrays),
    }
    out["ops"] = {k: {C.MARK: v} for k, v in out["ops"].items()}
    return out


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


_SUBGRAPH_KEYS = ("id", "core", "instance", "ops", "peak_bytes", "leaf")


def subgraphs_columns(sgs: tuple[Subgraph, ...], name: str, arrays: Arrays) -> Json:
    """`columnize(subgraphs_json(sgs))`, the subgraphs' columns made from their fields (the same spec and arrays:
    gated delta rule's 76 k subgraphs in ~0.07 s instead of ~0.3 s through their dicts)."""
    n = len(sgs)
    if n < C.MIN_ROWS:
        return columnize(subgraphs_json(sgs), name, arrays)

    def get(field: str) -> list[Any]:
        return list(map(attrgetter(field), sgs))

    cols = {k: C.ints(get(k), n, f"{name}.{k}", arrays) for k in ("id", "instance", "peak_bytes", "leaf")}
    cols["core"] = C.strs(get("core"), f"{name}.core", arrays)
    cols["ops"] = C.int_lists(get("ops"), n, f"{name}.ops", arrays)
    return {C.MARK: C.objects({k: cols[k] for k in _SUBGRAPH_KEYS}, n)}


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


_TASK_KEYS = ("id", "subgraph", "leaf", "core", "instance", "root", "coord", "reads", "writes", "preds")


def execute_columns(e: ExecGraph, name: str, arrays: Arrays) -> Json:
    """`columnize(execute_json(e))`, the tasks' columns made from their fields."""
    tasks = e.tasks
    n = len(tasks)
    if n < C.MIN_ROWS:
        return columnize(execute_json(e), name, arrays)

    def get(field: str) -> list[Any]:
        return list(map(attrgetter(field), tasks))

    def regions(field: str) -> dict[str, Json]:
        rows = get(field)
        flat = list(chain.from_iterable(rows))
        return {"n": n, "list": _region_columns(flat, f"{name}.tasks.{field}", arrays),
                "lengths": C.ints(map(len, rows), n, f"{name}.tasks.{field}.lengths", arrays)}

    cols = {k: C.ints(get(k), n, f"{name}.tasks.{k}", arrays) for k in ("id", "subgraph", "leaf", "instance", "root")}
    cols["core"] = C.strs(get("core"), f"{name}.tasks.core", arrays)
    cols["coord"] = C.int_lists(get("coord"), n, f"{name}.tasks.coord", arrays)
    cols["reads"], cols["writes"] = regions("reads"), regions("writes")
    ec = e.columns  # the same lists as CSR arrays when the execute stage made them (and its tuples, shared)
    if ec is not None and len(ec.pred_ptr) == n + 1:
        cols["preds"] = C.shared_lists(ec.preds, f"{name}.tasks.preds", arrays, (ec.pred_idx, ec.pred_ptr))
    else:  # a graph read back: the same spec from its tasks' lists
        cols["preds"] = C.shared_lists(get("preds"), f"{name}.tasks.preds", arrays)
    return {"roots": columnize(list(e.roots), f"{name}.roots", arrays),
            "tasks": {C.MARK: C.objects({k: cols[k] for k in _TASK_KEYS}, n)}}


def execute_from(d: Mapping[str, Any]) -> ExecGraph:
    """The execute graph of a record's JSON. Its tasks are numbered 0..n-1 in dependency order, each
    waiting only on tasks before it (what the execute stage makes): every walk over `preds` (the
    boards, health) relies on it, so a file that breaks it — an edited or foreign record, a cycle — is
    refused here with the task named, instead of hanging a reader."""
    for k, t in enumerate(d["tasks"]):
        if t["id"] != k:
            raise ValueError(f"execute graph: task {k} has id {t['id']!r} (ids are 0..n-1 in order)")
        bad = [p for p in t["preds"] if not (isinstance(p, Integral) and 0 <= p < k)]  # type: ignore[operator]
        if bad:
            raise ValueError(f"execute graph: task {k} waits on {bad[0]!r}, which is not a task before it "
                             "(a task waits only on earlier tasks; a cycle or an edited record?)")
    return ExecGraph(tuple(Task(t["id"], t["subgraph"], t["leaf"], t["core"], t["instance"], t["root"],
                                tuple(t["coord"]), tuple(_region_from(r) for r in t["reads"]),  # type: ignore[misc]
                                tuple(_region_from(r) for r in t["writes"]), tuple(t["preds"]))  # type: ignore[misc]
                           for t in d["tasks"]), tuple(d["roots"]))


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}  # a class's dataclass field names (None: not a dataclass)


def _field_names(t: type) -> tuple[str, ...] | None:
    """A class's dataclass field names, in order (None: not a dataclass)."""
    names = _FIELD_NAMES.get(t, ())
    if names == ():
        names = _FIELD_NAMES[t] = tuple(f.name for f in dataclasses.fields(t)) if dataclasses.is_dataclass(t) \
            else None
    return names


def _dc_json(v: Any) -> Json:
    """A frozen dataclass of ints, strs, bools, DataTypes and tuples, as JSON."""
    t = type(v)
    if t is int or t is str or t is bool or v is None:
        return v
    names = _field_names(t)
    if names is not None:
        return {k: _dc_json(getattr(v, k)) for k in names}
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
        return tp(**{k: _dc_from(hints[k], x) for k, x in v.items()})  # type: ignore[union-attr,operator]
    return v


def blocks_json(bs: tuple[Block, ...]) -> list[Json]:
    return [_dc_json(b) for b in bs]


_INSTR_KEYS = ("opcode", "pipe", "tile_op", "dst", "srcs", "flag", "double_buffered", "note")
_OPERAND_KEYS = ("space", "name", "offset", "size", "shape", "dtype", "half", "buffer", "layout", "at")


def blocks_columns(bs: tuple[Block, ...], name: str, arrays: Arrays) -> Json:
    """`columnize(blocks_json(bs))`, a block's instructions' columns made from their fields (the same spec and arrays:
    qat's per-tensor backward's 260 k instructions and 700 k operands without a dict each)."""
    if len(bs) >= C.MIN_ROWS or _field_names(Block) is None or _field_names(Instr) != _INSTR_KEYS \
            or _field_names(Operand) != _OPERAND_KEYS:
        return columnize(blocks_json(bs), name, arrays)
    out: list[Json] = []
    for i, b in enumerate(bs):
        at = f"{name}.{i}"
        doc: dict[str, Json] = {}
        for k in _field_names(Block) or ():
            v = getattr(b, k)
            if k == "instrs" and len(v) >= C.MIN_ROWS:
                doc[k] = {C.MARK: _instr_columns(v, f"{at}.{k}", arrays)}
            else:
                doc[k] = columnize(_dc_json(v), f"{at}.{k}", arrays)
        out.append(doc)
    return out


def _instr_columns(instrs: tuple[Instr, ...], name: str, arrays: Arrays) -> Json:
    """`columns.encode` of the instructions' JSON (dicts of one shape: a column per key, in order)."""
    n = len(instrs)
    cols: dict[str, Json] = {}
    for k in _INSTR_KEYS:
        at = f"{name}.{k}"
        if k == "dst" or k == "srcs":
            cols[k] = _operand_lists([getattr(i, k) for i in instrs], at, arrays)
        elif k == "flag":
            cols[k] = C.encode([None if i.flag is None else list(i.flag) for i in instrs], at, arrays)
        elif k == "tile_op":
            cols[k] = _ints(list(map(attrgetter(k), instrs)), at, arrays)
        elif k == "double_buffered":
            cols[k] = C.encode(list(map(attrgetter(k), instrs)), at, arrays)
        else:
            cols[k] = C.strs(list(map(attrgetter(k), instrs)), at, arrays)
    return C.objects(cols, n)


def _ints(values: list[int], name: str, arrays: Arrays) -> Json:
    """`columns.encode` of Python ints (`columns.ints`, which says `const` of one where `encode` says `int`)."""
    return C.ints(values, len(values), name, arrays) if len(values) >= 2 else C.encode(values, name, arrays)


def _int_lists(rows: list[tuple[int, ...]], name: str, arrays: Arrays) -> Json:
    """`columns.encode` of lists of Python ints (`columns.int_lists`, but for one int in all: see `_ints`)."""
    if sum(map(len, rows)) == 1 or not rows:
        return C.encode([list(r) for r in rows], name, arrays)
    return C.int_lists(rows, len(rows), name, arrays)


def _operand_lists(rows: list[tuple[Operand, ...]], name: str, arrays: Arrays) -> Json:
    """`columns.encode` of lists of operands' JSON (what `columns._lists` makes of them: every position holds
    dicts, so never a tuple of positions)."""
    n = len(rows)
    lengths = list(map(len, rows))
    flat = list(chain.from_iterable(rows))
    at = f"{name}.items"
    if flat:
        m = len(flat)
        cols: dict[str, Json] = {}
        for k in _OPERAND_KEYS:
            where = f"{at}.{k}"
            if k == "dtype":
                cols[k] = _dtypes([o.dtype for o in flat], where, arrays)
            elif k == "shape" or k == "layout" or k == "at":
                cols[k] = _int_lists(list(map(attrgetter(k), flat)), where, arrays)
            elif k == "space" or k == "name":
                cols[k] = C.strs(list(map(attrgetter(k), flat)), where, arrays)
            else:
                cols[k] = _ints(list(map(attrgetter(k), flat)), where, arrays)
        inner: Json = C.objects(cols, m)
    else:
        inner = {"n": 0, "json": []}
    if lengths.count(lengths[0]) == n:
        return {"n": n, "list": inner, "width": lengths[0]}
    return {"n": n, "list": inner, "lengths": C.encode(lengths, f"{name}.lengths", arrays)}


def blocks_from(v: list[Json]) -> tuple[Block, ...]:
    return tuple(_dc_from(Block, b) for b in v)


register_program_field("next_id", int, int, plain=True)
register_program_field("tiles", tiles_json, tiles_from, tiles_columns)
register_program_field("memory", list, tuple)
register_program_field("blocks", blocks_json, blocks_from, blocks_columns)
register_program_field("subgraphs", subgraphs_json, subgraphs_from, subgraphs_columns)
register_program_field("leaves", leaves_json, leaves_from)
register_program_field("execute", execute_json, execute_from, execute_columns)


def program_json(p: Program) -> dict[str, Json]:
    out: dict[str, Json] = {}
    for f in dataclasses.fields(p):
        codec = PROGRAM_FIELDS.get(f.name)
        value = getattr(p, f.name)
        if codec is not None and value is not None:
            out[f.name] = codec.encode(value)
    return out


def field_document(name: str, value: Any, where: str, arrays: Arrays) -> Json:
    """Program field `name`'s compact form: its long lists as columns, named under `where`."""
    codec = PROGRAM_FIELDS[name]
    if codec.plain:
        return codec.encode(value)
    if codec.columns is not None:
        return codec.columns(value, where, arrays)
    return columnize(codec.encode(value), where, arrays)


def program_document(p: Program, where: str, arrays: Arrays, seen: dict[int, tuple[Any, Json]] | None = None,
                     later: list[tuple[str, int]] | None = None) -> dict[str, Json]:
    """`program_json(p)` in its compact form (`pypto.ir.columns`), the columns added to `arrays` under
    names starting with `where`. With `seen` (id of a field's value -> (the value, where it was written)),
    a field already written elsewhere is `{"$same": that place}` instead of a copy: a record's snapshots
    share their unchanged parts (`CompileRecord.to_document`). A field whose columns a forked child is making
    (`tile_ir.columns_coming`) is taken last; with `later`, it is left null and listed there (its name and where its
    arrays go) for the caller to take when it has done more (`take_later`)."""
    out: dict[str, Json] = {}
    coming: list[tuple[str, int]] = []
    for f in dataclasses.fields(p):
        value = getattr(p, f.name)
        if f.name not in PROGRAM_FIELDS or value is None:
            continue
        if seen is not None and f.name not in ("bindings", "next_id"):
            hit = seen.get(id(value))
            if hit is not None and hit[0] is value:
                out[f.name] = {"$same": hit[1]}
                continue
            seen[id(value)] = (value, f"{where}{f.name}")
        if f.name == "tiles" and not where and columns_coming(value):  # (a compile's tile graph: `tile_passes`)
            out[f.name] = None  # its place in the document's order
            coming.append((f.name, len(arrays)))
            continue
        out[f.name] = field_document(f.name, value, f"{where}{f.name}", arrays)
    if later is None:
        take_later(p, where, arrays, out, coming)
    else:
        later.extend(coming)
    return out


def take_later(p: Program, where: str, arrays: Arrays, out: dict[str, Json], later: list[tuple[str, int]]) -> None:
    """The fields `program_document` left for later, taken from the child making them (made here if it failed) into
    `out`, their arrays where they would have been in `arrays`: the document and its columns are as if made in
    order."""
    for name, at in reversed(later):  # the last first: an earlier one's place stays where it was
        value = getattr(p, name)
        coming = take_columns_ahead(value)
        made: Arrays = {}
        if coming is not None:  # the child's: `field_document(name, value, name, ...)` of the final program's field
            out[name], made = coming.get()
        else:
            out[name] = field_document(name, value, f"{where}{name}", made)
        if at == len(arrays):
            arrays.update(made)
        else:
            items = list(arrays.items())
            arrays.clear()
            arrays.update(items[:at])
            arrays.update(made)
            arrays.update(items[at:])


def program_from(d: Mapping[str, Json]) -> Program:
    return Program(**{name: codec.decode(d[name]) for name, codec in PROGRAM_FIELDS.items()
                      if d.get(name) is not None})

