"""`pypto.Tensor`: an annotation outside a kernel, a traced tensor handle inside one.

`pypto.Tensor((M, N), pypto.DT_FP32)`, `pypto.Tensor[[M, N], dt]`, `pypto.Tensor()` and
`pypto.Tensor[...]` make annotations (`spec_shape` None means "from the argument").
Inside a kernel, parameters and op results are `Tensor` handles: a handle's current value
is a node id, and writing into it (`t[a:b] = e`, `t.move(e)`) rebinds it. Operators and
methods forward to the module functions in `pypto.frontend.api`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import TileOpFormat
from pypto.ir.errors import PyptoError
from pypto.ir.graph import TensorType
from pypto.language.scalar import wrap

if TYPE_CHECKING:
    from pypto.language.builder import Builder, Scope


class _DynamicMarker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"pypto.{self.name}"


DYNAMIC = _DynamicMarker("DYNAMIC")
STATIC = _DynamicMarker("STATIC")


class Tensor:
    """A tensor annotation (spec mode) or a tensor value inside a kernel (traced mode)."""

    _builder: Builder | None
    _value: int
    _scope: Scope
    _name: str | None

    def __init__(self, shape: Any = None, dtype: DataType | None = None, format: Any = TileOpFormat.TILEOP_ND,
                 name: str | None = None) -> None:
        self._builder = None
        if shape is not None and not isinstance(shape, (list, tuple)):
            raise PyptoError(f"pypto.Tensor shape must be a list or tuple, got {shape!r}")
        if dtype is not None and not isinstance(dtype, DataType):
            from pypto.language.unsupported import UnsupportedDataType

            if isinstance(dtype, UnsupportedDataType):
                raise dtype.reject()
            raise PyptoError(f"pypto.Tensor dtype must be a pypto.DT_* value, got {dtype!r}")
        self.spec_shape: tuple[Any, ...] | None = None if shape is None or len(shape) == 0 else tuple(shape)
        self.spec_dtype = dtype
        self.spec_format = format
        self._name = name

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

    @classmethod
    def _traced(cls, builder: Builder, value: int, name: str | None = None) -> Tensor:
        t = object.__new__(cls)
        t._builder = builder
        t._value = value
        t._scope = builder.scope
        t._name = name
        t.spec_shape = None
        t.spec_dtype = None
        t.spec_format = TileOpFormat.TILEOP_ND
        return t

    # ---- properties ---------------------------------------------------------------------------

    def _require(self) -> Builder:
        if self._builder is None:
            raise PyptoError("this pypto.Tensor is an annotation; tensors inside a kernel come from its "
                             "parameters or from ops")
        return self._builder

    @property
    def type(self) -> TensorType:
        return self._require().types[self._value]

    @property
    def shape(self) -> tuple[Any, ...]:
        if self._builder is None:
            return tuple(self.spec_shape or ())
        return tuple(wrap(d) for d in self.type.shape)

    @property
    def dtype(self) -> DataType:
        if self._builder is None:
            if self.spec_dtype is None:
                raise PyptoError("this annotation has no dtype")
            return self.spec_dtype
        return self.type.dtype

    @property
    def dim(self) -> int:
        return len(self.shape) if self._builder is None else self.type.rank

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def format(self) -> Any:
        return self.spec_format

    def __repr__(self) -> str:
        if self._builder is None:
            return f"pypto.Tensor({list(self.spec_shape) if self.spec_shape else []}, {self.spec_dtype!r})"
        return f"Tensor(%{self._value}: {self.type}{' ' + self._name if self._name else ''})"

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

    # ---- operators ----------------------------------------------------------------------------

    def __add__(self, o: Any) -> Tensor:
        return api.add(self, o)

    def __radd__(self, o: Any) -> Tensor:
        return api.add(o, self)

    def __sub__(self, o: Any) -> Tensor:
        return api.sub(self, o)

    def __rsub__(self, o: Any) -> Tensor:
        return api.sub(o, self)

    def __mul__(self, o: Any) -> Tensor:
        return api.mul(self, o)

    def __rmul__(self, o: Any) -> Tensor:
        return api.mul(o, self)

    def __truediv__(self, o: Any) -> Tensor:
        return api.div(self, o)

    def __rtruediv__(self, o: Any) -> Tensor:
        return api.div(o, self)

    def __floordiv__(self, o: Any) -> Tensor:
        return api.floor_div_op(self, o)

    def __rfloordiv__(self, o: Any) -> Tensor:
        return api.floor_div_op(o, self)

    def __mod__(self, o: Any) -> Tensor:
        return api.remainder_op(self, o)

    def __rmod__(self, o: Any) -> Tensor:
        return api.remainder_op(o, self)

    def __pow__(self, o: Any) -> Tensor:
        return api.pow(self, o)

    def __rpow__(self, o: Any) -> Tensor:
        return api.pow(o, self)

    def __matmul__(self, o: Any) -> Tensor:
        return api.matmul(self, o, self.dtype if self.dtype is not DataType.DT_INT8 else DataType.DT_INT32)

    def __neg__(self) -> Tensor:
        return api.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return api.abs(self)

    def __eq__(self, o: Any) -> Tensor:  # type: ignore[override]
        return api.eq(self, o)

    def __ne__(self, o: Any) -> Tensor:  # type: ignore[override]
        return api.ne(self, o)

    def __lt__(self, o: Any) -> Tensor:
        return api.lt(self, o)

    def __le__(self, o: Any) -> Tensor:
        return api.le(self, o)

    def __gt__(self, o: Any) -> Tensor:
        return api.gt(self, o)

    def __ge__(self, o: Any) -> Tensor:
        return api.ge(self, o)

    def __invert__(self) -> Tensor:
        return api.logical_not(self)

    def __and__(self, o: Any) -> Tensor:
        return api.logical_and(self, o)

    def __getitem__(self, key: Any) -> Tensor:
        return api.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        api.setitem(self, key, value)

    # ---- methods that are not plain forwards --------------------------------------------------

    def move(self, src: Any) -> Tensor:
        """`out.move(expr)`: `out` now holds `expr` (same shape and dtype)."""
        api.setitem(self, Ellipsis, src)
        return self

    def matmul(self, other: Tensor, out_dtype: DataType | None = None, **kw: Any) -> Tensor:
        return api.matmul(self, other, out_dtype or self.dtype, **kw)

    def view(self, shape: Any = None, offsets: Any = None, **kw: Any) -> Tensor:
        return api.view(self, shape, offsets, **kw)


_FORWARDED = (
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "sign", "ceil",
    "floor", "trunc", "round", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "lrelu", "erf", "erfc", "clip",
    "neg", "abs", "isnan", "isfinite", "logical_not", "logical_and", "add", "sub", "mul", "div", "pow",
    "maximum", "minimum", "eq", "ne", "gt", "ge", "lt", "le", "cast", "sum", "amax", "amin", "prod",
    "argmax", "argmin", "var", "softmax", "rms_norm", "reshape", "transpose", "permute", "unsqueeze",
    "expand_clone", "clone", "where",
)


def _forward(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(api, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in _FORWARDED:
    setattr(Tensor, _name, _forward(_name))

from pypto.language import api  # noqa: E402  (circular: api builds Tensors)
