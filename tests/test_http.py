"""`pypto-ide serve`, end to end: a real uvicorn process per server, real HTTP (httpx) and WebSocket
(websockets) clients. Kernels that hang, exit or eat memory cost one job, never the server; paths
outside the workspace, missing tokens, oversized bodies and a full queue are refused."""

from __future__ import annotations

import hashlib
import json
import queue
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import HOSTILE_KERNELS, USES_HELPER, from_rows, softmax_source, unpack, unruns
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

REPO = Path(__file__).resolve().parent.parent
WAIT = 60.0  # seconds any single wait may take before the test fails (never slept)

HOSTILE = HOSTILE_KERNELS

LIVE = textwrap.dedent('''
    import pypto


    @pypto.jit
    def live(x: pypto.Tensor([64, 128], pypto.DT_FP32), out: pypto.Tensor([64, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.exp(x) + 1.0
''')

DECOMPOSED = textwrap.dedent('''
    import pypto


    @pypto.jit
    def decomposed(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.softmax(x, dim=-1)
''')




class Server:
    """A `pypto-ide serve` process; its output is drained by a thread and searched for lines."""

    def __init__(self, args: list[str], cwd: Path = REPO, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "server.cli", "serve", *args], cwd=cwd, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        ready = self.line(r"pypto-ide serve: ready (\S+)")
        self.link = ready.group(1)
        self.url = self.link.split("?")[0].rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            self.lines.put(line)
        self.lines.put("")

    def line(self, pattern: str) -> re.Match[str]:
        while True:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r}:\n{''.join(self.output)}") from None
            if not line:
                raise AssertionError(f"the server exited ({self.proc.poll()}):\n{''.join(self.output)}")
            m = re.search(pattern, line)
            if m:
                return m

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("serve")
    ws = base / "ws"
    ws.mkdir()
    for f in (REPO / "examples").glob("*.py"):
        shutil.copy(f, ws / f.name)
    (ws / "hostile.py").write_text(HOSTILE)
    (ws / "live.py").write_text(LIVE)
    (ws / "decomposed.py").write_text(DECOMPOSED)
    (ws / "big.py").write_text(softmax_source(128, "big"))  # 34,816 tile ops: above the panels' 20,000
    (ws / "lib").mkdir()
    (ws / "lib" / "helpers.py").write_text("ROWS = 16\n")
    (ws / "lib" / "uses.py").write_text(USES_HELPER)
    (ws / "notes.txt").write_text("not python\n")
    (ws / ".hidden").mkdir()
    (ws / ".hidden" / "k.py").write_text(HOSTILE)
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("import pypto\nSECRET = 'do not serve'\n")
    (ws / "evil.py").symlink_to(outside / "secret.py")
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    return ws


@pytest.fixture(scope="module")
def server(workspace: Path) -> Iterator[Server]:
    s = Server([str(workspace), "--port", "0", "--workers", "2", "--queue", "2", "--time-limit", "60",
                "--memory-limit-mb", "400", "--max-body", "65536", "--cors-origin", "http://allowed.example",
                "--webview", str(workspace.parent / "no-bundle")])  # the minimal page, with or without webview/dist
    yield s
    s.stop()


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        yield c


def ws_url(server: Server, query: str = "") -> str:
    return f"ws://127.0.0.1:{server.port}/api/v1/ws{query}"


def submit(client: httpx.Client, kernel: str, action: str = "profile", **extra: Any) -> dict[str, Any]:
    r = client.post("/api/v1/jobs", json={"kernel": kernel, "action": action, **extra})
    assert r.status_code == 202, r.text
    return r.json()


def finished(client: httpx.Client, job_id: str) -> dict[str, Any]:
    """Poll the job (long polls: the server answers when it finishes) until it is no longer queued/running."""
    for _ in range(20):
        info = client.get(f"/api/v1/jobs/{job_id}", params={"wait": 30}).json()
        if info["status"] not in ("queued", "running"):
            return info
    raise AssertionError(f"job {job_id} did not finish: {info}")


