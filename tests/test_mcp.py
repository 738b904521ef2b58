"""`pypto-ide mcp` through the official `mcp` SDK's own client over stdio, as an agent would drive it.

The server is a real subprocess (`python -m server.cli mcp FOLDER`) with real workers: the tests run the
optimize loop on a scratch copy of examples/softmax.py (list → profile → suggest → try → apply → profile)
and hand it hostile kernels, waiting on each response (no sleeps, no timing asserts).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextResourceContents
from support import HOSTILE_KERNELS
from test_http import Server

from pypto.boards.trace import validate_chrome_trace
from server.mcp import apply_text_edits, with_tile_shapes

ROOT = Path(__file__).resolve().parents[1]
TOOLS = {"list_kernels", "compile", "profile", "swimlane_text", "health", "precision", "suggest", "try_tile_shapes",
         "apply", "compare"}
STDIO_TOOLS = TOOLS | {"capture"}  # capture runs a command line: over stdio only, never over serve's HTTP
GENEROUS = 240.0  # seconds for any one answer on a loaded 2-core machine: a hang fails, slowness does not


def session(folder: Path, body: Callable[[ClientSession], Awaitable[None]], *flags: str) -> None:
    """Start `pypto-ide mcp FOLDER`, initialize a client session, run `body` with it, close the server."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "server.cli", "mcp", str(folder), *flags],
                                   cwd=str(ROOT))

    async def main() -> None:
        with anyio.fail_after(10 * GENEROUS):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                await body(s)

    anyio.run(main)


