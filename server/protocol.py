"""The pypto/* wire format: one typed definition of every custom message (docs/protocol.md).

The panels (graph, swimlane, report) talk to the language server with a few custom
JSON-RPC messages next to LSP. Their params and results are attrs classes here, as
lsprotocol defines LSP's own, and one cattrs converter turns them into JSON and back:
snake_case fields become camelCase keys (`makespan_us` -> `makespanUs`); every field is
always present (null when empty); structuring is strict — a string where a number
belongs, a missing `uri`, an unknown `level` raise `ParamsError`, which the server
answers with a JSON-RPC InvalidParams error instead of guessing. No key is a Python
keyword (pygls hands unknown messages' params over as namedtuples, which rename those).
Positions and ranges are LSP's: 0-based lines, columns as negotiated (UTF-16 by
default; for ASCII source they equal Python's).
"""

from __future__ import annotations

import typing
from typing import Any, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from server import panel_data

RECORD_CHANGED = "pypto/recordChanged"
GRAPH = "pypto/graph"
SWIMLANE = "pypto/swimlane"
PRECISION = "pypto/precision"
HEALTH = "pypto/health"
SUGGESTIONS = "pypto/suggestions"
NODES_AT = "pypto/nodesAt"
SOURCE_OF = "pypto/sourceOf"
RECORD = "pypto/record"
PASS = "pypto/pass"
TILE_OPS = "pypto/tileOps"
TILE_GRIDS = "pypto/tileGrids"
BLOCK = "pypto/block"
REPORT = "pypto/report"
COMPILE = "pypto/compile"
LOAD_TRACE = "pypto/loadTrace"
PASS_DUMP = "pypto/passDump"
PASS_DUMP_PASS = "pypto/passDumpPass"
COMPILE_STATE = "pypto/compileState"
COMPILED_AHEAD = "pypto/compiledAhead"
SEARCH_PROGRESS = "pypto/searchProgress"
HISTORY = "pypto/history"
PIN_BASELINE = "pypto/pinBaseline"
HISTORY_RUN = "pypto/historyRun"
COMMANDS = ("pypto.openGraph", "pypto.openSwimlane", "pypto.openReport")
SECTION = "pypto"  # the workspace/configuration section

# What one answer carries at most (docs/protocol.md "Bounds"): a request asking for more gets
# these; more detail is had by paging (a narrower swimlane window, a graph group expanded, the
# next `offset` of a pass's graph).
MAX_BINS = 1_000  # pypto/swimlane: bins per lane
MAX_BOXES = 20_000  # pypto/swimlane: task boxes (a window holding more tasks is answered with bins)
MAX_NODES = 5_000  # pypto/graph: nodes (a graph with more is aggregated into groups)
MAX_PASS_NODES = 20_000  # pypto/pass: graph nodes in one page (loop bodies included)
MAX_SLOWEST = 1_000  # pypto/swimlane: the run's slowest tasks in one answer
MAX_LINKED = panel_data.MAX_LINKED  # pypto/swimlane: the tasks of one `around` dependency cone
MAX_DEPTH = panel_data.MAX_DEPTH  # pypto/swimlane: its levels
MAX_MATCH_RANGES = panel_data.MAX_MATCH_RANGES  # pypto/swimlane: id ranges of one `match`
# pypto/tileOps: tile ops in one answer — the bound of the implementation both servers share
MAX_TILE_OPS = panel_data.MAX_TILE_OPS

Json = Any


class ParamsError(ValueError):
    """Params that do not match the message's type (answered with InvalidParams)."""


# ---- settings ------------------------------------------------------------------------------------

