"""`torch_npu.profiler` of the NPU stand-in: the names a program uses to profile an NPU run, doing nothing.

There is no device run to profile here and nothing is written (no trace folder appears); a kernel's
profile comes from the tools instead (`pypto-ide profile FILE --board sim`, the swimlane panel).
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable
from typing import Any


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel(enum.Enum):
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class ExportType(enum.Enum):
    Text = "text"
    Db = "db"


class AiCMetrics(enum.Enum):
    AiCoreNone = "AiCoreNone"
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    MemoryUB = "MemoryUB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "L2Cache"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class ExperimentalConfig:
    """torch_npu.profiler._ExperimentalConfig: keeps its settings, uses none."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings


def schedule(wait: int = 0, warmup: int = 0, active: int = 1, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:
    """The step schedule (its actions are only reported: nothing is recorded)."""
    period = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first or period <= 0:
            return ProfilerAction.NONE
        k = step - skip_first
        if repeat and k // period >= repeat:
            return ProfilerAction.NONE
        pos = k % period
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if pos == period - 1 else ProfilerAction.RECORD
    return action


def tensorboard_trace_handler(dir_name: str | None = None, worker_name: str | None = None,
                              analyse_flag: bool = True, async_mode: bool = False) -> Callable[[Any], None]:
    """A trace handler that writes nothing (there is no device trace)."""
    def handler(prof: Any) -> None:
        return None
    return handler


class profile:  # noqa: N801 - torch_npu's name
    """A profiling session that records nothing: `with profile(...) as p: ... p.step()` runs the body."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.step_num = 0

    def start(self) -> None:
        """Nothing to start."""

    def stop(self) -> None:
        """Nothing to stop."""

    def step(self) -> None:
        self.step_num += 1

    def export_chrome_trace(self, path: str) -> None:
        """Nothing recorded, nothing written."""

    def __enter__(self) -> profile:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_made: list[types.ModuleType] = []


def module() -> types.ModuleType:
    """The module served as `torch_npu.profiler` (one per process)."""
    if _made:
        return _made[0]
    m = types.ModuleType("torch_npu.profiler", __doc__)
    for obj in (ProfilerActivity, ProfilerLevel, ExportType, AiCMetrics, ProfilerAction, schedule,
                tensorboard_trace_handler, profile):
        setattr(m, obj.__name__, obj)
    m._ExperimentalConfig = ExperimentalConfig
    _made.append(m)
    return m
