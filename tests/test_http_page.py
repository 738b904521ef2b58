"""`pypto-ide serve`'s front page and traces, through a real uvicorn process (issue 18 item 7):

- with the panel bundle, `/` is a kernel picker: workspace files → kernels, each with the newest
  job's status (never run, queued/running, done, error, failed, cancelled) and its latest makespan,
  each linking to its panels; the workspace's trace files listed (by name or first bytes), each
  opening in the swimlane panel;
- `GET /api/v1/traces` lists them, `GET /api/v1/traces/swimlane?path=` answers a trace's swimlane
  (the JSON the panel reads) and refuses paths outside the workspace;
- the pages carry a nonce CSP (`default-src 'none'`) and load nothing from elsewhere.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import HOSTILE_KERNELS
from test_http import REPO, WAIT, Server, finished, receive, submit
from websockets.sync.client import connect

from pypto.boards.swimlane import Lane, LaneTask, Swimlane
from pypto.boards.trace import write_trace

SOFTMAX = "softmax.py::softmax_kernel"


def small_run() -> Swimlane:
    lanes = (Lane("AIC_0", "AIC"), Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"))
    tasks = (LaneTask(0, 0, 1.0, 3.0, leaf=0), LaneTask(1, 1, 3.0, 4.5, leaf=1, preds=(0,)),
             LaneTask(2, 2, 3.2, 5.0, leaf=1, preds=(0,)))
    return Swimlane("sim", "simulated", lanes, tasks)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("page")
    ws = base / "ws"
    (ws / "runs" / "chip").mkdir(parents=True)
    (ws / "softmax.py").write_text((REPO / "examples" / "softmax.py").read_text())
    (ws / "hostile.py").write_text(HOSTILE_KERNELS)
    run = small_run()
    (ws / "runs" / "sim_swimlane.json").write_text(json.dumps(run.to_json()))
    write_trace(run, ws / "runs" / "chip" / "merged_swimlane.json", fmt="merged")
    write_trace(run, ws / "runs" / "perfetto.json", fmt="chrome")
    (ws / "runs" / "chip" / "deps.json").write_text('{"edges": []}')  # dependencies only: not a trace
    (ws / "config.json").write_text('{"tile": [16, 64]}')  # JSON, not a trace
    (ws / ".hidden").mkdir()
    (ws / ".hidden" / "merged_swimlane.json").write_text("{}")  # hidden: never listed
    (base / "outside.json").write_text(json.dumps(run.to_json()))
    os.symlink(base / "outside.json", ws / "runs" / "link_out.json")  # a symlink out: refused
    bundle = base / "dist"  # a stand-in for webview/dist
    bundle.mkdir()
    (bundle / "index.html").write_text("<html>the bundle's own index</html>")
    (bundle / "swimlane.js").write_text("// the swimlane panel")
    (bundle / "panel.css").write_text("body{}")
    return ws


@pytest.fixture(scope="module")
def server(workspace: Path) -> Iterator[Server]:
    s = Server([str(workspace), "--port", "0", "--workers", "1", "--time-limit", "60", "--no-watch",
                "--webview", str(workspace.parent / "dist")])
    yield s
    s.stop()


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        yield c


class Page(HTMLParser):
    """The picker's rows: kernels (id → {status, makespan, links}), traces (path → href), scripts."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.kernels: dict[str, dict[str, Any]] = {}
        self.traces: dict[str, str] = {}
        self.scripts: list[dict[str, str | None]] = []
        self.srcs: list[str] = []
        self._row: dict[str, Any] | None = None
        self._cell: str | None = None
        self._href: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            self.scripts.append(a)
        self.srcs += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "tr" and a.get("class") == "kernel":
            self._row = self.kernels[str(a["data-kernel"])] = {"status": "", "makespan": "", "links": []}
        elif tag == "tr" and a.get("class") == "trace":
            self._row = {"trace": True}
        elif tag == "tr":
            self._row = None
        if tag == "td" and self._row is not None:
            cls = a.get("class") or ""
            self._cell = "status" if "status" in cls else "makespan" if "makespan" in cls else None
        if tag == "a" and self._row is not None:
            self._href = a.get("href")
            if "links" in self._row:
                self._row["links"].append(self._href)

    def handle_data(self, data: str) -> None:
        if self._row is not None and self._cell in ("status", "makespan") and "links" in self._row:
            self._row[self._cell] += data
        if self._row is not None and self._row.get("trace") and self._href is not None and data.strip():
            self.traces[data.strip()] = self._href

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        if tag == "a":
            self._href = None