@attrs.define
class Settings:
    """`workspace/configuration` section "pypto" (or `initializationOptions`, same keys)."""

    board: Literal["sim", "cpu"] = "sim"
    debounce_ms: int = 300  # quiet time after a change before recompiling
    time_limit: float = 60.0  # seconds per kernel compile in a worker
    memory_limit_mb: int = 4096  # per worker process, above its size at start (server.worker.MEMORY_LIMIT_MB)
    tile_search_budget: int | None = None  # advisor candidates (None: its default)
    tile_search_seconds: float | None = 10.0  # the advisor's wall-clock budget per search (None: no limit)
    # the bound of each compile's check of the advice's tile shapes (None: none); a finding whose check it cut offers a
    # longer one (`pypto.checkAdvice`)
    advice_seconds: float | None = 10.0
    workers: int = 2  # worker processes
    suggest: bool = False  # run the advisor with every compile (else lazily, on a code action)
    precision: bool = False  # run the precision diff with every compile
    progress_delay_ms: int = 500  # show $/progress for updates running longer than this
    # tile ops from which a kernel with no record yet (an open) shows its tensor graph while it lowers (0: never)
    graph_first_from: int = 500_000
    # edits of the tile-shape call under the cursor (each entry halved or doubled) compiled ahead, in the background,
    # when the cursor rests on it (0: none; `server.live.LiveCompiler.compile_ahead`)
    compile_ahead: int = 0
    log_level: Literal["error", "warning", "info", "debug"] = "info"  # what window/logMessage carries

    def analysis(self) -> dict[str, Json]:
        """What a worker's analyze_kernel reads (and the analysis cache key)."""
        return {"board": self.board, "precision": self.precision, "suggest": self.suggest,
                "tile_search_budget": self.tile_search_budget, "tile_search_seconds": self.tile_search_seconds,
                "advice_seconds": self.advice_seconds}


# ---- notifications -------------------------------------------------------------------------------

@attrs.define
class Summary:
    board: str
    clock: str
    makespan_us: float
    tasks: int
    utilization: float
    core_utilization: dict[str, float]
    bound: str
    why: str
    tile_ops: int
    leaves: int


@attrs.define
class KernelError:
    """Why a kernel has no record: a compile error (rule) or a worker failure (worker.<kind>)."""

    message: str
    code: str  # "compile.error", "inputs.missing", "worker.timeout", …
    range: lsp.Range


@attrs.define
class BestGain:
    """The best verified gain a kernel's advice offers: the top of the health panel's advice list."""

    speedup: float  # the kernel as written against the advice's shape, simulated on `board`
    clock: str  # "simulated" (the word the summary's clock starts with)
    board: str  # the board that checked it
    shape: str  # the call(s) the advice writes, e.g. "pypto.set_vec_tile_shapes(16, 200)"
    line: int | None  # 1-based line of the call it changes in this document; None: elsewhere or unknown


@attrs.define
class RecordChangedParams:
    uri: str
    kernel: str
    version: int  # the document version the record is valid for
    range: lsp.Range  # the kernel's `def` line
    summary: Summary | None
    error: KernelError | None
    seconds: float  # the job: waiting for a worker (or starting one), compiling, profiling, indexing
    # the record before the board has checked the advice's tile shapes: a second notification for the same
    # version (interim false) follows with the checked advice; the record itself is the same
    interim: bool = False
    # the best verified gain the kernel's advice offers (the CodeLens's "best advice"); None while interim,
    # stale or without a faster checked shape. A tile search that finishes with a better one re-sends the
    # same version's record, only this changed.
    best_gain: BestGain | None = None
    # the kernel's traced program was the one its last record was made from (an edit of a comment, of code it
    # does not call, of a tile-shape call it does not reach): the stages after the tensor stage, the board's
    # run and the views are that record's, not made again (docs/ARCHITECTURE.md, "The compile cache")
    reused: bool = False
    # the tile ops the kernel is being lowered to: the record (interim, no summary) is its tensor stage's, shown while
    # a big kernel with no record yet lowers (`graphFirstFrom`); the record of the whole compile follows
    lowering: int | None = None


@attrs.define
class CompileStateParams:
    """A compile of some of a document's kernels started, or the update running them ended."""

    uri: str
    version: int
    kernels: list[str]  # the kernels this update compiles
    state: Literal["started", "finished"]
    document_kernels: list[str]  # every kernel of the document's latest parsed version


@attrs.define
class CompiledAheadParams:
    """The edits of a tile-shape call that the cursor rested on were compiled ahead (the `compileAhead` setting): an
    edit whose traced program is one of theirs reuses that answer (its `recordChanged` says `reused`)."""

    uri: str
    version: int  # the document version they are edits of
    kernel: str
    line: int  # 1-based line of the call
    tried: int  # edits compiled
    compiled: int  # of them, programs new to the server and answered without an error (kept)


