"""The bad-kernel corpus in tests/errors/: every user mistake is one `pypto.PyptoError`
located at the user's line (see tests/errors/README.md for the file format)."""

from __future__ import annotations

import builtins
import os
import re
import textwrap
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

import pypto
import pypto.npu
from pypto.cli import load_module

ERRORS_DIR = Path(__file__).parent / "errors"
PYPTO_DIR = os.path.dirname(os.path.realpath(pypto.__file__)) + os.sep

_ERROR = re.compile(r"#\s*ERROR:\s*(?P<regex>.*?)\s*$")
_CALLSITE = re.compile(r"#\s*CALLSITE\s+(?P<index>\d+)\s*$")
_XFAIL = re.compile(r"^#\s*XFAIL:\s*(?:(?P<exc>[A-Z]\w*(?:Error|Exception)):\s*)?(?P<reason>.*?)\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    line: int  # the line marked `# ERROR:`
    regex: str
    callsites: dict[int, int]  # index into e.loc.frames -> line marked `# CALLSITE <index>`
    xfail: tuple[str | None, str] | None  # (exception raised today instead, or None; reason)


def parse_case(path: Path) -> Case:
    found: list[tuple[int, str]] = []
    callsites: dict[int, int] = {}
    xfail = None
    for no, text in enumerate(path.read_text().splitlines(), start=1):
        if m := _ERROR.search(text):
            found.append((no, m["regex"]))
        if m := _CALLSITE.search(text):
            callsites[int(m["index"])] = no
        if m := _XFAIL.match(text):
            xfail = (m["exc"], m["reason"])
    assert len(found) == 1, f"{path.name}: needs exactly one `# ERROR: <regex>` marker, found {len(found)}"
    (line, regex), = found
    return Case(path, line, regex, callsites, xfail)


def corpus_files() -> list[Path]:
    return sorted(p for p in ERRORS_DIR.glob("*.py") if not p.name.startswith("_"))


def load(path: Path) -> ModuleType:
    return load_module(path, prefix="pypto_error_corpus_")


def _param(path: Path) -> object:
    case = parse_case(path)
    marks = []
    if case.xfail is not None:
        raises = getattr(builtins, case.xfail[0]) if case.xfail[0] else None
        marks.append(pytest.mark.xfail(strict=True, raises=raises, reason=case.xfail[1]))
    return pytest.param(case, id=path.stem, marks=marks)


@pytest.fixture(autouse=True)
def _clean_options():
    pypto.reset_options()
    yield
    pypto.reset_options()


def _in_pypto(filename: str) -> bool:
    return os.path.realpath(filename).startswith(PYPTO_DIR)


def pypto_frames_in_traceback(e: BaseException) -> list[traceback.FrameSummary]:
    """The pypto frames of `e`'s traceback that a user would see below their own code.

    Allowed: nothing, or exactly one frame that ends the traceback — the public pypto entry
    point the user called (the kernel's `__call__` re-raising with `e.with_traceback(None)`,
    an options setter, `pypto.Tensor(...)`), with none of pypto's internals below it."""
    tb = traceback.extract_tb(e.__traceback__)
    inside = [f for f in tb if _in_pypto(f.filename)]
    if len(inside) == 1 and inside[0] is tb[-1]:
        return []
    return inside


@pytest.mark.parametrize("case", [_param(p) for p in corpus_files()])
def test_bad_kernel(case: Case) -> None:
    mod = load(case.path)
    pypto.npu.set_for_tools(False)  # trigger() is the user's own call, where run_mode NPU is refused (docs/npu.md)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pypto.PyptoWarning)
        with pytest.raises(pypto.PyptoError) as info:
            mod.trigger()
    e = info.value
    where = f"\n--- error was:\n{e}"
    # the location is the user's file and the marked line
    assert os.path.samefile(e.file, case.path), f"reported in {e.file}, expected {case.path}{where}"
    assert e.line == case.line, f"reported at line {e.line}, expected line {case.line}{where}"
    assert re.search(case.regex, e.message), f"message {e.message!r} does not match {case.regex!r}"
    assert str(e).startswith(f"{e.file}:{case.line}:"), where
    # no frame of the callsite chain is inside pypto
    for fr in e.loc.frames:
        assert not _in_pypto(fr.file), f"callsite chain has a pypto frame {fr}{where}"
    for index, line in case.callsites.items():
        assert len(e.loc.frames) > index, f"callsite chain {e.loc} has no frame {index}{where}"
        fr = e.loc.frames[index]
        assert os.path.samefile(fr.file, case.path) and fr.line == line, \
            f"callsite frame {index} is {fr}, expected line {line}{where}"
    # the traceback shows the user's code, not pypto's internals
    inside = pypto_frames_in_traceback(e)
    assert not inside, "traceback shows pypto internals:\n" + "".join(traceback.format_list(inside))


def test_corpus_is_large_enough() -> None:
    files = corpus_files()
    assert len(files) >= 20, [p.name for p in files]
    for p in files:
        parse_case(p)  # every file has exactly one ERROR marker


def test_importing_a_corpus_file_does_nothing() -> None:
    for p in corpus_files():
        mod = load(p)
        assert callable(mod.trigger)


def test_helper_error_has_callsite_chain() -> None:
    """Spelled out for the helper case: frame 0 is inside the helper, frame 1 is the kernel's call."""
    path = ERRORS_DIR / "error_in_helper.py"
    case = parse_case(path)
    mod = load(path)
    with pytest.raises(pypto.PyptoError) as info:
        mod.trigger()
    frames = info.value.loc.frames
    assert frames[0].func == "rms_normalize" and frames[0].line == case.line
    assert frames[1].func == "rms_norm_kernel" and frames[1].line == case.callsites[1]
    assert "called from" in str(info.value)


def test_tool_keeps_working_after_a_runtime_error() -> None:
    """The same kernel object, called again with fixed inputs, compiles and runs correctly."""
    mod = load(ERRORS_DIR / "dynamic_dim_mismatch.py")
    kernel = mod.add_batches
    x, y_bad, out = torch.randn(8, 64), torch.randn(4, 64), torch.zeros(8, 64)
    with pytest.raises(pypto.PyptoError):
        kernel(x, y_bad, out)
    assert torch.count_nonzero(out) == 0  # a failed run writes nothing
    y = torch.randn(8, 64)
    kernel(x, y, out)
    torch.testing.assert_close(out, x + y)
    assert kernel.compile_count == 1  # the DYNAMIC axis did not recompile


def test_tool_keeps_working_after_a_trace_error() -> None:
    """A trace-time error (bad tile shape from a constant argument), then a good call of the same
    kernel, then a different kernel: no builder or option state is left over from the failure."""

    @pypto.frontend.jit
    def scaled_exp(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), tile: int):
        pypto.set_vec_tile_shapes(4, tile)
        for i in pypto.loop(0, x.shape[0], 4, name="LOOP_rows", idx_name="i"):
            out[i:i + 4, :] = pypto.exp(x[i:i + 4, :]) * 2.0

    x, out = torch.randn(8, 64), torch.zeros(8, 64)
    with pytest.raises(pypto.PyptoError, match="every tile size must be > 0"):
        scaled_exp(x, out, 0)
    assert pypto.tracing.builder.current() is None
    scaled_exp(x, out, 16)
    torch.testing.assert_close(out, torch.exp(x) * 2.0)

    mod = load(ERRORS_DIR / "vec_tile_fewer_dims_than_rank.py")
    with pytest.raises(pypto.PyptoError):
        mod.trigger()
    other = load(ERRORS_DIR / "shape_mismatch_add.py")
    with pytest.raises(pypto.PyptoError):
        other.trigger()
    a = np.random.rand(16, 64).astype(np.float32)
    b = np.empty_like(a)
    scaled_exp(a, b, 64)
    np.testing.assert_allclose(b, np.exp(a) * 2.0, rtol=1e-5)


