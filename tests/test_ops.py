"""Every T1 op of the spec (section 3) against torch on the CPU.

Each case jits a tiny kernel around one op (see `pk.run` in conftest.py), runs it on torch
tensors and compares with torch: dtypes exactly (except the documented divergences, which
compare values only and say so), ints and bools exactly, fp32 with rtol = atol = 1e-3
(3e-3 for softmax), fp16/bf16 by max-abs difference scaled to the dtype and value range.
"""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812

import pypto

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
ALL = FLOATS + INTS + [torch.bool]


def _id(v: object) -> str:
    if isinstance(v, torch.dtype):
        return str(v).replace("torch.", "")
    if isinstance(v, pypto.DataType):
        return v.short
    if isinstance(v, (list, tuple)):
        return "x".join(_id(e) for e in v) if v else "[]"
    return str(v)


def ids(values: list) -> list[str]:
    return [_id(v) for v in values]


@pytest.fixture(autouse=True)
def _seed(request: pytest.FixtureRequest) -> None:
    """Each test's random data depends on its id only (reproducible under any order or xdist split)."""
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def nonzero(t: torch.Tensor) -> torch.Tensor:
    """`t` with zeros replaced by ones (divisors)."""
    return torch.where(t == 0, torch.ones_like(t), t)


# ---- elementwise unary ------------------------------------------------------------------------

UNARY = [  # name, torch function, input range
    ("neg", torch.neg, -2, 2),
    ("abs", torch.abs, -2, 2),
    ("exp", torch.exp, -2, 2),
    ("exp2", torch.exp2, -2, 2),
    ("expm1", torch.expm1, -1, 1),
    ("log", torch.log, 0.1, 4),
    ("log1p", torch.log1p, -0.5, 3),
    ("log2", torch.log2, 0.1, 4),
    ("log10", torch.log10, 0.1, 4),
    ("sqrt", torch.sqrt, 0, 4),
    ("rsqrt", torch.rsqrt, 0.1, 4),
    ("reciprocal", torch.reciprocal, 0.2, 4),
    ("sign", torch.sign, -2, 2),
    ("ceil", torch.ceil, -3, 3),
    ("floor", torch.floor, -3, 3),
    ("trunc", torch.trunc, -3, 3),
    ("sin", torch.sin, -3, 3),
    ("cos", torch.cos, -3, 3),
    ("tan", torch.tan, -1.2, 1.2),
    ("tanh", torch.tanh, -3, 3),
    ("sigmoid", torch.sigmoid, -5, 5),
    ("relu", torch.relu, -1, 1),
    ("erf", torch.erf, -2, 2),
    ("erfc", torch.erfc, -2, 2),
]
SHAPES = [[37, 65], [2, 3, 5, 17], [100]]


@pytest.mark.parametrize("shape", SHAPES, ids=ids(SHAPES))
@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("name,tfn,lo,hi", UNARY, ids=[u[0] for u in UNARY])
def test_unary_float(pk, name, tfn, lo, hi, dtype, shape):
    x = pk.rand(shape, dtype, lo, hi)
    want, wdt = pk.reference(tfn, x)
    pk.check(pk.run(getattr(pypto, name), x), want, wdt, name=name)


INT_UNARY = [("neg", torch.neg), ("abs", torch.abs), ("sign", torch.sign), ("relu", torch.relu),
             ("ceil", torch.ceil), ("floor", torch.floor), ("trunc", torch.trunc)]


@pytest.mark.parametrize("dtype", INTS, ids=ids(INTS))
@pytest.mark.parametrize("name,tfn", INT_UNARY, ids=[u[0] for u in INT_UNARY])
def test_unary_int(pk, name, tfn, dtype):
    lo = 0 if dtype == torch.uint8 else -100
    x = pk.rand([37, 65], dtype, lo, 100)
    pk.check(pk.run(getattr(pypto, name), x), tfn(x), x.dtype, name=name)


INT_TO_FLOAT = [("exp", torch.exp), ("sqrt", torch.sqrt), ("sigmoid", torch.sigmoid), ("log1p", torch.log1p),
                ("reciprocal", torch.reciprocal), ("sin", torch.sin)]


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.uint8, torch.bool], ids=_id)
@pytest.mark.parametrize("name,tfn", INT_TO_FLOAT, ids=[u[0] for u in INT_TO_FLOAT])
def test_unary_int_to_float(pk, name, tfn, dtype):
    """Float-valued ops on integer/bool inputs return fp32, as torch's do."""
    x = pk.rand([5, 40], dtype, 1, 6)
    pk.check(pk.run(getattr(pypto, name), x), tfn(x), torch.float32, name=name)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round(pk, dtype, decimals):
    x = pk.rand([37, 65], dtype, -50, 50)
    want, wdt = pk.reference(lambda t: torch.round(t, decimals=decimals), x)
    pk.check(pk.run(lambda a: pypto.round(a, decimals), x), want, wdt)
    if decimals == 0:  # the default; ties go to even (2.5 -> 2)
        h = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.25], dtype=dtype)
        pk.check(pk.run(pypto.round, h), torch.round(h), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("slope", [None, 0.2, 1.5])
def test_lrelu(pk, dtype, slope):
    x = pk.rand([3, 5, 33], dtype, -3, 3)
    if slope is None:
        fn, tfn = pypto.lrelu, F.leaky_relu  # default negative_slope 0.01, as torch's
    else:
        def fn(a):
            return pypto.lrelu(a, negative_slope=slope)

        def tfn(t):
            return F.leaky_relu(t, slope)
    want, wdt = pk.reference(tfn, x)
    pk.check(pk.run(fn, x), want, wdt)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int8], ids=_id)
def test_isnan_isfinite_logical_not(pk, dtype):
    x = pk.rand([37, 65], dtype, -3, 3)
    if dtype.is_floating_point:
        x[0, :5] = float("nan")
        x[1, :5] = float("inf")
        x[2, :5] = float("-inf")
        x[3, :5] = 0
    for fn, tfn in ((pypto.isnan, torch.isnan), (pypto.isfinite, torch.isfinite),
                    (pypto.logical_not, torch.logical_not)):
        want = tfn(x)
        if dtype.is_floating_point or fn is pypto.logical_not:  # both outcomes present: the check can fail
            assert 0 < int(want.sum()) < want.numel()
        pk.check(pk.run(fn, x), want, torch.bool, name=fn.__name__)


def test_logical_not_bool_and_invert(pk):
    b = pk.rand([3, 5, 33], torch.bool)
    pk.check(pk.run(pypto.logical_not, b), ~b, torch.bool)
    pk.check(pk.run(lambda t: ~t, b), ~b, torch.bool)


# ---- elementwise binary -----------------------------------------------------------------------

BINARY = [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div),
          ("maximum", torch.maximum), ("minimum", torch.minimum), ("pow", torch.pow)]
PAIRS = [([37, 65], [65]), ([65], [37, 65]), ([3, 1, 33], [1, 5, 33]), ([100], [100]),
         ([2, 3, 5, 40], [2, 1, 5, 1])]


