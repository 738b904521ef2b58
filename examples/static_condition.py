"""A compile-time condition: a bool kernel parameter picks the code path.

Non-tensor parameters (`int`, `float`, `bool`, config objects) are constants while the
kernel compiles, so a plain Python `if` on them chooses which ops are traced; the other
branch does not exist in the compiled kernel. They are part of the compile-cache key:
each value compiles once, which `kernel.compile_count` shows.
Run: `.venv/bin/python examples/static_condition.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare


@pypto.frontend.jit
def bias_act_kernel(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
                    bias: pypto.Tensor([256], pypto.DT_FP32),
                    out: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
                    use_gelu: bool):
    """x + bias, then GELU or ReLU as chosen by `use_gelu` at compile time.

    pypto-inputs:
        x: fp32[32, 256]
        out: fp32[32, 256]
        use_gelu: True
    """
    pypto.set_vec_tile_shapes(16, 256)
    y = x + bias
    # decided while compiling: only one branch becomes part of the kernel
    if use_gelu:
        out[:] = 0.5 * y * (1.0 + pypto.erf(y * 0.7071067811865476))
    else:
        out[:] = pypto.relu(y)


def check() -> list[Check]:
    torch.manual_seed(0)
    f = torch.nn.functional
    checks = []
    # the second row count reuses the compiled kernel of each flag value (the row axis is DYNAMIC)
    for rows in (32, 11):
        x = torch.randn(rows, 256)
        bias = torch.randn(256) * 0.1
        for use_gelu, want in ((True, f.gelu(x + bias)), (False, f.relu(x + bias))):
            out = torch.empty_like(x)
            bias_act_kernel(x, bias, out, use_gelu)
            checks.append(compare(f"{'gelu' if use_gelu else 'relu'} path fp32 [{rows},256]", out, want))
    # two flag values -> two compiled kernels, whatever the row count
    compiles = bias_act_kernel.compile_count
    checks.append(Check(f"compiled once per flag value ({compiles})", 0.0, 0.0, 0.0, compiles == 2))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "static condition: a bool parameter picks the code path"))
