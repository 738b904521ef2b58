"""Precision diff: where a kernel's low-precision arithmetic leaves an fp64 reference.

A kernel in fp16/bf16 is right only to some tolerance, and when it is not, the question
is *which line* lost the precision. This package answers it the way PyPTO's pass verify
does: run the kernel's graph after each selected pass — and the final tiled program —
in the kernel's own dtypes and in fp64, compare every op's output, and name the first
op (as a source line) and the first pass whose error exceeds the tolerance. It also
compares two configurations of one kernel (two tile shapes, two dtypes, two option
sets) op by op, and drives `verify_options` for the DSL (`enable_pass_verify`).

Modules, bottom to top: `rule` (PyPTO's tolerance rule: `check`, `Stats`), `results` (the
report's data types), `targets` (a kernel, CompiledKernel or record, and its inputs), `values`
(the runs compared: the fp64 reference, a tiled program's values per node), `passes`
(`precision_report`: a kernel's passes op by op against fp64), `configs` (`compare_configs`:
two configurations op by op), `verify` (`verify_compiled`, the `enable_pass_verify` hook).
This module re-exports what code outside the package uses.
"""

from pypto.analysis.precision.configs import compare_configs
from pypto.analysis.precision.passes import precision_report
from pypto.analysis.precision.rule import Stats, allowed_errors, check
from pypto.analysis.precision.verify import PrecisionWarning, verify_compiled

__all__ = ("PrecisionWarning", "Stats", "allowed_errors", "check", "compare_configs", "precision_report",
           "verify_compiled")
