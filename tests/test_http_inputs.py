"""`pypto-ide serve` against odd inputs, through a real uvicorn process (issue 17 item 7, and the
HTTP twins of item 6's bounds):

- a non-finite number anywhere in a JSON body (NaN, Infinity, -Infinity, 1e999) is a 422 naming
  the field, in FastAPI's error shape — not a 500 whose error could not be serialized;
- an empty `--token ""` is a one-line error and exit code 2, not a traceback;
- swimlane windows and graph views come in pages (`limit`, `offset`, `next_offset`) that put
  together are the whole; a non-finite window is a 422.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http import REPO, WAIT, Server, finished, submit

KERNEL = "softmax.py::softmax_kernel"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("inputs") / "ws"
    ws.mkdir()
    shutil.copy(REPO / "examples" / "softmax.py", ws / "softmax.py")
    return ws


@pytest.fixture(scope="module")
def server(workspace: Path) -> Iterator[Server]:
    s = Server([str(workspace), "--port", "0", "--workers", "1", "--time-limit", "60", "--no-watch",
                "--webview", str(workspace.parent / "no-bundle")])
    yield s
    s.stop()


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        yield c


def post(client: httpx.Client, body: str) -> httpx.Response:
    return client.post("/api/v1/jobs", content=body.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize(("body", "loc", "text"), [
    (f'{{"kernel": "{KERNEL}", "action": "compile", "timeout_s": NaN}}', ["body", "timeout_s"], "NaN"),
    (f'{{"kernel": "{KERNEL}", "action": "compile", "timeout_s": Infinity}}', ["body", "timeout_s"], "Infinity"),
    (f'{{"kernel": "{KERNEL}", "action": "compile", "timeout_s": -Infinity}}', ["body", "timeout_s"], "-Infinity"),
    (f'{{"kernel": "{KERNEL}", "action": "compile", "timeout_s": 1e999}}', ["body", "timeout_s"], "1e999"),
    (f'{{"kernel": "{KERNEL}", "settings": {{"a": [1, 2.5, NaN]}}}}', ["body", "settings", "a", 2], "NaN"),
])
def test_a_non_finite_number_anywhere_in_a_body_is_a_422_naming_it(client: httpx.Client, body: str,
                                                                    loc: list[str | int], text: str) -> None:
    r = post(client, body)
    assert r.status_code == 422, r.text
    (err,) = r.json()["detail"]
    assert err["loc"] == loc and err["input"] == text and err["type"] == "finite_number"
    assert "finite" in err["msg"]


def test_finite_bodies_still_reach_the_route(client: httpx.Client) -> None:
    # the same body with a finite timeout: the route's own validation, then a job
    assert post(client, f'{{"kernel": "{KERNEL}", "action": "compile", "timeout_s": -1}}').status_code == 422
    assert post(client, "{not json").status_code == 422  # FastAPI's own answer to a body that is not JSON
    job = submit(client, KERNEL, "compile", timeout_s=30.5)
    assert finished(client, job["id"])["status"] == "done"


def test_swimlane_and_graph_pages_make_the_whole(client: httpx.Client) -> None:
    job = submit(client, KERNEL, "profile")
    assert finished(client, job["id"])["status"] == "done"
    base = f"/api/v1/jobs/{job['id']}"
    whole = client.get(f"{base}/swimlane").json()
    assert whole["next_offset"] is None and whole["offset"] == 0 and not whole["truncated"]
    ids, offset = [], 0
    while offset is not None:
        page = client.get(f"{base}/swimlane", params={"limit": 7, "offset": offset}).json()
        assert page["count"] <= 7 and page["in_window"] == whole["in_window"]
        ids += page["tasks"]["id"]
        offset = page["next_offset"]
    assert ids == whole["tasks"]["id"]
    assert client.get(f"{base}/swimlane", params={"limit": 200_001}).status_code == 422
    assert client.get(f"{base}/swimlane", params={"start": "nan"}).status_code == 422
    for view in ("aggregated", "full"):
        g = client.get(f"{base}/graph", params={"view": view}).json()
        assert g["next_offset"] is None and g["count"] == len(g["nodes"]) > 3
        nodes, edges, offset = [], [], 0
        while offset is not None:
            page = client.get(f"{base}/graph", params={"view": view, "limit": 2, "offset": offset}).json()
            nodes += page["nodes"]
            edges += page["edges"]
            offset = page["next_offset"]
        assert nodes == g["nodes"]
        assert sorted(map(str, edges)) == sorted(map(str, g["edges"]))
    assert client.get(f"{base}/graph", params={"limit": 20_001}).status_code == 422
    assert client.get(f"{base}/graph", params={"offset": 10**6}).status_code == 422


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_an_empty_token_is_a_one_line_error(workspace: Path, host: str) -> None:
    done = subprocess.run([sys.executable, "-m", "server.cli", "serve", str(workspace), "--host", host, "--port", "0",
                           "--token", ""], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "pypto-ide serve: error: --token is empty" in done.stderr
