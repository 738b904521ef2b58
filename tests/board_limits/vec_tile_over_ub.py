"""A [128, 512] fp32 tile is 256 KiB: more than the 192 KiB vector buffer."""

import torch

import pypto


@pypto.frontend.jit
def layer_scale(x: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(128, 512)  # WARNING: vector tile \(128, 512\) of fp32 needs 262144 bytes, more than the 196608-byte UB
    out[:] = x * 0.1


def trigger() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.rand(256, 512)
    out = torch.empty(256, 512)
    layer_scale(x, out)
    return out, x * 0.1
