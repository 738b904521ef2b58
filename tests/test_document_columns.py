"""The record document's typed column encoders (`pypto.compiler.serialize`) against the generic columnizer of the
fields' JSON (`pypto.ir.columns.columnize`): `subgraphs_columns` makes the very same spec and arrays (names and
dtypes included), for every example and for subgraphs of one core and of several, long and short;
`execute_columns` picks some specs of its own (its predecessors from the graph's CSR arrays), which decode to the
same JSON. (`tiles_columns`' attributes: tests/test_tile_attrs_columns.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from support import example_records

from pypto.compiler import serialize as S
from pypto.compiler.tile_ir import Subgraph
from pypto.ir import columns as C


def same_document(typed, plain, value, name: str) -> None:
    a, b = {}, {}
    assert typed(value, name, a) == C.columnize(plain(value), name, b)
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


def same_json(typed, plain, value, name: str) -> None:
    arrays: dict[str, np.ndarray] = {}
    assert C.expand(typed(value, name, arrays), arrays) == plain(value)


@pytest.fixture(scope="module")
def records():
    return example_records()


def test_every_examples_fields_encode_as_their_json_would(records):
    long = long_blocks = 0
    for name, rec in records:
        p = rec.program
        if p.blocks is not None:
            same_document(S.blocks_columns, S.blocks_json, p.blocks, f"{name}.blocks")
            long_blocks += any(len(b.instrs) >= C.MIN_ROWS for b in p.blocks)
        if p.subgraphs is not None:
            same_document(S.subgraphs_columns, S.subgraphs_json, p.subgraphs, f"{name}.subgraphs")
            long += len(p.subgraphs) >= C.MIN_ROWS
        if p.execute is not None:
            same_json(S.execute_columns, S.execute_json, p.execute, f"{name}.execute")
    assert long  # some example has enough subgraphs to be columns
    assert long_blocks  # and some has a block of enough instructions


def test_blocks_with_spills_and_of_many_leaves_encode_as_their_json_would():
    """A block that spills (operands in the GM spill area, reloads), one of double-buffered loads (halves), and as many
    blocks as make the block list itself columns (then `blocks_columns` is `columnize` of their JSON)."""
    from test_block import _softmax

    from pypto.compiler.block import build_blocks
    from pypto.target import load as load_board

    p = _softmax()
    board = load_board("a2a3")
    for ub in (2 * 16 * 64 * 4 + 1024, board["buffers_bytes"]["UB"]):
        blocks, _ = build_blocks(p, {**board, "buffers_bytes": {**board["buffers_bytes"], "UB": ub}})
        assert all(len(b.instrs) >= C.MIN_ROWS for b in blocks)
        same_document(S.blocks_columns, S.blocks_json, blocks, "b")
        same_json(S.blocks_columns, S.blocks_json, blocks, "b")
    assert any(b.spills for b in build_blocks(p, {**board, "buffers_bytes": {**board["buffers_bytes"],
                                                                              "UB": 2 * 16 * 64 * 4 + 1024}})[0])
    same_document(S.blocks_columns, S.blocks_json, blocks * C.MIN_ROWS, "many")


@pytest.mark.parametrize("n", [3, C.MIN_ROWS, 500])
@pytest.mark.parametrize("cores", [("AIV",), ("AIV", "AIC", "MIX")])
def test_subgraphs_of_one_core_or_several_encode_as_their_json_would(n, cores):
    sgs = tuple(Subgraph(i, cores[i % len(cores)], i // 7, tuple(range(i, i + 1 + i % 3)), 1024 * (i % 5), i % 4)
                for i in range(n))
    same_document(S.subgraphs_columns, S.subgraphs_json, sgs, "s")


def test_predecessors_many_tasks_share_are_a_pick_that_decodes_to_the_same_json():
    """Kimi's block attention after a tile edit: 32 k matmul tasks each wait on one of 128 lists of ~256 tasks (the
    writers of the buffer they read): `execute_columns` stores each list once (`shared_lists`), the same JSON."""
    from pypto.compiler.execute import exec_columns
    from pypto.compiler.execute_ir import ExecGraph, Task
    from pypto.compiler.tile_ir import Region

    writers = 100
    groups = [tuple(range(g * 10, writers)) for g in range(3)]  # shared tuples, as the execute stage shares them
    preds = [()] * writers + [groups[i % 3] for i in range(300)]
    n = len(preds)
    region = (Region(0, (16, 16), (0, 0), (16, 16)),)
    tasks = tuple(Task(i, i, 0, "AIV", 0, -1, (i,), region, region, preds[i]) for i in range(n))
    cols = exec_columns([0] * n, ["AIV"] * n, [0] * n, [(i,) for i in range(n)], preds, [region] * n, [region] * n)
    graph = ExecGraph(tasks, (-1,), cols)
    arrays: dict[str, np.ndarray] = {}
    doc = S.execute_columns(graph, "e", arrays)
    assert "pick" in doc["tasks"][C.MARK]["dict"]["preds"]
    assert C.expand(doc, arrays) == S.execute_json(graph)
    held = C.expand(doc, arrays, lazy=True)
    assert isinstance(held["tasks"], list) and [t["preds"] for t in held["tasks"]] == [list(p) for p in preds]


@pytest.mark.parametrize("one_gm", [False, True])
@pytest.mark.parametrize("arity", [0, 1, 2])
def test_instructions_of_one_arity_encode_as_their_json_would(arity, one_gm):
    """Every instruction with as many operands (lists of one width: `{"list", "width"}`), none (empty lists), or
    a few with other counts; flags set on some; with `one_gm`, one operand alone has a GM window, of one element
    (a column of a single int, which `columns.encode` stores as `int`, not `const`)."""
    from pypto.compiler.block_ir import Block, Instr, Operand
    from pypto.ir.dtypes import DataType

    def operand(k: int) -> Operand:
        if one_gm:
            return Operand("UB", "ub", 32 * k, 64, (4, 4), DataType.DT_FP32, -1, -1, (64,) if k == 3 else (),
                           (5,) if k == 3 else ())
        return Operand("UB" if k % 3 else "GM", f"ub{k % 5}", 32 * k, 64, (4, 4), list(DataType)[k % 3], k % 2 - 1,
                       k % 4 - 1, (8, 8) if k % 3 == 0 else (), (k % 2, 0) if k % 3 == 0 else ())

    for odd in (False, True):
        instrs = tuple(Instr("TADD", "V", k, tuple(operand(k + j) for j in range(arity + (odd and k == 7))),
                             tuple(operand(2 * k + j) for j in range(arity)),
                             ("V", "MTE3", k % 8) if k % 5 == 0 else None, k % 2 == 0, "note" if k % 9 else "")
                       for k in range(C.MIN_ROWS + 5))
        block = Block(0, "AIV", 3, 0, instrs, (), (("UB", 1024),), (("UB", 196608),), False, 0)
        same_document(S.blocks_columns, S.blocks_json, (block, block), "b")
        same_json(S.blocks_columns, S.blocks_json, (block,), "b")
