"""What the precision analysis accepts: a kernel, a CompiledKernel or a CompileRecord, and its inputs.

The comparisons work on a CompileRecord, its inputs as numpy arrays and (for a CompiledKernel)
the executor it already built; `prepare_target` makes those from whichever the caller has —
compiling a kernel on its example inputs, or making a record's inputs as `pypto.inputs` does.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import numpy as np

from pypto.frontend.inputs import SEED, TensorSpec, example_arguments, make_tensor
from pypto.frontend.jit import CompiledKernel, JitKernel, to_numpy
from pypto.ir.dtypes import from_short
from pypto.ir.errors import PyptoError
from pypto.record import CompileRecord, compile_record


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (int, float, bool))


def tensor_arrays(inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The tensor arguments of `inputs` (by parameter name) as numpy arrays; scalars are left out."""
    return {k: to_numpy(v) for k, v in inputs.items() if _is_tensor(v)}


def _record_inputs(record: CompileRecord) -> dict[str, Any]:
    """Deterministic inputs for a record's parameters (as `pypto.inputs` makes them, numpy)."""
    rng = np.random.default_rng(SEED)
    out: dict[str, Any] = {}
    for i in record.inputs:
        if i.dtype is not None and i.shape is not None and all(isinstance(d, int) for d in i.shape):
            out[i.name] = make_tensor(TensorSpec(from_short(i.dtype), tuple(int(d) for d in i.shape)), rng, False)
        elif i.value is not None:
            try:
                out[i.name] = ast.literal_eval(i.value)
            except (ValueError, SyntaxError):
                out[i.name] = i.value
        else:
            raise PyptoError(f"cannot make an input for {i.name!r} of {record.source.kernel} "
                             f"(shape {i.shape}); pass inputs=")
    return out


def prepare_target(target: Any, inputs: Mapping[str, Any] | None) -> tuple[CompileRecord, dict[str, Any], Any]:
    """(record, inputs, executor or None) for a JitKernel, CompiledKernel or CompileRecord."""
    if isinstance(target, CompileRecord):
        return target, dict(inputs) if inputs is not None else _record_inputs(target), None
    if isinstance(target, JitKernel):
        args = dict(inputs) if inputs is not None else example_arguments(target, use_torch=False)
        return compile_record(target, args), args, None
    if isinstance(target, CompiledKernel):
        if inputs is None:
            raise PyptoError(f"precision of compiled kernel {target.name}: pass inputs=")
        args = dict(inputs)
        syms = target.bind_symbols(tensor_arrays(args), None)  # type: ignore[arg-type]
        lw = target.lower(syms)
        return CompileRecord.from_compiled(target, args, syms), args, lw.executor
    raise TypeError(f"precision_report takes a pypto kernel, a CompiledKernel or a CompileRecord, "
                    f"not {type(target).__name__}")
