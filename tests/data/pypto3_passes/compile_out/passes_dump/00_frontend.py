# ruff: noqa: F821
# hand-written for tests: the shape of a printed-IR snapshot, not any real program's
def scale_add(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    with at(level=CORE_GROUP):
        t = mul(x, 2.0)
        out = add(t, y)
    return out
