"""`pypto-ide report`: every format (validated), --fail-on exit codes, and the suggest-apply loop."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from junitparser import JUnitXml
from support import sarif_schema

from pypto.analysis.advisor import apply_edits
from pypto.analysis.findings import TextEdit
from pypto.analysis.report import known_rules
from pypto.cli import main

REPO = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "pypto-ide"
JENKINS_JUNIT = REPO / "tests" / "data" / "jenkins-junit-10.xsd"  # tests/data/README.md: where it comes from

KERNELS = textwrap.dedent('''
    import pypto


    @pypto.jit
    def soft(x: pypto.Tensor([256, 1024], pypto.DT_FP32), out: pypto.Tensor([256, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.softmax(x, -1)


    @pypto.jit
    def broken(x: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        return pypto.exp(x)
''')


def _external_refs(page: str) -> list[str]:
    """src/href attributes of the page's tags (script bodies are not parsed as tags)."""
    from html.parser import HTMLParser

    found: list[str] = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
            found.extend(f"{tag} {k}={v}" for k, v in attrs if k in ("src", "href") and v)

    P().feed(page)
    return found


@pytest.fixture()
def kernels(tmp_path: Path) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    return path


def _report(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(["report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_report_names_findings_at_their_lines_and_the_compile_error(kernels, capsys):
    code, out, err = _report(capsys, str(kernels))
    assert code == 1  # `broken` does not compile: the error is on its set_vec_tile_shapes call (line 13)
    assert f"{kernels}:13: error:" in err and "needs at least 2 entries" in err
    assert "soft" in out and "makespan" in out and "board sim" in out
    assert f"{kernels}:7" in out  # findings anchored at the tile-shape call


def test_sarif_validates_against_the_sarif_schema(kernels, capsys):
    code, out, _ = _report(capsys, f"{kernels}", "--format", "sarif")
    doc = json.loads(out)
    schema = sarif_schema()
    jsonschema.Draft4Validator(schema).validate(doc)
    results = doc["runs"][0]["results"]
    # without --fail-on the gate fails on the kernel that does not compile, and so does the file: its one error
    assert [r["ruleId"] for r in results if r["level"] == "error"] == ["compile.error"]
    assert any(r["level"] == "warning" and r["properties"]["severity"] == "warning" for r in results)
    located = [r for r in results if r["ruleId"] != "compile.error"]
    assert located and all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in located)
    # with --fail-on warning, each warning finding is an error too: what the exit code fails on
    code, out, err = _report(capsys, f"{kernels}", "--format", "sarif", "--fail-on", "warning")
    results = json.loads(out)["runs"][0]["results"]
    jsonschema.Draft4Validator(schema).validate(json.loads(out))
    assert code == 1 and "finding(s) at or above warning" in err
    errors = [r for r in results if r["level"] == "error"]
    assert {r["ruleId"] for r in errors} == {"compile.error"} | {
        r["ruleId"] for r in results if r["properties"].get("severity") in ("warning", "error")}
    # a condition on the profile the gate fails on is an error result of its own, and only that
    code, out, _ = _report(capsys, f"{kernels}::soft", "--format", "sarif", "--fail-on", "utilization<1.01")
    jsonschema.Draft4Validator(schema).validate(json.loads(out))
    errors = [r for r in json.loads(out)["runs"][0]["results"] if r["level"] == "error"]
    assert code == 1 and [r["ruleId"] for r in errors] == ["profile.condition"]
    assert "utilization" in errors[0]["message"]["text"]


def _junit_failures(path: Path) -> dict[tuple[str, str], str]:
    """(suite, testcase) -> failure text, after validating against the schema Jenkins' xUnit plugin reads."""
    xmlschema.XMLSchema(str(JENKINS_JUNIT)).validate(str(path))
    xml = JUnitXml.fromfile(str(path))
    return {(s.name, c.name): c.result[0].text or "" for s in xml for c in s if not c.is_passed}


def test_junit_fails_exactly_what_the_gate_fails_on(kernels, capsys, tmp_path):
    out_file = tmp_path / "report.xml"
    code, _, _ = _report(capsys, str(kernels), "--format", "junit", "-o", str(out_file))
    assert code == 1
    xml = JUnitXml.fromfile(str(out_file))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"soft", "broken"}
    assert {"compile", *known_rules()} <= {c.name for c in suites["soft"]}
    # no --fail-on: the broken kernel's compile is the one failure; soft's warnings are its rules' system-out
    failed = _junit_failures(out_file)
    assert list(failed) == [("broken", "compile")] and "needs at least 2 entries" in failed[("broken", "compile")]
    warned = {c.name for c in suites["soft"] if c.system_out and ": warning: " in c.system_out}
    assert warned, "the fixture's softmax in tiles of (4, 64) has warnings: the test needs one"
    # --fail-on warning: exactly those rules fail too, and the exit code says so
    code, _, err = _report(capsys, str(kernels), "--format", "junit", "-o", str(out_file), "--fail-on", "warning")
    assert code == 1 and "finding(s) at or above warning" in err
    assert set(_junit_failures(out_file)) == {("broken", "compile")} | {("soft", rule) for rule in warned}
    # a condition on the profile is a testcase of its own
    code, _, _ = _report(capsys, f"{kernels}::soft", "--format", "junit", "-o", str(out_file),
                         "--fail-on", "utilization<1.01", "--fail-on", "makespan>1e9")
    assert code == 1 and list(_junit_failures(out_file)) == [("soft", "utilization<1.01")]
    assert JUnitXml.fromfile(str(out_file)).failures == 1


def test_json_md_and_self_contained_html(kernels, capsys, tmp_path):
    _, out, _ = _report(capsys, f"{kernels}::soft", "--format", "json")
    doc = json.loads(out)
    jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "schemas" / "report.schema.json").read_text())
                                    ).validate(doc)
    assert doc[0]["kernel"] == "soft" and doc[0]["metrics"]["makespan_us"] > 0 and doc[0]["health"]["findings"]
    _, md, _ = _report(capsys, f"{kernels}::soft", "--format", "md")
    assert md.startswith("# pypto-ide report") and "| severity | rule |" in md
    page = tmp_path / "r.html"
    assert main(["report", f"{kernels}::soft", "--format", "html", "--precision", "-o", str(page)]) == 0
    text = page.read_text()
    assert _external_refs(text) == []  # no network: every script inline, no links or images fetched
    assert "<svg class='swimlane'" in text and "<script" not in text  # the swimlane drawn inline, no plotly.js
    assert "Precision" in text and "Findings" in text and "Passes" in text


