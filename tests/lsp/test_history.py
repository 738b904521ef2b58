"""The compile history and the pinned baseline over the protocol (`pypto/history`,
`pypto/pinBaseline`, `pypto/record`'s `baseline`): every compile is kept on disk under the
workspace's `.pypto/`, a pinned run comes back with the record (to draw beside the current
one), and both outlive the server (a fresh `History` on the same folder reads them)."""

from __future__ import annotations

import json

import pytest

from server.history import History

K = "softmax_kernel"


@pytest.mark.asyncio(loop_scope="module")
async def test_compiles_are_kept_and_a_pinned_run_comes_back_with_the_record(client, lsp_kit, tmp_path):
    doc, first = await lsp_kit.open_softmax(client, tmp_path, "hist.py")
    got = await doc.call("pypto/history", kernel=K)
    assert [e["version"] for e in got["entries"]] == [first["version"]] and got["baseline"] is None
    before = got["entries"][0]
    assert before["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])  # entries are stored as written
    assert before["board"] == "sim" and before["tile_calls"][0]["dims"] == [1, 4, 1, 64]
    pinned = await doc.call("pypto/pinBaseline", kernel=K, pin=True)
    assert pinned["baseline"] is not None and pinned["baseline"]["version"] == first["version"]
    # an edit that changes the run: a second entry; the record carries the baseline's run
    v = doc.replace("set_vec_tile_shapes(1, 4, 1, 64)", "set_vec_tile_shapes(1, 8, 1, 128)")
    second = await client.records.record(doc.uri, K, v)
    assert second["summary"]["makespanUs"] != first["summary"]["makespanUs"]
    got = await doc.call("pypto/history", kernel=K)
    assert [e["version"] for e in got["entries"]] == [first["version"], v]
    rec = await doc.call("pypto/record", kernel=K)
    assert rec["baseline"]["entry"]["version"] == first["version"]
    report = await doc.call("pypto/report", kernel=K)  # the health panel's figure to compare with
    assert report["baseline"]["makespan_us"] == pytest.approx(first["summary"]["makespanUs"])
    assert [e["version"] for e in report["history"]] == [first["version"], v]  # the shapes tried
    assert rec["baseline"]["run"]["tasks"] and rec["record"]["run"] != rec["baseline"]["run"]
    # on disk, where a restarted server finds it
    h = History(tmp_path)
    assert len(h.entries(str(doc.path), K)) == 2 and h.baseline(str(doc.path), K) is not None
    unpinned = await doc.call("pypto/pinBaseline", kernel=K, pin=False)
    assert unpinned["baseline"] is None and (await doc.call("pypto/record", kernel=K))["baseline"] is None
    doc.close()


def test_the_history_is_bounded_and_a_corrupt_file_is_not_fatal(tmp_path):
    h = History(tmp_path)
    path = str(tmp_path / "k.py")
    for i in range(300):
        h.append(path, "k", {"version": i, "makespan_us": float(i)})
    kept = h.entries(path, "k")
    assert len(kept) == 200 and kept[-1]["version"] == 299 and kept[0]["version"] == 100
    h.append(path, "k", {"version": 300, "makespan_us": 299.0})  # the same run again (a save): not added
    assert h.entries(path, "k")[-1]["version"] == 299
    h.append(path, "k", {"version": 300, "makespan_us": 300.0})  # a different run: added
    assert h.entries(path, "k")[-1]["version"] == 300
    files = list((tmp_path / ".pypto" / "history").glob("*.jsonl"))
    files[0].write_text(files[0].read_text() + "{not json\n")
    assert h.entries(path, "k")[-1]["version"] == 300  # the bad line is skipped
    h.pin(path, "k", {"version": 1}, {"tasks": []})
    base = next((tmp_path / ".pypto" / "history").glob("*.baseline.json"))
    base.write_text("{truncated")
    assert h.baseline(path, "k") is None and not base.exists()
    assert list((tmp_path / ".pypto" / "history").glob("*.corrupt"))
    assert json.loads(json.dumps(h.entries(path, "k")))  # plain JSON
