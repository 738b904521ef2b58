"""Health advice against the board: how many tile shapes the health rules propose are faster.

Health rules reason from rules of thumb; `pypto.analysis.advice.verify_advice` simulates every
shape a finding proposes ("Try: …") and offers it only when the sim board finds it faster. For
every kernel of `examples/` and the realistic kernels of `advisor_bench.py` this prints the
shapes proposed, how many of them the board found faster (the rules' own hit rate, before
verification), how many findings still name a shape after it, and how many of those carry its
edit (Apply / quick fix) and a shape the board found faster (the agreement: target 100 %).
Makespans are SIMULATED (sim board, a2a3 model).

Run: `.venv/bin/python benchmarks/advice_bench.py` (or `make bench`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pypto.analysis.report import make_report
from pypto.cli import load_module
from pypto.frontend.jit import JitKernel

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from advisor_bench import realistic  # noqa: E402


def kernels() -> list[tuple[str, Any, dict[str, Any] | None]]:
    out: list[tuple[str, Any, dict[str, Any] | None]] = []
    for path in sorted((REPO / "examples").glob("*.py")):
        mod = load_module(path)
        out += [(f"{path.name}::{k.name}", k, None) for k in vars(mod).values() if isinstance(k, JitKernel)]
    out += [(name, kernel, inputs) for name, kernel, inputs in realistic()]
    return out


def main() -> None:
    print("health advice against the sim board (makespans SIMULATED, a2a3 model)\n")
    print(f"{'kernel':<52} {'proposed':>8} {'faster':>7} {'offered':>8} {'agree':>6}")
    proposed = faster = offered = agree = 0
    for name, kernel, inputs in kernels():
        rep = make_report(kernel, inputs=inputs)
        if rep.health is None:
            print(f"{name:<52} {'error: ' + (rep.error or '')[:60]}")
            continue
        p = f_ = o = a = 0
        for f in rep.health.findings:
            tries = f.numbers.get("try", ())
            p += len(tries)
            f_ += sum(1 for t in tries if t.get("faster"))
            if tries and "no tile shape is offered" not in f.suggestion:  # "Try:" still names a shape
                o += 1
                before = float(f.numbers.get("makespan_us") or 0.0)
                a += bool(f.edits) and any(t.get("faster") and (t.get("makespan_us") or before) < before
                                           for t in tries)
        proposed, faster, offered, agree = proposed + p, faster + f_, offered + o, agree + a
        print(f"{name:<52} {p:>8} {f_:>7} {o:>8} {a:>6}")
    hit = f"{faster / proposed:.0%}" if proposed else "n/a"
    share = f"{agree / offered:.0%}" if offered else "n/a (nothing offered)"
    print(f"\n{proposed} shapes proposed by the rules, {faster} faster on the board ({hit}); "
          f"{offered} offered after verification, {agree} of them faster: agreement {share}")


if __name__ == "__main__":
    main()
