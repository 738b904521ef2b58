"""The kernel body as the tracer runs it: builtin `min()` / `max()` made aware of symbolic scalars.

PyPTO's frontend evaluates a kernel's Python source itself, and in that evaluation `min(a, b)`
and `max(a, b)` with a symbolic scalar among two positional arguments are PyPTO's symbolic
min/max (`min(off + tile, b)` with a dynamic `b` is a run-time value, not a Python comparison).
We trace by calling the function, so the same meaning needs the calls themselves changed: the
body is recompiled from its source with each call of the builtin `min` / `max` routed through
`scalar_min` / `scalar_max` (`pypto.language.scalar`), which fall back to the builtins for
everything else. Line and column numbers are kept, so locations and errors point at the user's
text. A function whose source cannot be read, that shadows `min` / `max`, or that calls neither,
is traced as it is.
"""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable
from typing import Any

from pypto.language.scalar import scalar_max, scalar_min

_HELPERS = {"min": ("__pypto_min__", scalar_min), "max": ("__pypto_max__", scalar_max)}
_FACTORY = "__pypto_body_factory__"


class _Calls(ast.NodeTransformer):
    """`min(...)` / `max(...)` calls by the bare builtin name, renamed to the helpers."""

    def __init__(self, names: set[str]) -> None:
        self.names = names  # the builtins this body does not shadow
        self.used: set[str] = set()

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            self.used.add(node.func.id)
            node.func = ast.copy_location(ast.Name(_HELPERS[node.func.id][0], ast.Load()), node.func)
        return node


def _assigned_names(fdef: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {a.arg for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs)}
    names |= {a.arg for a in (fdef.args.vararg, fdef.args.kwarg) if a is not None}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fdef:
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return names


def traced_body(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with its builtin `min` / `max` calls scalar-aware, or `fn` itself when nothing changes."""
    code = getattr(fn, "__code__", None)
    if code is None or not ({"min", "max"} & set(code.co_names) or _calls_in_nested(code)):
        return fn
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return fn
    # an indented def (a kernel made inside a function) is parsed under `if 1:`, which keeps every
    # column; the line numbers then shift by one more
    indented = lines[0][:1].isspace()
    try:
        tree = ast.parse(("if 1:\n" if indented else "") + "".join(lines))
    except SyntaxError:
        return fn
    outer = tree.body[0] if tree.body else None
    fdef = (outer.body[0] if isinstance(outer, ast.If) and outer.body else None) if indented else outer
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or fdef.name != fn.__name__:
        return fn
    shadowed = _assigned_names(fdef) | set(code.co_freevars) | set(getattr(fn, "__globals__", {}))
    if {"min", "max"} <= shadowed:
        return fn
    calls = _Calls({"min", "max"} - shadowed)
    fdef.body = [calls.visit(stmt) for stmt in fdef.body]
    if not calls.used:
        return fn
    fdef.decorator_list = []
    free = list(code.co_freevars)
    helpers = [_HELPERS[n][0] for n in sorted(calls.used)]
    params = [ast.arg(p) for p in (*helpers, *free)]
    factory = ast.FunctionDef(_FACTORY, ast.arguments([], params, None, [], [], None, []),
                              [fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], [], None, None)
    module = ast.Module([factory], [])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first - (2 if indented else 1))
    try:
        compiled = compile(module, code.co_filename, "exec")
    except SyntaxError:
        return fn
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    body_code = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == fn.__name__)
    cells = dict(zip(free, fn.__closure__ or ()))
    cells.update({_HELPERS[n][0]: types.CellType(_HELPERS[n][1]) for n in calls.used})
    closure = tuple(cells[name] for name in body_code.co_freevars)
    new = types.FunctionType(body_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    return new


def _calls_in_nested(code: types.CodeType) -> bool:
    return any(isinstance(c, types.CodeType) and ({"min", "max"} & set(c.co_names) or _calls_in_nested(c))
               for c in code.co_consts)
