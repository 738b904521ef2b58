"""The kernel being edited compiles first: with one worker, an edit in a file's shared code recompiles every
kernel, nearest the edit first (a production file holds several kernels of seconds each; the one the user
is tuning should not wait behind the others)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "workers": 1}


def _kernel(name: str, scale: str) -> str:
    return f'''

@pypto.jit
def {name}(x: pypto.Tensor([32, 128], pypto.DT_FP32), out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * {scale}
'''


SRC = "import pypto\n\nFIRST = 2.0\n" + _kernel("first", "FIRST") + _kernel("second", "SECOND") + \
    _kernel("third", "THIRD") + "\n\nSECOND = 3.0\nTHIRD = 4.0\n"


async def test_an_edit_near_the_last_kernel_compiles_it_first(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "three.py", SRC)
    for name in ("first", "second", "third"):
        await client.records.record(doc.uri, name, 1)
    n = len(client.records.items)
    v = doc.replace("THIRD = 4.0", "THIRD = 5.0")  # outside every kernel: all three recompile
    for name in ("first", "second", "third"):
        await client.records.record(doc.uri, name, v)
    order = [r["kernel"] for r in client.records.items[n:] if r["version"] == v and not r.get("interim")]
    assert order == ["third", "second", "first"], order
    v = doc.replace("    out[:] = x * SECOND", "    out[:] = x * SECOND + 1.0")  # inside `second`: it alone
    second = await client.records.record(doc.uri, "second", v)
    assert second["error"] is None


async def test_after_the_edited_kernel_the_one_the_panels_show_compiles_first(client, lsp_kit, tmp_path):
    """The panels asked for `first`'s record: an edit beside `third` recompiles all three, `first` right
    after none (no kernel holds the edit), though it is the farthest."""
    doc = lsp_kit.Doc(client, tmp_path / "watched.py", SRC)
    for name in ("first", "second", "third"):
        await client.records.record(doc.uri, name, 1)
    await doc.call("pypto/record", kernel="first")
    n = len(client.records.items)
    v = doc.replace("THIRD = 4.0", "THIRD = 6.0")
    for name in ("first", "second", "third"):
        await client.records.record(doc.uri, name, v)
    order = [r["kernel"] for r in client.records.items[n:] if r["version"] == v and not r.get("interim")]
    assert order == ["first", "third", "second"], order


async def test_the_panels_record_does_not_wait_behind_the_files_other_compiles(client, lsp_kit, tmp_path):
    """A file of five kernels opens: their compiles queue for the one worker. The panels ask for the first
    kernel's record as it arrives: its job takes the worker next (`server.slots`), not after the other four."""
    from support import softmax_source

    names = [f"k{i}" for i in range(5)]
    src = "import pypto\n" + "".join(softmax_source(32, n).replace("import pypto\n", "", 1) for n in names)
    doc = lsp_kit.Doc(client, tmp_path / "five.py", src)
    first = await client.records.record(doc.uri, "k0", 1)
    assert first["error"] is None
    got = await doc.call("pypto/record", kernel="k0")
    assert got["record"]["source"]["kernel"] == "k0"
    shown = {r["kernel"] for r in client.records.items if r["uri"] == doc.uri and r["kernel"] != "k0"}
    assert len(shown) <= 2, f"the record came after {sorted(shown)}"  # (first come, first served: after all four)
    for name in names[1:]:
        assert (await client.records.record(doc.uri, name, 1))["error"] is None
