"""The kernel an edit is in does not wait for background work: with the one worker busy compiling another kernel
of the file (for seconds), the edit's compile runs at once on the spare worker (`server.slots`)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "workers": 1, "timeLimit": 60}

SRC = '''import time

import pypto


@pypto.jit
def fast(x: pypto.Tensor([32, 128], pypto.DT_FP32), out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * 2.0


@pypto.jit
def slow(x: pypto.Tensor([32, 128], pypto.DT_FP32), out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    time.sleep(20)  # a kernel whose compile takes a while
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * 3.0
'''


async def test_an_edits_compile_does_not_wait_for_another_kernels(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "two.py", SRC)
    first = await client.records.record(doc.uri, "fast", 1)
    assert first["error"] is None
    v = doc.replace("    pypto.set_vec_tile_shapes(16, 64)\n    out[:] = x * 2.0",
                    "    pypto.set_vec_tile_shapes(8, 64)\n    out[:] = x * 2.0")  # in `fast`: it alone recompiles
    edited = await client.records.record(doc.uri, "fast", v)
    assert edited["error"] is None and edited["summary"]["tasks"] == 2 * first["summary"]["tasks"]
    assert not any(r["kernel"] == "slow" for r in client.records.items if r["uri"] == doc.uri), \
        "the edit waited for the other kernel's compile"
    doc.close()  # (its compile is cancelled)
