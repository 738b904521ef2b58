"""The examples in examples/ run, pass their own checks, and are listed in examples/README.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pypto.cli import load_module

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FILES = sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def _load(path: Path):
    return sys.modules.get(f"pypto_example_{path.stem}") or load_module(path)


def test_examples_exist():
    assert FILES, f"no examples found in {EXAMPLES}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_checks_pass(path: Path):
    module = _load(path)
    assert module.__doc__ and module.__doc__.strip(), f"{path.name} has no module docstring"
    checks = module.check()
    assert checks, f"{path.name}: check() returned no checks"
    failed = [str(c) for c in checks if not c.ok]
    assert not failed, f"{path.name}:\n" + "\n".join(failed)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_has_main(path: Path):
    text = path.read_text()
    assert 'if __name__ == "__main__":' in text and "pypto.testing.report(check()" in text, \
        f"{path.name} must end with `raise SystemExit(pypto.testing.report(check(), ...))`"


def test_examples_listed_in_readme():
    readme = (EXAMPLES / "README.md").read_text()
    missing = [p.name for p in FILES if f"`{p.name}`" not in readme]
    assert not missing, f"examples missing from examples/README.md: {missing}"