def test_fail_on_conditions_set_the_exit_code(kernels, capsys):
    target = f"{kernels}::soft"
    assert _report(capsys, target, "--fail-on", "makespan>1e9")[0] == 0
    code, _, err = _report(capsys, target, "--fail-on", "utilization<1.01")
    assert code == 1 and "utilization" in err
    code, _, err = _report(capsys, target, "--fail-on", "info")
    assert code == 1 and "finding(s) at or above info" in err
    code, _, err = _report(capsys, target, "--fail-on", "precision")
    assert code == 0  # not checked without --precision, and softmax fp32 passes anyway
    code, _, err = _report(capsys, target, "--fail-on", "speed>3")
    assert code == 1 and "--fail-on" in err


def test_suggest_then_apply_the_first_edit_improves_the_report(kernels, capsys, tmp_path):
    """The new user's loop: report --suggest, apply the first suggestion, report again."""
    p = subprocess.run([str(CLI), "report", f"{kernels}::soft", "--suggest", "--format", "json"],
                       capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr
    docs = json.loads(p.stdout)
    jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "schemas" / "report.schema.json").read_text())
                                    ).validate(docs)
    before = docs[0]
    first = before["suggestions"][0]
    assert first["makespan_after_us"] < before["metrics"]["makespan_us"]
    edits = [TextEdit.from_json(e) for e in first["edits"]]
    kernels.write_text(apply_edits(kernels.read_text(), edits))
    _, out, _ = _report(capsys, f"{kernels}::soft", "--format", "json")
    after = json.loads(out)[0]
    assert after["metrics"]["makespan_us"] == pytest.approx(first["makespan_after_us"])


def test_the_terminal_report_shows_findings_before_the_bounded_search_and_says_how_far_it_got(kernels):
    """`report --suggest` on a terminal: the findings first, then the search's line and its suggestions; a
    search its time bound ends says "searched N of M shapes in T s (the time budget ran out)"."""
    p = subprocess.run([str(CLI), "report", f"{kernels}::soft", "--suggest", "--time", "0.001"],
                       capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    at = {key: next(i for i, ln in enumerate(lines) if key in ln) for key in ("findings:", "tile search:")}
    assert at["findings:"] < at["tile search:"]
    m = re.search(r"tile search: searched ([\d,]+) of ([\d,]+) shapes in [\d.]+ s \(the time budget ran out[):]",
                  lines[at["tile search:"]])
    assert m and int(m.group(1).replace(",", "")) < int(m.group(2).replace(",", ""))
    assert "--time 0 searches without a time bound" in lines[at["tile search:"]]
    assert "searching tile shapes on the sim board (up to 0.001 s" in p.stderr
    # --time 0: no time bound (the evaluation budget ends it)
    p = subprocess.run([str(CLI), "report", f"{kernels}::soft", "--suggest", "--time", "0", "--budget", "3",
                        "--format", "json"], capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr
    search = json.loads(p.stdout)[0]["search"]
    assert search["stopped"] == "budget" and search["time_bound_s"] is None and "no time bound" in p.stderr
