"""A job's tensor graph first (`server.analyze._graph_first`): from `graph_first_from` tile ops, once its kernel's tile
expansion said how many it made, the job sends its tensor stage's record — the graph and the views of its lines, no
run, summary, findings or fingerprint — before it lowers the rest; once, not for its advice's candidates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pypto.userfiles import forget_loaded
from server import analyze, panels

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "layernorm.py"
OPTS = {"editor": True, "report": True, "record": False, "interim": True, "fingerprint": True}


def _job(monkeypatch: pytest.MonkeyPatch, first_from: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(analyze, "progress", sent.append)
    forget_loaded()  # the module run anew, as a worker's job does: its kernels' compile caches empty
    answer = analyze.analyze_kernel(str(EXAMPLE), EXAMPLE.read_text(), "layernorm_kernel",
                                    {**OPTS, "graph_first_from": first_from})
    return sent, answer


def test_a_big_kernel_sends_its_tensor_graph_before_it_lowers(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, answer = _job(monkeypatch, 1)
    kinds = [next(k for k in ("lowering", "interim") if k in m) for m in sent if "lowering" in m or "interim" in m]
    assert kinds == ["lowering", "interim"]  # once, first: the advice's candidates lower without it
    assert answer["advice_traces"], "the example's advice was checked: its candidates were lowered too"
    shown = sent[0]["lowering"]
    tile_ops = answer["summary"]["tile_ops"]
    assert shown["lowering"] == {"tile_ops": tile_ops}
    record = shown["record"]
    assert record["lowering"] == {"tile_ops": tile_ops} and record["run"] is None and "tiles" not in record
    assert {p["stage"] for p in record["passes"]} == {"tensor"} and record["graph"]["nodes"]
    assert shown["summary"] is None and shown["health"] is None and "fingerprint" not in shown
    assert shown["editor"]["lines"] and shown["editor"]["swimlane"] is None and shown["pass_graphs"]["passes"]
    # the same lines as the whole record's view (sent with its interim answer), each with the same tensor nodes
    assert {ln: v["nodes"] for ln, v in shown["editor"]["lines"].items()} == \
        {ln: v["nodes"] for ln, v in sent[1]["interim"]["editor"]["lines"].items()}


def test_a_kernel_below_the_threshold_sends_none(monkeypatch: pytest.MonkeyPatch) -> None:
    sent, answer = _job(monkeypatch, 10**9)
    assert not [m for m in sent if "lowering" in m]
    assert answer["summary"]["tile_ops"] > 0


def test_its_code_lens_says_the_kernel_is_lowering_and_opens_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    from lsprotocol import types as lsp

    from server.features import best_gain, code_lenses, diagnostics, hover_text, inlay_hints
    from server.state import Document, Result, parse_version

    sent, _ = _job(monkeypatch, 1)
    text = EXAMPLE.read_text()
    doc = Document(EXAMPLE.as_uri(), str(EXAMPLE), 1, text)
    doc.parsed, _ = parse_version(text, str(EXAMPLE), {})
    assert doc.parsed is not None
    doc.kernels = {k.name: k for k in doc.parsed.kernels}
    k = doc.kernels["layernorm_kernel"]
    shown = sent[0]["lowering"]
    doc.results[k.name] = Result(k.key, k.name, k.line, k.def_line, k.def_col, k.end_line, analysis=shown, interim=True)
    lenses = [(c.command.title, c.command.command) for c in code_lenses(doc) if c.command is not None]
    n = shown["lowering"]["tile_ops"]
    assert lenses == [(f"pypto: lowering {n:,} tile ops… (its tensor graph is shown)", "pypto.openGraph")], lenses
    # what the editor asks meanwhile is answered from its tensor stage: no findings, its lines' nodes, no figures
    assert diagnostics(doc) == []
    line = next(int(ln) for ln, v in shown["editor"]["lines"].items()
                if any(shown["editor"]["nodes"][str(i)]["op"] == "cast" for i in v["nodes"]))
    said = hover_text(doc, line) or ""
    assert "`cast`" in said and f"being lowered to {n:,} tile ops" in said and "makespan" not in said, said
    whole = lsp.Range(lsp.Position(0, 0), lsp.Position(len(text.splitlines()), 0))
    hints = [str(h.label) for h in inlay_hints(doc, whole)]
    assert hints and not [h for h in hints if "tiles" in h or "cycles" in h], hints  # the shapes, no figures yet
    assert best_gain(doc, doc.results[k.name]) is None
    # the panels' record (`pypto/record`): the tensor stage's, saying it is lowering, with no run
    record = json.loads(panels.record(doc, doc.results[k.name], shown).record.text)
    assert record["lowering"] == {"tile_ops": n} and record["run"] is None and record["graph"]["nodes"]


def test_the_setting_is_no_part_of_the_answers_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """An open's answer (asked with it) is reused by the next edit's compile (asked without it)."""
    _, shown_first = _job(monkeypatch, 1)
    _, not_asked = _job(monkeypatch, 0)
    assert shown_first["fingerprint"] == not_asked["fingerprint"]


def test_a_tensor_graph_shown_is_no_whole_record_to_keep_or_to_keep_showing() -> None:
    """A failure after it keeps no stale run of it, and a compile started meanwhile shows its own tensor graph first."""
    from server.live import _good, _shown
    from server.state import Result

    def result(**analysis: Any) -> Result:
        return Result("key", "k", 1, 1, 0, analysis={"editor": {}, "error": None, **analysis})

    lowering, whole = result(lowering={"tile_ops": 600_000}), result(summary={"tasks": 1})
    assert _good(lowering) is None and not _shown(lowering)
    assert _good(whole) is whole and _shown(whole)
    lowering.last_good = whole  # (an edit's compile never shows one over a whole record; were it kept, that one)
    assert _good(lowering) is whole and _shown(lowering)
    assert not _shown(None)
