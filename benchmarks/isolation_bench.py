"""What isolating each job costs: edit -> record latency and memory over many edits, through a real
LSP client over stdio (the language server as an editor starts it).

Each job of the worker pool runs in a process forked from a clean template worker (its own
process group, its output captured): this script measures what a user waits for after an
edit, so the figures of two versions of the server can be compared. Run it in each checkout:

    .venv/bin/python benchmarks/isolation_bench.py [--edits 500]
    (cd /tmp/before && /work/main/.venv/bin/python benchmarks/isolation_bench.py --edits 500)

(`python -m server` is started in the checkout the script is in, so it runs that checkout's
server.) Measured, with `debounceMs: 0` and 2 workers, for two kernels:

- examples/softmax.py (softmax_kernel, 256 tasks): N edits of a comment inside the kernel
  (each recompiles and re-profiles it) — p50, p95 and mean edit -> `pypto/recordChanged`;
- a tiny kernel (one 8x8 exp): the same, where the fixed cost of a job is most of it;
- RSS of the server process after 10 edits and after N; the workers' summed PSS (their
  shared pages counted once) and their count at the end.

Measured on this machine (2 cores, shared with other work: three other processes compiling and
testing), 191c40c (before: warm long-lived workers, no isolation) against aae01ee (after: a
fresh child of a template per job, forked and warmed between jobs), alternating runs:

| `--pause-ms 200` (the editor's debounce is 300 ms: the next job's child is warm) | before | after |
|---|---|---|
| softmax, 60 edits: p50 (two runs each) | 649, 558 ms | 454, 538 ms |
| tiny kernel, 60 edits: p50 (three runs each) | 28.6, 27.3, 27.3 ms | 30.1, 27.9, 32.8 ms (+9 % mean) |
| server RSS, 10 -> 70 edits | 52.8 -> 54.7 MiB | 54.0 -> 55.1 MiB |
| forkserver + workers (+ waiting children) + tracker, PSS | 291-324 MiB | 300-355 MiB |

| `--pause-ms 0` (back to back, debounce 0: the next child is still warming up) | before | after |
|---|---|---|
| tiny kernel, 60 edits: p50 | 23.5, 24.9, 39.8 ms | 40.4, 49.8 ms |

A real kernel's edit -> record is no slower (its job's heap is fresh; its collector never walks
the template's objects). A trivial kernel pays the fixed cost of a job's process: with the
editor's debounce that is the pool's hand-off, a few ms (the fork, the warm-up's copy-on-write
faults, exit and reap all happen between jobs); back to back with no debounce, a job waits for
the child still warming up (about 40 ms of faults), +70 %. Before aae01ee (c9b54db: a child
forked when its job arrived) the tiny kernel took 44-47 ms at every pause.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from pathlib import Path

from lsp_bench import ROOT, SETTINGS, Bench, Doc, descendants, pct, rss_kb
from lsprotocol import types as lsp

TINY = '''import pypto


@pypto.jit
def tiny(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 8)
    # edit
    out[:] = pypto.exp(x)
'''


class TextDoc(Doc):
    """A document opened from a text (never written to disk)."""

    def __init__(self, bench: Bench, path: Path, text: str) -> None:
        self.bench, self.uri, self.text, self.version = bench, path.as_uri(), text, 1
        bench.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)))


def pss_kb(pid: int) -> int:
    """The process's proportional set size (shared pages divided among their sharers)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


PAUSE = 0.0  # seconds between an answer and the next edit (--pause-ms)


async def edits(bench: Bench, doc: Doc, kernel: str, needle: str, n: int, tag: str) -> list[float]:
    line = doc.line_of(needle)
    base = doc.text.split("\n")[line]
    out = []
    for i in range(n):
        if PAUSE:
            await asyncio.sleep(PAUSE)  # the user reads the answer: the time between edits, not a wait for an event
        t0 = time.perf_counter()
        v = doc.replace_line(line, f"{base} ({tag} {i})")
        r = await bench.wait(doc.uri, kernel, v)
        out.append(time.perf_counter() - t0)
        assert r["error"] is None, r["error"]
    return out


def show(label: str, xs: list[float]) -> None:
    print(f"  {label:<34} p50 {1000 * statistics.median(xs):7.1f} ms   p95 {1000 * pct(xs, 0.95):7.1f} ms   "
          f"mean {1000 * statistics.fmean(xs):7.1f} ms   (n={len(xs)})")


async def main(n: int, tiny_n: int) -> None:
    print(f"isolation_bench — pause {1000 * PAUSE:g} ms between edits — "
          f"{ROOT} — {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; settings {SETTINGS}")
    bench = Bench()
    await bench.start()
    soft = Doc(bench, ROOT / "examples" / "softmax.py")
    await bench.wait(soft.uri, "softmax_kernel", 1)
    await edits(bench, soft, "softmax_kernel", "# subtract the row maximum", 10, "warm")
    after10 = rss_kb(bench.pid)
    t0 = time.perf_counter()
    lat = await edits(bench, soft, "softmax_kernel", "# subtract the row maximum", n, "edit")
    wall = time.perf_counter() - t0
    after = rss_kb(bench.pid)
    show("softmax.py: edit -> recordChanged", lat)
    tiny = TextDoc(bench, ROOT / "benchmarks" / "_isolation_tiny.py", TINY)
    await bench.wait(tiny.uri, "tiny", 1)
    show("tiny kernel: edit -> recordChanged", await edits(bench, tiny, "tiny", "# edit", tiny_n, "edit"))
    workers = descendants(bench.pid)
    print(f"  server RSS {after10 / 1024:.1f} MiB after 10 softmax edits, {after / 1024:.1f} MiB after {n + 10} "
          f"({(after - after10) / 1024:+.1f} MiB; {n} edits in {wall:.0f} s)")
    print(f"  {len(workers)} other processes (resource tracker, forkserver, workers): PSS "
          f"{sum(pss_kb(p) for p in workers) / 1024:.0f} MiB in all, RSS "
          f"{', '.join(f'{rss_kb(p) / 1024:.0f}' for p in workers)} MiB")
    await bench.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edits", type=int, default=500)
    ap.add_argument("--tiny-edits", type=int, default=0, help="edits of the tiny kernel (default: a fifth of --edits)")
    ap.add_argument("--pause-ms", type=float, default=0.0, help="time between an answer and the next edit")
    a = ap.parse_args()
    PAUSE = a.pause_ms / 1000
    asyncio.run(main(max(10, a.edits), a.tiny_edits or max(10, a.edits // 5)))
