"""The stand-in itself: torch's `npu` device on the CPU, the `torch.npu` namespace, and the `torch_npu`
module (its functions are in `pypto.npu.ops`, its profiler in `pypto.npu.profiler`).

Loaded only by `pypto.npu.patch_torch` / the stand-in's loader, in a process that runs a user's file for
the tools; docs/npu.md is the list of what is covered. How the device works on torch's CPU build:

- `torch.utils.rename_privateuse1_backend("npu")` makes "npu", "npu:0" and `torch.device("npu", 0)` valid
  devices, and `torch._register_device_module` makes `torch.npu` (and `import torch.npu`) this namespace;
- a fallback kernel for the PrivateUse1 dispatch key runs every op that lands there — factory functions
  given an NPU device (`torch.zeros(…, device="npu:0")`, `torch.randn`, `empty_like`, `new_zeros`, …) —
  with the CPU as the device, in every thread;
- what torch would copy between devices itself (`Tensor.to`, `torch.tensor`, `Tensor.new_tensor`) is
  wrapped to ask for the CPU instead; `Tensor.npu()` and `.to("npu")` return a copy, as a host-to-device
  transfer does, so a kernel writing into the copy leaves the original alone;
- a tensor "on the NPU" (one such a copy, a factory given an NPU device or `npu_format_cast` made, or a
  view of one) is marked so: its own `.npu()` / `.to("npu")` is the tensor itself, as torch_npu returns a
  tensor already on the device (`y = torch.zeros(n).npu(); kernel(y.npu())` writes into `y`).

Every tensor is a CPU tensor: `t.device` says `cpu`, and `.cpu()` returns the tensor itself — except a
tensor `npu_format_cast` made: it says `npu:N` (programs ask a device tensor for its storage format only
once they see it is on the NPU), and `.cpu()` / `.to("cpu")` of it is a copy that says `cpu`.
"""

from __future__ import annotations

import contextlib
import os
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

from pypto.npu import ops, profiler

VERSION = "0.0.0+pypto.standin"  # torch_npu.__version__: says what it is
DEVICE_NAME = "Ascend910B (PyPTO IDE stand-in on the CPU)"  # the sim board's chip class (pypto/target/a2a3.json)
CPU = torch.device("cpu")

_device = {"index": 0}  # torch.npu.set_device's device
_made: list[types.ModuleType] = []  # the torch_npu module, once made
_keep: list[Any] = []  # the fallback's torch.library.Library: registered while it lives


def _not_covered(where: str) -> Callable[[str], Any]:
    def missing(name: str) -> Any:
        raise AttributeError(f"{where}.{name} is not part of PyPTO IDE's NPU stand-in (docs/npu.md lists what is: "
                             "programs run here on the CPU, for the tools to compile and simulate)")
    return missing


def is_npu_device(d: Any) -> bool:
    """Whether `d` (a str, torch.device or None) names an NPU."""
    if isinstance(d, str):
        return d == "npu" or d.startswith("npu:")
    return isinstance(d, torch.device) and d.type == "npu"


def _is_cpu_device(d: Any) -> bool:
    return (isinstance(d, str) and (d == "cpu" or d.startswith("cpu:"))) or (isinstance(d, torch.device)
                                                                              and d.type == "cpu")


def _on_cpu(v: Any) -> Any:
    return CPU if is_npu_device(v) else v


def _index(device: Any) -> int:
    if device is None:
        return _device["index"]
    if isinstance(device, int):
        return device
    d = torch.device(device)
    return d.index if d.index is not None else _device["index"]


# ---- torch.npu ---------------------------------------------------------------------------------

