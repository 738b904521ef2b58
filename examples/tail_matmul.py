"""A matmul over a dynamic batch in fixed chunks, the last one a partial tile (`valid_shape`).

The batch is cut into 16-row chunks; `min(off + 16, b)` (builtin `min` on a run-time value) gives
where a chunk ends, and `valid_shape` says how many of its 16 rows hold data. The matmul, the
ReLU and the `assemble` then work on those rows only, so any batch size runs with one compile.
Run: `.venv/bin/python examples/tail_matmul.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

CHUNK = 16


@pypto.frontend.jit
def chunked_linear_relu(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP16),
                        w: pypto.Tensor([64, 128], pypto.DT_FP16),
                        out: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
    """out = relu(x @ w), 16 rows at a time.

    pypto-inputs:
        x: fp16[37, 64]
        w: fp16[64, 128]
        out: fp32[37, 128]
    """
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [128, 128])
    pypto.set_vec_tile_shapes(16, 128)
    b = x.shape[0]
    for idx in pypto.loop(0, (b + CHUNK - 1) // CHUNK, 1, name="chunks", idx_name="idx"):
        off = idx * CHUNK
        end = min(off + CHUNK, b)  # a run-time value: the last chunk may be short
        chunk = pypto.view(x, [CHUNK, 64], [off, 0], valid_shape=[end - off, 64])
        y = pypto.matmul(chunk, w, pypto.DT_FP32)
        pypto.assemble(pypto.relu(y), [off, 0], out)


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    w = torch.randn(64, 128, dtype=torch.float16) * 0.1
    for rows in (5, 16, 37):
        x = torch.randn(rows, 64, dtype=torch.float16)
        out = torch.empty(rows, 128)
        chunked_linear_relu(x, w, out)
        want = torch.relu(x.float() @ w.float())
        checks.append(compare(f"relu(x @ w) fp16 -> fp32 [{rows},64]x[64,128]", out, want, rtol=1e-3, atol=1e-3))
    compiles = chunked_linear_relu.compile_count
    checks.append(Check(f"compiled once for every batch size ({compiles})", 0.0, 0.0, 0.0, compiles == 1))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "tail matmul: a dynamic batch in chunks, the last partial"))
