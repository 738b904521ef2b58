"""A small PyPTO 3 program for the pass viewer's tests, written for them: the build output beside it
(build_output/RowScale_*/passes_dump/) is hand-written too, in the printer's layout, not made by PyPTO."""

import pypto.language as pl

ROWS = 16


@pl.program
class RowScale:
    @pl.function(type=pl.FunctionType.InCore)
    def add_bias(self, t: pl.Tensor[[16, 128], pl.FP32], b: pl.Tensor[[1, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        return pl.col_expand_add(t, b)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[1, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        for r in pl.parallel(0, 64, ROWS):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):
                t = pl.mul(x[r:r + ROWS, :], 0.5)
                out[r:r + ROWS, :] = self.add_bias(t, b)
        with pl.at(level=pl.Level.CORE_GROUP):
            out[0:1, :] = pl.exp(out[0:1, :])
        return out
