"""`pypto-ide serve` and PyPTO 3's `passes_dump/` folders, through a real uvicorn process: the workspace's pass
dumps listed (`GET /api/v1/passdumps`, and on the front page, each opening the passes panel), a dump's pass table
and one pass (`/api/v1/passdumps/table`, `/pass`: paths relative to the workspace, the kernel file looked for
only inside it), and what is refused (outside the workspace, no such folder or snapshot)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http import WAIT, Server

APP = Path(__file__).parent / "data" / "pypto3_passes" / "app"
REL = "proj/build_output/RowScale_20261128_101500/passes_dump"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("passdumps")
    ws = base / "ws"
    shutil.copytree(APP, ws / "proj")
    shutil.copytree(APP / "build_output", ws / "alone" / "build_output")  # no kernel file in the workspace near it
    (base / "rowscale.py").write_text((APP / "rowscale.py").read_text())  # outside: never found
    (ws / "notes" / "passes_dump").mkdir(parents=True)  # the name, but no snapshot: not listed
    (ws / "notes" / "passes_dump" / "readme.txt").write_text("nothing\n")
    bundle = base / "dist"
    bundle.mkdir()
    (bundle / "index.html").write_text("<html>the bundle's own index</html>")
    (bundle / "passes.js").write_text("// the passes panel")
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


def test_pass_dumps_are_listed_and_linked_from_the_front_page(client: httpx.Client) -> None:
    got = client.get("/api/v1/passdumps").json()
    assert [(d["path"], d["snapshots"]) for d in got["dumps"]] == [
        ("alone/build_output/RowScale_20261128_101500/passes_dump", 5), (REL, 5)]
    assert got["truncated"] is False
    page = client.get("/").text
    assert f"/passes.html?dump={REL.replace('/', '%2F')}" in page and "Pass dumps" in page


def test_a_dump_and_a_pass_with_workspace_relative_paths(client: httpx.Client) -> None:
    table = client.get("/api/v1/passdumps/table", params={"path": REL}).json()
    assert table["path"] == REL and table["program"] == "RowScale"
    assert table["source"]["file"] == "proj/rowscale.py" and table["source"]["how"] == "found"
    assert {f["source"]["file"] for f in table["functions"]} == {"proj/rowscale.py"}
    one = client.get("/api/v1/passdumps/pass", params={"path": f"{REL}/02_after_OutlineIncoreScopes.py",
                                                       "index": 2}).json()
    assert one["name"] == "OutlineIncoreScopes" and one["diff"]["added"] == 13
    assert [f["source"]["file"] for f in one["functions"]] == ["proj/rowscale.py"] * 4
    # the kernel file beside the workspace is not looked at
    alone = client.get("/api/v1/passdumps/table",
                       params={"path": "alone/build_output/RowScale_20261128_101500"}).json()
    assert alone["source"]["file"] is None and alone["functions"] == []


@pytest.mark.parametrize(("path", "index", "status", "says"), [
    ("../outside", None, 403, "leaves the workspace"),
    ("/etc", None, 400, "absolute paths are refused"),
    ("nowhere/passes_dump", None, 404, "no such folder"),
    ("notes/passes_dump", None, 422, "notes/passes_dump: no 00_frontend.py or NN_after_<Pass>.py snapshots"),
    (REL, 9, 422, "no snapshot 09 (there are 00, 01, 02, 03, 04)"),
    (REL, -1, 422, ""),
])
def test_what_is_refused(client: httpx.Client, path: str, index: int | None, status: int, says: str) -> None:
    url = "/api/v1/passdumps/table" if index is None else "/api/v1/passdumps/pass"
    r = client.get(url, params={"path": path, **({} if index is None else {"index": index})})
    assert r.status_code == status, r.text
    assert says in str(r.json()["detail"])
    assert "/tmp/" not in r.text  # no absolute path of the server's machine in an answer
