"""`verify_compiled`: the `enable_pass_verify` hook that `pypto/__init__.py` installs into the jit.

The frontend sits below the analysis layer and may not import it, so `CompiledKernel.run` calls
whatever verifier was installed (`pypto.frontend.jit.set_pass_verifier`); this is that verifier.

**verify_options** (`verify_compiled`, called by `CompiledKernel.run` when
`enable_pass_verify` is on): the passes named in `pass_verify_pass_filter` (empty: the
default selection), tolerances `pass_verify_error_tol = [rtol, atol]`; the report is
stored on the compiled kernel as `ck.precision`, a failure is a `PrecisionWarning`
naming the first failing op's `file:line`, and the call's results are untouched (the
check runs on its own copies). `pass_verify_save_tensor` writes every compared value
and its fp64 reference as `.npy` into `pass_verify_save_tensor_dir` (default
`./output/<kernel>_<time>/verify/`): one folder per pass (`<index>_<pass>/`), a file per
op and occurrence (`n<id>_<op>_L<line>_<k>.npy` beside `….fp64.npy`; k is the loop
iteration, or the tile instance in a tiled pass), `output_<name>.npy` per output, and the
report as `precision.json`.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pypto.analysis.precision.passes import precision_report
from pypto.analysis.precision.results import PrecisionReport
from pypto.compiler.instruments import new_run_dir
from pypto.ir.source import is_user_frame
from pypto.tracing.tiling import PyptoWarning


class PrecisionWarning(PyptoWarning):
    """`enable_pass_verify`: an op's error exceeded `pass_verify_error_tol`."""


def verify_compiled(ck: Any, arrays: Mapping[str, np.ndarray],
                    warn: Callable[[str], None] | None = None) -> PrecisionReport:
    """`verify_options={"enable_pass_verify": True}`: the precision check of one call of
    compiled kernel `ck` on `arrays` (never written), its report stored as `ck.precision`;
    a failure warns (PrecisionWarning) naming the first failing op's file:line."""
    vo = ck.options.get("verify_options", {})
    tol = list(vo.get("pass_verify_error_tol") or [1e-3, 1e-3])
    rtol, atol = float(tol[0]), float(tol[1] if len(tol) > 1 else tol[0])
    save_dir: Path | None = None
    if vo.get("pass_verify_save_tensor"):
        if vo.get("pass_verify_save_tensor_dir"):
            save_dir = Path(vo["pass_verify_save_tensor_dir"])
        else:
            save_dir = new_run_dir(ck.name) / "verify"
    inputs = {k: np.array(v, copy=True) for k, v in arrays.items()}
    report = precision_report(ck, inputs, list(vo.get("pass_verify_pass_filter") or []), rtol, atol,
                              save_dir=save_dir)
    ck.precision = report
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        (save_dir / "precision.json").write_text(report.dumps(indent=1))
    if not report.passed:
        msg = f"pypto precision check (enable_pass_verify) failed — {report.message()}"
        if warn is not None:
            warn(msg)
        else:
            warnings.warn(msg, PrecisionWarning, stacklevel=_user_stacklevel())
    return report


def _user_stacklevel() -> int:
    """The stacklevel of warnings.warn (called from verify_compiled) that names the user's frame."""
    frame = sys._getframe(1)  # verify_compiled: stacklevel 1
    level = 1
    while frame is not None and not is_user_frame(frame):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level if frame is not None else 1
