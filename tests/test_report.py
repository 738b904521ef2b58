"""`pypto-ide report`: every format (validated), --fail-on exit codes, and the suggest-apply loop."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from junitparser import JUnitXml

from pypto.analysis.advisor import apply_edits
from pypto.analysis.findings import TextEdit
from pypto.analysis.report import known_rules
from pypto.cli import main

REPO = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "pypto-ide"
SARIF_SCHEMA = REPO / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"

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
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft4Validator(schema).validate(doc)
    results = doc["runs"][0]["results"]
    assert any(r["ruleId"] == "compile.error" and r["level"] == "error" for r in results)
    located = [r for r in results if r["ruleId"] != "compile.error"]
    assert located and all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in located)


def test_junit_has_a_testcase_per_rule_per_kernel_and_fails_the_broken_one(kernels, capsys, tmp_path):
    out_file = tmp_path / "report.xml"
    code, _, _ = _report(capsys, str(kernels), "--format", "junit", "-o", str(out_file))
    xmlschema.XMLSchema(str(REPO / "docs" / "schemas" / "junit.xsd")).validate(str(out_file))
    xml = JUnitXml.fromfile(str(out_file))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"soft", "broken"}
    soft_cases = {c.name for c in suites["soft"]}
    assert {"compile", *known_rules()} <= soft_cases
    broken = {c.name: c for c in suites["broken"]}
    assert not broken["compile"].is_passed
    assert all(c.is_passed for c in suites["soft"] if c.name == "compile")


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
