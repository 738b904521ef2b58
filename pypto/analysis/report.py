"""The kernel report: one compile + profile + health (+ precision, + suggestions), in every format.

`make_report(kernel)` gathers what the analyses compute for one kernel; `render(reports,
fmt)` writes them as text (the terminal), JSON, Markdown, HTML (one self-contained file
without scripts: the swimlane as an inline SVG drawn like the panel's — leaf colours, idle gaps
and scheduler bubbles, the critical path — the slowest tasks, the findings, the pass list and
the precision table),
JUnit XML (one testcase per health rule per kernel, plus compile and precision) or SARIF
2.1.0 (findings anchored to source lines, for code scanning). `kernel_failures(report, specs)` is
what the gate fails on (`--fail-on`, a kernel that does not compile): `failures` (the exit code), the
JUnit `<failure>`s and the SARIF `error`s all read it, so CI's files agree with its exit code; every
other finding is a JUnit `<system-out>` or a SARIF warning or note. `make_report` bounds the sim
board's work on tile shapes by one time (`advisor.SEARCH_SECONDS` unless told), as every door does.
Nothing here computes an analysis: it presents.
"""

from __future__ import annotations

import bisect
import dataclasses
import html
import json
import math
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.analysis import health, thresholds
from pypto.analysis.advice import adopt_known, proposes, verify_advice
from pypto.analysis.advisor import SEARCH_SECONDS, Advisor, search_text
from pypto.analysis.findings import SEVERITIES, Finding
from pypto.analysis.health import health_report
from pypto.analysis.line_costs import line_costs
from pypto.analysis.precision import precision_report
from pypto.boards.swimlane import metrics, ready_times
from pypto.compiler.manager import Program
from pypto.frontend.inputs import def_loc, example_arguments
from pypto.frontend.jit import to_numpy
from pypto.ir.errors import PyptoError
from pypto.record import captured_text, compile_for, profile, slowest

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
                "findings": [f.to_json() for f in self.findings],
                # the capture the inputs came from (`pypto-ide capture`), else null
                "inputs_from": None if self.record is None else self.record.source.inputs_from}


def make_report(kernel: Any, board: str = "sim", precision: bool = False, suggest: bool = False,
                inputs: Mapping[str, Any] | None = None, budget: int | None = None, workers: int | None = None,
                rtol: float | None = None, atol: float | None = None, seconds: float | None = SEARCH_SECONDS,
                on_findings: Callable[[KernelReport], None] | None = None,
                progress: Callable[[dict[str, Any]], None] | None = None, exhaustive: bool = False) -> KernelReport:
    """Compile, profile and analyse one kernel; a user error becomes the report's `error`.

    The sim board's work on tile shapes — checking the shapes health findings propose
    (`verify_advice`), then with `suggest` the tile search — shares one bound of `seconds` (None: no
    bound; `SEARCH_SECONDS` by default, as in every other door): the check first, the search in what is
    left. `on_findings(report)` is called once the findings are known and before the search starts (a
    caller shows them at once), `progress` with the search's `progress_summary()` as it goes.
    `exhaustive`: the search has no evaluation budget either (it stops when nothing is left to explore)."""
    span = def_loc(kernel.fn).span
    rep = KernelReport(kernel.name, span.file if span else "", span.line if span else 0)
    try:
        if inputs is None and (board != "sim" or precision):  # the sim board reads shapes only
            inputs = example_arguments(kernel)
        record, args = compile_for(kernel, inputs)
        arrays = {n: to_numpy(v) for n, v in args.items() if hasattr(v, "shape")}
        rep.record = profile(record, board, arrays, workers)
        rep.health = health_report(rep.record)
        if board == "sim":
            rep.line_costs = sorted(line_costs(rep.record).values(), key=lambda c: -c.cycles)
        deadline = None if seconds is None else time.monotonic() + seconds
        advisor = Advisor(kernel, args, record=rep.record) if suggest or proposes(rep.health) else None
        if advisor is not None and proposes(rep.health):  # a shape is offered only when the board finds it faster
            rep.health = verify_advice(rep.health, advisor, seconds=seconds)
        if precision:
            rep.precision = precision_report(kernel, args, rtol=rtol, atol=atol)
        if on_findings is not None:
            on_findings(rep)
        if suggest and advisor is not None:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if exhaustive:
                budget, left = advisor.space_size(), None
            rep.suggestions = advisor.suggest(budget=budget, seconds=left, progress=progress)
            rep.search = {**advisor.search_summary(), "time_bound_s": seconds}
            rep.health = adopt_known(rep.health, advisor)  # each finding's Apply: the best shape known for its call
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


