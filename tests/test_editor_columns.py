"""The editor view (`server.index.editor_view`) reads the tile ops' fields from the record document's columns when a
job made the document first (`server.analyze`: the document, then the views, beside the findings): the view is the
one made from the ops themselves, for every example (among them tile graphs with copies, their ids out of program
order, and shapes of several ranks), and it falls back to the ops when the document holds them otherwise (fewer ops
than a column takes, a patched writer). Its tile columns give each op's inputs by position, as the panels number
the ops."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from support import example_records, timeless

from pypto.ir.columns import MIN_ROWS
from pypto.record import profile
from server.index import Ragged, _op_columns_from, _row_codes, _rows, _task_sets, editor_view


@pytest.mark.parametrize(("name", "record"), example_records(), ids=lambda x: x if isinstance(x, str) else "")
def test_the_editor_view_from_the_document_is_the_one_from_the_ops(name: str, record: object) -> None:
    record = profile(record, "sim", {}, None)  # type: ignore[arg-type]
    doc, arrays = record.to_document()
    ops = (doc.get("tiles") or {}).get("ops")
    if record.program.tiles is not None and len(record.program.tiles.ops) >= MIN_ROWS:  # the ops' lists as columns
        assert _op_columns_from(ops, arrays) is not None, "the view read the document's columns"
    from_document = editor_view(record, "k.py", {}, (doc, arrays))
    assert timeless(from_document) == timeless(editor_view(record, "k.py", {})), name


def test_a_document_without_columns_for_the_ops_gives_the_view_of_the_ops() -> None:
    name, record = next((n, r) for n, r in example_records() if r.program.tiles is not None)
    record = profile(record, "sim", {}, None)
    doc, arrays = record.to_document()
    doc["tiles"]["ops"] = {"id": [0]}  # a document a patched writer made: not columns
    assert timeless(editor_view(record, "k.py", {}, (doc, arrays))) == timeless(editor_view(record, "k.py", {}))


def test_row_codes_number_equal_rows_alike_whatever_their_length() -> None:
    rows = [(4, 8), (16,), (4, 8), (), (4, 8, 1), (16,), (8, 4)]
    codes, distinct = _row_codes(Ragged.of(rows))
    assert [distinct[c] for c in codes.tolist()] == rows
    assert len(distinct) == len(set(rows))
    empty_codes, none = _row_codes(Ragged(np.zeros(0, np.int64), np.zeros(1, np.int64)))
    assert len(empty_codes) == 0 and none == []


def _codes_by_bytes(rows: list[tuple[int, ...]]) -> tuple[list[int], list[tuple[int, ...]]]:
    """What `_row_codes` means, said the slow way: the distinct rows padded with -1 to the longest and their length
    beside, numbered as their little-endian int64 bytes sort."""
    width = max(map(len, rows))

    def key(r: tuple[int, ...]) -> bytes:
        return np.array([*r, *[-1] * (width - len(r)), len(r)], "<i8").tobytes()

    distinct = sorted(set(rows), key=key)
    return [distinct.index(r) for r in rows], distinct


@pytest.mark.parametrize("values", ["small", "far apart", "wide", "near the int64 ends"])
def test_row_codes_are_the_rows_bytes_order_whatever_their_values(values: str) -> None:
    """The integer keys `_row_codes` compares by tell every two rows apart exactly: small values, values whose
    ranges multiply past int64 (the keys renumbered densely on the way), rows of 30 values, and values near
    int64's ends (the byte-wise comparison)."""
    rng = random.Random(values)
    lo, hi, longest = {"small": (-3, 5, 4), "far apart": (-2**40, 2**40, 4), "wide": (0, 2, 30),
                       "near the int64 ends": (-2**63, 2**63 - 1, 3)}[values]
    pool = [tuple(rng.randint(lo, hi) for _ in range(rng.randint(0, longest))) for _ in range(40)]
    rows = [rng.choice(pool) for _ in range(500)]
    codes, distinct = _row_codes(Ragged.of(rows))
    assert (codes.tolist(), distinct) == _codes_by_bytes(rows)


def test_the_tile_columns_give_each_ops_inputs_by_position() -> None:
    """The panels number the tile ops by position (`server.panels`); where graph partition put copies, an op's id is
    not its position (the copies' ids come after the others'), and its inputs are given by position too."""
    shuffled = 0
    for _, record in example_records():
        tiles = record.program.tiles
        if tiles is None:
            continue
        ids = [o.id for o in tiles.ops]
        shuffled += ids != list(range(len(ids)))
        record = profile(record, "sim", {}, None)
        inputs = editor_view(record, "k.py", {}, record.to_document())["tiles"]["inputs"]
        assert [[ids[j] for j in inputs[i]] for i in range(len(ids))] == [list(o.inputs) for o in tiles.ops]
    assert shuffled, "an example whose tile ids are not their positions"


def test_the_tasks_node_sets_are_numbered_as_the_tasks_first_run_them() -> None:
    """`index._task_sets` by array work is the per-task loop it replaced: each task's sorted nodes (none for a task
    no op maps to), the distinct sets numbered in the order the tasks (in their given order) first run one."""
    rng = random.Random(7)
    for _ in range(30):
        n = rng.randint(1, 40)
        pairs = [(rng.randrange(n), rng.choice((3, 5, 8, 13))) for _ in range(rng.randint(0, 3 * n))]
        keys = np.array([t for t, _ in pairs], np.int64)
        values = np.array([v for _, v in pairs], np.int64)
        tasks = [SimpleNamespace(id=i) for i in rng.sample(range(n), n)]
        sets, col = _task_sets(_rows(keys, values, n), tasks)
        numbered: dict[tuple[int, ...], int] = {}
        for t in tasks:
            numbered.setdefault(tuple(sorted({v for k, v in pairs if k == t.id})), len(numbered))
        assert sets == [list(s) for s in numbered]
        assert col == [numbered[tuple(sorted({v for k, v in pairs if k == t.id}))] for t in tasks]
