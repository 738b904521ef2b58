"""What operator code from PyPTO's operator collection needs (issue 27, part 4), against torch:
`pypto.gathermask` (every pattern mode, dtypes, tile shapes with tails, valid-shape tails, through the
tiled, op-by-op and reference paths, its errors); fp8 torch tensors as kernel arguments, in and out
(`torch.float8_e4m3fn` <-> `DT_FP8E4M3`, `torch.float8_e5m2` <-> `DT_FP8E5M2`, through ml_dtypes);
and `t[:] = v` where `v` differs from `t` only in unit dims (`[1, 1]` into `[1]`), which PyPTO's
`__setitem__` takes as `t.move(v)`."""

from __future__ import annotations

import json
import pathlib

import jsonschema
import ml_dtypes
import numpy as np
import pytest
import torch
from support import lowered

import pypto
from pypto.record import CompileRecord, compile_record
from pypto.reference.interpreter import Interpreter

# tiles off the 32-byte alignment on purpose (tails): a board-limit warning
pytestmark = pytest.mark.filterwarnings("ignore::pypto.PyptoWarning")

# pattern mode -> the positions of the last axis it keeps, as a torch slice
MODES = {1: slice(0, None, 2), 2: slice(1, None, 2), 3: slice(0, None, 4), 4: slice(1, None, 4),
         5: slice(2, None, 4), 6: slice(3, None, 4), 7: slice(None)}
STRIDE = {m: (MODES[m].step or 1) for m in MODES}
DTYPES = {"fp32": (pypto.DT_FP32, torch.float32), "fp16": (pypto.DT_FP16, torch.float16),
          "bf16": (pypto.DT_BF16, torch.bfloat16), "int32": (pypto.DT_INT32, torch.int32),
          "int16": (pypto.DT_INT16, torch.int16)}


def _data(shape, torch_dt, seed=0):
    gen = torch.Generator().manual_seed(seed)
    if torch_dt.is_floating_point:
        return torch.randn(shape, generator=gen).to(torch_dt)
    return torch.randint(-1000, 1000, shape, generator=gen, dtype=torch_dt)


