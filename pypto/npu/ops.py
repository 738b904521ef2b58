"""The `torch_npu` functions of the NPU stand-in, computed with torch's CPU math.

Each follows the torch_npu API reference's description of the operator (signature, formula, output
dtypes and shapes); docs/npu.md lists them with what each does not cover. They are goldens for
checking a kernel's values, so they compute in float32 (float64 for the integer matmul) and round once
to the documented output dtype. Rounding to an integer is round-half-to-even (`torch.round`).
"""

from __future__ import annotations

import enum
from typing import Any

import torch

MISSING = "is not part of PyPTO IDE's NPU stand-in (docs/npu.md)"


class Format(enum.IntEnum):
    """torch_npu.Format: the storage formats (ACL's aclFormat numbers)."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33


class HiFloat8:
    """torch_npu.hifloat8: a dtype torch's CPU build has no form of; the stand-in refuses it by name."""

    def __repr__(self) -> str:
        return "torch_npu.hifloat8"


HIFLOAT8 = HiFloat8()
FORMAT_ATTR = "pypto_npu_format"  # the storage format a tensor was cast to (its values never change)


def _refuse_hifloat8(*dtypes: Any) -> None:
    if any(isinstance(d, HiFloat8) for d in dtypes):
        raise NotImplementedError(f"torch_npu.hifloat8 {MISSING}: torch has no CPU dtype for it")


def get_npu_format(tensor: torch.Tensor) -> int:
    """The storage format of `tensor`: what npu_format_cast set, else ND (2)."""
    return int(getattr(tensor, FORMAT_ATTR, Format.ND))


def npu_format_cast(tensor: torch.Tensor, acl_format: int, customize_dtype: Any = None) -> torch.Tensor:
    """A copy of `tensor` in storage format `acl_format`. The format is how an NPU lays the data out
    in memory; the logical shape and values stay, so the copy equals the input."""
    out = tensor.clone()
    setattr(out, FORMAT_ATTR, int(acl_format))
    return out


def npu_format_cast_(tensor: torch.Tensor, src: Any) -> torch.Tensor:
    """In place: `tensor` takes the format `src` (a format number, or a tensor whose format it copies)."""
    fmt = get_npu_format(src) if isinstance(src, torch.Tensor) else int(src)
    setattr(tensor, FORMAT_ATTR, fmt)
    return tensor


def npu_dtype_cast(input: torch.Tensor, dtype: Any, input_dtype: Any = None) -> torch.Tensor:  # noqa: A002
    """`input` converted to `dtype` (torch's rounding to nearest even)."""
    _refuse_hifloat8(dtype, input_dtype)
    return input.to(dtype)


def npu_rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """RmsNorm over the trailing dims `gamma` spans: y = x / sqrt(mean(x²) + eps) * gamma, in x's dtype;
    rstd = 1 / sqrt(mean(x²) + eps) in float32, shaped as x with those dims kept as 1."""
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    xf = x.float()
    rstd = torch.rsqrt(xf.pow(2).mean(dim=dims, keepdim=True) + epsilon)
    return (xf * rstd * gamma.float()).to(x.dtype), rstd


