"""Language-server latency and memory, through a real LSP client over stdio.

Starts `python -m server` the way an editor does (pygls's LanguageClient, stdio), opens an
example (the text only: the file on disk is never written) and measures:

- startup: process start -> `initialize` answered, then -> "workers ready" (every worker
  started and warm); softmax.py is opened after that, so its "first record after open" is
  the first answer on a server that has initialized (issue 19: < 1 s);
- edit -> `pypto/recordChanged` latency (p50, p95 over N edits), the edit being a change
  of a comment inside the kernel (the kernel's text changes, so it is recompiled and
  re-profiled on the sim board: compile + simulation + health + the editor view + IPC),
  for examples/softmax.py at its default shapes (256 tasks, 8,704 tile ops) and
  examples/attention.py; measured with `debounceMs: 0` — an editor's default debounce
  (300 ms) adds itself on top of these figures;
- the same with edits to the tile-shape call (each a different tiling);
- hover and pypto/nodesAt latency (p50, p95 over 200 requests on op lines);
- the server process's RSS after 10 edits and after 500 (the workers' RSS beside it).

Targets (the issue): edit -> record p50 < 300 ms for softmax; hover / nodesAt p95 < 50 ms;
server RSS bounded (no growth with the number of edits beyond noise). Every figure is
wall-clock, measured on this machine.

Run: `.venv/bin/python benchmarks/lsp_bench.py [--edits 30] [--rss-edits 500]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"debounceMs": 0, "workers": 2}


def plain(v: Any) -> Any:
    if isinstance(v, tuple) and hasattr(v, "_asdict"):
        return {k: plain(x) for k, x in v._asdict().items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """The process's children, their children, … (the forkserver's workers are its children)."""
    out = []
    for c in children(pid):
        out += [c, *descendants(c)]
    return out


def children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(p.name))
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


class Bench:
    def __init__(self) -> None:
        self.client = LanguageClient("lsp-bench", "1")
        self.records: list[dict[str, Any]] = []
        self.waiters: list[tuple[Any, asyncio.Future[dict[str, Any]]]] = []
        c = self.client

        @c.feature("pypto/recordChanged")
        def on_record(params: Any) -> None:
            r = plain(params)
            self.records.append(r)
            for pred, fut in list(self.waiters):
                if not fut.done() and pred(r):
                    fut.set_result(r)
                    self.waiters.remove((pred, fut))

        self.pulled = asyncio.Event()

        @c.feature(lsp.WORKSPACE_CONFIGURATION)
        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            self.pulled.set()
            return [dict(SETTINGS) for _ in params.items]

        @c.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: Any) -> None:
            pass

        self.workers_ready = asyncio.Event()

        @c.feature(lsp.WINDOW_LOG_MESSAGE)
        def log_message(params: Any) -> None:
            if "workers ready" in str(getattr(params, "message", "")):
                self.workers_ready.set()

        @c.feature("pypto/compileState")
        def compile_state(params: Any) -> None:
            pass

    async def wait(self, uri: str, kernel: str, version: int, after: int = 0) -> dict[str, Any]:
        """The first recordChanged of `kernel` at `version` or later (among those after the `after`-th)."""
        def pred(r: dict[str, Any]) -> bool:
            return r["uri"] == uri and r["kernel"] == kernel and r["version"] >= version
        for r in self.records[after:]:
            if pred(r):
                return r
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiters.append((pred, fut))
        return await asyncio.wait_for(fut, 300)

    async def start(self) -> float:
        t0 = time.perf_counter()
        await self.client.start_io(sys.executable, "-m", "server", cwd=str(ROOT))
        caps = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(configuration=True))
        await self.client.initialize_async(lsp.InitializeParams(capabilities=caps, initialization_options=SETTINGS,
                                                                process_id=os.getpid()))
        seconds = time.perf_counter() - t0
        self.client.initialized(lsp.InitializedParams())
        return seconds

    @property
    def pid(self) -> int:
        assert self.client._server is not None
        return self.client._server.pid

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


class Doc:
    def __init__(self, bench: Bench, path: Path) -> None:
        self.bench, self.uri, self.text, self.version = bench, path.as_uri(), path.read_text(), 1
        bench.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=self.text)))

    def replace_line(self, line: int, new: str) -> int:
        lines = self.text.split("\n")
        old = lines[line]
        lines[line] = new
        self.text = "\n".join(lines)
        self.version += 1
        self.bench.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(old))), text=new)]))
        return self.version

    def line_of(self, needle: str) -> int:
        return next(i for i, t in enumerate(self.text.split("\n")) if needle in t)


async def edit_latencies(bench: Bench, doc: Doc, kernel: str, line: int, texts: list[str]) -> list[float]:
    out = []
    for text in texts:
        t0 = time.perf_counter()
        v = doc.replace_line(line, text)
        r = await bench.wait(doc.uri, kernel, v)
        out.append(time.perf_counter() - t0)
        assert r["error"] is None, r["error"]
    return out


def report(label: str, xs: list[float]) -> None:
    print(f"  {label:<46} p50 {1000 * statistics.median(xs):7.1f} ms   p95 {1000 * pct(xs, 0.95):7.1f} ms"
          f"   (n={len(xs)}, min {1000 * min(xs):.1f}, max {1000 * max(xs):.1f})")


async def example(bench: Bench, name: str, kernel: str, comment: str, tile_call: str, tiles: list[str],
                  edits: int) -> Doc:
    doc = Doc(bench, ROOT / "examples" / name)
    t0 = time.perf_counter()
    first = await bench.wait(doc.uri, kernel, 1)
    s = first["summary"]
    print(f"\n{name} ({kernel}): {s['tasks']} tasks, {s['tileOps']:,} tile ops, {s['makespanUs']:.2f} µs "
          f"{s['clock']}; first record after open {1000 * (time.perf_counter() - t0):.0f} ms")
    line = doc.line_of(comment)
    base = doc.text.split("\n")[line]
    report("edit a comment in the kernel -> recordChanged", await edit_latencies(
        bench, doc, kernel, line, [f"{base} (edit {i})" for i in range(edits)]))
    tline = doc.line_of(tile_call)
    original = doc.text.split("\n")[tline]
    indent = original[:len(original) - len(original.lstrip())]
    report("edit the tile shapes -> recordChanged", await edit_latencies(
        bench, doc, kernel, tline, [indent + tiles[i % len(tiles)] for i in range(edits)]))
    if doc.text.split("\n")[tline] != original:  # back to the example's tiling
        doc.replace_line(tline, original)
        await bench.wait(doc.uri, kernel, doc.version)
    return doc


async def configure(bench: Bench, changes: dict[str, Any], doc: Doc) -> None:
    """New settings through workspace/didChangeConfiguration (the server pulls them back); then a
    round trip. (The debounce is not part of the kernels' keys: nothing recompiles.)"""
    SETTINGS.update(changes)
    bench.pulled.clear()
    bench.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await asyncio.wait_for(bench.pulled.wait(), 30)
    await bench.client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(doc.uri),
                                                                 lsp.Position(0, 0)))


