"""`@pl.jit` and `@pl.jit.inline`: PyPTO 3 kernels compiled by our one jit.

Why it exists: PyPTO 3's decorators parse a kernel's source into their own IR; the body never runs
as Python upstream. Here a `@pl.jit` kernel is a `JitKernel` (`pypto.frontend.jit`) whose parameters
come from `pl.Tensor[...]` / `pl.Out[...]` / `pl.Scalar[...]` annotations: the body is traced with
our tensor handles (its `if`s rewritten as for CANN kernels, `pypto.frontend.body`), and the graph
goes through the same tensor -> tile -> block -> execute pipeline and CompileRecord, which says
`dialect: "pypto3"`. What differs from a CANN kernel:

- a call takes `config=RunConfig(...)` (`pypto.runtime`), and returns the caller's own tensors for
  the parameters the kernel returns (PyPTO 3 kernels end with `return out`);
- tile shapes are not set: one tile covers each op's slice (`pl.at` scopes work on slices sized to
  fit on a core, so the slice sizes are the tiles);
- a `pl.Scalar` parameter is a value of the trace: another value compiles again.

`kernel.compile(*args, config=RunConfig(...))` gives a `CompiledProgram` with an `output_dir`, what
`pypto.runtime.execute_compiled(output_dir, args)` runs: the pair pypto-lib's `golden` runner uses.

`@pl.jit.incore` marks a function as one in-core task: called from a kernel being traced, its body
is inlined inside a `pl.at(level=CORE_GROUP)` scope named after it (its ops are one scope instance,
labelled with its name in the graph and the swimlane); called on its own, it is a kernel.
"""

from __future__ import annotations

import builtins
import enum
import inspect
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.frontend.body import traced_body
from pypto.frontend.jit import CompiledKernel, JitKernel, ParamSpec
from pypto.ir.errors import PyptoError
from pypto.language.annotation import ScalarType, TensorType, spec_of
from pypto.language.control import AtScope, Level
from pypto.tracing import builder as _b
from pypto.tracing import tiling
from pypto.tracing.tensor import Tensor

DIALECT = "pypto3"
# the platforms a RunConfig may name: PyPTO 3's A2/A3 device and its simulator are this product's
# simulated A2/A3 board (values computed on this machine's CPU); A5 is not modelled
PLATFORMS = ("a2a3", "a2a3sim")
# one tile covers each op's whole slice: a vector tile shape larger than any slice (clipped to it)
WHOLE_SLICE = list(tiling.WHOLE_SLICE)


def check_platform(platform: Any) -> str:
    """The platform a RunConfig names, when this product runs it; else a PyptoError saying why not."""
    p = str(platform)
    if p not in PLATFORMS:
        raise PyptoError(f"platform {p!r}: this product runs PyPTO 3 kernels on its simulated A2/A3 board "
                         f"(platform 'a2a3sim' or 'a2a3'); {p} is not modelled")
    return p


def _scalar_value(v: Any) -> Any:
    """A scalar argument as a Python number: ctypes values (what a runner hands over), 0-d tensors."""
    value = getattr(v, "value", None)
    if value is not None and type(v).__module__ == "ctypes":
        return value
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        return v.item()
    return v


