"""`pypto-ide`: the command line. For now one verb, `examples`, the README's main job.

`pypto-ide examples [DIR]` imports every example in DIR (default: the repository's
`examples/`), runs its `check()` (compile, run on the CPU, compare with torch) and prints,
per example, the kernels it compiled (graph size, loops, tile shapes) and every comparison.
An example that raises is reported with its error and the run goes on; the exit code is
non-zero if anything failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

from pypto.errors import PyptoError
from pypto.frontend.jit import JitKernel
from pypto.ir.graph import Graph
from pypto.testing import Check

REPO = Path(__file__).resolve().parent.parent


def load_module(path: Path, prefix: str = "pypto_example_") -> ModuleType:
    """Import a user file by path (registered in sys.modules, as dataclasses and pickle need)."""
    name = f"{prefix}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _graph_summary(g: Graph) -> str:
    nodes = list(g.walk())
    loops = sum(1 for n in nodes if n.op == "loop")
    ops = sum(1 for n in nodes if n.op not in ("param", "carry", "loop_out", "assume", "loop"))
    tiles = ", ".join(f"{t.kind}{list(t.dims) if t.kind == 'vec' else [list(d) for d in t.dims[:3]]}"
                      for t in g.tile_configs)
    return f"{ops} ops, {loops} loop{'s' if loops != 1 else ''}, tiles: {tiles or 'none'}"


def run_examples(directory: Path) -> int:
    files = sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))
    if not files:
        print(f"no examples in {directory}")
        return 1
    failed = 0
    total_checks = 0
    for path in files:
        print(f"\n== {path.relative_to(directory.parent) if directory.parent in path.parents else path}")
        t0 = time.perf_counter()
        try:
            mod = load_module(path)
            doc = (mod.__doc__ or "").strip().splitlines()
            if doc:
                print(f"   {doc[0]}")
            checks: list[Check] = list(mod.check())
        except PyptoError as e:
            print(f"   ERROR {e}")
            failed += 1
            continue
        except Exception:  # noqa: BLE001 - report and go on with the other examples
            print("   ERROR (not a PyptoError: a bug in pypto or the example)")
            print("   " + traceback.format_exc().replace("\n", "\n   "))
            failed += 1
            continue
        dt = time.perf_counter() - t0
        for name in sorted(vars(mod)):
            k = getattr(mod, name)
            if isinstance(k, JitKernel):
                for ck in k.cache.values():
                    print(f"   kernel {ck.name}: {_graph_summary(ck.graph)}  (compiled {k.compile_count}x)")
        for c in checks:
            print(f"   {c}")
        bad = sum(1 for c in checks if not c.ok)
        total_checks += len(checks)
        failed += bad
        print(f"   {len(checks) - bad}/{len(checks)} match torch  [{dt * 1000:.0f} ms, values computed on this CPU]")
    print(f"\n{total_checks - failed} passed, {failed} failed  ({len(files)} examples)")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pypto-ide", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("examples", help="compile and run the examples, compare each with torch")
    ex.add_argument("directory", nargs="?", default=str(REPO / "examples"))
    args = parser.parse_args(argv)
    if args.cmd == "examples":
        return run_examples(Path(args.directory).resolve())
    return 2


if __name__ == "__main__":
    sys.exit(main())
