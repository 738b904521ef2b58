"""The native build side by side with the Python source (pypto/native.py): a production kernel's compile stages in
fresh processes, `PYPTO_NATIVE=1` and `=0` taking turns (A B B A …), the same record checked.

Each process loads the kernel as the language server's job does (its module executed, its capture's inputs),
traces it, lowers it (each pass's seconds as the compile recorded them), profiles it on the sim board, makes the
health report and the record document (the collector as in a job: what the process holds frozen, then the
record, `server.analyze`; session 26's health column was measured without: its collections walked the record),
and sends their times and the document's SHA-256; the table gives the
median of each mode's `--rounds` processes and the ratio, and says whether both modes made the same document. The
kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`); `--edited` compiles
production_bench's first tile-shape edit of each. Needs the native build of this checkout (`make setup`), else it
says why not and stops.

Run: `.venv/bin/python benchmarks/native_bench.py --keep DIR [--kernels gated_delta_rule,block_attn_res] [--edited]
[--rounds 2]`.

Session 26 (2026-11-30 03:06 UTC, 2 cores, `--edited --rounds 3`; the build then also held the health report's tile
and execute levels, left out after it: see their column):

| kernel | lowering s | tile_expand s | graph_partition s | leaf_functions s | execute_graph s | board s | health s | document s | same record |
|---|---|---|---|---|---|---|---|---|---|
| block_attn_res (edited) | 3.71 / 4.66 (1.26x) | 0.35 / 0.47 (1.36x) | 1.57 / 2.45 (1.56x) | 0.86 / 0.65 (0.76x) | 0.87 / 0.99 (1.14x) | 0.58 / 0.70 (1.20x) | 0.70 / 0.91 (1.31x) | 0.97 / 1.23 (1.28x) | yes |
| gated_delta_rule (edited) | 3.62 / 5.66 (1.56x) | 0.57 / 1.14 (2.01x) | 1.43 / 2.78 (1.94x) | 0.61 / 0.71 (1.16x) | 0.99 / 0.96 (0.97x) | 0.52 / 0.44 (0.86x) | 2.00 / 1.12 (0.56x) | 1.16 / 0.98 (0.84x) | yes |

The same at 03:04 UTC with `--rounds 2` (the board is not compiled by this build: its column is the noise):

| kernel | lowering s | tile_expand s | graph_partition s | leaf_functions s | execute_graph s | board s | health s | document s | same record |
|---|---|---|---|---|---|---|---|---|---|
| gated_delta_rule (edited) | 3.61 / 5.29 (1.46x) | 0.61 / 0.83 (1.36x) | 1.40 / 2.49 (1.78x) | 0.57 / 0.80 (1.41x) | 0.95 / 1.08 (1.14x) | 0.46 / 0.58 (1.27x) | 1.67 / 1.36 (0.82x) | 1.07 / 1.18 (1.10x) | yes |
| block_attn_res (edited) | 4.98 / 5.26 (1.06x) | 0.59 / 0.45 (0.76x) | 2.13 / 2.62 (1.23x) | 1.06 / 0.79 (0.75x) | 1.11 / 1.28 (1.16x) | 0.59 / 0.69 (1.17x) | 0.67 / 0.77 (1.15x) | 1.14 / 1.15 (1.00x) | yes |
| glm_attention (edited) | 0.59 / 0.78 (1.32x) | 0.19 / 0.29 (1.51x) | 0.18 / 0.26 (1.43x) | 0.09 / 0.10 (1.06x) | 0.10 / 0.11 (1.03x) | 0.11 / 0.13 (1.10x) | 0.13 / 0.12 (0.96x) | 0.25 / 0.25 (1.01x) | yes |
| compressor (edited) | 0.24 / 0.36 (1.52x) | 0.07 / 0.13 (1.86x) | 0.07 / 0.13 (1.69x) | 0.03 / 0.03 (1.09x) | 0.04 / 0.04 (1.19x) | 0.07 / 0.09 (1.27x) | 0.06 / 0.06 (1.01x) | 0.08 / 0.10 (1.19x) | yes |
"""  # noqa: E501

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

STAGES = ("tile_expand", "graph_partition", "leaf_functions", "execute_graph")

