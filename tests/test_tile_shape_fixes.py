"""Tile-shape mistakes at the call, with their fixes as data (issue 18 item 4), without a server:
a cube k off the fractal is a PyptoError at the set_cube_tile_shapes call with the matmul related
and a "use 64" fix of the k argument; an unaligned last vector tile size is a
tile.last-dim-unaligned finding at the call, its ops related, one fix per aligned size; both are
JSON (the error dict, the report schema) and the fixes, applied to the text, compile clean."""

from __future__ import annotations

import json
import pathlib
import warnings

import jsonschema
import pytest
import torch

import pypto
from pypto.analysis.findings import Finding
from pypto.analysis.health import health_report
from pypto.cli import load_module
from pypto.record import compile_record, profile
from pypto.tracing.tiling import PyptoWarning

REPO = pathlib.Path(__file__).resolve().parents[1]

CUBE = '''import pypto


@pypto.jit
def mm(a: pypto.Tensor([64, 128], pypto.DT_FP16), b: pypto.Tensor([128, 64], pypto.DT_FP16),
       c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [56, 56], [32, 32])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
'''

VEC = '''import pypto


@pypto.jit
def unaligned(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 100)
    y = pypto.exp(x)
    out[:] = y * 2.0
'''


def line_of(text: str, needle: str) -> int:
    return next(i for i, s in enumerate(text.split("\n"), 1) if needle in s)


def apply(text: str, fix: dict) -> str:
    lines = text.split("\n")
    s = lines[fix["line"] - 1].encode()
    lines[fix["line"] - 1] = (s[:fix["col"]] + fix["text"].encode() + s[fix["end_col"]:]).decode()
    return "\n".join(lines)


def kernel(tmp_path: pathlib.Path, name: str, text: str) -> tuple[pathlib.Path, pypto.JitKernel]:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    mod = load_module(path, prefix=f"tile_fix_{name}_")
    return path, next(v for v in vars(mod).values() if isinstance(v, pypto.JitKernel))


def test_a_cube_k_off_the_fractal_is_an_error_at_the_call_with_the_matmul_related_and_a_fix(tmp_path):
    path, k = kernel(tmp_path, "cube", CUBE)
    a, b = torch.rand(64, 128, dtype=torch.float16), torch.rand(128, 64, dtype=torch.float16)
    with pytest.raises(pypto.PyptoError) as got:
        k(a, b, torch.empty(64, 64))
    e = got.value
    assert e.rule == "tile.shape" and e.line == line_of(CUBE, "set_cube_tile_shapes") and "use 64" in e.message
    assert f'matmul here uses these tiles: File "{path}", line {line_of(CUBE, "pypto.matmul")}' in str(e)
    details = json.loads(json.dumps(e.details(str(path))))
    assert [r["line"] for r in details["related"]] == [line_of(CUBE, "pypto.matmul")]
    # the first 56 of k's list, the one the message names
    (fix,) = details["fixes"]
    assert fix["text"] == "64" and "use 64" in fix["title"]
    fixed = apply(CUBE, fix)
    assert "set_cube_tile_shapes([32, 32], [64, 56], [32, 32])" in fixed
    assert e.details("/some/other/file.py") == {"related": [], "fixes": []}


def test_an_unaligned_last_vector_tile_is_a_finding_at_the_call_with_a_fix_per_aligned_size(tmp_path):
    path, k = kernel(tmp_path, "vec", VEC)
    x = torch.rand(32, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PyptoWarning)
        record = profile(compile_record(k, {"x": x, "out": torch.empty(32, 256)}), "sim")
    (f,) = [f for f in health_report(record).findings if f.rule == "tile.last-dim-unaligned"]
    assert f.where is not None and f.where.line == line_of(VEC, "set_vec_tile_shapes")
    assert sorted(r.where.line for r in f.related) == [line_of(VEC, "pypto.exp"), line_of(VEC, "out[:] =")]
    assert "use 96 or 104" in f.suggestion
    assert [x.title for x in f.fixes] == ["use set_vec_tile_shapes(8, 96)", "use set_vec_tile_shapes(8, 104)"]
    assert f.edits == f.fixes[0].edits  # the first alternative is the finding's own fix (the health panel's Apply)
    data = json.loads(json.dumps(f.to_json()))
    assert Finding.from_json(data) == f
    schema = json.loads((REPO / "docs" / "schemas" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/finding"}).validate(data)
    for fx in f.fixes:
        (edit,) = fx.edits
        assert edit.text.startswith("pypto.set_vec_tile_shapes(8, ")
        lines = VEC.split("\n")
        w = edit.where
        lines[w.line - 1] = lines[w.line - 1][:w.col] + edit.text + lines[w.line - 1][w.end_col:]
        _, fixed = kernel(tmp_path, f"vec_{fx.title[-4:-1].strip('( ')}", "\n".join(lines))
        with warnings.catch_warnings():
            warnings.simplefilter("error", PyptoWarning)  # no board-limit warning left
            rec = profile(compile_record(fixed, {"x": x, "out": torch.empty(32, 256)}), "sim")
        assert not [g for g in health_report(rec).findings if g.rule == "tile.last-dim-unaligned"]


LOWER_RANK = '''import pypto


@pypto.jit
def lower(g: pypto.Tensor([256], pypto.DT_FP16), out: pypto.Tensor([256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 256)
    out[:] = pypto.cast(g, pypto.DT_FP32)
'''


def test_a_tensor_with_fewer_axes_than_the_call_has_entries_is_cut_by_its_leading_entry_and_that_entry_is_fixed(
        tmp_path):
    # entry i tiles axis i (PyPTO's tile expansion): the 1-D gamma takes the 8, 16 bytes of fp16 rows; the fix
    # names the entry that tiles its last axis and changes that one, not the call's last entry
    _, k = kernel(tmp_path, "lower", LOWER_RANK)
    g = torch.rand(256, dtype=torch.float16)
    record = profile(compile_record(k, {"g": g, "out": torch.empty(256)}), "sim")
    (f,) = [f for f in health_report(record).findings if f.rule == "tile.last-dim-unaligned"]
    assert f.where is not None and f.where.line == line_of(LOWER_RANK, "set_vec_tile_shapes")
    assert f.numbers["tile_last_dims"] == [8]
    assert "use 16 for the tile size of entry 1 (these tensors have 1 axis" in f.suggestion
    assert [x.title for x in f.fixes] == ["use set_vec_tile_shapes(16, 256)"]
