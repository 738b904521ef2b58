"""PyPTO's option schema at every entry point: each key PyPTO knows is accepted, an unknown key is
refused naming the known ones, and a kernel's option dicts are read when it compiles."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
import pypto.experimental
from pypto.tracing.options import DEFAULTS

# (group, key, a value PyPTO accepts for it): PyPTO's configuration schema, key by key
SCHEMA = [
    ("pass_options", k, v) for k, v in [
        ("pg_parallel_lower_bound", 20), ("pg_lower_bound", 512), ("pg_partition_algorithm", "Iso"),
        ("mg_copyin_upper_bound", 1 << 20), ("mg_vec_parallel_lb", 48), ("copyout_resolve_coalescing", 0),
        ("auto_mix_partition", 1), ("sg_set_tunevf_mode", 1), ("enable_slice", True), ("sg_set_scope", [-1, 0, 0]),
        ("sg_set_ooo_scope", [-1]), ("ooo_sched_mode", "GAPMIN"), ("ooo_sort_mode_aic", ""),
        ("ooo_sort_mode_aiv", ""), ("cube_l1_reuse_setting", {-1: 2}), ("cube_nbuffer_setting", {-1: 2}),
        ("vec_nbuffer_setting", {-1: 2}),
    ]
] + [
    ("runtime_options", k, v) for k, v in [
        ("device_sched_mode", 1), ("run_mode", pypto.RunMode.SIM), ("stitch_function_max_num", 64),
        ("max_workspace_kb", 1024), ("valid_shape_optimize", 1), ("ready_on_host_tensors", ["x"]),
        ("device_sched_parallelism", 2), ("launch_sched_aicpu_num", 5), ("launch_early_mode", 1),
    ]
] + [
    ("host_options", k, v) for k, v in [
        ("compile_stage", pypto.CompStage.ALL_COMPLETE), ("compile_monitor_enable", 1), ("compile_timeout", 60),
        ("compile_timeout_stage", 0), ("compile_monitor_print_interval", 30),
    ]
] + [
    ("codegen_options", k, v) for k, v in [
        ("support_dynamic_aligned", True), ("soc_version", "Ascend910B2"), ("enable_pmu_trace", True),
        ("vf_options", ""), ("vf_compiler", True),
    ]
] + [
    ("verify_options", k, v) for k, v in [
        ("enable_pass_verify", False), ("pass_verify_save_tensor", False), ("pass_verify_save_tensor_dir", ""),
        ("pass_verify_pass_filter", []), ("pass_verify_error_tol", [1e-3, 1e-3]),
    ]
] + [
    ("debug_options", k, v) for k, v in [("compile_debug_mode", 0), ("runtime_debug_mode", 0), ("dump_pass_graph", [])]
] + [("operation_options", "combine_axis", True)]


@pytest.fixture(autouse=True)
def _fresh_options():
    pypto.reset_options()
    yield
    pypto.reset_options()


def _setter(group: str):
    return pypto.experimental.set_operation_options if group == "operation_options" \
        else getattr(pypto, f"set_{group}")


def _getter(group: str):
    return pypto.experimental.get_operation_options if group == "operation_options" \
        else getattr(pypto, f"get_{group}")


def _kernel(**opts):
    @pypto.frontend.jit(**opts)
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = pypto.exp(x)
    return k


def test_the_schema_covers_every_group():
    assert {g for g, _k, _v in SCHEMA} == set(DEFAULTS)


@pytest.mark.parametrize(("group", "key", "value"), SCHEMA, ids=[f"{g}.{k}" for g, k, _ in SCHEMA])
def test_each_key_is_accepted_by_setter_scope_and_jit(group, key, value):
    _setter(group)(**{key: value})
    assert _getter(group)()[key] == value
    pypto.reset_options()
    with pypto.options(**{group: {key: value}}):
        assert _getter(group)()[key] == value
    x = np.ones((8, 32), np.float32)
    y = np.zeros_like(x)
    _kernel(**{group: {key: value}})(x, y)  # compiles and runs with the key in force
    assert np.allclose(y, np.exp(x))


@pytest.mark.parametrize("group", list(DEFAULTS))
def test_an_unknown_key_is_refused_with_the_known_ones(group):
    with pytest.raises(pypto.PyptoError) as e:
        _setter(group)(not_a_key=1)
    assert "not_a_key" in e.value.message and all(k in e.value.message for k in DEFAULTS[group])
    with pytest.raises(pypto.PyptoError, match="not_a_key"):
        _kernel(**{group: {"not_a_key": 1}})


def test_option_dicts_are_read_when_the_kernel_compiles():
    """PyPTO's examples decorate with a module-level dict and set its run_mode in main()."""
    runtime = {"run_mode": pypto.RunMode.NPU}
    k = _kernel(runtime_options=runtime, pass_options={"enable_slice": True})
    x = np.ones((8, 32), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(pypto.PyptoError, match="run_mode NPU needs an Ascend NPU"):
        k(x, y)
    runtime["run_mode"] = pypto.RunMode.SIM
    k(x, y)
    assert np.allclose(y, np.exp(x))
    runtime["not_a_key"] = 1  # a key added after decoration is refused at the call that reads it
    with pytest.raises(pypto.PyptoError, match="unknown runtime_options key 'not_a_key'"):
        k(x, y)


def test_options_scope_keyword_groups_and_stacked_decorators_merge_key_by_key():
    @pypto.options(runtime_options={"stitch_function_max_num": 8})
    @pypto.options(runtime_options={"device_sched_mode": 1}, operation_options={"combine_axis": False},
                   matrix_size=[64, 64, 64])
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = x + 1

    x = np.ones((8, 32), np.float32)
    y = np.zeros_like(x)
    ck = k.compile(x, y)
    assert ck.options["runtime_options"]["stitch_function_max_num"] == 8
    assert ck.options["runtime_options"]["device_sched_mode"] == 1
    assert ck.options["runtime_options"]["run_mode"] == pypto.RunMode.SIM
    assert ck.options["operation_options"]["combine_axis"] is False


def test_experimental_is_an_importable_module():
    from pypto.experimental import online_softmax, set_operation_options, transposed_batchmatmul

    set_operation_options(combine_axis=False)
    assert pypto.experimental.get_operation_options() == {"combine_axis": False}
    assert callable(transposed_batchmatmul)  # built from other ops: tests/test_composite_ops.py
    with pytest.raises(pypto.PyptoError, match="experimental.online_softmax is not supported yet"):
        online_softmax()


def test_a_runtime_option_the_board_reads_as_an_integer_must_be_one(tmp_path):
    """`max_workspace_kb`, `stitch_function_max_num`, `device_sched_mode`: a non-integer is refused at the decorator,
    named, at its line (it was a bare ValueError from inside the sim board); numpy integers are integers."""
    from server.analyze import analyze_kernel

    for key in ("max_workspace_kb", "stitch_function_max_num", "device_sched_mode"):
        with pytest.raises(pypto.PyptoError, match=f"runtime_options {key} 'lots' is not an integer"):
            _kernel(runtime_options={key: "lots"})
    _kernel(runtime_options={"max_workspace_kb": np.int64(4096), "stitch_function_max_num": 2})
    path = tmp_path / "k.py"
    path.write_text('import pypto\n\n\n@pypto.frontend.jit(runtime_options={"max_workspace_kb": 1.5})\n'
                    "def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):\n"
                    "    pypto.set_vec_tile_shapes(16, 32)\n    out[:] = pypto.exp(x)\n")
    error = analyze_kernel(str(path), path.read_text(), "k", {"board": "sim"})["error"]
    assert error["message"] == "runtime_options max_workspace_kb 1.5 is not an integer" and error["line"] == 4
