"""The tuning advisor on PyPTO 3 kernels: the module-level constants that size a `@pl.jit` kernel's slices
and loop steps are its knobs (`pypto.analysis.knobs`); a poor value gets a suggestion the sim board
found faster, as an edit of the constant's line, and the edited file compiles to the predicted makespan.
The kernels are our own small ones, written here."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pypto.analysis.advisor import Advisor, apply_edits
from pypto.analysis.knobs import find_knobs
from pypto.boards.swimlane import metrics
from pypto.cli import load_module
from pypto.frontend.inputs import example_arguments
from pypto.record import compile_record, profile

POOR = textwrap.dedent('''
    """Scaled exponentials of row slices, the row slice too thin."""
    import pypto.language as pl

    ROWS = 256
    COLS = 128
    ROW_TILE = 4  # rows per scope instance
    HALF = 2
    SHARED = 8
    DERIVED = SHARED * 2


    @pl.jit
    def scale_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], s: pl.Scalar[pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        for r in pl.parallel(0, ROWS, ROW_TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
                y[r:r + ROW_TILE, :] = pl.exp(pl.mul(x[r:r + ROW_TILE, :], s))
        for h in pl.range(HALF):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="again"):
                y[h * SHARED:(h + 1) * SHARED, :] = pl.add(y[h * SHARED:(h + 1) * SHARED, :], 1.0)
        return y
''')


def _makespan(kernel: object) -> float:
    rec = profile(compile_record(kernel, example_arguments(kernel)), "sim")  # type: ignore[arg-type]
    assert rec.run is not None
    return metrics(rec.run).makespan


def test_the_knobs_are_the_constants_that_size_slices_and_steps(tmp_path: Path) -> None:
    path = tmp_path / "poor.py"
    path.write_text(POOR)
    knobs = {k.name: k for k in find_knobs(load_module(path).scale_rows)}
    # ROWS, COLS size the parameters (read at import by the annotations); HALF is a trip count, not a
    # slice size; SHARED is read by DERIVED at import, so patching it would not be what editing it gives
    assert set(knobs) == {"ROW_TILE"}
    k = knobs["ROW_TILE"]
    assert k.value == 4 and k.line == 7 and k.extents == (256,)
    assert k.values == (1, 2, 4, 8, 16, 32, 64, 128, 256)  # the divisors of the 256 rows it steps and slices
    assert apply_edits(POOR, [k.edit(32)]).splitlines()[6] == "ROW_TILE = 32  # rows per scope instance"


def test_a_poor_slice_constant_gets_a_verified_faster_value_and_applying_it_gives_the_figure(tmp_path: Path) -> None:
    path = tmp_path / "poor.py"
    path.write_text(POOR)
    kernel = load_module(path).scale_rows
    adv = Advisor(kernel, example_arguments(kernel))
    suggestions = adv.suggest(top=3, budget=8)
    assert suggestions, "4-row slices of a 256-row tensor: 64 tiny tasks, a bigger slice is faster"
    first = suggestions[0]
    assert first.kind == "const" and first.config == -1 and first.old == (4,)
    assert first.makespan_after < first.makespan_before / 1.5
    assert adv.evaluations <= 8
    assert first.text == f"ROW_TILE = {first.new[0]}"
    (edit,) = first.edits
    assert edit.where.line == 7 and edit.where.file == str(path)
    edited = apply_edits(path.read_text(), first.edits)
    assert f"ROW_TILE = {first.new[0]}  # rows per scope instance" in edited
    tuned_path = tmp_path / "tuned.py"
    tuned_path.write_text(edited)
    tuned = load_module(tuned_path).scale_rows
    assert abs(_makespan(tuned) - first.makespan_after) < 1e-6
    assert abs(_makespan(kernel) - first.makespan_before) < 1e-6  # the search left the module as written
    f = first.finding()
    assert f.where is not None and f.where.line == 7 and f.edits and "set ROW_TILE" in f.suggestion


def test_a_slice_too_big_for_the_vector_buffer_is_not_offered(tmp_path: Path) -> None:
    wide = POOR.replace("COLS = 128", "COLS = 1024")  # 64 rows x 1024 fp32 = 256 KiB: more than UB
    path = tmp_path / "wide.py"
    path.write_text(wide)
    kernel = load_module(path).scale_rows
    adv = Advisor(kernel, example_arguments(kernel))
    adv.exhaustive()
    illegal = {ov[0][1][0] for ov, ev in adv.cache.items() if ov and not ev.legal}
    assert {64, 128, 256} <= illegal
    assert all(s.new[0] < 64 for s in adv.suggest(top=9))