class Stream:
    """A stream: every op here runs at once on the CPU, so waiting is a no-op."""

    npu_stream = 0  # the runtime's handle (PyPTO passes it to its launcher): none here

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("npu", _index(device))
        self.priority = priority

    def synchronize(self) -> None:
        """All work is done."""

    def query(self) -> bool:
        return True

    def wait_stream(self, stream: Any) -> None:
        """Nothing to wait for."""

    def wait_event(self, event: Any) -> None:
        """Nothing to wait for."""

    def record_event(self, event: Any = None) -> Event:
        return event if isinstance(event, Event) else Event()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class Event:
    """An event: recorded at once; elapsed_time is 0 (time a kernel with `pypto-ide profile`)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing

    def record(self, stream: Any = None) -> None:
        """Done at once."""

    def wait(self, stream: Any = None) -> None:
        """Nothing to wait for."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def query(self) -> bool:
        return True

    def elapsed_time(self, end_event: Any) -> float:
        return 0.0


STREAMS: list[Stream] = []  # the default stream, made once the device exists


def set_device(device: Any) -> None:
    _device["index"] = _index(device)


def current_device() -> int:
    return _device["index"]


def device_count() -> int:
    return 1


def is_available() -> bool:
    """True: tensors can be placed on the NPU device (the stand-in keeps them on the CPU)."""
    return True


def is_initialized() -> bool:
    return True


def init() -> None:
    """Nothing to initialise."""


def synchronize(device: Any = None) -> None:
    """CPU ops are done when they return."""


def get_device_name(device: Any = None) -> str:
    return DEVICE_NAME


def get_device_properties(device: Any = None) -> types.SimpleNamespace:
    return types.SimpleNamespace(name=DEVICE_NAME, total_memory=64 << 30)


def current_stream(device: Any = None) -> Stream:
    if not STREAMS:
        STREAMS.append(Stream())
    return STREAMS[0]


def default_stream(device: Any = None) -> Stream:
    return current_stream(device)


@contextlib.contextmanager
def stream(s: Any = None) -> Iterator[Any]:
    yield s


@contextlib.contextmanager
def device(d: Any) -> Iterator[None]:
    before = _device["index"]
    _device["index"] = _index(d)
    try:
        yield
    finally:
        _device["index"] = before


def is_current_stream_capturing() -> bool:
    return bool(_capturing)


_capturing: list[NPUGraph] = []  # the graphs being captured (torch.npu.graph), innermost last


class NPUGraph:
    """torch_npu's graph of captured device work (as CUDA graphs: capture once, replay many times). Here
    nothing is deferred: the work inside `torch.npu.graph(g)` runs as it is captured, on the CPU, so the
    first `replay()` has nothing left to do and does nothing — the outputs hold what one replay leaves in
    them. (A later replay after the inputs changed would, on the device, compute again: here it does not.)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.captured = False
        self.replays = 0

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global") -> None:
        _capturing.append(self)

    def capture_end(self) -> None:
        if self in _capturing:
            _capturing.remove(self)
        self.captured = True

    def replay(self) -> None:
        """The captured work already ran when it was captured."""
        self.replays += 1

    def reset(self) -> None:
        self.captured = False

    def pool(self) -> tuple[int, int]:
        return (0, id(self))

    def enable_debug_mode(self) -> None:
        """Nothing to debug: no graph is built."""

    def debug_dump(self, path: str) -> None:
        """Nothing is written."""


@contextlib.contextmanager
def graph(npu_graph: NPUGraph, pool: Any = None, stream: Any = None, capture_error_mode: str = "global",
          **kwargs: Any) -> Iterator[NPUGraph]:
    """Capture the block's device work into `npu_graph`: here the block runs as it is (see NPUGraph)."""
    npu_graph.capture_begin(pool, capture_error_mode)
    try:
        yield npu_graph
    finally:
        npu_graph.capture_end()


def graph_pool_handle() -> tuple[int, int]:
    return (0, 0)


def set_stream_limit(stream: Any, cube_num: int = -1, vector_num: int = -1) -> None:
    """Core limits only matter to a real device's scheduler."""


def set_device_limit(device: Any, cube_num: int = -1, vector_num: int = -1) -> None:
    """Core limits only matter to a real device's scheduler."""


