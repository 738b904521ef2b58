"""A typo in a runtime option key of the jit decorator; the message lists the known keys."""

import torch

import pypto


def trigger() -> None:
    @pypto.jit(runtime_options={"run_mod": pypto.RunMode.SIM})  # ERROR: unknown runtime_options key 'run_mod'; known keys: .*run_mode
    def neg_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                   out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = -x

    x = torch.rand(8, 64)
    out = torch.empty(8, 64)
    neg_kernel(x, out)
