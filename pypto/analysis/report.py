"""The kernel report: one compile + profile + health (+ precision, + suggestions), in every format.

`make_report(kernel)` gathers what the analyses compute for one kernel; `render(reports,
fmt)` writes them as text (the terminal), JSON, Markdown, HTML (one self-contained file:
plotly.js inlined, the swimlane, the pass list, the findings and the precision table),
JUnit XML (one testcase per health rule per kernel, plus compile and precision) or SARIF
2.1.0 (findings anchored to source lines, for code scanning). `failures(reports, specs)`
evaluates `--fail-on` conditions for CI. Nothing here computes an analysis: it presents.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.analysis import health, thresholds
from pypto.analysis.advice import proposes, verify_advice
from pypto.analysis.advisor import Advisor, search_text
from pypto.analysis.findings import SEVERITIES, Finding
from pypto.analysis.health import health_report
from pypto.analysis.line_costs import line_costs
from pypto.analysis.precision import precision_report
from pypto.boards.swimlane import metrics
from pypto.compiler.manager import Program
from pypto.frontend.inputs import def_loc, example_arguments
from pypto.frontend.jit import to_numpy
from pypto.ir.errors import PyptoError
from pypto.record import compile_record, profile

FORMATS = ("text", "json", "md", "html", "junit", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass
class KernelReport:
    kernel: str
    file: str
    line: int  # the kernel's def line
    record: Any = None  # CompileRecord with `run`, None when the compile failed
    health: Any = None  # HealthReport
    precision: Any = None  # PrecisionReport
    suggestions: list[Any] = field(default_factory=list)  # advisor Suggestions
    search: dict[str, Any] | None = None  # how far the advisor's search got (Advisor.search_summary)
    line_costs: list[Any] = field(default_factory=list)  # LineCost, heaviest first (sim board only)
    error: str | None = None  # why the kernel could not be compiled / profiled
    error_line: int = 0

    @property
    def findings(self) -> list[Finding]:
        out = list(self.health.findings) if self.health is not None else []
        if self.precision is not None:
            out += self.precision.findings()
        out += [s.finding() for s in self.suggestions]
        order = {s: i for i, s in enumerate(SEVERITIES)}
        return sorted(out, key=lambda f: (order.get(f.severity, 9), f.where.line if f.where else 0, f.rule))

    def without_program(self) -> KernelReport:
        """This report for sending to another process: the record keeps its source, inputs, pass
        list (no snapshots) and run, but not the lowered program (tile graph, leaves, blocks,
        execute graph) — nothing the renderings or `check` read, and most of the pickle the
        receiver unpickles on its one core (benchmarks/check_bench.py: the pool's wall time)."""
        if self.record is None:
            return self
        rec = self.record
        slim = dataclasses.replace(rec, passes=[dataclasses.replace(p, snapshot=None) for p in rec.passes],
                                   program=Program(graph=rec.program.graph), traced=None)
        return dataclasses.replace(self, record=slim)

    def metrics(self) -> Any:
        return metrics(self.record.run) if self.record is not None and self.record.run is not None else None

    def to_json(self) -> dict[str, Any]:
        m = self.metrics()
        return {"kernel": self.kernel, "file": self.file, "line": self.line, "error": self.error,
                "board": None if m is None else self.record.run.board,
                "clock": None if m is None else self.record.run.clock,
                "metrics": None if m is None else m.to_json(),
                "health": None if self.health is None else self.health.to_json(),
                "precision": None if self.precision is None else self.precision.to_json(),
                "suggestions": [s.to_json() for s in self.suggestions], "search": self.search,
                "line_costs": [{"file": c.file, "line": c.line, **c.to_json()} for c in self.line_costs],
                "findings": [f.to_json() for f in self.findings]}


def make_report(kernel: Any, board: str = "sim", precision: bool = False, suggest: bool = False,
                inputs: Mapping[str, Any] | None = None, budget: int | None = None, workers: int | None = None,
                rtol: float | None = None, atol: float | None = None, seconds: float | None = None) -> KernelReport:
    """Compile, profile and analyse one kernel; a user error becomes the report's `error`."""
    span = def_loc(kernel.fn).span
    rep = KernelReport(kernel.name, span.file if span else "", span.line if span else 0)
    try:
        args = dict(inputs) if inputs is not None else example_arguments(kernel)
        record = compile_record(kernel, args)
        arrays = {n: to_numpy(v) for n, v in args.items() if hasattr(v, "shape")}
        rep.record = profile(record, board, arrays, workers)
        rep.health = health_report(rep.record)
        if board == "sim":
            rep.line_costs = sorted(line_costs(rep.record).values(), key=lambda c: -c.cycles)
        advisor = Advisor(kernel, args, record=rep.record) if suggest or proposes(rep.health) else None
        if advisor is not None and proposes(rep.health):  # a shape is offered only when the board finds it faster
            rep.health = verify_advice(rep.health, advisor)
        if precision:
            rep.precision = precision_report(kernel, args, rtol=rtol, atol=atol)
        if suggest and advisor is not None:
            rep.suggestions = advisor.suggest(budget=budget, seconds=seconds)
            rep.search = advisor.search_summary()
    except PyptoError as e:
        rep.error = e.message
        rep.error_line = e.loc.span.line if e.loc.span is not None and e.loc.span.file == rep.file else rep.line
    return rep


# ---- --fail-on ----------------------------------------------------------------------------------

_CONDITION = re.compile(r"^(utilization|makespan|critical_share|wait_scheduler|tasks)\s*(<=|>=|<|>)\s*([0-9.eE+-]+)$")


def check_fail_on(spec: str) -> str:
    """Validate one `--fail-on` condition; returns it normalized or raises ValueError."""
    s = spec.strip().replace(" ", "")
    if s in SEVERITIES or s in ("precision", "compile") or _CONDITION.match(s):
        return s
    raise ValueError(f"--fail-on {spec!r}: use a severity ({', '.join(SEVERITIES)}: fail on findings at or above "
                     f"it), 'precision', 'compile', or a condition on utilization / makespan (µs) / "
                     f"critical_share / wait_scheduler / tasks such as 'utilization<0.5' or 'makespan>120'")


def failures(reports: Sequence[KernelReport], specs: Iterable[str]) -> list[str]:
    """Why CI should fail: one line per kernel and condition met (empty: pass)."""
    out = []
    order = {s: i for i, s in enumerate(SEVERITIES)}
    for spec in (check_fail_on(s) for s in specs):
        for r in reports:
            name = f"{r.kernel} ({r.file}:{r.line})"
            if r.error is not None:
                out.append(f"{name}: does not compile: {r.error}")
                continue
            if spec in SEVERITIES:
                bad = [f for f in r.findings if order.get(f.severity, 9) <= order[spec] and f.level != "tuning"]
                if bad:
                    out.append(f"{name}: {len(bad)} finding(s) at or above {spec}: "
                               + ", ".join(sorted({f.rule for f in bad})))
            elif spec == "precision":
                if r.precision is not None and not r.precision.passed:
                    out.append(f"{name}: precision fails ({r.precision.message()})")
            elif spec != "compile":
                m = _CONDITION.match(spec)
                assert m is not None
                what, op, limit = m.group(1), m.group(2), float(m.group(3))
                mm = r.metrics()
                if mm is None:
                    continue
                value = {"utilization": mm.utilization, "makespan": mm.makespan, "critical_share": mm.critical_share,
                         "wait_scheduler": mm.wait_scheduler, "tasks": float(len(r.record.run.tasks))}[what]
                hit = {"<": value < limit, ">": value > limit, "<=": value <= limit, ">=": value >= limit}[op]
                if hit:
                    out.append(f"{name}: {what} = {value:.4g} ({spec})")
    return out


# ---- text and Markdown ----------------------------------------------------------------------------

def _where(f: Finding) -> str:
    return f"{f.where.file}:{f.where.line}" if f.where is not None else ""


def render_text(reports: Sequence[KernelReport]) -> str:
    lines: list[str] = []
    for r in reports:
        lines.append(f"{r.kernel}  {r.file}:{r.line}")
        if r.error is not None:
            lines.append(f"  error: {r.error}")
            continue
        m = r.metrics()
        run = r.record.run
        lines.append(f"  board {run.board} · {run.clock}")
        lines.append(f"  makespan {m.makespan:,.2f} µs · {len(run.tasks)} tasks · utilization {m.utilization:.0%} · "
                     f"critical path {m.critical_share:.0%} · scheduler wait {m.wait_scheduler:,.1f} µs")
        counts = {s: sum(1 for f in r.findings if f.severity == s) for s in SEVERITIES}
        lines.append("  findings: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
        for f in r.findings:
            lines.append(f"  {f.severity:<7} {f.rule:<28} {_where(f)}  {f.title}")
            lines.append(f"          why: {f.why}")
            lines.append(f"          try: {f.suggestion}")
        if r.precision is not None:
            lines.append(f"  precision: {'pass' if r.precision.passed else 'FAIL'} — {r.precision.message()}")
        if r.line_costs:
            top = ", ".join(f"{Path(c.file).name}:{c.line} {c.share:.0%} ({max(c.pipes, key=c.pipes.get)})"
                            for c in r.line_costs[:5])
            lines.append(f"  heaviest lines (instruction cycles, the sim board's core model): {top}")
        if r.search is not None:
            lines.append(f"  tile search: {search_text(r.search)}; {len(r.suggestions)} faster shape"
                         f"{'s' if len(r.suggestions) != 1 else ''} found")
        lines.append("")
    return "\n".join(lines)


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(reports: Sequence[KernelReport]) -> str:
    out = ["# pypto-ide report", ""]
    for r in reports:
        out += [f"## `{r.kernel}` — {r.file}:{r.line}", ""]
        if r.error is not None:
            out += [f"**Does not compile:** {_md_cell(r.error)}", ""]
            continue
        m = r.metrics()
        out += [f"Board **{r.record.run.board}** ({r.record.run.clock}): makespan **{m.makespan:,.2f} µs**, "
                f"{len(r.record.run.tasks)} tasks, utilization {m.utilization:.0%}, critical path "
                f"{m.critical_share:.0%} of the makespan.", ""]
        out += ["| severity | rule | where | finding | suggestion |", "|---|---|---|---|---|"]
        for f in r.findings:
            out.append(f"| {f.severity} | `{f.rule}` | {_md_cell(_where(f))} | {_md_cell(f.title)} | "
                       f"{_md_cell(f.suggestion)} |")
        if r.precision is not None:
            verdict = "pass" if r.precision.passed else "FAIL"
            out += ["", f"Precision: **{verdict}** — {_md_cell(r.precision.message())}"]
        out.append("")
    return "\n".join(out)


# ---- JUnit -------------------------------------------------------------------------------------

def known_rules() -> list[str]:
    """Every health rule id, from the documented thresholds table (pypto.analysis.thresholds)."""
    rules = getattr(health, "RULES", None)
    if rules:
        return list(rules)
    return sorted(set(re.findall(r"^\| `([a-z]+\.[a-z0-9-]+)`", thresholds.__doc__ or "", re.M)))


def render_junit(reports: Sequence[KernelReport]) -> str:
    """One testsuite per kernel; a testcase per health rule (a failure when a warning or an
    error fired), plus `compile` and, when checked, `precision`."""
    rules = known_rules()
    root = ET.Element("testsuites", name="pypto-ide report")
    total = fails = 0
    for r in reports:
        suite = ET.SubElement(root, "testsuite", name=f"{r.kernel}", file=r.file)
        cases: list[tuple[str, list[str]]] = [("compile", [r.error] if r.error else [])]
        if r.error is None:
            by_rule: dict[str, list[Finding]] = {}
            for f in r.findings:
                by_rule.setdefault(f.rule, []).append(f)
            for rule in sorted(set(rules) | {k for k in by_rule if not k.startswith(("tuning.", "precision."))}):
                bad = [f for f in by_rule.get(rule, []) if f.severity in ("error", "warning")]
                cases.append((rule, [f"{_where(f)}: {f.severity}: {f.title} — {f.suggestion}" for f in bad]))
            if r.precision is not None:
                cases.append(("precision", [] if r.precision.passed else [r.precision.message()]))
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for _, msgs in cases if msgs)))
        for name, msgs in cases:
            case = ET.SubElement(suite, "testcase", name=name, classname=f"pypto.{r.kernel}")
            if msgs:
                fail = ET.SubElement(case, "failure", message=msgs[0][:500], type=name)
                fail.text = "\n".join(msgs)
            total += 1
            fails += bool(msgs)
    root.set("tests", str(total))
    root.set("failures", str(fails))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---- SARIF ---------------------------------------------------------------------------------------

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_sarif(reports: Sequence[KernelReport]) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for r in reports:
        if r.error is not None:
            results.append({"ruleId": "compile.error", "level": "error", "message": {"text": r.error},
                            "locations": [_location(r.file, r.error_line or r.line)]})
            rules.setdefault("compile.error", {"id": "compile.error",
                                               "shortDescription": {"text": "the kernel does not compile"}})
            continue
        for f in r.findings:
            rules.setdefault(f.rule, {"id": f.rule, "shortDescription": {"text": f.title[:200]},
                                      "fullDescription": {"text": f.why},
                                      "help": {"text": f.suggestion}})
            res: dict[str, Any] = {"ruleId": f.rule, "level": _LEVEL.get(f.severity, "note"),
                                   "message": {"text": f"{f.title}. {f.why} Try: {f.suggestion}"},
                                   "properties": {"kernel": r.kernel, "numbers": _json_safe(f.numbers)}}
            w = f.where
            res["locations"] = [_location(w.file, w.line, w.col, w.end_line, w.end_col) if w is not None
                                else _location(r.file, r.line)]
            if f.edits:
                res["fixes"] = [{"description": {"text": f.suggestion},
                                 "artifactChanges": [{"artifactLocation": {"uri": _uri(e.where.file)},
                                                      "replacements": [{"deletedRegion": _region(
                                                          e.where.line, e.where.col, e.where.end_line,
                                                          e.where.end_col),
                                                          "insertedContent": {"text": e.text}}]}
                                                     for e in f.edits]}]
            results.append(res)
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": "pypto-ide", "informationUri": "https://example.invalid/pypto-ide",
                                         "rules": list(rules.values())}},
                     "results": results}]}
    return json.dumps(doc, indent=1)


