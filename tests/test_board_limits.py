"""Shapes PyPTO accepts and the board advises against compile, run right and warn at their line."""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import pypto
import pypto.record  # noqa: F401 - pypto.record.compile_record below
from pypto.compiler.tile_expand import copy_tile
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
    """A radix-select top-k over a whole 64k row cannot be split along the row (its tile holds it, PyPTO's
    topk page): PyPTO compiles it, so do we — a warning at its line with the byte counts, the sim board
    modelling it as if it fit — and the tuning advisor's strict rules refuse it."""
    @pypto.jit
    def k(x: pypto.Tensor([2, 65536], pypto.DT_FP32), out: pypto.Tensor([2, 64], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(1, 8192)
        _, idx = pypto.topk(x, 64, -1, True, pypto.TopKAlgo.RADIX_SELECT)  # the line
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


def test_scatter_update_holds_its_src_and_index_tiles_in_the_ub_not_the_cache():
    """PyPTO's scatter_update is in place on GM: only the src tile and its index go to the UB (its API page);
    an 8 MB cache updated 16 rows at a time fits, runs right, and its tasks write the cache where it lies."""
    @pypto.jit
    def k(cache: pypto.Tensor([4096, 512], pypto.DT_FP32), pos: pypto.Tensor([2, 16], pypto.DT_INT32),
          new: pypto.Tensor([32, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 512)
        pypto.scatter_update(cache, -2, pos, new)

    cache, new = torch.randn(4096, 512), torch.randn(32, 512)
    pos = torch.randperm(4096)[:32].reshape(2, 16).to(torch.int32)
    want = cache.clone()
    want[pos.reshape(-1).long()] = new
    rec = pypto.record.compile_record(k, {"cache": cache.clone(), "pos": pos, "new": new})
    assert not [d for p in rec.passes for d in p.diagnostics if d.rule == "tile.ub-overflow"]
    assert max(sg.peak_bytes for sg in rec.program.subgraphs) <= 16 * 512 * 4 + 16 * 4
    scatters = [o for o in rec.program.tiles.ops if o.op == "scatter_update"]
    assert len(scatters) == 2 and all(o.region is not None and o.region.shape == (4096, 512) for o in scatters)
    k(cache, pos, new)
    assert torch.equal(cache, want)


def test_index_select_reads_its_rows_from_gm_and_its_tile_cuts_the_index():
    """PyPTO's index_select (its API page): the tile shape cuts the result, `dim` by cutting the index, and
    the table is read where it lies. A whole-table tile was DeepSeek's 128 MB "in the UB"; here an 8 MB
    table gathered 16 rows at a time holds one result tile and its index window, and the rows are right."""
    @pypto.jit
    def k(table: pypto.Tensor([4096, 512], pypto.DT_FP32), idx: pypto.Tensor([48], pypto.DT_INT32),
          out: pypto.Tensor([48, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 512)
        out[:] = pypto.index_select(table, 0, idx)

    table, idx = torch.randn(4096, 512), torch.randperm(4096)[:48].to(torch.int32)
    rec = pypto.record.compile_record(k, {"table": table, "idx": idx, "out": torch.empty(48, 512)})
    assert not [d for p in rec.passes for d in p.diagnostics if d.rule == "tile.ub-overflow"]
    assert max(sg.peak_bytes for sg in rec.program.subgraphs) <= 16 * 512 * 4 + 16 * 4
    selects = [o for o in rec.program.tiles.ops if o.op == "index_select"]
    assert [o.shape for o in selects] == [(16, 512)] * 3
    assert all(o.region is not None and o.region.shape == (4096, 512) for o in selects)
    out = torch.empty(48, 512)
    k(table, idx, out)
    assert torch.equal(out, table[idx.long()])


@pytest.mark.parametrize(("width", "n", "k", "largest"), [(8192, 65536, 2048, True), (8192, 40000, 100, False)])
def test_top_k_by_merge_sort_cuts_the_row_and_merges_the_cuts(width, n, k, largest):
    """PyPTO's top-k by merge sort (its default) cuts `dim` by the vec tile, at least k wide (its API page): a
    whole 64k-row tile was DeepSeek V3.2's lightning indexer's 138 % UB Error. Each cut's top k merges pairwise
    (five cuts: an odd one waits a level) into the row's, ties to the lower index, exactly the whole row's."""
    @pypto.frontend.jit
    def k_(x: pypto.Tensor([2, n], pypto.DT_FP32), vals: pypto.Tensor([2, k], pypto.DT_FP32),
           idx: pypto.Tensor([2, k], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(1, width)
        v, i = pypto.topk(x, k, -1, largest)
        vals[:] = v
        idx[:] = i

    x = torch.randint(-60, 60, (2, n)).to(torch.float32)  # many ties: the order among them is checked
    args = {"x": x, "vals": torch.empty(2, k), "idx": torch.empty(2, k, dtype=torch.int32)}
    rec = pypto.record.compile_record(k_, args)
    assert not [d for p in rec.passes for d in p.diagnostics if d.rule == "tile.ub-overflow"]
    cuts = -(-n // width)
    merges = [o for o in rec.program.tiles.ops if o.op == "topk_merge"]
    # two rows; the values node's tree, the indices node's (its values' less the last merge, and its indices')
    assert len(merges) == 2 * ((cuts - 1) + (cuts - 2) + (cuts - 1))
    assert max(sg.peak_bytes for sg in rec.program.subgraphs) < 196_608
    keys = (-x if largest else x).numpy()
    order = torch.from_numpy(np.argsort(keys, axis=-1, kind="stable")[:, :k].copy())
    vals, idx = torch.empty(2, k), torch.empty(2, k, dtype=torch.int32)
    k_(x, vals, idx)
    assert torch.equal(idx, order.to(torch.int32))
    assert torch.equal(vals, torch.gather(x, 1, order))


def test_a_full_is_made_tile_by_tile_by_the_vec_tile_in_force():
    """`full` is made in the UB (TEXPANDS), cut by the vec tile in force like the math it feeds; it was one
    whole-value tile, stored to GM and reloaded in pieces (the QAT backward model kernel: a [512, 128] fp32 `ones`,
    a 133 % UB Error of ours)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([512, 128], pypto.DT_FP32), out: pypto.Tensor([512, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = pypto.sub(pypto.full([512, 128], 1.0, pypto.DT_FP32), x)

    x = torch.randn(512, 128)
    rec = pypto.record.compile_record(k, {"x": x, "out": torch.empty(512, 128)})
    assert {o.shape for o in rec.program.tiles.ops if o.op == "fill"} == {(64, 128)}
    assert max(sg.peak_bytes for sg in rec.program.subgraphs) <= 3 * 64 * 128 * 4
    out = torch.empty(512, 128)
    k(x, out)
    assert torch.equal(out, 1.0 - x)


def test_a_view_as_another_dtype_is_cut_into_rows_by_the_tile_in_force():
    """A view as another dtype reinterprets its window's bytes; it was one whole-window tile (DeepSeek V3.2's
    sparse attention: [2048, 64] bf16 of int8 rows, 256 KiB, a 133 % UB Error of ours). It is cut by the vec
    tile's leading dims, rows whole, and the bits are the same."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2048, 256], pypto.DT_INT8), out: pypto.Tensor([2048, 64], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(16, 512)
        raw = pypto.view(x, [2048, 128], [0, 64])
        out[:] = pypto.clone(pypto.view(raw, dtype=pypto.DT_BF16))

    x = torch.randint(-128, 128, (2048, 256), dtype=torch.int8)
    rec = pypto.record.compile_record(k, {"x": x, "out": torch.empty(2048, 64, dtype=torch.bfloat16)})
    assert not [d for p in rec.passes for d in p.diagnostics if d.rule == "tile.ub-overflow"]
    assert {o.shape for o in rec.program.tiles.ops if o.op == "bitcast"} == {(16, 64)}
    assert max(sg.peak_bytes for sg in rec.program.subgraphs) <= 4 * 16 * 128
    out = torch.empty(2048, 64, dtype=torch.bfloat16)
    k(x, out)
    assert torch.equal(out.view(torch.int8), x[:, 64:192])


def test_a_copy_the_compiler_adds_is_cut_to_fit_the_ub():
    """A run-time `if` carries a view into a buffer of its own: that copy has no vec tile shape of the user's and
    was one whole-value tile (DeepSeek V4's compressor: a [1, 128, 512] fp32 state, a 133 % UB Error of ours). It
    is cut to `COPY_TILE_BYTES`, never along the last dim, and the result is the same."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 128, 512], pypto.DT_FP32), sel: pypto.Tensor([2], pypto.DT_INT32),
          out: pypto.Tensor([1, 128, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        v = pypto.view(x, [1, 128, 512], [0, 0, 0])
        if sel[0] == 1:
            v = v + 1.0
        else:
            v = v * 2.0
        out[:] = v

    x = torch.randn(4, 128, 512)
    for flag, want in ((1, x[:1] + 1.0), (0, x[:1] * 2.0)):
        sel = torch.tensor([flag, 0], dtype=torch.int32)
        rec = pypto.record.compile_record(k, {"x": x, "sel": sel, "out": torch.empty(1, 128, 512)})
        limits = ("tile.ub-overflow", "block.over-capacity")
        assert not [d for p in rec.passes for d in p.diagnostics if d.rule in limits]
        assert max(sg.peak_bytes for sg in rec.program.subgraphs) <= 65_536
        assert {o.shape for o in rec.program.tiles.ops if o.op == "load"} == {(1, 32, 512)}
        out = torch.empty(1, 128, 512)
        k(x, sel, out)
        assert torch.equal(out, want)


@pytest.mark.parametrize(("shape", "nbytes", "tile"), [
    ((1, 128, 512), 4, (1, 32, 512)), ((64, 64), 2, (64, 64)), ((8, 40000), 4, (1, 40000)), ((3, 9000), 4, (1, 9000)),
])
def test_copy_tile_halves_the_leading_dims_until_it_fits(shape, nbytes, tile):
    assert copy_tile(shape, nbytes) == tile
