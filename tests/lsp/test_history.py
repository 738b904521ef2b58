"""The compile history and the pinned baseline over the protocol (`pypto/history`,
`pypto/historyRun`, `pypto/pinBaseline`, `pypto/record`'s and `pypto/report`'s `baseline` and
`history`): every compile is kept on disk under `.pypto/history/` with its figures, its tile calls
as written and (for the newest) its swimlane; the current run or any kept entry can be pinned and
comes back with the record; unpinning drops it; a second server started on the same folder finds
it all (a restart); bad requests are InvalidParams and bad files are set aside, never fatal.
`server.history` itself: the bounds (entries, runs) and the set-aside files."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from server import history as H
from server.history import History

K = "softmax_kernel"


@pytest.mark.asyncio(loop_scope="module")
async def test_compiles_are_kept_and_a_pinned_run_comes_back_with_the_record(client, lsp_kit, tmp_path):
    doc, first = await lsp_kit.open_softmax(client, tmp_path, "hist.py")
    got = await doc.call("pypto/history", kernel=K)
    assert [e["version"] for e in got["entries"]] == [first["version"]] and got["baseline"] is None
    before = got["entries"][0]
    assert before["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])  # entries are stored as written
    assert before["board"] == "sim" and before["has_run"] is True
    assert before["tile_calls"] == [{"kind": "vec", "dims": [1, 4, 1, 64], "line": 11,
                                     "text": "pypto.set_vec_tile_shapes(1, 4, 1, 64)"}]
    assert before["source_sha256"] == H.sha256(doc.text)
    pinned = await doc.call("pypto/pinBaseline", kernel=K, pin=True)
    assert pinned["baseline"]["id"] == before["id"] and len(pinned["entries"]) == 1  # pinning adds no entry
    # an edit that changes the run: a second entry; the record carries the baseline's run and the history
    v = doc.replace("set_vec_tile_shapes(1, 4, 1, 64)", "set_vec_tile_shapes(1, 8, 1, 128)")
    second = await client.records.record(doc.uri, K, v)
    assert second["summary"]["makespanUs"] != first["summary"]["makespanUs"]
    got = await doc.call("pypto/history", kernel=K)
    assert [e["version"] for e in got["entries"]] == [first["version"], v]
    assert got["entries"][1]["id"] > before["id"]
    assert got["entries"][1]["tile_calls"][0]["text"] == "pypto.set_vec_tile_shapes(1, 8, 1, 128)"
    rec = await doc.call("pypto/record", kernel=K)
    assert rec["baseline"]["entry"]["version"] == first["version"]
    assert [e["id"] for e in rec["history"]] == [e["id"] for e in got["entries"]]
    assert rec["baseline"]["run"]["tasks"] and rec["record"]["run"] != rec["baseline"]["run"]
    assert rec["baseline"]["run"]["metrics"]["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])
    report = await doc.call("pypto/report", kernel=K)  # the health panel's figure to compare with
    assert report["baseline"]["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])
    assert [e["version"] for e in report["history"]] == [first["version"], v]  # the shapes tried
    # any kept run can be drawn again: the first compile's is the baseline's
    old = await doc.call("pypto/historyRun", kernel=K, entry=before["id"])
    assert old["entry"]["id"] == before["id"] and old["run"] == rec["baseline"]["run"]
    # pin another entry (the second compile): the baseline is that one, with its run
    await doc.call("pypto/pinBaseline", kernel=K, pin=True, entry=got["entries"][1]["id"])
    rec = await doc.call("pypto/record", kernel=K)
    assert rec["baseline"]["entry"]["version"] == v and rec["baseline"]["run"] == rec["record"]["run"]
    # on disk, where a restarted server finds it
    h = History(tmp_path)
    assert len(h.entries(str(doc.path), K)) == 2 and h.baseline(str(doc.path), K) is not None
    unpinned = await doc.call("pypto/pinBaseline", kernel=K, pin=False)
    assert unpinned["baseline"] is None and (await doc.call("pypto/record", kernel=K))["baseline"] is None
    assert (await doc.call("pypto/report", kernel=K))["baseline"] is None
    doc.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_run_the_panels_draw_by_its_figures_is_kept_by_its_figures(client, lsp_kit, tmp_path):
    """Above 5,000 tasks the panels draw a baseline or an older compile by its figures only (`panel_run`): the
    language server keeps it so, on disk too — its 10^6 arrows were written for nothing, and each pypto/record's
    read of the baseline waited behind that write on the history thread."""
    from support import softmax_source

    from server.panel_data import PANEL_TASKS

    doc = lsp_kit.Doc(client, tmp_path / "long.py", softmax_source(640, "long"))
    first = await client.records.record(doc.uri, "long", 1)
    assert first["error"] is None and first["summary"]["tasks"] > PANEL_TASKS
    await doc.call("pypto/pinBaseline", kernel="long", pin=True)
    got = await doc.call("pypto/history", kernel="long")
    entry = got["entries"][0]
    old = await doc.call("pypto/historyRun", kernel="long", entry=entry["id"])
    assert "tasks" not in old["run"] and old["run"]["omitted"]["tasks"] == first["summary"]["tasks"]
    assert old["run"]["metrics"]["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])
    h = History(tmp_path)  # on disk: the figures, not the tasks
    kept = h.run(str(doc.path), "long", entry["id"])[1]
    base = h.baseline(str(doc.path), "long")
    assert kept is not None and "tasks" not in kept and base is not None and "tasks" not in base["run"]
    doc.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_requests_are_invalid_params(client, lsp_kit, tmp_path):
    doc, _ = await lsp_kit.open_softmax(client, tmp_path, "bad.py")
    with pytest.raises(JsonRpcInvalidParams) as e:
        await doc.call("pypto/historyRun", kernel=K, entry=999)
    assert "no history entry 999" in e.value.message
    with pytest.raises(JsonRpcInvalidParams) as e:
        await doc.call("pypto/pinBaseline", kernel=K, pin=True, entry=999)
    assert "no history entry 999" in e.value.message
    with pytest.raises(JsonRpcInvalidParams) as e:
        await doc.call("pypto/pinBaseline", kernel=K, pin="yes")
    assert "pin" in e.value.message.lower()
    with pytest.raises(JsonRpcInvalidParams) as e:
        await doc.call("pypto/historyRun", kernel=K, entry="first")
    assert "entry" in e.value.message.lower()
    with pytest.raises(JsonRpcInvalidParams) as e:
        await doc.call("pypto/history", kernel="nope")
    assert "no kernel 'nope'" in e.value.message
    assert (await doc.call("pypto/history", kernel=K))["baseline"] is None  # nothing was pinned meanwhile
    doc.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_corrupt_history_file_is_set_aside_and_the_server_goes_on(client, lsp_kit, tmp_path):
    doc, _ = await lsp_kit.open_softmax(client, tmp_path, "corrupt.py")
    await doc.call("pypto/pinBaseline", kernel=K, pin=True)
    folder = tmp_path / ".pypto" / "history"
    lines = next(folder.glob("corrupt.*.jsonl"))
    lines.write_bytes(lines.read_bytes() + b'{"torn": tr\n\xff\xfe not text\n')
    base = next(folder.glob("corrupt.*.baseline.json.gz"))
    base.write_bytes(b"\x1f\x8b truncated")
    got = await doc.call("pypto/history", kernel=K)
    assert len(got["entries"]) == 0 and got["baseline"] is None  # not UTF-8: set aside whole
    assert (folder / (lines.name + ".corrupt")).exists() and (folder / (base.name + ".corrupt")).exists()
    # the next compile starts a new history with a fresh id
    v = doc.replace("set_vec_tile_shapes(1, 4, 1, 64)", "set_vec_tile_shapes(1, 8, 1, 128)")
    await client.records.record(doc.uri, K, v)
    got = await doc.call("pypto/history", kernel=K)
    assert [e["version"] for e in got["entries"]] == [v] and got["entries"][0]["id"] > 1
    assert (await doc.call("pypto/record", kernel=K))["baseline"] is None
    doc.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_history_and_the_baseline_survive_a_restart(client, lsp_kit, tmp_path):
    doc, first = await lsp_kit.open_softmax(client, tmp_path, "restart.py")
    v = doc.replace("set_vec_tile_shapes(1, 4, 1, 64)", "set_vec_tile_shapes(1, 8, 1, 128)")
    await client.records.record(doc.uri, K, v)
    entries = (await doc.call("pypto/history", kernel=K))["entries"]
    await doc.call("pypto/pinBaseline", kernel=K, pin=True, entry=entries[0]["id"])
    doc.save()
    doc.close()
    # a new server process on the same folder
    other = lsp_kit.make_client()
    await other.start_io(sys.executable, "-m", "server")
    try:
        await other.initialize_session(lsp.InitializeParams(
            capabilities=lsp_kit.CAPABILITIES, workspace_folders=[lsp.WorkspaceFolder(tmp_path.as_uri(), "tmp")]))
        again = lsp_kit.Doc(other, Path(doc.path), doc.text)
        await other.records.record(again.uri, K, 1)
        got = await again.call("pypto/history", kernel=K)
        # the recompile of the saved text made the same run as the last entry: nothing added
        assert [e["id"] for e in got["entries"]] == [e["id"] for e in entries]
        assert got["baseline"]["id"] == entries[0]["id"]
        rec = await again.call("pypto/record", kernel=K)
        assert rec["baseline"]["run"]["metrics"]["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])
        await other.shutdown_session()
    finally:
        await other.stop()


def _line(i: int, makespan: float | None = None) -> dict:
    return {"time": 1764028800.0 + i, "version": i, "makespan_us": float(i) if makespan is None else makespan}


def test_the_history_is_bounded_and_keeps_the_newest_runs(tmp_path, monkeypatch):
    h = History(tmp_path)
    path = str(tmp_path / "k.py")
    run = json.dumps({"tasks": {"id": list(range(50))}, "lanes": []}).encode()
    for i in range(300):
        h.append(path, "k", _line(i), run)
    kept = h.entries(path, "k")
    assert len(kept) == H.LIMIT and kept[-1]["version"] == 299 and kept[0]["version"] == 100
    assert [e["id"] for e in kept] == list(range(101, 301))
    with_runs = [e["version"] for e in kept if e["has_run"]]
    assert with_runs == list(range(300 - H.RUNS_KEPT, 300))  # the newest runs only
    assert len(list((tmp_path / ".pypto" / "history").glob("k.k-*.runs/*.json.gz"))) == H.RUNS_KEPT
    assert h.append(path, "k", _line(300, 299.0))["id"] == 300  # the same run again (a save): not added
    assert h.entries(path, "k")[-1]["version"] == 299
    assert h.append(path, "k", _line(300))["id"] == 301  # a different run: added
    entry, got = h.run(path, "k", 290)
    assert entry["version"] == 289 and got == json.loads(run)
    assert h.run(path, "k", 150)[1] is None  # its figures only
    with pytest.raises(H.UnknownEntry, match="no history entry 5 "):
        h.run(path, "k", 5)
    # all the runs together are bounded too
    monkeypatch.setattr(H, "RUNS_MAX_BYTES", 3 * len(gzip.compress(run, 1)))
    h.append(path, "k", _line(302), run)
    assert sum(e["has_run"] for e in h.entries(path, "k")) == 3


def test_the_baseline_keeps_its_run_after_the_history_forgets_it(tmp_path):
    h = History(tmp_path)
    path = str(tmp_path / "k.py")
    run = json.dumps({"tasks": {"id": [0]}, "lanes": [], "metrics": {"makespan_us": 1.0}}).encode()
    first = h.pin(path, "k", _line(1), run)
    assert first["id"] == 1 and h.baseline(path, "k")["run"] == json.loads(run)
    for i in range(2, H.RUNS_KEPT + 5):
        h.append(path, "k", _line(i), run)
    assert not h.entries(path, "k")[0]["has_run"]
    assert h.baseline(path, "k")["run"] == json.loads(run)  # a copy, beside the history
    # pinning an entry whose run is gone keeps its figures
    assert h.pin_entry(path, "k", 1)["version"] == 1
    assert h.baseline(path, "k") == {"entry": {**_line(1), "id": 1}, "run": None}
    assert h.unpin(path, "k") and h.baseline(path, "k") is None and not h.unpin(path, "k")


def test_corrupt_files_are_set_aside_not_fatal(tmp_path):
    h = History(tmp_path)
    path = str(tmp_path / "k.py")
    run = b'{"tasks": {"id": [0]}, "lanes": []}'
    for i in range(1, 4):
        h.append(path, "k", _line(i), run)
    folder = tmp_path / ".pypto" / "history"
    lines = next(folder.glob("*.jsonl"))
    # a torn line, a line that is JSON but no entry, an entry with a mistyped figure
    lines.write_text(lines.read_text() + '{"id": 9, "vers\n[1, 2]\n'
                     '{"id": 8, "version": 1, "time": 1, "makespan_us": "x"}\n')
    assert [e["id"] for e in h.entries(path, "k")] == [1, 2, 3]  # the readable lines are kept
    assert (folder / (lines.name + ".corrupt")).read_text().count("\n") == 6  # the file as it was
    assert [e["id"] for e in h.entries(path, "k")] == [1, 2, 3] and len(lines.read_text().splitlines()) == 3
    assert h.append(path, "k", _line(4))["id"] == 4
    # a run that is not gzip: set aside, its entry keeps its figures
    bad = next(folder.glob("*.runs/2.json.gz"))
    bad.write_bytes(b"not gzip")
    assert h.run(path, "k", 2) == ({**_line(2), "id": 2, "has_run": True}, None)
    assert not bad.exists() and bad.with_name(bad.name + ".corrupt").exists()
    # a baseline that is gzip but not a baseline document
    h.pin_entry(path, "k", 3)
    base = next(folder.glob("*.baseline.json.gz"))
    base.write_bytes(gzip.compress(b'{"entry": {"id": "three"}, "run": null}'))
    assert h.baseline(path, "k") is None and not base.exists()
    # once the whole file is set aside, new ids start past the kept runs' and no stale run is taken
    lines.write_bytes(b"\xff\xfe")
    assert h.entries(path, "k") == []
    stale = folder / next(folder.glob("*.runs")).name / "4.json.gz"
    stale.write_bytes(gzip.compress(run))
    assert h.append(path, "k", _line(5))["id"] == 5 and not stale.exists()
    assert h.entries(path, "k") == [{**_line(5), "id": 5, "has_run": False}]


def test_an_unwritable_folder_is_a_history_error(tmp_path):
    (tmp_path / ".pypto").write_text("a file where the folder should be")
    h = History(tmp_path)
    with pytest.raises(H.HistoryError, match="cannot write the compile history"):
        h.append(str(tmp_path / "k.py"), "k", _line(1))
    assert h.entries(str(tmp_path / "k.py"), "k") == [] and h.baseline(str(tmp_path / "k.py"), "k") is None


def test_tile_calls_carry_their_text_as_written():
    text = "x = 1\n    pypto.set_cube_tile_shapes([16, 16],\n        [32, 32], [64, 64])  # shapes\n"
    calls = H.tile_calls([{"kind": "cube", "dims": [[16, 16]], "loc": [{"line": 2, "col": 4, "end_line": 3,
                                                                        "end_col": 27}]},
                          {"kind": "vec", "dims": [8], "span": None}], text)
    assert calls == [{"kind": "cube", "dims": [[16, 16]], "line": 2,
                      "text": "pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])"},
                     {"kind": "vec", "dims": [8], "line": None, "text": None}]


def test_a_run_kept_as_arrays_is_written_as_its_lists():
    """`run_json` writes a run whose lists of lists the server holds as arrays (`ArrayLists`) as those lists."""
    import numpy as np

    from pypto.ir.columns import ArrayLists

    rows = [[1, 2], [], [3], [4, 5, 6], [7]]
    held = ArrayLists(np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.int16), np.array([0, 2, 2, 3, 6, 7]))
    run = {"tasks": {"preds": held, "id": list(range(5))}, "info": {"board": "sim"}}
    assert json.loads(H.run_json(run)) == {"tasks": {"preds": rows, "id": list(range(5))}, "info": {"board": "sim"}}