def test_five_tile_entries_warn_at_the_users_line() -> None:
    """5 tile entries are accepted with a warning, and the warning points at the user's call."""

    @pypto.frontend.jit
    def add5(x: pypto.Tensor([2, 2, 2, 4, 64], pypto.DT_FP32), out: pypto.Tensor([2, 2, 2, 4, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 1, 1, 4, 64)
        out[:] = x + 1.0

    line = add5.__wrapped__.__code__.co_firstlineno + 2
    x, out = torch.randn(2, 2, 2, 4, 64), torch.empty(2, 2, 2, 4, 64)
    with pytest.warns(pypto.PyptoWarning, match="5 entries") as record:
        add5(x, out)
    torch.testing.assert_close(out, x + 1.0)
    w = [r for r in record if issubclass(r.category, pypto.PyptoWarning)][0]
    assert os.path.samefile(w.filename, __file__) and w.lineno == line, (w.filename, w.lineno)


@pytest.mark.parametrize(("call", "message"), [
    ("pypto.loop(0, 8, 0.5)", "pypto.loop: step must be an int or a symbolic scalar, got float 0.5"),
    ("pypto.loop(0.0, 8)", "pypto.loop: start must be an int or a symbolic scalar, got float 0.0"),
    ("pypto.loop(8.0)", "pypto.loop: stop must be an int or a symbolic scalar, got float 8.0"),
    ("pypto.loop(0, '8')", "pypto.loop: stop must be an int or a symbolic scalar, got str '8'"),
    ("pypto.loop(0, 8, True)", "pypto.loop: step must be an int or a symbolic scalar, got bool True"),
])
def test_a_loop_argument_that_is_not_an_int_is_named_at_the_loop(call: str, message: str) -> None:
    """Issue 27: `pypto.loop(0, 8, 0.5)` said "expected an int or symbolic scalar, got float 0.5",
    naming neither the loop nor its step."""
    scope: dict[str, object] = {}
    exec(compile(textwrap.dedent(f'''
        import pypto


        @pypto.frontend.jit
        def rows(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 64)
            for i in {call}:
                out[i:i + 1, :] = x[i:i + 1, :]
        '''), __file__ + ":loop", "exec"), scope)
    with pytest.raises(pypto.PyptoError) as info:
        scope["rows"](torch.randn(8, 64), torch.empty(8, 64))  # type: ignore[operator]
    assert info.value.message == message
    assert info.value.line == 8  # the `for` line


def test_a_loop_unroll_argument_that_is_not_an_int_is_named_at_the_loop() -> None:
    @pypto.frontend.jit
    def rows(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i, _ in pypto.loop_unroll(0, 8, 0.5, unroll_list=[2]):
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(pypto.PyptoError) as info:
        rows(torch.randn(8, 64), torch.empty(8, 64))
    assert info.value.message == "pypto.loop_unroll: step must be an int or a symbolic scalar, got float 0.5"
    assert info.value.line == rows.__wrapped__.__code__.co_firstlineno + 3


def test_loop_bounds_that_are_ints_or_symbolic_scalars_still_work() -> None:
    """numpy integers and a DYNAMIC dim (a symbolic scalar) are loop bounds as before."""

    @pypto.frontend.jit
    def rows(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
             out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 64)
        for i in pypto.loop(np.int64(0), x.shape[0], np.int32(2)):
            out[i:i + 2, :] = x[i:i + 2, :] + 1.0

    x, out = torch.randn(8, 64), torch.zeros(8, 64)
    rows(x, out)
    torch.testing.assert_close(out, x + 1.0)


@pytest.mark.parametrize(("statement", "message"), [
    ("out[0:1, :] = x[9:10, :]", "slice 9:10 of dim 0 starts past its end (size 8)"),  # getitem
    ("out[9:10, :] = x[0:1, :]", "slice 9:10 of dim 0 starts past its end (size 8)"),  # setitem
    ("out[0:1, :] = x[8:9, :]", "slice 8:9 of dim 0 starts past its end (size 8)"),  # row 8 of rows 0-7
    ("out[:, 0:8] = x[0:1, 70:]", "slice 70: of dim 1 starts past its end (size 64)"),
    ("out[0:1, :] = x[-1:, :][3:4, :]", "slice 3:4 of dim 0 starts past its end (size 1)"),
])
def test_a_slice_that_starts_past_the_end_of_its_dim_is_an_error_at_the_slice(statement: str, message: str) -> None:
    """Issue 27: `x[9:10, :]` of an 8-row tensor said "assigning shape [0, 64] to a slice of shape
    [1, 64]" (or crashed at run time); the slice is the mistake, where it is taken."""
    scope: dict[str, object] = {}
    exec(compile(textwrap.dedent(f'''
        import pypto


        @pypto.frontend.jit
        def rows(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 64)
            {statement}
        '''), __file__ + ":slice", "exec"), scope)
    with pytest.raises(pypto.PyptoError) as info:
        scope["rows"](torch.randn(8, 64), torch.zeros(8, 64))  # type: ignore[operator]
    assert info.value.message == message
    assert info.value.line == 8


def test_slices_pypto_accepts_are_not_refused() -> None:
    """Only a static start past a static size is refused: a stop past the end reads and writes the
    part inside (as before), an empty slice at the end is no error, and symbolic starts are not
    checked while tracing."""

    @pypto.frontend.jit
    def tail(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 64)
        out[6:10, :] = x[6:10, :] * 2.0
        _ = x[8:, :]  # empty: unused, but no error
        for i in pypto.loop(0, 6, 2):
            out[i:i + 2, :] = x[i:i + 2, :] + 1.0

    x, out = torch.randn(8, 64), torch.zeros(8, 64)
    tail(x, out)
    torch.testing.assert_close(out[6:], x[6:] * 2.0)
    torch.testing.assert_close(out[:6], x[:6] + 1.0)