def kernel_failures(r: KernelReport, specs: Iterable[str]) -> dict[str, list[str]]:
    """What the gate fails one kernel on, by what fails (the JUnit testcase's name): `compile` (a kernel
    that does not compile always fails), a health rule (its findings at or above a severity of
    `specs`; tuning suggestions never fail), `precision` (a failing pass, with the `precision` spec), or a
    condition on the profile, named by the condition. Empty: the kernel passes. `failures` and the
    JUnit/SARIF renderings read this one answer, so the exit code and the files agree."""
    if r.error is not None:
        return {"compile": [f"does not compile: {r.error}"]}
    order = {s: i for i, s in enumerate(SEVERITIES)}
    out: dict[str, list[str]] = {}
    for spec in (check_fail_on(s) for s in specs):
        if spec in SEVERITIES:
            for f in r.findings:
                line = f"{_where(f)}: {f.severity}: {f.title} — {f.suggestion}"
                if order.get(f.severity, 9) <= order[spec] and f.level != "tuning" and line not in out.get(f.rule, ()):
                    out.setdefault(f.rule, []).append(line)
        elif spec == "precision":
            if r.precision is not None and not r.precision.passed:
                out["precision"] = [f"precision fails ({r.precision.message()})"]
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
                out[spec] = [f"{what} = {value:.4g} ({spec})"]
    return out


def failures(reports: Sequence[KernelReport], specs: Iterable[str]) -> list[str]:
    """Why CI should fail: one line per kernel and condition met (empty: pass); from `kernel_failures`."""
    specs = [check_fail_on(s) for s in specs]
    out = []
    for r in reports:
        name = f"{r.kernel} ({r.file}:{r.line})"
        if r.error is not None:
            if specs:
                out.append(f"{name}: does not compile: {r.error}")
            continue
        for spec in specs:
            failed = kernel_failures(r, [spec])
            if spec in SEVERITIES and failed:
                n = sum(len(v) for v in failed.values())
                out.append(f"{name}: {n} finding(s) at or above {spec}: " + ", ".join(sorted(failed)))
            elif failed:
                out += [f"{name}: {m}" for msgs in failed.values() for m in msgs]
    return out


# ---- text and Markdown ----------------------------------------------------------------------------

def _where(f: Finding) -> str:
    return f"{f.where.file}:{f.where.line}" if f.where is not None else ""


def render_text(reports: Sequence[KernelReport]) -> str:
    """Per kernel: `text_findings`, then `text_suggestions` (what `pypto-ide report` prints in two steps,
    the findings before the tile search starts and its suggestions once it ends)."""
    lines: list[str] = []
    for r in reports:
        lines += text_findings(r) + text_suggestions(r) + [""]
    return "\n".join(lines)


def _finding_lines(f: Finding) -> list[str]:
    return [f"  {f.severity:<7} {f.rule:<28} {_where(f)}  {f.title}", f"          why: {f.why}",
            f"          try: {f.suggestion}"]