async def call(s: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    with anyio.fail_after(GENEROUS):
        return await s.call_tool(tool, arguments)


async def ok(s: ClientSession, tool: str, **arguments: Any) -> Any:
    """A tool's answer that must not be an error: its JSON (or its text)."""
    res = await call(s, tool, **arguments)
    text = "".join(getattr(c, "text", "") for c in res.content)
    assert not res.is_error, f"{tool}: {text}"
    if res.structured_content is not None and set(res.structured_content) != {"result"}:
        return res.structured_content
    return text


async def read(s: ClientSession, uri: str) -> str:
    """A resource's text (one content, JSON)."""
    with anyio.fail_after(GENEROUS):
        res = await s.read_resource(uri)
    assert len(res.contents) == 1 and res.contents[0].mime_type == "application/json"
    content = res.contents[0]
    assert isinstance(content, TextResourceContents)
    return content.text


async def error(s: ClientSession, tool: str, **arguments: Any) -> str:
    res = await call(s, tool, **arguments)
    text = "".join(getattr(c, "text", "") for c in res.content)
    assert res.is_error, f"{tool} should have failed: {text[:500]}"
    return text


def test_optimize_loop_on_a_copy(tmp_path: Path) -> None:
    work, keep = tmp_path / "work", tmp_path / "keep"
    work.mkdir()
    keep.mkdir()
    original = (ROOT / "examples" / "softmax.py").read_bytes()
    shutil.copy(ROOT / "examples" / "softmax.py", work / "softmax.py")
    shutil.copy(ROOT / "examples" / "softmax.py", keep / "softmax.py")
    seen: dict[str, Any] = {}

    async def body(s: ClientSession) -> None:
        with anyio.fail_after(GENEROUS):
            listed = await s.list_tools()
        assert {t.name for t in listed.tools} == STDIO_TOOLS
        for t in listed.tools:
            assert t.description and t.input_schema["type"] == "object" and t.input_schema["properties"]
        try_schema = next(t for t in listed.tools if t.name == "try_tile_shapes").input_schema
        assert set(try_schema["required"]) == {"kernel", "call_line", "shapes"}

        kernels = (await ok(s, "list_kernels", path="."))["kernels"]
        assert [k["kernel"] for k in kernels] == ["softmax.py::softmax_kernel"]
        kernel = kernels[0]["kernel"]

        before = await ok(s, "profile", kernel=kernel)
        assert before["makespan_us"] > 0 and "AIV" in before["utilization_per_core_type"]
        assert before["critical_path_lines"] and all(w.startswith("softmax.py:") for w in before["critical_path_lines"])
        assert before["slowest_tasks"][0]["lines"][0].startswith("softmax.py:")

        compiled = await ok(s, "compile", kernel=kernel)
        assert [p["pass"] for p in compiled["passes"]][-1] == "execute_graph"
        assert compiled["counts"]["tasks"] == before["tasks"] and compiled["counts"]["leaves"] >= 1

        lane = await ok(s, "swimlane_text", kernel=kernel, lanes=["AIV_0"], max_tasks_per_lane=3)
        assert "AIV_0: utilization" in lane and "AIV_1:" not in lane and "softmax.py:" in lane

        suggested = await ok(s, "suggest", kernel=kernel, budget_s=5)
        best = suggested["suggestions"][0]
        assert best["id"] == "S1" and best["makespan_after_us"] < best["makespan_before_us"]
        assert best["gain_us"] > 0 and best["call_line"] is not None

        tried = await ok(s, "try_tile_shapes", kernel=kernel, call_line=best["call_line"], shapes=best["shapes"])
        assert tried["new"] == best["text"]
        assert abs(tried["makespan_us"] - best["makespan_after_us"]) <= 1e-6 * best["makespan_after_us"]
        assert (work / "softmax.py").read_bytes() == original  # tried on a copy of the text, not the file

        # compare the profile's run with the tried one: the faster is named, and why, per leaf
        assert before["run"] != tried["run"]
        cmp = await ok(s, "compare", run_a=before["run"], run_b=tried["run"])
        assert cmp["faster"] == tried["run"] and cmp["makespan_us"]["delta"] < 0
        assert cmp["run_b"]["change"] == f"line {best['call_line']}: {tried['old']} -> {tried['new']}"
        leaf = cmp["leaves"][0]
        assert leaf["lines"][0].startswith("softmax.py:") and leaf["total_us"]["delta"] != 0
        assert leaf["tasks"]["a"] == before["tasks"] and leaf["tasks"]["b"] == tried["tasks"]
        assert cmp["core_types"]["AIV"]["tasks"]["b"] == tried["tasks"] and cmp["lanes"]
        assert cmp["critical_path"]["us"]["a"] == round(before["critical_path_us"], 4)
        assert cmp["why"][0].startswith(f"{tried['run']} is faster") and "softmax.py:" in " ".join(cmp["why"])
        back = await ok(s, "compare", run_a=tried["run"], run_b=before["run"])
        assert back["faster"] == tried["run"] and back["makespan_us"]["delta"] == -cmp["makespan_us"]["delta"]
        assert "no such run" in await error(s, "compare", run_a=before["run"], run_b="R999")
        # the text trace of a kept run: the tried shapes, not the file's
        tried_lane = await ok(s, "swimlane_text", kernel=tried["run"], lanes=["AIV"], max_tasks_per_lane=1)
        assert f"makespan {tried['makespan_us']:.3f} µs" in tried_lane
        assert f"makespan {before['makespan_us']:.3f} µs" not in tried_lane

        dry = await ok(s, "apply", kernel=kernel, suggestion_id="S1")
        assert not dry["written"] and f"+    {best['text']}" in dry["diff"]
        assert (work / "softmax.py").read_bytes() == original
        done = await ok(s, "apply", kernel=kernel, suggestion_id="S1", write=True)
        assert done["written"] and done["diff"] == dry["diff"]
        assert best["text"] in (work / "softmax.py").read_text()
        # the file changed: the suggestions were made for the old text
        assert "changed since suggest" in await error(s, "apply", kernel=kernel, suggestion_id="S1")

        after = await ok(s, "profile", kernel=kernel)
        seen.update(before=before["makespan_us"], after=after["makespan_us"])

        # resources: the latest run of the kernel (the last profile, of the applied file), and a run by id
        with anyio.fail_after(GENEROUS):
            templates = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
            static = {str(r.uri) for r in (await s.list_resources()).resources}
        assert templates == {f"pypto://{by}/{part}" for by in ("kernel/{kernel}", "run/{run}")
                             for part in ("record", "trace", "health")}
        assert static == {"pypto://runs"}
        runs = json.loads(await read(s, "pypto://runs"))
        assert [r["run"] for r in runs][-3:] == [before["run"], tried["run"], after["run"]]
        assert runs[-1]["resources"]["trace"] == f"pypto://run/{after['run']}/trace"
        record = json.loads(await read(s, f"pypto://kernel/{kernel}/record"))
        assert record["source"]["kernel"] == "softmax_kernel"
        assert record["source"]["text_sha256"] == hashlib.sha256((work / "softmax.py").read_bytes()).hexdigest()
        tried_record = json.loads(await read(s, f"pypto://run/{tried['run']}/record"))
        assert tried_record["source"]["tile_configs"][0]["dims"] == best["shapes"]
        assert tried_record["source"]["text_sha256"] != hashlib.sha256(original).hexdigest()  # the tried copy
        trace = json.loads(await read(s, f"pypto://kernel/{kernel}/trace"))
        assert validate_chrome_trace(trace) == [] and trace["traceEvents"]
        health = json.loads(await read(s, f"pypto://run/{before['run']}/health"))
        assert health["findings"] and all("rule" in f for f in health["findings"])
        with anyio.fail_after(GENEROUS), pytest.raises(MCPError, match="no run kept"):
            await s.read_resource("pypto://kernel/other.py::k/record")

    session(work, body)
    assert seen["after"] < seen["before"]
    assert (keep / "softmax.py").read_bytes() == original
    assert (ROOT / "examples" / "softmax.py").read_bytes() == original


HOSTILE = {
    "raises.py": '''
        import pypto


        @pypto.jit
        def raises(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            raise ValueError("no kernel today")
        ''',
    "spins.py": '''
        import pypto


        @pypto.jit
        def spins(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            while True:
                pass
        ''',
    "module.py": '''
        import pypto

        1 / 0
        ''',
    "good.py": '''
        import pypto


        @pypto.jit
        def good(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = pypto.exp(x) + x
        ''',
}


def test_hostile_kernels_are_tool_errors_at_their_line(tmp_path: Path) -> None:
    for name, text in HOSTILE.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))

    async def body(s: ClientSession) -> None:
        raised = await error(s, "profile", kernel="raises.py::raises")
        assert f"{tmp_path / 'raises.py'}:7:" in raised and "no kernel today" in raised
        assert (await ok(s, "profile", kernel="good.py"))["makespan_us"] > 0  # the server lives

        spun = await error(s, "profile", kernel="spins.py::spins")
        assert f"{tmp_path / 'spins.py'}:4:" in spun and "timeout" in spun  # the kernel's @pypto.jit line
        assert (await ok(s, "compile", kernel="good.py::good"))["counts"]["tasks"] >= 1

        module = await error(s, "list_kernels", path="module.py")
        assert f"{tmp_path / 'module.py'}:3:" in module and "ZeroDivisionError" in module
        assert "no such file" in await error(s, "list_kernels", path="absent")
        assert "not a Python file" in await error(s, "profile", kernel="absent.py::k")
        no_call = await error(s, "try_tile_shapes", kernel="good.py::good", call_line=5, shapes=[8, 16])
        assert f"{tmp_path / 'good.py'}:5: no set_vec_tile_shapes" in no_call
        illegal = await error(s, "try_tile_shapes", kernel="good.py::good", call_line=6, shapes=[8, 0])
        assert f"{tmp_path / 'good.py'}:6:" in illegal and "> 0" in illegal
        assert (tmp_path / "good.py").read_text() == textwrap.dedent(HOSTILE["good.py"]).lstrip("\n")
        assert "call suggest first" in await error(s, "apply", kernel="good.py::good", suggestion_id="S1")
        assert (await ok(s, "list_kernels", path="."))["kernels"]  # and still answers

    session(tmp_path, body, "--time-limit", "3")


