"""Reuse over stdio: an edit that leaves a kernel's traced program as it was — shared code it does not
call, a comment in it — gets that kernel's `recordChanged` with `reused: true` and the last record's
figures, while a kernel the edit reaches is compiled anew; a kernel whose advice is checked after its
record shows the reused record at once (interim) and its advice checked again; an undo reuses the answer
before the latest (docs/protocol.md, "Reused")."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

# `_rows` is shared code only `rows` calls: an edit there changes every kernel's key (code outside kernels),
# and only `rows`'s traced program
TWO = '''import pypto


def _rows():
    pypto.set_vec_tile_shapes(8, 128)


def _cols():
    pypto.set_vec_tile_shapes(32, 64)


@pypto.jit
def rows(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    _rows()
    out[:] = pypto.exp(x) + x


@pypto.jit
def cols(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    _cols()
    out[:] = pypto.exp(x) * x  # scaled
'''

TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


async def test_a_kernel_the_edit_does_not_reach_reuses_its_last_record(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "two.py", TWO)
    rows1 = await client.records.record(doc.uri, "rows", 1)
    cols1 = await client.records.record(doc.uri, "cols", 1)
    assert not rows1.get("reused") and not cols1.get("reused")
    v2 = doc.replace("set_vec_tile_shapes(8, 128)", "set_vec_tile_shapes(16, 128)")  # in `_rows`: both re-keyed
    rows2 = await client.records.record(doc.uri, "rows", v2)
    cols2 = await client.records.record(doc.uri, "cols", v2)
    assert not rows2.get("reused") and rows2["summary"]["tasks"] != rows1["summary"]["tasks"], "compiled anew"
    assert cols2["reused"] is True and cols2["summary"] == cols1["summary"]
    # a comment in the kernel: the same program, reused; its panels' data is there for the new version
    v3 = doc.replace("# scaled", "# scaled by x")
    cols3 = await client.records.record(doc.uri, "cols", v3)
    assert cols3["reused"] is True and cols3["summary"] == cols1["summary"] and cols3["error"] is None
    lane = await doc.call("pypto/swimlane", kernel="cols")
    assert lane["version"] == v3 and lane["totalTasks"] == cols1["summary"]["tasks"]
    # and an edit it does see is compiled anew
    v4 = doc.replace("set_vec_tile_shapes(32, 64)", "set_vec_tile_shapes(32, 128)")
    cols4 = await client.records.record(doc.uri, "cols", v4)
    assert not cols4.get("reused") and cols4["summary"]["tasks"] != cols1["summary"]["tasks"]
    # undone: the answer before the latest is reused
    v5 = doc.replace("set_vec_tile_shapes(32, 128)", "set_vec_tile_shapes(32, 64)")
    cols5 = await client.records.record(doc.uri, "cols", v5)
    assert cols5["reused"] is True and cols5["summary"] == cols1["summary"]


async def test_a_reused_record_is_shown_at_once_and_its_advice_checked_again(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "tail.py", TAIL)
    first = await client.records.record(doc.uri, "tail_vec", 1)
    assert first["bestGain"] is not None and not first.get("reused")
    v2 = doc.replace("pypto.exp(x)", "pypto.exp(x)  # e")
    early = await client.records.record(doc.uri, "tail_vec", v2, interim=True)
    final = await client.records.record(doc.uri, "tail_vec", v2)
    assert early["reused"] is True and early["bestGain"] is None and early["summary"] == first["summary"]
    assert final["reused"] is True and final["summary"] == first["summary"]
    assert final["bestGain"] == first["bestGain"], "the advice, checked again, is the same"
    assert early["seconds"] < final["seconds"]


async def test_opening_the_panels_after_a_compile_does_not_make_the_next_edit_compile_anew(client, lsp_kit, tmp_path):
    # the panels' record job ran with other settings than the kernel's compile; the next compile asks for the
    # panels' parts, which that job made from the same program: a comment edit is reused with them, and the
    # panels are answered without another job (each job imports the module, which says so)
    text = TWO.replace("import pypto\n", "import pypto\nprint('imported')\n", 1)
    doc = lsp_kit.Doc(client, tmp_path / "two.py", text)
    jobs = lambda: sum("two.py cols printed:" in m.message for m in client.log_messages)  # noqa: E731
    first = await client.records.record(doc.uri, "cols", 1)
    assert not first.get("reused")
    opened = await doc.call("pypto/record", kernel="cols")  # the panels open: the record's own job
    assert opened["record"]["run"] is not None and jobs() == 2
    v2 = doc.replace("# scaled", "# scaled by x")
    again = await client.records.record(doc.uri, "cols", v2)
    assert again["reused"] is True and again["summary"] == first["summary"]
    got = await doc.call("pypto/record", kernel="cols")
    assert got["version"] == v2 and got["record"]["run"] == opened["record"]["run"]
    graph = await doc.call("pypto/pass", kernel="cols", index=0)
    assert graph["version"] == v2
    assert jobs() == 3, "the edit's job only: the panels' parts came with its reused answer"
