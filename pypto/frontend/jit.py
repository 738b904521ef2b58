"""`@pypto.frontend.jit`: binds arguments, compiles on first call (cached), and runs.

A call checks each tensor argument against its annotation (dtype, rank, static dims),
looks up the compile cache — keyed by the kernel's source, the options in force, the
non-tensor arguments and every static dim, so a change of a DYNAMIC dim reuses the
compiled kernel — traces the body on a miss, then runs the graph on the CPU and writes
the outputs into the caller's tensors (or returns them, for the returning style).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import inspect
import itertools
import sys
import textwrap
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.compiler.instruments import bindings_dir_name, debug_instruments, new_run_dir, process_output_dir
from pypto.compiler.manager import PassRecord, Program
from pypto.compiler.pipeline import lower, run_pipeline
from pypto.compiler.tile_exec import TileExecutor
from pypto.frontend.body import traced_body
from pypto.ir import dtypes, source
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.enums import RunMode
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Graph, TensorType, scalar_reads
from pypto.ir.source import Loc
from pypto.npu import for_tools
from pypto.reference.interpreter import Interpreter
from pypto.tracing import builder as _b
from pypto.tracing import options
from pypto.tracing.scalar import SymbolicScalar
from pypto.tracing.tensor import DYNAMIC, STATIC, Tensor, trace_of, traced_tensor


def npu_available() -> bool:
    """Whether an Ascend NPU runtime is present (never, in this CPU product)."""
    return False


_last_compile = [0.0]  # seconds of the latest compile in this process (PyPTO's compiler monitor)


def last_compile_seconds() -> float:
    """Wall seconds of this process's latest kernel compile: tracing and the tensor stage, plus the
    lowerings (tile, block, execute stages) for new dynamic dims since; 0.0 before any. PyPTO's
    `pypto_impl.GetCompilerMonitorTotalElapsed()` reports its compiler's total the same way, and
    its models check it against a budget."""
    return _last_compile[0]


# ---- annotations ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParamSpec:
    """What a tensor parameter's annotation asks for. `shape` None: rank and dims from the argument;
    entries: int (fixed), "dyn" / a symbol name (DYNAMIC), "static" (from the argument)."""

    name: str
    index: int
    shape: tuple[Any, ...] | None
    dtype: DataType | None
    rest_static: bool  # the annotation ended with `...`
    # PyPTO: an annotation with a DYNAMIC or STATIC entry describes the leading dims; an argument of
    # higher rank is accepted, its further dims taken as they come (as after a trailing `...`)
    leading: bool = False

    @property
    def more_dims(self) -> bool:
        """An argument may have more dims than the annotation lists."""
        return self.rest_static or self.leading


def _param_spec(name: str, index: int, ann: Any, loc: Loc) -> ParamSpec | None:
    if ann is Tensor:
        return ParamSpec(name, index, None, None, True)
    if not isinstance(ann, Tensor):
        return None
    if ann.trace is not None:
        raise PyptoError(f"parameter {name!r}: annotation is a traced tensor, not pypto.Tensor(...)", loc)
    if ann.spec_shape is None:
        return ParamSpec(name, index, None, ann.spec_dtype, True)
    entries: list[Any] = []
    rest_static = False
    for i, d in enumerate(ann.spec_shape):
        if d is Ellipsis:
            if i != len(ann.spec_shape) - 1:
                raise PyptoError(f"parameter {name!r}: `...` must be the last entry of the shape", loc)
            rest_static = True
        elif d is DYNAMIC:
            entries.append("dyn")
        elif d is STATIC:
            entries.append("static")
        elif isinstance(d, SymbolicScalar) and not d.is_concrete() and isinstance(d.expr, S.SymExpr) \
                and len(d.expr.terms) == 1 and d.expr.const == 0 and d.expr.terms[0][1] == 1 \
                and isinstance(d.expr.terms[0][0], str):
            entries.append(("sym", d.expr.terms[0][0]))
        elif isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            entries.append(d)
        else:
            raise PyptoError(f"parameter {name!r}: shape entry {i} is {d!r}; use an int, pypto.DYNAMIC, "
                             f"pypto.STATIC, a pypto.frontend.dynamic(name) or a trailing ...", loc)
    leading = any(e in ("dyn", "static") for e in entries if isinstance(e, str))
    return ParamSpec(name, index, tuple(entries), ann.spec_dtype, rest_static, leading)


def dynamic(name: str) -> SymbolicScalar:
    """`pypto.frontend.dynamic("bs")`: a named dynamic dim to use in annotations."""
    return SymbolicScalar(S.sym(name))


# ---- arguments --------------------------------------------------------------------------------

def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "shape")


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    import torch

    t = x.detach()
    if t.device.type != "cpu":
        raise PyptoError(f"tensor on device {t.device} passed to a pypto kernel; this product runs on the CPU")
    dt = dtypes.from_torch(t.dtype)
    if dt in BIT_VIEWS:
        return t.contiguous().view(getattr(torch, BIT_VIEWS[dt].name)).numpy().view(dt.np)
    return t.numpy()


# dtypes numpy has no type of its own for (ml_dtypes' bfloat16 and fp8): they cross between torch and
# numpy as their bytes, through an integer view of the same size
BIT_VIEWS: dict[DataType, np.dtype] = {DataType.DT_BF16: np.dtype(np.int16), DataType.DT_FP8E4M3: np.dtype(np.uint8),
                                       DataType.DT_FP8E5M2: np.dtype(np.uint8)}


MAX_READ_ELEMENTS = 1 << 22


def read_bindings(graph: Graph, arrays: Mapping[str, Any], loc: Loc | None = None) -> dict[str, int]:
    """The env entries of every element of the inputs the kernel reads scalars from (`seq_lens[b]`):
    `{"seq_lens[0]": 5, ...}`. Their values fix loop trip counts and offsets, so they are part of what
    the stages after the tensor stage are lowered for."""
    out: dict[str, int] = {}
    for name in sorted(scalar_reads(graph)):
        value = arrays.get(name)
        if value is None:
            continue
        arr = to_numpy(value)
        if arr.size > MAX_READ_ELEMENTS:
            raise PyptoError(f"the kernel reads scalars from {name!r}, which has {arr.size:,} elements; this "
                             f"compiler binds at most {MAX_READ_ELEMENTS:,} (each fixes the lowered program)", loc)
        # in C order, as np.ndenumerate gives them (a block table of 10^4 entries: one key each, made in bulk)
        at = itertools.product(*map(range, arr.shape))
        out.update(zip(map(S.read_key, itertools.repeat(name), at), map(int, arr.reshape(-1).tolist())))
    return out


def from_numpy_like(arr: np.ndarray, like_torch: bool) -> Any:
    if not like_torch:
        return arr
    import torch

    arr = np.require(arr, requirements="C")  # not ascontiguousarray: it turns a 0-d result into shape [1]
    dt = dtypes.from_numpy(arr.dtype)
    if dt in BIT_VIEWS:
        return torch.from_numpy(arr.view(BIT_VIEWS[dt])).view(dtypes.torch_dtype(dt))
    return torch.from_numpy(arr)


def write_back(dst: Any, arr: np.ndarray) -> None:
    if isinstance(dst, np.ndarray):
        dst[...] = arr
    else:
        dst.copy_(from_numpy_like(arr, True))


def _arg_dtype(x: Any) -> DataType | None:
    if isinstance(x, np.ndarray):
        return dtypes.from_numpy(x.dtype)
    return dtypes.from_torch(x.dtype)


def _const_key(v: Any) -> Any:
    if isinstance(v, (int, float, bool, str, type(None))):
        return (type(v).__name__, v)
    if dataclasses.is_dataclass(v):
        return (type(v).__qualname__, repr(v))
    return (type(v).__qualname__, repr(v))


# ---- the precision check a run does on request, installed from above -------------------------

PassVerifier = Callable[["CompiledKernel", dict[str, np.ndarray]], object]
_pass_verifier: PassVerifier | None = None


def set_pass_verifier(verify: PassVerifier) -> None:
    """Install what a call runs when `verify_options={"enable_pass_verify": True}`: the
    precision check of the compiled kernel on the call's inputs. That check lives in
    `pypto.analysis`, a layer above this one, so `pypto/__init__.py` — the one module that
    imports every layer — installs `pypto.analysis.precision.verify_compiled` here."""
    global _pass_verifier
    _pass_verifier = verify


# ---- recording calls (`pypto-ide capture`), installed from above ---------------------------------

CallRecorder = Callable[["JitKernel", tuple[Any, ...], dict[str, Any]], None]
_call_recorder: CallRecorder | None = None


def set_call_recorder(record: CallRecorder | None) -> None:
    """Install what every kernel call hands its arguments to before it compiles and runs:
    `pypto.frontend.capture.record_call`, which stores them when `PYPTO_CAPTURE` is set
    (`pypto-ide capture`; docs/capture.md). `pypto/__init__.py` installs it."""
    global _call_recorder
    _call_recorder = record


# ---- compiled kernels -------------------------------------------------------------------------

@dataclass
class Lowered:
    """A compiled kernel lowered for one set of dynamic dims: tile stage onwards."""

    program: Program
    passes: list[PassRecord]

    @functools.cached_property
    def executor(self) -> TileExecutor | None:
        """The tile executor, made on first use: compiling and recording do not need it (at softmax
        4096² in 32x32 tiles its bookkeeping is ~6 % of the compile); None without a tile stage."""
        return TileExecutor(self.program.graph, self.program.tiles) if self.program.tiles is not None else None


@dataclass
class CompiledKernel:
    """One trace of a kernel: the graph, what its params bind, and how outputs map back."""

    name: str
    graph: Graph
    options: dict[str, Any]
    param_names: tuple[str, ...]  # tensor params, in order
    returns: tuple[str, ...]  # names of returned outputs (returning style), else ()
    file: str
    trace_seconds: float = 0.0  # wall time of tracing the body into the graph
    program: Program | None = None  # the pipeline's result (None until compiled)
    passes: list[PassRecord] = dataclasses.field(default_factory=list)
    compile_seconds: float = 0.0  # wall time of the tensor stage
    interpreter: Interpreter = dataclasses.field(init=False, repr=False)
    lowered: dict[tuple[tuple[str, int], ...], Lowered] = dataclasses.field(default_factory=dict, repr=False)
    precision: Any = dataclasses.field(default=None, repr=False)  # the last enable_pass_verify report
    dialect: str = "cann"  # the language the kernel is written in: "cann", or "pypto3" (`pypto.language`)

    def __post_init__(self) -> None:
        t0 = time.perf_counter()
        self.program, self.passes = run_pipeline(self.graph, self.options, debug_instruments(self))
        self.compile_seconds = time.perf_counter() - t0
        # the tensor-stage result is what runs: the passes are checked by every call
        self.interpreter = Interpreter(self.program.graph)

    def bind_symbols(self, arrays: dict[str, np.ndarray], loc: Loc) -> dict[str, int]:
        syms: dict[str, int] = {}
        for p in self.graph.params():
            arr = arrays[p.attrs["name"]]
            assert p.type is not None
            for axis, d in enumerate(p.type.shape):
                actual = arr.shape[axis]
                if isinstance(d, S.SymExpr) and len(d.terms) == 1 and d.const == 0 and d.terms[0][1] == 1 \
                        and isinstance(d.terms[0][0], str) and d.terms[0][0] not in syms:
                    syms[d.terms[0][0]] = actual
                    continue
                want = S.evaluate(d, syms)
                if want != actual:
                    raise PyptoError(f"argument {p.attrs['name']!r} has dim {axis} = {actual}, but the kernel "
                                     f"needs {S.to_str(d)} = {want}", loc)
        syms.update(read_bindings(self.graph, arrays, loc))
        return syms

    def lower(self, syms: dict[str, int]) -> Lowered:
        """The stages after the tensor stage for these dynamic dims (cached, a few at a time)."""
        key = tuple(sorted(syms.items()))
        lw = self.lowered.pop(key, None)
        if lw is None:
            t0 = time.perf_counter()
            program, passes = lower(self.program, syms, self.options,  # type: ignore[arg-type]
                                    debug_instruments(self, syms))
            lw = Lowered(program, passes)
            _last_compile[0] += time.perf_counter() - t0
        self.lowered[key] = lw  # most recent last
        while len(self.lowered) > 8:
            del self.lowered[next(iter(self.lowered))]
        return lw

    def run(self, arrays: dict[str, np.ndarray], loc: Loc) -> dict[str, np.ndarray]:
        """Run the lowered program tile by tile (what was compiled is what runs); with
        `compile_stage` stopping at the tensor stage, the reference interpreter runs."""
        syms = self.bind_symbols(arrays, loc)
        lw = self.lower(syms)
        if self.options.get("verify_options", {}).get("enable_pass_verify"):
            if _pass_verifier is None:
                raise RuntimeError("enable_pass_verify: no pass verifier is installed (pypto/__init__.py does)")
            _pass_verifier(self, arrays)  # on copies of the inputs: the results below are untouched
        if lw.executor is None:
            return self.interpreter.run(arrays, syms)
        results = lw.executor.run(arrays)
        if self.options.get("debug_options", {}).get("runtime_debug_mode"):
            self.swimlane_files = self._write_swimlane(lw, syms)
        run_mode = self.options.get("runtime_options", {}).get("run_mode")
        if run_mode is not None and RunMode(run_mode) is RunMode.SIM:
            # PyPTO's SIM mode is its cost model, which writes the run's swimlane where its tools
            # (and its cost-model example) look: output/output_<time>_<pid>_<host>/CostModelSimulationOutput/
            from pypto.boards.profile import write_run_files  # start-up time: the sim board loads when asked

            self.cost_model_files = write_run_files(lw.program, process_output_dir() / "CostModelSimulationOutput",
                                                    self.options.get("runtime_options", {}))[1]
        return results

    def _write_swimlane(self, lw: Lowered, syms: dict[str, int]) -> list[Any]:
        """`runtime_debug_mode=1`: the run's swimlane on the sim board, written beside the
        compile dumps (`output/<kernel>_<time>/`): merged_swimlane.json (PyPTO's format),
        trace.json (Chrome trace, opens in Perfetto) and swimlane.json (ours)."""
        from pypto.boards.profile import write_run_files  # start-up time: the sim board loads when asked

        run = self.__dict__.get("_dump_dir")
        if run is None:
            run = self.__dict__["_dump_dir"] = new_run_dir(self.name)
        directory = run / bindings_dir_name(syms) if syms else run
        self.last_swimlane, files = write_run_files(lw.program, directory, self.options.get("runtime_options", {}))
        return files


class JitKernel:
    """A function decorated with `@pypto.frontend.jit` / `@pypto.jit`."""

    dialect = "cann"  # the language of its body; PyPTO 3's `@pl.jit` kernels (`pypto.language`) say "pypto3"

    def __init__(self, fn: Callable[..., Any], _scope: dict[str, Any] | None = None, **opts: Any) -> None:
        self.fn = fn
        self._def_scope = _scope or {}  # the decorating frame's locals, for string annotations
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.def_loc = Loc((source.Span(fn.__code__.co_filename, fn.__code__.co_firstlineno, 0, 0, 0, fn.__name__),))
        self._body: Callable[..., Any] | None = None
        self._layers: list[dict[str, Any]] = []  # option keywords as handed over, later ones win
        for layer in getattr(fn, "__pypto_options__", []):
            self.add_options(layer)
        self.add_options(opts)
        self.signature = inspect.signature(fn)
        self._specs: dict[str, ParamSpec] | None = None
        self.cache: dict[Any, CompiledKernel] = {}
        self.compile_count = 0

    @functools.cached_property
    def source_hash(self) -> str:
        """Its function's source text, hashed: made when first asked (a compile, a capture), not for every kernel of
        a module as it loads (`inspect.getsource` tokenizes the function: ~4 ms a kernel, on every edit's job)."""
        fn = self.fn
        try:
            text = inspect.getsource(fn)
        except (OSError, TypeError):
            text = repr(fn.__code__.co_code) + repr(fn.__code__.co_consts)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def decorating_scope(self) -> dict[str, Any]:
        """The locals of the function the kernel was decorated in ({} at module level)."""
        return self._def_scope

    def add_options(self, opts: dict[str, Any]) -> None:
        """Options for this kernel (`@jit(...)` keywords, `@pypto.options(...)`). The group dicts are
        kept, not copied: they are read when the kernel compiles, as PyPTO reads them."""
        self._layers.append(options.check_kernel_options(dict(opts)))

    def body(self) -> Callable[..., Any]:
        """The function the tracer calls: `fn`, with builtin min()/max() scalar-aware (`body.py`)."""
        if self._body is None:
            self._body = traced_body(self.fn)
        return self._body

    @property
    def kernel_options(self) -> dict[str, Any]:
        """This kernel's own options as they stand now (group dicts merged key by key)."""
        out: dict[str, Any] = {}
        for layer in self._layers:
            for k, v in layer.items():
                if k in options.GROUPS:
                    out.setdefault(k, {}).update(v)
                else:
                    out[k] = v
        return out

    @property
    def name(self) -> str:
        return str(self.kernel_options.get("name") or self.__name__)

    def fresh(self) -> JitKernel:
        """The same kernel (function, decorating scope, options) with an empty compile cache:
        how the tuning advisor traces a candidate tile shape without touching this one's cache."""
        twin = JitKernel(self.fn, self._def_scope, **self.kernel_options)
        twin._body = self._body  # the same function: its traced body need not be made again
        return twin

    def specs(self) -> dict[str, ParamSpec]:
        if self._specs is None:
            anns = _annotations(self.fn, self.def_loc, self._def_scope)
            specs = {}
            for i, pname in enumerate(self.signature.parameters):
                if pname in anns:
                    try:
                        spec = _param_spec(pname, i, anns[pname], self.def_loc)
                    except PyptoError as e:  # point at the parameter's annotation, not the `def`
                        raise PyptoError(e.message, _annotation_loc(self.fn, pname) or e.loc) from None
                    if spec is not None:
                        specs[pname] = spec
            self._specs = specs
        return self._specs

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any], loc: Loc) -> inspect.BoundArguments:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            params = ", ".join(self.signature.parameters)
            raise PyptoError(f"{self.name}({params}): {e}", loc) from None
        bound.apply_defaults()
        return bound

    def compile(self, *args: Any, **kwargs: Any) -> CompiledKernel:
        """Compile (or fetch from the cache) for these arguments without running."""
        return self._prepare(args, kwargs, source.capture(skip=2))[0]

    def _prepare(self, args: tuple[Any, ...], kwargs: dict[str, Any], loc: Loc) \
            -> tuple[CompiledKernel, dict[str, Any], dict[str, np.ndarray]]:
        bound = self._bind(args, kwargs, loc)
        specs = self.specs()
        tensors: dict[str, Any] = {}
        consts: dict[str, Any] = {}
        for pname, value in bound.arguments.items():
            if pname in specs or isinstance(value, np.ndarray) or _is_torch(value):
                tensors[pname] = value
            else:
                consts[pname] = value
        arrays: dict[str, np.ndarray] = {}
        key_parts: list[Any] = []
        types_: dict[str, TensorType] = {}
        for pname, value in tensors.items():
            spec = specs.get(pname) or ParamSpec(pname, 0, None, None, True)
            if not (isinstance(value, np.ndarray) or _is_torch(value)):
                raise PyptoError(f"argument {pname!r} must be a torch.Tensor or numpy.ndarray, "
                                 f"got {type(value).__name__}", loc)
            arr = to_numpy(value)
            dt = _arg_dtype(value)
            if dt is None:
                raise PyptoError(f"argument {pname!r} has dtype {value.dtype}, which pypto does not support", loc)
            if spec.dtype is not None and spec.dtype is not dt:
                raise PyptoError(f"argument {pname!r} is {dt.name} but the kernel declares {spec.dtype.name}", loc)
            shape, key = _param_shape(pname, spec, arr.shape, loc)
            arrays[pname] = arr
            types_[pname] = TensorType(shape, dt)
            key_parts.append((pname, dt.short, key))
        eff = options.effective(self.kernel_options)
        run_mode = eff["runtime_options"].get("run_mode")
        if run_mode is not None and RunMode(run_mode) is RunMode.NPU and not npu_available() and not for_tools():
            # in the tools (pypto.npu.for_tools) an NPU kernel compiles and simulates like any other
            raise PyptoError(f"{self.name}: run_mode NPU needs an Ascend NPU, and none is present; run on the "
                             f"simulated board with runtime_options={{'run_mode': pypto.RunMode.SIM}}", loc)
        key = (self.source_hash, options.freeze(eff), tuple(key_parts),
               tuple((k, _const_key(v)) for k, v in consts.items()))
        ck = self.cache.get(key)
        if ck is None:
            t0 = time.perf_counter()
            ck = self._trace(bound, tensors, consts, types_, eff)
            ck.trace_seconds = time.perf_counter() - t0 - ck.compile_seconds  # the tracing alone
            _last_compile[0] = ck.trace_seconds + ck.compile_seconds
            self.cache[key] = ck
            self.compile_count += 1
        return ck, tensors, arrays

    def _trace(self, bound: inspect.BoundArguments, tensors: dict[str, Any], consts: dict[str, Any],
               types_: dict[str, TensorType], eff: dict[str, Any]) -> CompiledKernel:
        body = self.body()
        b = _b.Builder(self.name, body.__code__, eff)
        handles: dict[str, Tensor] = {}
        with b:
            for pname in tensors:
                idx = list(self.signature.parameters).index(pname)
                node = b.emit("param", [], {"name": pname, "index": idx}, ty=types_[pname], name=pname,
                              loc=self.def_loc)
                handles[pname] = traced_tensor(b, node.id, pname, parameter=True)
            call_args = {k: handles.get(k, consts.get(k)) for k in bound.arguments}
            initial = {k: trace_of(h).value for k, h in handles.items()}
            result = body(**call_args)
            outputs: list[tuple[str, int]] = []
            returns: list[str] = []
            results = result if isinstance(result, (tuple, list)) else ((result,) if result is not None else ())
            for k, r in enumerate(results):
                if not isinstance(r, Tensor) or r.trace is None or r.trace.builder is not b:
                    raise PyptoError(f"{self.name} returned {type(r).__name__}; a kernel returns nothing "
                                     f"(outputs written in place) or pypto tensors", self.def_loc)
                outputs.append((f"return{k}", b.check_live(r.trace.value, self.def_loc)))
                returns.append(f"return{k}")
            for k, h in handles.items():
                if trace_of(h).value != initial[k]:
                    outputs.append((k, trace_of(h).value))
            graph = b.finish(outputs)
        return CompiledKernel(self.name, graph, eff, tuple(tensors), tuple(returns), self.fn.__code__.co_filename,
                              dialect=self.dialect)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        loc = source.capture(skip=2)
        if _call_recorder is not None:
            _call_recorder(self, args, kwargs)
        try:
            ck, tensors, arrays = self._prepare(args, kwargs, loc)
            results = ck.run(arrays, loc)
        except PyptoError as e:
            raise e.with_traceback(None) from None
        like_torch = any(_is_torch(v) for v in tensors.values())
        for name, arr in results.items():
            if name in tensors:
                write_back(tensors[name], arr)
        rets = [from_numpy_like(results[r], like_torch) for r in ck.returns]
        if not rets:
            return None
        return rets[0] if len(rets) == 1 else tuple(rets)

    def __repr__(self) -> str:
        return f"<pypto kernel {self.name}>"


