"""Which earlier answers a kernel's next compile may reuse (`server.live._reusable`): its latest result and the one
before it, by fingerprint; whole when the answer holds as it is, else (an interim answer, or one whose advice was
checked after its record was sent) its record only, offered when the interim answer to show is known; to a compile
that asks for the panels' parts, an answer without them only completed by the panels' record job of that result, of
the same traced program."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from server.live import _reusable, _reuse_opts
from server.state import Document, Result


def _result(fp: str | None, interim: bool = False, interim_sent: bool = False, known_interim: bool = True,
            error: bool = False, record: Any = None) -> Result:
    analysis: dict[str, Any] = {"editor": {}, "error": {"message": "x"} if error else None, "record": record,
                                "program": "p", **({"fingerprint": fp} if fp else {}),
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
    assert _reusable(_doc(latest, before), "k", False) == {"a": (True, latest, latest.analysis),
                                                            "b": (True, before, before.analysis)}


def test_an_interim_answer_offers_its_record_and_so_does_one_whose_advice_was_checked() -> None:
    interim, checked = _result("a", interim=True), _result("b", interim_sent=True)
    assert _reusable(_doc(interim, checked), "k", False) == {"a": (False, interim, interim.interim_analysis),
                                                              "b": (False, checked, checked.interim_analysis)}


def test_nothing_without_a_fingerprint_an_ok_answer_or_the_interim_answer_to_show() -> None:
    assert _reusable(_doc(None), "k", False) == {}
    assert _reusable(_doc(_result(None)), "k", False) == {}  # not fingerprinted (a cpu board's, a precision check's)
    assert _reusable(_doc(_result("a", error=True)), "k", False) == {}
    assert _reusable(_doc(_result("a", interim_sent=True, known_interim=False)), "k", False) == {}
    same = _result("a")
    assert list(_reusable(_doc(same, _result("a")), "k", False).values()) == [(True, same, same.analysis)], \
        "the latest first, once"


def _panels_job(r: Result, answer: Any) -> None:
    """`r`'s panels' record job, done with `answer` (an exception: failed)."""
    fut: Future[Any] = Future()  # (what _reusable reads of an asyncio one)
    if isinstance(answer, BaseException):
        fut.set_exception(answer)
    else:
        fut.set_result(answer)
    r.extras["record"] = fut  # type: ignore[assignment]


def test_to_a_compile_asking_the_panel_parts_an_answer_without_them_is_completed_by_its_panels_job() -> None:
    panels = {"record": {"run": 1}, "record_columns": b"c", "pass_graphs": {}, "listings": [], "program": "p",
              "editor": "not this"}
    r = _result("a")
    assert _reusable(_doc(r), "k", True) == {}, "no panels' job: compiled anew"
    assert _reusable(_doc(r), "k", False) == {"a": (True, r, r.analysis)}
    _panels_job(r, panels)
    (whole, was, answer), = _reusable(_doc(r), "k", True).values()
    assert whole and was is r and answer == {**r.analysis, "record": {"run": 1}, "record_columns": b"c",
                                             "pass_graphs": {}, "listings": []}
    _panels_job(r, {**panels, "program": "another"})  # made from a later text, still compiling
    assert _reusable(_doc(r), "k", True) == {}
    _panels_job(r, RuntimeError("failed"))
    assert _reusable(_doc(r), "k", True) == {}
    held = _result("b", record={"run": 2})  # holds its parts: offered as it is
    assert _reusable(_doc(held), "k", True) == {"b": (True, held, held.analysis)}


def test_a_compile_is_told_the_traces_and_the_basis_of_a_record_whose_advice_it_checks_again() -> None:
    """The advice's candidates both answers' jobs traced (the latest's last), and the basis of an answer whose record
    only is reused (`advice_basis`: its advice is checked again without lowering the kernel); a whole answer's basis
    is not needed, and an answer without one gives none."""
    checked = _result("a", interim_sent=True)
    assert checked.analysis is not None
    checked.analysis.update(advice_traces={"t1": [1.0], "t2": [2.0]}, advice_basis={"written": "a's"})
    whole = _result("b")
    assert whole.analysis is not None
    whole.analysis.update(advice_traces={"t2": [3.0]}, advice_basis={"written": "b's"})
    got = _reuse_opts(_reusable(_doc(checked, whole), "k", False))
    assert got == {"fingerprints": {"a": False, "b": True}, "traces": {"t1": [1.0], "t2": [2.0]},
                   "basis": {"a": {"written": "a's"}}}
    assert "basis" not in _reuse_opts(_reusable(_doc(_result("c", interim_sent=True)), "k", False))