CHILD = """
import hashlib, json, sys, time
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
from pathlib import Path
from production_bench import KERNELS, edit_variants
from server import analyze
from pypto import native
from pypto.analysis.health import health_report
from pypto.frontend.inputs import example_arguments
from pypto.record import profile, trace_for
k = next(x for x in KERNELS if x.key == {key!r})
path = Path({models!r}) / k.file
text = path.read_text()
if {edited!r}:
    line, new = edit_variants(text, k.name, 1, [])[0]
    lines = text.split("\\n"); lines[line] = new; text = "\\n".join(lines)
kernel = analyze._kernel(analyze._load(str(path), text), str(path), k.shown)
traced = trace_for(kernel, example_arguments(kernel, values=False))
import gc
from pypto.compiler.pipeline import keep_frozen
keep_frozen(); gc.freeze()  # as a job's process (server.worker): what it holds is frozen, the record too (below)
t = time.perf_counter(); record = traced.lowered(); out = {{"lowering": time.perf_counter() - t}}
out.update({{p.name: p.seconds for p in record.passes if p.name in {stages!r}}})
t = time.perf_counter(); record = profile(record, "sim", {{}}, None); out["board"] = time.perf_counter() - t
gc.freeze()  # (server.analyze: the findings and the views then walk only what they make)
t = time.perf_counter(); health_report(record); out["health"] = time.perf_counter() - t
t = time.perf_counter(); doc, arrays = record.to_document(); out["document"] = time.perf_counter() - t
for p in doc.get("passes") or ():
    p.pop("seconds", None)
h = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode())
for name in sorted(arrays):
    h.update(name.encode()); h.update(arrays[name].tobytes())
print(json.dumps({{"times": out, "sha256": h.hexdigest(), "native": native.status()}}))
"""


def run(key: str, models: Path, edited: bool, native: bool) -> dict[str, object]:
    code = CHILD.format(root=str(ROOT), bench=str(ROOT / "benchmarks"), key=key, models=str(models), edited=edited,
                        stages=STAGES)
    env = {**os.environ, "PYPTO_NATIVE": "1" if native else "0", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{key}: the {'native' if native else 'Python'} compile failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    from production_bench import KERNELS

    from pypto import native

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", type=Path, help="production_bench's export (models/ with captures)")
    ap.add_argument("--kernels", default="gated_delta_rule,block_attn_res",
                    help=f"comma-separated, of: {', '.join(k.key for k in KERNELS)}")
    ap.add_argument("--edited", action="store_true", help="production_bench's first tile-shape edit of each")
    ap.add_argument("--rounds", type=int, default=2, help="processes per mode and kernel, taking turns (default 2)")
    a = ap.parse_args()
    if a.keep is None:  # (`make bench` runs every bench without arguments)
        print("skipped: native_bench.py reads production_bench.py's captured models (--keep DIR)")
        return 0
    t = time.perf_counter()
    files, why = native.check()
    checked = time.perf_counter() - t  # what every process pays at `import pypto.compiler`: hashing pypto's sources
    if files is None:
        print(f"native_bench: {why}", file=sys.stderr)
        return 1
    models = a.keep / "models"
    cols = ("lowering", *STAGES, "board", "health", "document")
    print(f"native_bench — {why}; checked in {checked * 1000:.1f} ms; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; --rounds {a.rounds}{' --edited' if a.edited else ''}; "
          "medians, native / Python s (ratio)\n")
    print("| kernel | " + " | ".join(f"{c} s" for c in cols) + " | same record |")
    print("|---|" + "---|" * (len(cols) + 1))
    for key in a.kernels.split(","):
        got: dict[bool, list[dict[str, object]]] = {True: [], False: []}
        for r in range(a.rounds):
            for mode in ((True, False) if r % 2 == 0 else (False, True)):
                got[mode].append(run(key, models, a.edited, mode))
        assert all(str(g["native"]).startswith("native:") for g in got[True]), got[True][0]["native"]
        assert all(str(g["native"]).startswith("PYPTO_NATIVE=0") for g in got[False])
        same = len({g["sha256"] for g in got[True] + got[False]}) == 1

        fast = [statistics.median(float(g["times"][c]) for g in got[True]) for c in cols]  # type: ignore[index]
        plain = [statistics.median(float(g["times"][c]) for g in got[False]) for c in cols]  # type: ignore[index]
        cells = [f"{x:.2f} / {y:.2f} ({y / max(x, 1e-9):.2f}x)" for x, y in zip(fast, plain)]
        print(f"| {key}{' (edited)' if a.edited else ''} | " + " | ".join(cells) + f" | {'yes' if same else 'NO'} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