@attrs.define
class SearchProgressParams:
    """The tile search of a kernel is running: how far it got and the best shape found so far
    (sent at most twice a second while an on-demand advisor job runs)."""

    uri: str
    kernel: str
    version: int  # the document version the search compiles
    searched: int  # shapes simulated so far
    space: int  # legal-looking shapes in all
    seconds: float  # since the search started
    baseline_us: float | None  # the kernel as written (simulated)
    best_us: float | None  # the fastest shape so far (simulated); the baseline when none is faster
    best: str  # that shape's call(s), "" when it is the kernel as written


# ---- requests ------------------------------------------------------------------------------------

@attrs.define
class KernelParams:
    uri: str
    kernel: str


@attrs.define
class GraphParams:
    uri: str
    kernel: str
    after_pass: int | str | None = None  # the graph after this pass (index or name); None: the final graph
    level: Literal["tensor", "tile"] = "tensor"
    max_nodes: int = 200  # above this the graph is aggregated into groups (at most MAX_NODES)
    expand: list[str] = attrs.Factory(list)  # group ids to drill into


@attrs.define
class GraphNode:
    id: str  # "n<node id>" for tensor nodes, "t<tile op id>" for tile ops, "g:…" for groups
    kind: Literal["node", "group"]
    op: str
    label: str
    shape: list[int | str] | None
    dtype: str | None
    parent: str | None  # the group it belongs to (loop body or expanded group)
    count: int  # nodes inside (1 for a node)
    range: lsp.Range | None  # its source line in this document


@attrs.define
class GraphEdge:
    source: str
    target: str
    count: int  # edges merged into this one (aggregated graphs)


@attrs.define
class PassInfo:
    index: int
    name: str
    stage: str
    changed: bool


@attrs.define
class GraphResult:
    uri: str
    kernel: str
    version: int
    after_pass: PassInfo | None
    passes: list[PassInfo]
    level: str
    aggregated: bool
    total_nodes: int
    nodes: list[GraphNode]
    edges: list[GraphEdge]


@attrs.define
class SwimlaneParams:
    uri: str
    kernel: str
    start: float | None = None  # µs; None: the start of the run
    end: float | None = None  # µs; None: its end
    max_boxes: int = 2000  # more tasks than this in the window: bins instead of boxes (at most MAX_BOXES)
    bins: int = 200  # bins per lane at the coarse level of detail (at most MAX_BINS)
    slowest: int = 0  # also the run's this many longest tasks, whatever the window (at most MAX_SLOWEST)
    around: int | None = None  # a task id: also it and its predecessors and successors to `depth`, in view or not
    depth: int = 1  # levels of that dependency cone (at most MAX_DEPTH; at most MAX_LINKED tasks)
    match: list[list[int]] | None = None  # task id ranges [first, last]: where those tasks are (<= MAX_MATCH_RANGES)


@attrs.define
class Lane:
    name: str
    core: str


@attrs.define
class Box:
    task: int
    lane: int
    start: float
    end: float
    leaf: int
    preds: list[int] = attrs.Factory(list)  # its predecessors' task ids
    profile: int = -1  # its pipe profile: an index into the answer's `profiles` (-1: none sent)
    held: list[int] = attrs.Factory(list)  # the other lanes it holds (a MIX task: its cluster's AIVs)


@attrs.define
class Bin:
    lane: int
    start: float
    end: float
    busy: float  # share of the bin the lane was running tasks
    tasks: int  # tasks overlapping the bin


@attrs.define
class SwimlaneResult:
    uri: str
    kernel: str
    version: int
    board: str
    clock: str
    makespan_us: float
    start: float
    end: float
    detail: Literal["boxes", "bins"]
    total_tasks: int
    window_tasks: int
    lanes: list[Lane]
    boxes: list[Box]
    bins: list[Bin]
    metrics: dict[str, Json]
    bin_count: int = 0  # bins per lane in force (the request's, at most MAX_BINS)
    max_boxes: int = 0  # the box limit in force (the request's, at most MAX_BOXES)
    slowest: list[Box] = attrs.Factory(list)  # the run's longest tasks, longest first (`slowest` asked)
    profiles: list[dict[str, list[list[float]]]] = attrs.Factory(list)  # the boxes' pipe profiles (boxes only)
    counters: dict[str, list[list[float]]] = attrs.Factory(dict)  # ready counters clipped to the window (boxes only)
    linked: list[Box] = attrs.Factory(list)  # `around` and its dependency cone, nearest first
    matched: int = 0  # tasks of the run in `match`
    matched_in_window: int = 0  # of those, in the window
    first_match: Box | None = None  # the earliest-starting of them
    match_bins: list[Bin] = attrs.Factory(list)  # bins of them (detail "bins" only)


