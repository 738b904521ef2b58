"""A run-time branch inside an unrolled loop: a row-by-row running sum.

`pypto.loop_unroll` runs the row loop with unroll factors 4, 2 and 1, as PyPTO does: one loop per
factor, largest first, each iteration handling `factor` rows. Inside, `if row == 0:` tests a
value known only at run time (the loop index), so it is a branch of the program: both sides are
compiled, and for each row only the side taken runs (the swimlane shows its tasks alone).
Builtin `min()` works on run-time values too. Compare `static_condition.py`, where the `if` is
decided while compiling.
Run: `.venv/bin/python examples/runtime_branch.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare


@pypto.frontend.jit
def running_sum(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
    """out[r] = x[0] + ... + x[r], one row at a time.

    pypto-inputs:
        x: fp32[11, 128]
        out: fp32[11, 128]
    """
    pypto.set_vec_tile_shapes(1, 128)
    rows = x.shape[0]
    for base, factor in pypto.loop_unroll(0, rows, 1, name="rows", idx_name="base", unroll_list=[4, 2, 1]):
        for j in range(factor):  # a plain Python loop: `factor` is a number in each unrolled body
            r = base + j
            if r == 0:  # known only at run time: a branch of the program
                out[r:r + 1, :] = x[r:r + 1, :]
            else:
                out[r:r + 1, :] = x[r:r + 1, :] + out[r - 1:r, :]


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    for rows in (1, 6, 11, 32):  # DYNAMIC rows: one compile serves every count
        x = torch.randn(rows, 128)
        out = torch.empty_like(x)
        running_sum(x, out)
        checks.append(compare(f"running sum fp32 [{rows},128]", out, torch.cumsum(x, dim=0), rtol=1e-5, atol=1e-5))
    compiles = running_sum.compile_count
    checks.append(Check(f"compiled once for every row count ({compiles})", 0.0, 0.0, 0.0, compiles == 1))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "runtime branch: an if on the loop index, in an unrolled loop"))
