"""Tensor-stage passes: each a pure `Program -> Program` that keeps the kernel's values.

verify re-derives every type; decompose turns composites (softmax, rms_norm, var) into
the primitives the tiler lowers; autocast makes explicit the fp32 computation the vector
unit does for bf16 (and fp16 transcendentals and reductions); dce, cse and simplify
remove work. Each is checked by running the reference interpreter before and after it.
"""

from __future__ import annotations

import dataclasses

from pypto.compiler.manager import PassContext, Program
from pypto.compiler.rewrite import INFER, Emitter, rewrite
from pypto.ir import symbolic as S
from pypto.ir.dtypes import DataType
from pypto.ir.enums import RunMode
from pypto.ir.errors import ShapeError
from pypto.ir.graph import Graph, Node
from pypto.ir.ops import OPS
from pypto.tracing.options import freeze

F32 = DataType.DT_FP32


class VerifyError(Exception):
    """The graph broke an invariant: a pass (or the frontend) has a bug."""


# ---- verify -------------------------------------------------------------------------------------

def verify(p: Program, ctx: PassContext) -> Program:
    """Ids unique, inputs defined before use (in scope), every type re-inferred equal."""
    seen: set[int] = set()

    def block(g: Graph, visible: set[int]) -> None:
        local = set(visible)
        for n in g.nodes:
            if n.id in seen:
                raise VerifyError(f"node %{n.id} ({n.op}) is defined twice")
            seen.add(n.id)
            for v in n.inputs:
                if v not in local:
                    raise VerifyError(f"node %{n.id} ({n.op}) uses %{v} before it is defined or outside its scope")
            if n.body is not None:
                block(n.body, local)
            if OPS[n.op].kind != "control":
                types = [by_id[v].type for v in n.inputs]
                try:
                    ty = OPS[n.op].infer(INFER, types, n.attrs)  # type: ignore[arg-type]
                except ShapeError as e:
                    raise VerifyError(f"node %{n.id} ({n.op}): {e}") from None
                if ty != n.type:
                    raise VerifyError(f"node %{n.id} ({n.op}) is typed {n.type} but its inputs give {ty}")
            local.add(n.id)
        for _, v in g.outputs:
            if v not in local:
                raise VerifyError(f"output %{v} of {g.name} is not defined in it")

    by_id = p.graph.by_id()
    block(p.graph, set())
    _note_run_mode(ctx)
    return p


RUN_MODE_NPU_RULE = "run_mode.npu"


def _note_run_mode(ctx: PassContext) -> None:
    """A kernel whose options ask for `run_mode: NPU` reaches the pipeline only in the tools (a plain run
    is refused: no NPU is present), which compile and simulate it: the record says so, once."""
    mode = ctx.options.get("runtime_options", {}).get("run_mode")
    if mode is None or RunMode(mode) is not RunMode.NPU or any(d.rule == RUN_MODE_NPU_RULE for d in ctx.diagnostics):
        return
    ctx.report("info", "run_mode NPU: no NPU runs this kernel here; the tools compile it and simulate it on the "
               "sim board (its values come from the CPU)", rule=RUN_MODE_NPU_RULE)


# ---- decompose ----------------------------------------------------------------------------------

def _to(em: Emitter, v: int, dt: DataType, like: Node) -> int:
    return v if em.type_of(v).dtype is dt else em("cast", [v], {"dtype": dt, "mode": 0, "satmode": 0}, like)


def _numel(em: Emitter, v: int, dims: tuple[int, ...]) -> S.Dim:
    n: S.Dim = 1
    for d in dims:
        n = S.mul(n, em.type_of(v).shape[d])
    return n


def _decompose(n: Node, em: Emitter) -> int | None:
    if n.type is None:
        return None
    out_dt = n.type.dtype
    if n.op == "softmax":
        d = n.attrs["dim"]
        x = _to(em, n.inputs[0], F32, n)
        m = em("amax", [x], {"dim": d, "keepdim": True}, n)
        e = em("exp", [em("sub", [x, m], {}, n)], {}, n)
        s = em("sum", [e], {"dim": d, "keepdim": True}, n)
        return _to(em, em("div", [e, s], {}, n), out_dt, n)
    if n.op == "rms_norm":
        x = _to(em, n.inputs[0], F32, n)
        last = em.type_of(x).rank - 1
        ms = em("sum", [em("mul", [x, x], {}, n)], {"dim": last, "keepdim": True}, n)
        ms = em("div", [ms], {"scalar": _numel(em, x, (last,)), "reverse": False}, n)
        ms = em("add", [ms], {"scalar": float(n.attrs.get("epsilon", 1e-6)), "reverse": False}, n)
        y = em("div", [x, em("sqrt", [ms], {}, n)], {}, n)
        if len(n.inputs) == 2:  # gamma [C] as [1, ..., 1, C] first (PyPTO's RmsNorm): cut by the tile as x's rows are
            g = n.inputs[1]
            if last > 0:
                g = em("reshape", [g], {"shape": (1,) * last + tuple(em.type_of(g).shape)}, n)
            y = em("mul", [y, _to(em, g, F32, n)], {}, n)
        return _to(em, y, out_dt, n)
    if n.op == "var":
        x = _to(em, n.inputs[0], F32, n)
        rank = em.type_of(x).rank
        dims = tuple(range(rank)) if n.attrs.get("dim") is None else tuple(n.attrs["dim"])
        count = _numel(em, x, dims)
        mean = x
        for d in dims:
            mean = em("sum", [mean], {"dim": d, "keepdim": True}, n)
        mean = em("div", [mean], {"scalar": count, "reverse": False}, n)
        dev = em("sub", [x, mean], {}, n)
        sq = em("mul", [dev, dev], {}, n)
        for d in dims:
            sq = em("sum", [sq], {"dim": d, "keepdim": True}, n)
        y = em("div", [sq], {"scalar": S.sub(count, n.attrs.get("correction", 1)), "reverse": False}, n)
        if not n.attrs.get("keepdim", False):
            y = em("reshape", [y], {"shape": n.type.shape}, n)
        return _to(em, y, out_dt, n)
    return None