def text_findings(r: KernelReport) -> list[str]:
    """One kernel's text report up to its tile search: figures, findings, precision, heaviest lines."""
    lines = [f"{r.kernel}  {r.file}:{r.line}"]
    if r.error is not None:
        return lines + [f"  error: {r.error}"]
    m = r.metrics()
    run = r.record.run
    lines.append(f"  board {run.board} · {run.clock}")
    if captured_text(r.record.source):
        lines.append(f"  inputs: {captured_text(r.record.source)}")
    lines.append(f"  makespan {m.makespan:,.2f} µs · {len(run.tasks)} tasks · utilization {m.utilization:.0%} · "
                 f"critical path {m.critical_share:.0%} · scheduler wait {m.wait_scheduler:,.1f} µs")
    shown = [f for f in r.findings if f.level != "tuning"]
    counts = {s: sum(1 for f in shown if f.severity == s) for s in SEVERITIES}
    lines.append("  findings: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    for f in shown:
        lines += _finding_lines(f)
    if r.precision is not None:
        lines.append(f"  precision: {'pass' if r.precision.passed else 'FAIL'} — {r.precision.message()}")
    if r.line_costs:
        top = ", ".join(f"{Path(c.file).name}:{c.line} {c.share:.0%} ({max(c.pipes, key=c.pipes.get)})"
                        for c in r.line_costs[:5])
        lines.append(f"  heaviest lines (instruction cycles, the sim board's core model): {top}")
    return lines


def text_suggestions(r: KernelReport) -> list[str]:
    """One kernel's tile search in text: how far it got ("searched N of M shapes in T s"), and the
    faster shapes it found (empty when no search ran)."""
    if r.error is not None or r.search is None:
        return []
    n = len(r.suggestions)
    line = f"  tile search: {search_text(r.search)}; {n} faster shape{'s' if n != 1 else ''} found"
    if r.search.get("stopped") == "time":
        line += " (--time 0 searches without a time bound)"
    lines = [line]
    for f in r.findings:
        if f.level == "tuning":
            lines += _finding_lines(f)
    return lines


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


def _finding_text(f: Finding) -> str:
    return f"{_where(f)}: {f.severity}: {f.title} — {f.suggestion}"


def junit_suite(root: ET.Element, r: KernelReport, failed: Mapping[str, list[str]]) -> tuple[int, int, int]:
    """One kernel's testsuite under `root`: a testcase for `compile`, each health rule, `precision`
    (when checked) and each condition in `failed`; a `<failure>` only where `failed` (the gate's
    verdict: `kernel_failures`) names the testcase. A finding the gate does not fail on is the
    testcase's `<system-out>`; the kernel's figures are the suite's properties; the tuning suggestions
    its `<system-out>`. Returns (tests, failures, skipped)."""
    suite = ET.SubElement(root, "testsuite", name=r.kernel, file=r.file)
    props = ET.SubElement(suite, "properties")
    shown: dict[str, str] = {"file": f"{r.file}:{r.line}"}
    m = r.metrics()
    if m is not None:
        shown |= {"board": r.record.run.board, "clock": r.record.run.clock, "makespan_us": f"{m.makespan:.6g}",
                  "utilization": f"{m.utilization:.4g}", "tasks": str(len(r.record.run.tasks))}
    if r.search is not None:
        shown["tile_search"] = search_text(r.search)
    for k, v in shown.items():
        ET.SubElement(props, "property", name=k, value=v)
    cases: list[tuple[str, list[str]]] = [("compile", [r.error] if r.error else [])]
    if r.error is None:
        by_rule: dict[str, list[Finding]] = {}
        for f in r.findings:
            by_rule.setdefault(f.rule, []).append(f)
        for rule in sorted(set(known_rules()) | {k for k in by_rule if not k.startswith(("tuning.", "precision."))}):
            cases.append((rule, [_finding_text(f) for f in by_rule.get(rule, [])]))
        if r.precision is not None:
            cases.append(("precision", [f"{'pass' if r.precision.passed else 'FAIL'}: {r.precision.message()}"]))
        cases += [(name, []) for name in failed if name not in {c for c, _ in cases}]  # conditions on the profile
    fails = 0
    for name, notes in cases:
        case = ET.SubElement(suite, "testcase", name=name, classname=f"pypto.{r.kernel}")
        msgs = failed.get(name, [])
        if msgs:
            fail = ET.SubElement(case, "failure", message=msgs[0][:500], type=name)
            fail.text = "\n".join(msgs)
            fails += 1
        rest = [n for n in notes if not any(n in m for m in msgs)]  # what the gate does not fail on
        if rest:
            ET.SubElement(case, "system-out").text = "\n".join(rest)
    tuning = [_finding_text(f) for f in r.findings if f.level == "tuning"]
    if tuning:
        ET.SubElement(suite, "system-out").text = "tuning suggestions (simulated):\n" + "\n".join(tuning)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(fails))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    return len(cases), fails, 0


def junit_document(root: ET.Element) -> str:
    """`root` (a `<testsuites>`) with its totals summed from its suites, as the file's text."""
    for key in ("tests", "failures", "errors"):  # (the schema has no `skipped` total)
        root.set(key, str(sum(int(s.get(key, "0")) for s in root.findall("testsuite"))))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_junit(reports: Sequence[KernelReport], fail_on: Iterable[str] = ()) -> str:
    """JUnit XML as Jenkins, GitLab and GitHub read it (valid against the schema Jenkins' xUnit plugin
    reads, tests/data/jenkins-junit-10.xsd): one testsuite per kernel (`junit_suite`). A `<failure>` is
    exactly what `--fail-on` fails on (`kernel_failures`: a kernel that does not compile, and the
    findings and conditions the specs name), so the file agrees with the exit code; every other
    finding is its rule's `<system-out>`."""
    specs = [check_fail_on(s) for s in fail_on]
    root = ET.Element("testsuites", name="pypto-ide report")
    for r in reports:
        junit_suite(root, r, kernel_failures(r, specs))
    return junit_document(root)


