"""The NPU stand-in: programs written for an Ascend NPU import and run unchanged when the tools run them.

A PyPTO program's file usually does `import torch_npu`, moves its tensors with `.npu()` or
`device="npu:0"`, and calls `torch.npu.set_device` / `synchronize`. There is no NPU here, and
the tools (`pypto-ide compile/profile/report/check/examples`, the language server's and the HTTP
server's workers) only ever trace, compile and simulate a kernel — so in the processes that run a
user's file for them, `prepare_for_user_code()` puts a stand-in in place:

- `import torch_npu` (and `torch_npu.npu`, `torch_npu.profiler`) finds our module
  (`pypto.npu.torch_side`: the `torch_npu` functions PyPTO's programs use, computed with torch's CPU
  math from the torch_npu documentation);
- torch gets its `npu` device: `torch.device("npu:0")` parses, factory functions given an NPU
  device make CPU tensors, `Tensor.npu()` / `.to("npu")` copy to the CPU, and `torch.npu` has
  `set_device`, `synchronize`, `current_stream`, … (docs/npu.md lists everything) — done when torch
  is imported (or at once, if it already is), as a real torch_npu registers itself when torch loads;
- a kernel whose options say `run_mode: NPU` compiles and runs on the simulated board
  (`pypto.frontend.jit`; the first pass says so in the record).

Nothing is installed anywhere: the stand-in lives in the process that ran `prepare_for_user_code`,
so the user's own Python still has no `torch_npu`. If a real `torch_npu` is importable, it is left
alone (the tools still only simulate). This module imports no torch: a compile of a file that
never imports torch loads none.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence
from typing import Any

# the modules the stand-in answers for (`import torch_npu.npu` etc.)
SERVED = ("torch_npu", "torch_npu.npu", "torch_npu.profiler")

_state = {"tools": False, "standin": False, "torch_patched": False}


def for_tools() -> bool:
    """Whether this process runs a user's file for the tools (which compile and simulate only)."""
    return _state["tools"]


def set_for_tools(on: bool) -> bool:
    """Mark (or unmark) this process as one running user code for the tools; returns the mark before.
    `prepare_for_user_code` sets it; a test suite that runs kernels both ways in one process resets it."""
    before = _state["tools"]
    _state["tools"] = on
    return before


def standin_installed() -> bool:
    """Whether `import torch_npu` finds the stand-in in this process."""
    return _state["standin"]


def real_torch_npu_present() -> bool:
    """Whether a real torch_npu is importable (looked up without importing it, the stand-in aside)."""
    return any(not isinstance(f, StandinFinder) and _spec(f, "torch_npu", None) is not None for f in sys.meta_path)


def prepare_for_user_code() -> None:
    """This process is about to run a user's file for the tools: put the stand-in in place (once).
    Idempotent; does nothing to a process where a real torch_npu is importable but mark it a tool's."""
    _state["tools"] = True
    if _state["standin"] or real_torch_npu_present():
        return
    sys.meta_path.insert(0, StandinFinder())
    _state["standin"] = True
    if "torch" in sys.modules:
        patch_torch()


def patch_torch() -> None:
    """Give the (imported) torch its `npu` device and namespace: pypto.npu.torch_side.install."""
    if _state["torch_patched"]:
        return
    _state["torch_patched"] = True
    from pypto.npu import torch_side  # imports torch: only once the user's program has

    torch_side.install()


def _spec(finder: Any, name: str, path: Sequence[str] | None) -> importlib.machinery.ModuleSpec | None:
    find = getattr(finder, "find_spec", None)
    if find is None:
        return None
    try:
        spec: importlib.machinery.ModuleSpec | None = find(name, path)
    except (ImportError, ValueError):
        return None
    return spec


class StandinFinder(importlib.abc.MetaPathFinder):
    """Answers `import torch_npu…` with the stand-in, and patches torch right after torch loads."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in SERVED:
            return importlib.util.spec_from_loader(fullname, StandinLoader(), is_package=True)
        if fullname == "torch" and not _state["torch_patched"]:
            for finder in sys.meta_path:
                if finder is self:
                    continue
                spec = _spec(finder, fullname, path)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = ThenPatchTorch(spec.loader)
                    return spec
        return None


class StandinLoader(importlib.abc.Loader):
    """Makes `torch_npu` and its served submodules from `pypto.npu.torch_side`."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        import torch  # noqa: F401 - loaded first (and patched as it loads), so torch_side finds it whole

        patch_torch()
        from pypto.npu import torch_side  # the program asked for torch_npu

        return torch_side.module(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: `create_module` made it whole."""


class ThenPatchTorch(importlib.abc.Loader):
    """torch's own loader, then `patch_torch()` once torch has finished executing."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.inner.exec_module(module)
        patch_torch()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, get_code, …
        return getattr(self.inner, name)
