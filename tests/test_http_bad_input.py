"""Bad input from a held-out corpus (issue 27) through a real `pypto-ide serve` process: a module that
raises KeyboardInterrupt or SystemExit at import is an error at the line that raised, in the kernel
listing, and the server serves on; `pypto.loop(0, 8, 0.5)` is a done job whose error names the loop and
its step at the loop's line; a slice that starts past the end of its dim is an error at the slice's line,
read or written, while one whose stop only runs past the end compiles."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import httpx
import pytest
from support import BAD_LOOP_STEP, BAD_SLICES
from test_http import WAIT, Server, finished, submit

INTERRUPTED = textwrap.dedent('''
    import pypto

    raise KeyboardInterrupt


    @pypto.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x)
''')

EXITS = INTERRUPTED.replace("raise KeyboardInterrupt", "raise SystemExit(3)")

GOOD = INTERRUPTED.replace("raise KeyboardInterrupt\n", "")




def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle` (the server's lines are 1-based)."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    ws = tmp_path_factory.mktemp("bad_input")
    for name, text in (("interrupted.py", INTERRUPTED), ("exits.py", EXITS), ("good.py", GOOD),
                       ("loop_step.py", BAD_LOOP_STEP), ("slices.py", BAD_SLICES)):
        (ws / name).write_text(text)
    s = Server([str(ws), "--port", "0", "--workers", "2", "--time-limit", "30", "--no-watch"])
    yield s
    s.stop()


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=WAIT) as c:
        yield c


def test_an_exit_at_import_is_an_error_at_its_line_and_the_server_serves_on(client: httpx.Client) -> None:
    listing = client.get("/api/v1/kernels").json()
    errors = {e["file"]: e["error"] for e in listing["errors"]}
    cases = (("interrupted.py", INTERRUPTED, "raise KeyboardInterrupt", "KeyboardInterrupt"),
             ("exits.py", EXITS, "raise SystemExit(3)", "SystemExit: 3"))
    for file, text, statement, raised in cases:
        error = errors[file]
        assert error["line"] == line_of(text, statement) and error["rule"] == "python.import", error
        assert error["message"] == f"{raised} while importing", error
        job = finished(client, submit(client, f"{file}::k")["id"])  # asked for all the same: a done job, its error
        assert job["status"] == "done" and job["summary"] is None, job
        assert (job["error"]["line"], job["error"]["message"]) == (error["line"], error["message"]), job
    assert "good.py::k" in {k["id"] for k in listing["kernels"]}
    done = finished(client, submit(client, "good.py::k")["id"])
    assert done["status"] == "done" and done["error"] is None, done
    assert client.get("/api/v1/health").json()["status"] == "ok"


def test_a_loop_step_that_is_not_an_int_names_the_loop_and_its_step_at_its_line(client: httpx.Client) -> None:
    done = finished(client, submit(client, "loop_step.py::rows")["id"])
    assert done["status"] == "done" and done["summary"] is None, done
    error = done["error"]
    assert error["message"] == "pypto.loop: step must be an int or a symbolic scalar, got float 0.5", error
    assert error["line"] == line_of(BAD_LOOP_STEP, "pypto.loop(0, 8, 0.5)")


def test_a_slice_that_starts_past_the_end_is_an_error_at_the_slice(client: httpx.Client) -> None:
    for kernel, statement in (("reads", "row = x[9:10, :]"), ("writes", "out[9:10, :] = pypto.exp(x)")):
        done = finished(client, submit(client, f"slices.py::{kernel}")["id"])
        assert done["status"] == "done" and done["summary"] is None, done
        error = done["error"]
        assert error["message"] == "slice 9:10 of dim 0 starts past its end (size 8)", error
        assert error["line"] == line_of(BAD_SLICES, statement)
    ok = finished(client, submit(client, "slices.py::runs_past")["id"])  # only its stop runs past the end
    assert ok["status"] == "done" and ok["error"] is None and ok["summary"]["tasks"] > 0, ok
