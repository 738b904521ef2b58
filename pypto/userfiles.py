"""How a user's kernel file finds its sibling modules, as `python FILE` would.

A kernel file may `import helpers` from its own folder. Every tool that imports user files in
its own process (`pypto-ide examples/compile/report/check`, the check executors) calls
`enter_folder` first: the file's folder goes first on `sys.path` (as Python puts a script's
folder), and the modules imported from the folder of the previous file are forgotten when a
file of another folder comes — two folders of a library may each have a `helpers.py`, and the
second must not get the first's from `sys.modules`. (The language server's workers do the
same with edits in mind: `server/worker.py`.)
"""

from __future__ import annotations

import os
import sys

_current: str | None = None


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
