"""What the VS Code end-to-end tests expect, computed by the compiler directly (not through the
extension or its language server): a kernel file's simulated makespan, its slowest task with
the source lines it runs, and how many tasks run each line. The e2e tests compare what the IDE
shows against this, so a panel that shows a stale or wrong number fails.

Usage: python tests/vscode/oracle.py FILE[::KERNEL]   — prints one JSON object.
"""

from __future__ import annotations

import json
import sys

from pypto.boards.swimlane import metrics
from pypto.cli import find_kernels
from pypto.record import compile_record, profile, slowest


def main(target: str) -> dict[str, object]:
    _, kernels = find_kernels(target)
    record = profile(compile_record(kernels[0]), "sim")
    sl = record.run
    assert sl is not None
    (task, _), = slowest(record, sl, 1)
    per_line: dict[int, int] = {}
    for t in sl.tasks:
        for line in {s.line for s in record.source_of_task(t.id)}:
            per_line[line] = per_line.get(line, 0) + 1
    return {
        "kernel": kernels[0].name,
        "makespan_us": metrics(sl).makespan,
        "tasks": len(sl.tasks),
        "slowest": {"id": task.id, "duration_us": task.duration,
                    "lines": sorted({s.line for s in record.source_of_task(task.id)})},
        "tasks_per_line": per_line,
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
