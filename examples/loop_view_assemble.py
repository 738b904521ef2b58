"""A runtime loop over a DYNAMIC axis in tiles of several rows, with view and assemble.

Each iteration takes a 16-row window of the input with `pypto.view`, computes on it, and
writes the result back with `pypto.assemble`. The last window may be partial: its
`valid_shape` is the number of rows left, min(16, rows - i). Because the row axis is
DYNAMIC, calling the kernel with other row counts reuses the compiled kernel, which
`kernel.compile_count` shows. Run: `.venv/bin/python examples/loop_view_assemble.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

TILE_ROWS, COLS = 16, 128


@pypto.frontend.jit
def row_tiles_kernel(x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32)):
    """Each row minus its mean, times 2, one 16-row tile per loop iteration.

    pypto-inputs:
        x: fp32[50, 128]
        out: fp32[50, 128]
    """
    pypto.set_vec_tile_shapes(TILE_ROWS, COLS)
    rows = x.shape[0]
    # i = 0, 16, 32, ...: one iteration per 16-row tile
    for i in pypto.loop(0, rows, TILE_ROWS, name="LOOP_rows", idx_name="i"):
        # a [16, COLS] window at row i; only min(16, rows - i) rows are valid in the last one
        valid = (rows - i).min(TILE_ROWS)
        t = pypto.view(x, [TILE_ROWS, COLS], [i, 0], valid_shape=[valid, COLS])
        # any vector computation on the tile: here each row minus its mean, times 2
        y = (t - pypto.sum(t, dim=-1, keepdim=True) / COLS) * 2.0
        # write the tile back into the output at row i
        pypto.assemble(y, [i, 0], out)


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    # 64 is a whole number of tiles; 50 and 7 end with a partial tile
    for rows in (64, 50, 7):
        x = torch.randn(rows, COLS)
        out = torch.empty_like(x)
        row_tiles_kernel(x, out)
        checks.append(compare(f"row tiles fp32 [{rows},{COLS}]", out, (x - x.mean(-1, keepdim=True)) * 2.0))
    # a DYNAMIC dim is not part of the compile-cache key: three row counts, one compile
    compiles = row_tiles_kernel.compile_count
    checks.append(Check(f"compiled once for 3 row counts ({compiles})", 0.0, 0.0, 0.0, compiles == 1))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "loop / view / assemble over a DYNAMIC axis"))
