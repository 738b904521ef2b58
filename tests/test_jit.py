"""The jit boundary: annotations, argument kinds, the compile cache, options, run modes."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest
import torch

import pypto


def _add_one():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x + 1.0

    return k


def test_dynamic_dim_change_does_not_recompile():
    k = _add_one()
    for rows in (4, 9, 33):
        x = torch.randn(rows, 64)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x + 1)
    assert k.compile_count == 1


def test_static_dim_change_recompiles():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.STATIC, 32], pypto.DT_FP32), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x * 2.0

    for rows in (4, 8, 4):
        x = torch.randn(rows, 32)
        out = torch.empty_like(x)
        k(x, out)
        torch.testing.assert_close(out, x * 2)
    assert k.compile_count == 2


def test_ellipsis_annotation_keeps_trailing_axes_static():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 64)
        out[:] = pypto.exp(x)

    x = torch.randn(2, 4, 64)
    out = torch.empty_like(x)
    k(x, out)
    x2 = torch.randn(5, 4, 64)
    out2 = torch.empty_like(x2)
    k(x2, out2)
    assert k.compile_count == 1
    x3 = torch.randn(5, 4, 32)
    out3 = torch.empty_like(x3)
    k(x3, out3)
    assert k.compile_count == 2
    torch.testing.assert_close(out3, torch.exp(x3))
    graph = next(iter(k.cache.values())).graph
    assert str(graph.params()[0].type) == "fp32[x.d0, 4, 64]"


def test_bracket_and_bare_annotations():
    @pypto.jit
    def k(x: pypto.Tensor[[16, 32], pypto.DT_FP16], y: pypto.Tensor[...], out: pypto.Tensor):
        pypto.set_vec_tile_shapes(16, 32)
        out[:] = x + y

    x = torch.randn(16, 32).half()
    y = torch.randn(16, 32).half()
    out = torch.empty_like(x)
    k(x, y, out)
    torch.testing.assert_close(out, x + y)


def test_named_dynamic_dim_is_shared_between_params():
    bs = pypto.frontend.dynamic("bs")

    @pypto.jit
    def k(x: pypto.Tensor((bs, 32), pypto.DT_FP32), y: pypto.Tensor((bs, 32), pypto.DT_FP32),
          out: pypto.Tensor((bs, 32), pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = x - y

    x, y = torch.randn(6, 32), torch.randn(6, 32)
    out = torch.empty_like(x)
    k(x, y, out)
    torch.testing.assert_close(out, x - y)
    with pytest.raises(pypto.PyptoError, match="dim 0 = 5"):
        k(x, torch.randn(5, 32), out)


def test_numpy_arguments_are_written_in_place():
    k = _add_one()
    x = np.arange(128, dtype=np.float32).reshape(2, 64)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_allclose(out, x + 1)


def test_returning_style_allocates_the_output():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)) -> pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32):
        pypto.set_vec_tile_shapes(8, 64)
        out = pypto.tensor(x.shape, pypto.DT_FP32)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = pypto.sigmoid(x[i:i + 1, :])
        return out

    x = torch.randn(3, 64)
    got = k(x)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, torch.sigmoid(x))


@dataclasses.dataclass(frozen=True)
class Cfg:
    scale: float
    shift: int


def test_non_tensor_arguments_are_compile_time_constants():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor(), cfg: Cfg, square: bool = False):
        pypto.set_vec_tile_shapes(8, 16)
        y = x * cfg.scale + cfg.shift
        if square:  # decided at compile time
            y = y * y
        out[:] = y

    x = torch.randn(8, 16)
    out = torch.empty_like(x)
    k(x, out, Cfg(2.0, 1))
    torch.testing.assert_close(out, x * 2 + 1)
    k(x, out, Cfg(2.0, 1), square=True)
    torch.testing.assert_close(out, (x * 2 + 1) ** 2)
    k(x, out, Cfg(3.0, 1))
    torch.testing.assert_close(out, x * 3 + 1)
    k(x, out, Cfg(2.0, 1))
    assert k.compile_count == 3


def test_options_are_part_of_the_cache_key_and_unknown_keys_fail():
    k = _add_one()
    x = torch.randn(2, 64)
    out = torch.empty_like(x)
    k(x, out)
    with pypto.options(pass_options={"vec_nbuffer_setting": [[-1, 2]]}):
        k(x, out)
    assert k.compile_count == 2
    with pytest.raises(pypto.PyptoError, match="known keys: .*stitch_function_max_num"):
        pypto.set_runtime_options(stich_function_max_num=4)


def test_option_setters_getters_and_reset():
    try:
        pypto.set_runtime_options(stitch_function_max_num=4)
        assert pypto.get_runtime_options()["stitch_function_max_num"] == 4
        with pypto.options(runtime_options={"stitch_function_max_num": 8}):
            assert pypto.get_runtime_options()["stitch_function_max_num"] == 8
        assert pypto.get_runtime_options()["stitch_function_max_num"] == 4
        pypto.set_verify_options(enable_pass_verify=True, pass_verify_error_tol=[1e-3, 1e-3])
        assert pypto.get_verify_options()["enable_pass_verify"] is True
    finally:
        pypto.reset_options()
    assert pypto.get_runtime_options()["stitch_function_max_num"] == 128
    assert pypto.get_verify_options()["enable_pass_verify"] is False


def test_options_decorator_in_either_order_and_vec_tile_default():
    @pypto.options(vec_tile_shapes=[4, 32], name="scaled")
    @pypto.jit(debug_options={"compile_debug_mode": 0})
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = x * 3.0

    @pypto.jit
    @pypto.options(vec_tile_shapes=[4, 32])
    def k2(x: pypto.Tensor(), out: pypto.Tensor()):
        assert pypto.get_vec_tile_shapes() == [4, 32]
        out[:] = x * 3.0

    x = torch.randn(4, 32)
    for kern in (k, k2):
        out = torch.empty_like(x)
        kern(x, out)
        torch.testing.assert_close(out, x * 3)
    g = next(iter(k.cache.values())).graph
    assert g.name == "scaled"
    assert [t.dims for t in g.tile_configs] == [(4, 32)]


def test_options_scope_inside_kernel_scopes_tile_shapes():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)
        y = x + 1.0
        with pypto.options(vec_tile_shapes=[2, 16]):
            y = y * 2.0
        out[:] = y - 1.0

    x = torch.randn(4, 32)
    out = torch.empty_like(x)
    k(x, out)
    torch.testing.assert_close(out, (x + 1) * 2 - 1)
    g = next(iter(k.cache.values())).graph
    tiles = {n.op: g.tile_configs[n.tile].dims for n in g.nodes if n.tile is not None}
    assert tiles == {"add": (4, 32), "mul": (2, 16), "sub": (4, 32), "assemble": (4, 32)}


def test_run_modes():
    @pypto.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def sim(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x

    @pypto.jit(runtime_options={"run_mode": 0})
    def npu(x: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = x

    x = torch.randn(8, 8)
    out = torch.empty_like(x)
    sim(x, out)
    torch.testing.assert_close(out, x)
    with pytest.raises(pypto.PyptoError, match="RunMode.SIM"):
        npu(x, out)
    with pytest.raises(pypto.PyptoError, match="not a RunMode"):
        pypto.jit(runtime_options={"run_mode": 7})(lambda x: None)


def test_tile_configs_are_recorded_with_their_source_span():
    k = _add_one()
    x = torch.randn(2, 64)
    k(x, torch.empty_like(x))
    g = next(iter(k.cache.values())).graph
    (tc,) = g.tile_configs
    assert tc.kind == "vec" and tc.dims == (8, 64)
    span = tc.loc.span
    assert span is not None and span.file == __file__
    src = open(__file__).read().splitlines()[span.line - 1]
    assert src[span.col:span.end_col] == "pypto.set_vec_tile_shapes(8, 64)"
    assert pypto.get_vec_tile_shapes() is None  # outside a kernel, nothing global was set


def test_cube_tile_shapes_recorded_and_getter():
    seen = {}

    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([16, 32], [32, 64, 64], [16, 32])
        seen["cube"] = pypto.get_cube_tile_shapes()
        out[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b = torch.randn(32, 64).half(), torch.randn(64, 48).half()
    out = torch.empty(32, 48)
    k(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-3, atol=1e-3)
    assert seen["cube"] == [[16, 32], [32, 64, 64], [16, 32], False]


def test_semantic_labels_tag_following_ops():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 8)
        y = x + 1.0
        pypto.set_semantic_label("scale")
        y = y * 2.0
        pypto.set_semantic_label(None)
        out[:] = y

    x = torch.randn(8, 8)
    k(x, torch.empty_like(x))
    g = next(iter(k.cache.values())).graph
    assert {n.op: n.label for n in g.nodes if n.op in ("add", "mul")} == {"add": None, "mul": "scale"}


def test_symbolic_scalar_arithmetic():
    s = pypto.symbolic_scalar(5)
    assert s.is_concrete() and s.concrete() == 5
    b = pypto.frontend.dynamic("b")
    e = (b + 3) * 2 - b
    assert not e.is_concrete()
    assert str(e) == "SymbolicScalar(b + 6)"
    assert ((b + 1) - b) == 1
    assert (b.max(b + 2) - b) == 2
    with pytest.raises(pypto.PyptoError, match="runtime branch"):
        bool(b > 0)


def test_element_is_a_typed_scalar():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = x + pypto.Element(pypto.DT_FP16, 1.5)

    x = torch.randn(16, 16).half()
    out = torch.empty_like(x)
    k(x, out)
    torch.testing.assert_close(out, x + 1.5)


def test_bf16_is_a_real_bfloat16():
    @pypto.jit
    def k(x: pypto.Tensor([16, 16], pypto.DT_BF16), out: pypto.Tensor([16, 16], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(16, 16)
        out[:] = x * 3.0 + 1.0

    x = torch.randn(16, 16).bfloat16()
    out = torch.empty_like(x)
    k(x, out)
    # computed in fp32 then rounded to bf16 once per op, as torch does on the CPU
    assert torch.equal(out, x * 3.0 + 1.0)
    assert pypto.bytes_of(pypto.DT_BF16) == 2


def test_unchanged_user_output_when_kernel_fails_at_run_time():
    @pypto.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x + y

    out = torch.zeros(3, 8)
    with pytest.raises(pypto.PyptoError):
        k(torch.randn(3, 8), torch.randn(4, 8), out)
    assert torch.count_nonzero(out) == 0


@pytest.mark.parametrize("expr, message", [
    (lambda x: x ** -1, "negative integer exponent"),
    (lambda x: x // (x - x), "integer division by zero"),
    (lambda x: x % 0, "integer division by zero"),
])
def test_integer_arithmetic_without_an_integer_result_is_an_error(expr, message):
    @pypto.jit
    def k(x: pypto.Tensor([8, 8], pypto.DT_INT32), out: pypto.Tensor([8, 8], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = expr(x)

    x = torch.arange(1, 65, dtype=torch.int32).reshape(8, 8)
    out = torch.zeros_like(x)
    with pytest.raises(pypto.PyptoError, match=message) as info:
        k(x, out)
    assert info.value.file == __file__
    assert torch.count_nonzero(out) == 0


def test_a_sim_run_writes_the_cost_model_swimlane_where_pypto_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @pypto.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def soft(x: pypto.Tensor([4, 64], pypto.DT_FP32), y: pypto.Tensor([4, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = pypto.softmax(x, -1)

    x = np.random.rand(4, 64).astype(np.float32)
    soft(x, np.zeros_like(x))
    (top,) = (tmp_path / "output").iterdir()
    assert top.name.startswith("output_") and f"_{os.getpid()}_" in top.name
    merged = json.loads((top / "CostModelSimulationOutput" / "merged_swimlane.json").read_text())
    assert merged  # PyPTO's swimlane format (tests/test_trace.py checks its content)

    @pypto.jit
    def default_mode(x: pypto.Tensor([4, 64], pypto.DT_FP32), y: pypto.Tensor([4, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x

    monkeypatch.chdir(tmp_path / "output")
    default_mode(x, np.zeros_like(x))  # no run_mode asked: no files
    assert sorted(p.name for p in (tmp_path / "output").iterdir()) == [top.name]


def test_tensor_details_real_kernels_use():
    @pypto.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        shape = x.shape  # a list, as PyPTO's: kernels edit it
        shape[-1] //= 2
        half = pypto.Tensor(shape, pypto.DT_FP32, "half")  # inside a kernel: a named local tensor
        half[:] = pypto.view(x, shape, [0, 0]) * 2.0
        n = x.shape[0] * 1
        if isinstance(n, pypto.SymbolicScalar):
            n.as_variable()
        out[:] = half + 1.0

    x = np.random.rand(8, 64).astype(np.float32)
    out = np.zeros((8, 32), np.float32)
    k(x, out)
    np.testing.assert_allclose(out, x[:, :32] * 2.0 + 1.0, rtol=1e-6)
    ck = k.compile(x, out)
    (local,) = [n for n in ck.graph.nodes if n.op == "tensor"]
    assert local.name == "half"
    assert isinstance(pypto.Tensor([2, 3], pypto.DT_FP32).shape, list)


def test_a_symbolic_index_beside_a_slice_is_a_view():
    @pypto.jit
    def rows(x: pypto.Tensor([4, 32], pypto.DT_FP32), y: pypto.Tensor([4, 31], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32)
        for i in pypto.loop(4, name="L", idx_name="i"):
            y[i:i + 1, :] = pypto.unsqueeze(x[i, 1:], 0) * 2.0  # x[i, 1:]: an int-like index and a slice

    x = np.random.rand(4, 32).astype(np.float32)
    y = np.zeros((4, 31), np.float32)
    rows(x, y)
    np.testing.assert_allclose(y, x[:, 1:] * 2.0, rtol=1e-6)


@pypto.frontend.jit
def leading_dims(x: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    out[:] = x * 2.0


def test_an_annotation_with_dynamic_entries_describes_the_leading_dims_as_in_pypto():
    """PyPTO accepts an argument of higher rank than a DYNAMIC/STATIC annotation; the further dims
    are taken as they come (static: a new trailing size compiles anew)."""
    for shape in ((4, 64), (8, 64), (4, 32)):
        x = torch.randn(*shape)
        out = torch.zeros(*shape)
        leading_dims(x, out)
        torch.testing.assert_close(out, x * 2.0)
    assert len(leading_dims.cache) == 2  # [*, 64] twice (a dynamic row count), then [*, 32]