# ---- gathermask --------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dt", list(DTYPES))
@pytest.mark.parametrize("tile", [(16, 64), (5, 8), (3, 16)])  # whole; tails on the rows
def test_gathermask_matches_torch_for_every_mode_dtype_and_tile(mode, dt, tile):
    pdt, tdt = DTYPES[dt]
    cols = 64 // STRIDE[mode]

    @pypto.frontend.jit
    def k(x: pypto.Tensor([12, 64], pdt), out: pypto.Tensor([12, cols], pdt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.gathermask(x, mode)

    x = _data((12, 64), tdt, mode)
    out = torch.empty(12, cols, dtype=tdt)
    k(x, out)
    assert torch.equal(out, x[:, MODES[mode]])


def test_the_doc_example_3_by_6_int32_mode_1():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([3, 6], pypto.DT_INT32), out: pypto.Tensor([3, 3], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 6)
        out[:] = pypto.gathermask(x, 1)

    x = torch.arange(18, dtype=torch.int32).reshape(3, 6)
    out = torch.empty(3, 3, dtype=torch.int32)
    k(x, out)
    assert out.tolist() == [[0, 2, 4], [6, 8, 10], [12, 14, 16]]


def test_gathermask_as_a_method_with_a_keyword_in_4d_then_math():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 3, 8, 32], pypto.DT_FP32), out: pypto.Tensor([2, 3, 8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 2, 4, 16)
        out[:] = x.gathermask(pattern_mode=6) * 2.0 + pypto.gathermask(x, pattern_mode=3)

    x = torch.randn(2, 3, 8, 32)
    out = torch.empty(2, 3, 8, 8)
    k(x, out)
    assert torch.equal(out, x[..., 3::4] * 2.0 + x[..., 0::4])


HALF = 32
ROWS = 16  # rows per block; the last block of a sequence is a valid-shape tail


@pypto.frontend.jit
def _interleaved_rope(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 64], pypto.DT_BF16),
                      cos: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 64], pypto.DT_BF16),
                      sin: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 64], pypto.DT_BF16),
                      out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 64], pypto.DT_BF16)):
    """Rotary embedding on interleaved pairs: even and odd lanes split by gathermask, rotated, and written
    as two halves; blocks of ROWS rows, the last one a tail (valid_shape)."""
    pypto.set_vec_tile_shapes(1, ROWS, 2 * HALF)
    seq = x.shape[1]
    for b in pypto.loop(x.shape[0]):
        for blk in pypto.loop((seq + ROWS - 1) // ROWS):
            at = blk * ROWS
            rows = (seq - at).min(ROWS)
            window = [1, rows, 2 * HALF]
            xs = pypto.view(x, [1, ROWS, 2 * HALF], [b, at, 0], valid_shape=window)
            cs = pypto.view(cos, [1, ROWS, 2 * HALF], [b, at, 0], valid_shape=window)
            ss = pypto.view(sin, [1, ROWS, 2 * HALF], [b, at, 0], valid_shape=window)
            even, odd = pypto.gathermask(xs, 1), pypto.gathermask(xs, 2)
            pypto.set_vec_tile_shapes(1, ROWS, HALF)
            first = even * pypto.gathermask(cs, 1) - odd * pypto.gathermask(ss, 1)
            second = even * pypto.gathermask(ss, 2) + odd * pypto.gathermask(cs, 2)
            pypto.assemble(first, [b, at, 0], out)
            pypto.assemble(second, [b, at, HALF], out)
            pypto.set_vec_tile_shapes(1, ROWS, 2 * HALF)


def _rope_golden(x, cos, sin):
    def r(t):  # each op rounds to bf16, as the kernel (and torch on bf16) does
        return t.bfloat16().float()

    x, cos, sin = x.float(), cos.float(), sin.float()
    even, odd = x[..., 0::2], x[..., 1::2]
    first = r(r(even * cos[..., 0::2]) - r(odd * sin[..., 0::2]))
    second = r(r(even * sin[..., 1::2]) + r(odd * cos[..., 1::2]))
    return torch.cat([first, second], -1).bfloat16()


@pytest.mark.parametrize("shape", [(2, 3, 64), (2, 37, 64)])
def test_gathermask_on_valid_shape_tails_matches_torch_and_every_path_agrees(shape):
    x, cos, sin = (_data(shape, torch.bfloat16, s) for s in range(3))
    out = torch.zeros_like(x)
    _interleaved_rope(x, cos, sin, out)
    assert torch.equal(out, _rope_golden(x, cos, sin))
    ck, lw, arrays, syms = lowered(_interleaved_rope, x, cos, sin, torch.zeros_like(x))
    batched = lw.executor.run(arrays)["out"]
    assert batched.tobytes() == lw.executor.run(arrays, batched=False)["out"].tobytes()
    assert batched.tobytes() == Interpreter(ck.program.graph).run(arrays, syms)["out"].tobytes()
    assert any(st.kind == "batch" and st.ops[0].op == "gathermask" for st in lw.executor.plan().steps)


def test_gathermask_compiles_to_one_instruction_per_tile_with_its_pattern():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = pypto.gathermask(x, 4)

    rec = compile_record(k)
    ops = [o for o in rec.program.tiles.ops if o.op == "gathermask"]
    assert sorted(o.shape for o in ops) == [(4, 8)] * 4  # the [4, 32] input tiles, a quarter as wide
    instrs = [i for b in rec.program.blocks for i in b.instrs if i.opcode == "TGATHERMASK"]
    assert instrs and all(i.pipe == "V" for i in instrs)


def _bad(body, x_shape=(4, 8), tile=(4, 8)):
    @pypto.frontend.jit
    def k(x: pypto.Tensor(list(x_shape), pypto.DT_FP32), out: pypto.Tensor(list(x_shape), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = body(x)

    return k


@pytest.mark.parametrize(("body", "x_shape", "message"), [
    (lambda x: pypto.gathermask(x, 0), (4, 8), r"gathermask: pattern_mode is 1 to 7, got 0"),
    (lambda x: pypto.gathermask(x, 8), (4, 8), r"gathermask: pattern_mode is 1 to 7, got 8"),
    (lambda x: pypto.gathermask(x, 1.0), (4, 8), r"gathermask: pattern_mode is an int from 1 to 7"),
    (lambda x: pypto.gathermask(x, 3), (4, 6), r"pattern_mode 3 keeps one of every 4 elements .* multiple of 4"),
    (lambda x: pypto.gathermask(pypto.cast(x, pypto.DT_INT8), 1), (4, 8), r"gathermask: input is DT_INT8"),
], ids=["mode-0", "mode-8", "mode-float", "last-dim", "dtype"])
def test_gathermask_mistakes_are_errors_at_the_op_line(body, x_shape, message):
    k = _bad(body, x_shape)
    with pytest.raises(pypto.PyptoError, match=message) as e:
        k(torch.randn(*x_shape), torch.empty(*x_shape))
    assert "pypto.gathermask(" in open(__file__).read().splitlines()[e.value.line - 1]


def test_a_vec_tile_off_the_pattern_stride_is_an_error_at_the_call_with_fixes():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 30)  # the call
        out[:] = pypto.gathermask(x, 5)

    with pytest.raises(pypto.PyptoError, match=r"gathermask pattern_mode 5 .* last dim 30 .* use 28 or 32") as e:
        k(torch.randn(4, 64), torch.empty(4, 16))
    assert e.value.rule == "tile.shape"
    assert e.value.line == k.fn.__code__.co_firstlineno + 2
    assert sorted(f.text for f in e.value.fixes) == ["28", "32"]


def test_a_dynamic_last_dim_off_the_stride_is_an_error_at_run_time():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32), out: pypto.Tensor([4, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.gathermask(x, 2)  # the op

    out = torch.empty(4, 8)
    k(torch.arange(64.0).reshape(4, 16), out)
    assert torch.equal(out, torch.arange(64.0).reshape(4, 16)[:, 1::2])
    with pytest.raises(pypto.PyptoError, match="needs the last axis to be a multiple of 2; it is 15") as e:
        k(torch.randn(4, 15), torch.empty(4, 7))
    assert e.value.line == k.fn.__code__.co_firstlineno + 3


# ---- fp8 arguments -------------------------------------------------------------------------------

FP8 = {"e4m3": (pypto.DT_FP8E4M3, torch.float8_e4m3fn, ml_dtypes.float8_e4m3fn),
       "e5m2": (pypto.DT_FP8E5M2, torch.float8_e5m2, ml_dtypes.float8_e5m2)}


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.uint8)


@pytest.mark.parametrize("fmt", list(FP8))
def test_fp8_tensors_in_and_out_match_torch_bit_for_bit(fmt):
    pdt, tdt, _ = FP8[fmt]

    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], pdt), up: pypto.Tensor([16, 64], pypto.DT_FP32),
          down: pypto.Tensor([16, 64], pdt), twice: pypto.Tensor([16, 64], pdt)):
        pypto.set_vec_tile_shapes(8, 32)
        up[:] = pypto.cast(x, pypto.DT_FP32)
        down[:] = pypto.cast(pypto.cast(x, pypto.DT_FP32) * 3.0 + 0.1, pdt)
        twice[:] = x * 2.0  # an fp8 op: computed in fp32, rounded back once

    # wide values: e4m3 (max 448, no inf) saturates where x * 3 overflows, e5m2 goes to inf
    x = (torch.randn(16, 64) * (100.0 if fmt == "e4m3" else 20000.0)).to(tdt)
    up, down, twice = torch.empty(16, 64), torch.empty(16, 64, dtype=tdt), torch.empty(16, 64, dtype=tdt)
    k(x, up, down, twice)
    assert torch.equal(up, x.float())
    assert torch.equal(_bits(down), _bits((x.float() * 3.0 + 0.1).to(tdt)))
    assert torch.equal(_bits(twice), _bits((x.float() * 2.0).to(tdt)))
    assert (x.float().abs() * 3.0 > 448).any() if fmt == "e4m3" else (x.float().abs() * 2 > 57344).any()


