"""The attention issue 29 timed: 32 heads of 512 x 64, fp16 in, fp32 out.

`pypto-ide report tests/data/attention_32x512x64.py::attn --suggest` ran for over ten minutes
before every door's tile search had one time bound (`pypto.analysis.advisor.SEARCH_SECONDS`);
`benchmarks/search_bound_bench.py` times it now. Written for this project (examples/attention.py's
kernel at the issue's shapes).
"""

import math

import pypto

H, S, D = 32, 512, 64


@pypto.frontend.jit
def attn(q: pypto.Tensor([H, S, D], pypto.DT_FP16), k: pypto.Tensor([H, S, D], pypto.DT_FP16),
         v: pypto.Tensor([H, S, D], pypto.DT_FP16), out: pypto.Tensor([H, S, D], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 128], [64, 128], [64, 128])
    pypto.set_vec_tile_shapes(1, 32, S)
    scale = 1.0 / math.sqrt(D)
    for h in pypto.loop(0, q.shape[0], 1, name="LOOP_head", idx_name="h"):
        qh, kh, vh = q[h:h + 1, ...], k[h:h + 1, ...], v[h:h + 1, ...]
        scores = pypto.matmul(qh, kh, pypto.DT_FP32, b_trans=True) * scale
        e = pypto.exp(scores - pypto.amax(scores, dim=-1, keepdim=True))
        p = e / pypto.sum(e, dim=-1, keepdim=True)
        out[h:, ...] = pypto.matmul(pypto.cast(p, pypto.DT_FP16), vh, pypto.DT_FP32)
