"""`pypto-ide serve` answers a kernel's record before its job has checked the advice (docs/http-api.md,
`jobProgress`): the record, its swimlane and its graphs are read while the sim board still simulates the tile
shapes the findings propose, which takes up to its 10 s bound on a production kernel; the job's end brings the
checked findings and the same record. A real uvicorn process, real HTTP and WebSocket clients; the check is held
on a FIFO the test opens, so every wait is on an event, never a sleep."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_http import WAIT, Server, receive, submit, ws_url
from websockets.sync.client import connect

# the tail the health rule proposes to fix (tests/lsp/test_interim.py); the kernel's second trace — the advice's
# check tracing a proposed shape — waits until the test opens GATE for writing
KERNEL = '''import pypto

GATE = {gate!r}
TRACED = [0]


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    TRACED[0] += 1
    if TRACED[0] == 2:  # (the first candidate only)
        with open(GATE) as gate:
            gate.read()
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    (ws / "tail.py").write_text(KERNEL.format(gate=str(gate)))
    s = Server([str(ws), "--port", "0", "--workers", "1", "--no-watch", "--webview", str(tmp_path / "no-bundle")])
    yield s, gate
    s.stop()


def test_a_profile_jobs_record_is_read_while_its_advice_is_checked_then_its_checked_findings(served) -> None:
    server, gate = served
    with httpx.Client(base_url=server.url, timeout=WAIT) as client, connect(ws_url(server)) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        job = submit(client, "tail.py::tail_vec", "profile")
        first = receive(ws, lambda m: m["type"] in ("jobProgress", "recordChanged") and m["job"] == job["id"])
        assert first["type"] == "jobProgress" and first["interim"], first  # its findings, then its record stored
        news = first if first["record"] else \
            receive(ws, lambda m: m["type"] in ("jobProgress", "recordChanged") and m["job"] == job["id"])
        assert news["type"] == "jobProgress" and news["interim"] and news["record"], news
        # the check is held at the gate: the job is running, and its record answers
        assert client.get(news["urls"]["job"]).json()["status"] == "running"
        interim = client.get(news["urls"]["result"]).json()
        assert interim["interim"] and interim["has_record"] and interim["summary"]["tasks"] > 0
        held = [f for f in interim["health"]["findings"] if f["rule"] == "tile.tail-waste"]
        assert held and "being simulated" in held[0]["suggestion"] and "try" not in held[0]["numbers"]
        record = client.get(news["urls"]["record"])
        assert record.status_code == 200, record.text
        window = client.get(news["urls"]["swimlane"], params={"max_boxes": 100})
        assert window.status_code == 200 and window.json()["total_tasks"] == interim["summary"]["tasks"]
        assert client.get(news["urls"]["graph"]).status_code == 200
        assert client.get(f"{news['urls']['job']}/export/swimlane").status_code == 409  # exports: once done
        with connect(ws_url(server)) as late:  # a page opened now draws the record at once
            receive(late, lambda m: m["type"] == "hello")
            late.send(json.dumps({"v": 1, "type": "watch", "kernel": "tail.py::tail_vec", "action": "profile"}))
            told = receive(late, lambda m: m["type"] in ("jobProgress", "watching", "recordChanged"))
            assert told["type"] == "jobProgress" and told["record"] and told["job"] == job["id"], told
        opened = threading.Thread(target=lambda: open(gate, "w").close(), daemon=True)  # the check goes on
        opened.start()
        done = receive(ws, lambda m: m["type"] == "recordChanged" and m["job"] == job["id"])
        opened.join(WAIT)
        final = client.get(done["urls"]["result"]).json()
        assert final["interim"] is False and final["has_record"] and final["summary"] == interim["summary"]
        checked = [f for f in final["health"]["findings"] if f["rule"] == "tile.tail-waste"]
        assert checked and checked[0]["numbers"].get("checked_on") == "sim", checked
        assert client.get(done["urls"]["record"]).content == record.content  # the same record


def test_a_job_stopped_while_its_advice_is_checked_ends_done_with_its_record_and_says_what_was_not_checked(
        served) -> None:
    server, _ = served  # nobody opens the gate: the check never ends, the job's time limit does
    with httpx.Client(base_url=server.url, timeout=WAIT) as client, connect(ws_url(server)) as ws:
        receive(ws, lambda m: m["type"] == "hello")
        job = submit(client, "tail.py::tail_vec", "profile", timeout_s=8)
        receive(ws, lambda m: m["type"] == "jobProgress" and m["job"] == job["id"] and m["record"])
        info = client.get(f"/api/v1/jobs/{job['id']}", params={"wait": WAIT}).json()  # (a long poll)
        assert info["status"] == "done" and info["failure"] is None, info  # before: failed, its record lost
        result = client.get(f"/api/v1/jobs/{job['id']}/result").json()
        assert result["interim"] is False and result["has_record"] and result["summary"]["tasks"] > 0
        held = [f for f in result["health"]["findings"] if f["rule"] == "tile.tail-waste"]
        assert held and "time limit" in held[0]["numbers"]["check_failed"], held
        assert "did not finish" in held[0]["suggestion"] and "try" not in held[0]["numbers"]
        assert client.get(f"/api/v1/jobs/{job['id']}/record").status_code == 200


def test_the_panels_record_is_made_once_per_job_and_only_once_the_record_may_be_read() -> None:
    from server.http_safety import Refused
    from server.http_views import Results
    from server.jobs import Job

    made: list[str] = []

    def make(job: Job) -> bytes:
        made.append(job.id)
        return f'{{"job": "{job.id}"}}'.encode()

    res = Results(panels=2)
    running = Job("j1", "k.py::k", "profile", {}, 60, status="running")
    with pytest.raises(Refused) as refused:  # its record not stored yet
        res.panel(running, False, lambda: make(running))
    assert refused.value.status == 409 and made == []
    running.extra["early_record"] = True  # stored: `_store_early`
    assert res.panel(running, False, lambda: make(running)) == b'{"job": "j1"}'
    running.status, running.result = "done", {}
    assert res.panel(running, False, lambda: make(running)) == b'{"job": "j1"}' and made == ["j1"]  # the same bytes
    others = [Job(f"j{i}", "k.py::k", "profile", {}, 60, status="done", result={}) for i in (2, 3)]
    for j in others:
        res.panel(j, False, lambda j=j: make(j))
    res.panel(running, False, lambda: make(running))  # the latest two kept: j1 made again
    assert made == ["j1", "j2", "j3", "j1"]
