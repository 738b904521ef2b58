"""The health report: what a compiled (and profiled) kernel wastes, level by level, and where.

A CompileRecord already holds every level PyPTO reports on — the tensor graph, the tile
graph with its subgraphs and leaf functions, each leaf's instruction list (block), the
execute graph, and, after `pypto.record.profile`, a swimlane. `health_report(record)`
reads them once and returns

- `stats`: the numbers per level ("tensor", "tile", "execute", "block", "board"), always
  present, whether or not a rule fires (board only with a run);
- `findings`: `Finding`s (rule id, severity, the numbers with the threshold, a short why,
  the source span it belongs to and a concrete suggestion; a mechanical fix as `TextEdit`s),
  sorted by severity, then line.

Rules and their thresholds are tabled in `pypto/analysis/thresholds.py`. A finding about a
tile shape points at its `set_vec_tile_shapes` / `set_cube_tile_shapes` call; one about an
op at the op's line in the kernel's file; a kernel-wide one at the tile-shape call that
covers most tasks (else the `def` line). Columns in `Where` are character offsets into the
line (Python's own positions are UTF-8 byte offsets; they are converted when the file can be
read), so an edit applies to the file's text as a `str`.

Cost: a few linear passes over the tile ops (a 200k-op record reports in a fraction of a
second), the core model once per leaf function, and the swimlane metrics once.
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pypto.analysis.findings import Finding, TextEdit, Where
from pypto.analysis.thresholds import THRESHOLDS, Thresholds
from pypto.boards.core_model import CoreModel, padded_bytes, vector_bytes
from pypto.boards.profile import bottleneck, pipe_busy
from pypto.boards.swimlane import metrics
from pypto.compiler.block_ir import Operand
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.errors import ShapeError
from pypto.ir.graph import Node, TensorType, TileConfig
from pypto.ir.ops import OPS
from pypto.ir.source import Span
from pypto.language.tiling import check_cube_call, check_cube_for_matmul, check_vec_for_op
from pypto.target import load as load_board

if TYPE_CHECKING:
    from pypto.record import CompileRecord

LEVEL_NAMES = ("tensor", "tile", "execute", "block", "board")
RULES = (  # every rule id, tabled with its threshold in pypto/analysis/thresholds.py
    "tensor.high-fan-out",
    "tile.tail-waste", "tile.last-dim-unaligned", "tile.buffer-peak", "tile.redundant-copy", "tile.duplicate-load",
    "execute.low-parallelism", "execute.heterogeneous", "execute.small-tasks",
    "block.spills", "block.schedule-gap", "block.pipe-bound",
    "board.low-utilization", "board.scheduler-bound", "board.dependency-bound", "board.bound",
)
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
_STRUCTURAL = frozenset({"param", "carry", "loop_out", "loop", "assume"})
_NO_TILES_OF_THEIR_OWN = frozenset({"view", "tensor", "reshape", "unsqueeze", "concat"})
_PIPE_KIND = {"MTE2": "memory (GM reads)", "MTE3": "memory (GM writes)", "FIX": "memory (cube results to GM)",
              "MTE1": "cube operand moves (L1 -> L0)", "V": "vector", "M": "cube", "S": "scalar"}
_PIPE_ADVICE = {
    "MTE2": "move fewer bytes: narrower input dtypes (bf16/fp16), fuse ops so intermediate tiles stay on chip, "
            "or reuse loaded tiles",
    "MTE3": "write fewer bytes: narrower output dtypes, or keep intermediates on chip instead of storing them",
    "FIX": "write fewer bytes out of L0C (a narrower output dtype)",
    "MTE1": "larger cube L0 tiles move operands to L0 less often per MAC",
    "V": "fewer or cheaper vector instructions: fold constants, multiply by a reciprocal instead of dividing, "
         "avoid casts that autocast can skip",
    "M": "the cube is the limit: this is near peak for the shapes; only fewer MACs help",
    "S": "fewer scalar steps",
}
_MAX_LISTED_LEAVES = 20  # per-leaf block stats listed (the leaves with the most task cycles)
_MAX_LINES = 10  # source lines named in a finding's numbers


@dataclass(frozen=True)
class HealthReport:
    """Per-level numbers and the findings of one compiled (and maybe profiled) kernel."""

    kernel: str
    file: str
    stats: dict[str, dict[str, Any]]
    findings: tuple[Finding, ...]
    thresholds: Thresholds = field(default=THRESHOLDS)

    def rules(self) -> list[str]:
        """The rule ids that fired, in finding order (with repeats)."""
        return [f.rule for f in self.findings]

    def of(self, rule: str) -> list[Finding]:
        """The findings of one rule."""
        return [f for f in self.findings if f.rule == rule]

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "file": self.file, "stats": self.stats,
                "findings": [f.to_json() for f in self.findings], "thresholds": self.thresholds.to_json()}


def health_report(record: CompileRecord, thresholds: Thresholds = THRESHOLDS) -> HealthReport:
    """The health report of `record` (compiled through any stage; board rules need `record.run`)."""
    h = _Health(record, thresholds)
    h.run()
    order = sorted(h.findings, key=lambda f: (_SEVERITY_ORDER.get(f.severity, 3),
                                              f.where.line if f.where is not None else 0, f.rule))
    return HealthReport(record.source.kernel, record.source.file, h.stats, tuple(order), thresholds)


# ---- small helpers -------------------------------------------------------------------------------

def _norm(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _r(x: float, nd: int = 4) -> float:
    return round(float(x), nd)


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%" if x >= 0.01 or x == 0 else f"{x * 100:.1f}%"


def _divisors(n: int) -> list[int]:
    out = []
    i = 1
    while i * i <= n:
        if n % i == 0:
            out.append(i)
            out.append(n // i)
        i += 1
    return sorted(set(out))


def _eval_shape(t: TensorType | None, env: Mapping[str, int]) -> tuple[int, ...] | None:
    if t is None:
        return None
    try:
        return tuple(S.evaluate(d, dict(env)) for d in t.shape)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _vec_dtypes(types: Iterable[TensorType | None]) -> set[int]:
    return {t.dtype.nbytes for t in types if t is not None and t.dtype is not DataType.DT_BOOL}


@dataclass
class _Config:
    """What the kernel's ops ask of one tile-shape call (gathered from its nodes)."""

    tc: TileConfig
    nodes: list[int] = field(default_factory=list)  # nodes with tile ops using it
    elems: int = 0  # tensor elements covered by its tile grids
    capacity: int = 0  # the grids' capacity (tiles x full tile elements)
    axes: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # config axis -> extents
    tails: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # config axis -> extents with a tail
    nbytes: set[int] = field(default_factory=set)  # element sizes on its last axis (alignment)
    tasks: int = 0  # tasks whose leaf uses it

    @property
    def waste(self) -> float:
        return 1.0 - self.elems / self.capacity if self.capacity else 0.0


