"""The record's typed columns (`pypto.ir.columns`): any JSON value comes back from its columns as the
same JSON text (key order, ints vs floats vs bools, nulls, nesting), through the .npz file and inline."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.ir import columns as C

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False),
                    st.text(max_size=4))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(st.sampled_from("abcd"), inner, max_size=4)), max_leaves=30)


def _round_trip(value, min_rows: int = 2):
    arrays: C.Arrays = {}
    compact = C.columnize(value, "v", arrays, min_rows)
    through_file = C.read_npz(C.npz_bytes(arrays))
    inline = C.from_inline(json.loads(json.dumps(C.inline(arrays))))
    return compact, arrays, [C.expand(json.loads(json.dumps(compact)), a) for a in (arrays, through_file, inline)]


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values, min_size=0, max_size=12))
def test_any_json_list_comes_back_as_the_same_text(values):
    _, _, backs = _round_trip(values)
    for back in backs:
        assert json.dumps(back) == json.dumps(values)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.lists(st.integers(-5, 5), min_size=2, max_size=2)), min_size=1,
                max_size=20), st.lists(st.one_of(st.none(), st.integers()), min_size=1, max_size=20))
def test_typed_encoders_describe_what_the_generic_one_does(rows, maybe):
    arrays: C.Arrays = {}
    firsts = [r[0] for r in rows]
    seconds = [r[1] for r in rows]
    assert C.decode(C.ints(firsts, len(firsts), "a", arrays), arrays) == firsts
    assert C.decode(C.int_lists(seconds, len(seconds), "b", arrays), arrays) == seconds
    present = [m is not None for m in maybe]
    some = [m for m in maybe if m is not None]
    spec = C.nullable(present, C.encode(some, "c", arrays), "c", arrays)
    assert C.decode(spec, arrays) == maybe


def test_long_columns_are_typed_and_narrow():
    value = {"id": list(range(1000)), "node": [i % 7 for i in range(1000)], "op": ["load", "exp", "store"] * 300,
             "coord": [[i, i + 1] for i in range(500)], "flag": [True, False] * 100, "none": [None] * 70}
    compact, arrays, backs = _round_trip(value, C.MIN_ROWS)
    assert compact["id"] == {"$columns": {"n": 1000, "range": [0, 1]}}
    assert compact["none"] == {"$columns": {"n": 70, "const": None}}
    assert arrays[compact["node"]["$columns"]["int"]].dtype == np.int8
    assert compact["op"]["$columns"]["table"] == ["load", "exp", "store"]
    assert compact["coord"]["$columns"]["width"] == 2
    assert all(back == value for back in backs)
    short = {"few": [1, 2, 3]}
    assert C.columnize(short, "s", {}) == short  # short lists stay JSON


def test_a_shared_table_of_values_is_copied_per_entry():
    shared = {"dim": "1"}
    values = [shared, {}] * 50
    arrays: C.Arrays = {}
    spec = C.table(values, "t", arrays)
    assert "pick" in spec and len(spec["table"]) == 2
    back = C.decode(spec, arrays)
    assert back == values
    back[0]["dim"] = "2"
    assert back[2] == {"dim": "1"}  # each entry its own dict


def test_typed_encoders_decode_to_what_the_generic_one_does():
    """`strs`, `labels` and `picks` skip `encode`'s checks; what they store decodes to the same list."""
    import enum

    class Kind(enum.Enum):
        A = "a"
        B = "b"
        ALSO_A = "a!"

    words = ["load", "exp", "load", "store"] * 40
    kinds = [Kind.A, Kind.B, Kind.A, Kind.ALSO_A] * 40
    arrays: C.Arrays = {}
    typed = [(words, C.strs(words, "w", arrays)),
             ([k.value.rstrip("!") for k in kinds], C.labels(kinds, lambda k: k.value.rstrip("!"), "k", arrays))]
    for values, spec in typed:
        generic: C.Arrays = {}
        assert C.decode(spec, arrays) == values == C.decode(C.encode(values, "g", generic), generic)
        assert len(spec["table"]) == len(set(values))  # labelled alike, stored once
    assert C.strs(["same"] * 70, "c", {}) == {"n": 70, "const": "same"} and C.strs([], "e", {}) == {"n": 0, "json": []}
    arrays = {}
    spec = C.picks([{}, {"dim": "1"}], [0, 1, 1, 0], "p", arrays)
    assert C.decode(spec, arrays) == [{}, {"dim": "1"}, {"dim": "1"}, {}] and arrays["p"].dtype == np.int8