# The other servers' hostile corpus (tests/support.py: the worker pool's, the language server's and serve's
# isolation tests), replayed through every MCP tool that runs a kernel: (kernel, its line, what the error says).
# A kernel that never answers is reported at its first line (the decorator), one that fails at the line of its
# mistake (missing inputs: its def).
HOSTILE_CASES = [("hang", "@pypto.jit\ndef hang(", "timeout: no result after 3 s"),
                 ("die", "@pypto.jit\ndef die(", "crashed"), ("hog", "@pypto.jit\ndef hog(", "memory"),
                 ("bad_tile", "pypto.set_vec_tile_shapes(8)", "[tile.shape]"),
                 ("no_inputs", "def no_inputs(", "cannot make example inputs")]
KERNEL_TOOLS = ("profile", "compile", "swimlane_text", "health", "suggest")


@pytest.mark.parametrize(("kernel", "at", "says"), HOSTILE_CASES, ids=[c[0] for c in HOSTILE_CASES])
def test_the_other_servers_hostile_kernels_through_every_tool(tmp_path: Path, kernel: str, at: str,
                                                              says: str) -> None:
    (tmp_path / "hostile.py").write_text(HOSTILE_KERNELS)
    line = HOSTILE_KERNELS[:HOSTILE_KERNELS.index(at)].count("\n") + 1
    where = f"{tmp_path / 'hostile.py'}:{line}: "

    async def body(s: ClientSession) -> None:
        good = await ok(s, "profile", kernel="hostile.py::good")
        for tool in KERNEL_TOOLS:
            extra: dict[str, Any] = {"budget_s": 1} if tool == "suggest" else {}
            text = await error(s, tool, kernel=f"hostile.py::{kernel}", **extra)
            assert where in text and says in text, (tool, text)
            again = await ok(s, "profile", kernel="hostile.py::good")  # the server (and a worker) answers next
            assert again["makespan_us"] == good["makespan_us"]
        # nothing was kept of the failed runs: no resource, no run to compare
        with anyio.fail_after(GENEROUS), pytest.raises(MCPError, match="no run kept"):
            await s.read_resource(f"pypto://kernel/hostile.py::{kernel}/record")
        runs = json.loads(await read(s, "pypto://runs"))
        assert {r["kernel"] for r in runs} == {f"{tmp_path / 'hostile.py'}::good"}
        assert len(runs) == 1 + len(KERNEL_TOOLS)

    session(tmp_path, body, "--time-limit", "3", "--memory-limit-mb", "400")