def decompose(p: Program, ctx: PassContext) -> Program:
    """Composites become primitives, computed in fp32 and rounded once, as the op itself is."""
    g, next_id = rewrite(p.graph, _decompose, "decompose", p.next_id)
    return p if g is p.graph else dataclasses.replace(p, graph=g, next_id=next_id)


# ---- autocast -----------------------------------------------------------------------------------

FP32_FOR_FP16 = frozenset({"exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
                           "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "erfc", "div",
                           "pow", "sum", "prod"})
_SKIP = frozenset({"cast", "where"})
_FP32_ALWAYS = frozenset({DataType.DT_BF16, DataType.DT_FP8E4M3, DataType.DT_FP8E5M2})  # every vector op in fp32


def _needs_fp32(n: Node, em: Emitter) -> bool:
    if not OPS[n.op].vector or n.op in _SKIP or OPS[n.op].kind not in ("unary", "binary", "reduce"):
        return False
    dts = {em.type_of(v).dtype for v in n.inputs}
    assert n.type is not None
    if n.type.dtype is DataType.DT_BOOL and dts <= _FP32_ALWAYS:
        return True  # comparisons on bf16 (or fp8)
    if dts & _FP32_ALWAYS or n.type.dtype in _FP32_ALWAYS:
        return True
    return n.op in FP32_FOR_FP16 and (DataType.DT_FP16 in dts or n.type.dtype is DataType.DT_FP16)


def _autocast(n: Node, em: Emitter) -> int | None:
    if not _needs_fp32(n, em):
        return None
    assert n.type is not None
    ins = [_to(em, v, F32, n) if em.type_of(v).dtype.is_float else v for v in n.inputs]
    out = em(n.op, ins, dict(n.attrs), n)
    return _to(em, out, n.type.dtype, n)


def autocast(p: Program, ctx: PassContext) -> Program:
    """bf16 and fp8 vector ops (and fp16 transcendentals, div, pow and reductions) compute in fp32:
    cast in, compute, cast back — the rounding the reference semantics already describe."""
    g, next_id = rewrite(p.graph, _autocast, "autocast", p.next_id)
    return p if g is p.graph else dataclasses.replace(p, graph=g, next_id=next_id)


# ---- simplify, cse, dce -------------------------------------------------------------------------

def _simplify(n: Node, em: Emitter) -> int | None:
    if n.op not in ("view", "reshape", "expand_clone", "cast", "transpose") or n.type is None:
        return None
    src = em.type_of(n.inputs[0])
    if n.op == "view" and n.type == src and all(o == 0 for o in n.attrs["offsets"]) \
            and n.attrs.get("valid_shape") is None and n.attrs.get("dtype") is None:
        return n.inputs[0]
    if n.op in ("reshape", "expand_clone") and n.type.shape == src.shape:
        return n.inputs[0]
    if n.op == "cast" and n.type.dtype is src.dtype:
        return n.inputs[0]
    if n.op == "transpose" and n.attrs["perm"] == tuple(range(src.rank)):
        return n.inputs[0]
    return None


def simplify(p: Program, ctx: PassContext) -> Program:
    """Views of a whole tensor, reshapes to the same shape, casts to the same dtype and
    identity permutations are the tensor itself."""
    g, next_id = rewrite(p.graph, _simplify, "simplify", p.next_id)
    return p if g is p.graph else dataclasses.replace(p, graph=g, next_id=next_id)


_NO_CSE = frozenset({"param", "loop", "carry", "loop_out", "assume", "tensor"})


def _cse(n: Node, em: Emitter) -> int | None:
    if n.op in _NO_CSE:
        return None
    key = (n.op, n.inputs, n.type, freeze(n.attrs), n.tile, n.label, n.scope)
    found = em.lookup(key)
    if found is not None:
        return found
    em.scopes[-1][key] = n.id
    return None


def cse(p: Program, ctx: PassContext) -> Program:
    """Identical computations (same op, inputs, attributes, tile shape and label) are done once."""
    g, next_id = rewrite(p.graph, _cse, "cse", p.next_id)
    return p if g is p.graph else dataclasses.replace(p, graph=g, next_id=next_id)


def _dce_block(g: Graph) -> Graph:
    live = {v for _, v in g.outputs}
    keep: list[Node] = []
    changed = False
    for n in reversed(g.nodes):
        body = n.body
        if body is not None:
            body = _dce_block(body)
        is_root = n.op in ("param", "assume", "loop", "carry")
        if is_root or n.id in live:
            live.update(n.inputs)
            if body is not None:
                live.update(_captured(body))
            node = n if body is n.body else dataclasses.replace(n, body=body)
            changed |= node is not n
            keep.append(node)
        else:
            changed = True
    if not changed:
        return g
    return Graph(g.name, tuple(reversed(keep)), g.outputs, g.tile_configs)


def _captured(body: Graph) -> set[int]:
    defined = {n.id for n in body.walk()}
    used = {v for n in body.walk() for v in n.inputs} | {v for _, v in body.outputs}
    return used - defined


def dce(p: Program, ctx: PassContext) -> Program:
    """Values no output needs are not computed (parameters, loops and shape checks stay)."""
    g = _dce_block(p.graph)
    return p if g is p.graph else dataclasses.replace(p, graph=g, next_id=max(p.next_id, p.graph.max_id() + 1))
