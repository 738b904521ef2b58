"""The shipped examples are quiet: at their shipped shapes each health warning (after the sim board has
checked the shapes the rules propose) is one examples/README.md lists with the reason it is left, and
each listed one still fires — so a Problems list is empty or explained, and the table stays true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pypto.analysis.report import make_report
from pypto.cli import kernels_in

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def documented() -> set[tuple[str, str, str]]:
    """(file, kernel, rule) of the README's "Warnings at the shipped shapes" table."""
    text = (EXAMPLES / "README.md").read_text()
    table = text.split("## Warnings at the shipped shapes", 1)[1]
    out = set()
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        names = [re.findall(r"`([^`]+)`", c) for c in cells[:3]]
        assert all(names) and cells[3], f"a row names its file, kernels, rules and gives a reason: {row}"
        out |= {(names[0][0], k, r) for k in names[1] for r in names[2]}
    return out


def warnings() -> set[tuple[str, str, str]]:
    out = set()
    for path in sorted(EXAMPLES.glob("*.py")):
        for k in kernels_in(str(path)):
            rep = make_report(k)
            assert rep.error is None and rep.health is not None, (path.name, k.name, rep.error)
            out |= {(path.name, k.name, f.rule) for f in rep.health.findings if f.severity in ("warning", "error")}
    return out


@pytest.fixture(scope="module")
def fired() -> set[tuple[str, str, str]]:
    return warnings()


def test_every_warning_of_a_shipped_example_is_listed_with_its_reason(fired):
    assert fired - documented() == set()


def test_every_listed_warning_still_fires(fired):
    assert documented() - fired == set()


def test_most_examples_have_no_warning(fired):
    quiet = {p.name for p in EXAMPLES.glob("*.py")} - {f for f, _, _ in fired}
    assert len(quiet) >= 9, sorted(quiet)  # 19 of 19 kernels warned before block.schedule-gap's floor