def front(client: httpx.Client) -> tuple[httpx.Response, Page]:
    # the page waits 10 s at most for the workspace's first discovery, then shows what is known (CI, loaded: none
    # yet); the kernels' JSON waits for it: the page after it lists them
    assert client.get("/api/v1/kernels").status_code == 200
    r = client.get("/")
    assert r.status_code == 200, r.text
    return r, Page(r.text)


def test_the_front_page_picks_kernels_with_their_status_and_lists_the_traces(client: httpx.Client) -> None:
    r, page = front(client)
    assert page.kernels[SOFTMAX]["status"].strip() == "never run"
    assert page.kernels[SOFTMAX]["makespan"].strip() == "–"
    assert {"hostile.py::good", "hostile.py::die", "hostile.py::hang"} <= set(page.kernels)
    assert f"/swimlane.html?kernel={SOFTMAX.replace(':', '%3A')}" in page.kernels[SOFTMAX]["links"]
    assert f"/graph.html?kernel={SOFTMAX.replace(':', '%3A')}" in page.kernels[SOFTMAX]["links"]
    # the traces: ours, a merged_swimlane.json (by name), a Chrome trace (by its first bytes); not the
    # dependency file, a plain JSON file, a hidden folder's file or a symlink out
    assert set(page.traces) == {"runs/sim_swimlane.json", "runs/chip/merged_swimlane.json", "runs/perfetto.json"}
    assert page.traces["runs/sim_swimlane.json"] == "/traces/view?path=runs%2Fsim_swimlane.json"
    # nothing from elsewhere; the one script carries the nonce the CSP names
    policy = r.headers["content-security-policy"]
    assert policy.startswith("default-src 'none'") and "script-src 'nonce-" in policy
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)  # type: ignore[union-attr]
    assert page.scripts and all(s.get("nonce") == nonce for s in page.scripts)
    assert not [u for u in page.srcs if "//" in u]
    assert client.get("/index.html").text == "<html>the bundle's own index</html>"  # the bundle beside it

    done = finished(client, submit(client, SOFTMAX, "profile")["id"])
    failed = finished(client, submit(client, "hostile.py::die", "profile")["id"])
    mistake = finished(client, submit(client, "hostile.py::bad_tile", "profile")["id"])
    assert (done["status"], failed["status"], mistake["status"]) == ("done", "failed", "done")
    _, page = front(client)
    assert page.kernels[SOFTMAX]["status"].strip() == "done"
    assert page.kernels[SOFTMAX]["makespan"].strip() == f"{done['summary']['makespan_us']:,.2f} µs"
    assert page.kernels["hostile.py::die"]["status"].startswith("failed")
    assert page.kernels["hostile.py::bad_tile"]["status"].startswith("error")
    assert page.kernels["hostile.py::good"]["status"].strip() == "never run"


def test_a_running_job_shows_on_the_front_page(server: Server, client: httpx.Client) -> None:
    with connect(f"ws://127.0.0.1:{server.port}/api/v1/ws", open_timeout=WAIT) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        job = submit(client, "hostile.py::hang", "profile", timeout_s=50)
        receive(ws, lambda m: m["type"] == "jobChanged" and m["job"]["id"] == job["id"]
                and m["job"]["status"] == "running")
        _, page = front(client)
        assert page.kernels["hostile.py::hang"]["status"].strip() == "running"
        assert client.delete(f"/api/v1/jobs/{job['id']}").json()["status"] == "cancelled"
    _, page = front(client)
    assert page.kernels["hostile.py::hang"]["status"].startswith("cancelled")


