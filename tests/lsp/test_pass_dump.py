"""`pypto/passDump` and `pypto/passDumpPass` (docs/protocol.md): a PyPTO 3 `passes_dump/` folder read by the
language server for the passes panel and other clients — through a real client over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from server.protocol import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

DUMP = Path(__file__).parents[1] / "data" / "pypto3_passes" / "app" / "build_output" / "RowScale_20261128_101500" \
    / "passes_dump"
KERNEL = DUMP.parents[2] / "rowscale.py"


async def test_pass_dump_and_one_pass(client, tmp_path):
    send = client.protocol.send_request_async
    table = plain(await send("pypto/passDump", {"path": str(DUMP / "04_after_FoldScalarOps.py")}))
    assert table["program"] == "RowScale" and table["path"] == str(DUMP)
    assert [(s["index"], s["changed"]) for s in table["snapshots"]] == [
        (0, None), (1, True), (2, True), (3, False), (4, True)]
    assert table["source"]["file"] == str(KERNEL.resolve())
    one = plain(await send("pypto/passDumpPass", {"path": str(DUMP), "index": 2}))
    assert one["name"] == "OutlineIncoreScopes" and one["diff"]["added"] == 13
    assert {f["name"]: f["source"]["how"] for f in one["functions"]}["scale_rows"] == "scope"
    given = plain(await send("pypto/passDumpPass", {"path": str(DUMP), "index": 4, "source": str(KERNEL)}))
    assert given["source"]["how"] == "given"
    with pytest.raises(JsonRpcException, match="no snapshot 08"):
        await send("pypto/passDumpPass", {"path": str(DUMP), "index": 8})
    with pytest.raises(JsonRpcException, match="no 00_frontend.py or NN_after_<Pass>.py snapshots"):
        await send("pypto/passDump", {"path": str(tmp_path)})
    with pytest.raises(JsonRpcInvalidParams, match="index"):
        await send("pypto/passDumpPass", {"path": str(DUMP), "index": "2"})
