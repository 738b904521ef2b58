"""`pypto.pypto_impl`: the few names of PyPTO's native module that kernels call directly.

`SetGlobalConfig({"pass.enable_slice": True})` sets options by `<group>.<key>` (PyPTO's
conftest and config code do); `ScalarDivS(tensor, Element(dtype, v), reverse)` is a tensor
divided by a scalar (or the scalar by the tensor); `Element` is `pypto.Element`;
`GetCompilerMonitorTotalElapsed()` is the latest compile's seconds (GLM-4.5's MoE test checks it).
"""

from __future__ import annotations

from typing import Any

from pypto.frontend.jit import last_compile_seconds
from pypto.ir.errors import PyptoError
from pypto.tracing import options
from pypto.tracing.api import Element, div
from pypto.tracing.tensor import Tensor

_GROUPS = {"pass": "pass_options", "runtime": "runtime_options", "host": "host_options",
           "codegen": "codegen_options", "verify": "verify_options", "debug": "debug_options",
           "operation": "operation_options"}


def SetGlobalConfig(config: dict[str, Any]) -> None:  # noqa: N802 - PyPTO's name
    """Set options given as `{"<group>.<key>": value}`; `global.*` keys configure PyPTO's own
    framework (its platform, simulator and pass runner) and are accepted with no effect here."""
    for full, value in dict(config).items():
        group, _, key = str(full).partition(".")
        if group == "global":
            continue
        if group not in _GROUPS or not key:
            raise PyptoError(f"SetGlobalConfig: {full!r} is not '<group>.<key>' with group one of "
                             f"{', '.join([*_GROUPS, 'global'])}")
        options.check_group(_GROUPS[group], {key: value})
        options.set_global_option(_GROUPS[group], key, value)


def ScalarDivS(tensor: Tensor, other: Any, is_reserve: bool = False) -> Tensor:  # noqa: N802 - PyPTO's name
    """`tensor / other`, or `other / tensor` when `is_reserve`; `other` a number or an Element."""
    value = other.value if isinstance(other, Element) else other
    return div(value, tensor) if is_reserve else div(tensor, value)


def GetCompilerMonitorTotalElapsed() -> float:  # noqa: N802 - PyPTO's name
    """Seconds the latest kernel compile of this process took (tracing, the tensor stage and the
    lowerings for new dynamic dims since), 0.0 before any compile."""
    return last_compile_seconds()


__all__ = ["Element", "GetCompilerMonitorTotalElapsed", "ScalarDivS", "SetGlobalConfig"]