def binary_inputs(pk, name, dtype, sa, sb):
    if dtype.is_floating_point:
        if name == "pow":
            return pk.rand(sa, dtype, 0.5, 2), pk.rand(sb, dtype, -2, 2)
        a = pk.rand(sa, dtype, -2, 2)
        b = pk.rand(sb, dtype, 0.5, 2) * torch.where(pk.rand(sb, torch.bool), 1, -1).to(dtype)
        return a, b
    lo = 0 if dtype == torch.uint8 else -10
    if name == "pow":
        return pk.rand(sa, dtype, max(lo, -3), 4), pk.rand(sb, dtype, 0, 4)
    return pk.rand(sa, dtype, lo, 10), nonzero(pk.rand(sb, dtype, lo, 10))


@pytest.mark.parametrize("sa,sb", PAIRS, ids=[f"{_id(a)}-{_id(b)}" for a, b in PAIRS])
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=ids(FLOATS + INTS))
@pytest.mark.parametrize("name,tfn", BINARY, ids=[b[0] for b in BINARY])
def test_binary(pk, name, tfn, dtype, sa, sb):
    """The module functions, written in place into an output of torch's result dtype and shape."""
    a, b = binary_inputs(pk, name, dtype, sa, sb)
    want, wdt = pk.reference(tfn, a, b)
    out = torch.empty(want.shape, dtype=wdt)
    pk.check(pk.run(getattr(pypto, name), a, b, out=out), want, wdt, name=name)


OPERATORS = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b), ("floordiv", lambda a, b: a // b), ("mod", lambda a, b: a % b),
    ("pow", lambda a, b: a ** b), ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b),
    ("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b), ("neg_add", lambda a, b: -a + b),
]


@pytest.mark.parametrize("sa,sb", PAIRS[:3], ids=[f"{_id(a)}-{_id(b)}" for a, b in PAIRS[:3]])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8], ids=_id)
@pytest.mark.parametrize("name,op", OPERATORS, ids=[o[0] for o in OPERATORS])
def test_operators(pk, name, op, dtype, sa, sb):
    """The tensor operators mean what torch's do (the same lambda runs on both)."""
    a, b = binary_inputs(pk, "pow" if name == "pow" else "div", dtype, sa, sb)
    if name in ("eq", "ne", "lt", "le", "gt", "ge"):  # many equal pairs so that == and <= matter
        a, b = (a.round(), b.round()) if dtype.is_floating_point else (a % 3, b % 3)
    want, wdt = pk.reference(op, a, b)
    pk.check(pk.run(op, a, b), want, wdt, name=name)


SCALAR_OPS = [  # name, op, float range, int range (None: float only)
    ("x*0.5", lambda x: x * 0.5, (-2, 2), (-10, 10)),
    ("0.5*x", lambda x: 0.5 * x, (-2, 2), (-10, 10)),
    ("2-x", lambda x: 2 - x, (-2, 2), (-10, 10)),
    ("x-2", lambda x: x - 2, (-2, 2), (-10, 10)),
    ("x+1", lambda x: x + 1, (-2, 2), (-10, 10)),
    ("1.5+x", lambda x: 1.5 + x, (-2, 2), (-10, 10)),
    ("x*3", lambda x: x * 3, (-2, 2), (-10, 10)),
    ("x/4", lambda x: x / 4, (-2, 2), (-10, 10)),
    ("1/x", lambda x: 1 / x, (0.5, 3), (1, 10)),
    ("x**2", lambda x: x ** 2, (-2, 2), (-10, 10)),
    ("x**0.5", lambda x: x ** 0.5, (0.5, 3), (1, 10)),
    ("2**x", lambda x: 2 ** x, (-2, 2), (0, 6)),
    ("x//3", lambda x: x // 3, (-5, 5), (-10, 10)),
    ("7//x", lambda x: 7 // x, (0.5, 3), (1, 10)),
    ("x%3", lambda x: x % 3, (-5, 5), (-10, 10)),
    ("7%x", lambda x: 7 % x, (0.5, 3), (1, 10)),
    ("-x", lambda x: -x, (-2, 2), (-10, 10)),
    ("x>0.25", lambda x: x > 0.25, (-2, 2), (-10, 10)),
    ("0.25<x", lambda x: 0.25 < x, (-2, 2), (-10, 10)),
    ("x==1", lambda x: x == 1, (0, 3), (0, 3)),
    ("x!=1", lambda x: x != 1, (0, 3), (0, 3)),
    ("x<=1", lambda x: x <= 1, (0, 3), (0, 3)),
    ("x>=1", lambda x: x >= 1, (0, 3), (0, 3)),
]


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int16, torch.int64], ids=_id)
@pytest.mark.parametrize("name,op,frange,irange", SCALAR_OPS, ids=[s[0] for s in SCALAR_OPS])
def test_python_scalars(pk, name, op, frange, irange, dtype):
    """Python scalars on either side broadcast and only lift the dtype category (torch's rule)."""
    lo, hi = frange if dtype.is_floating_point else irange
    x = pk.rand([37, 65], dtype, lo, hi)
    if name.startswith("x==") or name.startswith("x!=") or name.startswith("x<=") or name.startswith("x>="):
        x = x.round()
    want, wdt = pk.reference(op, x)
    pk.check(pk.run(op, x), want, wdt, name=name)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=_id)
def test_maximum_minimum_scalar(pk, name, dtype):
    x = pk.rand([37, 65], dtype, -5, 5)
    want = torch.clamp(x, min=0) if name == "maximum" else torch.clamp(x, max=0)
    pk.check(pk.run(lambda a: getattr(pypto, name)(a, 0), x), want, dtype)
    pk.check(pk.run(lambda a: getattr(pypto, name)(0, a), x), want, dtype)


PROMOTIONS = [(torch.float16, torch.bfloat16), (torch.int8, torch.uint8), (torch.int32, torch.float16),
              (torch.bool, torch.int8), (torch.int64, torch.float32), (torch.float16, torch.float32),
              (torch.uint8, torch.int16), (torch.bool, torch.float16), (torch.int16, torch.int32),
              (torch.bfloat16, torch.int64), (torch.bool, torch.bool)]


@pytest.mark.parametrize("da,db", PROMOTIONS, ids=[f"{_id(a)}-{_id(b)}" for a, b in PROMOTIONS])
@pytest.mark.parametrize("op", ["add", "mul", "maximum", "eq"])
def test_mixed_dtype_promotion(pk, op, da, db):
    a, b = pk.rand([37, 65], da, 0, 5), pk.rand([65], db, 0, 5)
    tfn = getattr(torch, op)
    want, wdt = pk.reference(tfn, a, b)
    pk.check(pk.run(getattr(pypto, op), a, b), want, wdt, name=op)


@pytest.mark.parametrize("dtype", ALL, ids=ids(ALL))
@pytest.mark.parametrize("name", ["eq", "ne", "gt", "ge", "lt", "le"])
def test_comparisons(pk, name, dtype):
    a = pk.rand([3, 1, 33], dtype, 0, 4)
    b = pk.rand([1, 5, 33], dtype, 0, 4)
    if dtype.is_floating_point:
        a, b = a.round(), b.round()
    want = getattr(torch, name)(a, b)
    assert 0 < int(want.sum()) < want.numel()
    pk.check(pk.run(getattr(pypto, name), a, b), want, torch.bool, name=name)
    pk.check(pk.run(lambda t: getattr(pypto, name)(t, 2), a), getattr(torch, name)(a, 2), torch.bool, name=name)


