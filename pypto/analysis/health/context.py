"""What every health level reads and writes: the record's parts, the board, the kernel's source lines,
the findings and stats so far, and where a node, a tile-shape call or a leaf is in the source.

The levels run in order (tensor, tile, execute, block, board) and later ones reuse what earlier
ones worked out (which tile-shape call each leaf uses, each leaf's cycles, the tile ops by id), so
that state lives here, on one `HealthContext`, and each level module is a set of functions over it.
Every finding is made by `HealthContext.add`, which checks its rule id against `RULES`.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pypto.analysis.findings import Finding, Fix, Related, TextEdit, Where
from pypto.analysis.thresholds import Thresholds
from pypto.boards.core_model import CoreModel
from pypto.ir.graph import Node, TileConfig
from pypto.ir.source import Span
from pypto.record import CompileRecord
from pypto.target import load as load_board
from pypto.tracing.tiling import whole_slice

LEVEL_NAMES = ("tensor", "tile", "execute", "block", "board")
RULES = (  # every rule id, tabled with its threshold in pypto/analysis/thresholds.py
    "tensor.high-fan-out",
    "tile.tail-waste", "tile.last-dim-unaligned", "tile.buffer-peak", "tile.redundant-copy", "tile.duplicate-load",
    "execute.low-parallelism", "execute.heterogeneous", "execute.small-tasks",
    "block.spills", "block.schedule-gap", "block.pipe-bound",
    "board.low-utilization", "board.scheduler-bound", "board.dependency-bound", "board.stitching", "board.bound",
)
MAX_LINES = 10  # source lines named in a finding's numbers


def rounded(x: float, nd: int = 4) -> float:
    """A number as a finding or a stat shows it."""
    return round(float(x), nd)


def pct(x: float) -> str:
    """A share as a percentage for a finding's title."""
    return f"{x * 100:.0f}%" if x >= 0.01 or x == 0 else f"{x * 100:.1f}%"


def jsonable(v: Any) -> Any:
    """Tile-shape dims (nested tuples) as JSON lists."""
    if isinstance(v, tuple):
        return [jsonable(x) for x in v]
    return v


def _norm(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


@dataclass
class ConfigUse:
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


class HealthContext:
    """One health report in the making: the `record`, its program `p` and `graph`, the thresholds `th`,
    the board and its alignment, the source `lines`; `findings` and `stats` (per level) so far;
    and what the tile level works out for the later ones: `cfg` (per tile-shape call),
    `leaf_cfg` (each leaf's call), `tile_ops_of` (tile ops per node) and `by_id` (tile ops by id);
    the execute or block level fills `leaf_cycles` and `core_model`."""

    def __init__(self, record: CompileRecord, th: Thresholds) -> None:
        self.record = record
        self.th = th
        self.p = record.program
        self.file = record.source.file
        self.nfile = _norm(self.file)
        self.graph = self.p.graph
        self.nodes: dict[int, Node] = self.graph.by_id()
        cfgs = self.graph.tile_configs or record.source.tile_configs
        # a PyPTO 3 kernel sets no tile shapes (its slices are its tiles): its one-tile-per-slice placeholder
        # is no call to measure or propose changes to; its knobs are the slice sizes (analysis/knobs.py)
        self.pl = record.source.dialect == "pypto3"
        self.unit = "slice" if self.pl else "tile"  # what a finding tells the user to make smaller
        self.configs: dict[int, TileConfig] = {tc.id: tc for tc in cfgs
                                               if not (self.pl and tc.kind == "vec" and whole_slice(tc.dims))}
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
        self.proposals: dict[str, tuple[int, tuple[Any, ...]]] = {}  # call text -> (tile config, dims)
        self.stats: dict[str, dict[str, Any]] = {k: {} for k in LEVEL_NAMES}
        self.cfg: dict[int, ConfigUse] = {}
        self.leaf_cfg: dict[int, int | None] = {}
        self.leaf_cycles: dict[int, float] = {}  # scheduled cycles of one task, per leaf
        self.core_model: CoreModel | None = None
        self.tile_ops_of: Mapping[int, int] = {}
        self.by_id: Sequence[Any] = ()  # tile ops by id

    def propose(self, tc: TileConfig, dims: Sequence[Any]) -> str:
        """The text of a tile-shape call a rule proposes (`set_vec_tile_shapes(1, 32)`), remembered so the
        finding that names it carries it as `numbers["try"]`, for the board to check
        (`pypto.analysis.advice`)."""
        text = call_text(tc, dims)
        self.proposals[text] = (tc.id, tuple(dims))
        return text

    def add(self, rule: str, severity: str, title: str, why: str, suggestion: str, where: Where | None,
            numbers: Mapping[str, Any], edits: tuple[TextEdit, ...] = (), related: tuple[Related, ...] = (),
            fixes: tuple[Fix, ...] = ()) -> None:
        """Record a finding of `rule` (at the kernel's `def` line when `where` is None)."""
        assert rule in RULES, rule
        level = rule.split(".", 1)[0]
        nums = dict(numbers)
        tries = [{"config": cid, "dims": _jsonable(dims), "call": text}
                 for text, (cid, dims) in self.proposals.items() if text in suggestion]
        if tries:
            nums["try"] = tries
        self.findings.append(Finding(rule, severity, level, title, why, suggestion, where or self.kernel_where(),
                                     nums, edits or (fixes[0].edits if fixes else ()), related, fixes))

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
                frames = self.record.source_of(nid)
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


def call_text(tc: TileConfig, dims: Sequence[Any]) -> str:
    """The tile-shape call of `tc`'s kind with `dims`, as the kernel would write it."""
    if tc.kind == "vec":
        return f"set_vec_tile_shapes({', '.join(str(d) for d in dims)})"
    m, k, n = dims[0], dims[1], dims[2]
    split = ", enable_split_k=True" if len(dims) > 3 and dims[3] else ""
    return f"set_cube_tile_shapes({list(m)}, {list(k)}, {list(n)}{split})"


def _jsonable(v: Any) -> Any:
    return [_jsonable(x) for x in v] if isinstance(v, (tuple, list)) else v
