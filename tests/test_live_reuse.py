"""Which earlier answers a kernel's next compile may reuse (`server.live._reusable`): its latest result and the one
before it, by fingerprint; whole when the answer holds as it is, else (an interim answer, or one whose advice was
checked after its record was sent) its record only, offered when the interim answer to show is known."""

from __future__ import annotations

from typing import Any

from server.live import _reusable
from server.state import Document, Result


def _result(fp: str | None, interim: bool = False, interim_sent: bool = False, known_interim: bool = True,
            error: bool = False) -> Result:
    analysis: dict[str, Any] = {"editor": {}, "error": {"message": "x"} if error else None,
                                **({"fingerprint": fp} if fp else {}),
                                **({"interim_sent": True} if interim_sent else {})}
    return Result("key", "k", 1, 1, 0, analysis=analysis, interim=interim,
                  interim_analysis=dict(analysis) if (interim or interim_sent) and known_interim else None)


def _doc(latest: Result | None, before: Result | None = None) -> Document:
    doc = Document("file:///k.py", "/k.py", 1, "")
    if latest is not None:
        doc.results["k"] = latest
    if before is not None:
        doc.earlier["k"] = before
    return doc


def test_a_final_answer_is_offered_whole_and_the_one_before_it_too() -> None:
    latest, before = _result("a"), _result("b")
    assert _reusable(_doc(latest, before), "k") == {"a": (True, latest), "b": (True, before)}


def test_an_interim_answer_offers_its_record_and_so_does_one_whose_advice_was_checked() -> None:
    interim, checked = _result("a", interim=True), _result("b", interim_sent=True)
    assert _reusable(_doc(interim, checked), "k") == {"a": (False, interim), "b": (False, checked)}


def test_nothing_without_a_fingerprint_an_ok_answer_or_the_interim_answer_to_show() -> None:
    assert _reusable(_doc(None), "k") == {}
    assert _reusable(_doc(_result(None)), "k") == {}  # not fingerprinted (a cpu board's, a precision check's)
    assert _reusable(_doc(_result("a", error=True)), "k") == {}
    assert _reusable(_doc(_result("a", interim_sent=True, known_interim=False)), "k") == {}
    same = _result("a")
    assert list(_reusable(_doc(same, _result("a")), "k").values()) == [(True, same)], "the latest first, once"