def empty_cache() -> None:
    """No device memory is cached."""


def _zero_bytes(device: Any = None) -> int:
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """No device memory is counted."""


def manual_seed(seed: int) -> None:
    """NPU tensors come from the CPU's generator: seed it."""
    torch.random.default_generator.manual_seed(int(seed))


def seed() -> None:
    torch.random.default_generator.seed()


def initial_seed() -> int:
    return int(torch.random.default_generator.initial_seed())


def _is_in_bad_fork() -> bool:  # torch asks a device module this before seeding it
    return False


def _npu_namespace() -> types.ModuleType:
    m = types.ModuleType("torch.npu", "torch.npu of PyPTO IDE's NPU stand-in (docs/npu.md): the CPU plays the NPU.")
    for f in (set_device, current_device, device_count, is_available, is_initialized, init, synchronize,
              get_device_name, get_device_properties, current_stream, default_stream, stream, device,
              is_current_stream_capturing, set_stream_limit, set_device_limit, empty_cache, reset_peak_memory_stats,
              manual_seed, seed, initial_seed, _is_in_bad_fork, graph, graph_pool_handle):
        setattr(m, f.__name__, f)
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved"):
        setattr(m, name, _zero_bytes)
    m.manual_seed_all = manual_seed
    m.Stream = Stream
    m.Event = Event
    m.NPUGraph = NPUGraph
    m.config = types.SimpleNamespace(allow_internal_format=False)
    m.__getattr__ = _not_covered("torch.npu")  # type: ignore[method-assign]
    return m


# ---- tensors on the npu device -----------------------------------------------------------------

RESIDENT_ATTR = "pypto_npu_resident"  # the tensor is on the "device": its .npu() is itself


def _resident(t: torch.Tensor) -> bool:
    """Whether the tensor is on the NPU as the program sees it: made there, moved there, or a view of one."""
    while t is not None:
        if RESIDENT_ATTR in getattr(t, "__dict__", ()) or _cast_to_a_format(t):
            return True
        t = t._base
    return False


def _mark(out: Any) -> Any:
    """`out` (a tensor, or a tuple or list of them) is on the NPU from now on."""
    for t in out if isinstance(out, (tuple, list)) else (out,):
        if isinstance(t, torch.Tensor):
            setattr(t, RESIDENT_ATTR, True)
    return out


def _fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
    """An op dispatched to the NPU (a factory function given an NPU device) runs on the CPU; its result is
    on the NPU."""
    return _mark(op(*[_on_cpu(a) for a in args], **{k: _on_cpu(v) for k, v in kwargs.items()}))