ERRORS_DIR = ROOT / "tests" / "errors"
MARKER = re.compile(r"#\s*ERROR:")


def test_the_bad_kernel_corpus_through_profile(tmp_path: Path) -> None:
    """tests/errors/ (one user mistake per file, marked `# ERROR:`), profiled through MCP in one server (a
    server per file would cost ~5 s each): each is a tool error at the marked line, or at the kernel's def
    when its annotations give no example inputs (most mistakes made at call time), or a result when the
    mistake is only in how `trigger()` calls it; the server answers each next call, and a good kernel at
    the end. Plus the files serve's path tests use that are no kernel: a symlink loop, a folder named
    x.py, bytes that are not UTF-8."""
    corpus = sorted(p for p in ERRORS_DIR.glob("*.py") if not p.name.startswith("_"))
    assert len(corpus) > 40
    for p in corpus:
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "good.py").write_text(textwrap.dedent(HOSTILE["good.py"]).lstrip("\n"))
    (tmp_path / "zz_loop.py").symlink_to(tmp_path / "zz_loop.py")
    (tmp_path / "zz_folder.py").mkdir()
    (tmp_path / "zz_binary.py").write_bytes(b"import pypto\n\xff\xfe\x00")
    outcomes: dict[str, str] = {}

    async def body(s: ClientSession) -> None:
        for p in corpus:
            src = p.read_text().splitlines()
            marked = next(i for i, t in enumerate(src, 1) if MARKER.search(t))
            trigger = next(i for i, t in enumerate(src, 1) if t.startswith("def trigger"))
            res = await call(s, "profile", kernel=p.name)
            text = "".join(getattr(c, "text", "") for c in res.content)
            if not res.is_error:
                assert json.loads(text)["makespan_us"] > 0
                assert marked > trigger, p.name  # a mistake in how trigger() calls it, which MCP does not
                outcomes[p.name] = "result"
                continue
            at = re.search(rf"{re.escape(str(tmp_path / p.name))}:(\d+): ", text)
            if at is None:  # no kernel found (it is made by a call, or names an option that fails to import)
                assert f"{tmp_path / p.name}: " in text and "kernels" in text, text
                outcomes[p.name] = "no kernel"
            elif "cannot make example inputs" in text:
                outcomes[p.name] = "no inputs"
            else:
                assert int(at[1]) == marked, (p.name, marked, text)
                outcomes[p.name] = "error at the marked line"
        for name, says in (("zz_loop.py", "Symlink loop"), ("zz_folder.py", "not a Python file"),
                           ("zz_binary.py", "cannot read")):
            assert says in await error(s, "profile", kernel=name)
        listed = await ok(s, "list_kernels", path=".")
        assert "good.py::good" in {k["kernel"] for k in listed["kernels"]}
        assert any("zz_folder.py" in e for e in listed["errors"]) and any("zz_binary.py" in e for e in listed["errors"])
        assert (await ok(s, "profile", kernel="good.py"))["makespan_us"] > 0

    session(tmp_path, body, "--time-limit", "30")
    assert set(outcomes) == {p.name for p in corpus}
    assert sum(o == "error at the marked line" for o in outcomes.values()) >= 25, outcomes


