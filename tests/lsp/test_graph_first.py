"""The tensor graph first: a kernel with no record yet whose tile expansion makes `graphFirstFrom` tile ops or more is
sent as its tensor stage's record while it lowers (`recordChanged` interim, `lowering`, no summary), then as its whole
record; a kernel with a record keeps it shown until the new one comes (docs/protocol.md, "The tensor graph first")."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"graphFirstFrom": 1}  # every kernel is big enough here

SRC = '''import pypto


@pypto.jit
def scale_exp(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.exp(x) * 2.0
'''


async def test_an_opened_kernel_shows_its_tensor_graph_while_it_lowers_then_its_record(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "first.py", SRC)
    final = await client.records.record(doc.uri, "scale_exp", 1)
    mine = [r for r in client.records.items if r["uri"] == doc.uri]
    first = mine[0]
    assert first["interim"] and first["summary"] is None and first["error"] is None
    # the tile ops its expansion made: this kernel's partition inserts no copy, so the record's count
    assert first["lowering"] == final["summary"]["tileOps"] > 0
    assert [r.get("lowering") for r in mine[1:]] == [None] * (len(mine) - 1)
    # an edit: the record shown stays until the new one comes, with no tensor graph in between
    edited = doc.replace("set_vec_tile_shapes(8, 64)", "set_vec_tile_shapes(16, 64)")
    again = await client.records.record(doc.uri, "scale_exp", edited)
    assert again["summary"]["tileOps"] < final["summary"]["tileOps"]
    assert not [r for r in client.records.items if r["uri"] == doc.uri and r["version"] >= edited and r.get("lowering")]
