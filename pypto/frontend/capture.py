"""Captured inputs: a kernel's real arguments, recorded from the user's own run.

Production kernels take `pypto.Tensor([pypto.DYNAMIC, ...], dtype)` arguments and configuration
objects whose real values exist only in the test or script that calls them, and kernels made inside
a function (a factory reading its configuration) are invisible to a tool that imports the file.
`pypto-ide capture -- COMMAND…` runs the user's own entry point with `PYPTO_CAPTURE=<store>` set;
every `JitKernel.__call__` then hands its arguments here (`record_call`, installed by
`pypto/__init__.py` through `jit.set_call_recorder`) before it compiles and runs as usual. The
tools (`pypto.frontend.inputs.example_arguments`) use a kernel's newest capture before its
docstring block, annotations and defaults. docs/capture.md is the user's guide and the format.

The store is a folder (default `.pypto/captures/` under the current directory) of one capture per
kernel and input signature: `<file stem>-<path hash>.<qualname>.<signature>.json`, and beside it
`….<write id>.npz` with the values it keeps. A newer call of the same signature replaces both.

What a capture keeps of each argument (`encode`):

- a tensor (numpy or torch): dtype, shape, whether it was torch, and its values when it is small
  (at most `SMALL_BYTES`) or of an integer or bool dtype (at most `INT_BYTES`): the ints a kernel
  reads as loop bounds, offsets, block tables, `valid_shape`s;
- None, bools, ints, floats (`{"$float": "nan"}` for the non-finite), strings, lists,
  `{"$tuple": […]}`, dicts (`{"$dict": [[k, v], …]}` when a key is not a string or starts with `$`);
- an enum member (`pypto.DT_FP16`, `RunMode.SIM`) by class and name; a dataclass, a namedtuple or a
  plain object whose attributes are all of these, by class and fields (a class that cannot be found
  when the capture is used becomes a `types.SimpleNamespace` of the same fields: what a kernel body
  reads, `cfg.block_m`, reads the same);
- a module-level function or class by module and qualified name; a function made inside a function
  (a helper beside a factory's kernel) by file, qualified name and closure, made again from its `def`.

Anything else (a lock, an open file, a generator) is not stored: the capture names the argument
and its type under `unstored`, and a tool using the capture falls back to that parameter's other
sources (docstring block, annotation, default).

A kernel made inside a function is captured with the `def`'s qualified name
(`make_kernel.<locals>.attn`) and line, its options, and the plain values of its closure and of the
decorating function's locals (`closure`, `scope`). `kernel_from_capture` makes it again without
running the factory: the `def`'s own source is compiled at its line in the file with those values
as globals, and decorated with the captured options.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import datetime
import enum
import hashlib
import importlib
import importlib.util
import io
import json
import linecache
import math
import os
import re
import sys
import time
import types
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.frontend.jit import BIT_VIEWS, JitKernel, from_numpy_like, set_call_recorder, to_numpy
from pypto.ir import dtypes

FORMAT = "pypto-ide/capture"
VERSION = 1
STORE = Path(".pypto") / "captures"  # under the current directory when capturing; looked up from a kernel's folder
SMALL_BYTES = 64 * 1024  # a tensor's values are kept up to this size …
INT_BYTES = 16 * 1024 * 1024  # … an integer or bool tensor's up to this one (loop bounds, offsets, tables)

# the environment `pypto-ide capture` sets for the command it runs
ENV_STORE = "PYPTO_CAPTURE"  # the store folder: set, every jit call is recorded there
ENV_MODE = "PYPTO_CAPTURE_MODE"  # "first" (default): a kernel's first call only; "all": every call
ENV_SESSION = "PYPTO_CAPTURE_SESSION"  # one id per `pypto-ide capture` run (its subprocesses share it)
ENV_COMMAND = "PYPTO_CAPTURE_COMMAND"  # the command line, as the capture says where it came from
ENV_PATH = "PYPTO_CAPTURE_PATH"  # more stores to look in (os.pathsep-separated), after the kernel's folders
# the captured command's pytest (`capture_pytest`, loaded by PYTEST_PLUGINS): where it writes the tests it skipped
# (JSON lines), and "1": the tests' skip marks lifted (`pypto-ide capture --run-skipped`)
PYTEST_PLUGIN = "pypto.frontend.capture_pytest"
ENV_SKIPS = "PYPTO_CAPTURE_SKIPS"
ENV_RUN_SKIPPED = "PYPTO_CAPTURE_RUN_SKIPPED"

Json = Any


class Unstorable(Exception):
    """A value a capture cannot keep (the message says what it is)."""


# ---- encoding values ----------------------------------------------------------------------------

def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "shape")


def _class_ref(cls: type) -> dict[str, Any]:
    if "<locals>" in cls.__qualname__:
        raise Unstorable(f"an instance of {cls.__qualname__}, a class made inside a function")
    return {"module": cls.__module__, "qualname": cls.__qualname__, "file": getattr(sys.modules.get(cls.__module__),
                                                                                    "__file__", None)}


def _module_constant(v: Any) -> dict[str, Any] | None:
    """`v` as a name of the module its class is defined in, when that module holds this very object at
    module level (`DYNAMIC = _DynamicMarker("DYNAMIC")`): a sentinel a kernel compares by identity."""
    cls = type(v)
    mod = sys.modules.get(cls.__module__)
    if mod is None or cls.__module__ in ("builtins", "__main__") or isinstance(v, (type, types.ModuleType)):
        return None
    names = [k for k, x in vars(mod).items() if x is v and not k.startswith("__")]
    if not names:
        return None
    names.sort(key=lambda k: (k.startswith("_"), k))
    return {"module": cls.__module__, "qualname": names[0], "file": getattr(mod, "__file__", None)}


def _attrs_beyond_fields(v: Any) -> bool:
    """A dataclass whose own `__init__` sets attributes that are no fields (`@dataclass` over a class
    without annotations): kept by its attributes, as a plain object, or they would be lost."""
    attrs = getattr(v, "__dict__", None)
    return isinstance(attrs, dict) and bool(set(attrs) - {f.name for f in dataclasses.fields(v)})


class _Encoder:
    """Values to JSON; tensor values go to `arrays` (the .npz), keyed by the argument path."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.making: set[int] = set()  # the local functions being encoded (one that refers to itself: refused)

    def tensor(self, x: Any, where: str) -> Json:
        arr = to_numpy(x)
        dt = dtypes.from_numpy(arr.dtype) if isinstance(x, np.ndarray) else dtypes.from_torch(x.dtype)
        if dt is None:
            raise Unstorable(f"a tensor of dtype {x.dtype}, which pypto does not support")
        small = arr.nbytes <= SMALL_BYTES
        integral = (dt.is_int or dt is dtypes.DataType.DT_BOOL) and arr.nbytes <= INT_BYTES
        entry: dict[str, Any] = {"dtype": dt.short, "shape": [int(d) for d in arr.shape],
                                 "torch": _is_torch(x), "values": None}
        if small or integral:
            key = f"a{len(self.arrays)}"
            # bf16 and fp8 (ml_dtypes) as their bytes: an .npz read back would give them as raw void
            self.arrays[key] = np.ascontiguousarray(arr).view(BIT_VIEWS[dt]) if dt in BIT_VIEWS else \
                np.ascontiguousarray(arr).copy()
            entry["values"] = key
        else:
            bound = INT_BYTES if (dt.is_int or dt is dtypes.DataType.DT_BOOL) else SMALL_BYTES
            entry["not_kept"] = f"{arr.nbytes:,} bytes, over the {bound:,}-byte bound for its dtype"
        return {"$tensor": entry}

    def value(self, v: Any, where: str, depth: int = 0) -> Json:
        if depth > 20:
            raise Unstorable("a value nested more than 20 deep")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, enum.Enum):
            return {"$enum": {**_class_ref(type(v)), "name": v.name}}
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return float(v) if math.isfinite(v) else {"$float": repr(float(v))}
        if isinstance(v, np.generic):
            return self.value(v.item(), where, depth)
        if isinstance(v, np.ndarray) or _is_torch(v):
            return self.tensor(v, where)
        if isinstance(v, tuple) and hasattr(type(v), "_fields"):
            return {"$namedtuple": {**_class_ref(type(v)),
                                    "fields": {k: self.value(getattr(v, k), f"{where}.{k}", depth + 1)
                                               for k in type(v)._fields}}}
        if isinstance(v, tuple):
            return {"$tuple": [self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]}
        if isinstance(v, list):
            return [self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
        if isinstance(v, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in v):
                return {k: self.value(x, f"{where}[{k!r}]", depth + 1) for k, x in v.items()}
            return {"$dict": [[self.value(k, where, depth + 1), self.value(x, f"{where}[{k!r}]", depth + 1)]
                              for k, x in v.items()]}
        if isinstance(v, types.FunctionType) and "<locals>" in v.__qualname__:
            return self.local_function(v, where, depth)
        if isinstance(v, (types.FunctionType, type)):
            if "<locals>" in v.__qualname__ or v.__module__ is None:
                raise Unstorable(f"{v.__qualname__}, made inside a function")
            return {"$global": _class_ref(v) if isinstance(v, type) else
                    {"module": v.__module__, "qualname": v.__qualname__, "file": v.__code__.co_filename}}
        named = _module_constant(v)
        if named is not None:  # a sentinel such as pypto.DYNAMIC: the same object, by its name, not a copy
            attrs = getattr(v, "__dict__", None)
            if isinstance(attrs, dict) and attrs:  # and its state, should the program have changed it
                try:
                    named["class"] = _class_ref(type(v))
                    named["attrs"] = {k: self.value(x, f"{where}.{k}", depth + 1) for k, x in attrs.items()}
                except Unstorable:
                    named.pop("class", None)
                    named.pop("attrs", None)
            return {"$global": named}
        if dataclasses.is_dataclass(v) and not isinstance(v, type) and not _attrs_beyond_fields(v):
            return {"$dataclass": {**_class_ref(type(v)),
                                   "fields": {f.name: self.value(getattr(v, f.name), f"{where}.{f.name}", depth + 1)
                                              for f in dataclasses.fields(v)}}}
        attrs = getattr(v, "__dict__", None)
        if isinstance(attrs, dict) and type(v).__module__ not in ("builtins",) and not isinstance(v, types.ModuleType):
            return {"$object": {**_class_ref(type(v)),
                                "attrs": {k: self.value(x, f"{where}.{k}", depth + 1) for k, x in attrs.items()}}}
        raise Unstorable(f"a {type(v).__module__}.{type(v).__qualname__}")


    def local_function(self, fn: types.FunctionType, where: str, depth: int) -> Json:
        """A helper made inside a function (the kernel's factory): kept as its file, qualified name
        and closure, made again from its source (`_compile_def`), as the kernel itself is."""
        code = fn.__code__
        if code.co_filename.startswith("<") or fn.__name__ == "<lambda>":
            raise Unstorable(f"{fn.__qualname__}, made inside a function and without a def in a file")
        if id(fn) in self.making:
            raise Unstorable(f"{fn.__qualname__}, a function made inside a function that refers to itself")
        self.making.add(id(fn))
        try:
            closure = {}
            for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                try:
                    closure[name] = self.value(value, f"{where}.{name}", depth + 1)
                except Unstorable as e:
                    raise Unstorable(f"{fn.__qualname__}, whose {name} is {e}") from None
        finally:
            self.making.discard(id(fn))
        return {"$local": {"file": os.path.abspath(code.co_filename), "qualname": fn.__qualname__,
                           "closure": closure}}


class _Decoder:
    """JSON back to values: tensors through `tensor(entry)`, classes through `resolve(ref)`."""

    def __init__(self, tensor: Callable[[dict[str, Any]], Any], resolve: Callable[[dict[str, Any]], Any],
                 module_globals: Mapping[str, Any] | None = None, moved: Mapping[str, str] | None = None) -> None:
        self.tensor = tensor
        self.resolve = resolve
        self.module_globals = module_globals or {}
        self.moved = dict(moved or {})  # a file as captured -> where it is now (a checkout moved)

    def value(self, j: Json) -> Any:
        if isinstance(j, list):
            return [self.value(x) for x in j]
        if not isinstance(j, dict):
            return j
        if len(j) == 1:
            (tag, body), = j.items()
            if tag == "$tensor":
                return self.tensor(body)
            if tag == "$float":
                return float(body)
            if tag == "$tuple":
                return tuple(self.value(x) for x in body)
            if tag == "$dict":
                return {_hashable(self.value(k)): self.value(x) for k, x in body}
            if tag == "$enum":
                cls = self.resolve(body)
                if cls is None:
                    raise Unstorable(f"the enum {body['module']}.{body['qualname']} cannot be imported")
                return cls[body["name"]]
            if tag == "$global":
                obj = self.resolve(body)
                if "attrs" in body and (obj is None or vars(obj) != self.value(body["attrs"])):
                    # a module's object whose state the program changed (or that is gone): a copy as it was
                    return self._instance("$object", {**body["class"], "attrs": body["attrs"]})
                if obj is None:
                    raise Unstorable(f"{body['module']}.{body['qualname']} cannot be imported")
                return obj
            if tag in ("$dataclass", "$namedtuple", "$object"):
                return self._instance(tag, body)
            if tag == "$local":
                namespace = dict(self.module_globals)
                namespace.update({k: self.value(x) for k, x in body["closure"].items()})
                try:
                    return _compile_def(self.moved.get(body["file"], body["file"]), body["qualname"], namespace)[0]
                except NotRebuilt as e:
                    raise Unstorable(f"{body['qualname']}: {e}") from None
        return {k: self.value(x) for k, x in j.items()}

    def _instance(self, tag: str, body: dict[str, Any]) -> Any:
        values = {k: self.value(x) for k, x in (body.get("fields") or body.get("attrs") or {}).items()}
        cls = self.resolve(body)
        if isinstance(cls, type):
            try:
                if tag == "$namedtuple":
                    return cls(**values)
                obj = object.__new__(cls) if cls.__new__ is object.__new__ else cls.__new__(cls)
                for k, x in values.items():
                    object.__setattr__(obj, k, x)  # a frozen dataclass too
                return obj
            except Exception:  # noqa: BLE001 - a class that will not be made this way: its fields will do
                pass
        if tag == "$namedtuple":
            return collections.namedtuple(body["qualname"].rsplit(".", 1)[-1], list(values))(**values)  # type: ignore[misc]
        return types.SimpleNamespace(**values)


def _hashable(x: Any) -> Any:
    return tuple(_hashable(y) for y in x) if isinstance(x, list) else x


# ---- a capture ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelId:
    """Which kernel: its file, the line of its `def`, its name and qualified name
    (`make_kernel.<locals>.attn` for one made inside `make_kernel`)."""

    file: str
    line: int
    name: str
    qualname: str

    @property
    def nested(self) -> bool:
        return "<locals>" in self.qualname


@dataclass
class Capture:
    """One stored call of a kernel (the JSON document and, loaded on first use, its values)."""

    path: Path
    doc: dict[str, Any]
    _arrays: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def kernel(self) -> KernelId:
        k = self.doc["kernel"]
        return KernelId(k["file"], int(k["line"]), k["name"], k["qualname"])

    @property
    def command(self) -> str:
        return str(self.doc.get("command") or "?")

    @property
    def captured_at(self) -> str:
        return str(self.doc.get("captured_at") or "?")

    @property
    def order(self) -> tuple[int, str]:
        """Newer captures sort later."""
        return int(self.doc.get("captured_ns") or 0), self.captured_at

    @property
    def signature(self) -> str:
        return str(self.doc["signature"])

    @property
    def unstored(self) -> dict[str, str]:
        return dict(self.doc.get("unstored") or {})

    def arrays(self) -> dict[str, np.ndarray]:
        if self._arrays is None:
            name = self.doc.get("values_file")
            self._arrays = {}
            if name:
                with np.load(self.path.parent / name, allow_pickle=False) as z:
                    self._arrays = {k: z[k] for k in z.files}
        return self._arrays

    def describe(self) -> str:
        """`captured from <command> at <time> (<file>)`: what a tool says it used."""
        return f"captured from `{self.command}` at {self.captured_at} ({self.path})"

    def info(self) -> dict[str, Any]:
        """What a CompileRecord says of the capture its inputs came from."""
        return {"kind": "capture", "file": str(self.path), "command": self.command, "captured_at": self.captured_at,
                "signature": self.signature, "qualname": self.kernel.qualname}

    def summary(self) -> str:
        """`name(x: fp16[4, 128], cfg=TileConfig(…))`: the call's signature, one line."""
        parts = []
        for name, j in self.doc["arguments"].items():
            parts.append(f"{name}: {_short(j)}" if _is_tensor_json(j) else f"{name}={_short(j)}")
        parts += [f"{name}=<{why}>" for name, why in self.unstored.items() if name in self.doc.get("params", ())]
        return f"{self.kernel.name}({', '.join(parts)})"

    def closure_text(self) -> str:
        """`cfg=TileConfig(rows=4, tile=16), width=64`: a kernel made inside a function's captured closure."""
        return ", ".join(f"{k}={_short(v)}" for k, v in (self.doc.get("closure") or {}).items())


def _is_tensor_json(j: Json) -> bool:
    return isinstance(j, dict) and set(j) == {"$tensor"}


def _short(j: Json) -> str:
    if _is_tensor_json(j):
        t = j["$tensor"]
        return f"{t['dtype']}[{', '.join(str(d) for d in t['shape'])}]" + (" + values" if t.get("values") else "")
    if isinstance(j, dict) and len(j) == 1:
        (tag, body), = j.items()
        if tag in ("$dataclass", "$namedtuple", "$object"):
            fields = body.get("fields") or body.get("attrs") or {}
            inner = ", ".join(f"{k}={_short(v)}" for k, v in fields.items())
            return f"{body['qualname'].rsplit('.', 1)[-1]}({inner})"
        if tag == "$enum":
            return f"{body['qualname']}.{body['name']}"
        if tag == "$tuple":
            return "(" + ", ".join(_short(x) for x in body) + ")"
        if tag == "$float":
            return str(body)
        if tag in ("$local", "$global"):
            return f"<{body['qualname']}>"
    text = json.dumps(j)
    return text if len(text) <= 60 else text[:57] + "..."


def signature_of(arguments: Mapping[str, Json]) -> str:
    """The input signature: every tensor's dtype and shape and every other argument's value (a
    hash). Tensor values are not part of it: a newer call with other data replaces the capture."""
    def strip(j: Json) -> Json:
        if _is_tensor_json(j):
            return {"$tensor": [j["$tensor"]["dtype"], j["$tensor"]["shape"]]}
        if isinstance(j, dict):
            return {k: strip(v) for k, v in j.items()}
        if isinstance(j, list):
            return [strip(v) for v in j]
        return j
    text = json.dumps({k: strip(v) for k, v in arguments.items()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text.replace(".<locals>.", "..")).strip("_")[:80]


def base_name(kernel: KernelId, signature: str) -> str:
    """The file name (without suffix) of a kernel's capture for one signature."""
    where = hashlib.sha256(os.path.abspath(kernel.file).encode()).hexdigest()[:8]
    return f"{_safe(Path(kernel.file).stem)}-{where}.{_safe(kernel.qualname)}.{signature}"


def write(store: Path, doc: dict[str, Any], arrays: Mapping[str, np.ndarray]) -> Path:
    """Write one capture (replacing the one of the same kernel and signature); its JSON path."""
    store.mkdir(parents=True, exist_ok=True)
    kernel = KernelId(**{k: doc["kernel"][k] for k in ("file", "line", "name", "qualname")})
    base = base_name(kernel, doc["signature"])
    doc = dict(doc)
    token = uuid.uuid4().hex[:8]
    if arrays:
        buf = io.BytesIO()
        np.savez(buf, **dict(arrays))
        npz = store / f"{base}.{token}.npz"
        tmp = store / f".{npz.name}.tmp"
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, npz)
        doc["values_file"] = npz.name
    else:
        doc["values_file"] = None
    path = store / f"{base}.json"
    tmp = store / f".{base}.{token}.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)
    for old in store.glob(f"{glob_escape(base)}.*.npz"):  # the values of the capture just replaced
        if old.name != doc["values_file"]:
            try:
                old.unlink()
            except OSError:
                pass
    return path


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def read(path: str | os.PathLike[str]) -> Capture:
    """The capture in `path` (its JSON); ValueError when it is not one this version reads."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{p}: not a readable capture: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{p}: not a {FORMAT} document")
    if doc.get("version") != VERSION:
        raise ValueError(f"{p}: capture version {doc.get('version')}; this pypto reads version {VERSION}")
    return Capture(p, doc)


# ---- recording (in the user's run) --------------------------------------------------------------

_recorded: set[tuple[str, str]] = set()  # kernels this process has captured (mode "first")
_warned: set[str] = set()


def _def_line(fn: Any) -> int:
    """The line of `fn`'s `def` (its code's first line is its first decorator's)."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    for i in range(code.co_firstlineno - 1, min(len(lines), code.co_firstlineno + 40)):
        if re.match(rf"\s*(async\s+)?def\s+{re.escape(fn.__name__)}\b", lines[i]):
            return i + 1
    return code.co_firstlineno


def kernel_id(kernel: JitKernel) -> KernelId:
    fn = kernel.fn
    return KernelId(os.path.abspath(fn.__code__.co_filename), _def_line(fn), fn.__name__, fn.__qualname__)


def _encode_all(enc: _Encoder, values: Mapping[str, Any], unstored: dict[str, str], prefix: str = "") \
        -> dict[str, Json]:
    out: dict[str, Json] = {}
    for name, v in values.items():
        try:
            out[name] = enc.value(v, name)
        except Unstorable as e:
            unstored[prefix + name] = str(e)
    return out


def _closure(fn: Any) -> dict[str, Any]:
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return out


def capture_document(kernel: JitKernel, arguments: Mapping[str, Any], command: str = "", session: str = "") \
        -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The capture of one call (`arguments`: every parameter's bound value) and its arrays."""
    enc = _Encoder()
    unstored: dict[str, str] = {}
    args = _encode_all(enc, arguments, unstored)
    kid = kernel_id(kernel)
    doc: dict[str, Any] = {
        "format": FORMAT, "version": VERSION,
        "kernel": dataclasses.asdict(kid) | {"source_sha256": kernel.source_hash},
        "command": command, "cwd": os.getcwd(), "session": session,
        "captured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "captured_ns": time.time_ns(),  # orders captures made within one second
        "params": list(kernel.signature.parameters), "arguments": args,
    }
    if kid.nested:
        closure = _closure(kernel.fn)
        scope = {k: v for k, v in kernel.decorating_scope.items() if k not in closure and k != kernel.fn.__name__
                 and not isinstance(v, (JitKernel, types.ModuleType))}
        doc["closure"] = _encode_all(enc, closure, unstored, "closure.")
        scope_unstored: dict[str, str] = {}  # the decorating function's other locals: kept when plain, else dropped
        doc["scope"] = _encode_all(enc, scope, scope_unstored)
        doc["options"] = _encode_all(enc, kernel.kernel_options, unstored, "options.")
    doc["signature"] = signature_of(args)
    doc["unstored"] = unstored
    return doc, enc.arrays


def record_call(kernel: JitKernel, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """`JitKernel.__call__`'s recorder: with `PYPTO_CAPTURE` set, store this call (mode "first": only
    a kernel's first call in this capture run). Never raises: a capture that fails says so on stderr
    once and the user's run goes on."""
    store = os.environ.get(ENV_STORE)
    if not store:
        return
    kid = (os.path.abspath(kernel.fn.__code__.co_filename), kernel.fn.__qualname__)
    every = os.environ.get(ENV_MODE, "first") == "all"
    if not every and kid in _recorded:
        return
    try:
        bound = kernel.signature.bind(*args, **kwargs)
    except TypeError:
        return  # the call itself is wrong: the jit says so
    bound.apply_defaults()
    session = os.environ.get(ENV_SESSION, "")
    try:
        if not every and session and _session_has(Path(store), kid, session):  # a sibling process captured it
            _recorded.add(kid)
            return
        doc, arrays = capture_document(kernel, bound.arguments, os.environ.get(ENV_COMMAND, ""), session)
        write(Path(store), doc, arrays)
        _recorded.add(kid)
    except Exception as e:  # noqa: BLE001 - the user's run must not fail because a capture did
        if kernel.name not in _warned:
            _warned.add(kernel.name)
            print(f"pypto capture: could not capture {kernel.name}: {type(e).__name__}: {e}", file=sys.stderr)


def _session_has(store: Path, kid: tuple[str, str], session: str) -> bool:
    prefix = base_name(KernelId(kid[0], 0, "", kid[1]), "")
    for path in store.glob(f"{glob_escape(prefix)}*.json"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("session") == session:
            return True
    return False


def install() -> None:
    """Hand `record_call` to the jit (`pypto/__init__.py` calls this: the composition root)."""
    set_call_recorder(record_call)


# ---- looking captures up ------------------------------------------------------------------------

def stores_for(file: str) -> list[Path]:
    """The stores a kernel file's captures may be in: `.pypto/captures/` in its folder and each parent
    (nearest first), then those in `PYPTO_CAPTURE_PATH`."""
    out = []
    folder = Path(os.path.abspath(file)).parent
    for d in (folder, *folder.parents):
        if (d / STORE).is_dir():
            out.append(d / STORE)
    out += [Path(p) for p in os.environ.get(ENV_PATH, "").split(os.pathsep) if p and Path(p).is_dir()]
    return out


def _same_file(recorded: str, cwd: str | None, store: Path, file: str) -> bool:
    """A capture is of `file` when it names the same path, or the same path relative to the folder the
    store belongs to (a checkout moved or mounted elsewhere)."""
    if os.path.abspath(recorded) == os.path.abspath(file):
        return True
    base = store.parent.parent if store.parent.name == ".pypto" else None
    if base is None or not cwd:
        return False
    try:
        return os.path.relpath(recorded, cwd) == os.path.relpath(os.path.abspath(file), base)
    except ValueError:
        return False


def captures_in(file: str) -> Iterator[Capture]:
    """Every readable capture of a kernel in `file` (any kernel, any signature)."""
    stem = _safe(Path(file).stem)
    for store in stores_for(file):
        for path in sorted(store.glob(f"{glob_escape(stem)}-*.json")):
            try:
                c = read(path)
            except ValueError:
                continue
            if _same_file(c.kernel.file, c.doc.get("cwd"), store, file):
                yield c


def newest(file: str, qualname: str | None = None) -> dict[str, Capture]:
    """The newest capture of each kernel of `file` (by qualified name), or of the one named."""
    out: dict[str, Capture] = {}
    for c in captures_in(file):
        q = c.kernel.qualname
        if qualname is not None and q != qualname:
            continue
        if q not in out or c.order > out[q].order:
            out[q] = c
    return out


def find(kernel: JitKernel) -> Capture | None:
    """The newest capture of `kernel` (by its file and qualified name), if any, whose parameters are
    the kernel's own (a capture of an older version with other parameters is not used)."""
    fn = kernel.fn
    c = newest(fn.__code__.co_filename, fn.__qualname__).get(fn.__qualname__)
    if c is None or list(c.doc.get("params", ())) != list(kernel.signature.parameters):
        return None
    return c


# ---- using a capture ----------------------------------------------------------------------------

# Our own modules that moved since a capture could have named them: the old prefix, the new one. Session 15
# renamed the tracing layer (pypto.language became PyPTO 3's `pl`); captures made before still name
# pypto.language.tensor.DYNAMIC and the like.
MOVED_MODULES = {"pypto.language.": "pypto.tracing."}


def _moved(module: str) -> str | None:
    for old, new in MOVED_MODULES.items():
        if module.startswith(old):
            return new + module[len(old):]
    return None


def _resolver(module_globals: Mapping[str, Any], kernel_file: str) -> Callable[[dict[str, Any]], Any]:
    """How a captured class, enum or function is found again: in the kernel's module when it was
    defined there (or is imported there under its name), else in an imported module, else by
    importing its module (never a test module: importing one would collect its tests)."""
    def walk(root: Any, qualname: str) -> Any:
        obj = root
        for part in qualname.split("."):
            obj = obj.get(part) if isinstance(obj, Mapping) else getattr(obj, part, None)
            if obj is None:
                return None
        return obj

    def resolve(ref: dict[str, Any]) -> Any:
        module, qualname = ref["module"], ref["qualname"]
        file = ref.get("file")
        here = walk(module_globals, qualname)
        if here is not None and (file is None or os.path.abspath(str(file)) == os.path.abspath(kernel_file)):
            return here  # defined in the kernel's own file (under another module name when a tool loads it)
        mod = sys.modules.get(module) if module and module != "__main__" else None
        found = walk(mod, qualname) if mod is not None else None
        if found is not None:
            return found
        if here is not None and getattr(here, "__qualname__", None) == qualname:
            return here  # imported into the kernel's module under its name
        last = module.rsplit(".", 1)[-1]
        if not module or last.startswith("test") or last == "conftest" or module == "__main__":
            return None
        for name in (module, _moved(module)):
            if name is None:
                continue
            try:
                found = walk(importlib.import_module(name), qualname)
            except Exception:  # noqa: BLE001 - not importable here: the caller falls back
                continue
            if found is not None:
                return found
        return None

    return resolve


def arguments(capture: Capture, kernel: JitKernel,
              missing: Callable[[str, dtypes.DataType, tuple[int, ...], bool], Any],
              like_torch: bool | None = None) -> dict[str, Any]:
    """The captured arguments of `kernel`'s parameters (those stored and made again; one that cannot
    be, an enum whose class is gone, is left out): a tensor whose values were kept is made from them
    (a torch tensor when `like_torch`; None: when it was one and torch is here); one whose values were
    not is `missing(name, dtype, shape, torch)`."""
    arrays = capture.arrays()
    resolve = _resolver(kernel.fn.__globals__, kernel.fn.__code__.co_filename)
    current = [""]

    def tensor(entry: dict[str, Any]) -> Any:
        dt = dtypes.from_short(entry["dtype"])
        shape = tuple(int(d) for d in entry["shape"])
        if entry.get("values") is not None:
            arr = _values(arrays[entry["values"]], dt).reshape(shape)
            torch_ = bool(entry.get("torch")) and _torch_ok() if like_torch is None else like_torch
            return from_numpy_like(np.array(arr), torch_)
        return missing(current[0], dt, shape, bool(entry.get("torch")))

    dec = _Decoder(tensor, resolve, kernel.fn.__globals__)
    out: dict[str, Any] = {}
    for name, j in capture.doc["arguments"].items():
        current[0] = name
        try:
            out[name] = dec.value(j)
        except (Unstorable, KeyError, ValueError, TypeError, AttributeError):
            continue
    return out


def _values(raw: np.ndarray, dt: dtypes.DataType) -> np.ndarray:
    """A kept tensor's values as its dtype (bf16 and fp8 are kept as their bytes)."""
    return raw.view(dt.np) if dt in BIT_VIEWS else raw.astype(dt.np, copy=False)


def _torch_ok() -> bool:
    return "torch" in sys.modules or importlib.util.find_spec("torch") is not None


def _find_def(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in parts:
        node = None
        for stmt in _statements(body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == part:
                node = stmt
        if node is None:
            return None
        body = node.body  # type: ignore[attr-defined]
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block, those under `if`/`for`/`while`/`with`/`try` included (a factory
    may define its kernel inside a branch)."""
    for s in body:
        yield s
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(s, name, None)
            if isinstance(inner, list) and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _statements(inner)
        for h in getattr(s, "handlers", ()) or ():
            yield from _statements(h.body)


class NotRebuilt(Exception):
    """Why a captured kernel made inside a function cannot be made again (the message)."""


def _compile_def(file: str, qualname: str, namespace: dict[str, Any]) -> tuple[Any, ast.AST]:
    """The function `qualname` of `file` (its text as `linecache` has it now: the editor's, in the
    language server), its `def` compiled on its own at its line with `namespace` as its globals,
    without its decorators; and its `def` node. NotRebuilt says why not."""
    lines = linecache.getlines(file)
    if not lines:
        raise NotRebuilt(f"{file} cannot be read")
    try:
        tree = ast.parse("".join(lines), file)
    except SyntaxError as e:
        raise NotRebuilt(f"{file} does not parse: {e.msg}") from None
    node = _find_def(tree, qualname)
    if node is None:
        raise NotRebuilt(f"no def of {qualname} in {file} now")
    start, end = node.lineno, node.end_lineno or node.lineno
    code = "\n" * (start - 2) + "if 1:\n" + "".join(lines[start - 1:end])
    try:
        exec(compile(code, file, "exec"), namespace)  # noqa: S102 - the user's own def, as the factory runs it
    except SyntaxError as e:  # `nonlocal` outside its function, for one
        raise NotRebuilt(f"its def cannot be compiled on its own: {e.msg}") from None
    fn = namespace[node.name]
    fn.__qualname__ = qualname
    if node.decorator_list:  # its code starts at its first decorator, as the factory's function's does
        fn.__code__ = fn.__code__.replace(co_firstlineno=min(d.lineno for d in node.decorator_list))
    return fn, node


def kernel_from_capture(capture: Capture, module_globals: Mapping[str, Any], file: str | None = None) -> JitKernel:
    """A kernel made inside a function, made again from its capture without running the function:
    its `def` (as the file's text now has it, found by qualified name) compiled at its own line with
    the captured closure and decorating locals as globals, then decorated with the captured options.
    `file`: where the kernel's file is now (default: where it was captured; a checkout may have moved)."""
    kid = capture.kernel
    file = os.path.abspath(file) if file is not None else kid.file
    missing = [k for k in capture.unstored if k.startswith("closure.")]
    resolve = _resolver(module_globals, file)

    def no_tensor(entry: dict[str, Any]) -> Any:
        raise Unstorable("a tensor in a kernel's closure")

    arrays = capture.arrays()

    def tensor(entry: dict[str, Any]) -> Any:
        if entry.get("values") is None:
            return no_tensor(entry)
        return _values(arrays[entry["values"]], dtypes.from_short(entry["dtype"]))

    dec = _Decoder(tensor, resolve, module_globals, {kid.file: file})
    namespace = dict(module_globals)
    try:
        namespace.update({k: dec.value(v) for k, v in (capture.doc.get("scope") or {}).items()})
        namespace.update({k: dec.value(v) for k, v in (capture.doc.get("closure") or {}).items()})
        opts = {k: dec.value(v) for k, v in (capture.doc.get("options") or {}).items()}
    except Unstorable as e:
        raise NotRebuilt(f"its captured values cannot be made again: {e}") from None
    if missing:
        names = ", ".join(f"{k.removeprefix('closure.')} ({capture.unstored[k]})" for k in missing)
        raise NotRebuilt(f"it uses values of the function it is made in that a capture cannot keep: {names}")
    fn, _ = _compile_def(file, kid.qualname, namespace)
    scope = {k: namespace[k] for k in (capture.doc.get("scope") or {}) if k in namespace}
    return JitKernel(fn, scope, **opts)


def nested_kernels(file: str, module_globals: Mapping[str, Any]) -> tuple[list[JitKernel], dict[str, str]]:
    """The kernels of `file` a tool does not find among its module's names but has captures of: those made
    inside functions, made again (`kernel_from_capture`), and those that are class attributes
    (`Attention.kernel`), found by qualified name; in line order. And, by qualified name, why those
    that could not be made again were not."""
    kernels: list[tuple[int, JitKernel]] = []
    failed: dict[str, str] = {}
    for q, c in newest(file).items():
        if not c.kernel.nested:
            if "." in q:  # a class attribute
                k = _resolver(module_globals, file)({"module": "", "qualname": q, "file": file})
                if isinstance(k, JitKernel) and os.path.abspath(k.fn.__code__.co_filename) == os.path.abspath(file):
                    kernels.append((k.fn.__code__.co_firstlineno, k))
            continue
        try:
            k = kernel_from_capture(c, module_globals, file)
        except NotRebuilt as e:
            failed[q] = str(e)
            continue
        kernels.append((k.fn.__code__.co_firstlineno, k))
    kernels.sort(key=lambda x: x[0])
    return [k for _, k in kernels], failed


def ambiguous_name(name: str, kernels: Iterable[JitKernel]) -> str | None:
    """When `name` is the own name of more than one of `kernels` made inside functions (two factories each making
    a `kernel`) and none's qualified name: why it names none of them, and the names that do — every door says the
    same (`FILE::NAME` in the CLI, the language server, `serve`)."""
    ks = list(kernels)
    if any(k.fn.__qualname__ == name for k in ks):
        return None
    alike = sorted({k.fn.__qualname__ for k in ks
                    if name in (k.name, k.fn.__name__) and "<locals>" in k.fn.__qualname__})
    if len(alike) < 2:
        return None
    return (f"{name!r} is the name of {len(alike)} kernels made inside functions: name one by its qualified name "
            f"({', '.join(alike)})")
