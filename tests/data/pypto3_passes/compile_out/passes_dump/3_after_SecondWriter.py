# ruff: noqa: F821
# hand-written for tests: the shape of a printed-IR snapshot, not any real program's
def scale_add_incore_0(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    t_0 = mul(x, 2.0)
    out_0 = add(t_0, y)
    return out_0

def scale_add(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    out_0 = scale_add_incore_0(x, y)
    return out_0
