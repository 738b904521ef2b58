"""The kernel body as the tracer runs it: `if` and `assert` on run-time values and builtin `min()` / `max()`.

PyPTO's frontend evaluates a kernel's Python source itself. In that evaluation an `if` whose
condition is only known at run time (`if idx < 2:` in a `pypto.loop`, `if pypto.is_loop_end(i):`)
is a branch of the program, and `min(a, b)` / `max(a, b)` with a symbolic scalar among two
positional arguments are PyPTO's symbolic min/max (`min(off + tile, b)` with a dynamic `b`). We
trace by calling the function, so the same meaning needs the body changed: it is recompiled from
its source with

- each call of the builtin `min` / `max` routed through `scalar_min` / `scalar_max`
  (`pypto.tracing.scalar`), which fall back to the builtins for everything else;
- each `assert` checked now only when its test is known now: on a run-time value it is PyPTO's run-time
  assertion (its parser emits one), not checked here;
- each `if` statement given a run-time path: when its condition is a symbolic scalar, both
  sides are traced, each inside `runtime_branch` (`pypto.tracing.api`), a region that runs when
  the condition holds (or not); a condition known now takes Python's path, as before. An `if`
  whose sides `return`, `break` or `continue` keeps Python's meaning only.

- each call of a bare name that is not a builtin (`helper(x)`) routed through `user_call`, which
  gives a plain Python helper of the user's (not a library's) the same rewrite, once per
  function, so an `if` on a run-time value inside a helper is a branch too, as PyPTO's frontend,
  which evaluates the helpers it calls, has it.

Line and column numbers are kept, so locations and errors point at the user's text. A function
whose source cannot be read, or whose body has none of these, is traced as it is.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import os
import sysconfig
import types
import weakref
from collections.abc import Callable
from typing import Any

from pypto.tracing.api import branch_merge, runtime_branch
from pypto.tracing.scalar import SymbolicScalar, scalar_max, scalar_min


def _is_runtime(condition: Any) -> bool:
    return isinstance(condition, SymbolicScalar) and not condition.is_concrete()


_REWRITTEN: weakref.WeakKeyDictionary[Callable[..., Any], Callable[..., Any]] = weakref.WeakKeyDictionary()
_LIBRARY_DIRS = tuple(os.path.normcase(os.path.realpath(p)) + os.sep for p in {
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # the pypto package
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))})


def user_call(fn: Any) -> Any:
    """The callee of a `helper(...)` call in a traced body: a plain Python function from the user's
    files rewritten like the kernel (`traced_body`, once per function), anything else as it is."""
    if type(fn) is not types.FunctionType:
        return fn
    got = _REWRITTEN.get(fn)
    if got is None:
        file = os.path.normcase(os.path.realpath(fn.__code__.co_filename))
        got = fn if file.startswith(_LIBRARY_DIRS) or fn.__code__.co_filename.startswith("<") else traced_body(fn)
        _REWRITTEN[fn] = got
    return got


def _bound(get: Callable[[], Any]) -> Any:
    """The value of a name, or None when it is not bound (yet)."""
    try:
        return get()
    except NameError:
        return None


_HELPERS = {"min": ("__pypto_min__", scalar_min), "max": ("__pypto_max__", scalar_max),
            "if": ("__pypto_runtime__", _is_runtime), "branch": ("__pypto_branch__", runtime_branch),
            "call": ("__pypto_call__", user_call), "bound": ("__pypto_bound__", _bound),
            "merge": ("__pypto_merge__", branch_merge)}
_BUILTINS = frozenset(dir(builtins))
_FACTORY = "__pypto_body_factory__"


class _Body(ast.NodeTransformer):
    """`min(...)` / `max(...)` calls by the bare builtin name renamed to the helpers, and each `if`
    statement given its run-time path."""

    def __init__(self, names: set[str]) -> None:
        self.names = names  # the builtins this body does not shadow
        self.used: set[str] = set()
        self.ifs = 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            self.used.add(node.func.id)
            node.func = ast.copy_location(ast.Name(_HELPERS[node.func.id][0], ast.Load()), node.func)
        elif isinstance(node.func, ast.Name) and node.func.id not in _BUILTINS:
            self.used.add("call")  # maybe a helper of the user's: `user_call` decides when it runs
            wrap = ast.Call(ast.Name(_HELPERS["call"][0], ast.Load()), [node.func], [])
            node.func = ast.copy_location(wrap, node.func)
            ast.fix_missing_locations(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # a helper defined in the body runs in Python's terms

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        """`assert test, msg` checked now when its test is known now; on a value only known at run time (a
        DYNAMIC dim: DeepSeek V4's `assert mix_hc == hc_fn.shape[0]`) it is PyPTO's run-time assertion, which its
        parser emits into the program and this tracer does not check."""
        self.generic_visit(node)
        self.used.add("if")
        self.ifs += 1
        var = ast.Name(f"__pypto_assert_{self.ifs}__", ast.Load())
        runtime = ast.Call(ast.Name(_HELPERS["if"][0], ast.Load()), [var], [])
        out = [ast.Assign([ast.Name(var.id, ast.Store())], node.test),
               ast.If(ast.UnaryOp(ast.Not(), runtime), [ast.Assert(copy.copy(var), node.msg)], [])]
        for stmt in out:
            ast.copy_location(stmt, node)
            ast.fix_missing_locations(stmt)
        return out  # type: ignore[return-value]

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if _jumps(node.body) or _jumps(node.orelse):
            return node
        self.used |= {"if", "branch"}
        self.ifs += 1
        var = f"__pypto_cond_{self.ifs}__"
        text = ast.Constant(ast.unparse(node.test))

        def name(n: str, ctx: ast.expr_context | None = None) -> ast.Name:
            return ast.Name(n, ctx or ast.Load())

        def side(taken: bool, body: list[ast.stmt]) -> ast.For:
            call = ast.Call(name(_HELPERS["branch"][0]), [name(var), ast.Constant(taken), text], [])
            return ast.For(name("__pypto_side__", ast.Store()), call, body, [])

        # a name either side assigns holds, after the `if`, the value of the side that ran (a phi):
        # its value before, after the `then` side, and after the `else` side go to `branch_merge`
        names = sorted(_assigned(node.body) | _assigned(node.orelse))
        self.used |= {"bound", "merge"} if names else set()

        def grab(n: str, as_: str) -> ast.Assign:
            get = ast.Lambda(ast.arguments([], [], None, [], [], None, []), name(n))
            return ast.Assign([name(as_, ast.Store())], ast.Call(name(_HELPERS["bound"][0]), [get], []))

        pre = [grab(n, f"__pypto_pre_{self.ifs}_{n}__") for n in names]
        then = node.body + [grab(n, f"__pypto_then_{self.ifs}_{n}__") for n in names]
        merged = [ast.Assign([name(n, ast.Store())], ast.Call(name(_HELPERS["merge"][0]), [
            name(f"__pypto_pre_{self.ifs}_{n}__"), name(f"__pypto_then_{self.ifs}_{n}__"),
            ast.Call(name(_HELPERS["bound"][0]), [ast.Lambda(ast.arguments([], [], None, [], [], None, []),
                                                              name(n))], []), ast.Constant(n)], []))
                  for n in names]
        # Python traces the `else` side after the `then` side: it must start from the values before
        # the `if`, not from what the `then` side bound (`state = update(state)` on both sides)
        # the values before the `if` (a name unbound before it is unbound again)
        restore: list[ast.stmt] = [ast.If(
            ast.Compare(name(f"__pypto_pre_{self.ifs}_{n}__"), [ast.IsNot()], [ast.Constant(None)]),
            [ast.Assign([name(n, ast.Store())], name(f"__pypto_pre_{self.ifs}_{n}__"))],
            [ast.Try([ast.Delete([name(n, ast.Del())])],
                     [ast.ExceptHandler(name("NameError"), None, [ast.Pass()])], [], [])]) for n in names]
        orelse = [side(False, restore + node.orelse)] if node.orelse else []
        runtime = pre + [side(True, then)] + orelse + merged
        # the same statements on Python's path: copies, so that no node sits in the tree twice
        python = ast.If(name(var), copy.deepcopy(node.body), copy.deepcopy(node.orelse))
        test = ast.Call(name(_HELPERS["if"][0]), [name(var)], [])
        out = [ast.Assign([name(var, ast.Store())], node.test), ast.If(test, runtime, [python])]
        for stmt in out:
            ast.copy_location(stmt, node)
            ast.fix_missing_locations(stmt)
        return out  # type: ignore[return-value]


def _assigned(body: list[ast.stmt]) -> set[str]:
    """The plain names the statements bind (`x = …`, `x += …`, `for x in …`), not inside nested
    functions or classes."""
    out: set[str] = set()
    for stmt in body:
        for n in _walk_outside_defs(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and not n.id.startswith("__pypto_"):
                out.add(n.id)
    return out


def _walk_outside_defs(node: ast.AST) -> list[ast.AST]:
    out = [node]
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
                                  ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            out += _walk_outside_defs(child)
    return out


def _jumps(body: list[ast.stmt]) -> bool:
    """Whether `body` returns, or breaks/continues a loop around it (a nested loop's own are fine)."""
    for stmt in body:
        for n in _walk_outside_loops(stmt):
            if isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
                return True
    return False


def _walk_outside_loops(node: ast.AST) -> Any:
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(child, (ast.For, ast.AsyncFor, ast.While)):
            yield from (n for n in ast.walk(child) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)))
            continue
        yield from _walk_outside_loops(child)


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
    """`fn` recompiled with its `if` statements given a run-time path and its builtin `min` / `max`
    calls scalar-aware, or `fn` itself when it has neither (or its source cannot be read)."""
    code = getattr(fn, "__code__", None)
    if code is None:
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
    calls = _Body({"min", "max"} - shadowed)
    fdef.body = [s for stmt in fdef.body for s in _as_list(calls.visit(stmt))]
    if not calls.used:
        return fn
    fdef.decorator_list = []
    free = list(code.co_freevars)
    helpers = [_HELPERS[n][0] for n in sorted(calls.used)]
    if set(helpers) & set(free):
        return fn
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


def _as_list(node: ast.AST | list[ast.stmt]) -> list[ast.stmt]:
    return node if isinstance(node, list) else [node]  # type: ignore[list-item]