@pytest.mark.parametrize("da,db", [(torch.bool, torch.bool), (torch.float32, torch.float32),
                                   (torch.int32, torch.bool)], ids=_id)
def test_logical_and(pk, da, db):
    a = pk.rand([37, 1], da, 0, 2)
    b = pk.rand([65], db, 0, 2)
    want = torch.logical_and(a, b)
    pk.check(pk.run(pypto.logical_and, a, b), want, torch.bool)
    if da == db == torch.bool:
        pk.check(pk.run(lambda x, y: x & y, a, b), want, torch.bool)
        pk.check(pk.run(lambda x, y: x.logical_and(y), a, b), want, torch.bool)


# ---- where, clip -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8], ids=_id)
def test_where(pk, dtype):
    cond = pk.rand([37, 1], torch.bool)
    x = pk.rand([37, 65], dtype, -10, 10)
    y = pk.rand([65], dtype, -10, 10)
    pk.check(pk.run(pypto.where, cond, x, y), torch.where(cond, x, y), dtype, name="tensors")
    s = 0.5 if dtype.is_floating_point else 3
    pk.check(pk.run(lambda c, a: pypto.where(c, a, s), cond, x), torch.where(cond, x, s), dtype, name="scalar other")
    pk.check(pk.run(lambda c, b: pypto.where(c, s, b), cond, y), torch.where(cond, s, y), dtype, name="scalar input")


def test_where_scalars_and_mixed(pk):
    cond = pk.rand([3, 5, 33], torch.bool)
    pk.check(pk.run(lambda c: pypto.where(c, 1.0, -2.5), cond), torch.where(cond, 1.0, -2.5), torch.float32)
    pk.check(pk.run(lambda c: pypto.where(c, 1, 0), cond), torch.where(cond, 1, 0), torch.int64)
    a = pk.rand([3, 5, 33], torch.float16)
    b = pk.rand([33], torch.float32)
    pk.check(pk.run(pypto.where, cond, a, b), torch.where(cond, a, b), torch.float32)
    # the condition from a comparison inside the kernel, and the method form
    x = pk.rand([3, 5, 33])
    pk.check(pk.run(lambda t: (t > 0).where(t, 0.0), x), torch.where(x > 0, x, 0.0), torch.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("lo,hi", [(-0.5, 0.5), (None, 0.3), (-0.2, None), (0.1, 0.1)], ids=_id)
def test_clip_scalars(pk, dtype, lo, hi):
    x = pk.rand([37, 65], dtype, -1, 1)
    want, wdt = pk.reference(lambda t: torch.clamp(t, min=lo, max=hi), x)
    pk.check(pk.run(lambda a: pypto.clip(a, lo, hi), x), want, wdt)
    pk.check(pk.run(lambda a: a.clip(min=lo, max=hi), x), want, wdt)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64], ids=_id)
def test_clip_int(pk, dtype):
    x = pk.rand([37, 65], dtype, -100, 100)
    pk.check(pk.run(lambda a: pypto.clip(a, -30, 40), x), torch.clamp(x, -30, 40), dtype)


def test_clip_int_with_float_bounds_promotes(pk):
    x = pk.rand([37, 65], torch.int32, -5, 5)
    pk.check(pk.run(lambda a: pypto.clip(a, -2.5, 1.5), x), torch.clamp(x, -2.5, 1.5), torch.float32)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_clip_tensors(pk, dtype):
    x = pk.rand([3, 5, 33], dtype, -1, 1)
    lo = pk.rand([33], dtype, -0.6, 0)
    hi = pk.rand([5, 1], dtype, 0, 0.6)
    want, wdt = pk.reference(lambda t, a, b: torch.clamp(t, a, b), x, lo, hi)
    pk.check(pk.run(lambda t, a, b: pypto.clip(t, a, b), x, lo, hi), want, wdt)
    want, wdt = pk.reference(lambda t, b: torch.clamp(t, max=b), x, hi)
    pk.check(pk.run(lambda t, b: pypto.clip(t, max=b), x, hi), want, wdt)


# ---- cast ---------------------------------------------------------------------------------------

PD = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16,
      torch.int8: pypto.DT_INT8, torch.int16: pypto.DT_INT16, torch.int32: pypto.DT_INT32,
      torch.int64: pypto.DT_INT64, torch.uint8: pypto.DT_UINT8, torch.bool: pypto.DT_BOOL}


@pytest.mark.parametrize("dst", ALL, ids=ids(ALL))
@pytest.mark.parametrize("src", ALL, ids=ids(ALL))
def test_cast_pairs(pk, src, dst):
    """Every T1 dtype to every other, on values all of them hold (floats get a .25 fraction, so float ->
    int truncation shows); bool is `!= 0`."""
    x = pk.rand([37, 65], src, 0, 30)
    if src.is_floating_point:
        x = x.round() + torch.where(pk.rand(x.shape, torch.bool), 0.25, 0.0).to(src)
    x[0, :4] = 0
    pk.check(pk.run(lambda a: pypto.cast(a, PD[dst]), x), x.to(dst), dst)
    pk.check(pk.run(lambda a: a.cast(PD[dst]), x), x.to(dst), dst, name="method")


def _round_half_away(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t >= 0, torch.floor(t + 0.5), torch.ceil(t - 0.5))


MODES = [(pypto.CastMode.CAST_NONE, torch.trunc), (pypto.CastMode.CAST_RINT, torch.round),
         (pypto.CastMode.CAST_ROUND, _round_half_away), (pypto.CastMode.CAST_FLOOR, torch.floor),
         (pypto.CastMode.CAST_CEIL, torch.ceil), (pypto.CastMode.CAST_TRUNC, torch.trunc)]
TIES = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -1.75, 1.25, 0.0, -0.25]


@pytest.mark.parametrize("dst", [torch.int32, torch.int8, torch.int16, torch.int64], ids=_id)
@pytest.mark.parametrize("src", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("mode,tfn", MODES, ids=[m[0].name for m in MODES])
def test_cast_modes_float_to_int(pk, mode, tfn, src, dst):
    x = torch.cat([torch.tensor(TIES * 4), pk.rand([80], torch.float32, -20, 20)]).to(src).reshape(4, 32)
    want = tfn(x.double()).to(dst)
    pk.check(pk.run(lambda a: pypto.cast(a, PD[dst], mode), x), want, dst, name=mode.name)


@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16], ids=_id)
@pytest.mark.parametrize("mode", [pypto.CastMode.CAST_FLOOR, pypto.CastMode.CAST_CEIL, pypto.CastMode.CAST_TRUNC,
                                  pypto.CastMode.CAST_RINT, pypto.CastMode.CAST_NONE], ids=lambda m: m.name)