def _uri(path: str) -> str:
    return path if "://" in path else "file://" + path if path.startswith("/") else path


def _region(line: int, col: int = 0, end_line: int = 0, end_col: int = 0) -> dict[str, int]:
    reg = {"startLine": max(1, line), "startColumn": col + 1}
    if end_line and end_col:
        reg["endLine"] = end_line
        reg["endColumn"] = end_col + 1
    return reg


def _location(file: str, line: int, col: int = 0, end_line: int = 0, end_col: int = 0) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": _uri(file)},
                                 "region": _region(line, col, end_line, end_col)}}


def _json_safe(v: Any) -> Any:
    return json.loads(json.dumps(v, default=str))


# ---- HTML --------------------------------------------------------------------------------------------

def _swimlane_figure(r: KernelReport, include_js: bool) -> str:
    import plotly.graph_objects as go

    run = r.record.run
    tasks = sorted(run.tasks, key=lambda t: -t.duration)[:20000]  # the longest, if huge
    by_leaf: dict[int, list[Any]] = {}
    for t in tasks:
        by_leaf.setdefault(t.leaf, []).append(t)
    fig = go.Figure()
    for leaf, ts in sorted(by_leaf.items()):
        fig.add_trace(go.Bar(
            x=[t.duration for t in ts], base=[t.start for t in ts], y=[run.lanes[t.lane].name for t in ts],
            orientation="h", name=f"leaf {leaf}",
            hovertext=[f"task {t.id} · leaf {t.leaf} · tile {list(t.coord)} · {t.duration:.3f} µs" for t in ts],
            hoverinfo="text"))
    used = {t.lane for t in tasks}
    lanes = [ln.name for i, ln in enumerate(run.lanes) if i in used]
    fig.update_layout(barmode="overlay", height=max(240, 18 * len(lanes) + 120),
                      margin={"l": 70, "r": 20, "t": 30, "b": 40}, xaxis_title=f"µs ({run.clock})",
                      yaxis={"categoryorder": "array", "categoryarray": lanes[::-1]}, title=f"swimlane — {r.kernel}")
    return fig.to_html(include_plotlyjs=include_js, full_html=False)


