"""The fixes a tile-entry mistake and a broadcast mistake carry (issue 29 item 6), without a server: each
offered value is one the compiler takes — applied to the text, every fix gives a kernel that compiles —,
the values are the nearest legal ones, and a mistake no literal edit of its line repairs safely gets none."""

from __future__ import annotations

import json
import pathlib
import warnings

import pytest
import torch

import pypto
from pypto.cli import load_module
from pypto.record import compile_record
from pypto.tracing.tiling import PyptoWarning, nearest_legal, nearest_positive

VEC = '''import pypto

ROWS = 16


@pypto.jit
def k(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    CALL
    out[:] = pypto.exp(x) * 2.0
'''

CUBE = '''import pypto


@pypto.jit
def k(a: pypto.Tensor([64, 128], pypto.DT_FP16), b: pypto.Tensor([128, 64], pypto.DT_FP16),
      c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    CALL
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
'''

BROADCAST = '''import pypto


@pypto.jit
def k(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    CALL
'''

INPUTS = {
    VEC: lambda: {"x": torch.rand(32, 256), "out": torch.empty(32, 256)},
    CUBE: lambda: {"a": torch.rand(64, 128, dtype=torch.float16), "b": torch.rand(128, 64, dtype=torch.float16),
                   "c": torch.empty(64, 64)},
    BROADCAST: lambda: {"x": torch.rand(32, 256), "out": torch.empty(32, 256)},
}

CASES = [  # (template, the line, the fixes' texts)
    (VEC, "pypto.set_vec_tile_shapes(8, 0)", ["1"]),
    (VEC, "pypto.set_vec_tile_shapes([0, 64])", ["1"]),
    (VEC, "pypto.set_vec_tile_shapes(ROWS // 4 - 8, 64)", ["1"]),
    (VEC, "pypto.set_vec_tile_shapes(64 / 3, 64)", ["21", "22"]),
    (VEC, "pypto.set_vec_tile_shapes(8.0, 64)", ["8"]),
    (VEC, 'pypto.set_vec_tile_shapes(8, "64")', []),
    (CUBE, "pypto.set_cube_tile_shapes([32, 32], [0, 64], [32, 32])", ["32"]),  # k: on every dtype's fractal
    (CUBE, "pypto.set_cube_tile_shapes([32, 32], [64, 0], [32, 32])", ["64"]),  # an L1 at least its L0
    (CUBE, "pypto.set_cube_tile_shapes(0, [64, 64], [32, 32])", ["16"]),  # m: on the 16-row fractal
    (CUBE, "pypto.set_cube_tile_shapes([32, 32], [32, 48], [32, 32])", ["32", "64"]),  # L1 % L0
    (CUBE, "pypto.set_cube_tile_shapes(m=[32, 32], k=[64, -1], n=[32, 32])", ["64"]),
    (BROADCAST, "out[:] = pypto.exp(x) + pypto.full([32, 128], 1.0, pypto.DT_FP32)", ["32, 256", "32, 1"]),
    (BROADCAST, "out[:] = pypto.zeros(32, 128) - x", ["32, 256", "32, 1"]),
    (BROADCAST, "out[:] = x * pypto.view(x, [8, 256], [0, 0])", ["32, 256", "1, 256"]),
    (BROADCAST, "out[:] = x * pypto.view(x, [8, 256], [16, 0])", ["1, 256"]),  # [32, 256] at row 16: past the end
    (BROADCAST, "out[:] = x + pypto.full([1, 512], 1.0, pypto.DT_FP32)[:, 0:128]", []),  # no literal of that shape
    (BROADCAST, "out[:] = x + pypto.reshape(pypto.full([64, 64], 1.0, pypto.DT_FP32), [32, 128])", []),
]


def compiled(tmp_path: pathlib.Path, text: str, inputs: dict, name: str) -> tuple[pathlib.Path, Exception | None]:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    mod = load_module(path, prefix=f"entry_fix_{name}_")
    k = next(v for v in vars(mod).values() if isinstance(v, pypto.JitKernel))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PyptoWarning)
            compile_record(k, inputs)
    except pypto.PyptoError as e:
        return path, e
    return path, None


def apply(text: str, fix: dict) -> str:
    lines = text.split("\n")
    s = lines[fix["line"] - 1].encode()
    assert fix["end_line"] == fix["line"]
    lines[fix["line"] - 1] = (s[:fix["col"]] + fix["text"].encode() + s[fix["end_col"]:]).decode()
    return "\n".join(lines)


@pytest.mark.parametrize(("template", "line", "texts"), CASES, ids=[c[1] for c in CASES])
def test_every_fix_offered_compiles(tmp_path, template, line, texts):
    path, e = compiled(tmp_path, template.replace("CALL", line), INPUTS[template](), "bad")
    assert isinstance(e, pypto.PyptoError)
    details = json.loads(json.dumps(e.details(str(path))))
    assert [f["text"] for f in details["fixes"]] == texts, details["fixes"]
    if template is not BROADCAST:
        assert e.rule == "tile.shape" and details["tile_entry"]["kind"] == ("vec" if template is VEC else "cube")
    for i, fix in enumerate(details["fixes"]):
        got = compiled(tmp_path, apply(path.read_text(), fix), INPUTS[template](), f"fixed{i}")[1]
        assert got is None, (fix, got)


def test_the_shape_arguments_span_is_where_a_whole_shape_goes(tmp_path):
    path, e = compiled(tmp_path, VEC.replace("CALL", "pypto.set_vec_tile_shapes([8, 0])"), INPUTS[VEC](), "span")
    assert isinstance(e, pypto.PyptoError)
    te = e.details(str(path))["tile_entry"]
    text = path.read_text().split("\n")[te["args"]["line"] - 1]
    assert text[te["args"]["col"]:te["args"]["end_col"]] == "8, 0" and te["entry"] == [1, None]
    call = "pypto.set_cube_tile_shapes([32, 32], [0, 64], [32, 32], True)"
    path, e = compiled(tmp_path, CUBE.replace("CALL", call), INPUTS[CUBE](), "cube_span")
    assert isinstance(e, pypto.PyptoError)
    te = e.details(str(path))["tile_entry"]
    text = path.read_text().split("\n")[te["args"]["line"] - 1]
    assert text[te["args"]["col"]:te["args"]["end_col"]] == "[32, 32], [0, 64], [32, 32]" and te["entry"] == [1, 0]
    call = "pypto.set_cube_tile_shapes(m=[32, 32], k=[0, 64], n=[32, 32])"
    path, e = compiled(tmp_path, CUBE.replace("CALL", call), INPUTS[CUBE](), "kw")
    assert isinstance(e, pypto.PyptoError) and e.details(str(path))["tile_entry"]["args"] is None


def test_the_nearest_values():
    assert nearest_positive(0) == nearest_positive(-7) == nearest_positive(0.4) == (1,)
    assert nearest_positive(2.5) == (2, 3) and nearest_positive(64.0) == (64,)
    assert nearest_positive("8") == nearest_positive(None) == nearest_positive(float("nan")) == ()
    assert nearest_legal(40, lambda c: 96 % c == 0, 16) == (32, 48)
    assert nearest_legal(0, lambda c: True, 16) == (16,)
    assert nearest_legal(7, lambda c: c > 100, 1, limit=50) == ()