def test_cast_modes_float_narrowing(pk, mode, dst):
    """fp32 -> fp16/bf16 with a rounding mode: the result brackets the input as the mode says."""
    x = pk.rand([8, 64], torch.float32, -4, 4)
    x[0, :4] = torch.tensor([0.0, 1.0, -2.0, 0.5])  # exactly representable: unchanged in every mode
    got = pk.run(lambda a: pypto.cast(a, PD[dst], mode), x)
    assert got.dtype == dst
    npdt = np.float16 if dst == torch.float16 else ml_dtypes.bfloat16
    y = pk.to_np(got).astype(npdt)
    up = np.nextafter(y, np.array(np.inf, dtype=npdt)).astype(np.float64)
    down = np.nextafter(y, np.array(-np.inf, dtype=npdt)).astype(np.float64)
    yf, xf = y.astype(np.float64), x.double().numpy()
    if mode is pypto.CastMode.CAST_FLOOR:
        assert np.all((yf <= xf) & (xf < up))
    elif mode is pypto.CastMode.CAST_CEIL:
        assert np.all((down < xf) & (xf <= yf))
    elif mode is pypto.CastMode.CAST_TRUNC:
        assert np.all(np.where(xf >= 0, (yf <= xf) & (xf < up), (down < xf) & (xf <= yf)))
    else:  # round to nearest even: what torch's .to() does
        assert torch.equal(got, x.to(dst))
    assert np.all(yf[0, :4] == [0.0, 1.0, -2.0, 0.5])


@pytest.mark.parametrize("dst,tie,even,away", [(torch.float16, 1 + 2 ** -11, 1.0, 1 + 2 ** -10),
                                               (torch.bfloat16, 1 + 2 ** -8, 1.0, 1 + 2 ** -7)], ids=_id)
def test_cast_round_ties_float(pk, dst, tie, even, away):
    """A tie between two representable values: CAST_RINT picks the even one, CAST_ROUND the one away from 0."""
    x = torch.tensor([tie, -tie] * 16, dtype=torch.float32).reshape(1, 32)
    exp_even = torch.tensor([even, -even] * 16, dtype=torch.float32).reshape(1, 32).to(dst)
    exp_away = torch.tensor([away, -away] * 16, dtype=torch.float32).reshape(1, 32).to(dst)
    pk.check(pk.run(lambda a: pypto.cast(a, PD[dst], pypto.CastMode.CAST_RINT), x), exp_even, dst, atol=0)
    pk.check(pk.run(lambda a: pypto.cast(a, PD[dst], pypto.CastMode.CAST_ROUND), x), exp_away, dst, atol=0)


def test_cast_saturation(pk):
    on, off = pypto.SaturationMode.ON, pypto.SaturationMode.OFF
    rint = pypto.CastMode.CAST_RINT
    x = pk.rand([8, 64], torch.float32, -1000, 1000)
    pk.check(pk.run(lambda a: pypto.cast(a, pypto.DT_INT8, rint, on), x),
             torch.clamp(torch.round(x), -128, 127).to(torch.int8), torch.int8, name="fp32->int8 sat")
    pk.check(pk.run(lambda a: pypto.cast(a, pypto.DT_UINT8, rint, satmode=on), x),
             torch.clamp(torch.round(x), 0, 255).to(torch.uint8), torch.uint8, name="fp32->uint8 sat")
    i = pk.rand([8, 64], torch.int32, -1000, 1000)
    pk.check(pk.run(lambda a: pypto.cast(a, pypto.DT_INT8, satmode=on), i),
             torch.clamp(i, -128, 127).to(torch.int8), torch.int8, name="int32->int8 sat")
    pk.check(pk.run(lambda a: pypto.cast(a, pypto.DT_INT8, satmode=off), i), i.to(torch.int8), torch.int8,
             name="int32->int8 wraps")
    big = x * 1000.0
    pk.check(pk.run(lambda a: pypto.cast(a, pypto.DT_FP16, satmode=on), big),
             torch.clamp(big, -65504, 65504).half(), torch.float16, name="fp32->fp16 sat", atol=0)
    assert int(torch.isinf(big.half()).sum()) > 0  # so the next check tests overflow to inf
    got = pk.run(lambda a: pypto.cast(a, pypto.DT_FP16), big)
    assert torch.equal(torch.isinf(got), torch.isinf(big.half()))
    huge = torch.tensor([3.4e38, -3.4e38] * 16, dtype=torch.float32)
    bmax = torch.finfo(torch.bfloat16).max
    pk.check(pk.run(lambda a: pypto.cast(a, pypto.DT_BF16, satmode=on), huge),
             torch.tensor([bmax, -bmax] * 16, dtype=torch.bfloat16), torch.bfloat16, atol=0)


# ---- reductions ---------------------------------------------------------------------------------

RED_CASES = [([37, 65], 0), ([37, 65], 1), ([37, 65], -1), ([37, 65], -2), ([3, 5, 33], 1),
             ([2, 3, 5, 40], -3), ([2, 3, 5, 40], 3), ([100], 0), ([100], -1)]
RED_IDS = [f"{_id(s)}-d{d}" for s, d in RED_CASES]


def red_input(pk, op, dtype, shape):
    if dtype.is_floating_point:
        return pk.rand(shape, dtype, 0.8, 1.25) if op == "prod" else pk.rand(shape, dtype, -2, 2)
    if op == "prod":  # +-1 (and a few 2s in short rows): no overflow
        return (pk.rand(shape, dtype, 0, 2) * 2 - 1).to(dtype)
    lo, hi = (-1, 2) if dtype == torch.int8 else (-100, 100)
    return pk.rand(shape, dtype, lo, hi)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", RED_CASES, ids=RED_IDS)
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int8], ids=_id)
@pytest.mark.parametrize("op", ["sum", "amax", "amin", "prod"])
def test_reduce(pk, op, dtype, shape, dim, keepdim):
    x = red_input(pk, op, dtype, shape)
    want, wdt = pk.reference(lambda t: getattr(torch, op)(t, dim, keepdim=keepdim), x)
    if op in ("sum", "prod") and not dtype.is_floating_point:
        wdt = dtype  # documented divergence: integer sum/prod keep their dtype (torch: int64); values compared
    got = pk.run(lambda a: getattr(pypto, op)(a, dim, keepdim), x)
    pk.check(got, want, wdt, name=op)
    got = pk.run(lambda a: getattr(a, op)(dim=dim, keepdim=keepdim), x)  # the method form
    pk.check(got, want, wdt, name=f"x.{op}")


@pytest.mark.parametrize("op", ["sum", "amax", "argmin"])
def test_reduce_to_0d_inplace(pk, op):
    """A 1-D reduction gives a 0-d tensor, written with `out[...] = ` (or `out.move`) into a 0-d output."""
    x = pk.rand([100])
    want = getattr(torch, op)(x, 0)
    out = torch.empty((), dtype=torch.int32 if op == "argmin" else torch.float32)

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), o: pypto.Tensor(), o2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32)
        o[...] = getattr(pypto, op)(a, 0)
        o2.move(getattr(pypto, op)(a, -1))

    out2 = torch.empty_like(out)
    k(x, out, out2)
    pk.check(out, want, out.dtype)
    pk.check(out2, want, out.dtype)


