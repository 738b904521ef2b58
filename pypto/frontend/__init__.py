"""The DSL frontend: `pypto.frontend.jit` and the tracing machinery behind the public API."""

from pypto.frontend.jit import CompiledKernel, JitKernel, dynamic, function, jit

__all__ = ["CompiledKernel", "JitKernel", "dynamic", "function", "jit"]
