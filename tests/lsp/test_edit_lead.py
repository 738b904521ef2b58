"""An edit of shared code recompiles every kernel that reads it, and the one the user is tuning runs alone until its
record is in (`server.live`): with two workers the small kernel beside it would otherwise finish first and take
half the machine while the big one compiles."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "workers": 2}

SRC = '''import pypto

SCALE = 2.0


@pypto.jit
def big(x: pypto.Tensor([512, 1024], pypto.DT_FP32), out: pypto.Tensor([512, 1024], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 128)
    out[:] = pypto.exp(x * SCALE) + x


@pypto.jit
def small(x: pypto.Tensor([32, 128], pypto.DT_FP32), out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 128)
    out[:] = x * SCALE
'''


async def test_the_kernel_the_panels_show_records_before_its_small_sibling_starts(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "two.py", SRC)
    for name in ("big", "small"):
        await client.records.record(doc.uri, name, 1)
    await doc.call("pypto/record", kernel="big")  # the panels show `big`
    n = len(client.records.items)
    v = doc.replace("SCALE = 2.0", "SCALE = 3.0")  # shared code both read: both recompile
    for name in ("big", "small"):
        await client.records.record(doc.uri, name, v)
    firsts = list(dict.fromkeys(r["kernel"] for r in client.records.items[n:] if r["version"] == v))
    assert firsts == ["big", "small"], firsts
    assert not any(r.get("reused") for r in client.records.items[n:]), "both traces changed: compiled anew"
