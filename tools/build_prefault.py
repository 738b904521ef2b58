"""Build the worker's memory prefault (`server/prefault.c`: `server.prefault`): `python tools/build_prefault.py`.

A C extension of one file, compiled by setuptools' `build_ext` (the compiler and flags this Python was built
with) into `build/prefault/`, so nothing is written next to the sources. `make setup` runs it, and again when the
C file changes. A machine without a C compiler gets a warning and no build: the worker's jobs then run without
the prefault, as they did before it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "server" / "prefault.c"
OUT = ROOT / "build" / "prefault"


def build(out: Path = OUT) -> int:
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="pypto-prefault-") as tmp:
        dist = Distribution({"name": "pypto-prefault", "ext_modules": [
            Extension("_prefault", [str(SOURCE)], extra_compile_args=["-O2"])]})
        cmd = build_ext(dist)
        cmd.build_lib, cmd.build_temp = str(out), tmp
        cmd.ensure_finalized()
        try:
            cmd.run()
        except Exception as e:  # noqa: BLE001 - no compiler, no headers: said, and the jobs run without it
            (out / "failed.txt").write_text(f"{type(e).__name__}: {e}\n")
            print(f"build_prefault: not built ({type(e).__name__}: {e}); the worker's jobs run without it",
                  file=sys.stderr)
            return 0
    print(f"build_prefault: {', '.join(p.name for p in out.glob('_prefault*'))} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(build())
