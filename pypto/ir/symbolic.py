"""Symbolic integers: dynamic dims (`x.d0`), loop indices (`i`), scalars read from integer
tensors at run time (`seq_lens[b]`) and arithmetic on them.

A `Dim` is a Python `int` or a `SymExpr`. A `SymExpr` is kept in a linear normal form
(constant + sum of coefficient·atom, where an atom is a symbol or a non-linear
application such as `a // 4` or `min(a, b)`), so `(i + 1) - i` simplifies to the int 1
and two spellings of one expression compare equal. Anything that simplifies to a
constant becomes a plain `int`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from pypto.ir.errors import PyptoError


@dataclass(frozen=True, slots=True)
class Apply:
    """A non-linear atom: fn is one of mul, floordiv, mod, min, max, or a comparison lt, le, eq, ne
    (1 when it holds, else 0: a runtime branch's condition)."""

    fn: str
    args: tuple[Dim, ...]

    def key(self) -> str:
        return to_str_atom(self)


@dataclass(frozen=True, slots=True)
class Read:
    """An element of an integer kernel input, read at run time (`block_table[b, j]`). Its value is
    the env entry named `read_key(tensor, index values)`: the caller binds every element of each
    tensor the kernel reads (`pypto.record.bind`)."""

    tensor: str
    index: tuple[Dim, ...]

    def key(self) -> str:
        return to_str_atom(self)


Atom = str | Apply | Read


class ReadOutOfRange(PyptoError):
    """A scalar read whose index, known only at run time, falls outside its tensor; the stage
    that evaluates it re-raises it at the reading node's line."""


@dataclass(frozen=True, slots=True)
class SymExpr:
    const: int
    terms: tuple[tuple[Atom, int], ...]  # sorted by atom text, coefficients non-zero

    def __str__(self) -> str:
        return to_str(self)

    def __repr__(self) -> str:
        return f"SymExpr({to_str(self)!r})"

    @property
    def symbols(self) -> frozenset[str]:
        return symbols_of(self)


Dim = int | SymExpr


def _atom_key(a: Atom) -> str:
    return a if isinstance(a, str) else to_str_atom(a)


def _make(const: int, terms: dict[Atom, int]) -> Dim:
    items = tuple(sorted(((a, c) for a, c in terms.items() if c != 0), key=lambda t: _atom_key(t[0])))
    if not items:
        return const
    return SymExpr(const, items)


def _parts(d: Dim) -> tuple[int, dict[Atom, int]]:
    if isinstance(d, int):
        return d, {}
    return d.const, dict(d.terms)


def sym(name: str) -> SymExpr:
    return SymExpr(0, ((name, 1),))


def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    ca, ta = _parts(a)
    cb, tb = _parts(b)
    for k, v in tb.items():
        ta[k] = ta.get(k, 0) + v
    return _make(ca + cb, ta)


def neg(a: Dim) -> Dim:
    return scale(a, -1)


def sub(a: Dim, b: Dim) -> Dim:
    return add(a, neg(b))


def scale(a: Dim, k: int) -> Dim:
    if isinstance(a, int):
        return a * k
    return _make(a.const * k, {t: c * k for t, c in a.terms})


def _apply(fn: str, *args: Dim) -> Dim:
    if fn in ("min", "max", "mul"):
        args = tuple(sorted(args, key=lambda x: str(x)))
    return SymExpr(0, ((Apply(fn, args), 1),))


def mul(a: Dim, b: Dim) -> Dim:
    if isinstance(b, int):
        return scale(a, b)
    if isinstance(a, int):
        return scale(b, a)
    return _apply("mul", a, b)


def _divisible(a: Dim, k: int) -> bool:
    c, t = _parts(a)
    return c % k == 0 and all(v % k == 0 for v in t.values())


def floordiv(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(b, int):
        if b == 1:
            return a
        if b > 0 and _divisible(a, b):
            c, t = _parts(a)
            return _make(c // b, {k: v // b for k, v in t.items()})
    return _apply("floordiv", a, b)


def mod(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    if isinstance(b, int) and b > 0:
        c, t = _parts(a)
        if all(v % b == 0 for v in t.values()):
            return c % b
    return _apply("mod", a, b)


def minimum(a: Dim, b: Dim) -> Dim:
    d = sub(a, b)
    if isinstance(d, int):
        return a if d <= 0 else b
    return _apply("min", a, b)


def maximum(a: Dim, b: Dim) -> Dim:
    d = sub(a, b)
    if isinstance(d, int):
        return a if d >= 0 else b
    return _apply("max", a, b)


def _compare(fn: str, a: Dim, b: Dim) -> Dim:
    d = sub(a, b)
    if isinstance(d, int):
        return int({"lt": d < 0, "le": d <= 0, "eq": d == 0, "ne": d != 0}[fn])
    return _apply(fn, a, b)


def lt(a: Dim, b: Dim) -> Dim:
    """1 if a < b else 0 (an int when decidable now)."""
    return _compare("lt", a, b)


def le(a: Dim, b: Dim) -> Dim:
    return _compare("le", a, b)


def eq(a: Dim, b: Dim) -> Dim:
    return _compare("eq", a, b)


def ne(a: Dim, b: Dim) -> Dim:
    return _compare("ne", a, b)


def truth(a: Dim) -> Dim:
    """A condition as 0/1: a comparison as it is, any other value `!= 0`."""
    if isinstance(a, SymExpr) and a.const == 0 and len(a.terms) == 1 and a.terms[0][1] == 1 \
            and isinstance(a.terms[0][0], Apply) and a.terms[0][0].fn in _COMPARISONS:
        return a
    return ne(a, 0) if not isinstance(a, int) else int(a != 0)


def logical_not(a: Dim) -> Dim:
    return sub(1, truth(a))


def equal(a: Dim, b: Dim) -> bool | None:
    """True or False when decidable at trace time, None when it depends on runtime values."""
    d = sub(a, b)
    if isinstance(d, int):
        return d == 0
    return None


def is_concrete(d: Dim) -> bool:
    return isinstance(d, int)


def symbols_of(d: Dim) -> frozenset[str]:
    """The symbols `d` depends on (a tensor read counts its indices' symbols and the tensor's name)."""
    if isinstance(d, int):
        return frozenset()
    out: set[str] = set()
    for atom, _ in d.terms:
        if isinstance(atom, str):
            out.add(atom)
        elif isinstance(atom, Read):
            out.add(atom.tensor)
            for arg in atom.index:
                out |= symbols_of(arg)
        else:
            for arg in atom.args:
                out |= symbols_of(arg)
    return frozenset(out)


def reads_of(d: Dim) -> frozenset[str]:
    """The tensors whose elements `d` reads at run time."""
    if isinstance(d, int):
        return frozenset()
    out: set[str] = set()
    for atom, _ in d.terms:
        if isinstance(atom, Read):
            out.add(atom.tensor)
            args = atom.index
        elif isinstance(atom, Apply):
            args = atom.args
        else:
            continue
        for arg in args:
            out |= reads_of(arg)
    return frozenset(out)


def read_key(tensor: str, index: tuple[int, ...]) -> str:
    """The env entry holding one element of a tensor the kernel reads: `block_table[0, 3]`."""
    return f"{tensor}[{', '.join(str(i) for i in index)}]"


_FNS = {
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "min": min,
    "max": max,
    "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b),
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
}
_COMPARISONS = {"lt": "<", "le": "<=", "eq": "==", "ne": "!="}


def evaluate(d: Dim, env: dict[str, int]) -> int:
    """The value of `d` with every symbol bound by `env` (KeyError names a missing symbol)."""
    if isinstance(d, int):
        return d
    total = d.const
    for atom, c in d.terms:
        if isinstance(atom, str):
            total += c * env[atom]
        elif isinstance(atom, Read):
            key = read_key(atom.tensor, tuple(evaluate(x, env) for x in atom.index))
            if key not in env:
                raise ReadOutOfRange(f"the kernel reads {key} (written {to_str_atom(atom)}), which is outside "
                                     f"tensor {atom.tensor!r} in this call")
            total += c * env[key]
        else:
            total += c * _FNS[atom.fn](*(evaluate(x, env) for x in atom.args))
    return total




# ---- text ------------------------------------------------------------------------------------

_OPS = {"mul": "*", "floordiv": "//", "mod": "%"}


def to_str_atom(a: Atom) -> str:
    if isinstance(a, str):
        return a
    if isinstance(a, Read):
        return f"{a.tensor}[{', '.join(to_str(x) for x in a.index)}]"
    if a.fn in _OPS:
        return f"({_operand(a.args[0])} {_OPS[a.fn]} {_operand(a.args[1])})"
    if a.fn in _COMPARISONS:
        return f"({_operand(a.args[0])} {_COMPARISONS[a.fn]} {_operand(a.args[1])})"
    return f"{a.fn}({', '.join(to_str(x) for x in a.args)})"


def _operand(d: Dim) -> str:
    """`d` as an operand of a binary operator: a sum or a scaled term in parentheses."""
    text = to_str(d)
    simple = isinstance(d, int) and d >= 0 or isinstance(d, SymExpr) and d.const == 0 and len(d.terms) == 1 \
        and d.terms[0][1] == 1
    return text if simple else f"({text})"


def to_str(d: Dim) -> str:
    if isinstance(d, int):
        return str(d)
    parts: list[str] = []
    for atom, c in d.terms:
        s = to_str_atom(atom)
        if c == 1:
            term = s
        elif c == -1:
            term = f"-{s}"
        else:
            term = f"{c}*{s}"
        parts.append(term)
    if d.const:
        parts.append(str(d.const))
    out = parts[0]
    for p in parts[1:]:
        out += f" - {p[1:]}" if p.startswith("-") else f" + {p}"
    return out


def from_ast(node: ast.expr) -> Dim:
    """Parse a dim written by `to_str` (a Python expression) back into a `Dim`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return sym(node.id)
    if isinstance(node, ast.Attribute):
        return sym(_dotted(node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return neg(from_ast(node.operand))
    if isinstance(node, ast.BinOp):
        a, b = from_ast(node.left), from_ast(node.right)
        ops = {ast.Add: add, ast.Sub: sub, ast.Mult: mul, ast.FloorDiv: floordiv, ast.Mod: mod}
        fn = ops.get(type(node.op))
        if fn is not None:
            return fn(a, b)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        a, b = from_ast(node.left), from_ast(node.comparators[0])
        cmp = {ast.Lt: lt, ast.LtE: le, ast.Eq: eq, ast.NotEq: ne}.get(type(node.ops[0]))
        if cmp is not None:
            return cmp(a, b)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return SymExpr(0, ((Read(node.value.id, tuple(from_ast(x) for x in idx)), 1),))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        a, b = (from_ast(x) for x in node.args)
        return minimum(a, b) if node.func.id == "min" else maximum(a, b)
    raise ValueError(f"not a symbolic dim: {ast.unparse(node)}")


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise ValueError(ast.unparse(node))


def parse(text: str) -> Dim:
    return from_ast(ast.parse(text, mode="eval").body)
