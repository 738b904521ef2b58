"""The pytest plugin of `pypto-ide capture` (docs/capture.md, "Skipped tests"): what the user's tests skipped, and
on request their skip marks lifted.

PyPTO's production tests mark their biggest cases `@pytest.mark.skip(reason="large test case")` (or skip them by a
`skipif` on the device), and those cases are often the only callers of a kernel: a capture of such a test file ran,
called no kernel and could not say why. `pypto-ide capture` loads this module into the captured command's pytest
(`PYTEST_PLUGINS`, so a command that runs no pytest never imports it), which writes one JSON line per skipped test
to the file `ENV_SKIPS` names: its node id, pytest's reason, and whether a skip mark skipped it (which
`--run-skipped` lifts) or the test itself did at run time (`pytest.skip()`, a fixture, `importorskip`: nothing
lifts those). With `ENV_RUN_SKIPPED` set to 1, every collected test's `skip` / `skipif` marks (its own, its
class's, its module's) are taken off before it runs, and each test so run is written as `"lifted": true`.

The captured process has imported pypto already (the capture's sitecustomize puts the NPU stand-in in place), so
this module costs its pytest nothing more. It uses pytest's public hooks, but for one private name, read if present:
`_pytest.skipping.skipped_by_mark_key`, whether a mark skipped the test; without it, a skipped test with a skip
mark counts as skipped by it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

from pypto.frontend.capture import ENV_RUN_SKIPPED, ENV_SKIPS

try:  # whether a mark skipped a test, as pytest's skipping plugin notes it: a private name, read if present
    from _pytest.skipping import skipped_by_mark_key
except ImportError:  # pragma: no cover - another pytest
    skipped_by_mark_key = None

MARKS = ("skip", "skipif")
MAX_REASON = 300  # characters of a reason written


def _write(entry: dict[str, Any]) -> None:
    path = os.environ.get(ENV_SKIPS)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
    except OSError:
        pass  # the capture's report loses a line; the user's run goes on


def _reason(mark: Any) -> str:
    reason = mark.kwargs.get("reason")
    if reason is None and mark.name == "skip" and mark.args:
        reason = mark.args[0]
    if reason is None and mark.name == "skipif":
        reason = "condition: " + ", ".join(map(str, mark.args)) if mark.args else "skipif"
    return str(reason or "unconditional skip")[:MAX_REASON]


def _marks(item: Any) -> list[Any]:
    return [m for name in MARKS for m in item.iter_markers(name=name)]


@pytest.hookimpl(trylast=True)  # the items left after -k, -m and the like deselected theirs
def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    if os.environ.get(ENV_RUN_SKIPPED) != "1":
        return
    marked = [(item, marks) for item in items if (marks := _marks(item))]  # before any is lifted: parents share
    for item, marks in marked:
        _write({"test": item.nodeid, "reason": "; ".join(_reason(m) for m in marks), "marked": True, "lifted": True})
        node = item
        while node is not None:  # the marks an item has are its own and its parents' (class, module, package)
            node.own_markers[:] = [m for m in node.own_markers if m.name not in MARKS]
            node = node.parent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or report.when not in ("setup", "call") or hasattr(report, "wasxfail"):
        return  # (an xfail is reported as skipped too)
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    _write({"test": report.nodeid, "reason": reason.removeprefix("Skipped: ")[:MAX_REASON],
            "marked": _by_mark(item), "lifted": False})


def _by_mark(item: Any) -> bool:
    """Whether a mark skipped the item: as pytest's skipping plugin noted it, else whether it has one."""
    try:
        got = item.stash.get(skipped_by_mark_key, None) if skipped_by_mark_key is not None else None
    except (AttributeError, TypeError):
        got = None
    return bool(got) if got is not None else bool(_marks(item))