@pytest.mark.parametrize("fmt", list(FP8))
def test_fp8_numpy_arguments_through_ml_dtypes(fmt):
    pdt, _, npdt = FP8[fmt]

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pdt)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.cast(x, pdt)

    x = np.random.default_rng(0).standard_normal((8, 32), dtype=np.float32)
    out = np.empty((8, 32), dtype=npdt)
    k(x, out)
    assert out.tobytes() == x.astype(npdt).tobytes()


def test_fp8_rounding_modes_pick_the_neighbouring_fp8_values():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 32], pypto.DT_FP32), fl: pypto.Tensor([4, 32], pypto.DT_FP8E4M3),
          ce: pypto.Tensor([4, 32], pypto.DT_FP8E4M3), tr: pypto.Tensor([4, 32], pypto.DT_FP8E4M3)):
        pypto.set_vec_tile_shapes(4, 32)
        fl[:] = pypto.cast(x, pypto.DT_FP8E4M3, pypto.CastMode.CAST_FLOOR)
        ce[:] = pypto.cast(x, pypto.DT_FP8E4M3, pypto.CastMode.CAST_CEIL)
        tr[:] = pypto.cast(x, pypto.DT_FP8E4M3, pypto.CastMode.CAST_TRUNC)

    x = torch.randn(4, 32) * 10
    outs = [torch.empty(4, 32, dtype=torch.float8_e4m3fn) for _ in range(3)]
    k(x, *outs)
    grid = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float()
    grid = grid[torch.isfinite(grid)].unique()  # every finite e4m3 value, ascending
    below = grid[torch.searchsorted(grid, x, right=True) - 1]
    above = grid[torch.searchsorted(grid, x, right=False)]
    assert torch.equal(outs[0].float(), below)
    assert torch.equal(outs[1].float(), above)
    assert torch.equal(outs[2].float(), torch.where(x >= 0, below, above))


