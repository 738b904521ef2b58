"""The CompileRecord: one versioned, JSON-serializable document per compile.

Everything the IDE shows about a compile — the pass strip, the graph panels, the
source ⇄ node lookups of the language server — reads this record, never the compiler's
live objects, so a record written by one process (a worker, the CLI) is as good as one
built in memory. The JSON form is documented field by field in docs/record-schema.md
and as JSON Schema in docs/compile-record.schema.json.

Version 2 stores the long lists (tile ops, tasks, instructions, …) as typed columns
(`pypto.ir.columns`), version 3 the run's (its tasks and counters) too: `to_document()` is the small
JSON document and its numpy arrays,
`write(dir)` puts them in `record.json` and `record.columns.npz`, `read(path)` reads them back;
`to_json()` is the same document with the arrays inline (one self-contained JSON, for small
kernels). `expanded(doc, arrays)` turns a document back into its lists — what version 1
stored, entry for entry — for readers that walk the JSON.

In memory a record keeps each pass's snapshot as the compiler made it (snapshots share
their unchanged nodes, so keeping them all is cheap); the document carries only the
final program unless asked for the snapshots (`include_snapshots=True`: a part a snapshot
shares with the final program or an earlier snapshot is written once, then `{"$same": where}`),
and one snapshot can be serialized on demand (`snapshot_json(index)`).

The JSON forms of the pieces are their layers' own: the IR's in `pypto.ir.serialize`, the
compiler's `Program` and pass entries (and their `VERSION`) in `pypto.compiler.serialize`, the run's in
`pypto.boards.swimlane`; this module assembles them into the record (its own `VERSION`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import marshal
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pypto.boards.core_model import CoreModel
from pypto.boards.profile import run_board
from pypto.boards.swimlane import LaneTask, Swimlane
from pypto.compiler.block import listing
from pypto.compiler.execute_ir import Task
from pypto.compiler.manager import Diagnostic, PassRecord, Program
from pypto.compiler.pipeline import gc_paused, stop_stage
from pypto.compiler.serialize import (
    diagnostic_from,
    pass_json,
    program_document,
    program_from,
    program_json,
    take_later,
)
from pypto.compiler.tile_ir import op_with_id
from pypto.frontend.inputs import example_arguments, has_values, inputs_from
from pypto.frontend.jit import CompiledKernel, read_bindings
from pypto.ir import columns as C
from pypto.ir import dtypes
from pypto.ir import symbolic as S
from pypto.ir.enums import CompStage
from pypto.ir.graph import Graph, Node, TileConfig, scalar_reads
from pypto.ir.serialize import (
    Json,
    dim_json,
    json_safe,
    loc_from,
    loc_json,
    tile_config_from,
    tile_config_json,
)
from pypto.ir.source import Loc, Span
from pypto.target import load as load_board
from pypto.tracing.options import options

SCHEMA = "pypto-ide/compile-record"
VERSION = 3  # 3: the run's long lists are columns too (docs/record-schema.md, Versioning); 2 is read as well
READS = (2, VERSION)
RECORD_FILE = "record.json"
COLUMNS_FILE = "record.columns.npz"  # beside record.json (`CompileRecord.write`)
Arrays = C.Arrays


# ---- the record ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SourceInfo:
    file: str
    kernel: str
    text_sha256: str | None  # of the kernel's file; None when it cannot be read
    options: dict[str, Json]  # the effective options, JSON-safe
    tile_configs: tuple[TileConfig, ...]
    # where the inputs came from when a capture gave them (`pypto-ide capture`): its file, command,
    # time, signature and the parameters it gave; None: the docstring block, annotations, defaults
    inputs_from: dict[str, Json] | None = None
    # the language the kernel is written in: "cann" (`pypto.frontend.jit`) or "pypto3" (`pypto.language`'s
    # `@pl.jit`); both lower into the one pipeline, and the tools read which one a file is from here
    dialect: str = "cann"


def captured_text(source: SourceInfo) -> str | None:
    """`captured from `COMMAND` at TIME (FILE)` when a capture gave the inputs (what the commands print)."""
    src = source.inputs_from
    if not src:
        return None
    changed = "; the kernel has changed since" if src.get("kernel_changed") else ""
    return f"captured from `{src.get('command')}` at {src.get('captured_at')} ({src.get('file')}{changed})"


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

    def to_json(self) -> dict[str, Json]:
        return pass_json(self)

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
        dt = dtypes.from_numpy(value.dtype) if isinstance(value, np.ndarray) else dtypes.from_torch(value.dtype)
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
    out.update(read_bindings(graph, inputs))
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
        return cls.build(ck.name, ck.file, ck.options, passes, program, Program(ck.graph), inputs, binds,
                         dialect=getattr(ck, "dialect", "cann"))

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
              bindings: Mapping[str, int] | None = None, error: ErrorInfo | None = None,
              dialect: str = "cann") -> CompileRecord:
        base = traced.graph if traced is not None else program.graph
        if inputs is not None:
            infos = [_input_info(k, v) for k, v in inputs.items()]
            binds = dict(bindings) if bindings is not None else bind(base, inputs)
        else:
            infos = [InputInfo(p.attrs.get("name", p.name or f"%{p.id}"), p.type.dtype.short,
                               tuple(dim_json(d) for d in p.type.shape))
                     for p in base.params() if p.type is not None]
            binds = dict(bindings or {})
        src = SourceInfo(file, kernel, _file_sha256(file), json_safe(dict(options)), base.tile_configs,
                         dialect=dialect)
        return cls(src, infos, binds, passes, program, traced, error)

    # ---- JSON

    def _head(self) -> dict[str, Json]:
        return {
            "schema": SCHEMA, "version": VERSION,
            "source": {"file": self.source.file, "kernel": self.source.kernel,
                       "text_sha256": self.source.text_sha256, "options": self.source.options,
                       "tile_configs": [tile_config_json(t) for t in self.source.tile_configs],
                       # only when a capture gave the inputs: the document is otherwise as it was
                       **({"inputs_from": self.source.inputs_from} if self.source.inputs_from else {}),
                       # only for a kernel of another dialect than CANN's: a CANN record is as it was
                       **({"dialect": self.source.dialect} if self.source.dialect != "cann" else {})},
            "inputs": [_input_json(i) for i in self.inputs],
            "bindings": dict(self.bindings),
            "passes": [p.to_json() for p in self.passes],
            "error": None if self.error is None else {
                "message": self.error.message, "loc": loc_json(self.error.loc), "pass": self.error.pass_name},
            "run": None,  # in its place: `to_document` writes it, its long lists as columns
            "node_cycles": {str(n): round(c, 3) for n, c in self.node_cycles.items()} or None,
        }

    def to_document(self, include_snapshots: bool = False,
                    run_part: Callable[[], tuple[Json, Arrays]] | None = None) -> tuple[dict[str, Json], Arrays]:
        """The document (version 3) and its columns: a small JSON whose long lists are `{"$columns": spec}`
        (`pypto.ir.columns`), and the numpy arrays they name. With `include_snapshots`, each pass's
        program too (and the traced one); a part a snapshot shares with one written before it (the final
        program first, then `traced`, then the passes in order) is `{"$same": "<where>.<field>"}`. `run_part`:
        gives `run_document_ahead(self.run)`, made elsewhere meanwhile (a job's forked child: `server.analyze`)."""
        arrays: Arrays = {}
        with gc_paused():  # 10^5 small objects, none cyclic
            out = self._head()
            seen: dict[int, tuple[Any, Json]] | None = {} if include_snapshots else None
            later: list[tuple[str, int]] = []  # the tile graph's columns, when a child is making them: taken last
            out.update(program_document(self.program, "", arrays, seen, later))
            if self.run is not None:
                preds = self._shared_preds(out)
                made = _with_preds(run_part(), preds) if run_part is not None else None
                if made is not None:
                    out["run"] = made[0]
                    arrays.update(made[1])
                else:
                    out["run"] = self.run.to_document("run", arrays, preds)
            take_later(self.program, "", arrays, out, later)
            if include_snapshots:
                if self.traced is not None:
                    out["traced"] = program_document(self.traced, "traced.", arrays, seen)
                for p, entry in zip(self.passes, out["passes"]):
                    if p.snapshot is not None:
                        entry["snapshot"] = program_document(p.snapshot, f"passes.{p.index}.", arrays, seen)
        out["columns"] = {"count": len(arrays), "bytes": sum(a.nbytes for a in arrays.values())}
        return out, arrays

    def _shared_preds(self, doc: Mapping[str, Json]) -> Json:
        """The spec of the execute tasks' predecessors in `doc` when the run's are the same lists (the sim
        board's run of this program shares the execute graph's arrays): the run's column names those arrays."""
        tasks, ex = self.run.tasks if self.run is not None else None, self.program.execute
        cols = ex.columns if ex is not None else None
        if cols is None or getattr(tasks, "pred_idx", None) is not cols.pred_idx:
            return None
        stored = (doc.get("execute") or {}).get("tasks")  # a list when short, else columns
        spec = stored.get(C.MARK) if isinstance(stored, dict) else None
        return spec["dict"]["preds"] if isinstance(spec, dict) and "dict" in spec else None

    def to_json(self, include_snapshots: bool = False) -> dict[str, Json]:
        """The document with its columns inline (`columns.inline`): one self-contained JSON.
        Fine for small kernels; a big one is better written as two files (`write`)."""
        doc, arrays = self.to_document(include_snapshots)
        doc["columns"]["inline"] = C.inline(arrays)
        return doc

    def dumps(self, include_snapshots: bool = False, indent: int | None = None) -> str:
        return json.dumps(self.to_json(include_snapshots), indent=indent)

    def write(self, folder: str | os.PathLike[str], include_snapshots: bool = False) -> tuple[Path, Path]:
        """`folder/record.json` (the document, compact) and `folder/record.columns.npz` (its columns)."""
        doc, arrays = self.to_document(include_snapshots)
        return write_document(folder, doc, arrays)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> CompileRecord:
        """The record in `path` (a folder `write` wrote, or its record.json; the columns beside it)."""
        doc, arrays = read_document(path)
        return cls.from_json(doc, arrays)

    @classmethod
    def from_json(cls, d: Mapping[str, Json], arrays: Mapping[str, np.ndarray] | None = None) -> CompileRecord:
        """The record of a document (version 2 or 3): its columns inline, or given as `arrays` (`to_document`,
        `read_document`)."""
        d = expanded(d, arrays)
        s = d["source"]
        src = SourceInfo(s["file"], s["kernel"], s.get("text_sha256"), dict(s.get("options", {})),
                         tuple(tile_config_from(t) for t in s.get("tile_configs", ())), s.get("inputs_from"),
                         str(s.get("dialect", "cann")))
        inputs = [InputInfo(i["name"], i.get("dtype"), tuple(i["shape"]) if i.get("shape") is not None else None,
                            i.get("value")) for i in d["inputs"]]
        err = d.get("error")
        error = None if err is None else ErrorInfo(err["message"], loc_from(err.get("loc", ())), err.get("pass"))
        traced = d.get("traced")
        run = d.get("run")
        with gc_paused():
            return cls(src, inputs, dict(d["bindings"]), [PassInfo.from_json(p) for p in d["passes"]],
                       program_from(d), program_from(traced) if traced is not None else None, error,
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

    @cached_property
    def instruction_costs(self) -> list[tuple[int | None, str, str, float]]:
        """(tensor node, pipe, opcode, cycles over every task of its leaf) of each working
        instruction, on the sim board's core model (uncontended, GM reads missing L2): where a
        program's work goes, even inside fused leaves. Empty before the block stage."""
        p = self.program
        if p.blocks is None or p.tiles is None:
            return []
        model = CoreModel(p.blocks, load_board("a2a3"))
        tiles = p.tiles
        return [(None if (o := op_with_id(tiles, ins.tile_op)) is None else o.node, pipe, ins.opcode, cycles * b.tasks)
                for b in p.blocks for ins, pipe, cycles in model.instruction_cycles(b.leaf)]

    @cached_property
    def node_cycles(self) -> dict[int, float]:
        """Per tensor node: its instructions' cycles (`instruction_costs`) — the graph's overlay."""
        out: dict[int, float] = {}
        for node, _, _, cycles in self.instruction_costs:
            if node is not None:
                out[node] = out.get(node, 0.0) + cycles
        return out

    def listing(self, leaf: int) -> str:
        """The PTO-ISA-style listing of leaf function `leaf` (block stage on)."""
        assert self.program.blocks is not None, "this compile stopped before the block stage"
        return listing(self.program.blocks[leaf], self.program)

    def listings(self) -> list[str]:
        """Every leaf function's listing, in leaf order (block stage on): the tensor nodes looked up once, not per
        leaf (gated delta rule's 104 leaves walked its graph 104 times)."""
        assert self.program.blocks is not None, "this compile stopped before the block stage"
        nodes = self.program.graph.by_id()
        return [listing(b, self.program, nodes) for b in self.program.blocks]

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


# ---- documents: the JSON and its columns (versions 2 and 3) ----------------------------------------

def check_document(d: Mapping[str, Json]) -> None:
    """Refuse what is not a compile record this pypto reads, saying what it is."""
    if d.get("schema") != SCHEMA:
        raise ValueError(f"not a compile record (schema {d.get('schema')!r}, expected {SCHEMA!r})")
    version = d.get("version")
    if version == 1:
        raise ValueError("this is a version-1 compile record (one JSON document of lists, written by an older "
                         f"pypto-ide); this pypto reads version {VERSION} (its long lists stored as typed columns): "
                         "compile the kernel again, e.g. `pypto-ide compile FILE --record DIR`")
    if version not in READS:
        raise ValueError(f"compile record version {version!r}; this pypto reads versions {', '.join(map(str, READS))}")


def document_arrays(d: Mapping[str, Json], arrays: Mapping[str, np.ndarray] | None = None) -> Mapping[str, np.ndarray]:
    """The columns of a document: `arrays` when given, else the document's inline ones."""
    if arrays is not None:
        return arrays
    cols = d.get("columns") or {}
    if "inline" in cols:
        return C.from_inline(cols["inline"])
    if cols.get("count", 0) == 0:
        return {}
    where = cols.get("file") or COLUMNS_FILE
    raise ValueError(f"this record's {cols.get('count')} columns are not in the document but in {where} beside "
                     "it: read the folder with CompileRecord.read(path)")


def expanded(d: Mapping[str, Json], arrays: Mapping[str, np.ndarray] | None = None,
             leave_out: frozenset[str] = frozenset(), rows: frozenset[str] = frozenset()) -> dict[str, Json]:
    """A document as lists — every `{"$columns"}` rebuilt, every `{"$same"}` resolved, no `columns` — the
    content version 1 stored, for readers that walk the JSON (the panels). `leave_out`: dotted paths of the
    final program (or of `run`: `run.tasks.preds`) whose columns stand as Nones; `rows`: dotted paths of the
    final program's lists of objects that stay columns, `{"$rows": …}` (`pypto.ir.columns.expand`)."""
    check_document(d)
    cols = document_arrays(d, arrays)
    with gc_paused():
        out = {k: v for k, v in d.items() if k != "columns"}
        done: dict[str, Json] = {}
        in_rows: dict[str, Json] = {}  # a final program's field some of whose lists stay columns: its stored value

        def program(p: Mapping[str, Json], where: str) -> dict[str, Json]:
            prog: dict[str, Json] = {}
            for k, v in p.items():
                if isinstance(v, dict) and set(v) == {"$same"}:
                    if v["$same"] not in done:
                        raise ValueError(f"{where}{k} refers to {v['$same']!r}, which is not written before it")
                    same = v["$same"]
                    # (a snapshot gets lists, as without `rows`: made from the stored value once more)
                    prog[k] = C.expand(in_rows[same], cols, leave_out, same) if same in in_rows else done[same]
                else:
                    mine = frozenset() if where else frozenset(r for r in rows if r == k or r.startswith(k + "."))
                    prog[k] = C.expand(v, cols, leave_out if not where else frozenset(), k, rows=mine)
                    if mine:
                        in_rows[k] = v
                done[f"{where}{k}"] = prog[k]
            return prog

        top = program({k: v for k, v in out.items() if k not in _NOT_PROGRAM}, "")
        out.update(top)
        if out.get("traced") is not None:
            out["traced"] = program(out["traced"], "traced.")
        passes = []
        for p in out.get("passes") or ():
            if p.get("snapshot") is not None:
                p = {**p, "snapshot": program(p["snapshot"], f"passes.{p['index']}.")}
            passes.append(p)
        out["passes"] = passes
        if isinstance(out.get("run"), dict):  # version 3: the run's long lists are columns too
            out["run"] = C.expand(out["run"], cols, leave_out, "run")
    return out


_NOT_PROGRAM = frozenset({"schema", "version", "source", "inputs", "bindings", "passes", "error", "run",
                          "node_cycles", "traced", "columns"})


def write_document(folder: str | os.PathLike[str], doc: Mapping[str, Json],
                   arrays: Mapping[str, np.ndarray]) -> tuple[Path, Path]:
    """`folder/record.json` and `folder/record.columns.npz` (`CompileRecord.write`)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    head = {**doc, "columns": {**doc.get("columns", {}), "file": COLUMNS_FILE}}
    head["columns"].pop("inline", None)
    (out / COLUMNS_FILE).write_bytes(C.npz_bytes(arrays))
    (out / RECORD_FILE).write_text(json.dumps(head, separators=(",", ":")))
    return out / RECORD_FILE, out / COLUMNS_FILE


def read_document(path: str | os.PathLike[str]) -> tuple[dict[str, Json], Arrays]:
    """The document and columns in `path`: a folder `write_document` wrote, or its record.json."""
    p = Path(path)
    doc_path = p / RECORD_FILE if p.is_dir() else p
    doc = json.loads(doc_path.read_text())
    check_document(doc)
    cols = doc.get("columns") or {}
    if "inline" in cols:
        return doc, C.from_inline(cols["inline"])
    if not cols.get("count"):
        return doc, {}
    return doc, C.read_npz(doc_path.parent / (cols.get("file") or COLUMNS_FILE))


# ---- profiling: a record with its run -----------------------------------------------------------

def profile(record: CompileRecord, board: str = "sim", inputs: Mapping[str, np.ndarray] | None = None,
            workers: int | None = None) -> CompileRecord:
    """The record with `run` set: its program profiled on `board` (`pypto.boards.profile.run_board`:
    `sim` simulates the A2/A3 chip, `cpu` measures this machine's cores; options from the record)."""
    if record.program.execute is None:
        raise ValueError("profiling needs a compile through the execute stage")
    rt = record.source.options.get("runtime_options", {}) if isinstance(record.source.options, dict) else {}
    _, sl = run_board(record.program, board, inputs, rt, workers)
    return dataclasses.replace(record, run=sl)


def slowest(record: CompileRecord | None, sl: Swimlane, count: int = 5) -> list[tuple[LaneTask, str]]:
    """The `count` longest tasks and the source lines they run (`file:line op, …`)."""
    out = []
    for t in sorted(sl.tasks, key=lambda t: (-t.duration, t.id))[:count]:
        where = ""
        if record is not None and record.program.execute is not None and t.id < len(record.program.execute.tasks):
            spans = record.source_of_task(t.id)
            where = ", ".join(sorted({f"{s.file.rsplit('/', 1)[-1]}:{s.line}" for s in spans}))
        out.append((t, where))
    return out



# ---- compiling a kernel into a record (what the CLI and the language server call) ---------------

def stage_option(stage: str) -> Any:
    """The `host_options["compile_stage"]` value that stops compiling after `stage`."""
    for cs in CompStage:
        if stop_stage({"host_options": {"compile_stage": cs}}) == stage:
            return cs
    raise ValueError(f"unknown stage {stage!r}")


def compile_record(kernel: Any, inputs: Mapping[str, Any] | None = None, stage: str | None = None) -> CompileRecord:
    """Compile `kernel` (a JitKernel) for `inputs` (parameter name -> argument; default: its
    example inputs, see `pypto.frontend.inputs`) through `stage` (default: every stage) without running
    it, and return the record. A user mistake raises PyptoError (with `records` attached when
    a pass found it). `compile_for` also returns the arguments it compiled for."""
    return compile_for(kernel, inputs, stage)[0]


def compile_for(kernel: Any, inputs: Mapping[str, Any] | None = None, stage: str | None = None
                ) -> tuple[CompileRecord, Mapping[str, Any]]:
    """`compile_record`, and the arguments the record was compiled for.

    The default inputs are made without values (`example_arguments(values=False)`: a compile reads
    shapes and dtypes; a generated tensor of a production size would take seconds to fill). Where the
    kernel reads scalars from an input that has none (a `NoValues` placeholder, given or made), the
    inputs are made again with their values, which fix what the later stages lower. Either way the
    record is the same. The sim board needs no values either; the cpu board and a precision check
    do: give them `example_arguments(kernel)`."""
    t = trace_for(kernel, inputs, stage)
    return t.lowered(), t.made


_PREDS_LATER: Json = {"preds": "later"}  # in a run document made ahead: the tasks' predecessors, filled in after


def run_document_ahead(run: Swimlane) -> tuple[Json, Arrays]:
    """The run's part of its record's document (`CompileRecord.to_document`) and its columns, its tasks'
    predecessors left to fill in: they may be the execute graph's, which the document stores before it
    (`_shared_preds`). What a job's forked child makes while the job makes the rest of the document."""
    arrays: Arrays = {}
    with gc_paused():
        return run.to_document("run", arrays, _PREDS_LATER), arrays


def _with_preds(made: tuple[Json, Arrays], preds: Json) -> tuple[Json, Arrays] | None:
    """A run document made ahead with its predecessors' spec `preds` filled in: what `to_document` makes when given
    them (None when it would have stored them itself: then it is made again, here)."""
    doc, arrays = made
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    if not isinstance(tasks, dict) or tasks.get("preds") != {C.MARK: _PREDS_LATER}:
        return made  # the tasks' lists hold their predecessors (a short run, or one of LaneTasks)
    if preds is None:
        return None
    tasks["preds"] = {C.MARK: preds}
    return doc, arrays


@dataclass(frozen=True)
class Traced:
    """A kernel traced and through its tensor stage for some arguments (`trace_for`): what the later stages
    lower, and what `compile_for`'s record is made of."""

    kernel: CompiledKernel
    args: dict[str, Any]  # the arguments compiled for (remade with values where the kernel reads scalars)
    made: Mapping[str, Any]  # what `compile_for` returns: the inputs given or made
    bindings: dict[str, int]
    origin: dict[str, Any] | None  # the capture the inputs came from

    def lowered(self) -> CompileRecord:
        """Through the later stages (unless the options stop at the tensor stage): `compile_for`'s record."""
        if stop_stage(self.kernel.options) != "tensor" and hasattr(self.kernel, "lower"):
            self.kernel.lower(self.bindings)
        return self.record()

    @property
    def text_sha256(self) -> str | None:
        """The hash of the kernel's file as its record gives it (`SourceInfo.text_sha256`)."""
        return _file_sha256(self.kernel.file)

    def record(self) -> CompileRecord:
        """The record: through every stage the kernel was lowered for (`CompiledKernel.lower`), else the tensor
        stage's."""
        record = CompileRecord.from_compiled(self.kernel, self.args, self.bindings)
        if self.origin is not None:
            record = dataclasses.replace(record, source=dataclasses.replace(record.source, inputs_from=self.origin))
        return record

    def fingerprint(self, context: Json = None) -> str:
        """A hash of everything the stages after the tensor stage, the board's run and the record read
        (`program_fingerprint`) and of `context`: what else the caller's answer depends on, as JSON. Two traces of
        one fingerprint lower to one program, so a later edit whose trace has the fingerprint of the last compile
        (a comment, a helper it does not call, a tile-shape call it does not reach) may reuse that compile's
        answer (docs/ARCHITECTURE.md, "The compile cache")."""
        return hashlib.sha256(json.dumps([self.program_fingerprint, context], sort_keys=True,
                                         default=repr).encode()).hexdigest()

    @cached_property
    def program_fingerprint(self) -> str:
        """A hash of the traced program alone, but the kernel file's hash, whether the kernel's text changed since
        its capture, and the passes' timings: the traced graph and every tensor pass's snapshot with their source
        spans, the options, the inputs and bindings, the capture. Answers made with other settings from one
        program share it (a compile's and the panels' record job's: `server.live`)."""
        ck = self.kernel
        passes = [PassInfo.from_pass_record(r) for r in ck.passes]
        rec = CompileRecord.build(ck.name, ck.file, ck.options, passes, ck.program, Program(ck.graph), self.args,
                                  self.bindings, dialect=getattr(ck, "dialect", "cann"))
        doc, arrays = rec.to_document(include_snapshots=True)
        doc["source"]["text_sha256"] = None
        for p in doc["passes"]:
            p["seconds"] = None
        doc["source"].pop("inputs_from", None)
        origin = {k: v for k, v in (self.origin or {}).items() if k != "kernel_changed"}  # (the text's, like its hash)
        h = hashlib.sha256(canonical_bytes([doc, origin]))
        for name in sorted(arrays):
            h.update(name.encode())
            h.update(np.ascontiguousarray(arrays[name]).tobytes())
        return h.hexdigest()


def canonical_bytes(value: Any) -> bytes:
    """Bytes that stand for a JSON-like value in a hash: marshal's version 0 (no back-references and no interning
    marks, so a value built by the same code gives the same bytes in every process; at hc_pre's 0.9 MB fingerprint
    0.008 s against 0.04 s for sorted JSON), or sorted JSON for a value marshal does not take. Equal bytes mean
    equal values; a dict filled in another order gives other bytes (a compile is then not reused, never wrongly)."""
    try:
        return marshal.dumps(value, 0)
    except ValueError:  # an object marshal does not know (JSON's `repr` of it)
        return json.dumps(value, sort_keys=True, default=repr).encode()


def trace_for(kernel: Any, inputs: Mapping[str, Any] | None = None, stage: str | None = None) -> Traced:
    """`compile_for`'s first half: the kernel traced and through its tensor stage (cached on the kernel, so
    `compile_for` after it does not trace again), the arguments it was compiled for and its bindings."""
    made = inputs if inputs is not None else example_arguments(kernel, values=False)
    origin = inputs_from(made)  # a capture's inputs (example_arguments says which), recorded in source
    args = dict(made)
    scope = options(host_options={"compile_stage": stage_option(stage)}) if stage else contextlib.nullcontext()
    with scope:
        ck = kernel.compile(**args)
    if any(not has_values(args.get(name)) for name in scalar_reads(ck.graph)):
        made = example_arguments(kernel)
        args = dict(made)
    return Traced(ck, args, made, bind(ck.graph, args), origin)