# ---- SARIF ---------------------------------------------------------------------------------------

_LEVEL = {"error": "warning", "warning": "warning", "info": "note"}  # "error" is the gate's alone


def render_sarif(reports: Sequence[KernelReport], fail_on: Iterable[str] = (), compile_fails: bool = True) -> str:
    """SARIF 2.1.0: every finding at its source region (with its fix, where there is one). A result's
    level is `error` exactly where the gate fails (`kernel_failures` of `fail_on`; a kernel that does
    not compile unless `compile_fails` is off: `check` reports that as its regression); other error and
    warning findings are `warning`s, info `note`s (the finding's own severity is in its properties)."""
    specs = [check_fail_on(s) for s in fail_on]
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for r in reports:
        if r.error is not None:
            results.append({"ruleId": "compile.error", "level": "error" if compile_fails else "warning",
                            "message": {"text": r.error}, "locations": [_location(r.file, r.error_line or r.line)],
                            "properties": {"kernel": r.kernel, "severity": "error"}})
            rules.setdefault("compile.error", {"id": "compile.error",
                                               "shortDescription": {"text": "the kernel does not compile"}})
            continue
        failed = kernel_failures(r, specs)
        for f in r.findings:
            rules.setdefault(f.rule, {"id": f.rule, "shortDescription": {"text": f.title[:200]},
                                      "fullDescription": {"text": f.why},
                                      "help": {"text": f.suggestion}})
            gate = f.rule in failed and any(_finding_text(f) == m for m in failed[f.rule])
            res: dict[str, Any] = {"ruleId": f.rule, "level": "error" if gate else _LEVEL.get(f.severity, "note"),
                                   "message": {"text": f"{f.title}. {f.why} Try: {f.suggestion}"},
                                   "properties": {"kernel": r.kernel, "severity": f.severity,
                                                  "numbers": _json_safe(f.numbers)}}
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
        for spec in (k for k in failed if _CONDITION.match(k)):  # a condition on the profile the gate fails on
            rules.setdefault("profile.condition", {"id": "profile.condition", "shortDescription": {
                "text": "a --fail-on condition on the kernel's profile is met"}})
            results.append({"ruleId": "profile.condition", "level": "error",
                            "message": {"text": f"{r.kernel}: {failed[spec][0]}"},
                            "locations": [_location(r.file, r.line)], "properties": {"kernel": r.kernel}})
        if "precision" in failed:
            rules.setdefault("precision.fails", {"id": "precision.fails", "shortDescription": {
                "text": "the kernel's precision check fails"}})
            results.append({"ruleId": "precision.fails", "level": "error",
                            "message": {"text": f"{r.kernel}: {failed['precision'][0]}"},
                            "locations": [_location(r.file, r.line)], "properties": {"kernel": r.kernel}})
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

# the panel's categorical leaf colours (webview/src/theme.ts), so a leaf has one colour everywhere
LEAF_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
               "#9c755f", "#86bcb6", "#d37295", "#a0cbe8", "#8cd17d", "#f1ce63", "#499894", "#fabfd2")
SVG_WIDTH = 1100  # px of the time axis
SVG_GUTTER = 76  # px of lane names
LANE_H = 14  # px per lane (every lane label readable)
MAX_BOXES = 6000  # boxes drawn per swimlane at most: beyond, neighbouring tasks merge into one box
MAX_CRITICAL = 2000  # critical-path outlines at most


def _leaf_class(leaf: int) -> str:
    return f"f{leaf % len(LEAF_COLORS)}" if leaf >= 0 else "fu"