def test_fp8_does_not_promote_with_another_dtype():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP8E4M3), y: pypto.Tensor([8, 32], pypto.DT_FP16),
          out: pypto.Tensor([8, 32], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + y

    with pytest.raises(pypto.PyptoError, match="DT_FP8E4M3 and DT_FP16 do not promote"):
        k(torch.zeros(8, 32).to(torch.float8_e4m3fn), torch.zeros(8, 32).half(), torch.empty(8, 32).half())


def test_an_fp8_and_gathermask_record_validates_and_round_trips(tmp_path):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP8E5M2), out: pypto.Tensor([8, 32], pypto.DT_FP8E4M3)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.cast(pypto.gathermask(pypto.cast(x, pypto.DT_FP32), 2), pypto.DT_FP8E4M3)

    rec = compile_record(k)
    schema = json.loads((pathlib.Path(__file__).resolve().parents[1] / "docs" / "compile-record.schema.json")
                        .read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(rec.dumps()))
    back = CompileRecord.read(rec.write(tmp_path / "rec")[0])
    assert back.program.graph == rec.program.graph
    assert [p.attrs["name"] for p in back.program.graph.params()] == ["x", "out"]
    assert {p.type.dtype for p in back.program.graph.params()} == {pypto.DT_FP8E5M2, pypto.DT_FP8E4M3}


def test_fp8_dtype_names_sizes_and_torch_mapping():
    from pypto.ir import dtypes

    for pdt, tdt, npdt in FP8.values():
        assert pypto.bytes_of(pdt) == 1 and pdt.is_float
        assert dtypes.from_torch(tdt) is pdt and dtypes.torch_dtype(pdt) is tdt
        assert dtypes.from_numpy(np.dtype(npdt)) is pdt and pdt.np == np.dtype(npdt)


# ---- t[:] = v, v differing only in unit dims ------------------------------------------------------

def test_assigning_a_1_by_1_value_into_a_1_element_tensor():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), total: pypto.Tensor([1], pypto.DT_FP32),
          first_max: pypto.Tensor([1], pypto.DT_FP32), row_min: pypto.Tensor([4], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        t = pypto.tensor([1], pypto.DT_FP32)
        t[:] = pypto.sum(pypto.sum(x, -1, keepdim=True), 0, keepdim=True)  # [1, 1] into a local [1]
        total[:] = t
        first_max[:] = pypto.amax(x[0:1, :], -1, keepdim=True)  # [1, 1] into a parameter [1]
        row_min[:] = pypto.amin(x, -1, keepdim=True)  # [4, 1] into [4]

    x = torch.randn(4, 16)
    total, first_max, row_min = torch.empty(1), torch.empty(1), torch.empty(4)
    k(x, total, first_max, row_min)
    torch.testing.assert_close(total, x.sum(dim=(0, 1), keepdim=True).reshape(1))
    assert torch.equal(first_max, x[0].amax().reshape(1))
    assert torch.equal(row_min, x.amin(-1))


def test_a_1_by_1_value_assigned_in_a_loop_into_a_tensor_made_before_it():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        t = pypto.tensor([1], pypto.DT_FP32)
        for i in pypto.loop(4):
            t[:] = pypto.amax(x[i:i + 1, :], -1, keepdim=True)
        out[:] = t  # the last row's

    x = torch.randn(4, 16)
    out = torch.empty(1)
    k(x, out)
    assert torch.equal(out, x[3].amax().reshape(1))


@pytest.mark.parametrize(("value", "message"), [
    (lambda x: x[0:2, 0:4], r"assigning a rank-2 tensor \[2, 4\] into a rank-1 slice \[8\]"),
    (lambda x: x[0:1, 0:4], r"assigning a rank-2 tensor \[1, 4\] into a rank-1 slice \[8\]"),
], ids=["same-count-other-dims", "fewer-elements"])
def test_other_shapes_are_still_refused(value, message):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = value(x)

    with pytest.raises(pypto.PyptoError, match=message):
        k(torch.randn(4, 8), torch.empty(8))
