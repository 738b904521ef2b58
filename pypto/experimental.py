"""`pypto.experimental`: PyPTO's experimental names, importable as a module.

Kernels write `pypto.experimental.set_operation_options(combine_axis=True)` or
`from pypto.experimental import gather_in_ub`. The operation options are an option group like
the others (`pypto.tracing.options`). `transposed_batchmatmul`, `gather_in_ub` and
`gather_in_l1` are built from other ops (`pypto.tracing.composite`); the experimental ops not
implemented yet raise a `PyptoError` naming the op and its tier at the user's line.
"""

from __future__ import annotations

from pypto.tracing.composite import gather_in_l1, gather_in_ub, transposed_batchmatmul
from pypto.tracing.options import get_operation_options, set_operation_options
from pypto.tracing.unsupported import EXPERIMENTAL, rejecting

globals().update({name: rejecting(f"experimental.{name}", tier) for name, tier in EXPERIMENTAL.items()})

__all__ = ["gather_in_l1", "gather_in_ub", "get_operation_options", "set_operation_options",
           "transposed_batchmatmul", *EXPERIMENTAL]
