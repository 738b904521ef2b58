"""The compiler's hot modules as native code, when a build of exactly the current source is at hand.

Every stage of a big kernel's compile walks its tile ops in Python (gated delta rule: 195 k tile ops).
`tools/build_native.py` (run by `make setup`) compiles the modules named in `MODULES` with mypyc — typed
Python to C extensions, the same source and the same semantics — into `build/native/`, with a manifest of
the SHA-256 of every `pypto` source file: mypyc builds in what the imported modules' annotations say (a
return typed `int` is unboxed as one), so the build is of the whole package, not only of what it compiles.
`install()` (run by `import pypto.compiler`, before its modules) puts a finder first on `sys.meta_path`
that imports those modules from the build, but only when every `pypto` source is the one it was built
from and the build is for this interpreter: an edit anywhere in `pypto`, a checkout without a build (a
wheel, a machine without a C compiler) or `PYPTO_NATIVE=0` imports the Python source as ever (hashing
the ~120 files takes ~6 ms). The modules are compiled together (calls between them are native), so they
load all or none. `status()` says which, and why not.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

# what tools/build_native.py compiles, in one mypyc group
# (tile_ir and execute_ir: their TileOp, Region, Buffer, Subgraph and Task are native classes then, read and made by
# the others at C speed; their graph, leaf and copy-facts classes stay Python classes for their weak references,
# session 28. Not the health report's levels: native, gated delta rule's took 0.68-0.71 s against 0.63-0.68 s in
# Python, under a job's collector settings, session 27, with Python-class tile ops; benchmarks/native_bench.py prints
# it with them added here. But its tile level's walk over the now native tile ops, `tile_census`, session 54. The
# block stage since session 55: QAT's per-tensor backward's, 78 k instructions in one leaf, 7.7 -> 6.9 s)
MODULES = ("pypto.compiler.tile_ir", "pypto.compiler.execute_ir", "pypto.compiler.tile_expand", "pypto.compiler.stamp",
           "pypto.compiler.gm_index", "pypto.compiler.partition", "pypto.compiler.execute", "pypto.compiler.serialize",
           "pypto.compiler.tile_census", "pypto.compiler.block")
ROOT = Path(__file__).resolve().parent.parent  # the checkout (an editable install's)
BUILD = ROOT / "build" / "native"
MANIFEST = "manifest.json"
FORMAT = 2


def source_of(module: str, root: Path = ROOT) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def sources(root: Path = ROOT) -> dict[str, str]:
    """Every `pypto` source file under `root` (its path from `root`) -> its SHA-256."""
    return {f.relative_to(root).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted((root / "pypto").rglob("*.py"))}


class NativeFinder(MetaPathFinder):
    """Finds the built modules (and the mypyc runtime they share) in the build folder."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        f = self.files.get(fullname)
        if f is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(f))
        return importlib.util.spec_from_file_location(fullname, f, loader=loader)


_status = "not installed"


def status() -> str:
    """Whether the native modules are in use, or why not."""
    return _status


def check(build: Path = BUILD, root: Path = ROOT) -> tuple[dict[str, Path] | None, str]:
    """The files to load (module name -> extension), or None and why not."""
    try:
        manifest = json.loads((build / MANIFEST).read_text())
    except FileNotFoundError:
        return None, f"no native build ({build / MANIFEST}; `make setup` makes it)"
    except (OSError, ValueError) as e:
        return None, f"unreadable native build manifest: {e}"
    if isinstance(manifest, dict) and manifest.get("failed"):
        return None, f"the native build failed ({build / MANIFEST}): {str(manifest['failed'])[:300]}"
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None, "native build of another format: rebuild it (python tools/build_native.py)"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    if manifest.get("suffix") != suffix:
        return None, f"native build for {manifest.get('suffix')}, not this interpreter's {suffix}"
    modules = manifest.get("modules") or {}
    if sorted(modules) != sorted(MODULES):
        return None, "native build of other modules: rebuild it (python tools/build_native.py)"
    try:
        now = sources(root)
    except OSError as e:
        return None, f"pypto's sources unreadable: {e}"
    built = manifest.get("sources") or {}
    changed = sorted(set(now) ^ set(built) | {f for f in now if built.get(f) != now[f]})
    if changed:
        return None, (f"{changed[0]} changed since the native build (`make setup` builds it again): "
                      "the Python source is used")
    files = {name: build / str(entry["file"]) for name, entry in modules.items()}
    for name, file in (manifest.get("runtime") or {}).items():  # the mypyc runtime the group shares
        files[name] = build / file
    missing = [str(f) for f in files.values() if not f.is_file()]
    if missing:
        return None, f"native build incomplete: {missing[0]} is missing"
    return files, f"native: {', '.join(sorted(modules))} (mypyc, {build})"


def install() -> None:
    """Put the finder first on `sys.meta_path` when the build matches (see the module doc); once."""
    global _status
    if any(isinstance(f, NativeFinder) for f in sys.meta_path):
        return
    if os.environ.get("PYPTO_NATIVE", "1") == "0":
        _status = "PYPTO_NATIVE=0: the Python source is used"
        return
    if any(m in sys.modules for m in MODULES):
        _status = "imported before pypto.native.install: the Python source is used"
        return
    files, _status = check()
    if files is not None:
        sys.meta_path.insert(0, NativeFinder(files))
