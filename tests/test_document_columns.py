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
