"""Example inputs: how a tool compiles a kernel without running the user's program.

The IDE, the CLI and the language server compile a kernel from its file alone. When the user has
run their own test or script under `pypto-ide capture`, a kernel's newest capture gives its real
arguments first (`pypto.frontend.capture`, docs/capture.md; the result's `capture` says which).
Otherwise, a kernel's annotations often fix every tensor's shape and dtype — then inputs are
synthesized from them. When they do not (a `DYNAMIC` axis, `pypto.Tensor()`, a
non-tensor parameter without a default), the kernel's docstring says what to use:

    \"\"\"Softmax over the last axis.

    pypto-inputs:
        x: fp32[32, 32, 1, 256]
        out: fp32[32, 32, 1, 256]
        eps: 1e-5            # non-tensor parameters: a Python literal
    \"\"\"

A tensor entry is `DTYPE[dims]` with a `pypto.DataType` short name (fp32, fp16, bf16,
int8, …), optionally with its values (`seq_lens: int32[4] = [5, 16, 1, 9]`, or one number
for all: the values a kernel reads as loop bounds or offsets must be ones it can use);
anything else is a Python literal. Entries may list only some parameters; the
others come from their annotations or defaults. Tensors are filled deterministically
(fixed seed): normal floats, small ints, fair-coin bools. When neither source applies,
`PyptoError` at the kernel's `def` line shows the block to add.

A compile needs only shapes and dtypes, not values (softmax 4096² has 128 MB of inputs and a
compile that reads none of them): `example_arguments(kernel, values=False)` makes each generated
tensor a `NoValues` array (a read-only, zero-stride view of one zero: no memory, and no torch
import); entries with given values are still made. A kernel that reads scalars from a tensor
(`seq_lens[b]`) needs that tensor's values to be lowered: `pypto.record.compile_record` then makes
the example inputs again, with values.
"""

from __future__ import annotations

import ast
import inspect
import io
import math
import os
import re
import textwrap
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:
    import resource  # Unix: the address-space limit a worker's job runs under
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

from pypto.frontend import capture
from pypto.frontend.jit import JitKernel, ParamSpec, from_numpy_like
from pypto.ir import dtypes
from pypto.ir.dtypes import DataType
from pypto.ir.errors import PyptoError
from pypto.ir.source import Loc, Span

HEADER = "pypto-inputs:"
SEED = 0
_TENSOR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\[([^\]]*)\]\s*(?:=\s*(.+))?$")


@dataclass(frozen=True)
class TensorSpec:
    """A tensor to make: its dtype and shape, and its values when the block gives them
    (`lens: int32[4] = [3, 8, 1, 8]`, or one number for every element)."""

    dtype: DataType
    shape: tuple[int, ...]
    values: Any = None

    def __str__(self) -> str:
        dims = f"{self.dtype.short}[{', '.join(str(d) for d in self.shape)}]"
        return dims if self.values is None else f"{dims} = {self.values!r}"


@dataclass(frozen=True)
class Entry:
    """One line of a `pypto-inputs:` block: a tensor spec or a literal, and where it is written."""

    name: str
    value: Any  # TensorSpec | a Python literal
    loc: Loc


# ---- locating the kernel and its docstring ------------------------------------------------------

@dataclass(frozen=True)
class _Where:
    file: str
    func: str
    def_line: int  # the `def` line (not the decorator's)
    def_col: int
    doc_line: int | None  # the line the docstring starts on
    params: dict[str, tuple[int, int]] = field(default_factory=dict)  # a parameter's (line, col)