async def lookups(bench: Bench, doc: Doc, lines: list[int], n: int = 200) -> None:
    hovers, nodes = [], []
    for i in range(n):
        line = lines[i % len(lines)]
        t0 = time.perf_counter()
        h = await bench.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(doc.uri), lsp.Position(line, 8)))
        hovers.append(time.perf_counter() - t0)
        assert h is not None
        t0 = time.perf_counter()
        await bench.client.protocol.send_request_async("pypto/nodesAt", {
            "uri": doc.uri, "position": {"line": line, "character": 8}})
        nodes.append(time.perf_counter() - t0)
    report("hover on an op line", hovers)
    report("pypto/nodesAt", nodes)


async def main(edits: int, rss_edits: int) -> None:
    print(f"lsp_bench — measured on this machine: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; wall-clock, real LSP client over stdio")
    bench = Bench()
    startup = await bench.start()
    print(f"startup: `python -m server` -> initialize answered in {1000 * startup:.0f} ms")
    t0 = time.perf_counter()
    await asyncio.wait_for(bench.workers_ready.wait(), 120)
    print(f"  initialize answered -> 'workers ready' logged (every worker warm) in "
          f"{1000 * (time.perf_counter() - t0):.0f} ms")
    soft = await example(bench, "softmax.py", "softmax_kernel", "# subtract the row maximum",
                         "set_vec_tile_shapes(1, 4, 1, 64)",
                         ["pypto.set_vec_tile_shapes(1, 8, 1, 64)", "pypto.set_vec_tile_shapes(1, 4, 1, 128)",
                          "pypto.set_vec_tile_shapes(1, 4, 1, 64)"], edits)
    print("  lookups on softmax.py (record of 256 tasks):")
    await lookups(bench, soft, [soft.line_of(x) for x in ("pypto.amax", "pypto.exp(v - m)", "out[i:, ...]")])
    att = await example(bench, "attention.py", "attention_kernel", "# a numerically safe softmax",
                        "set_vec_tile_shapes(1, 32, S)",
                        ["pypto.set_vec_tile_shapes(1, 64, S)", "pypto.set_vec_tile_shapes(1, 16, S)",
                         "pypto.set_vec_tile_shapes(1, 32, S)"], edits)
    print("  lookups on attention.py:")
    await lookups(bench, att, [att.line_of(x) for x in ("scores = pypto.matmul", "e = pypto.exp", "p = e /")])

    # the same edits with an editor's default debounce: what a user waits after the last keystroke
    await configure(bench, {"debounceMs": 300}, soft)
    line = soft.line_of("# subtract the row maximum")
    base = soft.text.split("\n")[line]
    print("\nwith debounceMs 300 (the default):")
    report("softmax.py: edit -> recordChanged", await edit_latencies(
        bench, soft, "softmax_kernel", line, [f"{base} (debounced {i})" for i in range(10)]))
    await configure(bench, {"debounceMs": 0}, soft)

    # memory: the server's RSS after 10 and after `rss_edits` edits (each compiled, as when typing slowly)
    await edit_latencies(bench, soft, "softmax_kernel", line, [f"{base} (rss {i})" for i in range(10)])
    after10 = rss_kb(bench.pid)
    t0 = time.perf_counter()
    lat = await edit_latencies(bench, soft, "softmax_kernel", line,
                               [f"{base} (rss {i})" for i in range(10, rss_edits)])
    after = rss_kb(bench.pid)
    workers = {p: rss_kb(p) for p in descendants(bench.pid)}
    print(f"\nserver RSS: {after10 / 1024:.1f} MiB after 10 edits, {after / 1024:.1f} MiB after {rss_edits} "
          f"({(after - after10) / 1024:+.1f} MiB; {rss_edits - 10} edits in {time.perf_counter() - t0:.0f} s, "
          f"p50 {1000 * statistics.median(lat):.0f} ms)")
    print(f"other processes (resource tracker, forkserver, workers; shared pages counted in each): "
          f"{', '.join(f'{v / 1024:.0f}' for v in workers.values())} MiB")
    await bench.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--rss-edits", type=int, default=500)
    a = ap.parse_args()
    asyncio.run(main(a.edits, max(11, a.rss_edits)))
