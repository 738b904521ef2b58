"""Compile and run options: global setters, `pypto.options(...)` scopes, and per-kernel keywords.

Seven option groups, each a dict with known keys and defaults (PyPTO's schema). The options in force for a
compile are, lowest precedence first: the defaults, the global setters
(`set_pass_options` …), the `with pypto.options(...)` scopes open at the call, then the
`pypto.options` decorator and the jit decorator's keywords — read when the kernel compiles, as
PyPTO reads them, not copied when it is decorated. An unknown key is a
`PyptoError` that lists the known ones. Effective options are frozen into a hashable
value that is part of the compile-cache key.
"""

from __future__ import annotations

import copy
import operator
import warnings
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from pypto.ir.enums import CompStage, RunMode
from pypto.ir.errors import PyptoError, ShapeError
from pypto.tracing import builder, tiling

# PyPTO's whole configuration schema (its framework's config file, at the commit the spec pins), plus
# a few older key names that kernels still pass: a key PyPTO accepts is never refused here. Most keys
# tune PyPTO's own passes and runtime and change nothing on this board; docs/options.md says which
# ones this compiler and board honour.
DEFAULTS: dict[str, dict[str, Any]] = {
    "pass_options": {
        "pg_parallel_lower_bound": 20, "pg_lower_bound": 512, "pg_partition_algorithm": "Iso",
        "mg_copyin_upper_bound": 104857600, "mg_vec_parallel_lb": 48, "copyout_resolve_coalescing": 0,
        "auto_mix_partition": 0, "sg_set_tunevf_mode": 0, "enable_slice": False,
        "sg_set_scope": [-1, 0, 0], "sg_set_ooo_scope": [-1], "ooo_sched_mode": "", "ooo_sort_mode_aic": "",
        "ooo_sort_mode_aiv": "",
        "cube_l1_reuse_setting": [], "cube_l1_reuse_setting_by_func": {}, "cube_l1_reuse_setting_by_label": {},
        "cube_nbuffer_setting": [[-1, 1]], "cube_nbuffer_setting_by_func": {}, "cube_nbuffer_setting_by_label": {},
        "vec_nbuffer_setting": [], "vec_nbuffer_setting_by_func": {}, "vec_nbuffer_setting_by_label": {},
    },
    "runtime_options": {
        "run_mode": None,  # None: SIM when no NPU is present (always, on this product)
        "device_sched_mode": 0, "stitch_function_max_num": 128, "max_workspace_kb": 0, "valid_shape_optimize": 0,
        "ready_on_host_tensors": [], "device_sched_parallelism": 1, "launch_sched_aicpu_num": 7,
        "launch_sched_same_cluster": 1, "launch_early_mode": 0,
    },
    "host_options": {
        "compile_stage": CompStage.ALL_COMPLETE, "compile_monitor_enable": 0, "compile_timeout": 600,
        "compile_timeout_stage": -1, "compile_monitor_print_interval": 60,
    },
    "codegen_options": {"support_dynamic_aligned": False, "soc_version": "", "enable_pmu_trace": False,
                        "vf_options": "", "vf_compiler": True},
    "verify_options": {
        "enable_pass_verify": False, "pass_verify_save_tensor": False, "pass_verify_save_tensor_dir": "",
        "pass_verify_pass_filter": [], "pass_verify_error_tol": [1e-3, 1e-3],
    },
    "debug_options": {"compile_debug_mode": 0, "runtime_debug_mode": 0, "dump_pass_graph": False},
    # `pypto.experimental.set_operation_options(combine_axis=...)`
    "operation_options": {"combine_axis": True},
}
GROUPS = tuple(DEFAULTS)
KERNEL_KEYS = ("name", "vec_tile_shapes", "cube_tile_shapes", "conv_tile_shapes", "matrix_size")
JIT_ONLY_KEYS = ("new_ir",)  # `@jit(new_ir=...)` picks PyPTO's frontend implementation: accepted, no effect here

