"""Names real PyPTO kernels take from PyPTO's internals: pypto_impl, operation.op_wrapper,
runtime._device_synchronize, platform.npuarch, ReLuType, CachePolicy with set_cache_policy,
jit(new_ir=...). Each does what the kernel relies on."""

from __future__ import annotations

import time

import pytest
import torch

import pypto
import pypto.pypto_impl
import pypto.runtime
from pypto.operation import op_wrapper


@pytest.fixture(autouse=True)
def _fresh_options():
    pypto.reset_options()
    yield
    pypto.reset_options()


@op_wrapper
def scalar_div(tensor, other, is_reserve=False):
    return pypto.pypto_impl.ScalarDivS(tensor, pypto.pypto_impl.Element(tensor.dtype, other), is_reserve)


@pypto.frontend.jit(new_ir=True)
def divided(x: pypto.Tensor([8, 64], pypto.DT_FP32), w: pypto.Tensor([64, 32], pypto.DT_FP32),
            a: pypto.Tensor([8, 64], pypto.DT_FP32), b: pypto.Tensor([8, 64], pypto.DT_FP32),
            c: pypto.Tensor([8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    assert w.get_cache_policy(pypto.CachePolicy.NONE_CACHEABLE)
    a[:] = scalar_div(x, 4.0)
    b[:] = scalar_div(x, 2.0, True)
    scale = 0.5 if pypto.platform.npuarch == "DAV_3510" else 1.0
    c[:] = pypto.matmul(x, w, pypto.DT_FP32, extend_params={"relu_type": pypto.ReLuType.RELU}) * scale


def test_a_kernel_written_with_pyptos_internal_names_runs():
    x = torch.rand(8, 64) + 0.5
    w = torch.randn(64, 32)
    a, b, c = torch.empty(8, 64), torch.empty(8, 64), torch.empty(8, 32)
    divided(x, w, a, b, c)
    pypto.runtime._device_synchronize()
    torch.testing.assert_close(a, x / 4.0)
    torch.testing.assert_close(b, 2.0 / x)
    torch.testing.assert_close(c, torch.relu(x @ w), rtol=1e-4, atol=1e-4)
    assert pypto.platform.npuarch == "DAV_2201"  # the A2/A3 target's arch (pypto/target/a2a3.json)


def test_set_global_config_sets_options_by_group_and_key():
    pypto.pypto_impl.SetGlobalConfig({"pass.enable_slice": True, "runtime.stitch_function_max_num": 4,
                                      "global.platform.enable_cost_model": True})
    assert pypto.get_pass_options()["enable_slice"] is True
    assert pypto.get_runtime_options()["stitch_function_max_num"] == 4
    with pytest.raises(pypto.PyptoError, match="unknown pass_options key 'nope'"):
        pypto.pypto_impl.SetGlobalConfig({"pass.nope": 1})
    with pytest.raises(pypto.PyptoError, match="not '<group>.<key>'"):
        pypto.pypto_impl.SetGlobalConfig({"enable_slice": True})


def test_platform_npuarch_can_be_set():
    old = pypto.platform.npuarch
    try:
        pypto.platform.npuarch = "DAV_3510"
        assert pypto.platform.npuarch == "DAV_3510"
    finally:
        pypto.platform.npuarch = old


def test_compiler_monitor_reports_the_latest_compile():
    """GLM-4.5's MoE test reads pypto_impl.GetCompilerMonitorTotalElapsed() after its kernel ran and
    holds it to a budget: the seconds of the latest compile, growing with a lowering for new dims."""

    @pypto.frontend.jit
    def twice(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64],
                                                                                       pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x * 2.0

    x = torch.randn(16, 64)
    out = torch.empty_like(x)
    t0 = time.perf_counter()
    twice(x, out)
    wall = time.perf_counter() - t0
    first = pypto.pypto_impl.GetCompilerMonitorTotalElapsed()
    assert torch.equal(out, x * 2.0)
    assert 0.0 < first <= wall
    twice(x, out)  # cached: nothing compiled, the figure stays
    assert pypto.pypto_impl.GetCompilerMonitorTotalElapsed() == first
    x2 = torch.randn(24, 64)
    out2 = torch.empty_like(x2)
    twice(x2, out2)  # new dims: lowered again, the same compile takes longer
    assert torch.equal(out2, x2 * 2.0)
    assert pypto.pypto_impl.GetCompilerMonitorTotalElapsed() > first
