"""Loop iterations stamped from the one before (`pypto.compiler.stamp`) make the very record a full
expansion makes: every pass's snapshot, the listings and the swimlane, with stamping on and off, for
loops that stamp and for loops where a condition stops it (a tail, a window that runs past its input, a
window out of range, a stale view, a reshape, a matmul written straight into its target, carried
values, a GM dependency only one iteration has, subgraphs over the UB). Each kernel also says whether it
stamped: a test that stamped nothing would prove nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import pypto
from pypto.compiler import stamp
from pypto.ir.errors import PyptoError
from pypto.record import compile_record, expanded, profile


@pypto.jit
def carried_rows(x: pypto.Tensor(), out: pypto.Tensor(), total: pypto.Tensor()):
    """A window per iteration, its result assembled into the output, a sum carried along."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(8, 64)
    acc = pypto.full([1, cols], 0.0, pypto.DT_FP32)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        t = pypto.view(x, [16, cols], [i, 0])
        y = pypto.exp(t) * 2.0 + t
        pypto.assemble(y, [i, 0], out)
        acc[:] = acc + pypto.sum(y, dim=0, keepdim=True)
    total[:] = acc


@pypto.jit
def tail_rows(x: pypto.Tensor(), out: pypto.Tensor()):
    """The last window is partial: its valid shape differs, so that iteration is expanded in full."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(8, 64)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        t = pypto.view(x, [16, cols], [i, 0], valid_shape=[(rows - i).min(16), cols])
        pypto.assemble(pypto.sqrt(pypto.abs(t)), [i, 0], out)


@pypto.jit
def past_the_end(x: pypto.Tensor(), out: pypto.Tensor()):
    """No valid shape: the last window runs past the input and is clipped (a note, once)."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(8, 64)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        t = pypto.view(x, [16, cols], [i, 0])
        pypto.assemble(t * 3.0, [i, 0], out)


