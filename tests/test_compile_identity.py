"""The compiler's speed work changes no output: every example kernel (and a few kernels with many
tiles, loops with tails, cube tiles) compiles to the same record, byte for byte, as the compiler of
commit 8a88b71 did (before issue 19's compile-speed work; the boards as at 5752e22, the sim board's
model having changed since 8a88b71).

The fixture `compile_identity.json` holds, per kernel, sha256 digests of its parts: the record's JSON
with every pass's snapshot (tile graph, subgraphs, leaves, blocks, tasks after each pass; pass
durations left out), the listing of every leaf, and the sim board's swimlane (lanes, tasks, pipe
profiles and counters; not its JSON form, which the boards own). It was written by the old compiler
(`python tests/test_compile_identity.py --write` in a worktree at 5752e22 with `pypto/compiler` checked
out from 8a88b71); rewrite it only for
a change that is meant to change what the compiler makes, and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "compile_identity.json"
EXAMPLES = REPO / "examples"


def _kernels() -> list[tuple[str, Any, dict[str, Any] | None]]:
    """(name, kernel, inputs or None for its example inputs)."""
    import torch

    import pypto
    from pypto.cli import load_module
    from pypto.frontend.jit import JitKernel

    out: list[tuple[str, Any, dict[str, Any] | None]] = []
    for path in sorted(EXAMPLES.glob("*.py")):
        if path.name.startswith("_"):
            continue
        mod = load_module(path, prefix="pypto_identity_")
        for name, v in vars(mod).items():
            if isinstance(v, JitKernel):
                out.append((f"{path.stem}::{name}", v, None))

    @pypto.jit
    def softmax(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = pypto.softmax(x, -1)

    @pypto.jit
    def mm(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    @pypto.jit
    def ew(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2, 64)
        out[:] = pypto.exp(x) * 2.0 + x

    @pypto.jit
    def unrolled(g: pypto.Tensor(), w: pypto.Tensor(), gw: pypto.Tensor(), gs: pypto.Tensor()):
        rows, cols = w.shape
        pypto.set_vec_tile_shapes(4, cols)
        acc = pypto.full([1, 1], 0.0, pypto.DT_FP32)
        for off, size in pypto.loop_unroll(0, rows, 1, name="rows", idx_name="off", unroll_list=[32, 8]):
            gt = pypto.cast(pypto.view(g, [size, cols], [off, 0]), pypto.DT_FP32)
            wt = pypto.cast(pypto.view(w, [size, cols], [off, 0]), pypto.DT_FP32)
            r = pypto.round(wt * 0.5, decimals=0)
            c = pypto.clip(r, -128.0, 127.0)
            mask = pypto.clip(pypto.abs(r - c), 0.0, 1.0) * -1.0 + 1.0
            pypto.assemble(pypto.cast(gt * mask, pypto.DT_BF16), [off, 0], gw)
            part = pypto.sum(gt * c, dim=1, keepdim=True)
            pypto.set_vec_tile_shapes(32, 8)
            acc[:] = acc + pypto.sum(part, dim=0, keepdim=True)
        gs[:] = pypto.cast(acc, pypto.DT_BF16)

    torch.manual_seed(0)
    out += [("bench::softmax 256x512 at 32x32", softmax, {"x": torch.randn(256, 512), "out": torch.empty(256, 512)}),
            ("bench::matmul 256x256x256 fp16 at 64^3", mm,
             {"a": torch.randn(256, 256).half(), "b": torch.randn(256, 256).half(), "c": torch.empty(256, 256)}),
            ("bench::exp*2+x 64x256 at 2x64", ew, {"x": torch.randn(64, 256), "out": torch.empty(64, 256)}),
            ("bench::unroll 32/8 76x128 bf16", unrolled,
             {"g": torch.randn(76, 128).bfloat16(), "w": torch.randn(76, 128).bfloat16(),
              "gw": torch.empty(76, 128).bfloat16(), "gs": torch.empty(1, 1).bfloat16()})]
    return out


# The bench kernels above are in this file, whose lines must stay where they were (their records and listings
# hold them); their records also hold this file's sha256, which is not what the compiler makes: the test puts back
# the file's as it was when the fixture was written (e804abd), whatever this file says now below the kernels.
FIXTURE_FILE_SHA256 = "44f2797dc6cd46e1e1b834ff4b38e5a2f614cfe43f1745bc95810adba99f9fab"


def _digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.replace(str(REPO), "<repo>").encode()).hexdigest()


def _parts(kernel: Any, inputs: dict[str, Any] | None) -> dict[str, str]:
    from pypto.record import compile_record, expanded, profile

    record = compile_record(kernel, inputs)
    # the fixture digests version-1 records: one JSON of lists. Version 2 stores the same lists as columns
    # (and a snapshot's unchanged parts once); expanded back (`pypto.record.expanded`), it is that content,
    # entry for entry, which the digest compares with "version": 1 as the old records said.
    compact = record.to_json(include_snapshots=True)
    doc = {**expanded(compact), "version": 1}
    if doc["source"]["file"] == str(Path(__file__).resolve()):  # the bench kernels above: this file's bytes are
        doc["source"]["text_sha256"] = FIXTURE_FILE_SHA256  # not what the compiler makes, and this file changes
    for p in doc["passes"]:
        p.pop("seconds", None)
    parts = {"record": _digest(doc)}
    blocks = record.program.blocks or ()
    parts["listings"] = _digest("\n\n".join(record.listing(b.leaf) for b in blocks))
    if record.program.execute is not None:
        run = profile(record, "sim").run
        assert run is not None  # what the board made of the program, not the swimlane's JSON form
        parts["swimlane"] = _digest(repr(([(lane.name, lane.core) for lane in run.lanes],
                                          [(t.id, t.lane, t.start, t.end, t.leaf, t.coord, t.preds, t.ready, t.profile,
                                            t.name) for t in run.tasks],
                                          [sorted(p.items()) for p in run.pipe_profiles],
                                          sorted(run.counters.items()))))
    return parts


def compute() -> dict[str, dict[str, str]]:
    return {name: _parts(kernel, inputs) for name, kernel, inputs in _kernels()}


@pytest.fixture(scope="module")
def digests() -> dict[str, dict[str, str]]:
    return compute()


def test_every_kernel_compiles_to_the_same_record_listing_and_swimlane(digests: dict[str, dict[str, str]]) -> None:
    expected = json.loads(FIXTURE.read_text())
    assert sorted(digests) == sorted(expected), "the kernels changed: regenerate the fixture at the old commit"
    differ = [f"{name}: {part}" for name, parts in expected.items() for part, h in parts.items()
              if digests[name].get(part) != h]
    assert not differ, "compiled differently from the old compiler:\n" + "\n".join(differ)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        FIXTURE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {FIXTURE}")
    else:
        print(json.dumps(compute(), indent=1, sort_keys=True))