_CSS = """body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}
.error{color:#b00020}.warning{color:#a15c00}.info{color:#555}code{background:#f5f5f5;padding:0 3px}"""


def render_html(reports: Sequence[KernelReport]) -> str:
    """One self-contained page: plotly.js inlined once, no request leaves the file."""
    e = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>pypto-ide report</title>"
             f"<style>{_CSS}</style></head><body><h1>pypto-ide report</h1>"]
    js_done = False
    for r in reports:
        parts.append(f"<h2><code>{e(r.kernel)}</code> — {e(r.file)}:{r.line}</h2>")
        if r.error is not None:
            parts.append(f"<p class='error'>Does not compile: {e(r.error)}</p>")
            continue
        m = r.metrics()
        run = r.record.run
        parts.append(f"<p>Board <b>{e(run.board)}</b> ({e(run.clock)}): makespan <b>{m.makespan:,.2f} µs</b>, "
                     f"{len(run.tasks)} tasks, utilization {m.utilization:.0%}, critical path "
                     f"{m.critical_share:.0%}, scheduler wait {m.wait_scheduler:,.1f} µs.</p>")
        parts.append(_swimlane_figure(r, not js_done))
        js_done = True
        parts.append("<h3>Findings</h3><table><tr><th>severity</th><th>rule</th><th>where</th><th>finding</th>"
                     "<th>why</th><th>suggestion</th></tr>")
        for f in r.findings:
            parts.append(f"<tr class='{e(f.severity)}'><td>{e(f.severity)}</td><td><code>{e(f.rule)}</code></td>"
                         f"<td>{e(_where(f))}</td><td>{e(f.title)}</td><td>{e(f.why)}</td><td>{e(f.suggestion)}</td></tr>")
        parts.append("</table><h3>Passes</h3><table><tr><th>#</th><th>stage</th><th>pass</th><th>changed</th>"
                     "<th>nodes</th><th>ms</th></tr>")
        for p in r.record.passes:
            parts.append(f"<tr><td>{p.index}</td><td>{e(p.stage)}</td><td>{e(p.name)}</td>"
                         f"<td>{'yes' if p.changed else '–'}</td><td>{p.node_count}</td>"
                         f"<td>{p.seconds * 1e3:.2f}</td></tr>")
        parts.append("</table>")
        if r.precision is not None:
            parts.append(f"<h3>Precision</h3><p>{'pass' if r.precision.passed else '<b class=error>FAIL</b>'} — "
                         f"{e(r.precision.message())}</p><table><tr><th>pass</th><th>op</th><th>where</th>"
                         f"<th>errors</th><th>max abs</th><th>max rel</th><th>cosine</th><th>verdict</th></tr>")
            for pr in r.precision.passes:
                for row in pr.rows + pr.outputs:
                    v = row.verdict
                    parts.append(f"<tr><td>{e(pr.name)}</td><td>{e(row.op)}</td><td>{e(row.line)}</td>"
                                 f"<td>{v.errors}</td><td>{v.max_abs:.3g}</td><td>{v.max_rel:.3g}</td>"
                                 f"<td>{v.cosine:.6f}</td><td>{'pass' if v.passed else 'FAIL'}</td></tr>")
            parts.append("</table>")
    if not js_done:
        parts.append("<!-- no swimlane: nothing compiled -->")
    parts.append("</body></html>")
    return "\n".join(parts)


def render(reports: Sequence[KernelReport], fmt: str) -> str:
    if fmt == "text":
        return render_text(reports)
    if fmt == "json":
        return json.dumps([r.to_json() for r in reports], indent=1, default=str)
    if fmt == "md":
        return render_markdown(reports)
    if fmt == "html":
        return render_html(reports)
    if fmt == "junit":
        return render_junit(reports)
    if fmt == "sarif":
        return render_sarif(reports)
    raise ValueError(f"unknown report format {fmt!r}; one of {', '.join(FORMATS)}")
