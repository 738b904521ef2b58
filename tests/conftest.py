"""Shared test helpers: jit a small kernel around an op, pick valid tile shapes, compare with torch.

Helpers are handed to tests through the session fixture `pk` (not imported from this
module: several conftest.py files may exist and `import conftest` would be ambiguous).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import torch

import pypto
import pypto.npu
from pypto.testing import compare

LOW_PRECISION = (torch.float16, torch.bfloat16)
# half an ulp at 1.0 is the rounding error of one op; allow a few ulps of the result's magnitude
EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}


@pytest.fixture(autouse=True)
def _a_users_process() -> Any:
    """Every test starts as a user's own process: a kernel with `run_mode: NPU` is refused until a test
    loads a user file the tools' way (`pypto.cli.load_module`, `load_text`: pypto.npu.for_tools)."""
    before = pypto.npu.set_for_tools(False)
    yield
    pypto.npu.set_for_tools(before)


def vec_tile(rank: int, *dts: Any, last: int | None = None, lead: int = 8) -> list[int]:
    """A valid `set_vec_tile_shapes` argument for ops of `rank`: `lead` rows in each leading dim and a
    last entry that is 32-byte aligned for every dtype in `dts` (pypto or torch dtypes)."""
    sizes = [_nbytes(d) for d in dts] or [4]
    align = 32 // min(sizes)
    last = last or align
    assert all(last * s % 32 == 0 for s in sizes), (last, sizes)
    return [lead] * (max(rank, 1) - 1) + [last]


def _nbytes(d: Any) -> int:
    if isinstance(d, pypto.DataType):
        return d.nbytes
    return torch.empty((), dtype=d).element_size()


def pt_dtype(d: Any) -> torch.dtype:
    return pypto.ir.dtypes.torch_dtype(d) if isinstance(d, pypto.DataType) else d


def dt_of(t: torch.Tensor) -> pypto.DataType:
    d = pypto.ir.dtypes.from_torch(t.dtype)
    assert d is not None
    return d


def make_kernel(fn: Callable[..., Any], n: int, *, tile: Sequence[int] | None = None,
                cube: Sequence[Any] | None = None, inplace: bool = False) -> pypto.JitKernel:
    """A jitted kernel applying `fn` to `n` tensor inputs; `inplace`: `out[:] = fn(...)` into a last
    parameter, else the returning style (`-> pypto.Tensor()`)."""

    def setup() -> None:
        if tile is not None:
            pypto.set_vec_tile_shapes(*tile)
        if cube is not None:
            pypto.set_cube_tile_shapes(*cube)

    if inplace:
        if n == 1:
            def k(a: pypto.Tensor(), out: pypto.Tensor()):
                setup()
                out[:] = fn(a)
        elif n == 2:
            def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
                setup()
                out[:] = fn(a, b)
        elif n == 3:
            def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor(), out: pypto.Tensor()):
                setup()
                out[:] = fn(a, b, c)
        else:
            raise ValueError(n)
    elif n == 0:
        def k(dummy: pypto.Tensor()) -> pypto.Tensor():
            setup()
            return fn()
    elif n == 1:
        def k(a: pypto.Tensor()) -> pypto.Tensor():
            setup()
            return fn(a)
    elif n == 2:
        def k(a: pypto.Tensor(), b: pypto.Tensor()) -> pypto.Tensor():
            setup()
            return fn(a, b)
    elif n == 3:
        def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()) -> pypto.Tensor():
            setup()
            return fn(a, b, c)
    elif n == 4:
        def k(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor(), d: pypto.Tensor()) -> pypto.Tensor():
            setup()
            return fn(a, b, c, d)
    else:
        raise ValueError(n)
    return pypto.frontend.jit(k)


