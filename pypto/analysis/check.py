"""The regression gate: every kernel's figures against a committed baseline.

`pypto-ide check` reports every kernel (compile, profile on the sim board, health,
precision) and compares each with the baseline file: a makespan above the baseline by more
than the tolerance, a utilization below it by more than the tolerance, a precision check
that passed and now fails, or an error-severity finding whose rule the baseline did not
have, is a regression; CI fails on any, and on nothing else (its JUnit and SARIF files say the same:
`render`). Only the kernels under the paths checked are compared (`scope_of`, `in_scope`): checking one
file reports that file's kernels. `--update-baseline` writes the current figures.

Baseline file (JSON, committed with the kernels):

    {"schema": "pypto-ide/baseline", "version": 1,
     "tolerance": {"makespan": 0.05, "utilization": 0.05},
     "kernels": {"examples/softmax.py::softmax_kernel": {
         "makespan_us": 33.93, "utilization": 0.67, "tasks": 256, "board": "sim",
         "precision_passed": true, "error_rules": []}}}

Kernel keys are `path::kernel` with the path relative to the baseline file's folder, so a
baseline moves with its repository. Simulated makespans are deterministic, so a small
tolerance is safe on any machine.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.analysis.report import KernelReport, junit_document, junit_suite, render_sarif

SCHEMA = "pypto-ide/baseline"
VERSION = 1
DEFAULT_TOLERANCE = {"makespan": 0.05, "utilization": 0.05}


def kernel_key(report: KernelReport, root: Path) -> str:
    try:
        rel = os.path.relpath(report.file, root)
    except ValueError:
        rel = report.file
    return f"{Path(rel).as_posix()}::{report.kernel}"


def figures(report: KernelReport) -> dict[str, Any]:
    """What the baseline keeps of one kernel's report."""
    if report.error is not None:
        return {"error": report.error}
    m = report.metrics()
    return {"makespan_us": round(m.makespan, 6), "utilization": round(m.utilization, 6),
            "tasks": len(report.record.run.tasks), "board": report.record.run.board,
            "precision_passed": None if report.precision is None else bool(report.precision.passed),
            "error_rules": sorted({f.rule for f in report.findings if f.severity == "error"})}


@dataclass
class Comparison:
    key: str
    current: dict[str, Any]
    baseline: dict[str, Any] | None
    regressions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: bool = False  # in the baseline, under the paths checked, and not found now: neither passed nor failed

    @property
    def passed(self) -> bool:
        return not self.regressions

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.key, "passed": self.passed, "missing": self.missing, "current": self.current,
                "baseline": self.baseline, "regressions": self.regressions, "notes": self.notes}


