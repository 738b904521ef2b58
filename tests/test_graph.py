"""The tensor graph: source spans with callsite chains, loops, and the text form round trip."""

import dataclasses
import pathlib

import pytest
import torch

import pypto
from pypto.cli import load_module
from pypto.frontend.jit import JitKernel
from pypto.ir import symbolic as S
from pypto.ir import text
from pypto.ir.graph import Graph, Node, TensorType
from pypto.ir.source import Loc, Span

HERE = pathlib.Path(__file__).resolve()
EXAMPLES = HERE.parent.parent / "examples"


def _line_of(marker: str) -> int:
    for i, line in enumerate(HERE.read_text().splitlines(), 1):
        if line.rstrip().endswith(marker):
            return i
    raise AssertionError(marker)


def scaled_exp(t, k):
    return pypto.exp(t) * k  # MARK: helper-line


@pypto.jit
def uses_helper(x: pypto.Tensor(), out: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = scaled_exp(x, 2.0)  # MARK: call-line


ARGS = {"uses_helper": lambda: (torch.randn(8, 16), torch.empty(8, 16)),
        "nested": lambda: (torch.randn(3, 8, 32), torch.empty(3, 8, 32))}


def _graph(kernel: JitKernel) -> Graph:
    """The kernel's graph, compiled here if this test process has not run it yet."""
    if not kernel.cache and kernel.name in ARGS:
        kernel.compile(*ARGS[kernel.name]())
    return next(iter(kernel.cache.values())).graph


def test_nodes_made_in_a_helper_carry_the_callsite_chain():
    x = torch.randn(8, 16)
    out = torch.empty_like(x)
    uses_helper(x, out)
    torch.testing.assert_close(out, torch.exp(x) * 2)
    g = _graph(uses_helper)
    exp = next(n for n in g.nodes if n.op == "exp")
    assert [f.line for f in exp.loc.frames] == [_line_of("# MARK: helper-line"), _line_of("# MARK: call-line")]
    assert exp.loc.frames[0].func == "scaled_exp" and exp.loc.frames[1].func == "uses_helper"
    assert all(f.file == str(HERE) for f in exp.loc.frames)
    # the span covers exactly the call expression
    src = HERE.read_text().splitlines()[exp.loc.span.line - 1]
    assert src[exp.loc.span.col:exp.loc.span.end_col] == "pypto.exp(t)"
    # the IDE's lookup: every line of the file in the chain
    assert exp.loc.lines_in(str(HERE)) == {_line_of("# MARK: helper-line"), _line_of("# MARK: call-line")}


@pypto.jit
def nested(x: pypto.Tensor([pypto.DYNAMIC, 8, 32], pypto.DT_FP32),
           out: pypto.Tensor([pypto.DYNAMIC, 8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 4, 32)
    for b in pypto.loop(x.shape[0], name="LOOP_b", idx_name="b"):
        for h in pypto.loop(0, 8, 4, name="LOOP_h", idx_name="h"):
            t = x[b:b + 1, h:h + 4, :]
            out[b:b + 1, h:h + 4, :] = t * 2.0 + 1.0
        row = out[b:b + 1, :, :]
        out[b:b + 1, :, :] = row - 1.0


def test_nested_loops_carry_the_written_tensor():
    x = torch.randn(3, 8, 32)
    out = torch.empty_like(x)
    nested(x, out)
    torch.testing.assert_close(out, x * 2.0)
    g = _graph(nested)
    (outer,) = [n for n in g.nodes if n.op == "loop"]
    assert outer.attrs["index"] == "b" and outer.attrs["stop"] == S.sym("x.d0")
    assert outer.inputs == (g.params()[1].id,)
    inner = next(n for n in outer.body.nodes if n.op == "loop")
    carry = next(n for n in outer.body.nodes if n.op == "carry")
    assert inner.inputs == (carry.id,)  # the inner loop starts from the outer iteration's value
    assert [name for name, _ in inner.body.outputs] == ["out"]
    assert [name for name, _ in g.outputs] == ["out"]


def test_loop_index_names_are_unique_per_kernel():
    @pypto.jit
    def k(x: pypto.Tensor([4, 32], pypto.DT_FP32), out: pypto.Tensor([4, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32)
        for i in pypto.loop(4):
            out[i:i + 1, :] = x[i:i + 1, :] + 1.0
        for i in pypto.loop(4):
            out[i:i + 1, :] = out[i:i + 1, :] * 3.0

    x = torch.randn(4, 32)
    out = torch.empty_like(x)
    k(x, out)
    torch.testing.assert_close(out, (x + 1) * 3)
    loops = [n for n in _graph(k).nodes if n.op == "loop"]
    assert [n.attrs["index"] for n in loops] == ["i", "i_1"]


def _all_kernels() -> list[tuple[str, Graph]]:
    found = []
    for path in sorted(EXAMPLES.glob("*.py")):
        mod = load_module(path)
        mod.check()
        for name in sorted(vars(mod)):
            k = getattr(mod, name)
            if isinstance(k, JitKernel):
                found += [(f"{path.stem}.{name}", ck.graph) for ck in k.cache.values()]
    found += [(k.name, _graph(k)) for k in (uses_helper, nested)]
    return found


def test_text_round_trips_for_every_example_kernel():
    kernels = _all_kernels()
    assert len(kernels) >= 10
    for name, g in kernels:
        t = text.to_text(g)
        back = text.parse(t)
        assert back == g, name
        assert text.to_text(back) == t, name


def test_text_round_trips_every_attribute_kind():
    loc = Loc((Span("/a b/k #1.py", 3, 4, 3, 9, "f"), Span("/c.py", 10, 0, 0, 0, "")))
    i = S.sym("i")
    attrs = {
        "int": -3, "float": 2.5e-7, "inf": float("-inf"), "bool": True, "none": None, "str": "a 'q' # not a comment",
        "dtype": pypto.DT_BF16, "enum": pypto.CastMode.CAST_ODD, "sym": S.add(S.floordiv(S.sym("x.d0"), 4), i),
        "nested": (1, (2, i), ()), "minmax": S.minimum(i, S.sym("n")),
    }
    node = Node(7, "custom", (1, 2), TensorType((S.sym("x.d0"), 1), pypto.DT_INT8), attrs, loc, "t", "lbl %3", 0)
    p = Node(1, "param", (), TensorType((4,), pypto.DT_FP32), {"name": "a", "index": 0}, Loc(), "a")
    p2 = Node(2, "param", (), TensorType((), pypto.DT_BOOL), {"name": "b", "index": 1}, Loc(), "b")
    g = Graph("k", (p, p2, node), (("t", 7),))
    back = text.parse(text.to_text(g))
    assert back == g
    nan = dataclasses.replace(node, attrs={"v": float("nan")})
    parsed = text.parse(text.to_text(Graph("k", (nan,), ())))
    assert parsed.nodes[0].attrs["v"] != parsed.nodes[0].attrs["v"]  # still a NaN


def test_text_parse_errors_name_the_line():
    good = text.to_text(_graph(uses_helper)).splitlines()
    bad = "\n".join(good[:3] + ["  %99: fp32[8, 16] = exp(%1"] + good[3:])
    with pytest.raises(text.TextError, match="line 4"):
        text.parse(bad)
    with pytest.raises(text.TextError, match="no end"):
        text.parse("\n".join(good[:-1]))


def test_nodes_are_immutable():
    g = _graph(uses_helper)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.nodes[0].op = "other"  # type: ignore[misc]
