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

Measured on this machine (2 cores, shared with other work: load 1.4-3.7), before (191c40c: warm
long-lived workers) and after (c9b54db: a fresh child of a template per job), alternating:

| | before | after |
|---|---|---|
| softmax, 500 edits: p50 / p95 / mean | 567 / 923 / 602 ms | 452 / 640 / 472 ms |
| softmax, 2 x 100 edits: p50 | 496, 508 ms | 483, 458 ms |
| tiny kernel: p50 | 22, 23, 25 ms | 47, 45, 44 ms |
| server RSS, 10 -> 510 edits | 54.0 -> 56.7 MiB | 52.7 -> 54.9 MiB |
| workers' RSS at the end | 158, 198 MiB (grows) | 169, 169 MiB (templates; constant) |
| forkserver + workers + tracker, PSS | 266-291 MiB | 298-330 MiB |

A real kernel's edit -> record is no slower (its job's heap is fresh, its collector never walks
the template's objects); a trivial kernel pays the fixed cost of a job's process, about 20 ms
(fork 6 ms, exit and reap 7 ms, the rest copy-on-write faults).
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