def test_the_traces_route_lists_them(client: httpx.Client) -> None:
    doc = client.get("/api/v1/traces").json()
    kinds = {t["path"]: t["kind"] for t in doc["traces"]}
    assert kinds == {"runs/chip/merged_swimlane.json": "merged", "runs/perfetto.json": "chrome",
                     "runs/sim_swimlane.json": "swimlane"}
    assert not doc["truncated"] and all(t["size"] > 0 for t in doc["traces"])


def test_a_trace_route_answers_its_swimlane(client: httpx.Client) -> None:
    want = small_run()
    doc = client.get("/api/v1/traces/swimlane", params={"path": "runs/sim_swimlane.json"}).json()
    assert doc["path"] == "runs/sim_swimlane.json" and doc["label"] == "sim_swimlane.json"
    run = doc["run"]
    assert run["schema"] == "pypto-ide/swimlane" and [ln["name"] for ln in run["lanes"]] == ["AIC_0", "AIV_0", "AIV_1"]
    assert run["tasks"]["start"] == [t.start for t in want.tasks] and run["metrics"]["makespan_us"] == 4.0
    merged = client.get("/api/v1/traces/swimlane", params={"path": "runs/chip/merged_swimlane.json"}).json()["run"]
    assert merged["board"] == "imported" and len(merged["tasks"]["id"]) == 3
    assert merged["metrics"]["makespan_us"] == pytest.approx(4.0, abs=1e-3)


@pytest.mark.parametrize(("path", "status"), [
    ("../outside.json", 403),
    ("runs/../../outside.json", 403),
    ("runs/link_out.json", 403),  # a symlink that resolves outside
    (".hidden/merged_swimlane.json", 403),
    ("/etc/passwd.json", 400),
    ("softmax.py", 400),  # only .json
    ("runs/missing.json", 404),
    ("config.json", 422),  # JSON no importer reads
])
def test_a_trace_outside_the_workspace_or_not_a_trace_is_refused(client: httpx.Client, path: str,
                                                                  status: int) -> None:
    r = client.get("/api/v1/traces/swimlane", params={"path": path})
    assert r.status_code == status, r.text
    assert "pypto-ide/swimlane" not in r.text
    assert client.get("/traces/view", params={"path": path}).status_code in (status, 200)


def test_the_trace_view_frames_the_swimlane_panel(client: httpx.Client) -> None:
    r = client.get("/traces/view", params={"path": "runs/sim_swimlane.json"})
    assert r.status_code == 200
    policy = r.headers["content-security-policy"]
    assert policy.startswith("default-src 'none'") and "frame-src 'self'" in policy
    assert "<iframe id='panel' src='/traces/panel'" in r.text
    assert '"/api/v1/traces/swimlane?path=runs%2Fsim_swimlane.json"' in r.text  # what the page fetches
    assert 'type: "swimlane"' in r.text  # the panel message it sends (webview/src/protocol.ts)
    assert client.get("/traces/view", params={"path": "../outside.json"}).status_code == 403
    panel = client.get("/traces/panel")
    nonce = re.search(r"'nonce-([^']+)'", panel.headers["content-security-policy"]).group(1)  # type: ignore[union-attr]
    assert 'data-host="parent"' in panel.text and f'<script nonce="{nonce}" src="/swimlane.js">' in panel.text
    assert "frame-ancestors 'self'" in panel.headers["content-security-policy"]


def test_without_the_bundle_the_minimal_page_keeps_a_nonce_csp(workspace: Path) -> None:
    s = Server([str(workspace), "--port", "0", "--workers", "1", "--no-watch",
                "--webview", str(workspace.parent / "no-bundle")])
    try:
        with httpx.Client(base_url=s.url, timeout=WAIT) as c:
            r = c.get("/")
            policy = r.headers["content-security-policy"]
            nonce = re.search(r"'nonce-([^']+)'", policy).group(1)  # type: ignore[union-attr]
            assert policy.startswith("default-src 'none'") and 'api = "/api/v1"' in r.text
            assert f'<script nonce="{nonce}">' in r.text and f'<style nonce="{nonce}">' in r.text
            assert '"/traces"' in r.text  # it lists the traces too (links to their swimlane JSON)
            assert c.get("/").headers["content-security-policy"] != policy  # a fresh nonce per response
    finally:
        s.stop()
