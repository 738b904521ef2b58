"""A big kernel's record document parts made while the last passes run (server.parts): the same document."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import timeless

from server import analyze, beside, parts

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: no part is made ahead")

KERNEL = '''import pypto


@pypto.jit
def two_tiles(x: pypto.Tensor([64, 1000], pypto.DT_FP32), w: pypto.Tensor([1000, 256], pypto.DT_FP32),
              out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    y = pypto.exp(x) + x
    pypto.set_cube_tile_shapes([32, 32], [128, 128], [64, 64])
    out[:] = pypto.matmul(y, w, pypto.DT_FP32)
'''


@pytest.fixture
def forks() -> None:
    """The premise: this process may fork (single-threaded, memory for a copy), else nothing is made ahead."""
    from pypto.boards.sim_kernel import finish_loading

    finish_loading()  # the sim board's loading thread, started by an earlier job (a worker waits for it too)
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    if others:
        pytest.skip(f"threads left running in this process ({', '.join(others)}): nothing is forked")
    if not beside._room_for_a_copy():
        pytest.skip("no memory available for a copy of this process: nothing is forked")


def _same_document(a: tuple[dict[str, Any], dict[str, np.ndarray]], b: tuple[dict[str, Any], dict[str, np.ndarray]]
                   ) -> None:
    assert timeless(a[0]) == timeless(b[0])
    assert list(a[1]) == list(b[1]), "the columns in the same order"
    for name in a[1]:
        assert a[1][name].dtype == b[1][name].dtype and np.array_equal(a[1][name], b[1][name]), name


@pytest.mark.usefixtures("forks")
def test_a_jobs_answer_is_the_same_with_its_document_parts_made_ahead(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    opts = {"editor": True, "report": True, "record": True, "snapshots": True, "listings": True, "fingerprint": True}
    started: list[tuple[str, ...]] = []
    used: list[list[str]] = []
    indexed: list[bool] = []
    real_after, real_made = parts.Parts.after, parts.Parts.made

    def after(self: parts.Parts, index: int, p: Any, before: Any, after_: Any, ctx: Any) -> None:
        n = len(self._started)
        real_after(self, index, p, before, after_, ctx)
        if len(self._started) > n:
            started.append(tuple(self._started[-1][0]))

    def made(self: parts.Parts, program: Any) -> Any:
        out = real_made(self, program)
        used.append(sorted(out))
        indexed.append(self.tile_ops is not None)
        return out

    monkeypatch.setattr(analyze, "BESIDE_FROM", 0)  # this kernel's few tile ops count as big
    monkeypatch.setattr(parts.Parts, "after", after)
    monkeypatch.setattr(parts.Parts, "made", made)
    ahead = analyze.analyze_kernel(str(path), KERNEL, "two_tiles", opts)
    assert started == [("tiles",), ("subgraphs", "memory", "leaves", "tiles")]
    assert used == [["leaves", "memory", "subgraphs", "tiles"]], "every part made ahead was used"
    assert indexed == [True], "the editor view's part of the tile ops too"
    monkeypatch.setattr(parts, "AFTER", {})
    started.clear()
    used.clear()
    indexed.clear()
    alone = analyze.analyze_kernel(str(path), KERNEL, "two_tiles", opts)
    assert started == [] and used == [[]] and indexed == [False]
    assert ahead["error"] is None
    assert ahead["record_columns"] == alone["record_columns"], "the columns byte for byte"
    assert timeless(ahead) == timeless(alone)


def _lowered(tmp_path: Path, watcher: parts.Parts) -> Any:
    from pypto.compiler.pipeline import watching
    from pypto.frontend.inputs import example_arguments
    from pypto.record import trace_for

    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    kernel = analyze._kernel(analyze._load(str(path), KERNEL), str(path), "two_tiles")
    with watching(watcher):
        return trace_for(kernel, example_arguments(kernel, values=False)).lowered()


@pytest.mark.usefixtures("forks")
def test_a_part_whose_field_a_later_pass_made_anew_is_not_used(tmp_path: Path) -> None:
    made = parts.Parts(0)
    record = _lowered(tmp_path, made)
    tiles = record.program.tiles
    later = dataclasses.replace(record, program=dataclasses.replace(record.program,
                                                                    tiles=dataclasses.replace(tiles)))
    got = made.made(later.program)
    assert sorted(got) == ["leaves", "memory", "subgraphs"], "the tile graph's part is stale: made anew"
    assert made.tile_ops is None, "the editor view's part reads the tile graph: stale too"
    _same_document(later.to_document(made=got), later.to_document())
    assert made.made(later.program) == {}, "collected once"


@pytest.mark.usefixtures("forks")
def test_the_editor_views_part_made_ahead_is_the_one_made_here(tmp_path: Path) -> None:
    from server.index import tile_ops_part

    made = parts.Parts(0)
    program = _lowered(tmp_path, made).program
    made.collect(program)
    ahead, here = made.tile_ops, tile_ops_part(program.tiles.ops, program.subgraphs)
    assert ahead is not None
    for f in dataclasses.fields(here):
        a, b = getattr(ahead, f.name), getattr(here, f.name)
        if isinstance(b, np.ndarray):
            assert np.array_equal(a, b), f.name
        elif dataclasses.is_dataclass(b):  # Ragged
            assert np.array_equal(a.flat, b.flat) and np.array_equal(a.start, b.start), f.name
        else:
            assert a == b, f.name


def test_below_its_size_a_program_starts_no_part(tmp_path: Path) -> None:
    made = parts.Parts(10**9)
    record = _lowered(tmp_path, made)
    assert made.made(record.program) == {}


@pytest.mark.usefixtures("forks")
def test_the_parts_of_a_compile_that_failed_are_ended(tmp_path: Path) -> None:
    made = parts.Parts(0)
    _lowered(tmp_path, made)
    pids = [job._started[0] for _, job in made._started if job._started is not None]
    assert len(pids) == 2
    made.failed(0, None, None, None, RuntimeError("a later pass"))  # type: ignore[arg-type]
    for pid in pids:
        with pytest.raises(ChildProcessError):  # reaped
            os.waitpid(pid, 0)