class _Health:
    def __init__(self, record: CompileRecord, th: Thresholds) -> None:
        self.r = record
        self.th = th
        self.p = record.program
        self.file = record.source.file
        self.nfile = _norm(self.file)
        self.graph = self.p.graph
        self.nodes: dict[int, Node] = self.graph.by_id()
        cfgs = self.graph.tile_configs or record.source.tile_configs
        self.configs: dict[int, TileConfig] = {tc.id: tc for tc in cfgs}
        self.env: dict[str, int] = dict(self.p.bindings or ()) or dict(record.bindings)
        board_name = str(record.run.info.get("board", "a2a3")) if record.run is not None else "a2a3"
        try:
            self.board = load_board(board_name)
        except (OSError, ValueError):
            self.board = load_board("a2a3")
        self.align = int(self.board.get("alignment_bytes", 32))
        self.lines: list[str] | None = None
        try:
            with open(self.file, encoding="utf-8") as f:
                self.lines = f.read().splitlines(keepends=True)
        except (OSError, UnicodeDecodeError):
            self.lines = None
        self.findings: list[Finding] = []
        self.stats: dict[str, dict[str, Any]] = {k: {} for k in LEVEL_NAMES}
        self.cfg: dict[int, _Config] = {}
        self.leaf_cfg: dict[int, int | None] = {}
        self.leaf_cycles: dict[int, float] = {}  # scheduled cycles of one task, per leaf
        self.core_model: CoreModel | None = None
        self.tile_ops_of: Mapping[int, int] = {}
        self.by_id: Sequence[Any] = ()  # tile ops by id

    # ---- where things are

    def _char_col(self, line: int, col: int) -> int:
        if self.lines is None or not 1 <= line <= len(self.lines) or col <= 0:
            return col
        return len(self.lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def _pick(self, frames: Sequence[Span]) -> Span | None:
        """The innermost frame in the kernel's file (else the innermost frame)."""
        for s in frames:
            if _norm(s.file) == self.nfile:
                return s
        return frames[0] if frames else None

    def _where(self, s: Span | None, whole_line: bool = False) -> Where | None:
        if s is None:
            return None
        file = self.file if _norm(s.file) == self.nfile else s.file
        if whole_line or not s.end_line:
            return Where(file, s.line)
        return Where(file, s.line, self._char_col(s.line, s.col), s.end_line, self._char_col(s.end_line, s.end_col))

    def kernel_where(self) -> Where:
        """The kernel's `def` line (a parameter's location is the first line of the function,
        which is its decorator's)."""
        for n in self.graph.params():
            w = self._where(self._pick(n.loc.frames), whole_line=True)
            if w is not None:
                return Where(w.file, self._def_line(w.line))
        return Where(self.file, 1)

    def _def_line(self, line: int) -> int:
        if self.lines is None:
            return line
        for k in range(line, min(len(self.lines), line + 50) + 1):
            if self.lines[k - 1].lstrip().startswith(("def ", "async def ")):
                return k
        return line

    def param_where(self, name: str) -> Where:
        """The parameter's name in the kernel's signature (else the `def` line)."""
        w = self.kernel_where()
        if self.lines is None or w.file != self.file:
            return w
        pattern = re.compile(rf"(?<![\w.]){re.escape(name)}\s*[:,)=]")
        for k in range(w.line, min(len(self.lines), w.line + 30) + 1):
            text = self.lines[k - 1]
            m = pattern.search(text, len(text) - len(text.lstrip()) + (4 if k == w.line else 0))
            if m is not None:
                return Where(w.file, k, m.start(), k, m.start() + len(name))
            if text.split("#", 1)[0].rstrip().endswith(":"):
                break
        return w

    def node_where(self, nid: int) -> Where:
        n = self.nodes.get(nid)
        frames = list(n.loc.frames) if n is not None and n.loc.frames else []
        if not frames:
            try:
                frames = self.r.source_of(nid)
            except KeyError:
                frames = []
        if n is not None and n.op == "param":
            return self.param_where(str(n.attrs.get("name", "")))
        return self._where(self._pick(frames)) or self.kernel_where()

    def config_where(self, cid: int | None) -> Where | None:
        tc = self.configs.get(cid) if cid is not None else None
        return self._where(self._pick(tc.loc.frames)) if tc is not None and tc.loc.frames else None

    def span_text(self, w: Where) -> str | None:
        """The source text of a range (None when the file cannot be read)."""
        if self.lines is None or not w.end_line or w.end_line > len(self.lines):
            return None
        if w.line == w.end_line:
            return self.lines[w.line - 1][w.col:w.end_col]
        parts = [self.lines[w.line - 1][w.col:]] + self.lines[w.line:w.end_line - 1] + \
                [self.lines[w.end_line - 1][:w.end_col]]
        return "".join(parts)

    def line_of(self, nid: int) -> int:
        return self.node_where(nid).line

    # ---- tile-shape call texts and resizing

    def call_text(self, tc: TileConfig, dims: Sequence[Any]) -> str:
        if tc.kind == "vec":
            return f"set_vec_tile_shapes({', '.join(str(d) for d in dims)})"
        m, k, n = dims[0], dims[1], dims[2]
        split = ", enable_split_k=True" if len(dims) > 3 and dims[3] else ""
        return f"set_cube_tile_shapes({list(m)}, {list(k)}, {list(n)}{split})"

    def literal_call(self, tc: TileConfig) -> tuple[Where, str] | None:
        """(the call's range, the callee's text) when the call's arguments are all literals."""
        w = self.config_where(tc.id)
        if w is None:
            return None
        text = self.span_text(w)
        if text is None:
            return None
        try:
            call = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            return None
        if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        try:
            for a in (*call.args, *(kw.value for kw in call.keywords)):
                ast.literal_eval(a)
        except ValueError:
            return None
        if any(kw.arg not in ("enable_split_k", "m", "k", "n") for kw in call.keywords):
            return None
        callee = text[:text.index("(")]
        return w, callee

    def edit_for(self, tc: TileConfig, dims: Sequence[Any]) -> tuple[TextEdit, ...]:
        lit = self.literal_call(tc)
        if lit is None:
            return ()
        w, callee = lit
        new = self.call_text(tc, dims)
        return (TextEdit(w, callee + new[new.index("("):]),)

    def _extent(self, c: _Config, j: int) -> int:
        return max(c.axes.get(j, ()), default=0)

    def _last_ok(self, c: _Config, t: int) -> bool:
        return all((t * nb) % self.align == 0 for nb in (c.nbytes or {1}))

    def shrunk(self, cid: int | None, times: int = 1) -> tuple[Any, ...] | None:
        """The call's dims with the tile halved `times` times (largest useful axis first), or None."""
        c = self.cfg.get(cid) if cid is not None else None
        if c is None:
            return None
        tc = c.tc
        if tc.kind == "vec":
            dims = list(tc.dims)
            done = 0
            for _ in range(times):
                # leading axes first (long rows move and compute best), the largest first
                used = [j for j in range(len(dims)) if j in c.axes] or list(range(len(dims)))
                order = sorted(used, key=lambda j: (j == len(dims) - 1,
                                                    -min(dims[j], self._extent(c, j) or dims[j]), j))
                for j in order:
                    t = min(dims[j], self._extent(c, j) or dims[j])
                    new = t // 2
                    if t < 2 or t % 2 or (j == len(dims) - 1 and not self._last_ok(c, new)):
                        continue
                    dims[j] = new
                    done += 1
                    break
                else:
                    break
            return tuple(dims) if done else None
        m, k, n, split = tc.dims
        cube = [list(m), list(k), list(n)]
        done = 0
        frac = self._fractal()
        for _ in range(times):
            eff = {a: min(cube[a][-1], self._extent(c, a) or cube[a][-1]) for a in (0, 2)}
            for axis in sorted((0, 2), key=lambda a: (-eff[a], a)):
                l0, half = cube[axis][0], eff[axis] // 2
                if half >= frac and half % frac == 0:
                    cube[axis] = [math.gcd(l0, half), half]
                    done += 1
                    break
            else:
                break
        return (tuple(cube[0]), tuple(cube[1]), tuple(cube[2]), split) if done else None

    def grown(self, cid: int | None, times: int = 1) -> tuple[Any, ...] | None:
        """The call's vec dims with the tile doubled `times` times along axes that have more than one
        tile, as long as the busiest leaf using it would keep within the buffer; or None."""
        c = self.cfg.get(cid) if cid is not None else None
        if c is None or c.tc.kind != "vec":
            return None
        dims = list(c.tc.dims)
        peak_share = self.cfg_peak_share(cid)
        done = 0
        for _ in range(times):
            if peak_share * 2 > self.th.buffer_peak:
                break
            cands = [j for j in range(len(dims)) if self._extent(c, j) > dims[j]]
            if not cands:
                break
            j = min(cands, key=lambda a: (a == len(dims) - 1, -(self._extent(c, a) / dims[a])))
            dims[j] = min(dims[j] * 2, self._extent(c, j)) if j != len(dims) - 1 else dims[j] * 2
            peak_share *= 2
            done += 1
        return tuple(dims) if done else None

    def _tile_ratio(self, cid: int | None, dims: Sequence[Any]) -> float:
        """How many times more tiles the call's tensors make with `dims` than with its current dims."""
        c = self.cfg.get(cid) if cid is not None else None
        if c is None:
            return 1.0
        old = c.tc.dims if c.tc.kind == "vec" else {0: c.tc.dims[0][-1], 2: c.tc.dims[2][-1]}
        new = dims if c.tc.kind == "vec" else {0: dims[0][-1], 2: dims[2][-1]}
        ratio = 1.0
        for j in c.axes:
            ext = self._extent(c, j)
            ratio *= math.ceil(ext / new[j]) / math.ceil(ext / old[j])
        return ratio

    def cfg_peak_share(self, cid: int | None) -> float:
        """The highest on-chip peak share of the leaves using a tile-shape call."""
        blocks = self.p.blocks or ()
        best = 0.0
        for b in blocks:
            if self.leaf_cfg.get(b.leaf) != cid:
                continue
            caps = dict(b.capacity_bytes)
            for space, peak in b.peak_bytes:
                if caps.get(space):
                    best = max(best, peak / caps[space])
        return best

    def _fractal(self) -> int:
        return int(self.board.get("cube_fractal_elements", {}).get("default", 16))

    # ---- the run

    def run(self) -> None:
        self.tensor_level()
        if self.p.tiles is not None:
            self.tile_level()
        else:
            self.stats["tile"] = {"available": False}
        if self.p.execute is not None and self.p.leaves is not None and self.p.subgraphs is not None:
            self.execute_level()
        else:
            self.stats["execute"] = {"available": False}
        if self.p.blocks is not None:
            self.block_level()
        else:
            self.stats["block"] = {"available": False}
        if self.r.run is not None:
            self.board_level()
        else:
            self.stats["board"] = {"available": False}

    def add(self, rule: str, severity: str, title: str, why: str, suggestion: str, where: Where | None,
            numbers: Mapping[str, Any], edits: tuple[TextEdit, ...] = ()) -> None:
        assert rule in RULES, rule
        level = rule.split(".", 1)[0]
        self.findings.append(Finding(rule, severity, level, title, why, suggestion, where or self.kernel_where(),
                                     dict(numbers), edits))

    # ---- tensor graph

    def tensor_level(self) -> None:
        nodes = list(self.graph.walk())
        ops = [n for n in nodes if n.op not in _STRUCTURAL]
        readers: dict[int, set[int]] = defaultdict(set)
        level: dict[int, int] = {}
        width: Counter[int] = Counter()
        for n in nodes:
            lv = 0
            for i in n.inputs:
                if i in level and level[i] + 1 > lv:
                    lv = level[i] + 1
            level[n.id] = lv
            if n.op not in _STRUCTURAL:
                width[lv] += 1
                for i in set(n.inputs):
                    readers[i].add(n.id)
        fan_out = {nid: len(rs) for nid, rs in readers.items()}
        op_levels = [level[n.id] for n in ops]
        self.stats["tensor"] = {
            "nodes": len(nodes), "ops": len(ops), "tensors": sum(1 for n in nodes if n.type is not None),
            "params": len(self.graph.params()), "loops": sum(1 for n in nodes if n.op == "loop"),
            "op_kinds": dict(Counter(n.op for n in ops).most_common()),
            "max_fan_in": max((len(n.inputs) for n in ops), default=0),
            "max_fan_out": max(fan_out.values(), default=0),
            "depth": (max(op_levels) - min(op_levels) + 1) if op_levels else 0,
            "width": max(width.values(), default=0),
            "tile_configs": len(self.configs),
        }
        for nid, count in sorted(fan_out.items()):
            n = self.nodes.get(nid)
            if n is None or n.type is None or count < self.th.fan_out:
                continue
            name = n.attrs.get("name") if n.op == "param" else n.name
            what = f"`{name}`" if name else f"the {n.op} result"
            lines = sorted({self.line_of(r) for r in readers[nid]})
            self.add("tensor.high-fan-out", "info", f"{what} is read by {count} ops",
                     "A tensor in GM (a parameter, or a value stored between tasks) is loaded again, tile by tile, "
                     "by every op that reads it.",
                     f"compute what those {count} readers share once, so fewer ops read {what} "
                     f"(lines {', '.join(map(str, lines[:_MAX_LINES]))})",
                     self.node_where(nid),
                     {"readers": count, "threshold": self.th.fan_out, "lines": lines[:_MAX_LINES]})

    # ---- tile graph

    def iteration_shape(self, n: Node) -> tuple[int, ...] | None:
        """The shape an op's tiles cover (its input for a reduction, the copied source for a copy)."""
        kind = OPS[n.op].kind if n.op in OPS else ""
        if kind == "reduce" and n.inputs:
            src = self.nodes.get(n.inputs[0])
            return _eval_shape(src.type if src is not None else None, self.env)
        if n.op == "assemble" and len(n.inputs) > 1:
            src = self.nodes.get(n.inputs[1])
            return _eval_shape(src.type if src is not None else None, self.env)
        if n.op == "transpose" or kind in ("unary", "binary", "where", "create") or n.op in (
                "clone", "expand_clone", "matmul", "full", "arange", "cast"):
            return _eval_shape(n.type, self.env)
        return None

    def gather_configs(self, tile_ops_of: Mapping[int, int]) -> None:
        """Per tile-shape call: the nodes using it, their tile grids' elements and capacity, and the
        extents of each axis (with and without a tail)."""
        for nid, count in tile_ops_of.items():
            n = self.nodes.get(nid)
            if n is None or n.tile is None or count == 0 or n.op in _NO_TILES_OF_THEIR_OWN:
                continue
            tc = self.configs.get(n.tile)
            if tc is None:
                continue
            shape = self.iteration_shape(n)
            if not shape:
                continue
            if tc.kind == "vec":
                dims = tuple(tc.dims)
                if n.op == "matmul" or len(dims) < len(shape):
                    continue
                base = len(dims) - len(shape)
                tiles = [(base + i, d, dims[base + i]) for i, d in enumerate(shape)]
                c = self.cfg.setdefault(tc.id, _Config(tc))
                c.nbytes |= _vec_dtypes([n.type, *(self.nodes[i].type for i in n.inputs if i in self.nodes)])
            else:
                if n.op != "matmul" or len(shape) < 2:
                    continue
                m, _k, nn, _split = tc.dims
                tiles = [(0, shape[-2], m[-1]), (2, shape[-1], nn[-1])]
                c = self.cfg.setdefault(tc.id, _Config(tc))
            c.nodes.append(nid)
            elems, cap = 1, 1
            for j, d, t in tiles:
                elems *= d
                cap *= d if d <= t else math.ceil(d / t) * t
                c.axes[j].add(d)
                if d > t and d % t:
                    c.tails[j].add(d)
            c.elems += elems
            c.capacity += cap

    def tail_fix(self, c: _Config) -> tuple[tuple[Any, ...], list[str]] | None:
        """New dims with no tail (or None): per axis with a tail, the size nearest the current one
        (within fix_scale) that divides every extent on that axis, keeps alignment and fits."""
        tc = c.tc
        lo_scale, hi_scale = 1.0 / self.th.fix_scale, self.th.fix_scale
        notes: list[str] = []
        if tc.kind == "vec":
            dims = list(tc.dims)
            grow = 1.0
            for j in sorted(c.tails):
                t = dims[j]
                best = self._best_size(t, c.axes[j], lo_scale, hi_scale,
                                       lambda x, j=j: j != len(dims) - 1 or self._last_ok(c, x), 1)
                if best is None:
                    return None
                dims[j] = best
                grow *= best / t
                notes.append(self._grid_note(best, c.axes[j]))
            if grow > 1 and self.cfg_peak_share(tc.id) * grow > self.th.buffer_peak:
                return None
            new = tuple(dims)
            if not self._vec_valid(c, new):
                return None
            return new, notes
        m, k, n, split = tc.dims
        cube = {0: list(m), 2: list(n)}
        frac = self._fractal()
        for j, _ds in sorted(c.tails.items()):
            l0, l1 = cube[j][0], cube[j][-1]
            best = self._best_size(l1, c.axes[j], lo_scale, hi_scale, lambda x: x % frac == 0, frac,
                                   penalty=lambda x, l0=l0: abs(math.log(math.gcd(l0, x) / l0)))
            if best is None:
                return None
            cube[j] = [math.gcd(l0, best), best] if best % l0 else [l0, best]
            notes.append(self._grid_note(best, c.axes[j]))
        new_c = (tuple(cube[0]), tuple(k), tuple(cube[2]), split)
        if not self._cube_valid(c, new_c):
            return None
        return new_c, notes

    @staticmethod
    def _grid_note(t: int, extents: Iterable[int]) -> str:
        return ", ".join(f"{max(1, d // t) if d > t else 1} tile{'s' if d > t and d // t > 1 else ''} of {min(t, d)} "
                         f"across {d}" for d in sorted(extents))

    @staticmethod
    def _best_size(t: int, extents: set[int], lo: float, hi: float, ok: Any, step: int,
                   penalty: Any = None) -> int | None:
        cands: set[int] = set()
        for d in extents:
            cands |= {x for x in _divisors(d) if x % step == 0}
        good = [x for x in cands if t * lo <= x <= t * hi and ok(x) and all(d <= x or d % x == 0 for d in extents)]
        if not good:
            return None
        return min(good, key=lambda x: (abs(math.log(x / t)) + (penalty(x) if penalty else 0.0), x))

    def _vec_valid(self, c: _Config, dims: tuple[int, ...]) -> bool:
        for nid in c.nodes:
            n = self.nodes[nid]
            types = [self.nodes[i].type for i in n.inputs if i in self.nodes and self.nodes[i].type is not None]
            if n.type is None:
                continue
            try:
                check_vec_for_op(dims, n.type, types, n.op, 0)  # type: ignore[arg-type]
            except ShapeError:
                return False
        return True

    def _cube_valid(self, c: _Config, dims: tuple[Any, ...]) -> bool:
        try:
            m, k, n = check_cube_call(list(dims[0]), list(dims[1]), list(dims[2]))
            for nid in c.nodes:
                node = self.nodes[nid]
                a, b = (self.nodes[i].type for i in node.inputs[:2])
                if a is None or b is None:
                    return False
                check_cube_for_matmul(m, k, n, a.dtype, b.dtype, 0)
        except (ShapeError, KeyError, ValueError):
            return False
        return True

    def tile_level(self) -> None:
        tiles = self.p.tiles
        assert tiles is not None
        ops = tiles.ops
        buffers = tiles.buffers
        n_ops = len(ops)
        # tile op ids are 0..n-1 in some order; arrays indexed by id, filled in program (topological) order
        size = max((o.id for o in ops), default=-1) + 1
        by_id: list[Any] = [None] * size
        level = [0] * size
        uses = [0] * size
        kinds: Counter[str] = Counter(o.op for o in ops)
        per_node: Counter[int] = Counter(o.node for o in ops)
        max_in = 0
        load_bytes = store_bytes = 0
        info: dict[tuple[tuple[int, ...], int], tuple[int, bool]] = {}
        unaligned_nodes: set[int] = set()
        clones: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        stored: dict[Any, tuple[int, int]] = {}  # region stored (not to a workspace) -> (storing node, instance)
        round_trips: dict[int, list[Any]] = {}
        align = self.align
        for o in ops:
            by_id[o.id] = o
            ins = o.inputs
            lv = 0
            if ins:
                if len(ins) > max_in:
                    max_in = len(ins)
                for i in ins:
                    uses[i] += 1
                    li = level[i]
                    if li >= lv:
                        lv = li + 1
            level[o.id] = lv
            key = (o.shape, id(o.dtype))
            got = info.get(key)
            if got is None:
                nb = math.prod(o.shape) * o.dtype.nbytes
                unal = bool(o.shape) and o.shape[-1] != 1 and (o.shape[-1] * o.dtype.nbytes) % align != 0
                got = info[key] = (nb, unal)
            op = o.op
            if got[1] and op != "matmul":
                unaligned_nodes.add(o.node)
            if op == "load":
                load_bytes += got[0]
                r = o.region
                if r is not None and stored:
                    src, inst = stored.get((r.buffer, r.offset, r.shape, r.layout), (-1, -1))
                    if src >= 0 and inst == o.instance:  # across loop iterations, GM is the only way
                        rt = round_trips.setdefault(src, [0, 0, set(), set()])
                        rt[0] += 1
                        rt[1] += got[0]
                        rt[2].add(o.node)
                        rt[3].add(buffers[r.buffer].kind)
            elif op == "store":
                store_bytes += got[0]
                r = o.region
                if r is not None and buffers[r.buffer].kind != "workspace":
                    stored[(r.buffer, r.offset, r.shape, r.layout)] = (o.node, o.instance)
            elif op == "clone":
                cl = clones[o.node]
                cl[0] += 1
                cl[1] += got[0]
        width = Counter(level) if size == n_ops else Counter(level[o.id] for o in ops)
        self.tile_ops_of = per_node
        self.by_id = by_id
        self.gather_configs(per_node)
        # memory per type (blocks)
        peaks: dict[str, dict[str, Any]] = {}
        for b in self.p.blocks or ():
            caps = dict(b.capacity_bytes)
            for space, peak in b.peak_bytes:
                cur = peaks.get(space)
                if cur is None or peak > cur["peak_bytes"]:
                    peaks[space] = {"peak_bytes": peak, "capacity_bytes": caps.get(space, 0),
                                    "share": _r(peak / caps[space]) if caps.get(space) else 0.0, "leaf": b.leaf}
        buf_kinds = Counter(b.kind for b in buffers)
        workspace = sum(math.prod(b.shape) * b.dtype.nbytes for b in buffers if b.kind == "workspace")
        dup = self.duplicate_loads(by_id)
        self.stats["tile"] = {
            "ops": n_ops, "op_kinds": dict(kinds.most_common()),
            "loads": kinds["load"], "stores": kinds["store"], "matmuls": kinds["matmul"],
            "compute": n_ops - kinds["load"] - kinds["store"],
            "buffers": len(buffers), "buffer_kinds": dict(buf_kinds), "workspace_bytes": workspace,
            "load_bytes": load_bytes, "store_bytes": store_bytes,
            "max_fan_in": max_in, "max_fan_out": max(uses, default=0),
            "depth": (max(level) + 1) if level else 0, "width": max(width.values(), default=0),
            "instances": len(tiles.instances),
            "subgraphs": len(self.p.subgraphs or ()),
            "tail_waste": {str(cid): {"call": self.call_text(c.tc, c.tc.dims), "waste": _r(c.waste),
                                      "elements": c.elems, "capacity": c.capacity,
                                      "line": (self.config_where(cid) or self.kernel_where()).line}
                           for cid, c in sorted(self.cfg.items())},
            "unaligned_nodes": len(unaligned_nodes),
            "peak_memory": peaks,
            "clones": sum(v[0] for v in clones.values()), "clone_bytes": sum(v[1] for v in clones.values()),
            "round_trips": sum(v[0] for v in round_trips.values()),
            "round_trip_bytes": sum(v[1] for v in round_trips.values()),
            "duplicate_loads": sum(v[0] for v in dup.values()),
            "duplicate_load_bytes": sum(v[1] for v in dup.values()),
        }
        self.leaf_configs()
        self.rule_tail_waste()
        if unaligned_nodes:
            self.rule_unaligned(ops, unaligned_nodes)
        self.rule_buffer_peak()
        self.rule_copies(clones, round_trips)
        self.rule_duplicates(dup)

    def duplicate_loads(self, by_id: Sequence[Any]) -> dict[int, list[Any]]:
        """Per reading node: [extra loads, their bytes, buffer ids, tasks]: the same GM region loaded
        again within one subgraph."""
        out: dict[int, list[Any]] = {}
        for sg in self.p.subgraphs or ():
            seen: set[Any] = set()
            for oid in sg.ops:
                o = by_id[oid]
                if o.op != "load" or o.region is None:
                    continue
                r = o.region
                key = (r.buffer, r.offset, r.shape, r.layout)
                if key in seen:
                    d = out.get(o.node)
                    if d is None:
                        d = out[o.node] = [0, 0, set(), set()]
                    d[0] += 1
                    d[1] += math.prod(o.shape) * o.dtype.nbytes
                    d[2].add(r.buffer)
                    d[3].add(sg.id)
                else:
                    seen.add(key)
        return out

    def leaf_configs(self) -> None:
        """Each leaf's tile-shape call: the one most of its nodes use (vec for AIV, cube for AIC)."""
        kind_of = {"AIV": "vec", "AIC": "cube"}
        for lf in self.p.leaves or ():
            votes: Counter[int] = Counter()
            for nid in lf.nodes:
                n = self.nodes.get(nid)
                if n is not None and n.tile is not None and n.tile in self.configs and \
                        self.configs[n.tile].kind == kind_of.get(lf.core, "vec"):
                    votes[n.tile] += 1
            self.leaf_cfg[lf.id] = votes.most_common(1)[0][0] if votes else None
            cid = self.leaf_cfg[lf.id]
            if cid is not None and cid in self.cfg:
                self.cfg[cid].tasks += lf.count

    def leaf_where(self, leaf: int) -> Where:
        w = self.config_where(self.leaf_cfg.get(leaf))
        if w is not None:
            return w
        lf = (self.p.leaves or ())[leaf]
        return self.node_where(lf.nodes[0]) if lf.nodes else self.kernel_where()

    def main_config(self, core: str | None = None) -> int | None:
        """The tile-shape call covering the most tasks (of one core type)."""
        votes: Counter[int] = Counter()
        for lf in self.p.leaves or ():
            cid = self.leaf_cfg.get(lf.id)
            if cid is not None and (core is None or lf.core == core):
                votes[cid] += lf.count
        if votes:
            return votes.most_common(1)[0][0]
        return next(iter(sorted(self.cfg)), None)

    def main_where(self, core: str | None = None) -> Where:
        return self.config_where(self.main_config(core)) or self.kernel_where()

    def rule_tail_waste(self) -> None:
        for cid, c in sorted(self.cfg.items()):
            if c.waste < self.th.tail_waste or not c.tails:
                continue
            tc = c.tc
            now = self.call_text(tc, tc.dims)
            tails = []
            for j, ds in sorted(c.tails.items()):
                t = tc.dims[j] if tc.kind == "vec" else tc.dims[j][-1]
                for d in sorted(ds):
                    tails.append(f"{d} = {d // t} x {t} + {d % t}")
            fix = self.tail_fix(c)
            numbers: dict[str, Any] = {"waste": _r(c.waste), "threshold": self.th.tail_waste,
                                       "elements": c.elems, "capacity": c.capacity,
                                       "tails": tails, "dims": list(_jsonable(tc.dims))}
            edits: tuple[TextEdit, ...] = ()
            if fix is not None:
                new, notes = fix
                new_text = self.call_text(tc, new)
                edits = self.edit_for(tc, new)
                numbers["suggested_dims"] = list(_jsonable(new))
                suggestion = f"use {new_text}: {'; '.join(notes)}, no tail"
            else:
                pads = []
                for j, ds in sorted(c.tails.items()):
                    t = tc.dims[j] if tc.kind == "vec" else tc.dims[j][-1]
                    pads += [f"{d} to {math.ceil(d / t) * t}" for d in sorted(ds)]
                suggestion = (f"no tile size between {1 / self.th.fix_scale:g}x and {self.th.fix_scale:g}x the current "
                              f"one divides the tensor (keeping rows a multiple of {self.align} bytes and the buffer "
                              f"fit): pad {', '.join(pads)} so the tiles divide it")
            self.add("tile.tail-waste", "warning",
                     f"{now} leaves {_pct(c.waste)} of its tile grid empty ({'; '.join(tails)})",
                     "Tiles that do not divide the tensor end in part-empty tail tiles: each pays a full tile's "
                     "fixed costs for less work, and the tail shapes are extra leaf functions.",
                     suggestion, self.config_where(cid) or self.node_where(c.nodes[0]), numbers, edits)

    def rule_unaligned(self, ops: Sequence[Any], nodes: set[int]) -> None:
        cache: dict[tuple[tuple[int, ...], DataType, bool], tuple[int, int]] = {}
        acc: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # node -> moved raw/padded, vector raw/padded
        odd: dict[int, set[int]] = defaultdict(set)  # node -> last dims of its padded tiles
        for o in ops:
            if o.node not in nodes or o.op == "matmul" or not o.shape:
                continue
            move = o.op in ("load", "store")
            key = (o.shape, o.dtype, move)
            got = cache.get(key)
            if got is None:
                operand = Operand("UB", "", 0, 0, o.shape, o.dtype)
                raw = math.prod(o.shape) * o.dtype.nbytes
                got = cache[key] = (raw, padded_bytes(operand, self.align) if move else
                                    max(raw, vector_bytes(operand, self.align)))
            a = acc[o.node]
            base = 0 if move else 2
            a[base] += got[0]
            a[base + 1] += got[1]
            if got[1] > got[0]:
                odd[o.node].add(o.shape[-1])
        groups: dict[tuple[int, int], list[int]] = defaultdict(list)
        for nid in sorted(nodes):
            n = self.nodes.get(nid)
            shape = self.iteration_shape(n) if n is not None else None
            nb = n.type.dtype.nbytes if n is not None and n.type is not None else 0
            d = shape[-1] if shape else 0
            groups[(d, nb)].append(nid)
        for (d, nb), nids in sorted(groups.items()):
            mr = sum(acc[n][0] for n in nids)
            mp = sum(acc[n][1] for n in nids)
            vr = sum(acc[n][2] for n in nids)
            vp = sum(acc[n][3] for n in nids)
            move_share = (mp - mr) / mp if mp else 0.0
            vec_share = (vp - vr) / vp if vp else 0.0
            share = max(move_share, vec_share)
            if share < self.th.unaligned_waste:
                continue
            first = min(nids, key=lambda x: (self.line_of(x), x))
            lines = sorted({self.line_of(x) for x in nids})
            step = self.align // math.gcd(self.align, nb) if nb else self.align
            padded = -(-d // step) * step if d else 0
            tile_dims = sorted(set().union(*(odd[x] for x in nids)))
            if d and nb and (d * nb) % self.align:
                what = f"last dim {d} ({d * nb} bytes)"
                sugg = (f"pad the last dim from {d} to {padded} (a multiple of {step} elements = {self.align} "
                        f"bytes) where the tensor is made, and slice the result")
            else:  # the tensor is aligned, some tiles are not
                what = f"tiles {', '.join(map(str, tile_dims))} wide (of a last dim of {d})"
                sugg = f"choose a tile whose last dim is a multiple of {step} elements ({self.align} bytes)"
            self.add("tile.last-dim-unaligned", "warning",
                     f"{what}: not a multiple of {self.align} bytes, rows are padded "
                     f"({_pct(move_share)} of moved bytes, {_pct(vec_share)} of vector work)",
                     f"Rows are moved in {self.align}-byte blocks and an unaligned row is computed on its own in "
                     "whole vector repeats, so the padding costs bandwidth and vector time.",
                     sugg,
                     self.node_where(first),
                     {"last_dim": d, "elem_bytes": nb, "padded_to": padded, "tile_last_dims": tile_dims,
                      "moved_waste": _r(move_share),
                      "vector_waste": _r(vec_share), "threshold": self.th.unaligned_waste,
                      "lines": lines[:_MAX_LINES]})

    def rule_buffer_peak(self) -> None:
        seen: set[tuple[str, int | None, str]] = set()
        for b in sorted(self.p.blocks or (), key=lambda b: -b.tasks):
            caps = dict(b.capacity_bytes)
            has_loads = any(i.opcode == "TLOAD" and not i.note for i in b.instrs)
            cid = self.leaf_cfg.get(b.leaf)
            for space, peak in b.peak_bytes:
                cap = caps.get(space, 0)
                if not cap:
                    continue
                share = peak / cap
                if peak > cap:
                    sev, what = "error", "over capacity"
                elif has_loads and not b.double_buffered and space in ("UB", "L1"):
                    sev, what = "warning", "too full to double-buffer the loads"
                elif share >= self.th.buffer_peak:
                    sev, what = "info", "nearly full"
                else:
                    continue
                key = (space, cid, sev)
                if key in seen:
                    continue
                seen.add(key)
                smaller = self.shrunk(cid)
                tc = self.configs.get(cid) if cid is not None else None
                hint = f"use {self.call_text(tc, smaller)}" if smaller is not None and tc is not None else \
                    "use smaller tiles"
                if sev == "warning":
                    suggestion = f"{hint}: half the tile leaves room for two copies of each load, so MTE2 overlaps V"
                elif sev == "error":
                    suggestion = f"{hint}: the tiles must fit the {cap:,}-byte {space}"
                else:
                    suggestion = f"fine as it is; do not grow the tile (larger tiles would spill). To double-check: " \
                                 f"{hint} halves the peak"
                self.add("tile.buffer-peak", sev,
                         f"leaf {b.leaf} uses {peak:,} of {cap:,} bytes of {space} ({_pct(share)}): {what}",
                         "When the loads cannot be doubled, a task loads its next tile only after computing the "
                         "current one; a buffer over capacity cannot be allocated at all.",
                         suggestion, self.leaf_where(b.leaf),
                         {"leaf": b.leaf, "memory": space, "peak_bytes": peak, "capacity_bytes": cap,
                          "share": _r(share), "threshold": self.th.buffer_peak, "double_buffered": b.double_buffered,
                          "tasks": b.tasks})

    def rule_copies(self, clones: Mapping[int, list[int]], round_trips: Mapping[int, list[Any]]) -> None:
        for nid, (count, nbytes) in sorted(clones.items()):
            if nbytes <= self.th.redundant_copy_bytes:
                continue
            n = self.nodes.get(nid)
            src = self.nodes.get(n.inputs[0]) if n is not None and n.inputs else None
            name = f"`{src.name}`" if src is not None and src.name else "its input"
            self.add("tile.redundant-copy", "warning", f"clone copies {count} tile(s), {nbytes:,} bytes, on chip",
                     "Tensor values are never modified in place, so a clone's copy (TCOPY on the vector pipe) "
                     "buys nothing.",
                     f"drop the .clone() and use {name} directly (saves {count} TCOPY and {nbytes:,} bytes of UB)",
                     self.node_where(nid), {"tiles": count, "bytes": nbytes, "threshold": self.th.redundant_copy_bytes})
        for nid, (count, nbytes, readers, kinds) in sorted(round_trips.items()):
            if nbytes <= self.th.redundant_copy_bytes:
                continue
            lines = sorted({self.line_of(x) for x in readers})
            local = "local" in kinds
            self.add("tile.redundant-copy", "warning",
                     f"{count} tile(s) written to GM here are read back unchanged "
                     f"(line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:_MAX_LINES]))})",
                     "A tile stored to GM and loaded back with the same region costs a store, a load and the GM "
                     "latency; the value was already on chip.",
                     ("use the value directly where it is read instead of writing it to a local tensor and "
                      "reading it back" if local else "read the value you wrote (keep it in a variable) instead of "
                      "reading the written tensor back") + f" (saves {nbytes:,} bytes of loads)",
                     self.node_where(nid), {"tiles": count, "bytes": nbytes, "read_at": lines[:_MAX_LINES],
                                            "threshold": self.th.redundant_copy_bytes})

    def rule_duplicates(self, dup: Mapping[int, list[Any]]) -> None:
        buffers = self.p.tiles.buffers if self.p.tiles is not None else ()
        by_line: dict[tuple[str, int], list[Any]] = {}
        for nid, (count, nbytes, bufs, sgs) in sorted(dup.items()):
            w = self.node_where(nid)
            acc = by_line.setdefault((w.file, w.line), [nid, 0, 0, set(), set()])
            acc[1] += count
            acc[2] += nbytes
            acc[3] |= bufs
            acc[4] |= sgs
        for (_file, _line), (nid, count, nbytes, bufs, sgs) in sorted(by_line.items(), key=lambda kv: kv[0][1]):
            if count < self.th.duplicate_loads:
                continue
            named = sorted({buffers[b].name for b in bufs if b < len(buffers) and buffers[b].kind != "workspace"})
            inner = sum(1 for b in bufs if b < len(buffers) and buffers[b].kind == "workspace")
            what = ", ".join(f"`{n}`" for n in named) + (", " if named and inner else "") + \
                (f"{inner} compiler transfer buffer(s)" if inner else "")
            hint = (f"read {what} in fewer ops (combine the expressions that use it), or load it once into a value "
                    f"(e.g. `v = {named[0]} + 0`) and use that" if named else
                    "a value read by several ops here is re-read from its transfer buffer by each; fewer ops "
                    "reading it (or tiles that line up with its producer's) avoid that")
            self.add("tile.duplicate-load", "info",
                     f"{count} tile load(s) of {what} repeat a load of the same region in the same task",
                     "Every op that reads a GM tensor loads its tiles itself, so a task reading one tile for "
                     "two ops loads it twice (L2 serves the second load, MTE2 still moves it).",
                     f"{nbytes:,} bytes over {len(sgs)} task(s): {hint}",
                     self.node_where(nid), {"extra_loads": count, "bytes": nbytes, "tasks": len(sgs),
                                            "buffers": named + ([f"{inner} transfer"] if inner else []),
                                            "threshold": self.th.duplicate_loads})

    # ---- execute graph

    def execute_level(self) -> None:
        exe = self.p.execute
        leaves = self.p.leaves
        assert exe is not None and leaves is not None
        tasks = exe.tasks
        if self.p.blocks is not None:
            self.core_model = CoreModel(self.p.blocks, self.board)
            for lf in leaves:
                self.leaf_cycles[lf.id] = self.core_model.run(lf.id, 0.0, 1.0)[0]
        level: list[int] = [0] * len(tasks)
        per_level: dict[str, Counter[int]] = defaultdict(Counter)
        all_levels: Counter[int] = Counter()
        count: Counter[str] = Counter()
        leaves_of: dict[str, set[int]] = defaultdict(set)
        edges = 0
        for t in tasks:
            lv = 0
            for q in t.preds:
                edges += 1
                if level[q] >= lv:
                    lv = level[q] + 1
            level[t.id] = lv
            all_levels[lv] += 1
            per_level[t.core][lv] += 1
            count[t.core] += 1
            leaves_of[t.core].add(t.leaf)
        cores = {k: int(v) for k, v in self.board["cores"].items()}
        cyc = [self.leaf_cycles[t.leaf] for t in tasks if t.leaf in self.leaf_cycles]
        clock = float(self.board.get("clock_ghz", 1.0))
        cpu = self.board.get("aicpu", {})
        per_task_cpu = sum(float(cpu.get(k, 0)) for k in ("schedule_cycles", "submit_cycles", "completion_cycles",
                                                          "resolve_cycles"))
        threads = max(1, int(cpu.get("sched_threads", 1)))
        per_core: dict[str, dict[str, Any]] = {}
        for core in sorted(count):
            c_cyc = [self.leaf_cycles[t.leaf] for t in tasks if t.core == core and t.leaf in self.leaf_cycles]
            per_core[core] = {
                "tasks": count[core], "cores": cores.get(core, 0), "leaves": len(leaves_of[core]),
                "max_width": max(per_level[core].values(), default=0),
                "avg_task_cycles": _r(sum(c_cyc) / len(c_cyc), 1) if c_cyc else 0.0,
                "min_task_cycles_to_hide_scheduler": _r(cores.get(core, 0) * per_task_cpu / threads, 1),
            }
        self.stats["execute"] = {
            "tasks": len(tasks), "leaves": len(leaves), "edges": edges,
            "homogeneity": _r(len(leaves) / len(tasks), 6) if tasks else 0.0,
            "depth": (max(level) + 1) if level else 0, "max_width": max(all_levels.values(), default=0),
            "roots": len(exe.roots),
            "task_cycles": {"min": _r(min(cyc), 1), "avg": _r(sum(cyc) / len(cyc), 1), "max": _r(max(cyc), 1),
                            "min_us": _r(min(cyc) / clock / 1000), "avg_us": _r(sum(cyc) / len(cyc) / clock / 1000),
                            "max_us": _r(max(cyc) / clock / 1000)} if cyc else {},
            "per_core": per_core,
        }
        if self.p.tiles is None:
            return
        for core, s in per_core.items():
            n_cores = s["cores"]
            if not n_cores:
                continue
            if s["max_width"] < self.th.parallelism * n_cores:
                cid = self.main_config(core)
                need = math.ceil(n_cores / max(1, s["max_width"]))
                times = max(1, math.ceil(math.log2(need)))
                smaller = self.shrunk(cid, times)
                tc = self.configs.get(cid) if cid is not None else None
                if smaller is not None and tc is not None:
                    more = round(s["tasks"] * self._tile_ratio(cid, smaller))
                    sugg = (f"use {self.call_text(tc, smaller)} (about {more} tasks) so that "
                            f"more of the {n_cores} {core} cores get work; only worth it if the kernel's time matters")
                    sev = "warning"
                else:
                    sugg = f"the tensors are too small to split over {n_cores} {core} cores: batch more work per call"
                    sev = "info"
                self.add("execute.low-parallelism", sev,
                         f"{s['tasks']} {core} task(s), at most {s['max_width']} at once, for {n_cores} {core} cores",
                         "Cores without a task idle whatever the scheduler does.",
                         sugg, self.main_where(core),
                         {"core": core, "tasks": s["tasks"], "max_width": s["max_width"], "cores": n_cores,
                          "threshold": self.th.parallelism})
            avg, floor = s["avg_task_cycles"], s["min_task_cycles_to_hide_scheduler"]
            if s["tasks"] > n_cores and avg and avg < self.th.small_task * floor:
                cid = self.main_config(core)
                times = max(1, math.ceil(math.log2(floor / avg)))
                bigger = self.grown(cid, times)
                tc = self.configs.get(cid) if cid is not None else None
                sugg = (f"use {self.call_text(tc, bigger)}: fewer, longer tasks" if bigger is not None and
                        tc is not None else "give each task more work (larger tiles, or fuse more ops per task)")
                self.add("execute.small-tasks", "warning",
                         f"{core} tasks average {avg:,.0f} cycles; the scheduler needs {floor:,.0f} per task to keep "
                         f"{n_cores} cores busy",
                         f"Each task costs the AICPU scheduler {per_task_cpu:.0f} cycles on one of {threads} threads; "
                         "shorter tasks leave cores waiting to be handed the next one.",
                         sugg, self.main_where(core),
                         {"core": core, "avg_task_cycles": avg, "min_task_cycles": floor, "tasks": s["tasks"],
                          "cores": n_cores, "threshold": self.th.small_task})
        n_tasks, n_leaves = len(tasks), len(leaves)
        if n_tasks >= self.th.heterogeneity_min_tasks and n_leaves / n_tasks > self.th.heterogeneity:
            once = sum(1 for lf in leaves if lf.count == 1)
            tails = sorted(self.cfg, key=lambda cid: -self.cfg[cid].waste)
            tails = [cid for cid in tails if self.cfg[cid].tails]
            if tails:
                line = (self.config_where(tails[0]) or self.kernel_where()).line
                see = " (see tile.tail-waste)" if self.cfg[tails[0]].waste >= self.th.tail_waste else ""
                hint = (f"tile shapes that divide the tensors at line {line}{see} make the tail tasks the same leaf "
                        "as the others")
            else:
                hint = "fewer distinct tile shapes per task (no tails, one shape per loop iteration)"
            self.add("execute.heterogeneous", "warning",
                     f"{n_leaves} leaf functions for {n_tasks} tasks ({once} run once)",
                     "Every distinct leaf is its own instruction stream to build, cache and load; "
                     "many leaves for few tasks usually come from tail tiles.",
                     hint, self.main_where(),
                     {"leaves": n_leaves, "tasks": n_tasks, "homogeneity": _r(n_leaves / n_tasks, 6), "run_once": once,
                      "threshold": self.th.heterogeneity, "min_tasks": self.th.heterogeneity_min_tasks})

    # ---- block level

    def block_level(self) -> None:
        blocks = self.p.blocks
        assert blocks is not None
        if self.core_model is None:
            self.core_model = CoreModel(blocks, self.board)
        cm = self.core_model
        rows = []
        counts = Counter(t.leaf for t in self.p.execute.tasks) if self.p.execute is not None else \
            Counter({b.leaf: b.tasks for b in blocks})
        for b in blocks:
            pipes = cm.pipe_cycles(b.leaf)
            sched = self.leaf_cycles.get(b.leaf)
            if sched is None:
                sched = self.leaf_cycles[b.leaf] = cm.run(b.leaf, 0.0, 1.0)[0]
            busiest = max(pipes, key=lambda p: pipes[p]) if pipes else ""
            theory = pipes.get(busiest, 0.0)
            rows.append({"leaf": b.leaf, "core": b.core, "tasks": counts.get(b.leaf, b.tasks),
                         "instructions": len(b.instrs), "pipe_cycles": {p: _r(c, 1) for p, c in pipes.items()},
                         "busiest_pipe": busiest, "min_cycles": _r(theory, 1), "scheduled_cycles": _r(sched, 1),
                         "gap": _r(sched / theory) if theory else 0.0,
                         "peak_bytes": dict(b.peak_bytes), "double_buffered": b.double_buffered, "spills": b.spills})
        total = sum(r["scheduled_cycles"] * r["tasks"] for r in rows) or 1.0
        for r in rows:
            r["share"] = _r(r["scheduled_cycles"] * r["tasks"] / total)
        rows.sort(key=lambda r: (-r["share"], r["leaf"]))
        pipe_tot: Counter[str] = Counter()
        for r in rows:
            for p, c in r["pipe_cycles"].items():
                pipe_tot[p] += c * r["tasks"]
        self.stats["block"] = {
            "leaves": len(rows), "spills": sum(r["spills"] for r in rows),
            "leaves_spilling": sum(1 for r in rows if r["spills"]),
            "single_buffered": sum(1 for r in rows if not r["double_buffered"]),
            "task_cycles_total": _r(total, 1),
            "pipe_cycles_total": {p: _r(c, 1) for p, c in pipe_tot.most_common()},
            "leaf_stats": rows[:_MAX_LISTED_LEAVES],
        }
        # one finding per rule and tile-shape call (the leaf with the most task cycles speaks for the others)
        spilling = self._grouped([r for r in rows if r["spills"] > self.th.spills], lambda r: ())
        for r, group in spilling:
            cid = self.leaf_cfg.get(r["leaf"])
            smaller = self.shrunk(cid)
            tc = self.configs.get(cid) if cid is not None else None
            if smaller is not None and tc is not None:
                sev, sugg = "error", f"use {self.call_text(tc, smaller)}: half the tile's live bytes fit"
            else:
                sev, sugg = "warning", "split the work per task (fewer live tiles at once)"
            spills = sum(g["spills"] for g in group)
            self.add("block.spills", sev,
                     f"leaf {r['leaf']} spills {r['spills']} tile(s) to GM in each of its {r['tasks']} task(s)"
                     + (f" ({len(group)} leaves spill {spills} in all)" if len(group) > 1 else ""),
                     "Its live tiles do not fit the on-chip buffer, so the compiler stores some to GM and loads "
                     "them back: extra MTE2/MTE3 traffic and latency in every task.",
                     sugg, self.leaf_where(r["leaf"]),
                     {"leaf": r["leaf"], "spills": r["spills"], "tasks": r["tasks"], "peak_bytes": r["peak_bytes"],
                      "leaves": [g["leaf"] for g in group], "spills_total": spills, "threshold": self.th.spills})
        lat = float(self.board.get("memory", {}).get("gm_read_latency", 0))
        ranked = [r for r in rows if r["share"] >= self.th.min_leaf_share and r["min_cycles"]]
        gaps = self._grouped([r for r in ranked if r["gap"] >= self.th.schedule_gap], lambda r: (r["double_buffered"],))
        for r, group in gaps:
            gap, pipe = r["gap"], r["busiest_pipe"]
            cid = self.leaf_cfg.get(r["leaf"])
            tc = self.configs.get(cid) if cid is not None else None
            if not r["double_buffered"]:
                smaller = self.shrunk(cid)
                sugg = (f"use {self.call_text(tc, smaller)} so the loads can be double-buffered"
                        if smaller is not None and tc is not None else "make room for double buffering")
                cause = "its loads are single-buffered, so loading and computing take turns"
            else:
                bigger = self.grown(cid)
                sugg = (f"use {self.call_text(tc, bigger)}: more independent tiles per task keep the pipes "
                        "streaming while one tile waits" if bigger is not None and tc is not None else
                        "give each task more independent work (tiles along an axis that is not reduced), so "
                        "the pipes stream instead of waiting")
                cause = (f"each pipe waits for the one before it (a GM read alone is {lat:,.0f} cycles of "
                         "latency before its data can be used) and a task this short cannot hide that")
            others = f" ({len(group) - 1} more leaves too)" if len(group) > 1 else ""
            self.add("block.schedule-gap", "warning",
                     f"leaf {r['leaf']} takes {r['scheduled_cycles']:,.0f} cycles, {gap:.1f}x its busiest pipe "
                     f"({pipe}, {r['min_cycles']:,.0f}){others}",
                     f"The pipes could finish in {r['min_cycles']:,.0f} cycles if they overlapped fully; {cause}.",
                     sugg, self.leaf_where(r["leaf"]),
                     {**self._leaf_numbers(r, group), "threshold": self.th.schedule_gap})
        bound = self._grouped([r for r in ranked if r["gap"] <= self.th.pipe_bound], lambda r: (r["busiest_pipe"],))
        for r, group in bound:
            pipe = r["busiest_pipe"]
            self.add("block.pipe-bound", "info",
                     f"leaf {r['leaf']} is {_PIPE_KIND.get(pipe, pipe)}-bound: {pipe} is busy "
                     f"{r['min_cycles']:,.0f} of its {r['scheduled_cycles']:,.0f} cycles",
                     f"The other pipes overlap with {pipe}; only less {pipe} work makes the task shorter.",
                     _PIPE_ADVICE.get(pipe, "reduce the busiest pipe's work"), self.leaf_where(r["leaf"]),
                     {**self._leaf_numbers(r, group), "threshold": self.th.pipe_bound})

    def _grouped(self, rows: list[dict[str, Any]], key: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """Rows (sorted by share) grouped by where their leaf points and `key`: (first row, all rows)."""
        groups: dict[Any, list[dict[str, Any]]] = {}
        for r in rows:
            w = self.leaf_where(r["leaf"])
            groups.setdefault((w.file, w.line, w.col, *key(r)), []).append(r)
        return [(g[0], g) for g in groups.values()]

    @staticmethod
    def _leaf_numbers(r: Mapping[str, Any], group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {"leaf": r["leaf"], "tasks": r["tasks"], "scheduled_cycles": r["scheduled_cycles"],
                "min_cycles": r["min_cycles"], "busiest_pipe": r["busiest_pipe"], "pipe_cycles": r["pipe_cycles"],
                "ratio": r["gap"], "share_of_task_cycles": r["share"], "double_buffered": r["double_buffered"],
                "leaves": [g["leaf"] for g in group]}

    # ---- board

    def board_level(self) -> None:
        sl = self.r.run
        assert sl is not None
        m = metrics(sl)
        bound, why = bottleneck(sl)
        lanes_used = {sl.lanes[t.lane].core for t in sl.tasks}
        n_lanes = sum(1 for ln in sl.lanes if ln.core in lanes_used)
        lane_time = m.makespan * n_lanes
        sched_share = m.wait_scheduler / lane_time if lane_time else 0.0
        dep_share = m.wait_dependency / lane_time if lane_time else 0.0
        busy = pipe_busy(sl)
        self.stats["board"] = {
            "board": sl.board, "clock": sl.clock, "tasks": len(sl.tasks), "lanes": n_lanes,
            "makespan_us": _r(m.makespan), "busy_us": _r(m.busy), "utilization": _r(m.utilization),
            "core_utilization": {k: _r(v) for k, v in m.core_utilization.items()},
            "wait_dependency_us": _r(m.wait_dependency), "wait_scheduler_us": _r(m.wait_scheduler),
            "dependency_bubble_share": _r(dep_share), "scheduler_bubble_share": _r(sched_share),
            "critical_path_tasks": len(m.critical_path), "critical_path_us": _r(m.critical_path_us),
            "critical_share": _r(m.critical_share), "bound": bound, "bound_why": why,
            "pipe_busy_us": {p: _r(v) for p, v in sorted(busy.items(), key=lambda kv: -kv[1])},
        }
        if not sl.tasks:
            return
        where = self.main_where()
        avg_us = m.busy / len(sl.tasks)
        if m.utilization < self.th.utilization:
            self.add("board.low-utilization", "warning",
                     f"cores busy {_pct(m.utilization)} of the {m.makespan:,.2f} µs makespan [{sl.clock}]",
                     f"Bound by {bound}: {why}.",
                     self._utilization_advice(bound), where,
                     {"utilization": _r(m.utilization), "core_utilization": {k: _r(v) for k, v in
                                                                             m.core_utilization.items()},
                      "makespan_us": _r(m.makespan), "lanes": n_lanes, "bound": bound,
                      "threshold": self.th.utilization})
        if sched_share >= self.th.scheduler_bubble:
            cid = self.main_config()
            bigger = self.grown(cid)
            tc = self.configs.get(cid) if cid is not None else None
            self.add("board.scheduler-bound", "warning",
                     f"cores sat idle with ready tasks {_pct(sched_share)} of the time ({m.wait_scheduler:,.1f} "
                     f"lane-µs); tasks average {avg_us:,.2f} µs [{sl.clock}]",
                     "The AICPU scheduler hands out one task at a time per thread; with short tasks the cores "
                     "finish faster than it dispatches.",
                     (f"use {self.call_text(tc, bigger)}: about half the tasks, each twice as long"
                      if bigger is not None and tc is not None else "give each task more work (larger tiles)"),
                     where, {"scheduler_bubble_share": _r(sched_share), "wait_scheduler_us": _r(m.wait_scheduler),
                             "avg_task_us": _r(avg_us), "tasks": len(sl.tasks),
                             "threshold": self.th.scheduler_bubble})
        if m.critical_share >= self.th.critical_path and len(m.critical_path) >= 2:
            lines: Counter[int] = Counter()
            for tid in m.critical_path[:256]:
                for nid in self._nodes_of_task(tid):
                    lines[self.line_of(nid)] += 1
            top = [ln for ln, _ in lines.most_common(_MAX_LINES)]
            w = where
            if top:
                first = next((nid for tid in m.critical_path[:256] for nid in self._nodes_of_task(tid)
                              if self.line_of(nid) == top[0]), None)
                if first is not None:
                    w = self.node_where(first)
            self.add("board.dependency-bound", "warning",
                     f"a chain of {len(m.critical_path)} dependent tasks takes {_pct(m.critical_share)} of the "
                     f"makespan",
                     "The tasks wait on each other: the run cannot be shorter than this chain, however many cores.",
                     "shorten the chain: split serial work (a loop carrying a value from one iteration to the next, "
                     "a reduction over a long axis) into independent parts combined once, or make the tasks on it "
                     f"cheaper (lines {', '.join(map(str, sorted(top)))})",
                     w, {"critical_share": _r(m.critical_share), "critical_path_tasks": len(m.critical_path),
                         "critical_path_us": _r(m.critical_path_us), "makespan_us": _r(m.makespan),
                         "lines": sorted(top), "threshold": self.th.critical_path})
        self.add("board.bound", "info", f"bound by {bound}", why[:1].upper() + why[1:] + ".",
                 self._bound_advice(bound), where,
                 {"bound": bound, "makespan_us": _r(m.makespan), "utilization": _r(m.utilization),
                  "scheduler_bubble_share": _r(sched_share), "dependency_bubble_share": _r(dep_share),
                  "critical_share": _r(m.critical_share)})

    def _nodes_of_task(self, tid: int) -> list[int]:
        exe, sgs, tiles = self.p.execute, self.p.subgraphs, self.p.tiles
        if exe is None or sgs is None or tiles is None or not 0 <= tid < len(exe.tasks):
            return []
        sg = sgs[exe.tasks[tid].subgraph]
        return sorted({self.by_id[i].node for i in sg.ops})

    def _utilization_advice(self, bound: str) -> str:
        """Fewer tasks than cores is the first thing to fix; else what bounds the run."""
        sl = self.r.run
        assert sl is not None
        tasks = Counter(sl.lanes[t.lane].core for t in sl.tasks)
        lanes = Counter(ln.core for ln in sl.lanes)
        for core, n in sorted(tasks.items()):
            if n < lanes[core]:
                cid = self.main_config(core)
                times = max(1, math.ceil(math.log2(lanes[core] / n)))
                smaller = self.shrunk(cid, times)
                tc = self.configs.get(cid) if cid is not None else None
                more = f"use {self.call_text(tc, smaller)} for more, smaller tasks" if smaller is not None and \
                    tc is not None else "give the kernel more work per call"
                return f"only {n} {core} tasks ran on {lanes[core]} {core} cores: {more}"
        return self._bound_advice(bound)

    def _bound_advice(self, bound: str) -> str:
        if bound == "scheduling":
            return "fewer, larger tasks (larger tiles)"
        if bound == "dependency":
            return "more independent tasks: smaller tiles along the axes that are not reduced, or split serial chains"
        if bound == "memory":
            return _PIPE_ADVICE["MTE2"]
        if bound == "vector":
            return _PIPE_ADVICE["V"]
        if bound == "cube":
            return _PIPE_ADVICE["M"]
        return "see the block and execute findings"


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    return v
