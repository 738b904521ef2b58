"""Build the compiler's hot modules as native code (`pypto.native`): `python tools/build_native.py`.

mypyc compiles `pypto.native.MODULES` (typed Python) to C extensions in a scratch copy of the package,
so nothing is written next to the sources; the extensions and a manifest of every `pypto` source's SHA-256
go to `build/native/`. `make setup` runs it; `make test` and `make run` run it again when a `pypto` source
changed. A machine without mypyc or a C compiler gets a warning and no build: the Python source is
used, as it is whenever the build is not of the current source. Takes about two minutes (mypy reads
the modules' imports).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the checkout's pypto/native.py by its path (importing `pypto` would import the compiler it builds)
_spec = importlib.util.spec_from_file_location("pypto_native_build", ROOT / "pypto" / "native.py")
assert _spec is not None and _spec.loader is not None
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)


def build(out: Path = native.BUILD) -> int:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    with tempfile.TemporaryDirectory(prefix="pypto-native-") as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "pypto", work / "pypto", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        sources = [str(native.source_of(m, work).relative_to(work)) for m in native.MODULES]
        # --follow-imports=silent: mypy reads the modules' imports for their types, and reports only on these
        cmd = [sys.executable, "-m", "mypyc", "--follow-imports=silent", *sources]
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        if done.returncode != 0:  # said, and kept in the manifest (make builds again when a module changes)
            why = f"mypyc failed (exit {done.returncode}): {(done.stdout + done.stderr).strip()[-2000:]}"
            (out / native.MANIFEST).write_text(json.dumps({"format": native.FORMAT, "failed": why}) + "\n")
            print(f"build_native: {why}\nbuild_native: the Python source will be used", file=sys.stderr)
            return 0
        modules, runtime = {}, {}
        for name in native.MODULES:
            rel = Path(*name.split(".")).with_name(name.rsplit(".", 1)[1] + suffix)
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(work / rel, out / rel)
            modules[name] = {"file": str(rel)}
        for f in work.glob(f"*__mypyc{suffix}"):  # the runtime the group's modules share, a top-level module
            shutil.copy2(f, out / f.name)
            runtime[f.name[: -len(suffix)]] = f.name
        built = native.sources(work)  # the copy mypyc read (what the build is of, whatever changed meanwhile)
    manifest = {"format": native.FORMAT, "suffix": suffix, "modules": modules, "runtime": runtime, "sources": built}
    (out / native.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    files, why = native.check(out)
    print(f"build_native: {why}")
    return 0 if files is not None else 1


if __name__ == "__main__":
    sys.exit(build())