_global: dict[str, Any] = {g: {} for g in GROUPS}
_scopes: list[dict[str, Any]] = []


# runtime options the sim board reads as integers (`pypto.boards.sim`, `pypto.boards.stitch`): refused at the
# decorator, not as a bare ValueError deep in the board
_INTEGERS = frozenset({"device_sched_mode", "stitch_function_max_num", "max_workspace_kb"})


def check_group(group: str, values: dict[str, Any] | None) -> dict[str, Any]:
    """Validate one group's keys (and the few values with a fixed set of choices). Returns the
    dict itself, not a copy: PyPTO reads a kernel's option dicts when it compiles, so a kernel
    decorated with a module-level dict sees the values that dict holds at its first call."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise PyptoError(f"{group} must be a dict of option: value, got {type(values).__name__}")
    known = DEFAULTS[group]
    for key, val in values.items():
        if key not in known:
            raise PyptoError(f"unknown {group} key {key!r}; known keys: {', '.join(sorted(known))}")
        if key == "run_mode" and val is not None:
            try:
                RunMode(val)
            except ValueError:
                raise PyptoError(f"run_mode {val!r} is not a RunMode; use pypto.RunMode.SIM (1) "
                                 f"or pypto.RunMode.NPU (0)") from None
        if key in _INTEGERS and val is not None:
            try:
                operator.index(val)
            except TypeError:
                raise PyptoError(f"{group} {key} {val!r} is not an integer") from None
        if key == "compile_stage":
            try:
                CompStage(val)
            except ValueError:
                raise PyptoError(f"compile_stage {val!r} is not a pypto.CompStage") from None
    return values


def check_kernel_options(opts: dict[str, Any]) -> dict[str, Any]:
    """Validate the keywords of `pypto.options(...)` / `@jit(...)`."""
    out: dict[str, Any] = {}
    for key, val in opts.items():
        if key in GROUPS:
            out[key] = check_group(key, val)
        elif key in KERNEL_KEYS:
            if key in ("vec_tile_shapes", "cube_tile_shapes") and val is not None:
                _check_tiles(key, val)
            out[key] = val
        else:
            raise PyptoError(f"unknown option {key!r}; known: {', '.join(GROUPS + KERNEL_KEYS)}")
    return out


def _check_tiles(key: str, val: Any) -> None:
    """The tile rules that need no op, checked where the option is written (not at the kernel's call)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tiling.PyptoWarning)  # warned where the tiles apply
            if key == "vec_tile_shapes":
                tiling.check_vec_call(list(val))
            else:
                m, k, n, *_ = list(val)
                tiling.check_cube_call(m, k, n)
    except (ShapeError, TypeError, ValueError) as e:
        raise PyptoError(f"{key}={val!r}: {e}") from None


def _setter(group: str) -> Callable[..., None]:
    def setter(**kwargs: Any) -> None:
        try:
            checked = check_group(group, kwargs)
        except PyptoError as e:
            raise e.with_traceback(None) from None  # the user's call is the location; hide pypto frames
        _global[group].update(checked)

    setter.__name__ = f"set_{group}"
    setter.__doc__ = f"Set {group} for every kernel compiled after this call ({', '.join(DEFAULTS[group])})."
    return setter


def _getter(group: str) -> Callable[[], dict[str, Any]]:
    def getter() -> dict[str, Any]:
        return effective({})[group]

    getter.__name__ = f"get_{group}"
    return getter


set_pass_options = _setter("pass_options")
set_runtime_options = _setter("runtime_options")
set_host_options = _setter("host_options")
set_codegen_options = _setter("codegen_options")
set_verify_options = _setter("verify_options")
set_debug_options = _setter("debug_options")
set_operation_options = _setter("operation_options")
get_pass_options = _getter("pass_options")
get_runtime_options = _getter("runtime_options")
get_host_options = _getter("host_options")
get_codegen_options = _getter("codegen_options")
get_verify_options = _getter("verify_options")
get_debug_options = _getter("debug_options")
get_operation_options = _getter("operation_options")


def reset_options() -> None:
    """Forget every global setter call."""
    _global.clear()
    _global.update({g: {} for g in GROUPS})


def set_global_option(group: str, key: str, value: Any) -> None:
    """One key of a group, as the group's setter would set it (`pypto.pypto_impl.SetGlobalConfig`)."""
    _global[group][key] = value


def set_global_tile_shapes(kind: str, dims: Any) -> None:
    """`set_vec_tile_shapes` / `set_cube_tile_shapes` called outside a kernel: a default for all."""
    _global[f"{kind}_tile_shapes"] = dims


def global_tile_shapes(kind: str) -> Any:
    return _global.get(f"{kind}_tile_shapes")


def effective(kernel_opts: dict[str, Any]) -> dict[str, Any]:
    """The options in force: defaults < global setters < open scopes < the kernel's own."""
    out: dict[str, Any] = copy.deepcopy(DEFAULTS)
    layers = [_global, *_scopes, kernel_opts]
    for layer in layers:
        for key, val in layer.items():
            if key in GROUPS:
                out[key].update(check_group(key, val))  # again: a dict may have changed since it was handed over
            else:
                out[key] = val
    return out


def freeze(value: Any) -> Any:
    """A hashable, order-independent form of an options value (for the cache key)."""
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


@runtime_checkable
class TakesOptions(Protocol):
    """A kernel (`pypto.frontend.JitKernel`): `@pypto.options` applied to it adds to its options."""

    def add_options(self, opts: dict[str, Any]) -> None: ...


class options:  # noqa: N801 - PyPTO's name
    """`pypto.options(...)`: a decorator on a kernel, or a `with` scope.

    Inside a kernel being traced, the scope's `vec_tile_shapes` / `cube_tile_shapes` apply to
    the ops created in the `with` block and are restored after it.
    """

    def __init__(self, name: str | None = None, codegen_options: dict[str, Any] | None = None,
                 host_options: dict[str, Any] | None = None, pass_options: dict[str, Any] | None = None,
                 runtime_options: dict[str, Any] | None = None, verify_options: dict[str, Any] | None = None,
                 debug_options: dict[str, Any] | None = None, vec_tile_shapes: Any = None,
                 cube_tile_shapes: Any = None, conv_tile_shapes: Any = None, matrix_size: Any = None,
                 operation_options: dict[str, Any] | None = None, **unknown: Any) -> None:
        raw = {"name": name, "codegen_options": codegen_options, "host_options": host_options,
               "pass_options": pass_options, "runtime_options": runtime_options,
               "verify_options": verify_options, "debug_options": debug_options,
               "vec_tile_shapes": vec_tile_shapes, "cube_tile_shapes": cube_tile_shapes,
               "conv_tile_shapes": conv_tile_shapes, "matrix_size": matrix_size,
               "operation_options": operation_options}
        try:
            self.values = check_kernel_options({**{k: v for k, v in raw.items() if v is not None}, **unknown})
        except PyptoError as e:
            raise e.with_traceback(None) from None  # the user's call is the location; hide pypto frames
        self._restore: Callable[[], None] | None = None

    def __enter__(self) -> options:
        b = builder.current()
        if b is not None:
            self._restore = b.push_tile_options(self.values)
        else:
            _scopes.append(self.values)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._restore is not None:
            self._restore()
            self._restore = None
        elif _scopes and _scopes[-1] is self.values:
            _scopes.pop()

    def __call__(self, fn: Any) -> Any:
        if isinstance(fn, TakesOptions):  # already a kernel (`@pypto.options` above `@pypto.jit`)
            fn.add_options(self.values)
            return fn
        # a plain function: the jit decorator below it (or above) takes these layers, innermost first
        fn.__pypto_options__ = [*getattr(fn, "__pypto_options__", []), self.values]
        return fn
