"""schemathesis against the OpenAPI schema of a real `pypto-ide serve` process: generated requests
(valid and invalid, for every operation) never get a server error (5xx).

Bounded: a few examples per operation and generation mode, one worker, loopback only. Half of the
requests on `/jobs/{job_id}/…` name a real finished job, so the result views (swimlane windows,
graphs, task and node details, exports) see generated query parameters, not only 404s.
"""

from __future__ import annotations

import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402
from test_http import WAIT, Server, finished, submit  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EXAMPLES_PER_MODE = 15


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    ws = tmp_path_factory.mktemp("schema-ws")
    for name in ("softmax.py", "elementwise.py"):
        shutil.copy(REPO / "examples" / name, ws / name)
    s = Server([str(ws), "--port", "0", "--workers", "1", "--queue", "2", "--time-limit", "20", "--no-watch",
                "--webview", str(ws / "no-bundle")])
    try:
        with httpx.Client(base_url=s.url, timeout=WAIT) as c:
            job = finished(c, submit(c, "softmax.py::softmax_kernel", "report")["id"])
        assert job["status"] == "done", f"the setup job ended {job['status']}: {job.get('failure')}"
        yield s, job["id"]
    finally:
        s.stop()


def test_no_generated_request_gets_a_server_error(served: tuple[Server, str]) -> None:
    server, job_id = served
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 14  # every route of docs/http-api.md (the WebSocket is not in OpenAPI)
    checked: list[str] = []
    for op in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @given(case=op.as_strategy(mode))
            @settings(max_examples=EXAMPLES_PER_MODE, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), phases=[Phase.generate])
            def run(case: Any) -> None:
                params = case.path_parameters or {}
                if "job_id" in params and zlib.crc32(repr(sorted(params.items())).encode()) % 2:
                    params["job_id"] = job_id  # a real result: the view's own parameters are exercised
                case.call_and_validate(base_url=server.url, checks=[not_a_server_error])

            try:
                run()
            except Unsatisfiable:  # no parameters, no body: nothing invalid to send
                assert mode == GenerationMode.NEGATIVE, op.label
                continue
            checked.append(f"{op.method.upper()} {op.path} {mode.value}")
    assert sum(c.endswith("negative") for c in checked) >= 11, checked
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:  # and the server is still fine
        assert c.get("/api/v1/health").json()["status"] == "ok"