def test_bad_column_files_and_specs_are_refused():
    with pytest.raises(ValueError, match="not a column file"):
        C.read_npz(b"not a zip")
    with pytest.raises(ValueError, match="unknown column spec"):
        C.decode({"n": 1, "mystery": 3}, {})
    arrays = {"a": np.arange(3, dtype=np.int8)}
    with pytest.raises(ValueError, match="3 entries where its spec says 4"):
        C.decode({"n": 4, "int": "a"}, arrays)


def test_expand_key_decodes_one_field_of_a_list_of_objects():
    rows = [{"id": i, "sub": i // 3, "ops": list(range(i % 4))} for i in range(100)]
    mixed = rows[:50] + [{"sub": 0, "id": 7}] * 50  # two key orders: decoded whole, then picked
    for value in (rows, mixed):
        arrays: C.Arrays = {}
        stored = C.columnize(value, "t", arrays)
        assert C.MARK in stored
        for key in ("id", "sub"):
            assert C.expand_key(stored, key, arrays) == [r[key] for r in value]
    assert C.expand_key(rows[:3], "ops", {}) == [[], [0], [0, 1]]  # short lists stay JSON


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_lazy_expand_writes_the_same_text(value):
    """`expand(…, lazy=True)` holds lists of numbers as arrays (`ArrayLists`); written with `json_default` they
    are the same text as the lists `expand` makes."""
    arrays: C.Arrays = {}
    compact = C.columnize(value, "v", arrays, 2)
    assert json.dumps(C.expand(compact, arrays, lazy=True), default=C.json_default) == json.dumps(value)


def test_array_lists_read_like_the_lists_and_pickle_as_arrays():
    import pickle

    rows = [[i, i + 1, 70_000 + i][: i % 4] for i in range(5000)]
    points = [[0.5 * i, float(i % 7)] for i in range(300)]
    arrays: C.Arrays = {}
    compact = C.columnize({"preds": rows, "points": points}, "run", arrays)
    held = C.expand(compact, arrays, lazy=True)
    preds, pts = held["preds"], held["points"]
    assert isinstance(preds, C.ArrayLists) and isinstance(pts, C.ArrayLists)
    assert preds == rows and pts == points and preds.tolist() == rows and list(preds) == rows
    assert len(preds) == 5000 and bool(preds) and preds[3] == [3, 4, 70_003] and preds[-1] == rows[-1]
    assert preds[4:7] == rows[4:7] and preds[::7] == rows[::7] and preds[9:3] == [] and pts[10] == [5.0, 3.0]
    with pytest.raises(IndexError):
        preds[5000]
    # the pickle carries the two arrays, not a Python object per entry, and the same lists come back
    back = pickle.loads(pickle.dumps(preds))
    assert isinstance(back, C.ArrayLists) and back.flat.dtype == np.int32 and back == rows
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps({"x": object()}, default=C.json_default)
    # a column of strings or of mixed lists is decoded as lists
    mixed: C.Arrays = {}
    other = C.expand(C.columnize([[1, "a"]] * 100, "m", mixed), mixed, lazy=True)
    assert isinstance(other, list) and other == [[1, "a"]] * 100


def test_csr_lists_is_int_lists_of_the_same_lists():
    rows = [(3, 1), (), (7,), (2, 2)] * 40
    flat = np.array([x for r in rows for x in r], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    a: C.Arrays = {}
    b: C.Arrays = {}
    spec_a = C.int_lists(rows, len(rows), "p", a)
    spec_b = C.csr_lists(flat, offsets, "p", b)
    assert spec_a == spec_b and a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype
                                                             for k in a)
    assert C.decode(spec_b, b) == [list(r) for r in rows]


def test_a_column_of_lists_whose_lengths_disagree_with_its_entries_is_refused_lazily_too():
    arrays: C.Arrays = {}
    compact = C.columnize([[1, 2], [3]] * 40, "p", arrays)
    spec = compact[C.MARK]
    spec["lengths"] = {"n": 80, "const": 2}  # 160 entries said, 120 held
    with pytest.raises(ValueError, match=r"a column of 80 lists holds 120 entries where its lengths say 160"):
        C.expand(compact, arrays, lazy=True)


def test_lists_shared_by_many_rows_are_a_pick_of_the_distinct_ones():
    """`shared_lists`: an execute graph's tasks share their predecessor tuples (Kimi's block attention after a tile
    edit: 8.4 M arrows in 128 lists): stored once each and picked, the same lists come back — decoded, lazily as
    arrays, and as rows; lists mostly distinct stay `csr_lists`."""
    shared = [tuple(range(k, k + 300)) for k in range(3)]
    twin = tuple(shared[1])  # equal to one of them, another object
    rows = [shared[i % 3] for i in range(400)] + [twin, (), shared[0]]
    flat = np.array([x for r in rows for x in r], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    arrays: C.Arrays = {}
    spec = C.shared_lists(rows, "p", arrays, (flat, offsets))
    assert "pick" in spec and spec["table"] == [list(shared[0]), list(shared[1]), list(shared[2]), []]
    assert sum(a.nbytes for a in arrays.values()) < 1_000, "the arrows are not stored per row"
    want = [list(r) for r in rows]
    assert C.decode(spec, arrays) == want
    lazy = C.expand({C.MARK: spec}, arrays, lazy=True)
    assert isinstance(lazy, C.PickedLists) and lazy == want and lazy[401] == [] and lazy[400] == list(twin)
    assert lazy[-1] == list(shared[0]) and lazy[2:5] == want[2:5] and list(lazy) == want and len(lazy) == len(rows)
    held = C.ArrayLists(lazy.flat, lazy.offsets)  # its two arrays, as an `ArrayLists` reader takes them
    assert held == want and held == lazy and lazy == held
    lazy[0].append(-1)  # a fresh list each time: the table stays as it was
    assert lazy[0] == list(shared[0])
    import pickle

    back = pickle.loads(pickle.dumps(lazy))
    assert isinstance(back, C.PickedLists) and back == want and len(pickle.dumps(lazy)) < 10_000
    assert json.dumps({"p": lazy}, default=C.json_default) == json.dumps({"p": want})
    as_rows = C.rows_of({"n": len(rows), "dict": {"preds": spec}, "keys": {"n": len(rows), "const": 0},
                         "shapes": [["preds"]]}, arrays)
    assert as_rows is not None and as_rows["$rows"]["preds"] == want
    # mostly distinct: the CSR spec, as before
    distinct = [tuple(range(k, k + 3)) for k in range(100)]
    dflat = np.array([x for r in distinct for x in r], dtype=np.int64)
    doff = np.arange(0, 301, 3, dtype=np.int64)
    a: C.Arrays = {}
    b: C.Arrays = {}
    assert C.shared_lists(distinct, "p", a, (dflat, doff)) == C.csr_lists(dflat, doff, "p", b)
    c: C.Arrays = {}
    assert C.shared_lists(distinct, "p", c) == C.int_lists(distinct, len(distinct), "p", {})  # no CSR arrays held
    assert C.shared_lists(rows, "p", {}) == spec


def test_a_pick_of_lists_whose_codes_leave_the_table_is_refused_lazily():
    arrays: C.Arrays = {"p": np.array([0, 1, 5], dtype=np.int8)}
    spec = {"n": 3, "pick": "p", "table": [[1, 2], [3]]}
    with pytest.raises(ValueError, match="out of it"):
        C.expand({C.MARK: spec}, arrays, lazy=True)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.just([]), st.lists(st.integers(-9, 9), min_size=1, max_size=3)), min_size=1,
                max_size=40))
def test_a_column_of_mostly_empty_lists_comes_back_the_same_each_list_its_own(lists):
    """A column of lists most of which are empty (a run's task coordinates) is decoded by filling in the few that are
    not: the same lists, every empty one a list of its own (a reader may append to one)."""
    arrays: C.Arrays = {}
    spec = C.int_lists(lists, len(lists), "c", arrays)
    back = C.decode(spec, arrays)
    assert back == lists
    empty = [x for x in back if not x]
    assert len({id(x) for x in empty}) == len(empty)


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, min_size=0, max_size=12), st.lists(json_values, min_size=0, max_size=12))
def test_a_value_reads_back_from_only_the_arrays_it_names(part, other):
    """`array_names`: what a part of a document needs of its column file (a record's run of the whole record's
    arrays), which is enough to expand it, and names only arrays of the file."""
    arrays: C.Arrays = {}
    compact = C.columnize({"part": part, "other": other}, "v", arrays, 2)
    names = C.array_names(compact["part"])
    assert names <= set(arrays)
    some = C.read_npz(C.npz_bytes(arrays), names)
    assert set(some) == names
    assert json.dumps(C.expand(compact["part"], some)) == json.dumps(part)