def _where(fn: Any) -> _Where:
    code = fn.__code__
    file, func, first = code.co_filename, fn.__name__, code.co_firstlineno
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return _Where(file, func, first, 0, None)
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _Where(file, func, first, 0, None)
    indent = len(lines[0]) - len(lines[0].lstrip())
    doc_line = None
    if fdef.body and isinstance(fdef.body[0], ast.Expr) and isinstance(fdef.body[0].value, ast.Constant) \
            and isinstance(fdef.body[0].value.value, str):
        doc_line = start + fdef.body[0].lineno - 1
    a = fdef.args
    params = {p.arg: (start + p.lineno - 1, indent + p.col_offset)
              for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    return _Where(file, func, start + fdef.lineno - 1, indent + fdef.col_offset, doc_line, params)


def def_loc(fn: Any) -> Loc:
    """Where a function's `def` is written (the decorator's line is `co_firstlineno`)."""
    w = _where(fn)
    return _loc(w, w.def_line, w.def_col)


def _loc(w: _Where, line: int, col: int = 0) -> Loc:
    return Loc((Span(w.file, line, col, 0, 0, w.func),))


# ---- parsing the block --------------------------------------------------------------------------

def _strip_comment(text: str) -> str:
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                return text[: tok.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text.rstrip()


def _dtype(name: str) -> DataType | None:
    try:
        return dtypes.from_short(name)
    except KeyError:
        return DataType.__members__.get(name)


def parse_value(text: str) -> Any:
    """`fp32[4, 8]` -> TensorSpec; anything else -> the Python literal. Raises ValueError."""
    m = _TENSOR.match(text)
    if m and _dtype(m.group(1)) is not None:
        dt = _dtype(m.group(1))
        assert dt is not None
        inner = m.group(2).strip()
        dims = [] if inner in ("", "()") else ast.literal_eval(f"[{inner}]")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
            raise ValueError(f"the dims of {text!r} must be non-negative integers")
        values = None
        if m.group(3) is not None:
            try:
                values = ast.literal_eval(m.group(3).strip())
                np.broadcast_to(np.asarray(values, dtype=np.float64), tuple(dims))
            except (ValueError, SyntaxError, TypeError):
                raise ValueError(f"the values {m.group(3).strip()!r} are not numbers that fill shape "
                                 f"{list(dims)} (a number, or nested lists of that shape)") from None
        return TensorSpec(dt, tuple(dims), values)
    if m:
        shorts = ", ".join(d.short for d in DataType)
        raise ValueError(f"{m.group(1)!r} is not a dtype; use one of {shorts}")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"{text!r} is neither DTYPE[dims] nor a Python literal") from None


def parse_block(doc: str, file: str = "<docstring>", first_line: int = 1, func: str = "") -> list[Entry]:
    """The entries of the `pypto-inputs:` block of a docstring (line `i` of `doc` is at
    `first_line + i` of `file`); [] when there is no block."""
    lines = doc.split("\n")
    where = _Where(file, func, first_line, 0, first_line)
    start = next((i for i, ln in enumerate(lines) if ln.strip() == HEADER), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    entries: list[Entry] = []
    for i in range(start + 1, len(lines)):
        raw = lines[i]
        if not raw.strip():
            continue
        col = len(raw) - len(raw.lstrip())
        if col <= indent:
            break
        code = _strip_comment(raw.strip())
        if not code:
            continue
        loc = _loc(where, first_line + i, col)
        name, sep, value = code.partition(":")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise PyptoError(f"{HEADER} line {code!r}: expected 'name: DTYPE[dims]' or 'name: literal'", loc)
        try:
            parsed = parse_value(value.strip())
        except ValueError as e:
            raise PyptoError(f"{HEADER} {name}: {e}", loc) from None
        if any(e.name == name for e in entries):
            raise PyptoError(f"{HEADER} {name} is given twice", loc)
        entries.append(Entry(name, parsed, loc))
    return entries


# ---- building the arguments ---------------------------------------------------------------------

def _fixed(spec: ParamSpec) -> TensorSpec | None:
    if spec.dtype is None or spec.shape is None or spec.rest_static:
        return None
    if not all(isinstance(d, int) for d in spec.shape):
        return None
    return TensorSpec(spec.dtype, tuple(spec.shape))


def _check_against(name: str, t: TensorSpec, spec: ParamSpec, loc: Loc) -> None:
    """A block entry must agree with the parameter's annotation (the compile would reject it later,
    at a less helpful place)."""
    if spec.dtype is not None and spec.dtype is not t.dtype:
        raise PyptoError(f"{HEADER} {name} is {t.dtype.short} but its annotation declares {spec.dtype.short}", loc)
    if spec.shape is None:
        return
    n = len(spec.shape)
    if len(t.shape) < n or (len(t.shape) != n and not spec.more_dims):
        raise PyptoError(f"{HEADER} {name} has rank {len(t.shape)} but its annotation declares rank {n}"
                         f"{' or more' if spec.more_dims else ''}", loc)
    for axis, (want, got) in enumerate(zip(spec.shape, t.shape)):
        if isinstance(want, int) and want != got:
            raise PyptoError(f"{HEADER} {name} has dim {axis} = {got} but its annotation declares {want}", loc)


def _template(spec: ParamSpec | None, name: str) -> str:
    """What to write for a parameter, with <placeholders> where only the user knows."""
    if spec is None:
        return f"{name}: <a Python literal>"
    dt = spec.dtype.short if spec.dtype is not None else "<dtype>"
    if spec.shape is None:
        return f"{name}: {dt}[<dims>]"
    dims = []
    for axis, d in enumerate(spec.shape):
        if isinstance(d, int):
            dims.append(str(d))
        elif isinstance(d, tuple):
            dims.append(f"<{d[1]}>")
        else:
            dims.append(f"<{name}.d{axis}>")
    if spec.rest_static:
        dims.append("<more dims…>")
    return f"{name}: {dt}[{', '.join(dims)}]"


def make_tensor(t: TensorSpec, rng: Any, like_torch: bool) -> Any:
    """A tensor of `t`'s dtype and shape: its given values, else normal floats, ints in [-8, 8)
    ([0, 8) unsigned), fair-coin bools."""
    if t.values is not None:
        arr = np.array(np.broadcast_to(np.asarray(t.values, dtype=np.float64), t.shape)).astype(t.dtype.np)
        return from_numpy_like(arr, like_torch)
    if like_torch:
        import torch

        shape = tuple(t.shape)
        if t.dtype is DataType.DT_BOOL:
            return torch.rand(shape, generator=rng) < 0.5
        if t.dtype.is_float:
            return torch.randn(shape, generator=rng, dtype=torch.float32).to(dtypes.torch_dtype(t.dtype))
        lo = -8 if t.dtype.is_signed else 0
        return torch.randint(lo, 8, shape, generator=rng, dtype=torch.int64).to(dtypes.torch_dtype(t.dtype))
    if t.dtype is DataType.DT_BOOL:
        return rng.random(t.shape) < 0.5
    if t.dtype.is_float:
        return rng.standard_normal(t.shape, dtype=np.float32).astype(t.dtype.np)
    lo = -8 if t.dtype.is_signed else 0
    return rng.integers(lo, 8, t.shape).astype(t.dtype.np)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""


def memory_for_inputs() -> int:
    """The bytes example inputs may take: the machine's physical memory, or less when the process's
    address space is capped (a language-server job is)."""
    try:
        room = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        room = 1 << 62
    soft, _ = resource.getrlimit(resource.RLIMIT_AS) if resource is not None else (-1, -1)
    if resource is not None and soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as f:
                used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            used = 0
        room = min(room, max(0, soft - used))
    return room


class _Budget:
    """Example inputs made so far against `memory_for_inputs()`: a tensor that does not fit is a
    PyptoError at the line that sized it (the annotation, or the docstring entry)."""

    def __init__(self) -> None:
        self.room = memory_for_inputs()
        self.used = 0

    def make(self, name: str, t: TensorSpec, rng: Any, like_torch: bool, loc: Loc, values: bool = True) -> Any:
        """The tensor (`values=False`: its `NoValues` placeholder, counted all the same: a kernel whose
        inputs would not fit is refused alike, whether it is compiled or run)."""
        need = t.dtype.nbytes * math.prod(t.shape)
        if self.used + need > self.room:
            raise self._error(name, t, need, loc)
        if not values:
            self.used += need
            return no_values(t)
        try:
            made = make_tensor(t, rng, like_torch)
        except (MemoryError, RuntimeError) as e:  # torch's allocator raises RuntimeError
            if isinstance(e, RuntimeError) and "alloc" not in str(e):
                raise
            raise self._error(name, t, need, loc) from None
        self.used += need
        return made

    def _error(self, name: str, t: TensorSpec, need: int, loc: Loc) -> PyptoError:
        return PyptoError(
            f"{name}: its example input ({TensorSpec(t.dtype, t.shape)}) needs {_size(need)}, and the example inputs "
            f"may take {_size(max(0, self.room - self.used))} more on this machine: to open this kernel, give "
            f"smaller sizes in the kernel's docstring ({HEADER} {name}: {t.dtype.short}[...]) or in the "
            f"annotation", loc, rule="inputs.too-large")


class NoValues(np.ndarray):
    """A tensor's shape and dtype without its values: what a compile-only tool passes for a generated
    example input (`no_values`). Read-only and zero-stride, so it takes no memory whatever its shape."""


def no_values(t: TensorSpec) -> NoValues:
    """An array of `t`'s dtype and shape whose every element is the one zero it views."""
    zero = np.zeros((), dtype=t.dtype.np)
    return np.broadcast_to(zero, tuple(t.shape)).view(NoValues)


def has_values(x: Any) -> bool:
    """False for a `NoValues` placeholder; True for anything else (real tensors, constants)."""
    return not isinstance(x, NoValues)


def _rng(like_torch: bool) -> Any:
    if like_torch:
        import torch

        return torch.Generator().manual_seed(SEED)
    return np.random.default_rng(SEED)


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


class Arguments(dict[str, Any]):
    """Example arguments (parameter name -> argument), and the capture they came from (None: the
    docstring block, annotations and defaults)."""

    capture: capture.Capture | None = None
    from_capture: tuple[str, ...] = ()  # the parameters whose argument is the captured one
    kernel_changed: bool = False  # the kernel's source is not the one captured (the inputs may no longer fit)


def inputs_from(args: Any) -> dict[str, Any] | None:
    """What a CompileRecord says of where its inputs came from: the capture's `info()`, or None."""
    cap = getattr(args, "capture", None)
    if cap is None:
        return None
    return cap.info() | {"parameters": list(getattr(args, "from_capture", ())),
                         "kernel_changed": bool(getattr(args, "kernel_changed", False))}


def _captured(kernel: JitKernel, make: Any, like_torch: bool, specs: dict[str, ParamSpec],
              where: _Where) -> tuple[capture.Capture | None, dict[str, Any]]:
    """The kernel's newest capture and the arguments it gives (a tensor without kept values made as a
    generated one of its dtype and shape; a parameter whose captured value cannot be made again, or
    no longer agrees with its annotation, is left to the other sources)."""
    cap = capture.find(kernel)
    if cap is None:
        return None, {}
    loc = _loc(where, where.def_line, where.def_col)

    def missing(name: str, dt: DataType, shape: tuple[int, ...], _torch: bool) -> Any:
        try:
            return make(name, TensorSpec(dt, shape), loc)
        except PyptoError as e:  # too large to make here: the capture comes first, so a docstring entry would not do
            if e.rule != "inputs.too-large":
                raise
            raise PyptoError(f"{name}: its captured input ({TensorSpec(dt, shape)}, from {cap.path}) needs "
                             f"{_size(dt.nbytes * math.prod(shape))}, more than the example inputs may take on this "
                             "machine: capture a smaller run, or delete that capture to use the docstring block",
                             loc, rule="inputs.too-large") from None

    out: dict[str, Any] = {}
    for name, value in capture.arguments(cap, kernel, missing, like_torch).items():
        spec = specs.get(name)
        if spec is not None:
            if not hasattr(value, "shape"):
                continue
            dt = dtypes.from_numpy(value.dtype) if isinstance(value, np.ndarray) else dtypes.from_torch(value.dtype)
            try:
                _check_against(name, TensorSpec(dt, tuple(int(d) for d in value.shape)), spec, loc)  # type: ignore[arg-type]
            except PyptoError:
                continue
        out[name] = value
    return cap, out


def example_arguments(kernel: JitKernel, *, use_torch: bool | None = None, values: bool = True,
                      use_capture: bool = True) -> Arguments:
    """Every parameter's example argument, in parameter order (torch tensors when torch is
    installed, else numpy arrays). Raises PyptoError when a parameter has no source.
    A parameter's argument is its newest capture's (`pypto.frontend.capture`, `pypto-ide capture`)
    when there is one (`use_capture=False`: never), else from the docstring block, the annotation
    or the default; the result's `capture` says which capture was used.
    `values=False`: each tensor the block does not give values for is a `NoValues` placeholder
    (for a compile: no memory and no torch; inputs too large to make are refused all the same)."""
    fn = kernel.fn
    w = _where(fn)
    entries = parse_block(fn.__doc__ or "", w.file, w.doc_line or w.def_line, w.func) if fn.__doc__ else []
    given = {e.name: e for e in entries}
    specs = kernel.specs()
    params = [p for p in kernel.signature.parameters.values()
              if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    names = {p.name for p in params}
    for e in entries:
        if e.name not in names:
            raise PyptoError(f"{HEADER} {e.name} is not a parameter of {kernel.name} "
                             f"(parameters: {', '.join(p.name for p in params)})", e.loc)
    like_torch = values and (_torch_available() if use_torch is None else use_torch)
    rng = _rng(like_torch)
    budget = _Budget()

    def make(name: str, t: TensorSpec, loc: Loc) -> Any:
        return budget.make(name, t, rng, like_torch, loc, values or t.values is not None)

    cap, captured = _captured(kernel, make, like_torch, specs, w) if use_capture else (None, {})
    out = Arguments()
    if captured:
        out.capture, out.from_capture = cap, tuple(p.name for p in params if p.name in captured)
        out.kernel_changed = (cap.doc.get("kernel") or {}).get("source_sha256") != kernel.source_hash
    missing: list[str] = []
    for p in params:
        spec = specs.get(p.name)
        entry = given.get(p.name)
        if p.name in captured:
            out[p.name] = captured[p.name]
            continue
        if entry is not None:
            if isinstance(entry.value, TensorSpec):
                if spec is not None:
                    _check_against(p.name, entry.value, spec, entry.loc)
                out[p.name] = make(p.name, entry.value, entry.loc)
            elif spec is not None:
                raise PyptoError(f"{HEADER} {p.name} is a tensor parameter: write {_template(spec, p.name)}",
                                 entry.loc)
            else:
                out[p.name] = entry.value
            continue
        fixed = _fixed(spec) if spec is not None else None
        if fixed is not None:
            line, col = w.params.get(p.name, (w.def_line, w.def_col))
            out[p.name] = make(p.name, fixed, _loc(w, line, col))
        elif spec is None and p.default is not inspect.Parameter.empty:
            out[p.name] = p.default
        elif spec is None and getattr(kernel, "example_scalar", None) is not None \
                and kernel.example_scalar(p.name) is not None:  # a declared scalar (PyPTO 3's pl.Scalar[dtype])
            out[p.name] = kernel.example_scalar(p.name)
        else:
            missing.append(p.name)
    if missing:
        block = "\n".join(f"        {_template(specs.get(n), n)}" for n in missing)
        what = ", ".join(repr(n) for n in missing)
        raise PyptoError(f"{kernel.name}: cannot make example inputs for {what} (the annotations do not fix "
                         f"shape and dtype); capture them from your own test or script (`pypto-ide capture -- "
                         f"python -m pytest …`, docs/capture.md), or add to the kernel's docstring:\n    {HEADER}\n"
                         f"{block}", _loc(w, w.def_line, w.def_col))
    return out


def example_inputs(kernel: JitKernel, *, use_torch: bool | None = None) -> list[Any]:
    """The example arguments in parameter order: `kernel.compile(*example_inputs(kernel))`."""
    return list(example_arguments(kernel, use_torch=use_torch).values())


__all__: Sequence[str] = ("Arguments", "Entry", "NoValues", "TensorSpec", "example_arguments", "example_inputs",
                          "has_values", "inputs_from", "make_tensor", "no_values", "parse_block", "parse_value")
