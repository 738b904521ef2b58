"""`pypto.runtime`: the runtime calls PyPTO's test scripts make.

`_device_synchronize()` waits for the NPU's queued work in PyPTO; a kernel call here returns
when its results are written, so there is nothing to wait for.

It is also PyPTO 3's `pypto.runtime` (the two share the name upstream): `RunConfig`,
`execute_compiled` and `run`, what `@pl.jit` kernels, `@pl.program`s and pypto-lib's runner call.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pypto.ir.errors import PyptoError
from pypto.language.kernel import PlKernel, Program, check_platform, program_at


def _device_synchronize() -> None:
    """Nothing is queued: a kernel call here is synchronous."""


# ---- PyPTO 3's `pypto.runtime`: RunConfig and what a runner calls --------------------------------
# PyPTO 3 (`import pypto.language as pl`) has a `pypto.runtime` of its own; the names below are its,
# added beside CANN's. `platform="a2a3sim"` and `"a2a3"` both run on this product's simulated A2/A3
# board (values computed on this machine's CPU); the device, profiling and dump fields are accepted
# and do nothing here (docs/pypto3.md).


@dataclass
class RunConfig:
    """How a PyPTO 3 kernel is compiled and run (`kernel(..., config=RunConfig())`)."""

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: Any = None
    backend_type: Any = None
    dump_passes: Any = False
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    codegen_only: bool = False
    enable_chip_swimlane: int | bool = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: str | None = None
    aicpu_thread_num: int | None = None
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    dump_ptoas_passes: bool = False

    def __post_init__(self) -> None:
        check_platform(self.platform)
        if self.distributed_config is not None:
            raise PyptoError("RunConfig(distributed_config=...): multi-rank programs are not supported "
                             "(docs/pypto3.md)")


def execute_compiled(work_dir: str | os.PathLike[str], args: Sequence[Any], *, platform: str = "a2a3sim",
                     device_id: int = 0, dfx: Any = None) -> None:
    """Run the PyPTO 3 kernel compiled into `work_dir` (`kernel.compile(..., config=RunConfig(...))`, in
    this process) on `args` in parameter order: tensors are written in place, scalars may be ctypes
    values. `dfx` (swimlane, PMU and dump flags) is accepted and writes nothing here."""
    check_platform(platform)
    program_at(os.fspath(work_dir)).kernel(*args)


def run(program: Any, *args: Any, config: RunConfig | None = None, **kwargs: Any) -> Any:
    """Run a `@pl.program` (its Orchestration entry) or a `@pl.jit` kernel on `args`: tensors are written
    in place, and what the entry returns is returned. `config` (a RunConfig) names the platform."""
    if config is not None:
        check_platform(getattr(config, "platform", "a2a3sim"))
    if isinstance(program, Program):
        return program.entry(*args, **kwargs)
    if isinstance(program, PlKernel):
        return program(*args, **kwargs)
    raise PyptoError(f"pypto.runtime.run takes a @pl.program or a @pl.jit kernel, got {type(program).__name__}")
