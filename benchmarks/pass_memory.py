"""A production kernel's memory pass by pass, the native build against the Python source (issue 28: the one model
kernel the IDE does not open, glm's fused attention, is over the worker's memory cap with the native build and
under it with the Python source).

For each kernel named (`FILE::KERNEL` under the models folder of production_bench.py's or models_open.py's `--keep`,
with its capture there), two fresh processes lower it as a job does (`trace_for(...).lowered()`), one with the
native build (`PYPTO_NATIVE=1`, when it matches the source) and one with the Python source (`PYPTO_NATIVE=0`), each
printing after every pass of the tile, block and execute stages its resident memory now and its peak so far
(`/proc/self/statm`, `ru_maxrss`), side by side. `--trim` calls glibc's `malloc_trim(0)` after each pass (the pages
a pass freed are given back: what is left is live data); `--collect` runs the cyclic collector after each pass and
prints what it freed (a compile runs with it paused: what only it frees stays until the job ends).

Measured 2026-12-04 (session 51, 2 cores, `--trim`): glm_v4_5/glm_attention_fusion.py::ifa_func_kernel (2.1 M tile
ops) after graph partition 2,929 MB native against 2,420 MB Python (peaks 3,272 / 2,830), after the execute graph
3,322 / 2,812 MB; with `--collect` nothing is freed after partition there (its state is let go of from 500 k tile
ops, `partition.RELEASE_FROM`), while gated delta rule's native partition leaves 595,101 objects to the collector
(peak after lowering 384 MB native / 283 MB Python; 297 MB with the collection).

Where the native build's extra memory was (session 52, 2026-12-04; a scratch census after graph partition of that
kernel, both builds: `gc.get_objects()` by type, the ints in them, and `sys._debugmallocstats()`): not in the objects
the collector sees (6.6 M tuples, 2.2 M tile ops, 1.05 M sets: within 42 MB of each other, the native classes a few
bytes larger) but in pymalloc's 32-byte blocks, int objects: 10.1 M in use natively against 5.1 M, and 10.5 M freed
blocks against 2.3 M (pools a live int keeps from being returned). A native class keeps an `int` field unboxed and a
list, set or dict of `int` holds objects, so each store of an id into one made a new int object where the Python build
stores the one object it has (a tile op's id, a group's): partition's per-op group list and its groups' member lists
(freed when it lets go of its state, `RELEASE_FROM`: the holes), the GM index's owners and the dependencies' sets
(`gm_index.Owner`). Now partition keeps each op's group and each group's ops as objects, and a group's id as one
object for the GM index, the dependencies and `exported` (`_Group.key`): after partition 3,102 -> 2,847 MB (Python
2,660), 32-byte blocks in use 10.1 M -> 6.1 M, freed 10.5 M -> 5.6 M, the peak after the execute graph 3,474 -> 3,271
MB (Python 3,218); the kernel opens within the worker's 4 GiB cap (`models_open.py --no-capture --only
glm_attention_fusion`: 57 s, peak RSS 4,422 MB; with only the group list changed it still ran out). The same change
made partition faster (fewer ints made): job_bench `--against` the tree before, median of 4, gated delta rule's first
tile edit 2.67 -> 2.48 s (partition 0.62 -> 0.54 s), Kimi's block attention 2.72 -> 2.42 s (0.68 -> 0.55 s).

Run: `.venv/bin/python benchmarks/pass_memory.py --keep DIR [--trim] [--collect] FILE::KERNEL ...`
(e.g. `qwen3_next/gated_delta_rule_impl.py::'chunk_gated_delta_rule.<locals>.kernel'`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the child: lowers the kernel with every pass wrapped to report its memory (one JSON line per pass)
CHILD = r"""
import ctypes, dataclasses, gc, json, os, resource, sys
sys.path.insert(0, os.environ["PASS_MEMORY_ROOT"])
from server import analyze
from pypto.compiler import pipeline
from pypto.frontend.inputs import example_arguments
from pypto.record import trace_for
import pypto.native

trim, collect = os.environ.get("PASS_MEMORY_TRIM") == "1", os.environ.get("PASS_MEMORY_COLLECT") == "1"
libc = ctypes.CDLL("libc.so.6") if trim else None

def now_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20

def wrap(name, fn):
    def run(p, ctx):
        out = fn(p, ctx)
        freed = gc.collect() if collect else None
        if libc is not None:
            libc.malloc_trim(0)
        print(json.dumps({"pass": name, "now": now_mb(), "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                          // 1024, "freed": freed}), flush=True)
        return out
    return run

pipeline.PIPELINE = tuple(dataclasses.replace(p, fn=wrap(p.name, p.fn)) if p.stage != "tensor" else p
                          for p in pipeline.PIPELINE)
path, name = sys.argv[1], sys.argv[2]
kernel = analyze._kernel(analyze._load(path, open(path).read()), path, name)
print(json.dumps({"native": pypto.native.status()}), flush=True)
trace_for(kernel, example_arguments(kernel, values=False)).lowered()
"""


def passes(path: Path, name: str, native: bool, trim: bool, collect: bool) -> tuple[str, list[dict[str, object]]]:
    env = {**os.environ, "PYPTO_NATIVE": "1" if native else "0", "PASS_MEMORY_ROOT": str(ROOT),
           "PASS_MEMORY_TRIM": "1" if trim else "0", "PASS_MEMORY_COLLECT": "1" if collect else "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(path.parent), os.environ.get("PYTHONPATH", "")]))}
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), name], cwd=path.parent, env=env,
                          capture_output=True, text=True, timeout=1800)
    rows, status = [], ""
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            if "native" in d:
                status = str(d["native"])
            else:
                rows.append(d)
    if done.returncode != 0:
        status += f" (exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]})"
    return status, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels", nargs="+", help="FILE::KERNEL, FILE under the models folder")
    ap.add_argument("--keep", type=Path, required=True, help="production_bench.py's or models_open.py's --keep folder")
    ap.add_argument("--trim", action="store_true", help="malloc_trim(0) after each pass")
    ap.add_argument("--collect", action="store_true", help="gc.collect() after each pass (prints what it freed)")
    a = ap.parse_args()
    for spec in a.kernels:
        file, _, name = spec.partition("::")
        path = (a.keep / "models" / file).resolve()
        (ns, native), (ps, python) = (passes(path, name, n, a.trim, a.collect) for n in (True, False))
        print(f"\n{spec}\n  native: {ns}\n  python: {ps}\n")
        print("| pass | native MB now | native MB peak | Python MB now | Python MB peak |"
              + (" freed native | freed Python |" if a.collect else ""))
        print("|---|---|---|---|---|" + ("---|---|" if a.collect else ""))
        for x, y in zip(native, python):
            cells = [x["now"], x["peak"], y["now"], y["peak"]] + ([x["freed"], y["freed"]] if a.collect else [])
            print(f"| {x['pass']} | " + " | ".join(f"{c:,}" if isinstance(c, int) else str(c) for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