def receive(ws: ClientConnection, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first message that matches (others skipped), waiting for each at most WAIT seconds."""
    while True:
        msg = json.loads(ws.recv(timeout=WAIT))
        assert msg["v"] == 1
        if match(msg):
            return msg


# ---- discovery, the schema, the page ------------------------------------------------------------------

def test_openapi_lists_the_v1_routes(client: httpx.Client) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/api/v1/health", "/api/v1/kernels", "/api/v1/source", "/api/v1/jobs", "/api/v1/jobs/{job_id}",
              "/api/v1/jobs/{job_id}/record", "/api/v1/jobs/{job_id}/swimlane", "/api/v1/jobs/{job_id}/graph",
              "/api/v1/jobs/{job_id}/tasks/{task_id}", "/api/v1/jobs/{job_id}/export/{fmt}"):
        assert p in paths, p
    assert set(paths["/api/v1/jobs/{job_id}"]) == {"get", "delete"}
    assert all(p.startswith("/api/v1/") for p in paths)


def test_kernels_of_the_workspace_are_listed(client: httpx.Client, workspace: Path) -> None:
    doc = client.get("/api/v1/kernels").json()
    ids = {k["id"]: k for k in doc["kernels"]}
    for f in (REPO / "examples").glob("*.py"):
        assert any(i.startswith(f"{f.name}::") for i in ids), f.name
    assert "softmax.py::softmax_kernel" in ids and ids["softmax.py::softmax_kernel"]["line"] > 1
    assert {"hostile.py::hang", "hostile.py::die", "hostile.py::hog", "live.py::live"} <= set(ids)
    assert not any(i.startswith((".hidden", "evil.py", "linkdir")) for i in ids)  # hidden and symlinks out: skipped
    page = client.get("/")
    assert page.status_code == 200 and 'api = "/api/v1"' in page.text and "/kernels" in page.text
    health = client.get("/api/v1/health").json()
    assert health["status"] == "ok" and health["watching"] and not health["limits"]["token_required"]


# ---- a job and its views ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report_job(server: Server) -> dict[str, Any]:
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        job = submit(c, "softmax.py::softmax_kernel", "report")
        assert job["status"] in ("queued", "running") and job["progress"]["time_limit_s"] == 60
        done = finished(c, job["id"])
    assert done["status"] == "done", done
    return done


def test_a_report_job_runs_to_completion(client: httpx.Client, report_job: dict[str, Any]) -> None:
    assert report_job["error"] is None and report_job["version"] >= 1
    s = report_job["summary"]
    assert s["board"] == "sim" and s["tasks"] > 0 and s["makespan_us"] > 0
    res = client.get(f"/api/v1/jobs/{report_job['id']}/result").json()
    assert res["health"] is not None and res["has_record"] and res["has_html"] and "record" not in res
    listed = {k["id"]: k for k in client.get("/api/v1/kernels").json()["kernels"]}
    assert listed["softmax.py::softmax_kernel"]["latest_job"] == report_job["id"]
    refreshed = client.get("/api/v1/kernels", params={"refresh": True}).json()
    assert {k["id"] for k in refreshed["kernels"]} == set(listed)
    mine = client.get("/api/v1/jobs", params={"kernel": "softmax.py::softmax_kernel"}).json()["jobs"]
    assert report_job["id"] in [j["id"] for j in mine] and {j["kernel"] for j in mine} == {"softmax.py::softmax_kernel"}
    everything = client.get("/api/v1/jobs").json()["jobs"]
    assert len(everything) >= len(mine) and [j["created"] for j in everything] == sorted(
        (j["created"] for j in everything), reverse=True)  # newest first


def test_record_swimlane_window_and_task_source(client: httpx.Client, report_job: dict[str, Any]) -> None:
    jid = report_job["id"]
    rec = client.get(f"/api/v1/jobs/{jid}/record").json()
    assert rec["schema"] == "pypto-ide/compile-record" and rec["run"]["board"] == "sim"
    # the worker sends version 3's columns (the run's too); the API answers the lists, as the panels read them
    assert rec["version"] == 3 and "$columns" not in json.dumps(rec) and "columns" not in rec
    assert isinstance(rec["tiles"]["ops"]["id"], list) and len(rec["tiles"]["ops"]["id"]) == len(rec["memory"]) > 0
    total = len(rec["run"]["tasks"]["id"])
    first, last = min(rec["run"]["tasks"]["start"]), max(rec["run"]["tasks"]["end"])  # after the stitching
    whole = client.get(f"/api/v1/jobs/{jid}/swimlane").json()
    assert whole["count"] == total and not whole["truncated"] and whole["total_tasks"] == total
    half = (first + last) / 2
    win = client.get(f"/api/v1/jobs/{jid}/swimlane", params={"start": 0, "end": half, "limit": 5}).json()
    assert win["count"] == 5 and win["truncated"] and win["in_window"] < total
    assert all(s <= half for s in win["tasks"]["start"])
    lanes = client.get(f"/api/v1/jobs/{jid}/swimlane", params={"lanes": "30,31"}).json()
    assert set(lanes["tasks"]["lane"]) <= {30, 31} and lanes["count"] > 0
    task_id = whole["tasks"]["id"][0]
    task = client.get(f"/api/v1/jobs/{jid}/tasks/{task_id}").json()
    assert task["nodes"] and task["source"] and task["source"][0]["file"] == "softmax.py"
    line = task["source"][0]["line"]
    src = client.get("/api/v1/source", params={"path": task["source"][0]["file"], "start": line, "end": line}).json()
    assert src["lines"] == [(REPO / "examples/softmax.py").read_text().splitlines()[line - 1]]
    from pypto.record import CompileRecord
    parsed = CompileRecord.from_json(rec)  # the server's task index answers as pypto's own queries do
    for t in (task_id, whole["tasks"]["id"][-1]):
        got = client.get(f"/api/v1/jobs/{jid}/tasks/{t}").json()
        assert [n["id"] for n in got["nodes"]] == parsed.nodes_of_task(t)
        assert [(s["line"], s["col"]) for s in got["source"]] == [(s.line, s.col) for s in parsed.source_of_task(t)]
    node = client.get(f"/api/v1/jobs/{jid}/nodes/{task['nodes'][0]['id']}").json()
    assert task_id in node["tasks"] and node["source"]
    assert client.get(f"/api/v1/jobs/{jid}/tasks/{10**6}").status_code == 404


def test_pass_graphs_aggregated_and_drill_down(client: httpx.Client, report_job: dict[str, Any]) -> None:
    jid = report_job["id"]
    agg = client.get(f"/api/v1/jobs/{jid}/graph").json()
    assert agg["pass"]["final"] and agg["view"] == "aggregated"
    loops = [n for n in agg["nodes"] if n["op"] == "loop"]
    assert loops and loops[0]["body_size"] > 0 and "body" not in loops[0]
    body = client.get(f"/api/v1/jobs/{jid}/graph", params={"loop": loops[0]["id"]}).json()
    assert body["loop"] == loops[0]["id"] and any(n["op"] == "exp" for n in body["nodes"])
    assert body["external"]  # the body reads the kernel's parameters
    full = client.get(f"/api/v1/jobs/{jid}/graph", params={"view": "full"}).json()
    assert len(full["nodes"]) == full["total_nodes"] > len(agg["nodes"])
    first = client.get(f"/api/v1/jobs/{jid}/graph", params={"pass": 0}).json()
    assert first["pass"]["name"] == "verify" and first["nodes"]
    assert client.get(f"/api/v1/jobs/{jid}/graph", params={"pass": "traced"}).json()["nodes"]
    assert client.get(f"/api/v1/jobs/{jid}/graph", params={"pass": 99}).status_code == 404
    leaves = client.get(f"/api/v1/jobs/{jid}/graph", params={"view": "leaves"}).json()
    assert leaves["nodes"] and sum(n["count"] for n in leaves["nodes"]) == report_job["summary"]["tasks"]
    listings = client.get(f"/api/v1/jobs/{jid}/listings").json()["listings"]
    assert len(listings) == report_job["summary"]["leaves"] and "softmax.py:" in listings[0]
    from pypto.record import CompileRecord  # the worker's listings, as the record read back would give them
    rec = CompileRecord.from_json(client.get(f"/api/v1/jobs/{jid}/record").json())
    assert listings == [rec.listing(leaf) for leaf in range(len(listings))]


def test_the_listings_are_the_workers_and_the_record_is_not_read_back_for_them() -> None:
    """`/listings` answers the listings the job's worker made with its program (the language server's way):
    reading a big record back into objects to make them took 30 s (glm's fused attention, 1.05 M tasks)."""
    from server.http_safety import Refused
    from server.http_views import Results, listings, store
    from server.jobs import Job

    class NoReadBack(Results):
        def compiled(self, job: Job) -> Any:
            raise AssertionError("the record read back")

    job = Job("j1", "k.py::k", "profile", {}, 60, status="done", result={})
    store(job, {"record": {"passes": [], "graph": {}}, "listings": ["leaf 0 · AIV", "leaf 1 · AIC"], "summary": {}})
    assert listings(job, NoReadBack()) == ["leaf 0 · AIV", "leaf 1 · AIC"]
    short = Job("j2", "k.py::k", "profile", {}, 60, status="done", result={})
    store(short, {"record": {"passes": [], "graph": {}}, "listings": None})  # no block stage
    with pytest.raises(Refused) as refused:
        listings(short, NoReadBack())
    assert refused.value.status == 409 and "block stage" in refused.value.message


def test_a_jobs_run_is_made_from_its_columns_and_its_json_only_when_written(
        client: httpx.Client, report_job: dict[str, Any]) -> None:
    """A job's end stores no JSON of its run (glm's fused attention: 130 MB, 2.2 of its 3.1 s): the windows read
    the run made from the record's columns, and what writes the run out — the export, the history, a pin — makes
    its JSON then. Each is the run the job made."""
    kernel = "softmax.py::softmax_kernel"
    export = client.get(f"/api/v1/jobs/{report_job['id']}/export/swimlane")
    run = export.json()
    window = client.get(f"/api/v1/jobs/{report_job['id']}/swimlane", params={"limit": 10_000}).json()
    ids = run["tasks"]["id"]
    assert sorted(window["tasks"]["id"]) == sorted(ids) and window["total_tasks"] == len(ids)
    entries = client.get("/api/v1/history", params={"kernel": kernel}).json()["entries"]
    kept = client.get(f"/api/v1/history/{entries[-1]['id']}", params={"kernel": kernel}).json()
    assert kept["run"] == run  # written on the history's thread after the job's end
    assert client.post("/api/v1/baseline", json={"kernel": kernel}).status_code == 200
    assert client.get("/api/v1/baseline", params={"kernel": kernel}).json()["run"] == run
    assert client.post("/api/v1/baseline", json={"kernel": kernel, "pin": False}).status_code == 200


def test_the_run_is_stored_without_its_json_and_written_in_parts_byte_for_byte() -> None:
    """`store` keeps no run JSON; `Results.run` is the run the record's columns hold, the one its JSON held before;
    `run_bytes` writes it in parts (`json_parts`) with the bytes one `json.dumps` makes."""
    import pypto
    from pypto.ir.columns import array_names, expand, npz_bytes, read_npz
    from pypto.record import compile_record, profile
    from server.http_views import Results, _dumps, run_bytes, store
    from server.jobs import Job

    @pypto.jit
    def scaled(x: pypto.Tensor([256, 512], pypto.DT_FP32), out: pypto.Tensor([256, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x) * 2.0

    doc, arrays = profile(compile_record(scaled), "sim").to_document()
    job = Job("j1", "k.py::scaled", "profile", {}, 60, status="done", result={})
    store(job, {"record": doc, "record_columns": npz_bytes(arrays), "summary": {}})
    assert "run" not in job.extra and job.extra["has_run"] is True
    before = json.loads(_dumps(expand(doc["run"], read_npz(npz_bytes(arrays), array_names(doc["run"])))))
    res = Results()
    assert run_bytes(job, res) == _dumps(before) and res._docs == {}  # written out, not kept in the cache
    assert res.run(job) == before and len(before["tasks"]["id"]) >= 64 and len(res._docs) == 1
    assert run_bytes(job, res) == _dumps(res.run(job))  # (the cached one, when a window made it)


@settings(max_examples=200, deadline=None)
@given(doc=st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                        lambda inner: st.lists(inner, max_size=12) | st.dictionaries(
                            st.text(max_size=6) | st.integers(), inner, max_size=5), max_leaves=60),
       slice_=st.integers(1, 5))
def test_json_parts_are_the_bytes_of_one_dumps(doc: Any, slice_: int) -> None:
    """Any JSON document — NaN and infinities, non-ASCII text, non-string keys, lists longer than a slice — in parts
    joins to exactly `json.dumps`'s compact bytes."""
    from server.http_views import _dumps, json_parts

    assert b"".join(json_parts(doc, slice_)) == _dumps(doc)


def test_each_pass_has_its_graph(client: httpx.Client) -> None:
    from pypto.record import CompileRecord

    jid = finished(client, submit(client, "decomposed.py::decomposed", "compile")["id"])["id"]
    graph = {p: client.get(f"/api/v1/jobs/{jid}/graph", params={"pass": p, "view": "full"}).json()
             for p in ("traced", "0", "1", "final")}
    ops = {p: {n["op"] for n in g["nodes"]} for p, g in graph.items()}
    assert "softmax" in ops["traced"] and ops["0"] == ops["traced"]  # verify changes nothing
    assert "softmax" not in ops["1"] and "exp" in ops["1"] and graph["1"]["pass"]["name"] == "decompose"
    assert ops["final"] == ops["1"]
    snap = client.get(f"/api/v1/jobs/{jid}/record", params={"snapshots": True}).json()
    rec = CompileRecord.from_json(snap)  # the record with per-pass graphs reads back with pypto's own reader
    assert rec.snapshot_json(1)["graph"]["nodes"] == snap["passes"][1]["snapshot"]["graph"]["nodes"]
    made = next(n["id"] for n in graph["1"]["nodes"] if n["made_by"] == "decompose")
    assert [p.name for p in rec.passes_changing(made)] == ["decompose"]
    task = client.get(f"/api/v1/jobs/{jid}/tasks/0").json()  # nodes a pass made: the lines they came from
    assert [(s["line"], s["col"]) for s in task["source"]] == [(s.line, s.col) for s in rec.source_of_task(0)]
    assert task["source"] and {n["op"] for n in task["nodes"]} & {"exp", "sum", "amax"}


def test_swimlane_window_as_the_panel_asks_bins_above_max_boxes_and_the_slowest(
        client: httpx.Client, report_job: dict[str, Any]) -> None:
    """What the swimlane panel asks for a run its record left out: `max_boxes` (more tasks: per-lane bins, as
    `pypto/swimlane`), `slowest` (the run's longest tasks) and no pipe profiles."""
    jid = report_job["id"]
    whole = client.get(f"/api/v1/jobs/{jid}/swimlane").json()
    t = whole["tasks"]
    n = len(t["id"])
    assert whole["detail"] == "boxes" and whole["bins"] == [] and whole["pipe_profiles"]
    # the whole-run window starts at the first task, as pypto/swimlane's (the panel's axis starts there)
    assert whole["window"] == {"start": min(t["start"]), "end": max(t["end"])} and whole["job"] == jid
    boxes = client.get(f"/api/v1/jobs/{jid}/swimlane", params={"max_boxes": n, "slowest": 3,
                                                               "pipe_profiles": False}).json()
    assert boxes["detail"] == "boxes" and boxes["count"] == n
    # without the run's pipe profiles: the page's tasks' own, renumbered
    assert [boxes["pipe_profiles"][p] if p >= 0 else None for p in boxes["tasks"]["profile"]] == \
        [whole["pipe_profiles"][p] if p is not None and p >= 0 else None for p in t["profile"]]
    few = client.get(f"/api/v1/jobs/{jid}/swimlane", params={"limit": 2, "pipe_profiles": False}).json()
    assert len(few["pipe_profiles"]) <= 2 and all(0 <= p < len(few["pipe_profiles"]) for p in few["tasks"]["profile"])
    # a task's dependency cone (`around`), and where the tasks of some id ranges are (`match`)
    att = finished(client, submit(client, "attention.py::attention_kernel")["id"])["id"]
    at = client.get(f"/api/v1/jobs/{att}/swimlane").json()["tasks"]
    task = next(i for i, p in zip(at["id"], at["preds"], strict=True) if p)
    cone = client.get(f"/api/v1/jobs/{att}/swimlane", params={"max_boxes": 0, "around": task, "depth": 1}).json()
    succ = {i for i, p in zip(at["id"], at["preds"], strict=True) if task in p}
    assert cone["linked"]["id"][0] == task
    assert set(cone["linked"]["id"]) == {task} | set(at["preds"][at["id"].index(task)]) | succ
    assert set(cone["linked"]) == {"id", "lane", "start", "end", "leaf", "preds"}
    found = client.get(f"/api/v1/jobs/{jid}/swimlane", params={"max_boxes": 0, "bins": 4, "match": "0-2,5"}).json()
    hit = [k for k, i in enumerate(t["id"]) if i in (0, 1, 2, 5)]
    assert found["matched"] == found["matched_in_window"] == len(hit) == 4
    assert found["first_match"]["id"] == t["id"][min(hit, key=lambda k: (t["start"][k], t["id"][k]))]
    assert sum(b["tasks"] for b in found["match_bins"]) >= 4
    assert client.get(f"/api/v1/jobs/{jid}/swimlane", params={"match": "a-b"}).status_code == 400
    longest = sorted(range(n), key=lambda k: (t["start"][k] - t["end"][k], t["id"][k]))[:3]
    assert boxes["slowest"] == {key: [t[key][k] for k in longest] for key in ("id", "lane", "start", "end", "leaf")}
    lo, hi = min(t["start"]), max(t["end"])
    binned = client.get(f"/api/v1/jobs/{jid}/swimlane",
                        params={"max_boxes": 5, "bins": 10, "start": lo, "end": hi}).json()
    assert binned["detail"] == "bins" and binned["count"] == 0 and binned["tasks"]["id"] == []
    assert "slowest" not in binned and binned["counters"] == {}
    assert binned["in_window"] == n and not binned["truncated"]
    assert {b["lane"] for b in binned["bins"]} == set(t["lane"])
    assert all(0 < b["busy"] <= 1 and b["tasks"] >= 1 and lo <= b["start"] < b["end"] <= hi + 1e-9
               for b in binned["bins"])
    busy = sum(e - s for s, e in zip(t["start"], t["end"], strict=True))
    assert sum(b["busy"] * (b["end"] - b["start"]) for b in binned["bins"]) == pytest.approx(busy, rel=1e-6)
    for bad in ({"bins": 0}, {"bins": 1001}, {"slowest": -1}, {"max_boxes": -1}, {"depth": 6}):
        assert client.get(f"/api/v1/jobs/{jid}/swimlane", params=bad).status_code == 422, bad


def test_the_panels_record_of_a_big_kernel_leaves_out_the_per_tile_op_bulk(
        client: httpx.Client, report_job: dict[str, Any]) -> None:
    """`?panel=true` (what the browser panels ask): a record above 20,000 tile ops comes without the
    per-tile-op fields the panels do not draw, named with their lengths in `omitted`; a small one is whole."""
    small = client.get(f"/api/v1/jobs/{report_job['id']}/record", params={"panel": True})
    assert small.content == client.get(f"/api/v1/jobs/{report_job['id']}/record").content
    jid = finished(client, submit(client, "big.py::big", "compile")["id"])["id"]
    # asked first, the slim record is made without decoding its bulk (server.analyze.panel_lists); asked after
    # the whole one, from the whole lists: the same record
    first = client.get(f"/api/v1/jobs/{jid}/record", params={"panel": True})
    full = client.get(f"/api/v1/jobs/{jid}/record")
    slim = client.get(f"/api/v1/jobs/{jid}/record", params={"panel": True})
    assert first.json() == slim.json()
    rec, whole = slim.json(), full.json()
    n = len(whole["tiles"]["ops"]["id"])
    assert n == 34_816 and "omitted" not in whole
    tasks = len(whole["run"]["tasks"]["id"])
    t = whole["tiles"]["ops"]
    sgs, blocks = whole["subgraphs"], whole["blocks"]
    assert rec["omitted"] == {"tiles": {"ops": dict.fromkeys(t, n), "buffers": len(whole["tiles"]["buffers"])},
                              "memory": n, "subgraphs": {"ops": len(sgs)},
                              "blocks": {"instrs": len(blocks), "buffers": len(blocks)},
                              "execute": {"tasks": {"reads": tasks, "writes": tasks}},
                              "run": {"tasks": tasks, "pipe_profiles": len(whole["run"]["pipe_profiles"])}}
    # the execute tasks without their GM reads and writes (no view draws them), subgraphs without their tile
    # ops, blocks without their instructions and buffers, the tiles without their ops: the rest as it was
    # (their predecessors as runs: `pred_runs`; they and the subgraphs as columns: `{"$rows": …}`)
    assert set(rec["subgraphs"]) == set(rec["execute"]["tasks"]) == {"$rows"}
    assert [{**x, "pred_runs": unruns(x["pred_runs"])} for x in from_rows(rec["execute"]["tasks"])] == \
        [{**{k: v for k, v in x.items() if k not in ("reads", "writes", "preds")}, "pred_runs": x["preds"]}
         for x in whole["execute"]["tasks"]]
    assert from_rows(rec["subgraphs"]) == [{k: v for k, v in x.items() if k != "ops"} for x in sgs]
    assert rec["blocks"] == [{k: v for k, v in x.items() if k not in ("instrs", "buffers")} for x in blocks]
    assert rec["tiles"] == {k: v for k, v in whole["tiles"].items() if k not in ("ops", "buffers")}
    assert "memory" not in rec
    # the run without its tasks and pipe profiles (the swimlane panel asks /swimlane for windows), and the
    # task time per node the graph's overlay draws, summed here
    assert rec["run"] == {k: v for k, v in whole["run"].items() if k not in ("tasks", "pipe_profiles")}
    rt = whole["run"]["tasks"]
    agg = rec["aggregates"]
    assert sum(agg["time_share"].values()) == pytest.approx(
        sum(e - s for s, e in zip(rt["start"], rt["end"], strict=True)), rel=1e-9)
    # each subgraph's tensor nodes, compute ops' first (a task's source lines), and the buffer use per node
    moves = ("load", "store", "copy_in", "copy_out")
    assert agg["tile_ops"] == n and unpack(agg["subgraph_nodes"]) == [
        list(dict.fromkeys([t["node"][k] for k in sg["ops"] if t["op"][k] not in moves]
                           + [t["node"][k] for k in sg["ops"] if t["op"][k] in moves])) for sg in sgs]
    share = {b["leaf"]: max(p / dict(b["capacity_bytes"])[s] for s, p in b["peak_bytes"]) for b in blocks}
    use: dict[str, float] = {}
    for sg in sgs:
        for k in sg["ops"]:
            use[str(t["node"][k])] = max(use.get(str(t["node"][k]), 0.0), share[sg["leaf"]])
    assert agg["buffer_use"] == use
    assert {k: v for k, v in rec.items() if k not in ("tiles", "omitted", "run", "aggregates", "execute", "subgraphs",
                                                      "blocks")} == \
        {k: v for k, v in whole.items() if k not in ("tiles", "memory", "run", "execute", "subgraphs", "blocks")}
    assert len(slim.content) < 0.1 * len(full.content), (len(slim.content), len(full.content))
    snap = client.get(f"/api/v1/jobs/{jid}/record", params={"panel": True, "snapshots": True}).json()
    assert snap["omitted"] == rec["omitted"] and snap["passes"][0]["snapshot"]["graph"]["nodes"]
    # the same slim record with each pass's graph (made from the lean lists too)
    assert {k: v for k, v in snap.items() if k not in ("passes", "traced")} == {k: v for k, v in rec.items()
                                                                             if k != "passes"}
    assert [{k: v for k, v in p.items() if k != "snapshot"} for p in snap["passes"]] == rec["passes"]
    # what was left out, for the tile a panel shows
    got = client.get(f"/api/v1/jobs/{jid}/tile-ops", params={"ops": "7,0,34815"}).json()
    asked = [7, 0, 34815]
    sg_of = {k: sg["id"] for sg in sgs for k in sg["ops"]}
    assert got == {"job": jid, "ops": asked, "id": [t["id"][k] for k in asked], "op": [t["op"][k] for k in asked],
                   "subgraph": [sg_of.get(k, -1) for k in asked], "shape": [t["shape"][k] for k in asked],
                   "dtype": [t["dtype"][k] for k in asked], "memory": [whole["memory"][k] for k in asked],
                   "node": None, "cell": None}
    for bad, why in (({"ops": "34816"}, "no tile op 34816"), ({"ops": "1,x"}, "comma-separated integers"),
                     ({"ops": ",".join(["1"] * 4097)}, "at most 4096"), ({}, "node=…&cell="),
                     ({"node": 0, "cell": 0}, "has no tile grid"), ({"ops": "1", "node": 1, "cell": 0}, "not both")):
        r = client.get(f"/api/v1/jobs/{jid}/tile-ops", params=bad)
        assert r.status_code == 422 and why in r.text, r.text
    # the Tiles view's grids: per node, rows (instance and coordinates but the last) by columns (the last), each
    # cell coloured by the subgraph of its first op that is not a load or store
    grids = client.get(f"/api/v1/jobs/{jid}/tile-grids").json()
    assert grids["job"] == jid and grids["tile_ops"] == n
    want: dict[int, dict[str, dict[int, list[int]]]] = {}
    for k in range(n):
        coord = t["coord"][k]
        row = f"{t['instance'][k]}|{','.join(map(str, coord[:-1]))}"
        want.setdefault(t["node"][k], {}).setdefault(row, {}).setdefault(coord[-1], []).append(k)
    assert {g["node"] for g in grids["grids"]} == set(want)
    for g in grids["grids"]:
        rows = want[g["node"]]
        assert g["row_keys"] == list(rows) and g["cols"] == 1 + max(c for r in rows.values() for c in r)
        cells = [v for v, c in zip(g["subgraph"][::2], g["subgraph"][1::2], strict=True) for _ in range(c)]
        expect = []
        for row in rows.values():
            for c in range(g["cols"]):
                ops = row.get(c, [])
                rep = next((k for k in ops if t["op"][k] not in ("load", "store")), ops[0]) if ops else None
                expect.append(-2 if rep is None else sg_of.get(rep, -1))
        assert cells == expect and g["tiles"] == sum(len(r) for r in rows.values())
    # a cell's ops, by node and cell (what the panel asks on a click)
    g = grids["grids"][0]
    row = want[g["node"]][g["row_keys"][1]]
    cell = client.get(f"/api/v1/jobs/{jid}/tile-ops", params={"node": g["node"], "cell": g["cols"] + 2}).json()
    assert cell["ops"] == row[2] and cell["node"] == g["node"] and cell["cell"] == g["cols"] + 2
    # a leaf's block: its figures and instructions with their tensor nodes (the Leaves view's links)
    b0 = blocks[0]
    block = client.get(f"/api/v1/jobs/{jid}/blocks/{b0['leaf']}").json()
    assert block == {"job": jid, **{k: v for k, v in b0.items() if k not in ("instrs", "buffers")},
                     "instrs": [{"opcode": i["opcode"], "pipe": i["pipe"], "tile_op": i["tile_op"],
                                 "node": t["node"][i["tile_op"]] if i["tile_op"] >= 0 else -1, "note": i["note"]}
                                for i in b0["instrs"]]}
    assert client.get(f"/api/v1/jobs/{jid}/blocks/99").status_code == 404


def test_exports(client: httpx.Client, report_job: dict[str, Any]) -> None:
    from pypto.boards.trace import validate_chrome_trace

    base = f"/api/v1/jobs/{report_job['id']}/export"
    chrome = client.get(f"{base}/chrome")
    assert 'filename="trace.json"' in chrome.headers["content-disposition"]
    assert validate_chrome_trace(chrome.json()) == []
    merged = client.get(f"{base}/merged")
    assert 'filename="merged_swimlane.json"' in merged.headers["content-disposition"]
    assert any(e.get("ph") == "X" for e in merged.json()["traceEvents"])
    assert client.get(f"{base}/model-explorer").json()["graphs"]
    assert client.get(f"{base}/model-explorer", params={"pass": 2}).json()["graphs"]
    ET.fromstring(client.get(f"{base}/graphml").content)
    assert "digraph" in client.get(f"{base}/dot").text
    program = client.get(f"{base}/program")
    assert 'filename="program.json"' in program.headers["content-disposition"] and program.json()
    assert client.get(f"{base}/swimlane").json()["schema"] == "pypto-ide/swimlane"
    assert client.get(f"{base}/record").json()["schema"] == "pypto-ide/compile-record"
    assert "softmax" in client.get(f"{base}/text").text
    html = client.get(f"{base}/html")
    assert html.headers["content-type"].startswith("text/html") and "<html" in html.text.lower()
    assert client.get(f"{base}/nope").status_code == 404


def test_precision_suggest_and_the_cpu_board(client: httpx.Client) -> None:
    precision = finished(client, submit(client, "live.py::live", "precision", snapshots=False)["id"])
    assert precision["status"] == "done" and precision["settings"]["precision"], precision
    res = client.get(f"/api/v1/jobs/{precision['id']}/result").json()
    assert res["precision"]["passed"] is True and res["precision"]["passes"]
    suggest = finished(client, submit(client, "live.py::live", "suggest", budget=6, snapshots=False)["id"])
    assert suggest["status"] == "done" and suggest["settings"]["tile_search_budget"] == 6
    sug = client.get(f"/api/v1/jobs/{suggest['id']}/result").json()["suggestions"]
    assert sug and all(s["speedup"] > 1 and s["edits"] for s in sug)  # (16, 64) is not the best shape
    cpu = finished(client, submit(client, "live.py::live", board="cpu", workers=2, snapshots=False)["id"])
    assert cpu["status"] == "done" and cpu["summary"]["board"] == "cpu", cpu
    assert "measured" in cpu["summary"]["clock"]
    lanes = client.get(f"/api/v1/jobs/{cpu['id']}/swimlane").json()["lanes"]
    assert [lane["name"] for lane in lanes] == ["CPU_0", "CPU_1"]


def test_a_kernel_mistake_is_a_result_at_its_line(client: httpx.Client) -> None:
    done = finished(client, submit(client, "hostile.py::bad_tile")["id"])
    # the tile shape's rule is broken at its set_vec_tile_shapes call (line 32); the exp it fails for is related
    assert done["status"] == "done" and done["error"]["line"] == 32 and done["summary"] is None
    assert done["error"]["rule"] == "tile.shape" and [r["line"] for r in done["error"]["related"]] == [33]
    assert client.get(f"/api/v1/jobs/{done['id']}/record").status_code == 409


# ---- isolation: hang, time limit, crash, memory --------------------------------------------------------

def test_cancel_a_hanging_job_and_time_limit(server: Server, client: httpx.Client) -> None:
    with connect(ws_url(server), open_timeout=WAIT) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        job = submit(client, "hostile.py::hang")
        receive(ws, lambda m: m["type"] == "jobChanged" and m["job"]["id"] == job["id"]
                and m["job"]["status"] == "running")
        cancelled = client.delete(f"/api/v1/jobs/{job['id']}").json()
        assert cancelled["status"] == "cancelled" and cancelled["failure"]["kind"] == "cancelled"
        receive(ws, lambda m: m["type"] == "jobChanged" and m["job"]["id"] == job["id"]
                and m["job"]["status"] == "cancelled")
    timed = finished(client, submit(client, "hostile.py::hang", timeout_s=1.5)["id"])
    assert timed["status"] == "failed" and timed["failure"]["kind"] == "timeout", timed
    assert timed["progress"]["elapsed_s"] >= 1.5
    good = finished(client, submit(client, "hostile.py::good")["id"])
    assert good["status"] == "done" and good["error"] is None
    pool = client.get("/api/v1/health").json()["pool"]
    assert pool["failures"].get("cancelled", 0) >= 1 and pool["failures"].get("timeout", 0) >= 1


def test_exit_and_memory_hog_do_not_take_the_server_down(client: httpx.Client) -> None:
    died = finished(client, submit(client, "hostile.py::die")["id"])
    assert died["status"] == "failed" and died["failure"]["kind"] == "crashed", died
    hog = finished(client, submit(client, "hostile.py::hog")["id"])
    assert hog["status"] == "failed" and hog["failure"]["kind"] == "memory", hog
    good = finished(client, submit(client, "hostile.py::good")["id"])
    assert good["status"] == "done" and good["summary"]["tasks"] > 0
    assert client.get("/api/v1/health").json()["status"] == "ok"


def test_a_full_queue_answers_429(client: httpx.Client) -> None:
    capacity = client.get("/api/v1/health").json()["jobs"]["capacity"]
    assert capacity == 4  # 2 workers + a queue of 2
    jobs = [submit(client, "hostile.py::hang", timeout_s=50) for _ in range(capacity)]
    try:
        r = client.post("/api/v1/jobs", json={"kernel": "hostile.py::good"})
        assert r.status_code == 429 and "retry" in r.json()["detail"] and r.headers["retry-after"]
        states = [client.get(f"/api/v1/jobs/{j['id']}").json() for j in jobs]
        positions = [q["progress"]["position"] for q in states if q["status"] == "queued"]
        assert len(positions) >= 2 and positions == sorted(set(positions))  # 2 run, the rest wait in order
    finally:
        for j in reversed(jobs):
            assert client.delete(f"/api/v1/jobs/{j['id']}").json()["status"] == "cancelled"
    assert finished(client, submit(client, "hostile.py::good")["id"])["status"] == "done"


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def test_load_concurrent_compiles_are_answered_or_refused_never_lost(server: Server) -> None:
    """Bounded load on loopback: 4 waves of 24 compile requests from 8 threads at once. Every
    request is accepted (202) or refused (429); every accepted job finishes done; the server's
    memory stays bounded (finished jobs are forgotten beyond the server's keep limit)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(_: int) -> tuple[int, dict[str, Any] | None]:
        with httpx.Client(base_url=server.url, timeout=WAIT) as c:
            r = c.post("/api/v1/jobs", json={"kernel": "live.py::live", "action": "compile", "snapshots": False})
            if r.status_code == 429:
                assert r.headers["retry-after"]
                return 429, None
            assert r.status_code == 202, r.text
            return 202, finished(c, r.json()["id"])

    rss: list[float] = []
    answers: list[tuple[int, dict[str, Any] | None]] = []
    with ThreadPoolExecutor(8) as pool:
        for _ in range(4):
            answers += list(pool.map(one, range(24)))
            rss.append(_rss_mb(server.proc.pid))
    accepted = [job for code, job in answers if code == 202]
    assert len(answers) == 96 and {code for code, _ in answers} <= {202, 429}
    assert accepted and all(job is not None and job["status"] == "done" for job in accepted), accepted
    assert len({job["id"] for job in accepted if job}) == len(accepted)  # none lost, none answered twice
    assert any(code == 429 for code, _ in answers)  # 8 at once against a capacity of 4
    assert rss[-1] - rss[0] < 150, rss  # MB: results of forgotten jobs are freed
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        stats = c.get("/api/v1/health").json()["jobs"]
    assert stats["queued"] == stats["running"] == 0 and stats["unfinished_requests"] == 0


# ---- safety -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "status"), [
    ("../outside/secret.py", 403), ("a/../../outside/secret.py", 403), ("/etc/passwd", 400),
    ("evil.py", 403), ("linkdir/secret.py", 403), (".hidden/k.py", 403), ("notes.txt", 400),
    ("missing.py", 404), ("", 422), ("x" * 300 + ".py", 400), ("a/" * 1500 + "b.py", 404),
])
def test_paths_outside_the_workspace_are_refused(client: httpx.Client, path: str, status: int) -> None:
    src = client.get("/api/v1/source", params={"path": path} if path else {})
    assert src.status_code == status, src.text
    if path:
        job = client.post("/api/v1/jobs", json={"kernel": f"{path}::k"})
        assert job.status_code == status, job.text
    assert "do not serve" not in src.text


def raw_get(port: int, target: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """GET `target` exactly as written (http.client sends the path unnormalized, unlike httpx)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        conn.request("GET", target, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read().decode(errors="replace")
    finally:
        conn.close()


@pytest.mark.parametrize(("target", "status"), [
    ("/api/v1/source?path=..%2Foutside%2Fsecret.py", 403),  # decoded once by the server: '..' seen
    ("/api/v1/source?path=%2E%2E%2Foutside%2Fsecret.py", 403),
    ("/api/v1/source?path=%2Ftmp%2Fsecret.py", 400),
    ("/api/v1/source?path=%252e%252e%252Foutside%252Fsecret.py", 404),  # double: a literal '%2e%2e' folder
    ("/api/v1/source?path=..%5Coutside%5Csecret.py", 403),  # backslashes are separators too
    ("/api/v1/source?path=evil.py%00.py", 400),
    ("/..%2f..%2foutside%2fsecret.py", 404), ("/%2e%2e/outside/secret.py", 404), ("/../outside/secret.py", 404),
])
def test_encoded_traversal_is_refused(server: Server, target: str, status: int) -> None:
    got, body = raw_get(server.port, target)
    assert got == status, body
    assert "do not serve" not in body


def test_request_limits(client: httpx.Client, server: Server) -> None:
    big = {"kernel": "live.py::live", "pad": "x" * 100_000}
    assert client.post("/api/v1/jobs", json=big).status_code == 413
    chunks = (b"x" * 10_000 for _ in range(10))  # no Content-Length: counted while streaming
    r = client.post("/api/v1/jobs", content=chunks, headers={"content-type": "application/json"})
    assert r.status_code == 413
    form = client.post("/api/v1/jobs", content=b"kernel=live.py::live",
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415
    assert client.post("/api/v1/jobs", json={"kernel": "live.py::live", "unknown": 1}).status_code == 422
    assert client.post("/api/v1/jobs", json={"kernel": "live.py"}).status_code == 400
    # DNS rebinding and cross-site pages: a foreign Host or Origin is refused on a loopback bind
    assert client.get("/api/v1/health", headers={"host": "evil.example:80"}).status_code == 403
    assert client.post("/api/v1/jobs", json={"kernel": "live.py::live"},
                       headers={"origin": "http://evil.example"}).status_code == 403
    with pytest.raises(InvalidStatus) as e:
        connect(ws_url(server), origin="http://evil.example", open_timeout=WAIT)  # type: ignore[arg-type]
    assert e.value.response.status_code == 403
    assert "access-control-allow-origin" not in client.get("/api/v1/health",
                                                           headers={"origin": "http://x.example"}).headers
    # a configured origin: CORS answers its preflight, and the guard lets its requests and WebSocket through
    allowed = {"origin": "http://allowed.example"}
    pre = client.options("/api/v1/jobs", headers={**allowed, "access-control-request-method": "POST",
                                                  "access-control-request-headers": "content-type"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "http://allowed.example"
    missing = client.post("/api/v1/jobs", json={"kernel": "missing.py::k"}, headers=allowed)
    assert missing.status_code == 404 and missing.headers["access-control-allow-origin"] == "http://allowed.example"
    with connect(ws_url(server), origin="http://allowed.example", open_timeout=WAIT) as ws:  # type: ignore[arg-type]
        assert receive(ws, lambda m: True)["type"] == "hello"


# ---- live updates -----------------------------------------------------------------------------------------

def test_editing_a_file_pushes_record_changed(server: Server, client: httpx.Client, workspace: Path) -> None:
    first = finished(client, submit(client, "live.py::live")["id"])
    assert first["status"] == "done"
    with connect(ws_url(server), open_timeout=WAIT) as ws:
        hello = receive(ws, lambda m: m["type"] == "hello")
        assert hello["watching"] and any(k["id"] == "live.py::live" and k["live"] for k in hello["kernels"])
        ws.send(json.dumps({"type": "ping"}))
        receive(ws, lambda m: m["type"] == "pong")
        ws.send(json.dumps({"type": "watch", "kernel": "../outside/secret.py::k"}))
        assert "leaves the workspace" in receive(ws, lambda m: m["type"] == "error")["message"]
        text = LIVE.replace("set_vec_tile_shapes(16, 64)", "set_vec_tile_shapes(32, 64)")
        (workspace / "live.py").write_text(text)
        changed = receive(ws, lambda m: m["type"] == "fileChanged")
        assert changed["path"] == "live.py"
        msg = receive(ws, lambda m: m["type"] == "recordChanged" and m["kernel"] == "live.py::live")
    assert msg["version"] == first["version"] + 1 and msg["origin"] == "watch"
    assert msg["text_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert msg["summary"]["tasks"] == first["summary"]["tasks"] // 2  # twice the rows per tile
    assert client.get(msg["urls"]["record"]).json()["source"]["tile_configs"][0]["dims"] == [32, 64]


def test_a_kernel_imports_its_sibling_module_and_an_edit_of_it_reruns_the_kernel(
        server: Server, client: httpx.Client, workspace: Path) -> None:
    first = finished(client, submit(client, "lib/uses.py::scaled")["id"])
    assert first["status"] == "done" and first["error"] is None and first["summary"]["tasks"] == 64 // 16
    with connect(ws_url(server), open_timeout=WAIT) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        (workspace / "lib" / "helpers.py").write_text("ROWS = 8\n")  # not a kernel file: imported by one
        assert receive(ws, lambda m: m["type"] == "fileChanged")["path"] == "lib/helpers.py"
        msg = receive(ws, lambda m: m["type"] == "recordChanged" and m["kernel"] == "lib/uses.py::scaled")
    assert msg["origin"] == "watch" and msg["version"] == first["version"] + 1
    assert msg["summary"]["tasks"] == 64 // 8  # the worker imported the edited helpers.py


def test_a_page_watching_a_kernel_gets_its_result(server: Server) -> None:
    kernel = "rmsnorm.py::rmsnorm_kernel"  # no other test runs it
    with connect(ws_url(server), open_timeout=WAIT) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        ws.send(json.dumps({"type": "watch", "kernel": kernel, "action": "profile"}))
        # recordChanged goes to every page: another test's watched kernel may re-run meanwhile, so name this one
        assert receive(ws, lambda m: m["type"] in ("watching", "recordChanged")
                       and m.get("kernel") == kernel)["type"] == "watching"
        first = receive(ws, lambda m: m["type"] == "recordChanged" and m["kernel"] == kernel)
        assert first["origin"] == "watch" and first["summary"]["tasks"] > 0
    with connect(ws_url(server), open_timeout=WAIT) as ws:  # another page: the current result at once
        receive(ws, lambda m: m["type"] == "hello")
        ws.send(json.dumps({"type": "watch", "kernel": kernel, "action": "profile"}))
        again = receive(ws, lambda m: m["type"] in ("watching", "recordChanged") and m.get("kernel") == kernel)
        assert again["type"] == "recordChanged" and again["job"] == first["job"]


# ---- a non-local bind needs the token ----------------------------------------------------------------------

def test_a_non_local_bind_requires_the_token(tmp_path: Path) -> None:
    bundle = tmp_path / "dist"
    bundle.mkdir()
    (tmp_path / "secret.py").write_text("SECRET = 'do not serve'\n")
    (bundle / "index.html").write_text("<html>the panels</html>")
    (bundle / "panel.js").write_text("// a panel")
    ws = tmp_path / "ws"
    ws.mkdir()
    s = Server([str(ws), "--host", "0.0.0.0", "--port", "0", "--no-watch", "--workers", "1", "--webview", str(bundle)])
    try:
        token = re.search(r"generated: (\S+)", "".join(s.output)).group(1)  # type: ignore[union-attr]
        assert f"?token={token}" in s.link
        base = f"http://127.0.0.1:{s.port}"
        with httpx.Client(base_url=base, timeout=WAIT) as c:
            assert c.get("/api/v1/health").status_code == 401
            assert c.get("/api/v1/health", headers={"authorization": "Bearer wrong"}).status_code == 401
            assert c.get("/").status_code == 401
            ok = c.get("/api/v1/health", headers={"authorization": f"Bearer {token}"})
            assert ok.status_code == 200 and ok.json()["limits"]["token_required"]
            first = c.get("/", params={"token": token})  # a browser: the link sets a cookie
            assert first.status_code == 200 and "pypto_token" in first.headers["set-cookie"]
            assert "<h3>Kernels</h3>" in first.text  # with the webview bundle, / is the kernel picker …
            assert c.get("/index.html").text == "<html>the panels</html>"  # … and the bundle is served beside it
            assert c.get("/panel.js").text == "// a panel"  # the cookie now
            assert c.get("/api/v1/kernels").status_code == 200
        auth = {"authorization": f"Bearer {token}"}
        for target in ("/..%2fsecret.py", "/%2e%2e/secret.py", "/../secret.py", "/..%5csecret.py"):
            got, body = raw_get(s.port, target, auth)  # the bundle's static files: nothing above it
            assert got == 404 and "do not serve" not in body, (target, got)
        with pytest.raises(InvalidStatus) as e:
            connect(f"ws://127.0.0.1:{s.port}/api/v1/ws", open_timeout=WAIT)
        assert e.value.response.status_code == 403
        with connect(f"ws://127.0.0.1:{s.port}/api/v1/ws?token={token}", open_timeout=WAIT) as ws:
            assert receive(ws, lambda m: True)["type"] == "hello"
    finally:
        s.stop()


# ---- the command line ----------------------------------------------------------------------------------------

def test_cli_lists_serve_and_hands_the_rest_to_pypto_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from pypto.cli import main as core_main
    from server.cli import CORE, main

    with pytest.raises(SystemExit):
        core_main(["--help"])
    core_help = capsys.readouterr().out
    core_names = re.search(r"\{([a-z,]+)\}", core_help).group(1).split(",")  # type: ignore[union-attr]
    assert core_names == list(CORE)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "serve" in capsys.readouterr().out
    assert main(["compile", "no/such/file.py"]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["serve", "no/such/folder"]) == 1


def test_importers_are_found_by_reading_imports_transitively(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from server.http_workspace import Workspace

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "deep.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "near.py").write_text("from deep import X\n")  # its own folder
    (tmp_path / "mid.py").write_text("import pkg.deep as d\n")
    (tmp_path / "kernel.py").write_text("import pypto\nfrom mid import d\n")
    (tmp_path / "other.py").write_text("import pypto\nimport os, json\n")
    (tmp_path / "broken.py").write_text("from mid import (\n")
    ws = Workspace(tmp_path, None, SimpleNamespace(listeners=[]), lambda m: None)  # type: ignore[arg-type]
    assert ws.importers("pkg/deep.py") == {"pkg/near.py", "mid.py", "kernel.py"}
    assert ws.importers("mid.py") == {"kernel.py"}
    assert ws.importers("kernel.py") == set() and ws.importers("other.py") == set()
    # a batch of changes is one scan: the importers of any of them
    assert ws.importers("mid.py", "other.py") == {"kernel.py"} and ws.importers() == set()


def test_confine_and_read_text_name_the_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusals behind the HTTP statuses, each with a message naming the path and the reason."""
    import errno

    from server.http_safety import Refused, confine, read_text

    root = tmp_path.resolve()
    (root / "loop.py").symlink_to(root / "loop.py")  # a symlink to itself

    def refused(fn: Callable[[], Any]) -> Refused:
        with pytest.raises(Refused) as e:
            fn()
        return e.value

    long = refused(lambda: confine(root, "x" * 300 + ".py"))
    assert long.status == 400 and "longer than 255 bytes" in long.message and long.message.startswith("'xxx")
    looped = refused(lambda: confine(root, "loop.py"))
    assert looped.status == 400 and looped.message.startswith("'loop.py'")
    (root / "k.py").write_text("x = 1\n")
    (root / "dir.py").mkdir()
    assert refused(lambda: read_text(root / "dir.py", 100)).message == "not a file: dir.py"
    big = refused(lambda: read_text(root / "k.py", 3))
    assert (big.status, big.message) == (413, "k.py is 6 bytes; the limit is 3")
    (root / "bin.py").write_bytes(b"\xff\xfe")
    binary = refused(lambda: read_text(root / "bin.py", 100))
    assert (binary.status, binary.message) == (415, "bin.py is not UTF-8 text")

    def fail(err: OSError) -> Callable[[Path], bytes]:
        def read_bytes(self: Path) -> bytes:
            raise err
        return read_bytes

    monkeypatch.setattr(Path, "read_bytes", fail(PermissionError(errno.EACCES, "Permission denied")))
    denied = refused(lambda: read_text(root / "k.py", 100))
    assert (denied.status, denied.message) == (403, "k.py cannot be read (permission denied)")
    monkeypatch.setattr(Path, "read_bytes", fail(OSError(errno.EIO, "Input/output error")))
    broken = refused(lambda: read_text(root / "k.py", 100))
    assert (broken.status, broken.message) == (400, "k.py: Input/output error")


def test_the_task_index_reads_only_the_columns_it_needs() -> None:
    """The HTTP server's task index (made when a job's result is stored) decodes the tile ops' ids and
    nodes, the subgraphs and the tasks' subgraphs straight from the document's columns: the same index as
    from the record's lists, without rebuilding every tile op and task."""
    import pypto
    from pypto.ir.columns import MARK, npz_bytes, read_npz
    from pypto.record import compile_record, expanded
    from server.http_views import task_index, task_index_arrays

    @pypto.jit
    def scaled(x: pypto.Tensor([256, 512], pypto.DT_FP32), out: pypto.Tensor([256, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x) * 2.0

    doc, arrays = compile_record(scaled).to_document()
    assert MARK in doc["execute"]["tasks"] and MARK in doc["subgraphs"]  # big enough to be columns
    index = task_index(doc, None, read_npz(npz_bytes(arrays)))
    assert index == task_index(expanded(doc, arrays), None) and len(index["task_set"]) >= 64
    needed = task_index_arrays(doc)  # and only those arrays read of the column file
    assert needed < set(arrays) and task_index(doc, None, read_npz(npz_bytes(arrays), needed)) == index
