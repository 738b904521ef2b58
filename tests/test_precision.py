"""Precision diff: PyPTO's tolerance rule on hand-computed cases, and lossy kernels localized
to the op and line that lose the precision (pypto.analysis.precision)."""

from __future__ import annotations

import json
import math
import pathlib
import warnings

import numpy as np
import pytest

import pypto
from pypto.analysis.precision import (
    PrecisionWarning,
    Stats,
    allowed_errors,
    check,
    compare_configs,
    precision_report,
)
from pypto.analysis.precision.rule import Tolerance
from pypto.cli import load_module
from pypto.frontend.jit import JitKernel
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.record import compile_record

HERE = pathlib.Path(__file__).resolve()
REPO = HERE.parents[1]


def line_of(marker: str) -> int:
    """The line of this file that ends with the comment `# <marker>`."""
    for k, text in enumerate(HERE.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return k
    raise AssertionError(marker)


# ---- kernels ------------------------------------------------------------------------------------

def fp16_accumulate(x: pypto.Tensor(), out: pypto.Tensor()):
    """Row sums accumulated 16 columns at a time into `out`, in out's dtype (lossy in fp16)."""
    pypto.set_vec_tile_shapes(8, 256)
    for i in pypto.loop(0, x.shape[1], 16):
        part = pypto.sum(pypto.view(x, [8, 16], [0, i]), dim=-1, keepdim=True)  # PART
        out[:] = out + part  # ACCUMULATE


accumulate = pypto.jit(fp16_accumulate)
accumulate_verified = pypto.jit(verify_options={"enable_pass_verify": True,
                                                "pass_verify_pass_filter": ["verify", "autocast", "final"],
                                                "pass_verify_error_tol": [1e-3, 1e-3]})(fp16_accumulate)


@pypto.jit
def split_sum(x: pypto.Tensor([8, 4096], pypto.DT_FP16), out: pypto.Tensor([8], pypto.DT_FP32)):
    """A row sum split by hand into 256-column partials that are rounded to fp16, then combined."""
    pypto.set_vec_tile_shapes(8, 16, 256)
    parts = pypto.sum(pypto.reshape(x, [8, 16, 256]), dim=-1)  # PARTIALS
    out[:] = pypto.sum(pypto.cast(parts, pypto.DT_FP32), dim=-1)  # COMBINE


@pypto.jit
def fp16_total(x: pypto.Tensor([8, 4096], pypto.DT_FP16), out: pypto.Tensor([8, 1], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(8, 512)
    out[:] = pypto.sum(x, dim=-1, keepdim=True)  # OVERFLOW


@pypto.jit
def lossless(x: pypto.Tensor([16, 256], pypto.DT_FP32), y: pypto.Tensor([16, 256], pypto.DT_FP32),
             out: pypto.Tensor([16, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = (x * 0.5 + y) * y - 1.0 / (1.0 + x * x)


@pypto.jit(verify_options={"enable_pass_verify": True})
def lossless_verified(x: pypto.Tensor([16, 256], pypto.DT_FP32), out: pypto.Tensor([16, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = x * 3.0 + 1.0


@pypto.jit
def bf16_add(x: pypto.Tensor([16, 256], pypto.DT_BF16), y: pypto.Tensor([16, 256], pypto.DT_BF16),
             out: pypto.Tensor([16, 256], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = x + y  # BF16_ADD


@pypto.jit
def row_sum(x: pypto.Tensor(), out: pypto.Tensor(), tile: int = 256):
    pypto.set_vec_tile_shapes(8, tile)
    out[:] = pypto.sum(x, dim=-1, keepdim=True) * 0.5  # ROW_SUM


def accumulate_inputs(dtype: type = np.float16) -> dict[str, np.ndarray]:
    x = np.random.default_rng(0).random((8, 4096)).astype(np.float16)
    return {"x": x.astype(dtype), "out": np.zeros((8, 1), dtype)}


# ---- the rule, by hand --------------------------------------------------------------------------

def test_one_error_in_four_is_allowed_two_are_not():
    # tol of the last element: (4 + 4.01)·1e-3/2 + 1e-3 = 0.005005 < diff 0.01 < 128·tol
    v = check(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.01]))
    assert (v.n, v.zeros, v.errors, v.hard) == (4, 0, 1, 0)
    # floor(4·1e-3) = 0, so min(16, √4/2) = 1 error is allowed
    assert v.allowed == 1 and v.passed
    assert v.max_abs == pytest.approx(0.01)
    assert v.max_rel == pytest.approx(0.01 / 4.01)
    v = check(np.array([1.0, 2.0, 3.01, 4.0]), np.array([1.0, 2.0, 3.0, 4.01]))
    assert v.errors == 2 and not v.passed


def test_an_element_over_128_tol_is_a_hard_failure():
    # tol = (100 + 4)·1e-3/2 + 1e-3 = 0.053; 128·tol = 6.784 < diff 96: one error (allowed) but hard
    v = check(np.array([1.0, 2.0, 3.0, 100.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert (v.errors, v.hard, v.allowed) == (1, 1, 1)
    assert not v.passed


def test_tolerance_boundary_is_inclusive():
    # rtol 0.5, atol 0.25: out 3 ref 2 -> tol = 5·0.25 + 0.25 = 1.5 >= diff 1 (no error);
    # out 4 ref 2 -> tol = 6·0.25 + 0.25 = 1.75 < diff 2 (error); out 2.5 ref 1.5 -> tol = diff = 1.25
    v = check(np.array([3.0, 4.0, 2.5]), np.array([2.0, 2.0, 1.5]), rtol=0.5, atol=0.25)
    assert v.errors == 1 and v.hard == 0


def test_elements_zero_in_both_do_not_earn_allowance():
    out = np.array([0.0] * 8 + [1.0, 1.0])
    ref = np.array([0.0] * 8 + [1.0, 1.1])
    v = check(out, ref)
    # N − zeros = 2: floor(2·1e-3) = 0 -> floor(min(16, √2/2 = 0.707)) = 0 allowed; counting the
    # zeros it would be floor(√10/2) = 1 and pass
    assert (v.n, v.zeros, v.errors, v.allowed) == (10, 8, 1, 0)
    assert not v.passed
    # a zero in only one of them is an ordinary element
    assert check(np.array([0.0, 1.0]), np.array([1e-4, 1.0])).zeros == 0


def test_allowed_errors_is_an_element_count():
    assert allowed_errors(2000, 1e-3, 1e-3) == 2
    assert allowed_errors(10**6, 1e-3, 1e-2) == 1000  # min(rtol, atol)
    assert allowed_errors(1000, 1e-3, 1e-3) == 1
    # floor(999·1e-3) = 0 -> floor(min(16, √999/2 = 15.8)) = 15: the rule's own discontinuity
    assert allowed_errors(999, 1e-3, 1e-3) == 15
    assert allowed_errors(4096, 1e-5, 1e-5) == 16  # capped at 16
    assert allowed_errors(10**6, 1e-3, 0.0) == 16  # atol 0: the product is 0
    assert allowed_errors(1, 1e-3, 1e-3) == 0  # √1/2 = 0.5
    assert allowed_errors(0, 1e-3, 1e-3) == 0
    ref = np.arange(1, 2001, dtype=np.float64)
    out = ref.copy()
    out[-2:] += 10.0  # tol ≈ 2 < 10 < 128·tol: errors, not hard failures
    assert check(out, ref).errors == 2 and check(out, ref).passed
    out[-3] += 10.0
    assert check(out, ref).errors == 3 and not check(out, ref).passed


def test_non_finite_values():
    nan, inf = math.nan, math.inf
    v = check(np.array([nan, inf, -inf, 1.0]), np.array([nan, inf, -inf, 1.0]))
    assert v.errors == 0 and v.passed and v.max_abs == 0
    v = check(np.array([nan, 1.0, 2.0, 3.0]), np.array([1.0, 1.0, 2.0, 3.0]))
    assert (v.errors, v.hard) == (1, 1) and not v.passed
    v = check(np.array([inf, 1.0]), np.array([1e30, 1.0]))
    assert v.hard == 1 and v.max_abs == inf and v.max_rel == inf
    v = check(np.array([nan, 2.0, inf]), np.array([nan, 1.0, inf]))
    assert v.errors == 1 and v.max_rel == pytest.approx(1.0) and v.cosine == pytest.approx(1.0)


def test_cosine_similarity():
    assert check(np.array([1.0, 2.0]), np.array([2.0, 4.0])).cosine == pytest.approx(1.0)
    assert check(np.array([1.0, 0.0]), np.array([0.0, 1.0])).cosine == pytest.approx(0.0)
    assert check(np.zeros(3), np.zeros(3)).cosine == 1.0
    assert check(np.array([3.0, 4.0]), np.array([4.0, 3.0])).cosine == pytest.approx(24 / 25)


def test_stacked_iterations_judge_like_one_tensor():
    rng = np.random.default_rng(1)
    refs = [rng.standard_normal(50) for _ in range(4)]
    outs = [r + rng.standard_normal(50) * 2e-3 for r in refs]
    s = Stats(1e-3, 1e-3)
    for o, r in zip(outs, refs):
        s.add(o.astype(np.float16), r)
    whole = check(np.concatenate(outs).astype(np.float16), np.concatenate(refs))
    got = s.verdict()
    assert (got.n, got.errors, got.hard, got.allowed) == (whole.n, whole.errors, whole.hard, whole.allowed)
    assert got.max_abs == whole.max_abs and got.cosine == pytest.approx(whole.cosine)
    assert s.count == 4


def test_dtypes_are_compared_as_values():
    bf = DataType.DT_BF16.np
    v = check(np.array([1.0, 2.0], dtype=bf), np.array([1.0, 2.0]))
    assert v.passed and v.max_abs == 0
    assert check(np.array([True, False]), np.array([1.0, 1.0])).errors == 1


# ---- localizing ---------------------------------------------------------------------------------

def test_fp16_accumulation_is_localized_to_the_add_line():
    rep = precision_report(accumulate, accumulate_inputs())
    assert not rep.passed
    row = rep.first_failing_op
    assert row is not None and rep.where is not None
    assert row.op == "add" and row.dtype == "fp16"
    assert (rep.where.file, rep.where.line) == (str(HERE), line_of("ACCUMULATE"))
    assert rep.first_failing_pass is not None and rep.first_failing_pass.name == "verify"
    # the loop body ran 256 times; the accumulator drifts out of tolerance part of the way through
    assert row.occurrences == 256 and row.first_bad is not None and 0 < row.first_bad < 256
    # the partial sums (fp32 inside, rounded once) are fine
    verify = rep.pass_named("verify")
    part = next(r for r in verify.rows if r.op == "sum")
    assert part.passed and part.where is not None and part.where.line == line_of("PART")
    # the final tiled program is compared too, op by op, with a per-tile grid of its output
    final = rep.pass_named("final")
    assert final.level == "tiled" and not final.skipped
    assert {r.op for r in final.rows} >= {"add", "sum"}
    assert not final.outputs[0].passed
    assert final.grids["out"].errors.shape == (1, 1) and final.grids["out"].errors[0, 0] > 0
    (f,) = rep.findings()
    assert f.rule == "precision.fail" and f.severity == "error" and f.level == "precision"
    assert f.where == rep.where and "fp32" in f.suggestion and "loop" in f.suggestion
    assert f.numbers["errors"] > f.numbers["allowed"] and f.numbers["pass"] == "verify"
    doc = json.loads(json.dumps(rep.to_json(), allow_nan=False))
    assert doc["first_failing_op"]["where"]["line"] == line_of("ACCUMULATE")
    assert doc["findings"][0]["rule"] == "precision.fail"
    assert str(line_of("ACCUMULATE")) in rep.message()


def test_low_precision_partials_are_localized_to_the_partial_sum_line():
    x = np.random.default_rng(0).random((8, 4096)).astype(np.float16)
    inputs = {"x": x, "out": np.zeros(8, np.float32)}
    rep = precision_report(split_sum, inputs, rtol=1e-4, atol=1e-4)  # an fp32 result's tolerance
    row = rep.first_failing_op
    assert row is not None and row.op == "sum" and row.dtype == "fp16"
    assert rep.where is not None and rep.where.line == line_of("PARTIALS")
    assert "cast before the reduction" in rep.findings()[0].suggestion
    # after autocast the sum computes in fp32; the cast back to fp16 it adds carries the same line
    auto = rep.pass_named("autocast").first_failure
    assert auto is not None and auto.op == "cast" and auto.where is not None
    assert auto.where.line == line_of("PARTIALS")
    assert "cast before the reduction" in rep.suggestion(auto)
    # the same kernel at fp16's own tolerance passes
    assert precision_report(split_sum, inputs).passed


def test_an_fp16_overflow_is_a_hard_failure_at_the_sum():
    x = np.full((8, 4096), 20.0, np.float16)  # a row sums to 81920 > 65504, fp16's largest value
    rep = precision_report(fp16_total, {"x": x, "out": np.zeros((8, 1), np.float16)}, passes=["verify", "final"])
    row = rep.first_failing_op
    assert row is not None and row.op == "sum" and row.verdict.hard == 8 and row.verdict.max_abs == math.inf
    assert rep.where is not None and rep.where.line == line_of("OVERFLOW")
    (f,) = rep.findings()
    assert "over 128x" in f.title and f.numbers["max_abs"] == "inf"
    final = rep.pass_named("final")
    assert final.grids["out"].errors.tolist() == [[8]] and not final.outputs[0].passed
    json.dumps(rep.to_json(), allow_nan=False)


def test_a_lossless_kernel_passes_every_pass():
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal((16, 256)).astype(np.float32),
              "y": rng.standard_normal((16, 256)).astype(np.float32), "out": np.zeros((16, 256), np.float32)}
    rep = precision_report(lossless, inputs)
    assert rep.passed and rep.first_failing_op is None and rep.where is None and rep.findings() == []
    names = [p.name for p in rep.passes]
    assert names == ["verify", "decompose", "autocast", "simplify", "cse", "dce", "verify_tensor", "final"]
    assert all(p.rows for p in rep.passes)
    grid = rep.pass_named("final").grids["out"]
    assert grid.tile == (8, 128) and grid.errors.shape == (2, 2) and not grid.errors.any()
    assert "within tolerance" in rep.message()


def test_the_tile_grid_shows_the_lossy_tile():
    bf = DataType.DT_BF16.np
    y = np.zeros((16, 256), np.float32)
    y[8:, 128:] = 2.0 ** -8  # 1 + 2^-8 is a tie in bf16: it rounds to 1, an error of 2^-8
    inputs = {"x": np.ones((16, 256), bf), "y": y.astype(bf), "out": np.zeros((16, 256), bf)}
    rep = precision_report(bf16_add, inputs, rtol=1e-3, atol=1e-3)  # fixed: one bf16 rounding is an error
    assert rep.where is not None and rep.where.line == line_of("BF16_ADD")
    grid = rep.pass_named("final").grids["out"]
    assert grid.offsets == ((0, 8), (0, 128))
    assert grid.errors.tolist() == [[0, 0], [0, 8 * 128]]
    assert grid.passed.tolist() == [[True, True], [True, False]] and grid.failing_tiles == 1
    assert grid.max_abs[1, 1] == pytest.approx(2.0 ** -8)
    json.dumps(grid.to_json(), allow_nan=False)


def test_pass_selection():
    rep = precision_report(accumulate, accumulate_inputs(), passes=["final", "autocast"])
    assert [p.name for p in rep.passes] == ["autocast", "final"]
    assert rep.first_failing_pass is not None and rep.first_failing_pass.name == "autocast"
    assert rep.where is not None and rep.where.line == line_of("ACCUMULATE")
    tiled = precision_report(accumulate, accumulate_inputs(), passes=["final"])
    assert tiled.first_failing_pass is not None and tiled.first_failing_pass.level == "tiled"
    assert tiled.where is not None and tiled.where.line == line_of("ACCUMULATE")
    same = precision_report(accumulate, accumulate_inputs(), passes=["autocast", "simplify"])
    assert same.passes[1].same_as == "autocast" and same.passes[1].rows is same.passes[0].rows
    with pytest.raises(PyptoError, match="no pass 'nope'"):
        precision_report(accumulate, accumulate_inputs(), passes=["nope"])


def test_a_compile_record_is_a_target():
    inputs = accumulate_inputs()
    record = compile_record(accumulate, inputs)
    rep = precision_report(record, inputs, passes=["verify", "final"])
    assert rep.where is not None and rep.where.line == line_of("ACCUMULATE")
    # without inputs, the record's input specs make deterministic ones
    assert precision_report(record, passes=["final"]).passes[0].name == "final"


# ---- two configurations -------------------------------------------------------------------------

def test_two_dtypes_diverge_first_at_the_accumulation():
    a = accumulate_inputs(np.float32)  # the same values, accumulated in fp32
    b = accumulate_inputs(np.float16)
    cmp = compare_configs(accumulate, accumulate, a, b)
    first = cmp.first_divergent
    assert first is not None and first.key[1] == line_of("ACCUMULATE") and first.key[2] == "add"
    assert first.a is not None and first.a.passed  # fp32 accumulation is within tolerance
    assert first.b is not None and not first.b.passed
    part = next(r for r in cmp.rows if r.key[1] == line_of("PART") and r.key[2] == "sum")
    assert part.matched and not part.diverges
    # the casts autocast adds for fp16 exist in b only
    assert any(r.node_a is None and r.key[2] == "cast" for r in cmp.rows)
    assert "first divergent op: add" in cmp.summary()
    json.dumps(cmp.to_json(), allow_nan=False)


def test_two_tile_shapes_agree_op_by_op():
    x = np.random.default_rng(2).standard_normal((8, 2048)).astype(np.float32)
    out = np.zeros((8, 1), np.float32)
    cmp = compare_configs(row_sum, row_sum, {"x": x, "out": out, "tile": 256},
                          {"x": x, "out": out, "tile": 2048})
    assert cmp.first_divergent is None
    ops = [r for r in cmp.rows if r.kind == "op"]
    assert {r.key[2] for r in ops} == {"sum", "mul"} and all(r.matched and r.b_vs_a is not None for r in ops)
    assert all(r.key[1] == line_of("ROW_SUM") for r in ops)
    assert any(r.kind == "output" and r.b_vs_a is not None and r.b_vs_a.passed for r in cmp.rows)


# ---- verify_options -----------------------------------------------------------------------------

def test_enable_pass_verify_warns_at_the_line_and_keeps_the_results():
    plain = accumulate_inputs()
    checked = accumulate_inputs()
    accumulate(**plain)
    with pytest.warns(PrecisionWarning, match=f"{HERE.name}:{line_of('ACCUMULATE')}"):
        accumulate_verified(**checked)
    assert np.array_equal(plain["out"], checked["out"])
    (ck,) = accumulate_verified.cache.values()
    assert ck.precision is not None and [p.name for p in ck.precision.passes] == ["verify", "autocast", "final"]
    assert ck.precision.rtol == 1e-3 and ck.precision.where.line == line_of("ACCUMULATE")


def test_enable_pass_verify_is_quiet_when_precise_and_saves_tensors(tmp_path):
    x = np.random.default_rng(0).standard_normal((16, 256)).astype(np.float32)
    out = np.zeros((16, 256), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        lossless_verified(x, out)
    np.testing.assert_allclose(out, x * 3.0 + 1.0, rtol=1e-6)
    (ck,) = lossless_verified.cache.values()
    assert ck.precision.passed
    with pypto.options(verify_options={"pass_verify_save_tensor": True, "pass_verify_save_tensor_dir": str(tmp_path),
                                       "pass_verify_pass_filter": ["final"]}):
        lossless_verified(x, out)
    saved = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.npy"))
    assert saved and all(s.split("/")[0].endswith("_final") for s in saved)
    assert any(s.endswith("output_out.npy") for s in saved) and any(s.endswith(".fp64.npy") for s in saved)
    doc = json.loads((tmp_path / "precision.json").read_text())
    assert doc["passed"] and [p["name"] for p in doc["passes"]] == ["final"]


# ---- tolerances by dtype ------------------------------------------------------------------------

def test_the_default_tolerance_is_the_values_dtypes_as_pypto_judges_them():
    tol = Tolerance()
    assert tol.by_dtype and tol.of(DataType.DT_BF16) == (2.0 ** -7, 1e-4, 0.005)
    assert tol.of(DataType.DT_FP16) == (1e-3, 1e-3, 0.005)
    assert tol.of(DataType.DT_FP32) == (1e-3, 1e-3, 0.005)
    assert tol.of(DataType.DT_FP32, accumulated=True) == (3e-3, 3e-3, 0.005)
    assert tol.of(DataType.DT_INT32) == (1e-3, 1e-3, 0.0)  # integers: exact
    assert Tolerance(1e-2, 1e-5).of(DataType.DT_BF16) == (1e-2, 1e-5, 0.0)  # fixed: the rule as written
    # 0.5 % of the elements may fall outside the bounds
    out, ref = np.ones(1000), np.ones(1000)
    out[:5] = 1.01
    assert check(out, ref, *tol.of(DataType.DT_FP32)).passed
    out[5] = 1.01
    assert not check(out, ref, *tol.of(DataType.DT_FP32)).passed


@pytest.mark.parametrize("name", ["activations.py", "layernorm.py", "rope.py"])
def test_bf16_examples_pass_at_the_default_tolerances_and_fail_a_fixed_fp32_one(name):
    """A cast to bf16 rounds by up to 2^-9: within bf16's tolerance, outside rtol 1e-3."""
    mod = load_module(REPO / "examples" / name)
    kernels = [k for k in vars(mod).values() if isinstance(k, JitKernel)]
    for kernel in kernels:
        rep = precision_report(kernel, passes=["verify", "final"])
        assert rep.passed, rep.message()
        assert rep.to_json()["tolerance"].startswith("by dtype: bf16 rtol 0.0078125 atol 0.0001")
    fixed = precision_report(kernels[0], passes=["verify"], rtol=1e-3, atol=1e-3)
    assert not fixed.passed and fixed.first_failing_op is not None and fixed.first_failing_op.op == "cast"
