"""Health advice the board has checked (`pypto.analysis.advice`): a tile shape a finding proposes is
offered only when the sim board finds it faster than the kernel as written, with the figure; the
shapes offered really are faster when applied to the file (checked here independently)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.analysis.advisor import FASTER_BY, apply_edits, faster
from pypto.analysis.report import make_report
from pypto.boards.swimlane import metrics
from pypto.cli import load_module

REPO = Path(__file__).resolve().parents[1]
SOFTMAX = REPO / "examples" / "softmax.py"


def _softmax_with(tmp_path: Path, dims: str) -> Path:
    text = SOFTMAX.read_text().replace("pypto.set_vec_tile_shapes(1, 4, 1, 64)", f"pypto.set_vec_tile_shapes({dims})")
    assert f"set_vec_tile_shapes({dims})" in text
    path = tmp_path / f"softmax_{dims.replace(', ', '_')}.py"
    path.write_text(text)
    return path


def _makespan(path: Path) -> float:
    rep = make_report(load_module(path, f"advice_{path.stem}_").softmax_kernel)
    assert rep.error is None and rep.record is not None and rep.record.run is not None
    return metrics(rep.record.run).makespan


@pytest.mark.parametrize("dims", ["1, 4, 1, 64", "1, 8, 1, 256", "1, 32, 1, 256"])
def test_every_offered_shape_is_faster_and_every_slower_one_is_withdrawn(tmp_path, dims):
    path = _softmax_with(tmp_path, dims)
    rep = make_report(load_module(path, f"advice_{path.stem}_").softmax_kernel)
    assert rep.health is not None and rep.record is not None and rep.record.run is not None
    now = metrics(rep.record.run).makespan
    checked = [f for f in rep.health.findings if f.numbers.get("try")]
    assert checked, "the rules propose shapes for softmax at this tile"
    for f in checked:
        tries = f.numbers["try"]
        assert all("makespan_us" in t and "faster" in t for t in tries)
        assert f.numbers["makespan_us"] == pytest.approx(now, rel=1e-6)
        offered = [t for t in tries if t["faster"]]
        if offered:
            assert "simulated on the sim board" in f.suggestion
            assert all(t["makespan_us"] < now * (1 - FASTER_BY) for t in offered)
            # it carries the edit of the fastest one: the panel's Apply and the editor's quick fix
            fastest = min(offered, key=lambda t: t["makespan_us"])
            assert f.edits and f.edits[0].where.file == str(path)
            assert f.rule == "tile.tail-waste" or f.edits[0].text.endswith(fastest["call"])  # the file's spelling
        else:
            assert all(t.get("error") or t["makespan_us"] >= now * (1 - FASTER_BY) for t in tries)
            assert f.suggestion.startswith("no tile shape is offered here") and not f.edits
            assert "tile_shapes(" in f.suggestion  # it names what it ruled out, with its figure
    # independently: apply the fastest offered shape to the file and profile it again
    offered = sorted((t for f in checked for t in f.numbers["try"] if t["faster"]), key=lambda t: t["makespan_us"])
    if offered:
        best = offered[0]
        new_dims = ", ".join(str(d) for d in best["dims"])
        assert _makespan(_softmax_with(tmp_path, new_dims)) == pytest.approx(best["makespan_us"], rel=1e-6)
        assert best["makespan_us"] < now


def test_at_the_best_shape_no_finding_offers_a_slower_one(tmp_path):
    """At softmax's best tile (the advisor's pick), the rules of thumb propose shapes the board
    finds slower: none is offered (before, "use set_vec_tile_shapes(1, 16, 1, 256)" was, 1.63x slower)."""
    path = _softmax_with(tmp_path, "1, 32, 1, 256")
    rep = make_report(load_module(path, "advice_best_").softmax_kernel)
    assert rep.health is not None
    offered = [t for f in rep.health.findings for t in f.numbers.get("try", ()) if t["faster"]]
    assert offered == []


def test_a_tail_fix_the_board_finds_faster_keeps_its_edit(tmp_path):
    path = tmp_path / "tail.py"
    path.write_text("import pypto\n\n\n@pypto.jit\n"
                    "def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), "
                    "out: pypto.Tensor([64, 1000], pypto.DT_FP32)):\n"
                    "    pypto.set_vec_tile_shapes(16, 384)\n    out[:] = pypto.exp(x)\n")
    rep = make_report(load_module(path, "advice_tail_").tail_vec)
    assert rep.health is not None
    (f,) = rep.health.of("tile.tail-waste")
    assert f.edits and f.numbers["try"][0]["faster"] and "simulated on the sim board" in f.suggestion
    fixed = apply_edits(path.read_text(), f.edits)
    assert "set_vec_tile_shapes(16, 200)" in fixed


def test_the_check_is_bounded_and_a_shape_it_did_not_reach_is_not_offered(tmp_path):
    """With its time spent, `verify_advice` starts no new simulation: every proposed shape it did not
    reach loses its edits and fixes, its finding says the check stopped at its bound; a shape the
    advisor simulated before is still checked (it costs nothing)."""
    from pypto.analysis.advice import proposes, verify_advice
    from pypto.analysis.advisor import Advisor
    from pypto.analysis.health import health_report
    from pypto.record import compile_for, profile

    path = _softmax_with(tmp_path, "1, 4, 1, 64")
    kernel = load_module(path, "advice_bound_").softmax_kernel
    record, args = compile_for(kernel)
    record = profile(record, "sim")
    health = health_report(record)
    assert proposes(health)
    advisor = Advisor(kernel, args, record=record)
    spent = verify_advice(health, advisor, seconds=0.0)
    unreached = [f for f in spent.findings if any(t.get("unchecked") for t in f.numbers.get("try", ()))]
    assert unreached, "a bound of 0 s reaches no shape the advisor had not simulated"
    for f in unreached:
        assert not f.edits and not f.fixes and "stopped at its time bound (0 s)" in f.suggestion
    assert advisor.evaluations == 1, "only the kernel as written was simulated"
    full = verify_advice(health, advisor)  # the default bound: every shape simulated
    assert not [t for f in full.findings for t in f.numbers.get("try", ()) if t.get("unchecked")]
    again = verify_advice(health, advisor, seconds=0.0)  # simulated now: the spent bound checks them all the same
    assert [f.to_json() for f in again.findings] == [f.to_json() for f in full.findings]


def test_a_finding_its_check_did_not_reach_says_how_long_a_longer_check_takes_but_not_for_a_lost_shape(tmp_path):
    """A shape the bound left unchecked, or did not begin because its compile would outlast the check, counts in the
    finding's `check_seconds` (the kernel's compile scaled by the shape's tiles) and its words; a shape whose child ran
    out of memory does not: a longer bound would not simulate it."""
    from pypto.analysis.advice import verify_advice
    from pypto.analysis.advisor import Advisor
    from pypto.analysis.health import health_report
    from pypto.record import compile_for, profile

    path = _softmax_with(tmp_path, "1, 4, 1, 64")
    kernel = load_module(path, "advice_longer_").softmax_kernel
    record, args = compile_for(kernel)
    record = profile(record, "sim")
    health = health_report(record)
    advisor = Advisor(kernel, args, record=record)
    spent = verify_advice(health, advisor, seconds=0.0)
    (f, *_) = [f for f in spent.findings if f.numbers.get("try")]
    shapes = {advisor.normalize({int(t["config"]): tuple(t["dims"])}) for t in f.numbers["try"]}
    expected = sum(advisor.expected_seconds(ov) for ov in shapes)
    assert f.numbers["check_seconds"] == pytest.approx(expected, abs=0.06) and expected > 0
    assert "takes about" in f.suggestion and f.suggestion.endswith("check the advice with a longer time bound")
    for ov in shapes:  # each shape's child ran out of memory: nothing a longer bound would simulate
        advisor.lost[ov] = "its forked process ran out of memory"
    lost = verify_advice(health, advisor, seconds=0.0)
    (g, *_) = [g for g in lost.findings if g.rule == f.rule and g.numbers.get("try")]
    assert "check_seconds" not in g.numbers and "takes about" not in g.suggestion
    for ov in shapes:  # not begun: expected to outlast the check (`Advisor._begin`); a longer bound would
        advisor.over_bound.add(ov)
    again = verify_advice(health, advisor, seconds=0.0)
    (h, *_) = [h for h in again.findings if h.rule == f.rule and h.numbers.get("try")]
    assert h.numbers["check_seconds"] == f.numbers["check_seconds"]


def test_after_the_search_each_finding_offers_the_best_shape_known_for_its_call(tmp_path):
    """Softmax at (1, 4, 1, 64): the rule of thumb's shape is faster (verified), the tile search's best is
    faster still; the finding then offers the search's best, with its figure, so one ranked list never
    has a worse shape above a better one (the panel's `rankAdvice` reads `numbers["gain"]`)."""
    from pypto.analysis.advice import best_gain

    path = _softmax_with(tmp_path, "1, 4, 1, 64")
    rep = make_report(load_module(path, "advice_rank_").softmax_kernel, suggest=True)
    assert rep.health is not None and rep.suggestions
    offering = [f for f in rep.health.findings if f.edits and f.numbers.get("try")]
    assert offering, "a finding offers a shape"
    top = rep.suggestions[0]
    for f in offering:
        gain = f.numbers["gain"]
        own = min(t["makespan_us"] for t in f.numbers["try"] if t["faster"])
        assert gain["makespan_us"] <= own  # never worse than its own proposal
        assert gain["speedup"] == pytest.approx(top.speedup) and gain["from"] == "search"
        assert [e.text for e in f.edits] == [e.text for e in top.edits] and gain["call"] == top.text
        assert f"{top.speedup:.2f}x faster" in f.suggestion and f.severity == "warning"
    assert best_gain(rep.health, rep.suggestions) == pytest.approx(top.speedup)
    # independently: the shape the finding offers, applied to the file, gives the figure it claims
    new_dims = top.text.split("(", 1)[1].rstrip(")")
    assert _makespan(_softmax_with(tmp_path, new_dims)) == pytest.approx(offering[0].numbers["gain"]["makespan_us"],
                                                                          rel=1e-6)


def test_a_warning_whose_every_shape_is_slower_is_info_with_the_figure(tmp_path):
    """At softmax's best tile the rules of thumb still fire, and the board finds their shapes slower: the
    observation stays, as info, saying what it ruled out; nothing is cut off mid-sentence."""
    path = _softmax_with(tmp_path, "1, 32, 1, 256")
    rep = make_report(load_module(path, "advice_refuted_").softmax_kernel)
    assert rep.health is not None
    refuted = [f for f in rep.health.findings if f.numbers.get("refuted")]
    assert refuted, "32 tasks on 48 cores: the low-parallelism rule proposes smaller tiles, which are slower"
    for f in refuted:
        assert f.severity == "info" and f.numbers["refuted"] == "warning" and not f.edits
        assert all(not t["faster"] for t in f.numbers["try"])
        assert f.suggestion.endswith("so at these shapes this costs no time that shape would win back")
    for f in rep.health.findings:
        assert not f.suggestion.endswith("shapes that are") and "pypto-ide" not in f.suggestion


def test_a_shape_is_faster_only_by_a_margin_worth_an_edit():
    """The findings' check and the search share one bar: 0.5 % of the makespan (gated delta rule's finding offered a
    shape at 7,986.03 µs against 7,986.15 as "1.00x")."""
    assert faster(7_900.0, 7_986.15) and not faster(7_986.03, 7_986.15) and not faster(None, 100.0)
    assert faster(99.49, 100.0) and not faster(99.5, 100.0) and not faster(100.0, 100.0)
