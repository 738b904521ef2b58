"""A block whose program order holds too much at once is allocated in depth-first order from its outputs
(`pypto.compiler.block_order`), as PyPTO's block scheduler orders it: GLM's MoE fusion dequantized two
[4, 5120] fp32 tiles before casting either, 200 KiB in a 192 KiB UB."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
from support import lowered
from test_block import check_block

import pypto
from pypto.compiler import block as block_module
from pypto.compiler.block import build_block
from pypto.compiler.block_order import dfs_order, streamed_loads
from pypto.compiler.manager import Program
from pypto.compiler.tile_ir import Buffer, Leaf, Region, Subgraph, TileOp, ops_by_id
from pypto.target import load as load_board


@pypto.jit
def dequant_rows(x: pypto.Tensor([8, 5120], pypto.DT_FP32), s: pypto.Tensor([1, 5120], pypto.DT_FP32),
                 out: pypto.Tensor([8, 5120], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(4, 5120)
    out[:] = pypto.cast(x * s, pypto.DT_FP16)


def _both_rows_in_one_block() -> tuple[Program, Leaf, Subgraph, dict[int, TileOp]]:
    """Partition gives each row tile a task of its own; one block holding both (as partition groups the copies of
    a matmul's result in the MoE kernel), its ops in program order: both loads, both muls, both casts, both
    stores."""
    _, lw, _, _ = lowered(dequant_rows, np.ones((8, 5120), np.float32), np.ones((1, 5120), np.float32),
                          np.zeros((8, 5120), np.float16))
    p = lw.program
    assert p.subgraphs is not None and p.tiles is not None and len(p.subgraphs) == 2
    ops = ops_by_id(p.tiles)
    both = tuple(sorted(i for sg in p.subgraphs for i in sg.ops))
    first = p.subgraphs[0]
    sg = Subgraph(first.id, first.core, first.instance, both, first.peak_bytes, first.leaf)
    leaf = Leaf(0, "merged", "AIV", sg.id, 1, ())
    return p, leaf, sg, ops


def test_program_order_holds_both_products_at_once_and_the_depth_first_order_does_not():
    p, leaf, sg, ops = _both_rows_in_one_block()
    kinds = [ops[i].op for i in sg.ops]
    assert kinds.index("cast") > kinds.index("mul") + 1, kinds  # both products made before either cast
    order = dfs_order(sg.ops, ops)
    assert sorted(order) == sorted(sg.ops)
    # one output's chain, then the next: its loads just before its mul, its store right after its cast
    chains = [ops[i].op for i in order]
    assert chains == ["load", "load", "mul", "cast", "store"] * 2, chains
    first, second = order[:5], order[5:]
    assert {ops[first[-1]].region.offset, ops[second[-1]].region.offset} == {(0, 0), (4, 0)}  # type: ignore[union-attr]
    assert ops[first[2]].id in ops[first[3]].inputs and ops[second[2]].id in ops[second[3]].inputs

    board = load_board("a2a3")
    ub = int(board["buffers_bytes"]["UB"])
    block, notes = build_block(leaf, sg, ops, p.tiles.buffers, p.graph.by_id(), board)  # type: ignore[union-attr]
    assert block.spills == 0 and not notes
    assert block.peak("UB") <= ub < 2 * (4 * 5120 * 4) + 2 * 5120 * 4 + 4 * 5120 * 2  # program order's live bytes
    check_block(block, dataclasses.replace(p, subgraphs=(sg,)))  # each instruction reads the tiles it should
    # program order, allocated as it stands, spills: what the block stage did before
    low = block_module._Lowering(ops, p.tiles.buffers, 32, {"UB": ub})  # type: ignore[union-attr]
    for i in sg.ops:
        low.lower(ops[i])
    assert block_module.allocate(low, {"UB": ub}).spills > 0


def test_a_block_that_fits_keeps_its_program_order():
    _, lw, _, _ = lowered(dequant_rows, np.ones((8, 5120), np.float32), np.ones((1, 5120), np.float32),
                          np.zeros((8, 5120), np.float16))
    p = lw.program
    assert p.blocks is not None and p.tiles is not None and p.subgraphs is not None
    ops = ops_by_id(p.tiles)
    for b in p.blocks:
        sg = next(s for s in p.subgraphs if s.id == b.template)
        seen = [i.tile_op for i in b.instrs if i.flag is None]
        assert list(dict.fromkeys(seen)) == [o for o in sg.ops if ops[o].op != "bitcast"]


def _op(i: int, op: str, inputs: tuple[int, ...] = (), buffer: int | None = None, at: int = 0) -> TileOp:
    region = None if buffer is None else Region(buffer, (64, 8), (at, 0), (8, 8))
    return TileOp(i, op, 0, 0, (at // 8, 0), (8, 8), pypto.DT_FP32, inputs, region)


def test_gm_traffic_on_one_buffer_keeps_its_program_order():
    """A load of what a store of the block wrote stays after it, and a store over what a load read stays after
    the load, whatever the depth-first walk prefers; loads of other buffers move freely."""
    ops = {o.id: o for o in [
        _op(0, "load", buffer=1, at=0), _op(1, "exp", (0,)), _op(2, "store", (1,), buffer=2, at=0),
        _op(3, "load", buffer=2, at=0),  # reads what 2 wrote
        _op(4, "load", buffer=1, at=8), _op(5, "exp", (4,)), _op(6, "store", (5,), buffer=1, at=0),  # over 0's read
        _op(7, "add", (3, 5)), _op(8, "store", (7,), buffer=3, at=0),
    ]}
    order = dfs_order(list(ops), ops)
    pos = {o: k for k, o in enumerate(order)}
    assert sorted(order) == list(ops)
    for o in ops.values():
        assert all(pos[i] < pos[o.id] for i in o.inputs)
    assert pos[2] < pos[3] and pos[0] < pos[6]


def test_a_combine_of_many_loaded_parts_takes_them_one_at_a_time_where_they_would_spill():
    """A reduction across 64 tiles is one combine of 64 loaded parts (PyPTO's QAT per-tensor backward: 2,048):
    loaded first and added after, they do not fit a 4 KiB UB; each loaded right before its add, they do."""
    parts = 64
    src = Buffer(0, (8 * parts, 8), pypto.DT_FP32, "param", "partials", 0)
    dst = Buffer(1, (8, 8), pypto.DT_FP32, "output", "total", 0)
    loads = [TileOp(i, "load", 0, 0, (i, 0), (8, 8), pypto.DT_FP32, (), Region(0, src.shape, (8 * i, 0), (8, 8)))
             for i in range(parts)]
    combine = TileOp(parts, "combine", 0, 0, (0, 0), (8, 8), pypto.DT_FP32, tuple(range(parts)), None, {"fn": "add"})
    store = TileOp(parts + 1, "store", 0, 0, (0, 0), (8, 8), pypto.DT_FP32, (parts,), Region(1, dst.shape, (0, 0),
                                                                                            (8, 8)))
    every = [*loads, combine, store]
    ops = {o.id: o for o in every}
    sg = Subgraph(0, "AIV", 0, tuple(ops), 0, 0)
    assert streamed_loads(list(ops), ops) == frozenset(range(parts))
    board = load_board("a2a3")
    small = {**board, "buffers_bytes": {**board["buffers_bytes"], "UB": 4096}}
    block, notes = build_block(Leaf(0, "sum", "AIV", 0, 1, ()), sg, ops, [src, dst], {}, small)
    assert block.spills == 0 and not any(rule == "block.spill" for _, _, rule in notes)
    assert block.peak("UB") <= 4096
    seen = [(i.opcode, i.tile_op) for i in block.instrs if i.flag is None]
    # load, load, add; then load, add for each further part; then the store
    assert seen[:3] == [("TLOAD", 0), ("TLOAD", 1), ("TADD", parts)]
    assert seen[3:-1] == [x for i in range(2, parts) for x in (("TLOAD", i), ("TADD", parts))]
    assert seen[-1] == ("TSTORE", parts + 1)
    check_block(block, SimpleNamespace(tiles=SimpleNamespace(ops=every)))  # type: ignore[arg-type]


def test_a_load_whose_buffer_a_store_writes_before_its_combine_stays_where_it_is():
    a = _op(0, "load", buffer=3)
    b = _op(1, "load", buffer=1, at=8)
    d = _op(2, "load", buffer=2)
    over = _op(3, "store", (2,), buffer=1, at=8)  # writes where b read, before the combine
    c = TileOp(4, "combine", 0, 0, (0, 0), (8, 8), pypto.DT_FP32, (0, 1), None, {"fn": "add"})
    ops = {o.id: o for o in (a, b, d, over, c)}
    assert streamed_loads(list(ops), ops) == frozenset({0})
