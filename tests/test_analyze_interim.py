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


def test_once_the_interim_answer_is_sent_the_job_does_not_hold_its_record_while_it_checks_the_advice(
        tmp_path: Path, monkeypatch) -> None:
    """The advice's check compiles candidates as big as the kernel (glm's fused attention: 2.1 M tile ops each); the
    record document, its columns and the views it sent are let go before it (that kernel's open: a 6.1 -> 5.7 GB
    peak). Seen on the columns' bytes: while the advice is checked, only this test holds them."""
    import sys

    import pypto.analysis.advice as advice

    path = tmp_path / "tail.py"
    path.write_text(TAIL)
    columns: list[bytes] = []

    def keep_columns(data: dict) -> None:
        if "interim" in data:
            columns.append(data["interim"]["record_columns"])

    held: list[int] = []
    check = advice.verify_advice

    def counting(*args, **kwargs):
        held.append(sys.getrefcount(columns[0]))  # this list's reference and the call's argument: 2
        return check(*args, **kwargs)

    monkeypatch.setattr(analyze, "progress", keep_columns)
    monkeypatch.setattr(advice, "verify_advice", counting)
    opts = {"editor": True, "report": True, "record": True, "snapshots": True, "listings": True, "interim": True}
    final = analyze.analyze_kernel(str(path), TAIL, "tail_vec", opts)
    assert final["error"] is None and final["interim_sent"] is True
    assert held == [2]



def test_the_views_are_made_before_the_columns_bytes(tmp_path: Path, monkeypatch) -> None:
    """A job's peak holds the record's column arrays with the views' own work, or the arrays with their .npz bytes,
    never all three (glm's fused attention, 2.1 M tile ops: ~0.4 GB, which its memory cap had stopped it for)."""
    from pypto.ir import columns

    path = tmp_path / "tail.py"
    path.write_text(TAIL)
    order: list[str] = []
    views, npz_bytes = analyze._views, columns.npz_bytes

    def made_views(*args, **kwargs):  # type: ignore[no-untyped-def]
        order.append("views")
        return views(*args, **kwargs)

    def made_bytes(arrays):  # type: ignore[no-untyped-def]
        order.append("npz")
        return npz_bytes(arrays)

    monkeypatch.setattr(analyze, "_views", made_views)
    monkeypatch.setattr(columns, "npz_bytes", made_bytes)
    opts = {"editor": True, "record": True, "snapshots": True, "listings": True}
    answer = analyze.analyze_kernel(str(path), TAIL, "tail_vec", opts)
    assert answer["error"] is None and answer["record_columns"] and answer["editor"]
    assert order == ["views", "npz"]