def test_sum_bool(pk):
    x = pk.rand([37, 65], torch.bool)
    pk.check(pk.run(lambda a: pypto.sum(a, -1), x), torch.sum(x, -1), torch.int64)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", RED_CASES[::2], ids=RED_IDS[::2])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int8], ids=_id)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argreduce(pk, op, dtype, shape, dim, keepdim):
    # distinct values along `dim` (a random permutation of 0..n-1): the answer is unique
    x = (pk.rand(shape, torch.float32).argsort(dim=dim) - 20).to(dtype)
    want = getattr(torch, op)(x, dim, keepdim=keepdim)
    # documented divergence: argmax/argmin return int32 (torch: int64); values compared
    pk.check(pk.run(lambda a: getattr(pypto, op)(a, dim, keepdim), x), want, torch.int32, name=op)


VAR_CASES = [([37, 65], -1, 1, False), ([37, 65], 0, 0, True), ([3, 5, 33], 1, 2, False),
             ([3, 5, 33], (0, 2), 1, False), ([3, 5, 33], [-1, 0], 0, True), ([37, 65], None, 1, False),
             ([2, 3, 5, 40], None, 0, True), ([100], 0, 1, False), ([2, 3, 5, 40], -2, 1, True)]


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("shape,dim,correction,keepdim", VAR_CASES,
                         ids=[f"{_id(s)}-d{_id(d)}-c{c}-k{int(k)}" for s, d, c, k in VAR_CASES])
def test_var(pk, dtype, shape, dim, correction, keepdim):
    x = pk.rand(shape, dtype, -2, 3)
    tdim = tuple(dim) if isinstance(dim, list) else dim
    want, wdt = pk.reference(lambda t: torch.var(t, dim=tdim, correction=correction, keepdim=keepdim), x)
    got = pk.run(lambda a: pypto.var(a, dim, correction=correction, keepdim=keepdim), x)
    pk.check(got, want, wdt)
    if dim is not None:
        pk.check(pk.run(lambda a: a.var(dim, correction=correction, keepdim=keepdim), x), want, wdt, name="method")


def test_var_default_correction_is_bessel(pk):
    x = pk.rand([8, 32], torch.float32)
    pk.check(pk.run(lambda a: pypto.var(a, -1), x), torch.var(x, -1), torch.float32)
    assert not torch.allclose(torch.var(x, -1), torch.var(x, -1, correction=0), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("shape,dim", [([37, 65], -1), ([37, 65], 0), ([3, 5, 33], 1), ([2, 3, 5, 40], -1),
                                       ([100], 0)], ids=_id)
def test_softmax(pk, dtype, shape, dim):
    x = pk.rand(shape, dtype, -4, 4)
    want, wdt = pk.reference(lambda t: torch.softmax(t, dim), x)
    pk.check(pk.run(lambda a: pypto.softmax(a, dim), x), want, wdt, rtol=3e-3, atol=3e-3)
    pk.check(pk.run(lambda a: a.softmax(dim), x), want, wdt, rtol=3e-3, atol=3e-3, name="method")


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("shape", [[37, 65], [2, 3, 5, 40], [100]], ids=_id)
@pytest.mark.parametrize("gamma", [False, True])
def test_rms_norm(pk, dtype, shape, gamma):
    x = pk.rand(shape, dtype, -2, 2)
    n = shape[-1]
    if gamma:
        g = pk.rand([n], dtype, 0.5, 1.5)
        want, wdt = pk.reference(lambda t, w: F.rms_norm(t, (n,), weight=w, eps=1e-6), x, g)
        pk.check(pk.run(lambda a, w: pypto.rms_norm(a, w), x, g), want, wdt)
    else:
        want, wdt = pk.reference(lambda t: F.rms_norm(t, (n,), eps=1e-6), x)
        pk.check(pk.run(pypto.rms_norm, x), want, wdt)
        # epsilon matters when the rows are tiny
        small = x * 1e-3
        want, wdt = pk.reference(lambda t: F.rms_norm(t, (n,), eps=1e-4), small)
        pk.check(pk.run(lambda a: pypto.rms_norm(a, epsilon=1e-4), small), want, wdt, ulps=4)


# ---- layout and data movement --------------------------------------------------------------------

LAYOUT = [  # name, pypto fn, torch fn, input shape
    ("view_offsets", lambda x: pypto.view(x, [16, 32], [5, 7]), lambda x: x[5:21, 7:39], [37, 65]),
    ("view_kw", lambda x: pypto.view(x, shape=[1, 5, 20], offsets=[2, 0, 13]), lambda x: x[2:3, :, 13:33],
     [3, 5, 33]),
    ("view_method", lambda x: x.view([2, 1, 5, 8], [0, 2, 0, 32]), lambda x: x[:, 2:3, :, 32:40], [2, 3, 5, 40]),
    ("view_no_offsets", lambda x: pypto.view(x, [10, 65]), lambda x: x[:10], [37, 65]),
    ("slice", lambda x: x[3:20, 10:], lambda x: x[3:20, 10:], [37, 65]),
    ("slice_ellipsis", lambda x: x[1:3, ...], lambda x: x[1:3, ...], [3, 5, 33]),
    ("slice_negative", lambda x: x[-5:, :-3], lambda x: x[-5:, :-3], [37, 65]),
    ("slice_1d", lambda x: x[17:83], lambda x: x[17:83], [100]),
    ("index_int", lambda x: x[2], lambda x: x[2], [37, 65]),
    ("index_mixed", lambda x: x[1, 2:4], lambda x: x[1, 2:4], [2, 3, 5, 40]),
    ("index_negative", lambda x: x[:, -1], lambda x: x[:, -1], [37, 65]),
    ("reshape_flat", lambda x: pypto.reshape(x, [37 * 65]), lambda x: x.reshape(-1), [37, 65]),
    ("reshape_neg1", lambda x: pypto.reshape(x, [5, -1]), lambda x: x.reshape(5, -1), [3, 5, 33]),
    ("reshape_method", lambda x: x.reshape([6, -1, 40]), lambda x: x.reshape(6, -1, 40), [2, 3, 5, 40]),
    ("reshape_up", lambda x: pypto.reshape(x, [4, 25]), lambda x: x.reshape(4, 25), [100]),
    ("transpose", lambda x: pypto.transpose(x, 0, 1), lambda x: x.transpose(0, 1), [37, 65]),
    ("transpose_neg", lambda x: pypto.transpose(x, -1, -3), lambda x: x.transpose(-1, -3), [2, 3, 5, 40]),
    ("transpose_method", lambda x: x.transpose(2, 0), lambda x: x.transpose(2, 0), [3, 5, 33]),
    ("permute", lambda x: pypto.permute(x, [2, 0, 1]), lambda x: x.permute(2, 0, 1), [3, 5, 33]),
    ("permute_4d", lambda x: pypto.permute(x, [3, 1, 0, 2]), lambda x: x.permute(3, 1, 0, 2), [2, 3, 5, 40]),
    ("permute_neg", lambda x: x.permute([-1, 0, 1]), lambda x: x.permute(-1, 0, 1), [3, 5, 33]),
    ("unsqueeze0", lambda x: pypto.unsqueeze(x, 0), lambda x: x.unsqueeze(0), [37, 65]),
    ("unsqueeze_neg", lambda x: pypto.unsqueeze(x, -1), lambda x: x.unsqueeze(-1), [37, 65]),
    ("unsqueeze_mid", lambda x: x.unsqueeze(1), lambda x: x.unsqueeze(1), [3, 5, 33]),
    ("clone", pypto.clone, torch.clone, [3, 5, 33]),
    ("clone_method", lambda x: x.clone(), torch.clone, [100]),
    ("expand_rows", lambda x: pypto.expand_clone(x, [37, 65]), lambda x: x.expand(37, 65).clone(), [1, 65]),
    ("expand_mid", lambda x: pypto.expand_clone(x, [3, 5, 33]), lambda x: x.expand(3, 5, 33).clone(), [3, 1, 33]),
    ("expand_rank", lambda x: pypto.expand_clone(x, [4, 100]), lambda x: x.expand(4, 100).clone(), [100]),
    ("expand_neg1", lambda x: x.expand_clone([37, -1]), lambda x: x.expand(37, -1).clone(), [1, 65]),
    ("view_then_op", lambda x: pypto.transpose(x[2:9, 5:45], 0, 1) * 2,
     lambda x: x[2:9, 5:45].transpose(0, 1) * 2, [37, 65]),
]
LAYOUT_DTYPES = [torch.float32, torch.bfloat16, torch.int8, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", LAYOUT_DTYPES, ids=ids(LAYOUT_DTYPES))
@pytest.mark.parametrize("name,fn,tfn,shape", LAYOUT, ids=[c[0] for c in LAYOUT])
def test_layout(pk, name, fn, tfn, shape, dtype):
    x = pk.rand(shape, dtype, -50, 50)
    want = tfn(x)
    pk.check(pk.run(fn, x), want, want.dtype, name=name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool], ids=_id)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_concat(pk, dtype, dim):
    shapes = {0: ([5, 33], [12, 33], [1, 33]), 1: ([5, 7], [5, 33], [5, 1]), -1: ([5, 7], [5, 33], [5, 1])}[dim]
    a, b, c = (pk.rand(s, dtype, -9, 9) for s in shapes)
    want = torch.cat([a, b, c], dim)
    pk.check(pk.run(lambda x, y, z: pypto.concat([x, y, z], dim), a, b, c), want, dtype)
    pk.check(pk.run(lambda x, y: pypto.concat([x, y], dim=dim), a, b), torch.cat([a, b], dim), dtype)


def test_concat_3d_middle(pk):
    a, b = pk.rand([2, 3, 40]), pk.rand([2, 5, 40])
    pk.check(pk.run(lambda x, y: pypto.concat((x, y), 1), a, b), torch.cat([a, b], 1), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16], ids=_id)