class PlKernel(JitKernel):
    """A `@pl.jit` kernel: a JitKernel whose parameter specs come from PyPTO 3's annotations."""

    dialect = DIALECT

    def __init__(self, fn: Callable[..., Any], bound_self: Any = None) -> None:
        super().__init__(fn, None, vec_tile_shapes=WHOLE_SLICE)
        self._pl_specs: dict[str, ParamSpec] | None = None
        self._pl_scalars: frozenset[str] = frozenset()
        # a `@pl.program` method: `self` is the program's namespace, not a parameter of the kernel
        self.bound_self = bound_self
        if bound_self is not None:
            params = list(self.signature.parameters.values())
            if not params or params[0].name != "self":
                raise PyptoError(f"@pl.program method {self.name} must take `self` first", self.def_loc)
            self.signature = self.signature.replace(parameters=params[1:])

    def body(self) -> Callable[..., Any]:
        raw = super().body()
        if self.bound_self is None:
            return raw
        return _BoundBody(raw, self.bound_self)

    def _pl_annotations(self) -> dict[str, Any]:
        raw = dict(getattr(self.fn, "__annotations__", {}))
        out = {}
        for k, v in raw.items():
            if isinstance(v, str):  # `from __future__ import annotations`: evaluated in the module
                try:
                    v = eval(v, dict(self.fn.__globals__))  # noqa: S307 - the user's own annotation text
                except Exception as e:  # noqa: BLE001
                    raise PyptoError(f"cannot evaluate the annotation of {k!r} ({v!r}): {e}", self.def_loc) from None
            out[k] = v
        return out

    def specs(self) -> dict[str, ParamSpec]:
        if self._pl_specs is None:
            anns = self._pl_annotations()
            specs: dict[str, ParamSpec] = {}
            for i, pname in enumerate(self.signature.parameters):
                if pname in anns:
                    try:
                        spec = spec_of(pname, i, anns[pname])
                    except PyptoError as e:
                        raise PyptoError(e.message, self.def_loc) from None
                    if spec is not None:
                        specs[pname] = spec
            self._pl_scalars = frozenset(p for p in self.signature.parameters if p not in specs)
            self._pl_specs = specs
        return self._pl_specs

    def fresh(self) -> PlKernel:
        """The same `@pl.jit` kernel with an empty compile cache (what the tuning advisor traces a
        candidate with): a PlKernel, so its parameters still come from PyPTO 3's annotations."""
        twin = PlKernel(self.fn, self.bound_self)
        twin._body = self._body
        return twin

    def example_scalar(self, name: str) -> int | float | None:
        """An example value for a `pl.Scalar[dtype]` parameter (1.0, or 1 for an integer dtype): what the
        tools compile the kernel with when no call gave one (`pypto.frontend.inputs`); None otherwise."""
        ann = self._pl_annotations().get(name)
        if not isinstance(ann, ScalarType):
            return None
        return 1.0 if ann.dtype.is_float else 1

    def _pl_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments with scalars as Python numbers and `config` taken out (its platform checked)."""
        config = kwargs.pop("config", None)
        if config is not None:
            check_platform(getattr(config, "platform", "a2a3sim"))
        self.specs()
        names = list(self.signature.parameters)
        args = tuple(_scalar_value(a) if i < len(names) and names[i] in self._pl_scalars else a
                     for i, a in enumerate(args))
        kwargs = {k: _scalar_value(v) if k in self._pl_scalars else v for k, v in kwargs.items()}
        return args, kwargs

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        """Compile for these arguments. With `config=RunConfig(...)` (PyPTO 3's form): a
        `CompiledProgram` that `pypto.runtime.execute_compiled` runs; without: the CompiledKernel."""
        with_config = "config" in kwargs
        args, kwargs = self._pl_args(args, dict(kwargs))
        ck = super().compile(*args, **kwargs)
        if not with_config:
            return ck
        return CompiledProgram.register(self, ck)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = self._pl_args(args, dict(kwargs))
        ck = super().compile(*args, **kwargs)
        results = super().__call__(*args, **kwargs)
        if not ck.returns:
            return results
        rets = list(results) if len(ck.returns) > 1 else [results]
        bound = self.signature.bind(*args, **kwargs).arguments
        outputs = dict(ck.graph.outputs)
        for k, r in enumerate(ck.returns):
            for pname, value in bound.items():  # a returned parameter is the caller's own tensor
                final = outputs.get(pname, _param_node(ck, pname))
                if pname in ck.param_names and final == outputs[r]:
                    rets[k] = value
                    break
        return rets[0] if len(rets) == 1 else tuple(rets)

    def __repr__(self) -> str:
        return f"<pl.jit kernel {self.name}>"


class PlIncore(PlKernel):
    """A `@pl.jit.incore` function: inlined as one in-core scope where a kernel calls it."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _b.current() is None:  # called from Python: compiled and run as a kernel of its own
            return super().__call__(*args, **kwargs)
        kwargs.pop("config", None)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise PyptoError(f"{self.name}(...): {e}") from None
        self._check_operands(bound.arguments)
        with AtScope(Level.CORE_GROUP, self.name):
            return self.body()(*args, **kwargs)

    def _check_operands(self, arguments: dict[str, Any]) -> None:
        """A tensor argument must match its parameter's declared shape and dtype (the dims known when traced)."""
        anns = self._pl_annotations()
        for pname, value in arguments.items():
            ann = anns.get(pname)
            if not isinstance(ann, TensorType) or not isinstance(value, Tensor):
                continue
            if ann.dtype is not None and value.dtype != ann.dtype:
                raise PyptoError(f"{self.name}(...): argument {pname!r} is {value.dtype.name}, the parameter is "
                                 f"declared {ann.dtype.name}")
            if ann.shape is not None:
                got = list(value.shape)
                ok = len(got) == len(ann.shape) and all(
                    not (isinstance(w, int) and isinstance(g, int)) or w == g for w, g in zip(ann.shape, got))
                if not ok:
                    raise PyptoError(f"{self.name}(...): argument {pname!r} has shape {got}, the parameter is "
                                     f"declared {list(ann.shape)}")

    def fresh(self) -> PlIncore:
        twin = PlIncore(self.fn, self.bound_self)
        twin._body = self._body
        return twin

    def __repr__(self) -> str:
        return f"<pl.jit.incore function {self.name}>"


class _BoundBody:
    """A `@pl.program` method's traced body with its `self` given: what the tracer calls (it reads
    `__code__` for the source file, as of a plain function)."""

    def __init__(self, fn: Callable[..., Any], bound_self: Any) -> None:
        self.fn = fn
        self.bound_self = bound_self
        self.__code__ = fn.__code__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(self.bound_self, *args, **kwargs)


class FunctionType(enum.Enum):
    """What a `@pl.function` is: a standalone building block (`Opaque`, the default), an in-core task
    (`InCore`), the control plane that creates tensors and dispatches tasks (`Orchestration`), or a
    body spliced where it is called (`Inline`)."""

    Opaque = "Opaque"
    InCore = "InCore"
    Orchestration = "Orchestration"
    Inline = "Inline"


@dataclass
class _Method:
    """A `@pl.function` written in a `@pl.program` class: made a kernel when the class is."""

    fn: Callable[..., Any]
    type: FunctionType


def function(fn: Callable[..., Any] | None = None, *, type: FunctionType = FunctionType.Opaque,  # noqa: A002
             **opts: Any) -> Any:
    """`@pl.function(type=pl.FunctionType.InCore)`: an in-core function (inlined as one labelled in-core
    scope where it is called, as `@pl.jit.incore`); `Orchestration`: a kernel (traced as `@pl.jit`);
    `Inline`: spliced at the call site; `Opaque`: as `InCore`. A method of a `@pl.program` class (its first
    parameter is `self`) is made when the class is. `level=`, `role=` and `attrs=` are accepted, unused."""
    if fn is None:
        return lambda f: function(f, type=type, **opts)
    if not inspect.isfunction(fn):
        raise PyptoError(f"@pl.function decorates a function, got {builtins.type(fn).__name__}")
    if not isinstance(type, FunctionType):
        raise PyptoError(f"@pl.function: type must be a pl.FunctionType, got {type!r}")
    params = list(inspect.signature(fn).parameters)
    if params and params[0] == "self":
        return _Method(fn, type)
    return _made(fn, type, None)



def _made(fn: Callable[..., Any], kind: FunctionType, bound_self: Any) -> Any:
    if kind is FunctionType.Orchestration:
        return PlKernel(fn, bound_self)
    if kind is FunctionType.Inline:
        body = traced_body(fn)
        return body if bound_self is None else _BoundBody(body, bound_self)
    return PlIncore(fn, bound_self)


class Program:
    """A `@pl.program` class made into a program: its `@pl.function` methods, each a kernel or an in-core
    function whose `self` is the program (so `self.kernel(...)` calls another), and its entry — the
    `Orchestration` function, or the only function. `pypto.runtime.run(program, *args)` runs the entry."""

    def __init__(self, cls: type) -> None:
        self.name = cls.__name__
        self.functions: dict[str, Any] = {}
        methods = {k: v for k, v in vars(cls).items() if isinstance(v, _Method)}
        if not methods:
            raise PyptoError(f"@pl.program {self.name} has no @pl.function methods")
        for k, m in methods.items():
            made = _made(m.fn, m.type, self)
            self.functions[k] = made
            setattr(self, k, made)
        orch = [k for k, m in methods.items() if m.type is FunctionType.Orchestration]
        if len(orch) > 1:
            raise PyptoError(f"@pl.program {self.name} has {len(orch)} Orchestration functions ({', '.join(orch)}); "
                             f"it takes one")
        entry = orch[0] if orch else (next(iter(methods)) if len(methods) == 1 else None)
        if entry is None:
            raise PyptoError(f"@pl.program {self.name}: with several functions, one must be "
                             f"type=pl.FunctionType.Orchestration (the entry)")
        self.entry_name = entry
        entry_fn = self.functions[entry]
        self.entry = entry_fn if isinstance(entry_fn, PlKernel) and not isinstance(entry_fn, PlIncore) \
            else PlKernel(methods[entry].fn, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.entry(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<pl.program {self.name}>"


def program(cls: type) -> Program:
    """`@pl.program`: a class whose `@pl.function` methods make one program."""
    if not inspect.isclass(cls):
        raise PyptoError(f"@pl.program decorates a class, got {builtins.type(cls).__name__}")
    return Program(cls)


def _param_node(ck: CompiledKernel, pname: str) -> int | None:
    """The id of parameter `pname`'s node in the traced graph."""
    for n in ck.graph.params():
        if n.attrs.get("name") == pname:
            return n.id
    return None


@dataclass
class CompiledProgram:
    """What `kernel.compile(..., config=RunConfig(...))` gives: the compiled kernel and the folder
    PyPTO 3 names its artifacts by (`output_dir`, made empty here; a runner may save data in it)."""

    kernel: PlKernel
    compiled: CompiledKernel
    output_dir: str
    param_names: tuple[str, ...] = field(default=())

    @classmethod
    def register(cls, kernel: PlKernel, ck: CompiledKernel) -> CompiledProgram:
        out = tempfile.mkdtemp(prefix=f"pypto_{kernel.name}_")
        prog = cls(kernel, ck, out, tuple(kernel.signature.parameters))
        _PROGRAMS[out] = prog
        return prog

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run it on these arguments (tensors written in place), as `kernel(*args)` does."""
        if config is not None:
            check_platform(getattr(config, "platform", "a2a3sim"))
        return self.kernel(*args)


_PROGRAMS: dict[str, CompiledProgram] = {}


def program_at(output_dir: Any) -> CompiledProgram:
    """The program compiled into `output_dir` in this process (`pypto.runtime.execute_compiled`)."""
    prog = _PROGRAMS.get(str(output_dir))
    if prog is None:
        raise PyptoError(f"no PyPTO 3 kernel was compiled into {str(output_dir)!r} in this process; compile it "
                         f"with kernel.compile(*args, config=RunConfig(...)) first")
    return prog


def inline(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`@pl.jit.inline`: a helper traced where a kernel calls it (its body inlined), with a kernel
    body's meaning (`if` on a run-time value, `pypto.frontend.body`)."""
    if not inspect.isfunction(fn):
        raise PyptoError(f"@pl.jit.inline decorates a function, got {type(fn).__name__}")
    return traced_body(fn)


def incore(fn: Callable[..., Any] | None = None, **opts: Any) -> Any:
    """`@pl.jit.incore`: a function that is one in-core task where a kernel calls it."""
    if fn is None:
        return lambda f: incore(f, **opts)
    if not inspect.isfunction(fn):
        raise PyptoError(f"@pl.jit.incore decorates a function, got {type(fn).__name__}")
    return PlIncore(fn)


class Jit:
    """`pl.jit`: `@pl.jit` makes a kernel, `@pl.jit.inline` an inlined helper, `@pl.jit.incore` an
    in-core function."""

    inline = staticmethod(inline)
    incore = staticmethod(incore)

    def __call__(self, fn: Callable[..., Any] | None = None, **opts: Any) -> Any:
        if fn is None:
            return lambda f: self(f, **opts)
        if not inspect.isfunction(fn):
            raise PyptoError(f"@pl.jit decorates a function, got {type(fn).__name__}")
        return PlKernel(fn)

    def __repr__(self) -> str:
        return "pl.jit"


jit = Jit()

