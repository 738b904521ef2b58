"""The slim record the panels are sent (`server.panel_data.panel_record`) is the same whether it is made from
the record's whole lists or from lists whose left-out bulk was never decoded (`server.analyze.panel_lists`,
`PANEL_LEAVE_OUT`): the second is what the language server does for a big kernel (at 195k tile ops, 0.85 ->
0.37 s), so every field it keeps must come out as the whole lists would give it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server import analyze
from server.panel_data import PANEL_LEAVE_OUT, panel_record

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("file,kernel", [("examples/softmax.py", "softmax_kernel"),
                                         ("examples/attention.py", "attention_kernel"),
                                         ("tests/data/attention_32x512x64.py", "attn")])
def test_a_slim_record_from_lists_left_without_its_bulk_is_the_one_from_the_whole_lists(file, kernel):
    path = ROOT / file
    out = analyze.analyze_kernel(str(path), path.read_text(), kernel, {"record": True, "report": False})
    assert out["error"] is None
    limit = 10  # every one of these records is slim under it
    whole = panel_record(analyze.record_lists(out["record"], out["record_columns"]), limit)
    lean = analyze.panel_lists(out["record"], out["record_columns"], PANEL_LEAVE_OUT, limit)
    assert "omitted" in whole and lean["memory"] == [None] * len(lean["memory"])  # left out, its length kept
    assert json.dumps(panel_record(lean, limit), sort_keys=True) == json.dumps(whole, sort_keys=True)
    # at the limit or under it: none (the whole lists serve)
    n = whole["aggregates"]["tile_ops"]
    assert analyze.panel_lists(out["record"], out["record_columns"], PANEL_LEAVE_OUT, n) is None
