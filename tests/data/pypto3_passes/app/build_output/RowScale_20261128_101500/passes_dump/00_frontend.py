# pypto.program: RowScale
import pypto.language as pl


@pl.program
class RowScale:
    @pl.function(type=pl.FunctionType.InCore)
    def add_bias(self, t: pl.Tensor[[16, 128], pl.FP32], b: pl.Tensor[[1, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        y: pl.Tensor[[16, 128], pl.FP32] = pl.col_expand_add(t, b)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[1, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        for r in pl.parallel(0, 64, 16):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):
                t: pl.Tensor[[16, 128], pl.FP32] = pl.mul(pl.slice(x, [16, 128], [r, 0]), 0.5)
                out = pl.assemble(out, self.add_bias(t, b), [r, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.exp(pl.slice(out, [1, 128], [0, 0])), [0, 0])
        return out
