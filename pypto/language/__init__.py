"""`import pypto.language as pl`: PyPTO 3's kernel language, the `@pl.jit` path (tier T1).

Why it exists: PyPTO 3 (hw-native-sys/pypto) and CANN PyPTO are both `import pypto`; one package
serves both, and a file's dialect is what it imports. This module gives PyPTO 3's names and
lowers them into our one pipeline: `pl.jit` kernels are traced by the jit CANN kernels use
(`pypto.frontend.jit`), their ops are the tracer's ops, and their records say `dialect: "pypto3"`.
What is supported, name by name, and what is not: docs/pypto3.md.
"""

from pypto.language import tile
from pypto.language.annotation import (
    BF16,
    BOOL,
    FP16,
    FP32,
    INDEX,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    InOut,
    Out,
    Scalar,
    Tensor,
    dynamic,
)
from pypto.language.control import (
    Level,
    SplitMode,
    at,
    cross_core_slot,
    parallel,
    pipeline,
    range,  # noqa: A004 - PyPTO 3's name
    split,
    spmd,
)
from pypto.language.kernel import CompiledProgram, FunctionType, PlKernel, Program, function, jit, program
from pypto.language.ops import (
    AtomicType,
    abs,  # noqa: A004 - PyPTO 3's name
    add,
    assemble,
    cast,
    col_expand,
    col_expand_add,
    col_expand_div,
    col_expand_mul,
    col_expand_sub,
    concat,
    create_tensor,
    div,
    exp,
    full,
    matmul,
    matmul_acc,
    maximum,
    minimum,
    mul,
    neg,
    recip,
    relu,
    reshape,
    row_expand,
    row_expand_add,
    row_expand_div,
    row_expand_mul,
    row_expand_sub,
    row_max,
    row_min,
    row_sum,
    rsqrt,
    slice,  # noqa: A004 - PyPTO 3's name
    sqrt,
    sub,
)
from pypto.language.sort import arange, gather, mrgsort, sort32
from pypto.language.tile import Mem, MemorySpace, PadValue, Tile, create_tile, load, move, store

__all__ = [
    "arange", "gather", "mrgsort", "sort32",
    "AtomicType", "FunctionType", "Program", "function", "program",
    "Mem", "MemorySpace", "PadValue", "SplitMode", "Tile", "col_expand", "concat", "create_tile",
    "cross_core_slot", "load", "move", "recip", "relu", "row_expand", "split", "store", "tile",
    "BF16", "BOOL", "FP16", "FP32", "INDEX", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32",
    "UINT64", "CompiledProgram", "InOut", "Level", "Out", "PlKernel", "Scalar", "Tensor", "abs", "add", "assemble",
    "at", "cast", "col_expand_add", "col_expand_div", "col_expand_mul", "col_expand_sub", "create_tensor", "div",
    "dynamic", "exp", "full", "jit", "matmul", "matmul_acc", "maximum", "minimum", "mul", "neg", "parallel", "range",
    "pipeline", "reshape", "row_expand_add", "row_expand_div", "row_expand_mul", "row_expand_sub", "row_max", "row_min",
    "row_sum", "rsqrt", "slice", "spmd", "sqrt", "sub",
]
