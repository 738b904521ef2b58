"""Shapes PyPTO accepts and the board advises against compile, run right and warn at their line."""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import pytest
import torch

import pypto
from pypto.language.tiling import strict_tile_rules

DIR = Path(__file__).parent / "board_limits"
_MARK = re.compile(r"#\s*WARNING:\s*(?P<regex>.*?)\s*$")


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"board_limit_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _marker(path: Path) -> tuple[int, str]:
    found = [(i, m["regex"]) for i, line in enumerate(path.read_text().splitlines(), 1) if (m := _MARK.search(line))]
    assert len(found) == 1, f"{path.name}: needs exactly one `# WARNING:` marker"
    return found[0]


@pytest.mark.parametrize("path", sorted(DIR.glob("*.py")), ids=lambda p: p.stem)
def test_a_board_limit_warns_at_its_line_and_the_kernel_runs(path):
    line, regex = _marker(path)
    mod = _load(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, want = mod.trigger()
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    ours = [w for w in caught if issubclass(w.category, pypto.PyptoWarning)]
    assert any(Path(w.filename).samefile(path) and w.lineno == line and re.search(regex, str(w.message))
               for w in ours), [f"{w.filename}:{w.lineno}: {w.message}" for w in ours]


@pytest.mark.parametrize("path", sorted(DIR.glob("*.py")), ids=lambda p: p.stem)
def test_the_advisors_strict_rules_refuse_it(path):
    mod = _load(path)
    with strict_tile_rules(), pytest.raises(pypto.PyptoError, match=_marker(path)[1]):
        mod.trigger()


def test_a_cube_step_over_l0_is_split_and_said_so():
    mod = _load(DIR / "cube_l0a_overflow.py")
    a, b = torch.rand(256, 256, dtype=torch.float16), torch.rand(256, 64, dtype=torch.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pypto.PyptoWarning)
        record = pypto.record.compile_record(mod.gemm, {"a": a, "b": b, "c": torch.empty(256, 64, dtype=torch.float16)})
    notes = [d for p in record.passes for d in p.diagnostics if d.rule == "block.l0-split"]
    line = _marker(DIR / "cube_l0a_overflow.py")[0]
    assert notes and "run as m=" in notes[0].message and notes[0].loc.span.line == line
    (block,) = [bl for bl in record.program.blocks if bl.core == "AIC"]
    assert block.peak("L0A") <= 65536


def test_a_vector_tile_over_ub_is_split_and_said_so():
    mod = _load(DIR / "vec_tile_over_ub.py")
    x = torch.rand(256, 512)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pypto.PyptoWarning)
        record = pypto.record.compile_record(mod.layer_scale, {"x": x, "out": torch.empty(256, 512)})
    notes = [d for p in record.passes for d in p.diagnostics if d.rule == "tile.ub-split"]
    assert notes and "run as tiles of [64, 512]" in notes[0].message
    assert notes[0].loc.span.line == _marker(DIR / "vec_tile_over_ub.py")[0]
    assert max(sg.peak_bytes for sg in record.program.subgraphs) <= 196608
