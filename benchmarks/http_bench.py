"""`pypto-ide serve`: how long a user waits — start-up, discovery, a job, each view, an edit's push.

Starts the real server (a subprocess, as a user would) on a temporary copy of examples/ plus
a 64k-task elementwise kernel, then measures over HTTP and the WebSocket:

- start until the ready line, and the first `GET /kernels` (discovery in the workers);
- a profile job from POST to done (long poll), for softmax and for the 64k-task kernel;
- each view of the big result: swimlane window (1 % of the run) and whole, record, graph,
  a task's source, the Chrome trace export (the first request, which parses, and the best of 5);
- an edit of a live kernel's file until its `recordChanged` arrives on the WebSocket;
- requests per second for a cached record fetch (`GET /jobs/{id}/record` of a done softmax
  job), from 1 and from 8 concurrent clients;
- p50 / p95 of a compile request (POST `action: compile` until the job is done, long poll)
  for softmax, at concurrency 1 and 8 (2 workers, queue 8: the latency includes waiting).

Wall-clock on this machine; the makespans inside the results are simulated (sim board).
Run: `.venv/bin/python benchmarks/http_bench.py` (or `make bench`).
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from websockets.sync.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BIG = textwrap.dedent('''
    import pypto


    @pypto.jit
    def big(x: pypto.Tensor([8192, 1024], pypto.DT_FP32), out: pypto.Tensor([8192, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 128)
        out[:] = x * 2.0 + 1.0
''')


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for f in (REPO / "examples").glob("*.py"):
            shutil.copy(f, ws / f.name)
        (ws / "big.py").write_text(BIG)
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", str(ws), "--port", "0"], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                m = re.search(r"ready (\S+)", line)
                if m:
                    break
            else:
                print("the server did not start")
                return 1
            url = m.group(1).rstrip("/")
            print(f"start until ready: {time.perf_counter() - t0:.2f} s")
            with httpx.Client(base_url=url, timeout=300) as c:
                t = time.perf_counter()
                n = len(c.get("/api/v1/kernels").json()["kernels"])
                print(f"first GET /kernels (discovery of {n} kernels in workers): {time.perf_counter() - t:.2f} s")

                def job(kernel: str) -> dict:
                    j = c.post("/api/v1/jobs", json={"kernel": kernel, "action": "profile"}).json()
                    while j["status"] in ("queued", "running"):
                        j = c.get(f"/api/v1/jobs/{j['id']}", params={"wait": 60}).json()
                    return j

                for kernel in ("softmax.py::softmax_kernel", "softmax.py::softmax_kernel", "big.py::big"):
                    t = time.perf_counter()
                    j = job(kernel)
                    print(f"profile job {kernel}: {time.perf_counter() - t:.2f} s  ({j['summary']['tasks']} tasks, "
                          f"simulated makespan {j['summary']['makespan_us']:.1f} µs)")
                jid, makespan = j["id"], j["summary"]["makespan_us"]
                views = {
                    "swimlane window (1 %)": (f"/api/v1/jobs/{jid}/swimlane", {"end": makespan / 100}),
                    "swimlane, whole (64k tasks)": (f"/api/v1/jobs/{jid}/swimlane", {"limit": 200_000}),
                    "record": (f"/api/v1/jobs/{jid}/record", {}),
                    "graph (aggregated)": (f"/api/v1/jobs/{jid}/graph", {}),
                    "task 0 with its source": (f"/api/v1/jobs/{jid}/tasks/0", {}),
                    "export chrome trace": (f"/api/v1/jobs/{jid}/export/chrome", {}),
                }
                print(f"  {'view of the 64k-task result':<30} {'first':>8}    {'best of 5':>9}  {'size':>8}")
                for name, (path, params) in views.items():
                    t = time.perf_counter()
                    size = len(c.get(path, params=params).content)
                    first = time.perf_counter() - t
                    s = best(lambda path=path, params=params: c.get(path, params=params), reps=5)
                    print(f"  {name:<30} {first * 1000:8.1f} ms {s * 1000:8.1f} ms  {size / 1e6:7.2f} MB")
                soft = job("softmax.py::softmax_kernel")["id"]
                size = len(c.get(f"/api/v1/jobs/{soft}/record").content)
                for clients in (1, 8):
                    rate = _fetch_rate(url, f"/api/v1/jobs/{soft}/record", clients, per_client=400 // clients)
                    print(f"cached record fetch (softmax, {size / 1e6:.2f} MB), {clients} client(s): "
                          f"{rate:,.0f} requests/s")
                for conc in (1, 8):
                    lat = _compile_latencies(url, "softmax.py::softmax_kernel", conc, total=24)
                    print(f"compile request (softmax), concurrency {conc}: p50 {_pct(lat, 50) * 1000:.0f} ms, "
                          f"p95 {_pct(lat, 95) * 1000:.0f} ms  ({len(lat)} requests)")
                with connect(url.replace("http", "ws", 1) + "/api/v1/ws") as sock:
                    json.loads(sock.recv(timeout=30))
                    t = time.perf_counter()
                    path = ws / "softmax.py"
                    path.write_text(path.read_text() + "\n# edited\n")
                    while True:
                        msg = json.loads(sock.recv(timeout=60))
                        if msg["type"] == "recordChanged" and msg["kernel"] == "softmax.py::softmax_kernel":
                            break
                    print(f"edit -> recordChanged on the WebSocket: {time.perf_counter() - t:.2f} s")
        finally:
            proc.terminate()
            proc.wait(20)
    return 0


def _pct(xs: list[float], p: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[min(98, max(0, round(p) - 1))]


def _fetch_rate(url: str, path: str, clients: int, per_client: int) -> float:
    """Requests per second of `clients` threads, each with its own connection, each fetching `path`
    `per_client` times (after one warm-up request each)."""
    def run(_: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            for _ in range(per_client):
                assert c.get(path).status_code == 200

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda _: httpx.get(url + path, timeout=60), range(clients)))
        t = time.perf_counter()
        list(pool.map(run, range(clients)))
        return clients * per_client / (time.perf_counter() - t)


def _compile_latencies(url: str, kernel: str, concurrency: int, total: int) -> list[float]:
    """Seconds from POST to done of `total` compile requests, `concurrency` at a time."""
    def one(_: int) -> float:
        with httpx.Client(base_url=url, timeout=120) as c:
            t = time.perf_counter()
            r = c.post("/api/v1/jobs", json={"kernel": kernel, "action": "compile"})
            assert r.status_code == 202, r.text
            j = r.json()
            while j["status"] in ("queued", "running"):
                j = c.get(f"/api/v1/jobs/{j['id']}", params={"wait": 60}).json()
            assert j["status"] == "done", j
            return time.perf_counter() - t

    with ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(one, range(total)))


if __name__ == "__main__":
    sys.exit(main())