@attrs.define
class TextEditInfo:
    range: lsp.Range
    new_text: str


@attrs.define
class Finding:
    rule: str
    severity: str
    level: str
    title: str
    why: str
    suggestion: str
    range: lsp.Range | None
    numbers: dict[str, Json]
    edits: list[TextEditInfo]


@attrs.define
class HealthResult:
    uri: str
    kernel: str
    version: int
    findings: list[Finding]
    stats: dict[str, Json]


@attrs.define
class Suggestion:
    rank: int
    text: str  # the new call
    reason: str
    makespan_before_us: float
    makespan_after_us: float
    speedup: float
    edits: list[TextEditInfo]


@attrs.define
class SuggestionsResult:
    uri: str
    kernel: str
    version: int
    suggestions: list[Suggestion]
    # how far the search got: {"searched", "space", "stopped": "time" | "budget" | "explored", "seconds"}
    search: dict[str, Json] | None = None


@attrs.define
class PrecisionRow:
    after_pass: str
    op: str
    node: int
    passed: bool
    max_abs: float | str | None
    max_rel: float | str | None
    range: lsp.Range | None


@attrs.define
class PrecisionResult:
    uri: str
    kernel: str
    version: int
    passed: bool | None
    first_failing_pass: str | None
    failures: list[PrecisionRow]
    report: dict[str, Json]  # the full precision report JSON (pypto.analysis.precision)


@attrs.define
class NodesAtParams:
    uri: str
    position: lsp.Position


@attrs.define
class NodeInfo:
    id: int
    op: str
    shape: list[int | str] | None
    dtype: str | None
    tiles: int
    tile_shape: list[int] | None


@attrs.define
class KernelNodes:
    kernel: str
    version: int
    nodes: list[NodeInfo]
    tasks: list[list[int]]  # task ids as inclusive [first, last] runs
    task_count: int
    leaves: list[int]


@attrs.define
class NodesAtResult:
    uri: str
    line: int
    kernels: list[KernelNodes]


@attrs.define
class SourceOfParams:
    uri: str
    kernel: str
    task: int | None = None
    node: int | None = None


@attrs.define
class SourceOfResult:
    kernel: str
    version: int
    nodes: list[int]
    locations: list[lsp.Location]  # innermost frame first, then the lines calling it


@attrs.frozen
class RawJson:
    """A value already turned into JSON text: what the language server sends as it is (`server.lsp._serialize`)."""

    text: str


@attrs.define
class RecordResult:
    """The kernel's CompileRecord JSON (docs/record-schema.md, with its `run`; `traced` and each
    pass's `snapshot` are not included: `pypto/pass` answers them) and each leaf's PTO listing. The record may
    come as its JSON text already (`RawJson`: made once per compile for every panel that asks)."""

    uri: str
    kernel: str
    version: int
    record: dict[str, Json] | RawJson
    listings: list[str] | None
    baseline: dict[str, Json] | None = None  # the pinned baseline: {"entry", "run"} (pypto/pinBaseline)
    history: list[dict[str, Json]] | None = None  # the kernel's last compiles (at most 50), oldest first


@attrs.define
class PinParams:
    uri: str
    kernel: str
    pin: bool  # true: pin a run as the kernel's baseline; false: no baseline
    entry: int | None = None  # pin this history entry (its `id`); null: the kernel's current run


@attrs.define
class HistoryRunParams:
    uri: str
    kernel: str
    entry: int  # a history entry's `id`


@attrs.define
class HistoryRunResult:
    """One history entry and its swimlane (null when only its figures are kept)."""

    uri: str
    kernel: str
    entry: dict[str, Json]
    run: dict[str, Json] | None


@attrs.define
class HistoryResult:
    """The kernel's compiles kept on disk (oldest first) and its pinned baseline's entry."""

    uri: str
    kernel: str
    entries: list[dict[str, Json]]
    baseline: dict[str, Json] | None  # the entry pinned, or null


