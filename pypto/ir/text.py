"""The readable text form of a graph, and its parser (`parse(to_text(g)) == g`).

Every line is valid Python syntax, so the parser is `ast` plus a small decoder:

    kernel softmax_kernel:
      tile0 = vec(1, 4, 1, 64)  # k.py:6:4-6:42 in softmax_kernel
      %0: fp32[x.d0, 32, 1, 256] = param(name='x', index=0, _name='x')  # k.py:3:0 in softmax_kernel
      %10: none = loop(%1, start=0, stop=x.d0, step=1, index='i', name='LOOP_b')  # k.py:8:13-8:60
        %9: fp32[out.d0, 32, 1, 256] = carry(index=0, _name='out')  # k.py:8:13-8:60
        %2: fp32[1, 32, 1, 256] = view(%0, shape=[1, 32, 1, 256], offsets=[i, 0, 0, 0], _tile=0)  # ...
        yield {'out': %8}
      %11: fp32[out.d0, 32, 1, 256] = loop_out(%10, index=0, _name='out')  # k.py:8:13-8:60
      return {'out': %11}

`%N` are node ids; the comment is the source location with its callsite chain (`<`).
Node metadata that is not an op attribute is written as `_name`, `_label`, `_tile`, the `pl.at`
scope as `_scope`, and the provenance a pass gives the nodes it makes as `_from` (source node ids)
and `_pass`.
"""

from __future__ import annotations

import ast
import enum
import io
import math
import re
import tokenize
from typing import Any

from pypto.ir import enums
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType, from_short
from pypto.ir.graph import Graph, Node, TensorType, TileConfig
from pypto.ir.source import Loc, Span

INDENT = "  "


# ---- printing -----------------------------------------------------------------------------------

def fmt_value(v: Any) -> str:
    if type(v) is tuple:  # first: a tile op's coordinates and tile shapes (10^5 of them), often plain ints
        if all(type(x) is int for x in v):
            return "[" + ", ".join(map(str, v)) + "]"
        return "[" + ", ".join(map(fmt_value, v)) + "]"
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, DataType):
        return v.name
    if isinstance(v, enum.IntEnum):
        return f"{type(v).__name__}.{v.name}"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, S.SymExpr):
        return S.to_str(v)
    if isinstance(v, tuple):
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    raise TypeError(f"attribute value {v!r} has no text form")


def fmt_type(t: TensorType | None) -> str:
    if t is None:
        return "none"
    if not t.shape:
        return f"{t.dtype.short}[()]"
    return f"{t.dtype.short}[{', '.join(S.to_str(d) for d in t.shape)}]"


def _fmt_span(s: Span) -> str:
    end = f"-{s.end_line}:{s.end_col}" if s.end_line else ""
    func = f" in {s.func}" if s.func else ""
    return f"{s.file}:{s.line}:{s.col}{end}{func}"


def fmt_loc(loc: Loc) -> str:
    return " < ".join(_fmt_span(s) for s in loc.frames)


def _fmt_outputs(outputs: tuple[tuple[str, int], ...]) -> str:
    return "{" + ", ".join(f"{name!r}: %{v}" for name, v in outputs) + "}"


def node_line(n: Node) -> str:
    args = [f"%{i}" for i in n.inputs]
    args += [f"{k}={fmt_value(v)}" for k, v in n.attrs.items()]
    if n.name is not None:
        args.append(f"_name={n.name!r}")
    if n.label is not None:
        args.append(f"_label={n.label!r}")
    if n.tile is not None:
        args.append(f"_tile={n.tile}")
    if n.origin:
        args.append(f"_from={fmt_value(n.origin)}")
    if n.made_by is not None:
        args.append(f"_pass={n.made_by!r}")
    if n.scope is not None:
        args.append(f"_scope={n.scope}")
    comment = f"  # {fmt_loc(n.loc)}" if n.loc.frames else ""
    return f"%{n.id}: {fmt_type(n.type)} = {n.op}({', '.join(args)}){comment}"


