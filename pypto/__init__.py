"""pypto: a CPU-runnable implementation of the public PyPTO tile-programming API.

Kernels written for PyPTO run unchanged: `@pypto.frontend.jit` traces the kernel body into
a tensor graph whose every node knows its source line (`pypto.ir`), and the reference
interpreter (`pypto.reference`) computes the outputs on the CPU. This module is only the
public surface; each name is defined in the module that owns it.
"""

from pypto import experimental, frontend, operation, pypto_impl, runtime
from pypto.frontend import capture as _capture
from pypto.frontend.jit import JitKernel, jit, npu_available
from pypto.frontend.jit import set_pass_verifier as _set_pass_verifier
from pypto.ir.dtypes import DataType, bytes_of
from pypto.ir.enums import (
    CachePolicy,
    CastMode,
    CompStage,
    PrecisionType,
    ReluType,
    RunMode,
    SaturationMode,
    TileOpFormat,
    TopKAlgo,
)
from pypto.ir.errors import PyptoError
from pypto.platform import platform
from pypto.tracing.api import (
    Element,
    abs,
    add,
    amax,
    amin,
    arange,
    argmax,
    argmin,
    assemble,
    cast,
    ceil,
    clip,
    clone,
    concat,
    cond,
    cos,
    div,
    eq,
    erf,
    erfc,
    exp,
    exp2,
    expand_clone,
    expm1,
    floor,
    full,
    gather,
    gathermask,
    ge,
    get_cube_tile_shapes,
    get_vec_tile_shapes,
    gt,
    index_select,
    is_loop_begin,
    is_loop_end,
    isfinite,
    isnan,
    le,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    loop,
    loop_unroll,
    lrelu,
    lt,
    matmul,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    ones,
    permute,
    pow,
    prod,
    reciprocal,
    relu,
    reshape,
    rms_norm,
    round,
    rsqrt,
    scatter,
    scatter_,
    scatter_update,
    set_cube_tile_shapes,
    set_matrix_size,
    set_semantic_label,
    set_vec_tile_shapes,
    sigmoid,
    sign,
    sin,
    softmax,
    sqrt,
    sub,
    sum,
    tan,
    tanh,
    tensor,
    topk,
    transpose,
    trunc,
    unsqueeze,
    var,
    view,
    where,
    zeros,
)
from pypto.tracing.composite import fillpad
from pypto.tracing.options import (
    get_codegen_options,
    get_debug_options,
    get_host_options,
    get_pass_options,
    get_runtime_options,
    get_verify_options,
    options,
    reset_options,
    set_codegen_options,
    set_debug_options,
    set_host_options,
    set_pass_options,
    set_runtime_options,
    set_verify_options,
)
from pypto.tracing.scalar import SymbolicScalar, ceildiv, symbolic_scalar
from pypto.tracing.scalar import scalar_max as max  # noqa: A004 - PyPTO's name
from pypto.tracing.scalar import scalar_min as min  # noqa: A004 - PyPTO's name
from pypto.tracing.tensor import DYNAMIC, STATIC, Tensor
from pypto.tracing.tiling import PyptoWarning

DYN = DYNAMIC
ReLuType = ReluType  # PyPTO's spelling

DT_FP32 = DataType.DT_FP32
DT_FP16 = DataType.DT_FP16
DT_BF16 = DataType.DT_BF16
DT_INT8 = DataType.DT_INT8
DT_INT16 = DataType.DT_INT16
DT_INT32 = DataType.DT_INT32
DT_INT64 = DataType.DT_INT64
DT_UINT8 = DataType.DT_UINT8
DT_BOOL = DataType.DT_BOOL
DT_UINT16 = DataType.DT_UINT16
DT_UINT32 = DataType.DT_UINT32
DT_UINT64 = DataType.DT_UINT64
DT_DOUBLE = DataType.DT_DOUBLE
DT_FP8E4M3 = DataType.DT_FP8E4M3
DT_FP8E5M2 = DataType.DT_FP8E5M2

__version__ = "0.1.0"



def _verify_compiled(ck: object, arrays: dict) -> object:
    """The composition root: `verify_options={"enable_pass_verify": True}` makes every call run the
    precision check, which lives in pypto.analysis, above the jit; the jit is handed it here."""
    from pypto.analysis.precision import verify_compiled  # start-up time: loaded by the first kernel that asks

    return verify_compiled(ck, arrays)


_set_pass_verifier(_verify_compiled)
_capture.install()  # every kernel call is recorded when PYPTO_CAPTURE is set (`pypto-ide capture`)

__all__ = [n for n in dir() if not n.startswith("_")]

# Tier T2/T3 names: present, and rejected with a PyptoError at the user's line when used.
from pypto.tracing import unsupported as _unsupported  # noqa: E402

globals().update(_unsupported.functions())
globals().update(_unsupported.dtypes)
__all__ = [n for n in dir() if not n.startswith("_")]