@attrs.define
class PassParams:
    uri: str
    kernel: str
    index: int  # a pass index (`record.passes[i].index`), or -1: the traced program
    offset: int = 0  # the page: the graph's top-level nodes from this one (a previous answer's nextOffset)
    max_nodes: int = MAX_PASS_NODES  # nodes in the page, loop bodies included (at most MAX_PASS_NODES)


@attrs.define
class PassResult:
    uri: str
    kernel: str
    version: int
    index: int
    snapshot: dict[str, Json] | None  # {"graph": the tensor graph after the pass (this page of its nodes)}
    total_nodes: int = 0  # top-level nodes of the whole graph
    offset: int = 0  # the first top-level node of this page
    next_offset: int | None = None  # the next page's offset; null: this page ends the graph


@attrs.define
class TileOpsParams:
    uri: str
    kernel: str
    # tile op indices (positions in `record.tiles.ops`), at most MAX_TILE_OPS; or, with `ops` empty, the ops of one
    # cell of a tile grid (`pypto/tileGrids`): its tensor node and the cell's row-major index
    ops: list[int] = attrs.Factory(list)
    node: int | None = None
    cell: int | None = None


@attrs.define
class TileOpsResult:
    """Tile ops, in the order asked (a cell's: its ops in program order): what a slim record left out of `tiles.ops`
    (and `memory`) for them, and their subgraph (-1: none)."""

    uri: str
    kernel: str
    version: int
    ops: list[int]
    shape: list[list[int]]
    dtype: list[str]
    memory: list[str | None]
    id: list[int] = attrs.Factory(list)
    op: list[str] = attrs.Factory(list)
    subgraph: list[int] = attrs.Factory(list)
    node: int | None = None  # the cell asked, echoed
    cell: int | None = None


@attrs.define
class TileGrid:
    """One tensor node's tiles as the Tiles view draws them: `rows` (instance and every coordinate but the last,
    keyed `instance|coord,…` in `row_keys`) × `cols` (the last coordinate); `tiles` cells hold a tile;
    `subgraph`: each cell's colour key, run-length encoded `[value, count, …]` row-major — the subgraph of the
    cell's first op that is not a load or store (-1: not partitioned yet, -2: no tile there)."""

    node: int
    rows: int
    cols: int
    row_keys: list[str]
    tiles: int
    subgraph: list[int]


@attrs.define
class TileGridsResult:
    uri: str
    kernel: str
    version: int
    tile_ops: int
    grids: list[TileGrid]


@attrs.define
class BlockParams:
    uri: str
    kernel: str
    leaf: int  # a leaf function's id (`record.leaves[].id`)


@attrs.define
class BlockInstr:
    opcode: str
    pipe: str
    tile_op: int  # -1: none
    node: int  # the tensor node of its tile op (-1: none)
    note: str


@attrs.define
class BlockResult:
    """A leaf's block (`record.blocks[]`) as the Leaves view draws it: its figures and instructions, without the
    instructions' operands and the block's buffers."""

    uri: str
    kernel: str
    version: int
    leaf: int
    core: str
    tasks: int
    peak_bytes: list[list[Json]]
    capacity_bytes: list[list[Json]]
    double_buffered: bool
    spills: int
    instrs: list[BlockInstr]


@attrs.define
class ReportParams:
    uri: str
    kernel: str
    suggest: bool = False  # run the tuning advisor (on demand, once per kernel version) and include it
    precision: bool = False  # run the precision diff (likewise) and include it


@attrs.define
class ReportResult:
    uri: str
    kernel: str
    version: int
    report: dict[str, Json]  # one kernel of `pypto-ide report --format json` (docs/schemas/report.schema.json)
    baseline: dict[str, Json] | None = None  # the pinned baseline's history entry (pypto/history), or null
    history: list[dict[str, Json]] | None = None  # the kernel's last compiles (at most 50), oldest first


@attrs.define
class CompileParams:
    uri: str
    force: bool = False  # also the kernels whose text did not change (a new measurement on the cpu board)


@attrs.define
class CompileResult:
    uri: str
    version: int
    kernels: list[str]  # the kernels compiled by this request


@attrs.define
class LoadTraceParams:
    path: str


@attrs.define
class PassDumpParams:
    path: str  # a passes_dump/ folder, the build folder holding one, or a file in it
    source: str | None = None  # the kernel file its functions link to (default: looked for near the build output)