def test_streamable_http_behind_serves_token(tmp_path: Path) -> None:
    """`pypto-ide serve` (a real uvicorn) mounts the tools at /mcp behind its token; the SDK's streamable-HTTP
    client drives them; a request without the token is refused; paths outside the workspace are refused."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "good.py").write_text(textwrap.dedent(HOSTILE["good.py"]).lstrip("\n"))
    (tmp_path / "outside.py").write_text(textwrap.dedent(HOSTILE["good.py"]).lstrip("\n"))
    token = "mcp-test-token"
    srv = Server([str(ws), "--port", "0", "--token", token, "--no-watch", "--workers", "1"])
    seen: dict[str, Any] = {}
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "0"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        refused = httpx.post(f"{srv.url}/mcp", json=initialize, headers=accept, timeout=GENEROUS)
        assert refused.status_code == 401
        wrong = httpx.post(f"{srv.url}/mcp", json=initialize, timeout=GENEROUS,
                           headers={**accept, "Authorization": "Bearer not-it"})
        assert wrong.status_code == 401

        async def main() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                          timeout=httpx2.Timeout(GENEROUS)) as http, \
                    streamable_http_client(f"{srv.url}/mcp", http_client=http) as (read_s, write_s), \
                    ClientSession(read_s, write_s) as s:
                with anyio.fail_after(GENEROUS):
                    await s.initialize()
                    listed = await s.list_tools()
                assert {t.name for t in listed.tools} == TOOLS
                profiled = await ok(s, "profile", kernel="good.py")
                seen["profile"] = profiled
                assert "outside the served folder" in await error(s, "profile", kernel="../outside.py::good")
                assert "outside the served folder" in await error(s, "profile", kernel=str(tmp_path / "outside.py"))
                record = json.loads(await read(s, "pypto://kernel/good.py::good/record"))
                assert record["source"]["kernel"] == "good"

        anyio.run(main)
        # the rest of serve answers as before, with the same token
        health = httpx.get(f"{srv.url}/api/v1/health", headers={"Authorization": f"Bearer {token}"}, timeout=GENEROUS)
        assert health.status_code == 200 and health.json()["status"] == "ok"
    finally:
        srv.stop()
    assert seen["profile"]["makespan_us"] > 0 and seen["profile"]["run"] == "R1"
    assert (tmp_path / "outside.py").read_text() == textwrap.dedent(HOSTILE["good.py"]).lstrip("\n")


def test_with_tile_shapes_and_edits() -> None:
    text = "import pypto\n\ndef k():\n    pypto.set_cube_tile_shapes([16, 16],\n        [64, 64], [32, 32], " \
           "enable_split_k=True)  # tiles\n"
    new, old, call = with_tile_shapes(text, 4, [[32, 32], [128, 128], [64, 64]])
    assert old.startswith("pypto.set_cube_tile_shapes([16, 16],") and old.endswith("enable_split_k=True)")
    assert call == "pypto.set_cube_tile_shapes([32, 32], [128, 128], [64, 64], enable_split_k=True)"
    assert new.splitlines()[3] == f"    {call}  # tiles" and len(new.splitlines()) == 4
    edit = {"where": {"line": 4, "col": 4, "end_line": 4, "end_col": 9}, "text": "PYPTO"}
    assert apply_text_edits(text, [edit]).splitlines()[3].startswith("    PYPTO.set_cube")


PRECISION = '''import pypto


@pypto.jit
def acc16(x: pypto.Tensor([8, 4096], pypto.DT_FP16), out: pypto.Tensor([8, 1], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(8, 256)
    for i in pypto.loop(0, 4096, 16):
        part = pypto.sum(pypto.view(x, [8, 16], [0, i]), dim=-1, keepdim=True)
        out[:] = out + part  # ACCUMULATE


@pypto.jit
def exact(x: pypto.Tensor([16, 256], pypto.DT_FP32), out: pypto.Tensor([16, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = x * 3.0 + 1.0
'''


def test_precision_names_the_first_failing_op_at_its_line(tmp_path: Path) -> None:
    """fp16 accumulation fails its tolerance at the accumulating line; an fp32 affine map passes."""
    path = tmp_path / "acc.py"
    path.write_text(PRECISION)
    line = PRECISION.split("\n").index(next(t for t in PRECISION.split("\n") if "ACCUMULATE" in t)) + 1

    async def body(s: ClientSession) -> None:
        bad = await ok(s, "precision", kernel=f"{path}::acc16")
        assert bad["passed"] is False and bad["tolerance"]
        assert bad["first_failing_op"]["where"]["line"] == line and bad["first_failing_op"]["op"] == "add"
        good = await ok(s, "precision", kernel=f"{path}::exact")
        assert good["passed"] is True and good["first_failing_op"] is None

    session(tmp_path, body)


TAIL = """import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
"""


def test_health_checks_the_findings_shapes_within_its_seconds_and_says_how_long_a_longer_check_takes(
        tmp_path: Path) -> None:
    """health's `seconds` bounds the board's check of the findings' tile shapes: at 0 nothing is simulated, so no
    shape is offered and the finding says about how long checking it takes (`check_seconds`); called again with
    that much, the shape the board found faster is offered with its gain and edit."""
    path = tmp_path / "tail.py"
    path.write_text(TAIL)

    async def body(s: ClientSession) -> None:
        spent = await ok(s, "health", kernel=f"{path}::tail_vec", seconds=0)
        (f,) = [f for f in spent["findings"] if f["rule"] == "tile.tail-waste"]
        assert "check_seconds" in f and "gain" not in f and "edits" not in f
        assert "stopped at its time bound (0 s)" in f["fix"]
        longer = await ok(s, "health", kernel=f"{path}::tail_vec", seconds=10 + 2 * f["check_seconds"])
        (g,) = [g for g in longer["findings"] if g["rule"] == "tile.tail-waste"]
        assert "check_seconds" not in g and g["gain"]["speedup"] > 1
        assert g["edits"][0]["text"] == "pypto.set_vec_tile_shapes(16, 200)"

    session(tmp_path, body)


def test_compile_takes_pypto_options(tmp_path: Path) -> None:
    """compile's options are a `pypto.options` scope: a default vec tile shape changes the tile count of a
    kernel that sets none; an unknown key is a tool error naming it."""
    path = tmp_path / "plain.py"
    path.write_text(textwrap.dedent('''
        import pypto


        @pypto.jit
        def plain(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
            out[:] = pypto.exp(x) + x
        '''))

    async def body(s: ClientSession) -> None:
        kernel = f"{path}::plain"
        small = await ok(s, "compile", kernel=kernel, options={"vec_tile_shapes": [16, 64]})
        large = await ok(s, "compile", kernel=kernel, options={"vec_tile_shapes": [64, 256]})
        assert small["counts"]["tile_ops"] == 16 * large["counts"]["tile_ops"]
        assert "no_such_group" in await error(s, "compile", kernel=kernel, options={"no_such_group": {}})

    session(tmp_path, body)


def test_a_call_whose_kernel_traces_as_before_reuses_the_earlier_answer(tmp_path: Path) -> None:
    """profile after an edit the kernel does not read (a comment) answers with the earlier run, `reused`; a tile
    edit compiles anew, and trying the same shapes again is the same program again."""
    path = tmp_path / "softmax.py"
    text = (ROOT / "examples" / "softmax.py").read_text()
    path.write_text(text)
    line = next(i for i, t in enumerate(text.split("\n"), 1) if "set_vec_tile_shapes" in t)

    async def body(s: ClientSession) -> None:
        kernel = f"{path}::softmax_kernel"
        first = await ok(s, "profile", kernel=kernel)
        assert "reused" not in first
        path.write_text(text.replace("pypto.set_vec_tile_shapes(1, 4, 1, 64)",
                                     "pypto.set_vec_tile_shapes(1, 4, 1, 64)  # a comment"))
        again = await ok(s, "profile", kernel=kernel)
        assert again["reused"] is True and again["run"] != first["run"]
        assert {k: v for k, v in again.items() if k not in ("run", "reused")} == \
            {k: v for k, v in first.items() if k != "run"}
        changed = await ok(s, "try_tile_shapes", kernel=kernel, call_line=line, shapes=[1, 2, 1, 64])
        assert "reused" not in changed and changed["tasks"] != first["tasks"]
        tried = await ok(s, "try_tile_shapes", kernel=kernel, call_line=line, shapes=[1, 2, 1, 64])
        assert tried["reused"] is True and tried["makespan_us"] == changed["makespan_us"]
        # a compile with other arguments is another answer: not reused
        assert "reused" not in await ok(s, "profile", kernel=kernel, top=2)

    session(tmp_path, body)


CAPTURED_KERNEL = """
import pypto


