"""Shapes PyPTO accepts and the board advises against compile, run right and warn at their line."""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import pytest
import torch

import pypto
import pypto.record  # noqa: F401 - pypto.record.compile_record below
from pypto.tracing.tiling import strict_tile_rules

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
    # the block stage's note is at the matmul it splits (the warning is at the call, the line before)
    text = (DIR / "cube_l0a_overflow.py").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "pypto.matmul(" in t)
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
    assert notes[0].loc.span.line == _marker(DIR / "vec_tile_over_ub.py")[0] + 1  # the op after the call
    assert max(sg.peak_bytes for sg in record.program.subgraphs) <= 196608


def test_an_op_whose_tiles_alone_overflow_the_ub_compiles_warns_and_runs_right():
    """A top-k over a whole 64k row (DeepSeek V3.2's lightning indexer) cannot be split along the
    row: PyPTO compiles it, so do we — a warning at its line with the byte counts, the sim board
    modelling it as if it fit — and the tuning advisor's strict rules refuse it."""
    @pypto.jit
    def k(x: pypto.Tensor([2, 65536], pypto.DT_FP32), out: pypto.Tensor([2, 64], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(1, 8192)
        _, idx = pypto.topk(x, k=64, dim=-1, largest=True)  # the line
        out[:] = idx

    x, out = torch.randn(2, 65536), torch.empty(2, 64, dtype=torch.int32)
    k(x, out)
    assert torch.equal(out.long(), torch.topk(x, 64).indices)
    rec = pypto.record.compile_record(k, {"x": x, "out": out})
    warned = [d for p in rec.passes for d in p.diagnostics if d.rule == "tile.ub-overflow"]
    assert len(warned) == 1 and warned[0].severity == "warning" and "262,144 bytes of UB" in warned[0].message
    line = next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if "# the line" in t)
    assert warned[0].loc.span is not None and warned[0].loc.span.line == line
    assert rec.program.blocks is not None  # lowered to the end: the sim board runs it
    with strict_tile_rules(), pytest.raises(pypto.PyptoError, match="bytes of UB at once"):
        pypto.record.compile_record(pypto.jit(k.fn), {"x": x, "out": out})