def run(fn: Callable[..., Any], *inputs: torch.Tensor, tile: Sequence[int] | None = None,
        cube: Sequence[Any] | None = None, out: torch.Tensor | None = None) -> torch.Tensor:
    """Run `fn` on `inputs` in a fresh kernel. With `out`, the in-place style (returns `out`); else
    the returning style. `tile` defaults to a valid vector tile for the inputs' max rank."""
    if tile is None:
        # one entry more than the inputs' rank (for rank-raising ops; extra leading entries are ignored);
        # a last entry of 32 elements is aligned for every dtype
        rank = max([t.dim() for t in inputs] + [0] + ([out.dim()] if out is not None else []))
        tile = vec_tile(min(rank + 1, 4), torch.int8)
    if out is not None:
        r = make_kernel(fn, len(inputs), tile=tile, cube=cube, inplace=True)(*inputs, out)
        assert r is None
        return out
    if not inputs:
        return make_kernel(fn, 0, tile=tile, cube=cube)(torch.zeros(1))
    return make_kernel(fn, len(inputs), tile=tile, cube=cube)(*inputs)


def upcast(x: Any) -> Any:
    """fp16/bf16 tensors as fp32 (the reference computes in fp32, like the documented semantics)."""
    if isinstance(x, torch.Tensor) and x.dtype in LOW_PRECISION:
        return x.float()
    return x


def reference(tfn: Callable[..., torch.Tensor], *inputs: Any) -> tuple[torch.Tensor, torch.dtype]:
    """torch's value (computed from fp32 copies of fp16/bf16 inputs) and torch's result dtype."""
    want_dtype = tfn(*inputs).dtype
    return tfn(*[upcast(x) for x in inputs]), want_dtype


def check(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype | None = None, *,
          rtol: float = 1e-3, atol: float = 1e-3, ulps: float = 2.0, name: str = "op") -> None:
    """`got` (pypto) against `want` (torch): dtype (if given) and shape exactly; ints and bools
    exactly; fp32 with rtol/atol; fp16/bf16 by max-abs difference, `ulps` epsilons of the range."""
    assert isinstance(got, torch.Tensor), type(got)
    if dtype is not None:
        assert got.dtype == dtype, f"{name}: dtype {got.dtype}, expected {dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{name}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    if not got.dtype.is_floating_point:
        g = got.to(torch.int64) if got.dtype != torch.bool else got
        w = want.to(g.dtype)
        assert torch.equal(g, w), f"{name}: values differ at {int((g != w).sum())} places\n{g}\n{w}"
        return
    if got.dtype in LOW_PRECISION:
        w = want.double()
        finite = w[torch.isfinite(w)]
        scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
        c = compare(name, got, want, atol=max(atol, ulps * EPS[got.dtype] * scale), rtol=0.0, max_abs_only=True)
    else:
        c = compare(name, got, want, rtol=rtol, atol=atol)
    assert c.ok, str(c)


def rand(shape: Sequence[int], dtype: Any = torch.float32, lo: float = -1.0, hi: float = 1.0) -> torch.Tensor:
    """Uniform values in [lo, hi) of `dtype` (ints: integers in [lo, hi); bool: fair coin), from torch's
    global generator (test modules seed it per test)."""
    dtype = pt_dtype(dtype)
    shape = tuple(shape)
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    return torch.randint(int(lo), int(hi), shape, dtype=torch.int64).to(dtype)


def to_np(t: torch.Tensor) -> np.ndarray:
    return t.float().numpy() if t.dtype in LOW_PRECISION else t.numpy()


@pytest.fixture(scope="session")
def pk() -> types.SimpleNamespace:
    """The helpers above, as one namespace: `pk.run`, `pk.check`, `pk.rand`, `pk.vec_tile` …"""
    return types.SimpleNamespace(
        vec_tile=vec_tile, make_kernel=make_kernel, run=run, check=check, reference=reference, rand=rand,
        upcast=upcast, pt_dtype=pt_dtype, dt_of=dt_of, to_np=to_np, EPS=EPS, LOW_PRECISION=LOW_PRECISION,
    )
