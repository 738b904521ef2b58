"""Writing an 8-row result at row offset 4 of an 8-row DYNAMIC output: on the device the
write would run past the end, so it is an error at the assemble's line."""

import torch

import pypto


@pypto.frontend.jit
def shifted(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    pypto.assemble(pypto.exp(x), [4, 0], out)  # ERROR: assemble: window \[4, 12\) on dim 0 runs past the destination, which has 8 in this call \(writing a \[8, 64\] tile at offsets \[4, 0\]\)


def trigger() -> None:
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    shifted(x, out)
