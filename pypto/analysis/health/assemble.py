"""The report itself: run the levels in order on one `HealthContext` (a level runs only when the
record reached its stage; the board level only with a run) and collect their stats and findings,
sorted by severity, then line, into a `HealthReport`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pypto.analysis.findings import Finding
from pypto.analysis.health.block import block_level
from pypto.analysis.health.board import board_level
from pypto.analysis.health.context import HealthContext
from pypto.analysis.health.execute import execute_level
from pypto.analysis.health.tensor import tensor_level
from pypto.analysis.health.tile import tile_stats
from pypto.analysis.health.tile_rules import tile_rules
from pypto.analysis.thresholds import THRESHOLDS, Thresholds
from pypto.record import CompileRecord

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


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

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> HealthReport:
        """The report `to_json` gave (an earlier job's, for the same traced program: its advice checked again
        without lowering the kernel, `pypto.analysis.advisor.Written`)."""
        return cls(str(d["kernel"]), str(d["file"]), dict(d["stats"]),
                   tuple(Finding.from_json(f) for f in d["findings"]), Thresholds(**d["thresholds"]))


def health_report(record: CompileRecord, thresholds: Thresholds = THRESHOLDS) -> HealthReport:
    """The health report of `record` (compiled through any stage; board rules need `record.run`)."""
    h = HealthContext(record, thresholds)
    run_levels(h)
    return HealthReport(record.source.kernel, record.source.file, h.stats, tuple(sorted_findings(h.findings)),
                        thresholds)


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in report order: by severity, then line, then rule."""
    return sorted(findings, key=lambda f: (_SEVERITY_ORDER.get(f.severity, 3),
                                           f.where.line if f.where is not None else 0, f.rule))


def run_levels(h: HealthContext) -> None:
    """Every level the record has, in order (later levels read what earlier ones put on `h`)."""
    tensor_level(h)
    if h.p.tiles is not None:
        tile_rules(h, tile_stats(h))
    else:
        h.stats["tile"] = {"available": False}
    if h.p.execute is not None and h.p.leaves is not None and h.p.subgraphs is not None:
        execute_level(h)
    else:
        h.stats["execute"] = {"available": False}
    if h.p.blocks is not None:
        block_level(h)
    else:
        h.stats["block"] = {"available": False}
    if h.record.run is not None:
        board_level(h)
    else:
        h.stats["board"] = {"available": False}
