"""Matrix multiplication: plain, with a transposed right operand, and with a bias.

`pypto.matmul(a, b, out_dtype)` runs on the cube unit, whose tiles are set with
`pypto.set_cube_tile_shapes([mL0, mL1], [kL0, kL1], [nL0, nL1])`. It accumulates in fp32
whatever the inputs, so fp16 inputs can produce an fp32 result. `b_trans=True` reads the
right operand as [N, K]; `extend_params={"bias_tensor": bias}` adds a bias row to the
accumulator. Run: `.venv/bin/python examples/matmul.py`.
"""

import torch

import pypto
from pypto.testing import Check, compare

M, K, N = 96, 256, 128


@pypto.frontend.jit
def matmul_kernel(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor([M, N], pypto.DT_FP32)):
    """c = a @ b in fp32.

    pypto-inputs:
        a: fp16[96, 256]
        b: fp16[256, 128]
    """
    # cube tiles: 64x64 blocks of A and B in L0, with 128 of K staged in L1 (multiples of 16 elements)
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
    # a: [M, K], b: [K, N]; the result is fp32 for fp16 and for fp32 inputs
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


@pypto.frontend.jit
def matmul_bt_bias_kernel(a: pypto.Tensor([M, K], pypto.DT_FP16), b_t: pypto.Tensor([N, K], pypto.DT_FP16),
                          bias: pypto.Tensor([N], pypto.DT_FP32), c: pypto.Tensor([M, N], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
    # b_t is stored as [N, K] (the layout of a linear layer's weight); b_trans reads it as [K, N]
    c[:] = pypto.matmul(a, b_t, pypto.DT_FP32, b_trans=True, extend_params={"bias_tensor": bias})


def check() -> list[Check]:
    torch.manual_seed(0)
    checks = []
    for dtype in (torch.float16, torch.float32):
        a = torch.randn(M, K).to(dtype)
        b = torch.randn(K, N).to(dtype)
        c = torch.empty(M, N)
        matmul_kernel(a, b, c)
        # golden: fp32 matmul of the same values (fp16 products are exact in fp32)
        checks.append(compare(f"a @ b {str(dtype)[6:]} -> float32", c, a.float() @ b.float()))
    a = torch.randn(M, K).half()
    w = torch.randn(N, K).half()
    bias = torch.randn(N)
    c = torch.empty(M, N)
    matmul_bt_bias_kernel(a, w, bias, c)
    checks.append(compare("a @ w.T + bias float16 -> float32", c, a.float() @ w.float().T + bias))
    return checks


if __name__ == "__main__":
    raise SystemExit(pypto.testing.report(check(), "matmul: plain, b_trans, bias"))
