# pypto.program: RowScale
import pypto.language as pl


@pl.program
class RowScale:
    @pl.function(type=pl.FunctionType.InCore)
    def add_bias(self, t: pl.Tensor[[16, 128], pl.FP32], b: pl.Tensor[[1, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
        y: pl.Tensor[[16, 128], pl.FP32] = pl.col_expand_add(t, b)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[1, 128], pl.FP32], out_0: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        for r, (out_1,) in pl.parallel(0, 64, 16, init_values=(out_0,)):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):
                t: pl.Tensor[[16, 128], pl.FP32] = pl.mul(pl.slice(x, [16, 128], [r, 0]), 0.5)
                out_2 = pl.assemble(out_1, self.add_bias(t, b), [r, 0])
            out_3 = pl.yield_(out_2)
        with pl.at(level=pl.Level.CORE_GROUP):
            out_4 = pl.assemble(out_3, pl.exp(pl.slice(out_3, [1, 128], [0, 0])), [0, 0])
        return out_4
