"""`pypto.Tensor`: an annotation outside a kernel, a traced tensor handle inside one.

`pypto.Tensor((M, N), pypto.DT_FP32)`, `pypto.Tensor[[M, N], dt]`, `pypto.Tensor()` and
`pypto.Tensor[...]` make annotations (`spec_shape` None means "from the argument").
Inside a kernel, parameters and op results are `Tensor` handles: a handle's current value
is a node id, and writing into it (`t[a:b] = e`, `t.move(e)`) rebinds it. Operators and
methods forward to the module functions in `pypto.frontend.api`.

Tensors can share storage: `pypto.reshape(x, shape, inplace=True)` is another view of `x`'s memory,
so a write into either is seen through both. Each handle keeps the group it shares storage with
(`share_storage`, `storage_sharers`); a write rebinds every member (`pypto.tracing.api`).
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import CachePolicy, TileOpFormat
from pypto.ir.errors import PyptoError
from pypto.ir.graph import TensorType
from pypto.tracing.builder import Binding, Builder, current
from pypto.tracing.scalar import as_dim, wrap
from pypto.tracing.unsupported import UnsupportedDataType


class _DynamicMarker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"pypto.{self.name}"


DYNAMIC = _DynamicMarker("DYNAMIC")
STATIC = _DynamicMarker("STATIC")


class Tensor:
    """A tensor annotation (spec mode) or a tensor value inside a kernel (traced mode)."""

    # `__pypto_tensor__`: `symbolic scalar * tensor` defers to the tensor (pypto.tracing.scalar)
    __pypto_tensor__ = True
    trace: Binding | None  # inside a kernel: what this handle holds; None for an annotation

    def __init__(self, shape: Any = None, dtype: DataType | None = None, name: str | None = "",
                 format: Any = TileOpFormat.TILEOP_ND, data_ptr: Any = None, device: Any = None,
                 ori_shape: Any = None) -> None:
        """PyPTO's signature; `data_ptr`, `device` and `ori_shape` belong to PyPTO's runtime and are
        accepted, unused."""
        self.trace = None
        self.parameter = False  # a kernel parameter: its shape is the caller's, it cannot change
        self.storage: list[Tensor] = [self]  # the tensors that share this one's memory, itself included
        if shape is not None and not isinstance(shape, (list, tuple)):
            raise PyptoError(f"pypto.Tensor shape must be a list or tuple, got {shape!r}")
        if dtype is not None and not isinstance(dtype, DataType):
            if isinstance(dtype, UnsupportedDataType):
                raise dtype.reject()
            raise PyptoError(f"pypto.Tensor dtype must be a pypto.DT_* value, got {dtype!r}")
        self.spec_shape: tuple[Any, ...] | None = None if shape is None or len(shape) == 0 else tuple(shape)
        self.spec_dtype = dtype
        self.spec_format = format
        self._spec_name = name or None
        b = current()
        if b is not None and self.spec_shape is not None and dtype is not None:
            # inside a kernel, `pypto.Tensor(shape, dtype, name)` makes a named local tensor (as pypto.tensor)
            node = b.emit("tensor", [], {"shape": tuple(as_dim(d) for d in self.spec_shape), "value": 0,
                                         "dtype": dtype}, name=name or None)
            self.trace = b.bind(node.id, name or None)
            self.spec_shape = self.spec_dtype = None

    def set_cache_policy(self, policy: CachePolicy, value: bool) -> None:
        """PyPTO's L2 hint for this tensor (e.g. `CachePolicy.NONE_CACHEABLE` for a weight read once).
        Kept on the tensor for `get_cache_policy`; the sim board's L2 does not model the bypass."""
        self._policies = {**getattr(self, "_policies", {}), CachePolicy(policy): bool(value)}

    def get_cache_policy(self, policy: CachePolicy) -> bool:
        return bool(getattr(self, "_policies", {}).get(CachePolicy(policy), False))

    def __class_getitem__(cls, item: Any) -> Tensor:
        if item is Ellipsis:
            return cls()
        if not isinstance(item, tuple) or len(item) == 0:
            raise PyptoError("pypto.Tensor[...] takes [shape, dtype], e.g. pypto.Tensor[[M, N], pypto.DT_FP32]; "
                             "empty brackets are an error (write pypto.Tensor[...] for a shape from the argument)")
        if len(item) == 1 or len(item) > 2:
            raise PyptoError(f"pypto.Tensor[...] takes exactly [shape, dtype], got {len(item)} items")
        shape, dtype = item
        if isinstance(shape, (list, tuple)) and len(shape) == 0:
            shape = None
        return cls(shape, dtype)

    # ---- properties ---------------------------------------------------------------------------

    @property
    def type(self) -> TensorType:
        t = trace_of(self)
        return t.builder.types[t.value]

    @property
    def shape(self) -> list[Any]:
        """A new list each time, as PyPTO's (kernels write `shape = x.shape; shape[-1] //= 2`)."""
        if self.trace is None:
            return list(self.spec_shape or ())
        return [wrap(d) for d in self.type.shape]

    @property
    def valid_shape(self) -> list[Any]:
        """The dims of the data this tensor holds: its `valid_shape` when a view (or `full`,
        `reshape`) was given one, or vector math on such a value; else its shape."""
        if self.trace is None:
            return self.shape
        t = self.trace
        return [wrap(d) for d in t.builder.valid.get(t.value, self.type.shape)]

    @property
    def dtype(self) -> DataType:
        if self.trace is None:
            if self.spec_dtype is None:
                raise PyptoError("this annotation has no dtype")
            return self.spec_dtype
        return self.type.dtype

    @property
    def dim(self) -> int:
        return len(self.shape) if self.trace is None else self.type.rank

    @property
    def name(self) -> str | None:
        return self._spec_name if self.trace is None else self.trace.name

    @property
    def format(self) -> Any:
        return self.spec_format

    def __repr__(self) -> str:
        if self.trace is None:
            return f"pypto.Tensor({list(self.spec_shape) if self.spec_shape else []}, {self.spec_dtype!r})"
        return f"Tensor(%{self.trace.value}: {self.type}{' ' + self.name if self.name else ''})"

    def __len__(self) -> int:
        d = self.shape[0]
        if isinstance(d, int):
            return d
        raise PyptoError("len() of a tensor with a dynamic first dim; use x.shape[0]")

    def __bool__(self) -> bool:
        raise PyptoError("the truth value of a tensor is only known at run time; use pypto.where")

    def __iter__(self) -> Any:
        raise PyptoError("iterating over a tensor is not supported; use a pypto.loop with views")

    __hash__ = object.__hash__


