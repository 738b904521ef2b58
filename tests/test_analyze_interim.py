"""The worker's interim answer (`server.analyze`, setting `interim`) holds everything the panels read —
record, columns, editor view, pass graphs, listings — and the final answer leaves exactly those out
(`INTERIM`): the language server answers graph, pass and block requests from the interim result."""

from __future__ import annotations

from pathlib import Path

from server import analyze

TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


def test_the_interim_answer_has_what_the_panels_read_and_the_final_one_the_rest(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "tail.py"
    path.write_text(TAIL)
    sent: list[dict] = []
    monkeypatch.setattr(analyze, "progress", sent.append)
    opts = {"editor": True, "report": True, "record": True, "snapshots": True, "listings": True, "interim": True}
    final = analyze.analyze_kernel(str(path), TAIL, "tail_vec", opts)
    (early,) = [d["interim"] for d in sent if "interim" in d]
    assert final["error"] is None and final["interim_sent"] is True
    for key in analyze.INTERIM:
        assert early.get(key) is not None, key
        assert key not in final, key
    held = [f for f in early["health"]["findings"] if f["rule"] == "tile.tail-waste"]
    checked = [f for f in final["health"]["findings"] if f["rule"] == "tile.tail-waste"]
    assert held and not held[0]["edits"] and "being simulated" in held[0]["suggestion"]
    assert checked and checked[0]["edits"] and "faster" in checked[0]["suggestion"]


def test_a_job_for_the_panels_record_checks_no_advice_and_offers_none_unchecked(tmp_path: Path, monkeypatch) -> None:
    """The language server's record job (`check_advice: False`): the record and listings, no sim-board check
    of the findings' tile shapes (the kernel's own compile made it), and so no shape offered."""
    path = tmp_path / "tail.py"
    path.write_text(TAIL)
    import pypto.analysis.advice as advice

    def refuse(*args, **kwargs):
        raise AssertionError("the record's job checked tile shapes")

    monkeypatch.setattr(advice, "verify_advice", refuse)
    opts = {"report": True, "record": True, "snapshots": True, "listings": True, "check_advice": False}
    out = analyze.analyze_kernel(str(path), TAIL, "tail_vec", opts)
    assert out["error"] is None and out["record"] is not None and out["listings"]
    held = [f for f in out["health"]["findings"] if f["rule"] == "tile.tail-waste"]
    assert held and not held[0]["edits"]