def test_assemble_forms(pk, dtype):
    out0 = pk.rand([37, 65], dtype, -9, 9)
    t = pk.rand([7, 20], dtype, -9, 9)
    u = pk.rand([37, 5], dtype, -9, 9)
    tile = pk.vec_tile(2, dtype)

    @pypto.frontend.jit
    def fn_form(src: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        pypto.assemble(src, [4, 10], out)

    @pypto.frontend.jit
    def list_form(src: pypto.Tensor(), src2: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        pypto.assemble([(src, [30, 45]), (src2, [0, 60])], out)

    @pypto.frontend.jit
    def slice_form(src: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out[2:9, 45:] = src * 2
        out[-3:, :5] = 0

    @pypto.frontend.jit
    def move_form(src: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(*tile)
        out.move(pypto.abs(src))

    got = out0.clone()
    fn_form(t, got)
    want = out0.clone()
    want[4:11, 10:30] = t
    pk.check(got, want, dtype, atol=0, name="assemble(t, offsets, out)")

    got = out0.clone()
    list_form(t, u, got)
    want = out0.clone()
    want[30:37, 45:65] = t
    want[:, 60:65] = u
    pk.check(got, want, dtype, atol=0, name="assemble([(t, offsets), ...], out)")

    got = out0.clone()
    slice_form(t, got)
    want = out0.clone()
    want[2:9, 45:] = t * 2
    want[-3:, :5] = 0
    pk.check(got, want, dtype, atol=0, name="out[a:b] = expr")

    got = out0.clone()
    move_form(out0.clone(), got)
    pk.check(got, out0.abs(), dtype, atol=0, name="out.move")


@pytest.mark.parametrize("src,dst", [(torch.float32, torch.int32), (torch.float32, torch.float16),
                                     (torch.bfloat16, torch.int16), (torch.int8, torch.uint8)], ids=_id)
def test_view_dtype_reinterprets_bits(pk, src, dst):
    """`view(..., dtype=)` reinterprets the bytes (torch's `Tensor.view(dtype)`); the last dim scales."""
    x = pk.rand([5, 64], src, -100, 100)
    want = x[1:4, 16:48].contiguous().view(dst)
    got = pk.run(lambda a: pypto.view(a, [3, 32], [1, 16], dtype=PD[dst]), x)
    assert got.dtype == dst and got.shape == want.shape
    assert torch.equal(got.view(torch.uint8), want.view(torch.uint8))  # bitwise (NaN patterns included)


def test_div_precision_type_and_assemble_parallel(pk):
    """Keywords that change nothing in the values: div's precision_type, assemble's parallel, c_matrix_nz."""
    x, y = pk.rand([37, 65]), pk.rand([65], torch.float32, 0.5, 2)
    for p in pypto.PrecisionType:
        pk.check(pk.run(lambda a, b, p=p: pypto.div(a, b, precision_type=p), x, y), x / y, torch.float32)
    out = torch.zeros(37, 65)
    pk.run(lambda a: pypto.assemble(a, [0, 0], pypto.zeros([37, 65]), parallel=True), x, out=out)
    pk.check(out, x, torch.float32)
    a, b = pk.rand([37, 48]), pk.rand([48, 33])
    got = pk.run(lambda s, t: pypto.matmul(s, t, pypto.DT_FP32, c_matrix_nz=True), a, b, cube=FP_CUBE)
    pk.check(got, a.double() @ b.double(), torch.float32)


def test_assemble_into_local_and_return(pk):
    """Assemble into a tensor created in the kernel, returned (the returning style)."""
    def fn(a, b):
        buf = pypto.zeros([8, 64], dtype=pypto.DT_FP32)
        pypto.assemble(a, [0, 0], buf)
        buf[4:8, 32:64] = b
        return buf

    a, b = pk.rand([3, 40]), pk.rand([4, 32])
    want = torch.zeros(8, 64)
    want[:3, :40] = a
    want[4:, 32:] = b
    pk.check(pk.run(fn, a, b), want, torch.float32, atol=0)


def test_assemble_4d_at_offsets(pk):
    def fn(a, out):
        pypto.assemble(a, [1, 0, 2, 8], out)

    out0 = pk.rand([2, 3, 5, 40])
    a = pk.rand([1, 3, 2, 16])

    @pypto.frontend.jit
    def k(src: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 2, 4, 16)
        fn(src, out)

    got = out0.clone()
    k(a, got)
    want = out0.clone()
    want[1:2, :, 2:4, 8:24] = a
    pk.check(got, want, torch.float32, atol=0)


CREATE = [  # name, pypto fn (no inputs), torch value, expected dtype
    ("full_fp32", lambda: pypto.full([5, 33], 2.5, pypto.DT_FP32), torch.full((5, 33), 2.5), torch.float32),
    ("full_default_float", lambda: pypto.full([4, 32], -1.5), torch.full((4, 32), -1.5), torch.float32),
    ("full_fp16", lambda: pypto.full([3, 40], 0.1, pypto.DT_FP16), torch.full((3, 40), 0.1, dtype=torch.float16),
     torch.float16),
    ("full_bf16", lambda: pypto.full([2, 3, 32], 3.3, pypto.DT_BF16),
     torch.full((2, 3, 32), 3.3, dtype=torch.bfloat16), torch.bfloat16),
    ("full_int8", lambda: pypto.full([4, 32], -7, pypto.DT_INT8), torch.full((4, 32), -7, dtype=torch.int8),
     torch.int8),
    ("full_bool", lambda: pypto.full([4, 32], True, pypto.DT_BOOL), torch.ones(4, 32, dtype=torch.bool),
     torch.bool),
    # documented divergence: an int fill without a dtype gives int32 (torch: int64); values compared
    ("full_default_int", lambda: pypto.full([4, 32], 3), torch.full((4, 32), 3), torch.int32),
    ("zeros_varargs", lambda: pypto.zeros(3, 40, dtype=pypto.DT_INT32), torch.zeros(3, 40, dtype=torch.int32),
     torch.int32),
    ("zeros_list", lambda: pypto.zeros([2, 3, 5, 8]), torch.zeros(2, 3, 5, 8), torch.float32),
    ("ones_bf16", lambda: pypto.ones(2, 3, 32, dtype=pypto.DT_BF16), torch.ones(2, 3, 32, dtype=torch.bfloat16),
     torch.bfloat16),
    ("ones_default", lambda: pypto.ones([7, 16]), torch.ones(7, 16), torch.float32),
    ("ones_int64", lambda: pypto.ones([7, 16], dtype=pypto.DT_INT64), torch.ones(7, 16, dtype=torch.int64),
     torch.int64),
    # documented divergence: integer arange is int32 (torch: int64); values compared
    ("arange_stop", lambda: pypto.arange(10), torch.arange(10), torch.int32),
    ("arange_step", lambda: pypto.arange(2, 50, 3), torch.arange(2, 50, 3), torch.int32),
    ("arange_negative_step", lambda: pypto.arange(10, -7, -2), torch.arange(10, -7, -2), torch.int32),
    ("arange_float", lambda: pypto.arange(0.0, 1.0, 0.125), torch.arange(0.0, 1.0, 0.125), torch.float32),
    ("arange_in_expr", lambda: pypto.arange(0, 64) * 2 + 1, torch.arange(0, 64) * 2 + 1, torch.int32),
]


@pytest.mark.parametrize("name,fn,want,dtype", CREATE, ids=[c[0] for c in CREATE])
def test_create(pk, name, fn, want, dtype):
    pk.check(pk.run(fn), want, dtype, atol=0, name=name)


def test_create_inplace_and_combined(pk):
    x = pk.rand([37, 65])
    out = torch.empty(37, 65)
    pk.run(lambda a: a + pypto.ones([65]) * 2 - pypto.full([37, 1], 0.5, pypto.DT_FP32), x, out=out)
    pk.check(out, x + 1.5, torch.float32)
    out = torch.empty(37, 65)
    pk.run(lambda a: a * pypto.arange(0, 65, dtype=pypto.DT_FP32), x, out=out)
    pk.check(out, x * torch.arange(65.0), torch.float32)


# ---- matmul ---------------------------------------------------------------------------------------

MM_DTYPES = [(torch.float16, pypto.DT_FP16), (torch.float16, pypto.DT_FP32), (torch.bfloat16, pypto.DT_BF16),
             (torch.bfloat16, pypto.DT_FP32), (torch.float32, pypto.DT_FP32), (torch.float32, pypto.DT_BF16),
             (torch.float32, pypto.DT_FP16), (torch.int8, pypto.DT_INT32)]
MM_SHAPES = [([37, 48], [48, 33]), ([2, 37, 48], [2, 48, 33]), ([2, 3, 17, 32], [2, 3, 32, 20]),
             ([2, 1, 17, 32], [1, 3, 32, 20]), ([3, 17, 32], [32, 20]), ([1, 16], [16, 1])]
FP_CUBE = ([16, 32], [16, 32], [16, 32])
INT8_CUBE = ([32, 32], [32, 64], [32, 32])


def mm_inputs(pk, dtype, sa, sb, a_trans, b_trans):
    lo, hi = (-8, 8) if dtype == torch.int8 else (-1, 1)
    a, b = pk.rand(sa, dtype, lo, hi), pk.rand(sb, dtype, lo, hi)
    ain = a.transpose(-1, -2).contiguous() if a_trans else a
    bin_ = b.transpose(-1, -2).contiguous() if b_trans else b
    return a, b, ain, bin_


@pytest.mark.parametrize("b_trans", [False, True])
@pytest.mark.parametrize("a_trans", [False, True])
@pytest.mark.parametrize("sa,sb", MM_SHAPES, ids=[f"{_id(a)}@{_id(b)}" for a, b in MM_SHAPES])
@pytest.mark.parametrize("dtype,out_dt", MM_DTYPES, ids=[f"{_id(a)}-{_id(b)}" for a, b in MM_DTYPES])
def test_matmul(pk, dtype, out_dt, sa, sb, a_trans, b_trans):
    a, b, ain, bin_ = mm_inputs(pk, dtype, sa, sb, a_trans, b_trans)
    want = torch.matmul(a.double(), b.double())  # exact for int8; fp32 accumulation is within tolerance
    cube = INT8_CUBE if dtype == torch.int8 else FP_CUBE
    got = pk.run(lambda x, y: pypto.matmul(x, y, out_dt, a_trans=a_trans, b_trans=b_trans), ain, bin_, cube=cube)
    pk.check(got, want, pk.pt_dtype(out_dt), ulps=2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int8], ids=_id)
def test_matmul_operator_and_method(pk, dtype):
    a, b, _, _ = mm_inputs(pk, dtype, [2, 37, 48], [48, 33], False, False)
    want = torch.matmul(a.double(), b.double())
    cube = INT8_CUBE if dtype == torch.int8 else FP_CUBE
    out_dt = torch.int32 if dtype == torch.int8 else dtype  # `@` keeps the dtype (int8 accumulates to int32)
    pk.check(pk.run(lambda x, y: x @ y, a, b, cube=cube), want, out_dt, name="@")
    pk.check(pk.run(lambda x, y: x.matmul(y, pypto.DT_INT32 if dtype == torch.int8 else pypto.DT_FP32), a, b,
                    cube=cube), want, torch.int32 if dtype == torch.int8 else torch.float32, name="x.matmul")


def test_matmul_fp16_accumulates_in_fp32(pk):
    """K = 4096 ones times 1 + 2^-10: an fp16 accumulator would stall at 2048; fp32 accumulation does not."""
    a = torch.ones(16, 4096, dtype=torch.float16)
    b = torch.full((4096, 16), 1 + 2 ** -10, dtype=torch.float16)
    got = pk.run(lambda x, y: pypto.matmul(x, y, pypto.DT_FP32), a, b, cube=FP_CUBE)
    pk.check(got, torch.full((16, 16), 4096 * (1 + 2 ** -10)), torch.float32)


EXTEND = [  # name, extend_params builder (from the bias/scale tensors), torch post-processing
    ("bias", lambda bias, sc: {"bias_tensor": bias}, lambda acc, bias, sc: acc + bias),
    ("scale", lambda bias, sc: {"scale": 0.5}, lambda acc, bias, sc: acc * 0.5),
    ("scale_tensor", lambda bias, sc: {"scale_tensor": sc}, lambda acc, bias, sc: acc * sc),
    ("relu", lambda bias, sc: {"relu_type": pypto.ReluType.RELU}, lambda acc, bias, sc: torch.relu(acc)),
    ("bias_relu", lambda bias, sc: {"bias_tensor": bias, "relu_type": pypto.ReluType.RELU},
     lambda acc, bias, sc: torch.relu(acc + bias)),
    ("no_relu", lambda bias, sc: {"relu_type": pypto.ReluType.NO_RELU}, lambda acc, bias, sc: acc),
]


@pytest.mark.parametrize("dtype,out_dt", [(torch.float32, pypto.DT_FP32), (torch.float16, pypto.DT_FP16),
                                          (torch.bfloat16, pypto.DT_FP32)], ids=_id)
@pytest.mark.parametrize("name,params,post", EXTEND, ids=[e[0] for e in EXTEND])
def test_matmul_extend_params(pk, name, params, post, dtype, out_dt):
    a, b, _, _ = mm_inputs(pk, dtype, [2, 37, 48], [2, 48, 33], False, False)
    bias = pk.rand([33], torch.float32, -2, 2)
    sc = pk.rand([33], torch.float32, 0.5, 2)
    want = post(torch.matmul(a.double(), b.double()), bias.double(), sc.double())
    got = pk.run(lambda x, y, bs, s: pypto.matmul(x, y, out_dt, extend_params=params(bs, s)), a, b, bias, sc,
                 cube=FP_CUBE)
    pk.check(got, want, pk.pt_dtype(out_dt), name=name)


def test_matmul_int8_dequant_scale(pk):
    """int8 x int8 accumulates in int32, then a scale gives a float output (the dequant pattern)."""
    a, b, _, _ = mm_inputs(pk, torch.int8, [37, 64], [64, 33], False, False)
    want = torch.matmul(a.double(), b.double()) * 0.01
    got = pk.run(lambda x, y: pypto.matmul(x, y, pypto.DT_FP16, extend_params={"scale": 0.01}), a, b,
                 cube=INT8_CUBE)
    pk.check(got, want, torch.float16)


# ---- methods ---------------------------------------------------------------------------------------

METHODS = [  # name, on a pypto tensor, on a torch tensor
    ("exp", lambda x: x.exp(), lambda x: x.exp()),
    ("log_abs", lambda x: x.abs().log(), lambda x: x.abs().log()),
    ("sqrt_abs", lambda x: x.abs().sqrt(), lambda x: x.abs().sqrt()),
    ("rsqrt_abs", lambda x: (x.abs() + 0.1).rsqrt(), lambda x: (x.abs() + 0.1).rsqrt()),
    ("sigmoid", lambda x: x.sigmoid(), lambda x: x.sigmoid()),
    ("tanh", lambda x: x.tanh(), lambda x: x.tanh()),
    ("relu", lambda x: x.relu(), lambda x: x.relu()),
    ("neg", lambda x: x.neg(), lambda x: x.neg()),
    ("sign", lambda x: x.sign(), lambda x: x.sign()),
    ("floor", lambda x: x.floor(), lambda x: x.floor()),
    ("round", lambda x: x.round(1), lambda x: x.round(decimals=1)),
    ("erf", lambda x: x.erf(), lambda x: x.erf()),
    ("add", lambda x: x.add(x.mul(2)), lambda x: x.add(x.mul(2))),
    ("sub_div", lambda x: x.sub(1).div(4), lambda x: x.sub(1).div(4)),
    ("pow", lambda x: x.abs().pow(1.5), lambda x: x.abs().pow(1.5)),
    ("maximum", lambda x: x.maximum(x * -1), lambda x: x.maximum(x * -1)),
    ("minimum", lambda x: x.minimum(x * -1), lambda x: x.minimum(x * -1)),
    ("gt", lambda x: x.gt(0), lambda x: x.gt(0)),
    ("le", lambda x: x.le(0.5), lambda x: x.le(0.5)),
    ("isfinite", lambda x: x.isfinite(), lambda x: x.isfinite()),
    ("sum", lambda x: x.sum(-1, True), lambda x: x.sum(-1, True)),
    ("amax", lambda x: x.amax(0), lambda x: x.amax(0)),
    ("amin", lambda x: x.amin(-1, keepdim=True), lambda x: x.amin(-1, keepdim=True)),
    ("prod", lambda x: (x * 0.1 + 1).prod(1), lambda x: (x * 0.1 + 1).prod(1)),
    ("cast", lambda x: x.cast(pypto.DT_FP16), lambda x: x.half()),
    ("softmax", lambda x: x.softmax(-1), lambda x: x.softmax(-1)),
    ("reshape", lambda x: x.reshape([-1]), lambda x: x.reshape(-1)),
    ("transpose", lambda x: x.transpose(0, 1), lambda x: x.transpose(0, 1)),
    ("unsqueeze", lambda x: x.unsqueeze(0), lambda x: x.unsqueeze(0)),
    ("view", lambda x: x.view([3, 8], [2, 16]), lambda x: x[2:5, 16:24]),
    ("chain", lambda x: (x - x.amax(-1, True)).exp().sum(0), lambda x: (x - x.amax(-1, True)).exp().sum(0)),
]


@pytest.mark.parametrize("name,fn,tfn", METHODS, ids=[m[0] for m in METHODS])
def test_methods(pk, name, fn, tfn):
    x = pk.rand([37, 65], torch.float32, -2, 2)
    want = tfn(x)
    pk.check(pk.run(fn, x), want, want.dtype, name=name)


def test_properties_and_dynamic_annotation(pk):
    """shape/dtype/dim inside a kernel; a DYNAMIC axis gives a symbolic shape and no recompile."""
    seen = {}

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 65], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 65], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        seen["dim"], seen["dtype"], seen["n"] = x.dim, x.dtype, x.shape[1]
        out[:] = x * 3.0

    for rows in (37, 5):
        x = pk.rand([rows, 65])
        out = torch.empty_like(x)
        k(x, out)
        pk.check(out, x * 3, torch.float32)
    assert seen == {"dim": 2, "dtype": pypto.DT_FP32, "n": 65}
    assert k.compile_count == 1


def test_numpy_arguments(pk):
    x = np.linspace(-1, 1, 37 * 65, dtype=np.float32).reshape(37, 65)
    out = np.empty_like(x)
    pk.make_kernel(pypto.sigmoid, 1, tile=[8, 32], inplace=True)(x, out)
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-x)), rtol=1e-3, atol=1e-3)
