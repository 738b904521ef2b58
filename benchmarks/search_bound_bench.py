"""One tile-search bound for every door: how long `pypto-ide report --suggest` takes, and what it finds.

Issue 29: `pypto-ide report attn.py::attn --suggest` on a 32-head 512×64 fp16 attention ran for
more than ten minutes before printing anything (the search's default was 10 % of a space of about
82,000 shapes, with no time bound). Every door now bounds the sim board's work on tile shapes by
`pypto.analysis.advisor.SEARCH_SECONDS` (10 s). This runs the command as a user would (a fresh
process, `tests/data/attention_32x512x64.py`), and prints the wall time, how many shapes the
search reached and the fastest verified shape. Target: at most 15 s wall on 2 cores, at least one
faster shape. Makespans are SIMULATED (sim board, a2a3 model); wall times are measured on this
machine, once (a loaded machine reaches fewer shapes in the same 10 s).

Run: `.venv/bin/python benchmarks/search_bound_bench.py [--time SECONDS]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL = REPO / "tests" / "data" / "attention_32x512x64.py"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", help="pass --time SECONDS to the command (default: its own default)")
    args = ap.parse_args()
    cmd = [str(Path(sys.executable).parent / "pypto-ide"), "report", f"{KERNEL}::attn", "--suggest",
           "--format", "json", *(["--time", args.time] if args.time else [])]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        raise SystemExit(p.returncode)
    rep = json.loads(p.stdout)[0]
    s = rep["search"]
    print(f"report --suggest, attention 32x512x64 fp16: {wall:.2f} s wall (measured, this machine)")
    print(f"  search: {s['searched']:,} of {s['space']:,} shapes in {s['seconds']:.2f} s, stopped by "
          f"{s['stopped']} (bound {s['time_bound_s']} s)")
    base = rep["metrics"]["makespan_us"]
    if rep["suggestions"]:
        best = rep["suggestions"][0]
        print(f"  best: {best['text']}: {best['makespan_after_us']:,.2f} µs against {base:,.2f} µs "
              f"({best['speedup']:.2f}x, SIMULATED)")
    else:
        print(f"  no faster shape found (kernel: {base:,.2f} µs SIMULATED)")


if __name__ == "__main__":
    main()