def npu_swiglu(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """SwiGLU: `x` split in halves A, B along `dim`; Swish(A) * B = A * sigmoid(A) * B, in x's dtype."""
    a, b = x.float().chunk(2, dim=dim)
    return (torch.nn.functional.silu(a) * b).to(x.dtype)


def npu_rotary_mul(input: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor,  # noqa: A002
                   rotary_mode: str = "half") -> torch.Tensor:
    """Rotary position embedding: x * r1 + rotate(x) * r2 (r1: cos, r2: sin, broadcast). "half": the
    last dim's halves x1, x2 rotate to (-x2, x1); "interleave": each pair (a, b) to (-b, a)."""
    x = input.float()
    if rotary_mode == "half":
        x1, x2 = x.chunk(2, dim=-1)
        rot = torch.cat((-x2, x1), dim=-1)
    elif rotary_mode == "interleave":
        rot = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    else:
        raise ValueError(f"npu_rotary_mul: rotary_mode must be 'half' or 'interleave', not {rotary_mode!r}")
    return (x * r1.float() + rot * r2.float()).to(input.dtype)


INT_RANGES = {torch.int8: (-128, 127), torch.uint8: (0, 255), torch.int32: (-(2 ** 31), 2 ** 31 - 1)}
QUANT_DTYPES = {torch.qint8: torch.int8, torch.quint8: torch.uint8, torch.qint32: torch.int32}


def _saturate(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    lo, hi = INT_RANGES[dtype]
    return torch.round(x).clamp(lo, hi).to(dtype)


def npu_dynamic_quant(x: torch.Tensor, *, smooth_scales: torch.Tensor | None = None,
                      group_index: torch.Tensor | None = None,
                      dst_type: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token symmetric int8 quantization: each row (last dim) times `smooth_scales` (with `group_index`,
    row group i takes smooth_scales[i]: rows group_index[i-1]..group_index[i]), then
    scale = max|row| / 127, y = round(row / scale). Returns (y int8 shaped as x, scale float32 shaped as x
    without its last dim)."""
    _refuse_hifloat8(dst_type)
    if dst_type not in (None, torch.int8):
        raise NotImplementedError(f"npu_dynamic_quant(dst_type={dst_type}) {MISSING}: int8 only")
    xf = x.float()
    if group_index is not None:
        if smooth_scales is None:
            raise ValueError("npu_dynamic_quant: group_index needs smooth_scales")
        rows = xf.reshape(-1, x.shape[-1]).clone()
        start = 0
        for i, end in enumerate(int(v) for v in group_index.reshape(-1)):
            rows[start:end] *= smooth_scales[i].float()
            start = max(start, end)
        xf = rows.reshape(x.shape)
    elif smooth_scales is not None:
        xf = xf * smooth_scales.float()
    scale = xf.abs().amax(dim=-1) / 127.0
    safe = torch.where(scale == 0, torch.ones_like(scale), scale)
    return _saturate(xf / safe.unsqueeze(-1), torch.int8), scale


def npu_quantize(input: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None,  # noqa: A002
                 dtype: Any, axis: int = 1, div_mode: bool = True) -> torch.Tensor:
    """y = round(x / scales + zero_points) (div_mode) or round(x * scales + zero_points), saturated to
    `dtype` (torch.qint8 / quint8 / qint32 give int8 / uint8 / int32 tensors); a 1-D `scales` and
    `zero_points` run along `axis`, a full-rank one broadcasts."""
    out = QUANT_DTYPES.get(dtype, dtype)
    if out not in INT_RANGES:
        raise NotImplementedError(f"npu_quantize(dtype={dtype}) {MISSING}: qint8, quint8, qint32, int8, uint8, int32")
    x = input.float()

    def along(t: torch.Tensor) -> torch.Tensor:
        if t.dim() != 1 or x.dim() == 1:
            return t.float()
        shape = [1] * x.dim()
        shape[axis] = t.shape[0]
        return t.float().reshape(shape)

    y = x / along(scales) if div_mode else x * along(scales)
    if zero_points is not None:
        y = y + along(zero_points)
    return _saturate(y, out)


def npu_anti_quant(x: torch.Tensor, scale: torch.Tensor, *, offset: torch.Tensor | None = None,
                   dst_dtype: torch.dtype | None = None, src_dtype: Any = None) -> torch.Tensor:
    """Dequantize int8: (x + offset) * scale, in `dst_dtype` (float16 by default)."""
    if src_dtype not in (None, torch.int8):
        raise NotImplementedError(f"npu_anti_quant(src_dtype={src_dtype}) {MISSING}: int8 only")
    y = x.float()
    if offset is not None:
        y = y + offset.float()
    return (y * scale.float()).to(dst_dtype or torch.float16)


OFFSET_SHIFT = 37  # npu_trans_quant_param's packing: the float32 scale's bits low, a 9-bit offset from bit 37


def npu_trans_quant_param(scale: torch.Tensor, offset: torch.Tensor | None = None) -> torch.Tensor:
    """The int64 form of a quantized matmul's `scale` (and `offset`) that npu_quant_matmul takes: here the
    float32 scale's bits in the low 32 bits and the offset, rounded to a 9-bit integer, from bit 37.
    Only npu_quant_matmul reads it."""
    bits = scale.float().contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    if offset is not None:
        off = torch.round(offset.float()).clamp(-256, 255).to(torch.int64) & 0x1FF
        bits = bits | (off.expand_as(bits) << OFFSET_SHIFT)
    return bits


def _unpack_scale(packed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = (packed & 0xFFFFFFFF).to(torch.int32).view(torch.float32)
    off = (packed >> OFFSET_SHIFT) & 0x1FF
    return scale, torch.where(off >= 256, off - 512, off).float()


def npu_quant_matmul(x1: torch.Tensor, x2: torch.Tensor, scale: torch.Tensor, *, offset: torch.Tensor | None = None,
                     pertoken_scale: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                     output_dtype: torch.dtype | None = None) -> torch.Tensor:
    """Quantized matmul of int8 `x1` @ `x2` (batched, broadcast), accumulated exactly: + an int32 `bias`,
    times `scale` (per column; an int64 one from npu_trans_quant_param carries its offset), times
    `pertoken_scale` (per row), + a float `bias`; int8 output (None, the default): round(· + offset)
    saturated; float16 / bfloat16 / float32: cast."""
    if x1.dtype != torch.int8 or x2.dtype != torch.int8:
        raise NotImplementedError(f"npu_quant_matmul of {x1.dtype} @ {x2.dtype} {MISSING}: int8 inputs only")
    acc = torch.matmul(x1.double(), x2.double())
    int_bias = bias is not None and not bias.dtype.is_floating_point
    if bias is not None and int_bias:
        acc = acc + bias.double()
    if scale.dtype == torch.int64:
        s, packed_off = _unpack_scale(scale)
        offset = packed_off if offset is None else offset
    else:
        s = scale
    y = acc * s.double().reshape(-1)
    if pertoken_scale is not None:
        y = y * pertoken_scale.double().reshape(-1, 1)
    if bias is not None and not int_bias:
        y = y + bias.double()
    if output_dtype in (None, torch.int8):
        if offset is not None:
            y = y + offset.double().reshape(-1)
        return _saturate(y.float(), torch.int8)
    return y.float().to(output_dtype)