def load_baseline(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{path}: no baseline file (create it with --update-baseline)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a pypto-ide baseline (schema {SCHEMA!r} expected)")
    if doc.get("version") != VERSION:
        raise ValueError(f"{path}: baseline version {doc.get('version')!r}; this pypto-ide reads {VERSION}")
    if not isinstance(doc.get("kernels"), dict):
        raise ValueError(f"{path}: 'kernels' must be an object of path::kernel -> figures")
    return doc


def baseline_doc(reports: Sequence[KernelReport], root: Path, tolerance: Mapping[str, float] | None = None) \
        -> dict[str, Any]:
    return {"schema": SCHEMA, "version": VERSION, "tolerance": dict(tolerance or DEFAULT_TOLERANCE),
            "kernels": {kernel_key(r, root): figures(r) for r in reports}}


Scope = Sequence[tuple[str, "str | None", bool]]  # (absolute path, the kernel it names or None, is a folder)


def scope_of(paths: Sequence[str]) -> list[tuple[str, str | None, bool]]:
    """What `check PATHS` covers: per path, (its absolute path, the one kernel it names (FILE::KERNEL)
    or None, whether it is a folder)."""
    out = []
    for p in paths:
        target, sep, name = p.partition("::")
        real = Path(target).resolve()
        out.append((str(real), name if sep else None, real.is_dir()))
    return out


def in_scope(key: str, root: Path, scope: Scope | None) -> bool:
    """Whether the baseline's kernel `key` (relative to `root`, the baseline's folder) is one that
    `check` was asked about (`scope_of`; None: all of them)."""
    if scope is None:
        return True
    file, _, name = key.partition("::")
    where = os.path.normpath(os.path.join(root, file))
    for path, kernel, folder in scope:
        if folder and (where == path or where.startswith(path.rstrip(os.sep) + os.sep)):
            return True
        if not folder and where == path and (kernel is None or kernel == name):
            return True
    return False


def compare(reports: Sequence[KernelReport], baseline: Mapping[str, Any], root: Path,
            scope: Scope | None = None) -> list[Comparison]:
    """Each report against its baseline entry, and the baseline's kernels in `scope` (`scope_of` of the
    paths checked; None: the whole baseline) that were not found (`missing`). A kernel of the baseline
    outside the paths checked is not reported at all: checking one file reports that file's kernels."""
    tol = {**DEFAULT_TOLERANCE, **baseline.get("tolerance", {})}
    known: Mapping[str, Any] = baseline.get("kernels", {})
    out = []
    for r in reports:
        key = kernel_key(r, root)
        cur = figures(r)
        base = known.get(key)
        c = Comparison(key, cur, base)
        if r.error is not None:
            c.regressions.append(f"does not compile: {r.error}")
        elif base is None:
            c.notes.append("new kernel: not in the baseline")
        elif "error" in base:
            c.notes.append("did not compile in the baseline; compiles now")
        else:
            if cur["makespan_us"] > base["makespan_us"] * (1 + tol["makespan"]):
                c.regressions.append(f"makespan {cur['makespan_us']:.3f} µs > baseline {base['makespan_us']:.3f} µs "
                                     f"+ {tol['makespan']:.0%}")
            elif cur["makespan_us"] < base["makespan_us"] * (1 - tol["makespan"]):
                c.notes.append(f"faster: makespan {cur['makespan_us']:.3f} µs (baseline {base['makespan_us']:.3f})")
            if cur["utilization"] < base["utilization"] - tol["utilization"]:
                c.regressions.append(f"utilization {cur['utilization']:.1%} < baseline {base['utilization']:.1%} "
                                     f"- {tol['utilization']:.0%}")
            if base.get("precision_passed") is True and cur["precision_passed"] is False:
                c.regressions.append("precision passed in the baseline and fails now")
            new_errors = sorted(set(cur["error_rules"]) - set(base.get("error_rules", [])))
            if new_errors:
                c.regressions.append(f"new error finding(s): {', '.join(new_errors)}")
        out.append(c)
    for key in sorted(set(known) - {c.key for c in out}):
        if in_scope(key, root, scope):
            out.append(Comparison(key, {}, known[key], notes=["in the baseline but not found now"], missing=True))
    return out


def render(results: Sequence[Comparison], reports: Sequence[KernelReport], fmt: str) -> str:
    """The check's result as text, md, json, junit or sarif. The gate fails on regressions and on
    nothing else, and so do the files: JUnit has a `<failure>` only in the `check` suite's testcase
    of a regressed kernel (the kernels' own suites carry their findings as `<system-out>`, never as
    failures; a kernel of the baseline not found now is `<skipped>`), SARIF an `error` result only per
    regressed kernel (`check.regression`; findings are `warning`s and `note`s)."""
    failed = [c for c in results if not c.passed]
    missing = [c for c in results if c.missing]
    if fmt == "json":
        return json.dumps({"passed": not failed, "kernels": [c.to_json() for c in results]}, indent=1) + "\n"
    if fmt == "junit":
        root = ET.Element("testsuites", name="pypto-ide check")
        for r in reports:  # a compile error is the check's regression: not a failure of the kernel's suite too
            junit_suite(root, r, {})
        suite = ET.SubElement(root, "testsuite", name="check", tests=str(len(results)), failures=str(len(failed)),
                              errors="0", skipped=str(len(missing)))
        for c in results:
            case = ET.SubElement(suite, "testcase", name=c.key, classname="pypto.check")
            if not c.passed:
                ET.SubElement(case, "failure", message="; ".join(c.regressions)[:500], type="regression").text = \
                    "\n".join(c.regressions)
            elif c.missing:
                ET.SubElement(case, "skipped", message="; ".join(c.notes)[:500])
            if c.notes and not c.missing:
                ET.SubElement(case, "system-out").text = "\n".join(c.notes)
        return junit_document(root)
    if fmt == "sarif":
        doc = json.loads(render_sarif(reports, compile_fails=False))
        run = doc["runs"][0]
        for rule, level, cases in (("check.regression", "error", failed), ("check.missing", "note", missing)):
            for c in cases:
                file, _, name = c.key.partition("::")
                why = c.regressions if level == "error" else c.notes
                run["results"].append({"ruleId": rule, "level": level,
                                       "message": {"text": f"{name}: " + "; ".join(why)},
                                       "locations": [{"physicalLocation": {"artifactLocation": {"uri": file},
                                                                           "region": {"startLine": 1}}}]})
        if failed:
            run["tool"]["driver"]["rules"].append(
                {"id": "check.regression", "shortDescription": {"text": "a kernel got worse than its baseline"}})
        if missing:
            run["tool"]["driver"]["rules"].append(
                {"id": "check.missing", "shortDescription": {"text": "a kernel of the baseline was not found"}})
        return json.dumps(doc, indent=1) + "\n"
    lines = []
    for c in results:
        cur = c.current
        fig = (f"{cur['makespan_us']:,.2f} µs, utilization {cur['utilization']:.0%}" if "makespan_us" in cur
               else cur.get("error", ""))
        lines.append(f"{'FAIL' if not c.passed else 'gone' if c.missing else 'ok  '} {c.key}: {fig}")
        lines += [f"       regression: {r}" for r in c.regressions] + [f"       note: {n}" for n in c.notes]
    lines.append(f"{len(results) - len(failed) - len(missing)} passed, {len(failed)} regressed"
                 + (f", {len(missing)} missing (in the baseline, not found)" if missing else ""))
    body = "\n".join(lines)
    return (body if fmt == "text" else f"# pypto-ide check\n\n```\n{body}\n```") + "\n"
