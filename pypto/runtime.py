"""`pypto.runtime`: the runtime calls PyPTO's test scripts make.

`_device_synchronize()` waits for the NPU's queued work in PyPTO; a kernel call here returns
when its results are written, so there is nothing to wait for.
"""

from __future__ import annotations


def _device_synchronize() -> None:
    """Nothing is queued: a kernel call here is synchronous."""
