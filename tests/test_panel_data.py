"""server.panel_data's swimlane-window rules, shared by pypto/swimlane and GET …/swimlane: one edge rule,
counters clipped with the value in force at the start, a search placed over the run and in the window; a slim
record's predecessors as runs (`pred_runs`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support import from_rows, unpack, unruns

from server.panel_data import (
    PACK_FROM,
    as_rows,
    packed,
    pred_runs,
    window_bins,
    window_counters,
    window_match,
    window_tasks,
)

STARTS = [0.0, 1.0, 2.0, 3.0]
ENDS = [1.0, 2.0, 3.0, 4.0]


def test_a_window_holds_the_tasks_overlapping_it_not_those_touching_an_edge():
    assert window_tasks(STARTS, ENDS, 1.0, 3.0) == [1, 2]  # tasks 0 and 3 only touch 1.0 and 3.0
    assert window_tasks(STARTS, ENDS, 1.5, 1.6) == [1]
    assert window_tasks(STARTS, ENDS, 0.0, 4.0) == [0, 1, 2, 3]
    assert window_tasks([0.0, 0.0], [0.0, 1.0], 0.0, 1.0) == [0, 1]  # the whole run holds a zero-length task too


def test_counters_start_with_the_value_in_force_at_the_windows_start():
    got = window_counters({"ReadyCount_AIV": [[0.0, 1], [1.5, 2], [2.5, 0], [5.0, 3]]}, 2.0, 3.0)
    assert got == {"ReadyCount_AIV": [[1.5, 2], [2.5, 0]]}


def test_a_search_is_placed_over_the_run_and_in_the_window():
    ids = [10, 11, 12, 13]
    held = window_tasks(STARTS, ENDS, 1.0, 3.0)
    assert window_match(ids, STARTS, [[11, 13]], held) == ([1, 2, 3], [1, 2], 1)
    assert window_match(ids, STARTS, [[20, 30]], held) == ([], [], None)


def test_bins_count_a_task_on_its_lane_and_on_each_lane_it_holds():
    lanes = [0, 1, 0, 3]  # task 1: a MIX task on lane 1 holding lanes 4 and 5
    held = [[], [4, 5], [], []]
    got = window_bins([0, 1, 2, 3], lanes, STARTS, ENDS, 0.0, 4.0, 2, held)
    by_lane = {lane: [(a, b, busy, n) for ln, a, b, busy, n in got if ln == lane] for lane in {g[0] for g in got}}
    assert sorted(by_lane) == [0, 1, 3, 4, 5]
    assert by_lane[4] == by_lane[5] == by_lane[1] == [(0.0, 2.0, 0.5, 1)], "busy half the first bin, like its own lane"
    assert window_bins([0, 1, 2, 3], lanes, STARTS, ENDS, 0.0, 4.0, 2) == [g for g in got if g[0] not in (4, 5)]


def test_pred_runs_pairs_each_run_of_consecutive_ids_and_gives_the_same_ids_back():
    preds = [[], [0], [0, 1], [0, 1, 2, 5, 7, 8], [3, 2, 1], [9, 10, 10, 11], list(range(128)), []]
    runs = pred_runs(preds)
    assert runs == [[], [0], [[0, 1]], [[0, 2], 5, [7, 8]], [3, 2, 1], [[9, 10], [10, 11]], [[0, 127]], []]
    assert [unruns(r) for r in runs] == preds, "in their order, a repeated id too"
    assert pred_runs([]) == [] and pred_runs([[], []]) == [[], []]


def test_pred_runs_of_lists_picked_from_a_table_are_those_of_the_same_lists():
    """A record's predecessors shared by many tasks come back as `PickedLists` (`pypto.ir.columns.shared_lists`):
    their runs are made once per distinct list, the same as of the lists themselves."""
    import numpy as np

    from pypto.ir.columns import PickedLists

    table = [[0, 1, 2, 5], [], [7, 8, 3]]
    codes = np.array([0, 2, 2, 1, 0, 0, 2], dtype=np.int8)
    picked = PickedLists(table, codes)
    assert pred_runs(picked) == pred_runs([table[c] for c in codes.tolist()]) == \
        [[[0, 2], 5], [[7, 8], 3], [[7, 8], 3], [], [[0, 2], 5], [[0, 2], 5], [[7, 8], 3]]


def test_as_rows_sends_a_list_of_like_objects_as_columns_and_any_other_list_as_it_is():
    tasks = [{"id": 0, "core": "AIV", "pred_runs": []}, {"id": 1, "core": "AIC", "pred_runs": [[0, 0]]}]
    assert as_rows(tasks) == {"$rows": {"id": [0, 1], "core": ["AIV", "AIC"], "pred_runs": [[], [[0, 0]]]}}
    assert from_rows(as_rows(tasks)) == tasks
    other_keys = [{"id": 0}, {"id": 1, "core": "AIC"}]
    assert as_rows(other_keys) is other_keys and as_rows([]) == [] and as_rows([1, 2]) == [1, 2]
    assert as_rows(tasks, ("pred_runs",)) == {"$rows": {"id": [0, 1], "core": ["AIV", "AIC"]}}
    assert as_rows(other_keys, ("core",)) == [{"id": 0}, {"id": 1}]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100, allow_nan=False), st.floats(0, 30, allow_nan=False), st.integers(0, 5),
                          st.lists(st.integers(0, 7), max_size=2)), min_size=1, max_size=60),
       st.floats(-10, 90, allow_nan=False), st.floats(0.001, 150, allow_nan=False), st.integers(1, 40),
       st.booleans())
def test_the_bins_counted_in_numpy_are_the_loops_to_the_last_bit(tasks, start, span, nbins, with_held):
    """A big window's bins are counted in numpy (`window_bins` from `BINS_NUMPY` tasks): the same lanes, bins, task
    counts and busy shares, the shares summed in the loop's order (equal floats, not near ones)."""
    from server.panel_data import _bins_numpy, _bins_python

    starts = [s for s, _, _, _ in tasks]
    ends = [s + d for s, d, _, _ in tasks]
    lanes = [lane for _, _, lane, _ in tasks]
    held = [h for _, _, _, h in tasks] if with_held else None
    inside = window_tasks(starts, ends, start, start + span)
    want = _bins_python(inside, lanes, starts, ends, start, start + span, nbins, held)
    assert _bins_numpy(inside, lanes, starts, ends, start, start + span, nbins, held) == want
    # the run as arrays (the language server's columns) and a whole run
    import numpy as np

    whole = list(range(len(tasks)))
    assert _bins_numpy(whole, np.asarray(lanes), np.asarray(starts), np.asarray(ends), min(starts), max(ends), nbins,
                       held) == _bins_python(whole, lanes, starts, ends, min(starts), max(ends), nbins, held)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.integers(0, 30)), min_size=1, max_size=50))
