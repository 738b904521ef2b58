"""One tile-search bound for every door: how long `pypto-ide report --suggest` takes, and what it finds.

Issue 29: `pypto-ide report attn.py::attn --suggest` on a 32-head 512×64 fp16 attention ran for
more than ten minutes before printing anything (the search's default was 10 % of a space of about
82,000 shapes, with no time bound). Every door now bounds the sim board's work on tile shapes by
`pypto.analysis.advisor.SEARCH_SECONDS` (10 s). This runs the command as a user would (a fresh
process, `tests/data/attention_32x512x64.py`), and prints the wall time, how many shapes the
search reached and the fastest verified shape. Target: at most 15 s wall on 2 cores, at least one
faster shape. Then `pypto-ide serve`'s health page of examples/attention.py, as the panel asks for
it (the WebSocket's `watch`, action `suggest`): when its findings arrive and when its suggestions do
(target: findings in under 2 s, suggestions within the bound). Makespans are SIMULATED (sim board,
a2a3 model); wall times are measured on this machine, once (a loaded machine reaches fewer shapes in
the same 10 s).

Run: `.venv/bin/python benchmarks/search_bound_bench.py [--time SECONDS] [--no-serve]`.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL = REPO / "tests" / "data" / "attention_32x512x64.py"


def serve_health_page(kernel: str = "attention.py::attention_kernel") -> None:
    """`pypto-ide serve` on a copy of examples/, a page watching `kernel` as the health panel does (the
    WebSocket's `watch` with action `suggest`): when its findings arrive (`jobProgress` with `interim`,
    then GET the result) and when its suggestions do (`recordChanged`)."""
    import httpx
    from websockets.sync.client import connect

    with tempfile.TemporaryDirectory() as tmp:
        ws_dir = Path(tmp) / "ws"
        shutil.copytree(REPO / "examples", ws_dir)
        proc = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", str(ws_dir), "--port", "0"],
                                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                m = re.search(r"ready (http://\S+?)/?\s", line)
                if m:
                    url = m.group(1)
                    break
            with httpx.Client(base_url=url, timeout=60) as client:
                client.get("/api/v1/kernels")  # discovery done: the page opens on a listed kernel
                with connect(url.replace("http", "ws", 1) + "/api/v1/ws") as ws:
                    json.loads(ws.recv(timeout=60))  # hello
                    t0 = time.perf_counter()
                    ws.send(json.dumps({"v": 1, "type": "watch", "kernel": kernel, "action": "suggest"}))
                    findings = None
                    while True:
                        msg = json.loads(ws.recv(timeout=180))
                        if msg["type"] == "jobProgress" and msg["interim"] and findings is None:
                            res = client.get(msg["urls"]["result"]).json()
                            findings = time.perf_counter() - t0
                            print(f"serve health page of examples/{kernel}: findings after {findings:.2f} s "
                                  f"({len(res['health']['findings'])} findings)")
                        if msg["type"] == "recordChanged" and msg["kernel"] == kernel:
                            res = client.get(msg["urls"]["result"]).json()
                            done = time.perf_counter() - t0
                            s = res.get("search") or {}
                            print(f"  suggestions after {done:.2f} s: {len(res['suggestions'])} faster shapes; "
                                  f"search {s.get('searched')} of {s.get('space')} shapes in {s.get('seconds')} s, "
                                  f"stopped by {s.get('stopped')}")
                            return
        finally:
            proc.terminate()
            proc.wait(20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", help="pass --time SECONDS to the command (default: its own default)")
    ap.add_argument("--no-serve", action="store_true", help="skip the `serve` health page's figures")
    args = ap.parse_args()
    if not args.no_serve:
        serve_health_page()
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
