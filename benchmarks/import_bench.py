"""Start-up: the wall time of `import pypto` in a fresh interpreter, and of the modules a worker
and the CLI load on top (the report, the sim board, the HTTP server's views).

`import pypto` loads every layer the public names need, and since the layering (issue 14) also
the precision check it installs into the jit. Best of several fresh processes, wall clock,
measured on this machine's CPU.

Run: `.venv/bin/python benchmarks/import_bench.py` (or `make bench`).
"""

from __future__ import annotations

import platform
import subprocess
import sys

REPS = 7
CASES = {
    "import pypto": "import pypto",
    "+ pypto.analysis.report, pypto.cli": "import pypto, pypto.analysis.report, pypto.cli",
    "python alone": "pass",
}
CODE = "import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"


def best(stmt: str) -> float:
    times = []
    for _ in range(REPS):
        out = subprocess.run([sys.executable, "-c", CODE.format(stmt=stmt)], capture_output=True, text=True,
                             check=True)
        times.append(float(out.stdout.strip()))
    return min(times)


def main() -> None:
    print(f"start-up, best of {REPS} fresh processes ({platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}; wall clock on this machine)")
    for name, stmt in CASES.items():
        print(f"  {name:40} {best(stmt) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