@attrs.define
class PassDumpPassParams:
    path: str
    index: int  # the snapshot's NN
    source: str | None = None


@attrs.define
class TraceResult:
    path: str
    format: str  # the swimlane's board: "imported" for a foreign trace, else the board that ran it
    label: str
    run: dict[str, Json]  # the swimlane (docs/record-schema.md `run`)


# ---- the converter -------------------------------------------------------------------------------

def _camel(name: str) -> str:
    name = name.rstrip("_")
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _strict(conv: cattrs.Converter) -> None:
    """No coercion: "3" is not an int, 3 is not a str, 1 is not a bool."""

    def check(tp: type) -> Any:
        def hook(v: Any, _: Any) -> Any:
            if tp is float and isinstance(v, int) and not isinstance(v, bool):
                return float(v)
            if not isinstance(v, tp) or (tp is not bool and isinstance(v, bool)):
                raise ValueError(f"expected {tp.__name__}, got {type(v).__name__} {v!r}")
            return v
        return hook

    for tp in (str, int, float, bool):
        conv.register_structure_hook(tp, check(tp))

    def literal(v: Any, tp: Any) -> Any:
        allowed = typing.get_args(tp)
        if v not in allowed:
            raise ValueError(f"expected one of {', '.join(map(repr, allowed))}, got {v!r}")
        return v

    conv.register_structure_hook_func(lambda t: typing.get_origin(t) is Literal, literal)

    def number_or_text(v: Any, _: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise ValueError(f"expected a pass index or name, got {v!r}")
        return v

    conv.register_structure_hook(int | str | None, lambda v, t: None if v is None else number_or_text(v, t))
    conv.register_structure_hook(int | str, number_or_text)


def _ours(cls: type) -> bool:
    return attrs.has(cls) and cls.__module__ == __name__


def make_converter() -> cattrs.Converter:
    conv = get_converter(cattrs.Converter())
    _strict(conv)
    # JSON made by a worker (records, reports, metrics) is plain already: passed through, not
    # copied (a record is megabytes: copying it is a visible share of edit -> record, lsp_bench.py)
    conv.register_unstructure_hook_func(lambda t: t == dict[str, Any], lambda v: v)
    conv.register_unstructure_hook_factory(_ours, lambda cls: make_dict_unstructure_fn(
        cls, conv, **{a.name: override(rename=_camel(a.name)) for a in attrs.fields(cls)}))
    conv.register_structure_hook_factory(_ours, lambda cls: make_dict_structure_fn(
        cls, conv, **{a.name: override(rename=_camel(a.name)) for a in attrs.fields(cls)}))
    return conv


CONVERTER = make_converter()


def plain(value: Any) -> Any:
    """pygls hands unknown methods' params over as namedtuples: back to dicts and lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


T = typing.TypeVar("T")


def parse(params: Any, cls: type[T]) -> T:
    """`params` (as pygls delivers them) as `cls`; ParamsError says what is wrong."""
    value = plain(params)
    if not isinstance(value, dict):
        raise ParamsError(f"params must be an object, got {type(value).__name__}")
    try:
        return CONVERTER.structure(value, cls)
    except cattrs.BaseValidationError as e:
        raise ParamsError("; ".join(cattrs.transform_error(e, path=cls.__name__))) from None
    except (ValueError, TypeError, KeyError) as e:
        raise ParamsError(str(e)) from None


def settings_from(value: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a configuration object (unknown keys ignored), keeping `base`'s values for
    missing or invalid keys; also the problems found, to log."""
    out = attrs.evolve(base) if base is not None else Settings()
    problems: list[str] = []
    if not isinstance(value, dict):
        return out, ([] if value is None else [f"settings must be an object, got {type(value).__name__}"])
    for a in attrs.fields(Settings):
        key = _camel(a.name)
        if key not in value:
            continue
        try:
            v = CONVERTER.structure(value[key], a.type if not isinstance(a.type, str) else _hint(a.name))
        except (cattrs.BaseValidationError, ValueError, TypeError) as e:
            problems.append(f"pypto.{key}: {e}")
            continue
        setattr(out, a.name, v)
    return out, problems


def _hint(name: str) -> Any:
    return typing.get_type_hints(Settings)[name]


def dump(value: Any) -> Json:
    """An attrs message as JSON (camelCase keys, nulls kept)."""
    return CONVERTER.unstructure(value)
