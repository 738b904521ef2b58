"""`pypto.operation`: PyPTO's module of op helpers; kernels import `op_wrapper` from it.

`@op_wrapper` marks a Python function that builds ops so that PyPTO's frontend records it as
one operation. Here any helper is traced where it is called and every op it makes keeps the
helper's line and its call site, so the decorator returns the function as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def op_wrapper(fn: Callable[..., Any]) -> Callable[..., Any]:
    return fn


__all__ = ["op_wrapper"]