def _wrap_to(orig: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    def to(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        npu = bool(args) and is_npu_device(args[0]) or is_npu_device(kwargs.get("device"))
        if not npu:
            out = orig(self, *args, **kwargs)
            to_cpu = bool(args) and _is_cpu_device(args[0]) or _is_cpu_device(kwargs.get("device"))
            return out.clone() if to_cpu and out is self and _cast_to_a_format(self) else out
        out = orig(self, *[_on_cpu(a) for a in args], **{k: _on_cpu(v) for k, v in kwargs.items()})
        if out is self and _resident(self):  # already on the device: itself, as torch_npu returns it
            return out
        return _mark(out.clone() if out is self else out)  # a transfer to the device is a copy
    to.__doc__ = orig.__doc__
    return to


def _wrap_device_kwarg(orig: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if is_npu_device(kwargs.get("device")):
            kwargs["device"] = CPU
            return _mark(orig(*args, **kwargs))
        return orig(*args, **kwargs)
    wrapped.__doc__ = orig.__doc__
    wrapped.__name__ = getattr(orig, "__name__", "wrapped")
    return wrapped


def _wrap_rand(orig: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """`torch.rand(…, dtype=<an integer dtype>, device=npu)`, which programs use to make an int output
    buffer the kernel overwrites: the device makes one, the CPU refuses; here zeros (uniform [0, 1) rounded
    toward zero)."""
    def rand(*args: Any, **kwargs: Any) -> torch.Tensor:
        dtype = kwargs.get("dtype")
        if is_npu_device(kwargs.get("device")) and isinstance(dtype, torch.dtype) and not (
                dtype.is_floating_point or dtype.is_complex):
            keep = {k: v for k, v in kwargs.items() if k in ("dtype", "layout", "requires_grad", "pin_memory")}
            size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)) else args
            return _mark(torch.zeros(*size, device=CPU, **keep))
        return orig(*args, **kwargs)
    rand.__doc__ = orig.__doc__
    return rand


def _wrap_topk(orig: Callable[..., Any]) -> Callable[..., Any]:
    """`torch.topk(…, sorted=False)`: any order is a right answer, and the NPU's is the sorted one (the
    models' goldens, computed on the device, compare a kernel's sorted top-k with it); the CPU's is another.
    Here: sorted."""
    def topk(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("sorted") is False:
            kwargs["sorted"] = True
        elif len(args) >= 5 and args[4] is False:  # topk(input, k, dim, largest, sorted)
            args = (*args[:4], True, *args[5:])
        return orig(*args, **kwargs)
    topk.__doc__ = orig.__doc__
    return topk


# the dispatch keys an NPU program registers its custom operators' device kernels for (torch_npu's backend is torch's
# PrivateUse1, renamed "npu"; PyPTO's models write `torch.library.impl(lib, "op", "NPU")`)
_NPU_KEYS = frozenset({"NPU", "npu", "PrivateUse1"})


def _wrap_library_impl(orig: Callable[..., Any]) -> Callable[..., Any]:
    """`Library.impl(op, fn, "NPU")` (and so `torch.library.impl(lib, "op", "NPU")`, `impl("ns::op", "npu")`): the
    kernel is the operator's CPU kernel too, unless it has one, since every tensor "on the NPU" is a CPU tensor here
    and dispatches to the CPU key: `torch.ops.ns.op(x.npu())` runs the program's own NPU kernel (a PyPTO kernel
    call, on the sim board) as it would on the device. A CPU registration that torch refuses leaves the NPU one; torch's
    own kernels are left as they are."""
    def impl(self: Any, op_name: Any, fn: Any, dispatch_key: str = "", *args: Any, **kwargs: Any) -> Any:
        out = orig(self, op_name, fn, dispatch_key, *args, **kwargs)
        if dispatch_key in _NPU_KEYS and not _from_torch(fn):
            name = op_name if not isinstance(op_name, str) or "::" in op_name else f"{self.ns}::{op_name}"
            with contextlib.suppress(Exception):
                if not torch._C._dispatch_has_kernel_for_dispatch_key(str(name).split(".")[0], "CPU"):
                    orig(self, op_name, fn, "CPU", *args, **kwargs)
        return out
    impl.__doc__ = orig.__doc__
    return impl


def _from_torch(fn: Any) -> bool:
    """A kernel torch registers itself (its distributed code registers some for PrivateUse1 before their CPU one,
    which would then override ours, with a warning)."""
    module = getattr(fn, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def _cast_to_a_format(t: torch.Tensor) -> bool:
    return ops.FORMAT_ATTR in getattr(t, "__dict__", ())


def _wrap_device(real: Any) -> property:
    """`Tensor.device`: a tensor npu_format_cast made says `npu:N` (a program asks a device tensor for its
    storage format only after checking that it is on the NPU); every other tensor its real device."""
    def device(self: torch.Tensor) -> torch.device:
        d: torch.device = real.__get__(self)
        return torch.device("npu", _device["index"]) if d.type == "cpu" and _cast_to_a_format(self) else d
    return property(device, doc=real.__doc__)


def _wrap_cpu(orig: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    def cpu(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        out = orig(self, *args, **kwargs)
        return out.clone() if out is self and _cast_to_a_format(self) else out  # back from the "device": a copy
    cpu.__doc__ = orig.__doc__
    return cpu


def tensor_npu(self: torch.Tensor, device: Any = None, non_blocking: bool = False,
               memory_format: torch.memory_format = torch.preserve_format) -> torch.Tensor:
    """`Tensor.npu()`: a copy of the tensor (on the CPU), as a host-to-device transfer is a copy; a tensor
    already on the NPU is itself (torch_npu's `.npu()` of a device tensor is that tensor)."""
    if _resident(self) and memory_format in (torch.preserve_format, torch.contiguous_format) and (
            memory_format == torch.preserve_format or self.is_contiguous()):
        return self
    return _mark(self.clone(memory_format=memory_format))


def module_npu(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    """`Module.npu()`: its parameters stay where they are (the CPU)."""
    return self


def install() -> None:
    """Give torch the npu device and namespace (once per process: the rename cannot be undone)."""
    if getattr(torch, "npu", None) is None:
        torch.utils.rename_privateuse1_backend("npu")
        torch._register_device_module("npu", _npu_namespace())
    lib = torch.library.Library("_", "IMPL")  # noqa: TOR901 - a fallback for every op, not one op's kernel
    lib.fallback(_fallback, dispatch_key="PrivateUse1")
    _keep.append(lib)
    torch.Tensor.to = _wrap_to(torch.Tensor.to)  # type: ignore[method-assign]
    torch.Tensor.new_tensor = _wrap_device_kwarg(torch.Tensor.new_tensor)  # type: ignore[method-assign]
    torch.tensor = _wrap_device_kwarg(torch.tensor)
    torch.rand = _wrap_rand(torch.rand)
    torch.library.Library.impl = _wrap_library_impl(torch.library.Library.impl)  # type: ignore[method-assign]
    torch.topk = _wrap_topk(torch.topk)
    torch.Tensor.topk = _wrap_topk(torch.Tensor.topk)  # type: ignore[method-assign]
    torch.Tensor.device = _wrap_device(torch._C.TensorBase.device)  # type: ignore[assignment]
    torch.Tensor.cpu = _wrap_cpu(torch.Tensor.cpu)  # type: ignore[method-assign]
    torch.Tensor.npu = tensor_npu  # type: ignore[attr-defined]
    torch.Tensor.npu_format_cast_ = ops.npu_format_cast_  # type: ignore[attr-defined]
    torch.nn.Module.npu = module_npu  # type: ignore[attr-defined]


# ---- the torch_npu module ----------------------------------------------------------------------

OP_NAMES = ("npu_format_cast", "npu_format_cast_", "get_npu_format", "npu_dtype_cast", "npu_rms_norm",
            "npu_swiglu", "npu_rotary_mul", "npu_dynamic_quant", "npu_quantize", "npu_anti_quant",
            "npu_trans_quant_param", "npu_quant_matmul")


def module(name: str) -> types.ModuleType:
    """The module served as `name` ("torch_npu", "torch_npu.npu" or "torch_npu.profiler")."""
    if name == "torch_npu.npu":
        return torch.npu  # type: ignore[attr-defined, no-any-return]
    if name == "torch_npu.profiler":
        return profiler.module()
    if _made:
        return _made[0]
    m = types.ModuleType("torch_npu", "PyPTO IDE's stand-in for torch_npu (docs/npu.md): an NPU program runs on "
                         "the CPU, for the tools to compile and simulate.")
    m.__version__ = VERSION
    m.__path__ = []  # a package: `import torch_npu.npu` works
    m.__file__ = os.path.abspath(__file__)
    m.npu = torch.npu  # type: ignore[attr-defined]
    m.profiler = profiler.module()
    m.Format = ops.Format
    m.hifloat8 = ops.HIFLOAT8
    for op in OP_NAMES:
        setattr(m, op, getattr(ops, op))
    m.__getattr__ = _not_covered("torch_npu")  # type: ignore[method-assign]
    _made.append(m)
    return m
