"""The kernel an edit is in does not wait for background work: with the one worker busy compiling another kernel
of the file (for seconds), the edit's compile runs at once on the spare worker (`server.slots`)."""

from __future__ import annotations

import asyncio
import os

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


PROCFS = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="Linux's /proc/<pid>/stat: a state")
FAST = SRC[SRC.index("@pypto.jit\ndef fast"):SRC.index("@pypto.jit\ndef slow")]  # (its own `fast`, as above)
# The background compile says where it runs; the edited kernel's compile, a job a person waits for, checks from
# inside that the other is stopped meanwhile (SIGSTOP: `server.worker`, "Background work yields").
STOPS = '''import os
import time

import pypto

PIDFILE = {pidfile!r}


def the_other_is_stopped():  # what the first trace of the edited kernel saw (its advice's traces come after)
    if os.path.exists(PIDFILE + ".seen"):
        return
    pid = int(open(PIDFILE).read())
    seen = "running"
    for _ in range(1000):
        with open(f"/proc/{{pid}}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                seen = "stopped"
                break
        time.sleep(0.01)
    with open(PIDFILE + ".seen", "w") as f:
        f.write(seen)


''' + FAST + '''@pypto.jit
def slow(x: pypto.Tensor([32, 128], pypto.DT_FP32), out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    with open(PIDFILE + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(PIDFILE + ".tmp", PIDFILE)
    time.sleep(20)  # a kernel whose compile takes a while
    out[:] = x * 3.0

'''


@PROCFS
async def test_background_compiles_are_stopped_while_an_edits_compile_runs(client, lsp_kit, tmp_path):
    pidfile = tmp_path / "slow.pid"
    doc = lsp_kit.Doc(client, tmp_path / "stops.py", STOPS.format(pidfile=str(pidfile)))
    assert (await client.records.record(doc.uri, "fast", 1))["error"] is None
    for _ in range(3000):  # the other kernel's compile has started (its job wrote where it runs)
        if pidfile.exists():
            break
        await asyncio.sleep(0.01)
    assert pidfile.exists(), "the other kernel's compile did not start"
    v = doc.replace("    pypto.set_vec_tile_shapes(16, 64)\n    out[:] = x * 2.0",  # (slow keeps its line: its key)
                    "    pypto.set_vec_tile_shapes(8, 64); the_other_is_stopped()\n    out[:] = x * 2.0")
    edited = await client.records.record(doc.uri, "fast", v)
    assert edited["error"] is None, edited["error"]
    assert (tmp_path / "slow.pid.seen").read_text() == "stopped"  # and not ran on beside it (10 s looked at)
    doc.close()  # (its compile is cancelled)


@PROCFS
async def test_a_file_just_opened_stops_the_background_compiles_of_one_opened_before(client, lsp_kit, tmp_path):
    """An open's first compile is waited for too (its lead kernel's): another file's background compile is stopped
    while it runs."""
    pidfile = tmp_path / "slow.pid"
    source = STOPS.format(pidfile=str(pidfile))
    first = lsp_kit.Doc(client, tmp_path / "first.py", source)
    assert (await client.records.record(first.uri, "fast", 1))["error"] is None
    for _ in range(3000):  # its other kernel's compile has started
        if pidfile.exists():
            break
        await asyncio.sleep(0.01)
    assert pidfile.exists(), "the other kernel's compile did not start"
    head = source.split("@pypto.jit", 1)[0]
    opened = lsp_kit.Doc(client, tmp_path / "opened.py", head + (
        "@pypto.jit\ndef looked_at(x: pypto.Tensor([32, 128], pypto.DT_FP32), "
        "out: pypto.Tensor([32, 128], pypto.DT_FP32)):\n"
        "    the_other_is_stopped()\n    out[:] = x * 2.0\n"))
    assert (await client.records.record(opened.uri, "looked_at", 1))["error"] is None
    assert (tmp_path / "slow.pid.seen").read_text() == "stopped"
    opened.close()
    first.close()
