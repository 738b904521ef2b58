"""The VS Code extension's figures in a real VS Code (code-server): `make bench` runs this, which
runs benchmarks/vscode_bench.mjs — activation to first CodeLens (cold), opening the file to first
CodeLens with the server initialized (issue 19 item 5), "show in the graph" to the centred node (the
first after the swimlane opened, a new graph panel with its split, the panel open), a new empty
webview (VS Code's own floor for any new panel), edit to updated swimlane (p50), the .vsix size.
Figures and their split: docs/vscode-e2e.md.
It needs code-server (`tools/vscode/install.sh`), the packaged extension (`npm run package:vsix`),
Debian's chromium and the node packages; `make bench` sets all up.

Run: `.venv/bin/python benchmarks/vscode_bench.py`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    if shutil.which("node") is None or not (REPO / "node_modules" / "playwright-core").is_dir():
        print("skipped: the node packages are not installed (npm ci)")
        return 0
    return subprocess.run(["node", str(REPO / "benchmarks" / "vscode_bench.mjs")], cwd=REPO).returncode


if __name__ == "__main__":
    sys.exit(main())
