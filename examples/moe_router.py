"""A mixture-of-experts router: each token picks its top-2 experts and their weights.

`pypto.topk` returns the k largest gate probabilities and their expert ids (int32); the kept
probabilities are renormalized to sum to 1, as MoE layers do before mixing expert outputs.
Run: `.venv/bin/python examples/moe_router.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

EXPERTS, TOP = 16, 2


@pypto.frontend.jit
def route(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32), w_gate: pypto.Tensor([256, EXPERTS], pypto.DT_FP32),
          weights: pypto.Tensor([pypto.DYNAMIC, TOP], pypto.DT_FP32),
          experts: pypto.Tensor([pypto.DYNAMIC, TOP], pypto.DT_INT32)):
    """weights, experts = renormalized top-2 of softmax(x @ w_gate).

    pypto-inputs:
        x: fp32[64, 256]
        w_gate: fp32[256, 16]
        weights: fp32[64, 2]
        experts: int32[64, 2]
    """
    pypto.set_cube_tile_shapes([16, 64], [64, 256], [16, 16])
    pypto.set_vec_tile_shapes(16, EXPERTS)
    probs = pypto.softmax(pypto.matmul(x, w_gate, pypto.DT_FP32), -1)
    top, ids = pypto.topk(probs, TOP, -1)
    weights[:] = top / pypto.sum(top, -1, keepdim=True)
    experts[:] = ids


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    w_gate = torch.randn(256, EXPERTS) * 0.05
    for tokens in (64, 37):
        x = torch.randn(tokens, 256)
        weights, experts = torch.empty(tokens, TOP), torch.empty(tokens, TOP, dtype=torch.int32)
        route(x, w_gate, weights, experts)
        top, ids = torch.topk(torch.softmax(x @ w_gate, -1), TOP, -1)
        checks.append(compare(f"router weights fp32 [{tokens},{TOP}]", weights, top / top.sum(-1, keepdim=True)))
        same = bool(torch.equal(experts.long(), ids))
        checks.append(Check(f"router experts int32 [{tokens},{TOP}] equal torch.topk's", 0.0, 0.0, 0.0, same))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "MoE router: top-2 experts per token"))
