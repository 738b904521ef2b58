"""Scalars read from integer kernel inputs (`seq_lens[b]`, `block_table[b, j]`), as PyPTO's
GetTensorData: run-time values that set loop trip counts and view offsets, bound per call from the
input's elements, with errors at the reading line."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto
from pypto.compiler.instruments import bindings_dir_name
from pypto.frontend.inputs import TensorSpec, example_arguments, parse_value
from pypto.ir import symbolic as S
from pypto.record import compile_record, profile

ROWS, WIDTH, TILE = 4, 64, 16


@pypto.frontend.jit
def ragged_exp(x: pypto.Tensor([ROWS, WIDTH], pypto.DT_FP32), lens: pypto.Tensor([ROWS], pypto.DT_INT32),
               out: pypto.Tensor([ROWS, WIDTH], pypto.DT_FP32)):
    """exp of the first lens[b] tiles of each row.

    pypto-inputs:
        lens: int32[4] = [1, 4, 0, 2]
    """
    pypto.set_vec_tile_shapes(1, TILE)
    for b in pypto.loop(ROWS):
        for t in pypto.loop(lens[b]):
            out[b:b + 1, t * TILE:(t + 1) * TILE] = pypto.exp(x[b:b + 1, t * TILE:(t + 1) * TILE])


def _ragged_want(x: torch.Tensor, lens: list[int]) -> torch.Tensor:
    want = torch.zeros(ROWS, WIDTH)
    for b, n in enumerate(lens):
        want[b, :n * TILE] = torch.exp(x[b, :n * TILE])
    return want


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, WIDTH // TILE), min_size=ROWS, max_size=ROWS))
def test_a_read_scalar_is_the_loop_trip_count_of_each_call(lens):
    x = torch.randn(ROWS, WIDTH)
    out = torch.zeros(ROWS, WIDTH)
    ragged_exp(x, x.new_tensor(lens, dtype=torch.int32), out)
    torch.testing.assert_close(out, _ragged_want(x, lens))


def test_the_values_read_are_part_of_what_the_program_is_lowered_for():
    x = torch.randn(ROWS, WIDTH)
    kernel = ragged_exp.fresh()
    for lens in ([1, 1, 1, 1], [4, 0, 0, 4], [1, 1, 1, 1]):
        kernel(x, torch.tensor(lens, dtype=torch.int32), torch.zeros(ROWS, WIDTH))
    ck = next(iter(kernel.cache.values()))
    keys = [dict(k) for k in ck.lowered]
    assert len(keys) == 2 and all(k["lens[0]"] in (1, 4) for k in keys)  # one lowering per set of values
    name = bindings_dir_name(keys[0])
    assert name.startswith("reads=") and "[" not in name  # a dump folder name, not 4 entries per element


def test_the_record_binds_the_elements_and_the_swimlane_has_one_task_per_trip():
    rec = compile_record(ragged_exp)  # inputs from the docstring: lens = [1, 4, 0, 2]
    assert {k: v for k, v in rec.bindings.items() if k.startswith("lens")} == \
        {"lens[0]": 1, "lens[1]": 4, "lens[2]": 0, "lens[3]": 2}
    outer, inner = (n for n in rec.program.graph.walk() if n.op == "loop")
    assert S.to_str(inner.attrs["stop"]) == f"lens[{outer.attrs['index']}]"
    run = profile(rec).run
    assert run is not None and len(run.tasks) == 1 + 4 + 0 + 2


def test_a_read_round_trips_through_the_symbolic_text_form():
    e = S.floordiv(S.SymExpr(0, ((S.Read("seq_lens", (S.sym("b"),)), 1),)), 32)
    assert S.to_str(e) == "(seq_lens[b] // 32)" or S.to_str(e) == "seq_lens[b] // 32"
    assert S.parse(S.to_str(e)) == e
    table = S.SymExpr(0, ((S.Read("block_table", (S.sym("b"), S.add(S.sym("j"), 1))), 1),))
    assert S.parse(S.to_str(table)) == table
    assert S.evaluate(S.mul(table, 4), {"b": 1, "j": 0, "block_table[1, 1]": 7}) == 28
    assert S.reads_of(S.add(e, table)) == {"seq_lens", "block_table"}


@pypto.frontend.jit
def paged_copy(cache: pypto.Tensor([32, 8], pypto.DT_FP32), table: pypto.Tensor([2, 3], pypto.DT_INT32),
               out: pypto.Tensor([12, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 8)
    for b in pypto.loop(2):
        row = table[b]  # a window on the input: its elements are the input's
        for j in pypto.loop(3):
            start = row[j] * 2
            out[b * 6 + j * 2:b * 6 + j * 2 + 2, :] = pypto.view(cache, [2, 8], [start, 0]) + 0.0


def test_a_read_through_a_window_sets_view_offsets():
    cache = torch.randn(32, 8)
    table = torch.tensor([[3, 0, 15], [7, 7, 1]], dtype=torch.int32)
    out = torch.zeros(12, 8)
    paged_copy(cache, table, out)
    want = torch.cat([cache[2 * int(s):2 * int(s) + 2] for s in table.reshape(-1)])
    torch.testing.assert_close(out, want)


def test_a_run_time_index_outside_the_tensor_is_an_error_at_the_reading_line():
    with pytest.raises(pypto.PyptoError, match=r"reads .*outside|runs past") as e:
        paged_copy(torch.randn(32, 8), torch.tensor([[3, 0, 16], [0, 0, 0]], dtype=torch.int32), torch.zeros(12, 8))
    assert e.value.line == paged_copy.fn.__code__.co_firstlineno + 8  # the view's line


@pypto.frontend.jit
def nested_read(x: pypto.Tensor([4, 8], pypto.DT_FP32), idx: pypto.Tensor([4], pypto.DT_INT32),
                out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8)
    for b in pypto.loop(4):
        n = idx[idx[b]]
        out[b:b + 1, :] = x[n:n + 1, :] + 1.0


def test_an_index_read_from_the_tensor_itself_outside_it_names_the_element_and_the_line():
    with pytest.raises(pypto.PyptoError, match=r"reads idx\[7\] \(written idx\[idx\[") as e:
        nested_read(torch.randn(4, 8), torch.tensor([3, 7, 2, 0], dtype=torch.int32), torch.zeros(4, 8))
    assert e.value.line == nested_read.fn.__code__.co_firstlineno + 6


def test_reads_that_the_compiler_cannot_make_are_clear_errors_at_the_line():
    @pypto.frontend.jit
    def computed(x: pypto.Tensor([4, 8], pypto.DT_INT32), out: pypto.Tensor([4, 8], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(1, 8)
        y = x + 1
        n = y[0, 0]  # line +4
        out[:] = x + n

    with pytest.raises(pypto.PyptoError, match="tensor the kernel computes") as e:
        computed(torch.zeros(4, 8, dtype=torch.int32), torch.zeros(4, 8, dtype=torch.int32))
    assert e.value.line == computed.fn.__code__.co_firstlineno + 4

    @pypto.frontend.jit
    def past(x: pypto.Tensor([4], pypto.DT_INT32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8)
        for _ in pypto.loop(x[4]):
            out[:] = out + 1.0

    with pytest.raises(pypto.PyptoError, match="index 4 is out of range for dim 0 of size 4"):
        past(torch.zeros(4, dtype=torch.int32), torch.zeros(4, 8))


def test_a_float_tensor_indexed_in_full_is_still_a_view():
    @pypto.frontend.jit
    def pick(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([1, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8)
        out[:] = pypto.reshape(x[2, 3], [1, 1]) * 2.0

    x = torch.randn(4, 8)
    out = torch.zeros(1, 1)
    pick(x, out)
    assert float(out) == pytest.approx(float(x[2, 3]) * 2.0)


def test_the_inputs_block_gives_an_input_its_values():
    assert parse_value("int32[3] = [5, 0, 2]") == TensorSpec(pypto.DT_INT32, (3,), [5, 0, 2])
    assert parse_value("int32[2, 2] = 7").values == 7
    with pytest.raises(ValueError, match="fill shape"):
        parse_value("int32[3] = [1, 2]")
    args = example_arguments(ragged_exp)
    assert args["lens"].tolist() == [1, 4, 0, 2] and args["lens"].dtype == torch.int32


def test_zeros_with_a_positional_dtype_says_to_pass_it_by_keyword():
    @pypto.frontend.jit
    def z(out: pypto.Tensor([2, 2], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 2)
        out[:] = pypto.zeros([2, 2], pypto.DT_FP32)

    with pytest.raises(pypto.PyptoError, match="keyword argument"):
        z(torch.zeros(2, 2))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.booleans(), st.sampled_from(["int32", "int64", "bool"]))
def test_the_bindings_of_an_input_are_its_elements_in_c_order(shape, transposed, dtype):
    """`read_bindings` binds every element of an input the kernel reads scalars from, keyed as `read_key` names it,
    in the order `np.ndenumerate` walks it (also through a transposed view, and for 0-d and empty inputs)."""
    import numpy as np

    from pypto.frontend.jit import read_bindings

    arr = np.asarray(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 3).astype(dtype)
    if transposed:
        arr = arr.T
    graph = ragged_exp.compile(torch.randn(ROWS, WIDTH), torch.zeros(ROWS, dtype=torch.int32),
                               torch.zeros(ROWS, WIDTH)).graph
    got = read_bindings(graph, {"lens": arr})
    want = {S.read_key("lens", idx): int(v) for idx, v in np.ndenumerate(arr)}
    assert got == want and list(got) == list(want)
