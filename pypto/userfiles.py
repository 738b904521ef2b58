"""How a user's kernel file is executed: from a text (the editor's, or the one a job carries),
and with its sibling modules found as `python FILE` would find them.

`load_text(path, text, prefix)` executes a file's text as the module at `path`, once per
version (the language server's and HTTP server's workers, `check`'s executors): the text is
registered with `linecache` (tracebacks and `inspect` show it, not the file on disk) and the
module in `sys.modules` (dataclasses and pickle look modules up by name).

A kernel file may `import helpers` from its own folder. Every tool that imports user files in
its own process (`pypto-ide examples/compile/report/check`, `load_text`) calls
`enter_folder` first: the file's folder goes first on `sys.path` (as Python puts a script's
folder), and the modules imported from the folder of the previous file are forgotten when a
file of another folder comes — two folders of a library may each have a `helpers.py`, and the
second must not get the first's from `sys.modules`. (The servers' workers run each job in a
fresh child process, so every job imports a file's sibling modules anew: `server/worker.py`.)

A program written for the NPU (`import torch_npu`, `.npu()`, `torch.npu.set_device`) imports as it is:
`load_text` and the CLI's loader put the NPU stand-in in place first (`pypto.npu`, docs/npu.md), in this
process only.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import sys
import types

from pypto.npu import prepare_for_user_code

_current: str | None = None
_loaded: dict[tuple[str, str], types.ModuleType] = {}  # one version: (path, sha256 of text) -> module


def load_text(path: str, text: str, prefix: str) -> types.ModuleType:
    """Execute `text` as the module at `path` (named `prefix` + a hash of the path), or return the
    module of this version executed last time; whatever the module raises propagates."""
    key = (path, hashlib.sha256(text.encode()).hexdigest())
    mod = _loaded.get(key)
    if mod is None:
        prepare_for_user_code()
        linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)  # mtime None: kept
        folder = os.path.dirname(path)
        if folder and os.path.isdir(folder):
            enter_folder(folder)
        mod = types.ModuleType(prefix + hashlib.sha1(path.encode()).hexdigest()[:12])
        mod.__file__ = path
        sys.modules[mod.__name__] = mod
        exec(compile(text, path, "exec"), mod.__dict__)  # noqa: S102 - running the user's module is the point
        _loaded.clear()
        _loaded[key] = mod
    return mod


def forget_loaded() -> None:
    """Drop the cached module (its sibling modules changed: the next load_text executes it again)."""
    _loaded.clear()


def enter_folder(folder: str) -> None:
    """Make `folder` the one whose sibling modules `import` finds (see the module docstring)."""
    global _current
    folder = os.path.abspath(folder)
    if _current is not None and _current != folder:
        for name, mod in list(sys.modules.items()):
            file = getattr(mod, "__file__", None)  # a module right in that folder (not a package, not a kernel file)
            if isinstance(file, str) and os.path.dirname(file) == _current and not name.startswith("pypto_"):
                del sys.modules[name]
    _current = folder
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
