"""Kernels the webview fixtures are made from (tests/webview/make_fixtures.py).

`fp16_accumulate` loses precision on purpose (row sums accumulated in fp16), so the
precision panel has a failing op, a failing tile grid and two configurations that diverge.
`html_named` is a fine kernel whose name is HTML, and `html_error` fails to compile at a line
whose text is HTML: the panels must show both as text.
"""

import pypto


@pypto.jit
def fp16_accumulate(x: pypto.Tensor(), out: pypto.Tensor()):
    """Row sums accumulated 16 columns at a time into `out` (64 rows), in out's dtype."""
    pypto.set_vec_tile_shapes(8, 256)
    for i in pypto.loop(0, x.shape[1], 16):
        part = pypto.sum(pypto.view(x, [64, 16], [0, i]), dim=-1, keepdim=True)
        out[:] = out + part


@pypto.jit(name='<img src=x onerror="window.__pwned=1">kernel')
def html_named(x: pypto.Tensor([16, 128], pypto.DT_FP32), out: pypto.Tensor([16, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = pypto.exp(x) * 2.0


@pypto.jit
def html_error(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = x[:, 0:32]  # <img src=x onerror="window.__pwned=2"><script>window.__pwned=3</script>


@pypto.jit
def pass_showcase(x: pypto.Tensor([256, 512], pypto.DT_FP16), out: pypto.Tensor([256, 512], pypto.DT_FP16)):
    """A kernel every tensor pass changes: decompose, autocast, cse and dce each leave a mark."""
    pypto.set_vec_tile_shapes(16, 256)
    a = x * 2.0
    b = x * 2.0  # the same value as `a`: cse merges them
    unused = pypto.exp(x)  # noqa: F841 - no output needs it: dce removes it
    out[:] = pypto.softmax(a + b, dim=-1)  # decompose splits it; autocast computes it in fp32
