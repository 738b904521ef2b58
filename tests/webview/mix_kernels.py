"""A PyPTO 3 kernel for the webview fixtures (tests/webview/make_fixtures.py): each `pl.at` scope instance
holds a matmul K loop and a vector add, so it is one MIX task on a cluster's AIC and two AIVs."""

import pypto.language as pl

B, H, KT, NT = 16, 256, 64, 64


@pl.jit
def gemm_add(a: pl.Tensor[[B, H], pl.BF16], h: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, H], pl.BF16],
             out: pl.Out[pl.Tensor[[B, H], pl.FP32]]):
    for n0 in pl.parallel(0, H, NT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_add"):
            acc = pl.create_tensor([B, NT], dtype=pl.FP32)
            for kb in pl.range(H // KT):
                ta = a[:, kb * KT:(kb + 1) * KT]
                tw = w[kb * KT:(kb + 1) * KT, n0:n0 + NT]
                if kb == 0:
                    acc = pl.matmul(ta, tw, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tw)
            out[:, n0:n0 + NT] = pl.add(acc, pl.cast(h[:, n0:n0 + NT], target_type=pl.FP32))
    return out