def traced_tensor(builder: Builder, value: int, name: str | None = None, *, parameter: bool = False) -> Tensor:
    """A tensor handle inside a kernel, holding `value` (a node id) in the builder's current scope
    (`parameter`: the handle of a kernel parameter, whose final value is written back to the caller)."""
    t = object.__new__(Tensor)
    t.trace = builder.bind(value, name)
    t.parameter = parameter
    t.storage = [t]
    t.spec_shape = None
    t.spec_dtype = None
    t.spec_format = TileOpFormat.TILEOP_ND
    t._spec_name = None
    return t


def as_tensor(x: Any, what: str = "input") -> Tensor:
    """`x` when it is a tensor of the kernel being traced; else a user error naming the argument."""
    if isinstance(x, Tensor):
        trace_of(x)
        return x
    raise PyptoError(f"{what} must be a pypto tensor, got {type(x).__name__}")


def trace_of(t: Tensor) -> Binding:
    """What a traced tensor holds; an annotation used as a value is a user error."""
    if t.trace is None:
        raise PyptoError("this pypto.Tensor is an annotation; tensors inside a kernel come from its "
                         "parameters or from ops")
    return t.trace


def share_storage(a: Tensor, b: Tensor) -> None:
    """`b` is another view of `a`'s memory (`reshape(a, ..., inplace=True)`): the two groups merge."""
    if any(t is b for t in a.storage):  # by identity: a tensor's `==` is an op
        return
    group = a.storage + [t for t in b.storage if not any(t is u for u in a.storage)]
    for t in group:
        t.storage = group


def storage_sharers(t: Tensor) -> list[Tensor]:
    """The other tensors that share `t`'s memory (a write into `t` is a write into each of them)."""
    return [o for o in t.storage if o is not t]


def take_storage_place(old: Tensor, new: Tensor) -> None:
    """`new` stands for `old` from now on (the value a name holds after a run-time `if`): it joins
    `old`'s storage group in `old`'s place."""
    if old is new or len(old.storage) == 1:
        return
    group = [new if t is old else t for t in old.storage if t is not new]
    for t in group:
        t.storage = group
    old.storage = [old]
