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
    long = 0
    for name, rec in records:
        p = rec.program
        if p.subgraphs is not None:
            same_document(S.subgraphs_columns, S.subgraphs_json, p.subgraphs, f"{name}.subgraphs")
            long += len(p.subgraphs) >= C.MIN_ROWS
        if p.execute is not None:
            same_json(S.execute_columns, S.execute_json, p.execute, f"{name}.execute")
    assert long  # some example has enough subgraphs to be columns


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
