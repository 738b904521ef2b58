"""`pypto.platform`: which chip the kernel is compiled for (`pypto.platform.npuarch`).

Kernels branch on it (`if pypto.platform.npuarch == "DAV_3510":` for a newer chip); the value
is the target description's `npu_arch` (`pypto.target`, A2/A3: `DAV_2201`), and setting it
changes what later code reads, as in PyPTO.
"""

from __future__ import annotations

from pypto.target import load


class Platform:
    def __init__(self) -> None:
        self._arch: str | None = None

    @property
    def npuarch(self) -> str:
        return self._arch if self._arch is not None else str(load()["npu_arch"])

    @npuarch.setter
    def npuarch(self, value: str) -> None:
        self._arch = str(value)


platform = Platform()
