"""`pypto-ide serve`'s tile search: bounded as in every door, findings before suggestions, and a search
the job's time limit cuts is a result, not a failure. A real uvicorn process, real HTTP and WebSocket
clients (tests/test_http.py's `Server`); every wait is on a message or a long poll, never a sleep."""

from __future__ import annotations

import inspect
import json
import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from test_http import REPO, WAIT, Server, finished, receive, submit, ws_url
from websockets.sync.client import connect

KERNEL = "attention.py::attention_kernel"  # a space of ~42,000 shapes: no search explores it in seconds


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    ws = tmp_path_factory.mktemp("search") / "ws"
    ws.mkdir()
    shutil.copy(REPO / "examples" / "attention.py", ws / "attention.py")
    s = Server([str(ws), "--port", "0", "--workers", "1", "--time-limit", "120", "--no-watch",
                "--webview", str(ws.parent / "no-bundle")])
    yield s
    s.stop()


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        yield c


def test_a_suggest_job_answers_its_findings_first_then_the_bounded_search(server: Server,
                                                                          client: httpx.Client) -> None:
    with connect(ws_url(server)) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        job = submit(client, KERNEL, "suggest", search_seconds=1, snapshots=False)
        assert job["settings"]["tile_search_seconds"] == 1
        first = receive(ws, lambda m: m["type"] in ("jobProgress", "recordChanged") and m["job"] == job["id"])
        assert first["type"] == "jobProgress" and first["interim"], first  # the findings before the search ends
        interim = client.get(first["urls"]["result"]).json()
        running = client.get(f"/api/v1/jobs/{job['id']}").json()["status"]
        assert interim["interim"] is (running == "running")
        if interim["interim"]:  # the search was still running: the findings are there, the suggestions not yet
            assert interim["health"]["findings"] and interim["suggestions"] == [] and interim["summary"]
        done = receive(ws, lambda m: m["type"] == "recordChanged" and m["job"] == job["id"])
    final = client.get(done["urls"]["result"]).json()
    assert final["interim"] is False and final["health"]["findings"] and final["has_record"]
    search = final["search"]
    assert search["stopped"] == "time" and search["searched"] < search["space"]  # the bound ended it


def test_a_search_the_job_time_limit_cuts_is_a_result_not_a_failure(client: httpx.Client) -> None:
    job = submit(client, KERNEL, "suggest", search_seconds=0, timeout_s=8, snapshots=False)  # 0: no bound
    assert job["settings"]["tile_search_seconds"] is None
    done = finished(client, job["id"])
    assert done["status"] == "done" and done["failure"] is None and done["summary"]["makespan_us"] > 0, done
    res: dict[str, Any] = client.get(f"/api/v1/jobs/{job['id']}/result").json()
    assert res["health"]["findings"] and res["suggestions"] == []
    assert "time limit (8 s) ended the tile search" in res["search_cut"]
    assert res["search"] is None or res["search"]["stopped"] == "job time limit"
    assert client.get(f"/api/v1/jobs/{job['id']}/record").status_code == 200  # the record came with the findings
    listed = {k["id"]: k for k in client.get("/api/v1/kernels").json()["kernels"]}
    assert listed[KERNEL]["latest_job"] == job["id"]


def test_the_bound_is_every_doors() -> None:
    """One default: the advisor's, the health check's, the CLI's --time, serve's and the editor's."""
    from pypto.analysis.advice import ADVICE_SECONDS
    from pypto.analysis.advisor import SEARCH_SECONDS
    from server.http import SEARCH_SECONDS as SERVE_SECONDS
    from server.http import JobRequest, _settings
    from server.protocol import Settings

    package = json.loads((REPO / "package.json").read_text())
    editor = package["contributes"]["configuration"]["properties"]["pypto.tileSearchSeconds"]["default"]
    assert SEARCH_SECONDS == ADVICE_SECONDS == SERVE_SECONDS == Settings().tile_search_seconds == editor == 10
    assert _settings(JobRequest(kernel=KERNEL, action="suggest"))["tile_search_seconds"] == SEARCH_SECONDS
    assert "tile_search_seconds" not in _settings(JobRequest(kernel=KERNEL, action="profile"))
    # without a search, `search_seconds` bounds the check of the findings' shapes alone (none given: the default)
    assert _settings(JobRequest(kernel=KERNEL, action="report", search_seconds=60))["advice_seconds"] == 60
    assert _settings(JobRequest(kernel=KERNEL, action="report", search_seconds=0))["advice_seconds"] is None
    assert "advice_seconds" not in _settings(JobRequest(kernel=KERNEL, action="profile"))
    from pypto.analysis.report import make_report
    from pypto.cli import run_report

    for fn in (run_report, make_report):
        assert inspect.signature(fn).parameters["seconds"].default == SEARCH_SECONDS
