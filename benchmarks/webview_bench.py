"""The webview panels' figures in headless Chromium: `make bench` runs this, which runs
benchmarks/webview_bench.mjs (100k-task swimlane first render and zoom, 5k-node graph first
render and pass switch, bundle sizes). It needs the node packages (`npm ci`), Debian's
chromium (`make chromium`) and a built bundle (`npm run build:webview`, done here).

Run: `.venv/bin/python benchmarks/webview_bench.py`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    if shutil.which("npm") is None or not (REPO / "node_modules" / "playwright-core").is_dir():
        print("skipped: the node packages are not installed (npm ci)")
        return 0
    if shutil.which("chromium") is None:
        print("skipped: no chromium (make chromium)")
        return 0
    subprocess.run(["npm", "run", "--silent", "build:webview"], cwd=REPO, check=True)
    return subprocess.run(["node", str(REPO / "benchmarks" / "webview_bench.mjs")], cwd=REPO).returncode


if __name__ == "__main__":
    sys.exit(main())
