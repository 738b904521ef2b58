"""The small enums of the PyPTO API (cast modes, run modes, compile stages …).

They are plain `enum.IntEnum`s so that user code passing the integer PyPTO documents
(`run_mode: 1`) and code passing the enum member behave the same.
"""

from __future__ import annotations

import enum


class CastMode(enum.IntEnum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class SaturationMode(enum.IntEnum):
    OFF = 0
    ON = 1


class PrecisionType(enum.IntEnum):
    INTRINSIC = 0
    HIGH_PRECISION = 1


class TopKAlgo(enum.IntEnum):
    MERGE_SORT = 0
    RADIX_SELECT = 1


class TileOpFormat(enum.IntEnum):
    TILEOP_ND = 0
    TILEOP_NZ = 1
    TILEOP_ZN = 2


class CachePolicy(enum.IntEnum):
    """PyPTO's per-tensor L2 hints (`Tensor.set_cache_policy`)."""

    PREFETCH = 0
    NONE_CACHEABLE = 1


class RunMode(enum.IntEnum):
    NPU = 0
    SIM = 1


class CompStage(enum.IntEnum):
    """Where compilation stops (`host_options={"compile_stage": ...}`)."""

    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


class ReluType(enum.IntEnum):
    NO_RELU = 0
    RELU = 1


# Every enum class by name, for the graph text form.
ALL = {c.__name__: c for c in (CastMode, SaturationMode, PrecisionType, TopKAlgo, TileOpFormat,
                               CachePolicy, RunMode, CompStage, ReluType)}