def _param_shape(pname: str, spec: ParamSpec, actual: tuple[int, ...], loc: Loc) \
        -> tuple[tuple[S.Dim, ...], tuple[Any, ...]]:
    """The traced shape of a tensor parameter and its cache-key part (dynamic dims excluded)."""
    if spec.shape is None:
        return tuple(actual), tuple(actual)
    n = len(spec.shape)
    if (not spec.more_dims and len(actual) != n) or len(actual) < n:
        raise PyptoError(f"argument {pname!r} has rank {len(actual)} (shape {list(actual)}) but the kernel "
                         f"declares rank {n}{' or more' if spec.more_dims else ''}", loc)
    shape: list[S.Dim] = []
    key: list[Any] = []
    for axis, (want, got) in enumerate(zip(spec.shape + ("static",) * (len(actual) - n), actual)):
        if want == "dyn":
            shape.append(S.sym(f"{pname}.d{axis}"))
            key.append("?")
        elif isinstance(want, tuple):
            shape.append(S.sym(want[1]))
            key.append("?")
        elif want == "static":
            shape.append(got)
            key.append(got)
        else:
            if want != got:
                lead = (f" (the annotation's {n} dims are the leading dims of this rank-{len(actual)} argument)"
                        if len(actual) > n else "")
                raise PyptoError(f"argument {pname!r} has dim {axis} = {got} but the kernel declares {want}{lead}",
                                 loc)
            shape.append(got)
            key.append(got)
    return tuple(shape), tuple(key)