@pypto.jit
def matmul_rows(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
    """A matmul per iteration, written straight into its window of the output (retargeted)."""
    rows, k = a.shape
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    for i in pypto.loop(0, rows, 32, name="rows", idx_name="i"):
        pypto.assemble(pypto.matmul(pypto.view(a, [32, k], [i, 0]), b, pypto.DT_FP32), [i, 0], c)


@pypto.jit
def reshaped_state(x: pypto.Tensor(), state: pypto.Tensor(), out: pypto.Tensor()):
    """A carried state updated in place, seen through a reshape, each iteration's rows read from it."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(16, 32)
    s = pypto.clone(state)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        t = pypto.view(x, [16, cols], [i, 0])
        flat = pypto.reshape(s, [16 * cols])
        back = pypto.reshape(flat, [16, cols])
        s[:] = back * 0.5 + t
        pypto.assemble(s + 1.0, [i, 0], out)


@pypto.jit
def moving_state(x: pypto.Tensor(), states: pypto.Tensor(), out: pypto.Tensor(), last: pypto.Tensor()):
    """A state replaced each iteration and read after its replacement: each iteration's state is a copy of
    its own, so what is carried moves to a new workspace every iteration (gated delta rule's pattern)."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(16, 32)
    state = states[0]
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        new = state * 0.5 + pypto.view(x, [16, cols], [i, 0])
        state[:] = new
        pypto.assemble(new + 1.0, [i, 0], out)
        last[0] = state


@pypto.jit
def early_write(x: pypto.Tensor(), out: pypto.Tensor(), out2: pypto.Tensor(), out3: pypto.Tensor()):
    """Rows 32-47 of `out` are written before the loop: only the iteration that reads them depends on that write,
    which keeps its sum out of the group it would join (graph partition's `foreign` rule): stamped iterations are
    partitioned apart from their template's choices."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(16, cols)
    pypto.assemble(pypto.full([16, cols], 2.0, pypto.DT_FP32), [32, 0], out)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        a = pypto.view(x, [16, cols], [i, 0]) * 2.0
        pypto.assemble(a, [i, 0], out2)
        b = pypto.view(out2, [16, cols], [i, 0]) + 1.0
        c = a + pypto.view(out, [16, cols], [i, 0])
        pypto.assemble(b + c, [i, 0], out3)


@pypto.jit
def over_ub(x: pypto.Tensor(), out: pypto.Tensor(), out2: pypto.Tensor(), out3: pypto.Tensor()):
    """64 KiB tiles, several alive at once: subgraphs fill the UB and their overflow goes to successors; then, as
    in `early_write`, one iteration depends on a write before the loop."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(64, 256)
    pypto.assemble(pypto.full([64, cols], 2.0, pypto.DT_FP32), [128, 0], out)
    for i in pypto.loop(0, rows, 64, name="rows", idx_name="i"):
        t = pypto.view(x, [64, cols], [i, 0])
        a = pypto.exp(t)
        b = a * t
        c = b + a
        d = c * t + b * a
        pypto.assemble(d, [i, 0], out2)
        e = pypto.view(out2, [64, cols], [i, 0]) + 1.0
        f = a + pypto.view(out, [64, cols], [i, 0])
        pypto.assemble(e + f + d, [i, 0], out3)


@pypto.jit
def stale(x: pypto.Tensor(), out: pypto.Tensor()):
    """Each iteration takes a view, then writes the tensor under it, then reads the view: a warning."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(16, 32)
    buf = pypto.clone(x)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        old = pypto.view(buf, [16, cols], [i, 0])
        pypto.assemble(pypto.full([16, cols], 1.0, pypto.DT_FP32), [i, 0], buf)
        pypto.assemble(old * 2.0, [i, 0], out)


@pypto.jit
def stale_after(x: pypto.Tensor(), out: pypto.Tensor(), late: pypto.Tensor()):
    """A view taken before the loop and read after it, of a tensor a later (stamped) iteration writes under
    it: a warning only if the stamped iterations' writes are on file."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(16, 32)
    buf = pypto.clone(x)
    old = pypto.view(buf, [16, cols], [rows - 16, 0])
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        pypto.assemble(pypto.view(x, [16, cols], [i, 0]) * 2.0, [i, 0], buf)
    late[:] = old + 1.0
    out[:] = buf


def _f32(*shape: int) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(*shape)


CASES: list[tuple[str, Any, dict[str, Any], bool]] = [  # (name, kernel, inputs, stamps)
    ("carried rows", carried_rows, {"x": _f32(160, 64), "out": _f32(160, 64), "total": _f32(1, 64)}, True),
    ("tail rows", tail_rows, {"x": _f32(150, 64), "out": _f32(150, 64)}, True),
    ("past the end", past_the_end, {"x": _f32(150, 64), "out": _f32(160, 64)}, True),
    ("matmul rows", matmul_rows, {"a": _f32(192, 64), "b": _f32(64, 32), "c": _f32(192, 32)}, True),
    ("reshaped state", reshaped_state, {"x": _f32(128, 32), "state": _f32(16, 32), "out": _f32(128, 32)}, True),
    ("moving state", moving_state,
     {"x": _f32(128, 32), "states": _f32(2, 16, 32), "out": _f32(128, 32), "last": _f32(2, 16, 32)}, True),
    ("a dependency from before the loop", early_write,
     {"x": _f32(128, 32), "out": _f32(128, 32), "out2": _f32(128, 32), "out3": _f32(128, 32)}, True),
    ("over the UB", over_ub,
     {"x": _f32(512, 256), "out": _f32(512, 256), "out2": _f32(512, 256), "out3": _f32(512, 256)}, True),
    ("stale view", stale, {"x": _f32(128, 32), "out": _f32(128, 32)}, False),
    ("stale after the loop", stale_after, {"x": _f32(128, 32), "out": _f32(128, 32), "late": _f32(16, 32)}, True),
]


def _made(kernel: Any, inputs: dict[str, Any], enabled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    """The record's every part that the compiler makes (durations left out), and how many iterations
    were stamped."""
    monkeypatch.setattr(stamp, "ENABLED", enabled)
    before = stamp.stamped()
    record = compile_record(kernel.fresh(), inputs)
    stamped = stamp.stamped() - before
    doc = expanded(record.to_json(include_snapshots=True))
    for p in doc["passes"]:
        p.pop("seconds", None)
    blocks = record.program.blocks or ()
    run = profile(record, "sim").run
    assert run is not None
    lanes = [(t.id, t.lane, t.start, t.end, t.leaf, t.coord, t.preds) for t in run.tasks]
    listings = [record.listing(b.leaf) for b in blocks]
    return (json.dumps(doc, sort_keys=True), listings, lanes, record.program.tiles), stamped


@pytest.mark.parametrize("name, kernel, inputs, stamps", CASES, ids=[c[0] for c in CASES])
def test_stamped_iterations_make_the_record_a_full_expansion_makes(name, kernel, inputs, stamps, monkeypatch):
    full, none = _made(kernel, inputs, False, monkeypatch)
    fast, stamped = _made(kernel, inputs, True, monkeypatch)
    assert none == 0
    assert (stamped > 0) == stamps, f"{name}: {stamped} iterations stamped"
    assert fast[0] == full[0], f"{name}: the record differs"
    if "stale" in name:
        assert "taken before line" in full[0], "the kernel should meet a stale view"
    assert fast[1:] == full[1:], f"{name}: listings, swimlane or tile graph differ"


@pypto.jit
def late_overrun(x: pypto.Tensor(), out: pypto.Tensor()):
    """The output has fewer rows than the loop writes: a later iteration's assemble is out of range."""
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(8, 64)
    for i in pypto.loop(0, rows, 16, name="rows", idx_name="i"):
        pypto.assemble(pypto.view(x, [16, cols], [i, 0]) + 1.0, [i, 0], out)


def test_an_iteration_whose_window_is_out_of_range_raises_as_a_full_expansion_does(monkeypatch):
    inputs = {"x": _f32(160, 64), "out": _f32(100, 64)}
    errors = []
    for enabled in (False, True):
        monkeypatch.setattr(stamp, "ENABLED", enabled)
        with pytest.raises(PyptoError) as e:
            compile_record(late_overrun.fresh(), inputs)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert "assemble" in errors[1]


def test_a_body_with_a_loop_in_it_is_not_stamped_but_its_inner_loop_is(monkeypatch):
    @pypto.jit
    def nested(x: pypto.Tensor(), out: pypto.Tensor()):
        rows, cols = x.shape
        pypto.set_vec_tile_shapes(8, 32)
        for j in pypto.loop(0, cols, 32, name="cols", idx_name="j"):
            for i in pypto.loop(0, rows, 8, name="rows", idx_name="i"):
                t = pypto.view(x, [8, 32], [i, j])
                pypto.assemble(t * t, [i, j], out)

    inputs = {"x": _f32(64, 96), "out": _f32(64, 96)}
    full, _ = _made(nested, inputs, False, monkeypatch)
    fast, stamped = _made(nested, inputs, True, monkeypatch)
    assert 0 < stamped < 8 * 3  # the inner loop's iterations after its witness, in each outer iteration
    assert fast == full