@pypto.frontend.jit
def scaled(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * 3.0
"""

CAPTURED_TESTS = """
import pytest
import torch

from kern import scaled


@pytest.mark.skip(reason="large test case")
def test_big():
    scaled(torch.ones(16, 64), torch.zeros(16, 64))
"""


def test_capture_records_a_kernels_inputs_from_the_users_test_and_profile_then_uses_them(tmp_path: Path) -> None:
    """An agent's door to `pypto-ide capture`: a kernel with dynamic shapes has no inputs until its test runs;
    the test is skip-marked, so a first capture says so and run_skipped runs it; profile then compiles it."""
    (tmp_path / "kern.py").write_text(CAPTURED_KERNEL.lstrip("\n"))
    (tmp_path / "test_kern.py").write_text(CAPTURED_TESTS.lstrip("\n"))
    seen: dict[str, Any] = {}

    async def body(s: ClientSession) -> None:
        assert "capture them from your own test" in await error(s, "profile", kernel="kern.py::scaled")
        first = await ok(s, "capture", command="python -m pytest -q -p no:cacheprovider test_kern.py")
        assert first["ok"] is False and "nothing captured" in first["error"] and first["captures"] == []
        assert first["skipped"] == [{"test": "test_kern.py::test_big", "reason": "large test case", "marked": True,
                                     "lifted": False}]
        again = await ok(s, "capture", command="python -m pytest -q -p no:cacheprovider test_kern.py",
                         run_skipped=True)
        assert again["ok"] is True, again
        assert [(c["kernel"], c["line"]) for c in again["captures"]] == [("kern.py::scaled", 5)]
        seen["profile"] = await ok(s, "profile", kernel="kern.py::scaled")
        assert "no such folder" in await error(s, "capture", command="python x.py", cwd="nowhere")

    session(tmp_path, body)
    assert seen["profile"]["makespan_us"] > 0
    assert (tmp_path / ".pypto" / "captures").is_dir()