def _annotation_loc(fn: Callable[..., Any], pname: str) -> Loc | None:
    """Where the annotation of parameter `pname` is written in `fn`'s source, if it can be read."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    indent = len(lines[0]) - len(lines[0].lstrip())
    for arg in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs):
        ann = arg.annotation
        if arg.arg == pname and ann is not None:
            return Loc((source.Span(fn.__code__.co_filename, first + ann.lineno - 1, indent + ann.col_offset,
                                    first + (ann.end_lineno or ann.lineno) - 1, indent + (ann.end_col_offset or 0),
                                    fn.__name__),))
    return None


def _annotations(fn: Callable[..., Any], loc: Loc, def_scope: dict[str, Any]) -> dict[str, Any]:
    """The parameter annotations, evaluated (string annotations too: `from __future__ import
    annotations`), seeing the module's globals, the decorating function's locals and closures."""
    raw = dict(getattr(fn, "__annotations__", {}))
    if not any(isinstance(v, str) for v in raw.values()):
        return raw
    scope = dict(fn.__globals__)
    scope.update(def_scope)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:
                pass
    out = {}
    for k, v in raw.items():
        if isinstance(v, str):
            try:
                out[k] = eval(v, scope)  # noqa: S307 - the user's own annotation text
            except Exception as e:  # noqa: BLE001
                raise PyptoError(f"cannot evaluate the annotation of {k!r} ({v!r}): {e}", loc) from None
        else:
            out[k] = v
    return out


def jit(fn: Callable[..., Any] | None = None, **opts: Any) -> Any:
    """`@pypto.frontend.jit` or `@pypto.frontend.jit(runtime_options=..., ...)`."""
    if fn is not None and not callable(fn):
        raise PyptoError(f"@pypto.jit takes keyword options only, got {fn!r}")
    opts = {k: v for k, v in opts.items() if k not in options.JIT_ONLY_KEYS}
    try:
        options.check_kernel_options(dict(opts))  # an unknown key fails at the decorator's line
    except PyptoError as e:
        raise e.with_traceback(None) from None
    scope = _decorating_locals()
    if fn is None:
        return lambda f: JitKernel(f, scope, **opts)
    if isinstance(fn, types.FunctionType):
        return JitKernel(fn, scope, **opts)
    raise PyptoError(f"@pypto.jit decorates a function, got {type(fn).__name__}")


def _decorating_locals() -> dict[str, Any]:
    """Locals of the user frame applying the decorator (a module's are its globals: skip)."""
    frame = sys._getframe(2)
    while frame is not None and not source.is_user_frame(frame):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_locals is frame.f_globals:
        return {}
    return dict(frame.f_locals)


def function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`@pypto.frontend.function`: a helper traced where a kernel calls it (inlined), whose body has
    a kernel body's meaning: an `if` on a run-time value is a branch of the program, builtin
    `min`/`max` are symbolic (`body.py`). Any other Python helper is traced as plain Python."""
    return traced_body(fn)