def _lines(g: Graph, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for n in g.nodes:
        out.append(pad + node_line(n))
        if n.body is not None:
            _lines(n.body, depth + 1, out)
            out.append(pad + INDENT + "yield " + _fmt_outputs(n.body.outputs))


def to_text(g: Graph) -> str:
    out = [f"kernel {g.name}:"]
    for tc in g.tile_configs:
        if tc.kind == "vec":
            args = ", ".join(str(d) for d in tc.dims)
        else:
            m, k, n, split = tc.dims
            args = f"{fmt_value(m)}, {fmt_value(k)}, {fmt_value(n)}, {split}"
        comment = f"  # {fmt_loc(tc.loc)}" if tc.loc.frames else ""
        out.append(f"{INDENT}tile{tc.id} = {tc.kind}({args}){comment}")
    _lines(g, 1, out)
    out.append(INDENT + "return " + _fmt_outputs(g.outputs))
    return "\n".join(out) + "\n"


# ---- parsing ------------------------------------------------------------------------------------

class TextError(ValueError):
    def __init__(self, lineno: int, msg: str) -> None:
        super().__init__(f"graph text line {lineno}: {msg}")


_VAR = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|%(\d+)""")
_SPAN = re.compile(r"^(.*):(\d+):(\d+)(?:-(\d+):(\d+))?(?: in (\S+))?$")


def _split_comment(line: str) -> tuple[str, str]:
    """Code and comment of one line (a '#' inside a string literal is not a comment)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return line[: tok.start[1]].rstrip(), tok.string[1:].strip()
    except (tokenize.TokenError, IndentationError):
        pass
    return line.rstrip(), ""


def parse_loc(text: str) -> Loc:
    if not text:
        return Loc()
    frames = []
    for part in text.split(" < "):
        m = _SPAN.match(part)
        if not m:
            raise ValueError(f"bad location {part!r}")
        file, line, col, eline, ecol, func = m.groups()
        frames.append(Span(file, int(line), int(col), int(eline or 0), int(ecol or 0), func or ""))
    return Loc(tuple(frames))


def decode(node: ast.expr) -> Any:
    """An attribute value from its text."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return tuple(decode(e) for e in node.elts)
    if isinstance(node, ast.Name):
        if node.id in ("inf", "nan"):
            return float(node.id)
        if node.id.startswith("DT_") and node.id in DataType.__members__:
            return DataType[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in enums.ALL:
        return enums.ALL[node.value.id][node.attr]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = decode(node.operand)
        if isinstance(inner, (int, float)):
            return -inner
    return S.from_ast(node)


def _decode_type(node: ast.expr) -> TensorType | None:
    if isinstance(node, ast.Name) and node.id == "none":
        return None
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        raise ValueError(f"bad type {ast.unparse(node)}")
    dt = from_short(node.value.id)
    sl = node.slice
    elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return TensorType(tuple(S.from_ast(e) for e in elts), dt)


def _var_id(node: ast.expr) -> int:
    if isinstance(node, ast.Name) and node.id.startswith("_v"):
        return int(node.id[2:])
    raise ValueError(f"expected a %id, got {ast.unparse(node)}")


def _outputs(node: ast.expr) -> tuple[tuple[str, int], ...]:
    if not isinstance(node, ast.Dict):
        raise ValueError("outputs must be a {name: %id} dict")
    return tuple((decode(k), _var_id(v)) for k, v in zip(node.keys, node.values))  # type: ignore[arg-type]


def _stmt(code: str) -> ast.stmt:
    src = _VAR.sub(lambda m: m.group(1) or f"_v{m.group(2)}", code.strip())
    return ast.parse(src).body[0]


def parse(text: str) -> Graph:
    lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines or not lines[0][1].startswith("kernel ") or not lines[0][1].rstrip().endswith(":"):
        raise TextError(1, "expected 'kernel NAME:'")
    name = lines[0][1][len("kernel "):].rstrip()[:-1]
    pos = 1
    tiles: list[TileConfig] = []

    def parse_block(depth: int, block_name: str) -> tuple[tuple[Node, ...], tuple[tuple[str, int], ...]]:
        nonlocal pos
        nodes: list[Node] = []
        pad = INDENT * depth
        while pos < len(lines):
            lineno, raw = lines[pos]
            if not raw.startswith(pad) or raw[len(pad)] == " ":
                raise TextError(lineno, f"expected indentation of {len(pad)} spaces")
            code, comment = _split_comment(raw)
            try:
                stmt = _stmt(code)
            except SyntaxError as e:
                raise TextError(lineno, f"syntax: {e.msg}") from None
            pos += 1
            try:
                if isinstance(stmt, ast.Return) and depth == 1:
                    assert stmt.value is not None
                    return tuple(nodes), _outputs(stmt.value)
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield) and depth > 1:
                    assert stmt.value.value is not None
                    return tuple(nodes), _outputs(stmt.value.value)
                if isinstance(stmt, ast.Assign) and depth == 1:
                    tiles.append(_tile(stmt, parse_loc(comment)))
                    continue
                if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.value, ast.Call):
                    raise ValueError("expected '%N: type = op(...)'")
                nodes.append(_node(stmt, parse_loc(comment), lambda n: parse_block(depth + 1, n)))
            except (ValueError, KeyError, AssertionError) as e:
                raise TextError(lineno, str(e)) from None
        raise TextError(lines[-1][0], f"block of {block_name} has no end ('return' / 'yield')")

    nodes, outputs = parse_block(1, name)
    return Graph(name, nodes, outputs, tuple(tiles))


def _tile(stmt: ast.Assign, loc: Loc) -> TileConfig:
    target = stmt.targets[0]
    call = stmt.value
    if not (isinstance(target, ast.Name) and target.id.startswith("tile") and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)):
        raise ValueError("expected 'tileN = vec(...)' or 'tileN = cube(...)'")
    vals = tuple(decode(a) for a in call.args)
    return TileConfig(int(target.id[4:]), call.func.id, vals, loc)


def _node(stmt: ast.AnnAssign, loc: Loc, parse_body: Any) -> Node:
    call = stmt.value
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    nid = _var_id(stmt.target)
    typ = _decode_type(stmt.annotation)
    inputs = tuple(_var_id(a) for a in call.args)
    attrs: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for kw in call.keywords:
        assert kw.arg is not None
        (meta if kw.arg.startswith("_") else attrs)[kw.arg] = decode(kw.value)
    op = call.func.id
    body = None
    if op == "loop":
        nodes, outputs = parse_body(attrs.get("name", "loop"))
        body = Graph(attrs.get("name", "loop"), nodes, outputs)
    return Node(nid, op, inputs, typ, attrs, loc, meta.get("_name"), meta.get("_label"), meta.get("_tile"), body,
                tuple(meta.get("_from", ())), meta.get("_pass"), meta.get("_scope"))
