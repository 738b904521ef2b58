"""A kernel made inside a factory function, over stdio: once `pypto-ide capture` has recorded it, the
language server compiles it from its capture and shows it at its `def` like any other kernel (its
record names the capture); before, it is not shown (docs/capture.md)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}
CLI = Path(sys.executable).parent / "pypto-ide"

SRC = textwrap.dedent('''
    import pypto


    def make_kernel(rows, tile):
        @pypto.frontend.jit
        def halved(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, tile)
            for b in pypto.loop(rows):
                out[b:b + 1, :] = x[b:b + 1, :] * 0.5

        return halved


    @pypto.frontend.jit
    def plain(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + 1.0
''')

RUN = textwrap.dedent('''
    import numpy as np

    from factory import make_kernel

    make_kernel(3, 16)(np.ones((3, 32), np.float32), np.zeros((3, 32), np.float32))
''')


def _captured(folder: Path, files: dict[str, str], script: str, text: str) -> None:
    """`files` and `script` written into `folder`, and `pypto-ide capture -- python SCRIPT` run there."""
    for name, body in {**files, script: text}.items():
        (folder / name).write_text(body)
    proc = subprocess.run([str(CLI), "capture", "--", "python", script], cwd=folder, capture_output=True,
                          text=True, timeout=300, check=False)  # a safety net, not a measure
    assert proc.returncode == 0, proc.stderr


async def test_a_captured_factory_kernel_is_compiled_and_shown_at_its_def(client, lsp_kit, tmp_path):
    _captured(tmp_path, {"factory.py": SRC}, "run.py", RUN)
    doc = lsp_kit.Doc(client, tmp_path / "factory.py", SRC)
    record = await client.records.record(doc.uri, "halved", 1)
    assert record["error"] is None and record["summary"] is not None, record
    await client.records.record(doc.uri, "plain", 1)
    lenses = [x for x in await doc.lenses() if x.command is not None and x.command.title.startswith("pypto")]
    # each kernel's lens at its decorator, the factory's kernel as the module's
    assert {x.range.start.line for x in lenses} >= {doc.line_of("def halved") - 1, doc.line_of("def plain") - 1}
    (said,) = [x.command.title for x in await doc.lenses()
               if x.command is not None and x.command.title.startswith("inputs: captured")]
    assert said.startswith("inputs: captured from `python run.py` at ")
    full = await doc.call("pypto/record", kernel="halved")
    assert full["record"]["source"]["inputs_from"]["command"] == "python run.py"
    assert [i["shape"] for i in full["record"]["inputs"]] == [[3, 32], [3, 32]]


TWINS = textwrap.dedent('''
    import pypto


    def make_scale(tile):
        @pypto.frontend.jit
        def kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(tile, 64)
            out[:] = x * 3.0

        return kernel


    def make_shift(tile):
        @pypto.frontend.jit
        def kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(tile, 64)
            out[:] = x + 1.0

        return kernel
''')

RUN_TWINS = textwrap.dedent('''
    import numpy as np

    from twins import make_scale, make_shift

    make_scale(4)(np.ones((8, 64), np.float32), np.zeros((8, 64), np.float32))
    make_shift(2)(np.ones((6, 64), np.float32), np.zeros((6, 64), np.float32))
''')


async def test_two_factories_kernels_of_one_name_are_known_by_their_qualified_names(client, lsp_kit, tmp_path):
    """Qwen3-Next's gated delta rule file has two factories that each make a `kernel`: each is shown at its
    own def, named by its qualified name, with its own capture's inputs."""
    _captured(tmp_path, {"twins.py": TWINS}, "run_twins.py", RUN_TWINS)
    doc = lsp_kit.Doc(client, tmp_path / "twins.py", TWINS)
    scale = await client.records.record(doc.uri, "make_scale.<locals>.kernel", 1)
    shift = await client.records.record(doc.uri, "make_shift.<locals>.kernel", 1)
    assert scale["error"] is None and shift["error"] is None, (scale, shift)
    defs = [i for i, line in enumerate(TWINS.splitlines()) if line.strip().startswith("def kernel")]
    assert [scale["range"]["start"]["line"], shift["range"]["start"]["line"]] == defs
    for name, rows in (("make_scale.<locals>.kernel", 8), ("make_shift.<locals>.kernel", 6)):
        full = await doc.call("pypto/record", kernel=name)
        assert [i["shape"] for i in full["record"]["inputs"]] == [[rows, 64], [rows, 64]]