def test_the_start_order_in_numpy_is_the_loops(tasks):
    """From `NUMPY_FROM` tasks a window's start order is sorted in numpy: the same positions in the same order, ties
    (equal starts, equal ids) broken alike."""
    from server import panel_data as D

    starts = [s for s, _ in tasks]
    ids = [i for _, i in tasks]
    picked = list(range(len(tasks)))[::-1]
    small = D.start_order(picked, starts, ids)
    D.NUMPY_FROM, old = 0, D.NUMPY_FROM
    try:
        assert D.start_order(picked, starts, ids) == small
    finally:
        D.NUMPY_FROM = old


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["range", "runs", "lists", "ints", "strings", "bools", "mixed", "big"]),
       n=st.integers(0, 3 * PACK_FROM), first=st.integers(-10**6, 10**6), step=st.integers(-3, 3),
       data=st.data())
def test_a_packed_column_is_the_same_list_and_a_long_regular_one_is_shorter(kind, n, first, step, data):
    """`packed`: a `$rows` column as a range, as runs, or as it is; read back (`unpack`, as webview model.ts does) it
    is the same list, element types included (bools stay bools, a mix of ints and strings stays itself), and a list
    per entry, not one shared."""
    import json

    if kind == "range":
        col = [first + i * step for i in range(n)]
    elif kind == "runs":
        col = [v for v, c in data.draw(st.lists(st.tuples(st.sampled_from(["AIV", "AIC", "MIX"]), st.integers(1, 200)),
                                                max_size=40)) for _ in range(c)]
    elif kind == "lists":  # coordinates, a subgraph's nodes: runs of equal lists
        col = [list(v) for v, c in data.draw(st.lists(st.tuples(st.sampled_from([(), (0, 0), (1, 0), (2, 5, 7)]),
                                                               st.integers(1, 200)), max_size=40)) for _ in range(c)]
    elif kind == "ints":
        col = data.draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    elif kind == "strings":
        col = data.draw(st.lists(st.sampled_from(["a", "b", "ü"]), min_size=n, max_size=n))
    elif kind == "bools":
        col = [i % 7 == 0 for i in range(n)]
    elif kind == "mixed":
        col = [i if i % 3 else str(i) for i in range(n)]
    else:
        col = [2**70 + i for i in range(n)]  # beyond 64 bits
    got = packed(col)
    back = unpack(got)
    assert back == col and [type(x) for x in back] == [type(x) for x in col]
    assert len({id(x) for x in back if isinstance(x, list)}) == sum(isinstance(x, list) for x in back)
    if kind in ("range",) and n >= PACK_FROM:
        assert got == {"$range": [first, step, n]}
    if isinstance(got, dict):
        assert len(json.dumps(got)) < len(json.dumps(col))
    if kind in ("bools", "mixed", "big") or len(col) < PACK_FROM:
        assert got is col