def _ready_intervals(tasks: Sequence[Any], core_of: Mapping[int, str]) -> dict[str, list[tuple[float, float]]]:
    """Per core type, the disjoint intervals when one of its tasks was ready and not started
    (the panel's red hatching: an idle lane then is a scheduler bubble, not a dependency wait)."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for t, ready in zip(tasks, ready_times(tasks)):
        if ready < t.start:
            spans.setdefault(core_of[t.lane], []).append((ready, t.start))
    out: dict[str, list[tuple[float, float]]] = {}
    for core, xs in spans.items():
        merged: list[tuple[float, float]] = []
        for a, b in sorted(xs):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        out[core] = merged
    return out


Box = tuple[float, float, int, int, float, float, Any]  # x0, x1, leaf, tasks, first start, last end, the task if one


def _boxes(lane_tasks: Sequence[Any], x: Any, quantum: float) -> list[Box]:
    """One lane's boxes: with `quantum` 0, one per task, tasks of one leaf closer than 0.75 px
    merged; else each `quantum`-px column takes the leaf that was busiest in it, and neighbouring
    columns of one leaf merge."""
    out: list[Box] = []
    if quantum <= 0:
        for t in lane_tasks:
            a, b = x(t.start), x(t.end)
            if out and out[-1][2] == t.leaf and a - out[-1][1] < 0.75:
                x0, x1, leaf, n, lo, hi, _ = out[-1]
                out[-1] = (x0, max(x1, b), leaf, n + 1, lo, max(hi, t.end), None)
            else:
                out.append((a, b, t.leaf, 1, t.start, t.end, t))
        return out
    busy: dict[int, dict[int, float]] = {}
    count: dict[int, list[float]] = {}  # column -> [tasks, first start, last end]
    for t in lane_tasks:
        a, b = x(t.start), x(t.end)
        for c in range(int(a // quantum), int(b // quantum) + 1):
            lo, hi = max(a, c * quantum), min(b, (c + 1) * quantum)
            col = busy.setdefault(c, {})
            col[t.leaf] = col.get(t.leaf, 0.0) + max(hi - lo, 1e-9)
            n = count.setdefault(c, [0, t.start, t.end])
            n[0] += 1
            n[2] = max(n[2], t.end)
    for c in sorted(busy):
        leaf = max(busy[c], key=lambda k: (busy[c][k], -k))
        n, lo, hi = count[c]
        if out and out[-1][2] == leaf and abs(out[-1][1] - c * quantum) < 1e-6:
            x0, _, _, m, lo0, hi0, _ = out[-1]
            out[-1] = (x0, (c + 1) * quantum, leaf, m + int(n), lo0, max(hi0, hi), None)
        else:
            out.append((c * quantum, (c + 1) * quantum, leaf, int(n), lo, hi, None))
    return out


def swimlane_svg(run: Any, title: str = "", critical: Sequence[int] | None = None) -> str:
    """The run as an inline SVG drawn like the swimlane panel: one row per lane that ran a task,
    boxes in their leaf's colour, idle gaps shaded (grey: nothing of the lane's core type was ready;
    red hatching: a task was ready and not started — a scheduler bubble), the critical path outlined
    in red. Tooltips are SVG titles. The time axis starts at the first task; when a run has more
    tasks than `MAX_BOXES` boxes show, the lanes are cut into columns a few px wide, each drawn in
    the leaf busiest in it (a box's title says how many tasks it stands for). `critical`: the
    critical path's task ids when the caller has them (else computed)."""
    e = html.escape
    tasks = list(run.tasks)
    if not tasks:
        return "<p>(no tasks ran)</p>"
    t0 = min(t.start for t in tasks)
    t1 = max(t.end for t in tasks)
    span = (t1 - t0) or 1.0
    scale = SVG_WIDTH / span

    def x(t: float) -> float:
        return (t - t0) * scale

    per_lane: dict[int, list[Any]] = {}
    for t in sorted(tasks, key=lambda t: (t.start, t.id)):
        per_lane.setdefault(t.lane, []).append(t)
        for h in t.held:  # a MIX task is drawn on the AIV lanes it holds too
            per_lane.setdefault(h, []).append(t)
    lanes = sorted(per_lane)
    row = {ln: k for k, ln in enumerate(lanes)}
    core_of = {i: ln.core for i, ln in enumerate(run.lanes)}
    boxes = {ln: _boxes(per_lane[ln], x, 0) for ln in lanes}
    quantum = 1.0  # px: narrower idle gaps are not drawn
    if sum(len(b) for b in boxes.values()) > MAX_BOXES:  # at most SVG_WIDTH / quantum columns per lane
        quantum = 2.0 ** math.ceil(math.log2(max(1.0, len(lanes) * SVG_WIDTH / MAX_BOXES)))
        boxes = {ln: _boxes(per_lane[ln], x, quantum) for ln in lanes}
    ready = _ready_intervals(tasks, core_of)
    height = len(lanes) * LANE_H + 34
    out = [f"<svg class='swimlane' xmlns='http://www.w3.org/2000/svg' width='{SVG_GUTTER + SVG_WIDTH + 10}' "
           f"height='{height}' role='img' aria-label='swimlane {e(title)}'>",
           "<defs><pattern id='hatch' width='6' height='6' patternUnits='userSpaceOnUse'>"
           "<path d='M0 6L6 0' stroke='rgba(225,87,89,0.6)' stroke-width='1.2'/></pattern></defs>",
           f"<g transform='translate({SVG_GUTTER},4)'>"]
    idle: list[str] = []
    hatched: list[str] = []
    drawn: list[str] = []
    for ln in lanes:
        y = row[ln] * LANE_H
        out.append(f"<text class='ln' x='-4' y='{y + LANE_H - 4}'>{e(run.lanes[ln].name)}</text>")
        # idle gaps of this lane (from the first task to the last end, as the panel draws them)
        cursor = t0
        spans = ready.get(core_of[ln], [])
        span_ends = [s[1] for s in spans]
        for t in [*per_lane[ln], None]:
            a, b = cursor, (t.start if t is not None else t1)
            if (b - a) * scale >= quantum:
                idle.append(f"<rect x='{x(a):.1f}' y='{y}' width='{(b - a) * scale:.1f}' height='{LANE_H - 2}'/>")
                k = bisect.bisect_right(span_ends, a)
                while k < len(spans) and spans[k][0] < b:
                    ra, rb = max(a, spans[k][0]), min(b, spans[k][1])
                    if (rb - ra) * scale >= 0.5:
                        hatched.append(f"<rect x='{x(ra):.1f}' y='{y}' width='{(rb - ra) * scale:.1f}' "
                                       f"height='{LANE_H - 2}'/>")
                    k += 1
            if t is not None:
                cursor = max(cursor, t.end)
        for x0, x1, leaf, n, lo, hi, t in boxes[ln]:
            w = max(x1 - x0, 0.4)
            if t is not None:
                tip = (f"task {t.id}{f' ({t.name})' if t.name else ''} · leaf {t.leaf} · tile {list(t.coord)} · "
                       f"{t.duration:.3f} µs ({t.start - t0:.3f}–{t.end - t0:.3f})")
            else:
                tip = f"{n} tasks, mostly leaf {leaf}: {lo - t0:.3f}–{hi - t0:.3f} µs"
            drawn.append(f"<rect class='{_leaf_class(leaf)}' x='{x0:.1f}' y='{y}' width='{w:.1f}' "
                         f"height='{LANE_H - 2}'><title>{e(tip)}</title></rect>")
    out.append(f"<g class='idle'>{''.join(idle)}</g><g fill='url(#hatch)'>{''.join(hatched)}</g>")
    out.append(f"<g>{''.join(drawn)}</g>")
    by_id = {t.id: t for t in tasks}
    path = metrics(run).critical_path if critical is None else critical
    crit = [by_id[i] for i in path if i in by_id][:MAX_CRITICAL]
    marks = []
    for t in crit:
        if t.lane in row:
            w = max((t.end - t.start) * scale, 1.5)
            marks.append(f"<rect x='{x(t.start):.1f}' y='{row[t.lane] * LANE_H}' width='{w:.1f}' "
                         f"height='{LANE_H - 2}'><title>critical path: task {t.id} · {t.duration:.3f} µs"
                         "</title></rect>")
    out.append(f"<g class='crit'>{''.join(marks)}</g>")
    # the time axis: from the first task
    y_axis = len(lanes) * LANE_H + 2
    ticks = []
    step = _nice_step(span / 8)
    k = 0
    while k * step <= span + 1e-9:
        px = k * step * scale
        ticks.append(f"<line x1='{px:.1f}' x2='{px:.1f}' y1='{y_axis}' y2='{y_axis + 4}'/>"
                     f"<text x='{px:.1f}' y='{y_axis + 15}'>{k * step:g}</text>")
        k += 1
    out.append(f"<g class='axis'><line x1='0' x2='{SVG_WIDTH}' y1='{y_axis}' y2='{y_axis}'/>{''.join(ticks)}</g>")
    out.append("</g></svg>")
    return "".join(out)


def _nice_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least `raw`."""
    if raw <= 0:
        return 1.0
    p = 10 ** math.floor(math.log10(raw))
    return next(m * p for m in (1, 2, 5, 10) if m * p >= raw)


def _swimlane_section(r: KernelReport, m: Any) -> str:
    e = html.escape
    run = r.record.run
    t0 = min((t.start for t in run.tasks), default=0.0)
    legend = "".join(f"<span><i class='sw {_leaf_class(s.leaf)}'></i>leaf {s.leaf}: {s.count} × {s.avg:.3f} µs"
                     f"</span>" for s in m.leaves[:32])
    offset = f"; the run's first task starts at {t0:,.2f} µs (launch offset)" if t0 > 0 else ""
    rows = "".join(f"<tr><td>{t.id}</td><td>{e(run.lanes[t.lane].name)}</td><td>{t.leaf}</td>"
                   f"<td>{t.duration:.3f}</td><td>{e(where)}</td></tr>" for t, where in slowest(r.record, run, 10))
    return (f"<h3>Swimlane</h3><p class='legend'>{legend}<span><i class='sw idle'></i>idle: nothing of the lane's "
            f"core type ready (dependency wait)</span><span><i class='sw hatch'></i>idle with a task ready "
            f"(scheduler bubble)</span><span><i class='sw crit'></i>critical path {m.critical_path_us:,.2f} µs "
            f"({m.critical_share:.0%})</span></p>"
            f"<p class='muted'>µs from the first task ({e(run.clock)}){offset}. Hover a box for its task.</p>"
            f"<div class='lane-box'>{swimlane_svg(run, r.kernel, m.critical_path)}</div>"
            f"<h3>Slowest tasks</h3><table><tr><th>task</th><th>lane</th><th>leaf</th><th>µs</th><th>source</th></tr>"
            f"{rows}</table>")


_CSS = """body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}
.error{color:#b00020}.warning{color:#a15c00}.info{color:#555}code{background:#f5f5f5;padding:0 3px}.muted{color:#666}
.lane-box{overflow:auto;max-height:80vh;border:1px solid #ddd}svg.swimlane text{font:10px system-ui,sans-serif}
svg.swimlane .ln{text-anchor:end;fill:#333}svg.swimlane .axis line{stroke:#888}
svg.swimlane .axis text{text-anchor:middle;fill:#555}
svg.swimlane .idle rect,.sw.idle{fill:rgba(128,128,128,0.16);background:rgba(128,128,128,0.16)}
svg.swimlane .crit rect{fill:none;stroke:#d62728;stroke-width:1.5}svg.swimlane rect:hover{opacity:.75}
.legend span{margin-right:14px;white-space:nowrap}
.sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}
.sw.crit{border:2px solid #d62728;width:9px;height:7px}
.sw.hatch{background:repeating-linear-gradient(135deg,rgba(225,87,89,.6) 0 1.5px,transparent 1.5px 5px)}
""" + "".join(f".f{k}{{fill:{c};background:{c}}}" for k, c in enumerate(LEAF_COLORS)) + (
    ".fu{fill:#7f7f7f;background:#7f7f7f}")


def render_html(reports: Sequence[KernelReport]) -> str:
    """One self-contained page with no script at all: each swimlane is an inline SVG
    (`swimlane_svg`), so no request leaves the file and a report weighs tens of kB, not the
    4.9 MB plotly.js inlined in every report cost before."""
    e = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>pypto-ide report</title>"
             f"<style>{_CSS}</style></head><body><h1>pypto-ide report</h1>"]
    drawn = False
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
        parts.append(_swimlane_section(r, m))
        drawn = True
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
    if not drawn:
        parts.append("<!-- no swimlane: nothing compiled -->")
    parts.append("</body></html>")
    return "\n".join(parts)


def render(reports: Sequence[KernelReport], fmt: str, fail_on: Iterable[str] = ()) -> str:
    """`reports` in format `fmt`; JUnit and SARIF mark as failures exactly what `fail_on` fails on."""
    if fmt == "text":
        return render_text(reports)
    if fmt == "json":
        return json.dumps([r.to_json() for r in reports], indent=1, default=str)
    if fmt == "md":
        return render_markdown(reports)
    if fmt == "html":
        return render_html(reports)
    if fmt == "junit":
        return render_junit(reports, fail_on)
    if fmt == "sarif":
        return render_sarif(reports, fail_on)
    raise ValueError(f"unknown report format {fmt!r}; one of {', '.join(FORMATS)}")
