"""The panels' record in the language server (`server.panels.record`): made once per compile as JSON text, which
`pypto/record` sends as it is, whichever panel asks (glm's fused attention, 1.05 M tasks: 3.5 s each ask before)."""

from __future__ import annotations

import json
import types
from typing import Any

import pytest

from server import panels
from server import protocol as P
from server.lsp import _serialize


def test_the_panels_record_is_made_once_per_compile_and_sent_as_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    def slim(lists: Any) -> Any:
        made.append(lists)
        return {"source": {"kernel": "k"}, "passes": [], "n": len(made)}

    monkeypatch.setattr(panels, "panel_record", slim)
    monkeypatch.setattr(panels, "_slim_lists", lambda out: out["record"])
    doc, r = types.SimpleNamespace(uri="file:///k.py"), types.SimpleNamespace(name="k", version=3)
    out = {"record": {"passes": []}, "record_columns": b"columns of compile 1", "listings": ["leaf 0"],
           "pass_graphs": {"traced": {"nodes": [1]}}}
    first = panels.record(doc, r, out)
    again = panels.record(doc, r, out)
    assert len(made) == 1 and again.record is first.record  # the second panel's ask: the same text
    other = panels.record(doc, r, {**out, "record_columns": b"columns of compile 2"})
    assert len(made) == 2 and other.record != first.record  # another compile: made anew
    again.baseline, again.history = {"entry": {"id": 1}, "run": None}, [{"id": 1}]
    sent = json.loads(_serialize(again).text)
    assert sent == {"uri": "file:///k.py", "kernel": "k", "version": 3, "listings": ["leaf 0"],
                    "baseline": {"entry": {"id": 1}, "run": None}, "history": [{"id": 1}],
                    "record": {"source": {"kernel": "k"}, "passes": [], "n": 1, "traced": {"graph": {"nodes": [1]}}}}
    # as the whole message was written before the record came as text
    assert sent == json.loads(json.dumps(P.dump(P.RecordResult("file:///k.py", "k", 3, sent["record"], ["leaf 0"],
                                                               again.baseline, again.history))))
    with pytest.raises(P.ParamsError, match="no record"):
        monkeypatch.setattr(panels, "panel_record", lambda lists: None)
        panels.record(doc, r, {**out, "record_columns": b"columns of compile 3"})
