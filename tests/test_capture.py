"""`pypto-ide capture -- COMMAND`: a kernel's real inputs recorded from the user's own run, and used by
every command that compiles it (docs/capture.md).

- The store: one versioned JSON (+ .npz) per kernel and input signature, the newest kept; every kind of
  argument a capture keeps comes back as it went in, and what it cannot keep is named.
- The user's pytest file calls a DYNAMIC-shaped kernel with a config object and an int tensor that
  drives a loop, and a kernel made inside a factory; `capture` records both; `compile FILE::NAME`
  compiles each with the captured shapes and values and says which capture it used; the record says
  so too; the language server's listing shows the factory's kernel at its `def`.
- A hostile command (raises, hangs, calls no kernel, does not exist) is one clear error.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections import namedtuple
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import numpy as np
import pytest
import torch

import pypto
from pypto.frontend import capture
from pypto.frontend.inputs import example_arguments, inputs_from
from pypto.record import CompileRecord, compile_record

CLI = Path(sys.executable).parent / "pypto-ide"
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((Path(__file__).resolve().parents[1] / "docs" / "compile-record.schema.json").read_text()))

KERNEL = '''
from dataclasses import dataclass

import pypto


@dataclass(frozen=True)
class TileConfig:
    rows: int
    tile: int


@pypto.frontend.jit
def ragged(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
           lens: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
           out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32), cfg, scale):
    pypto.set_vec_tile_shapes(1, cfg.tile)
    for b in pypto.loop(cfg.rows):
        for t in pypto.loop(lens[b]):
            out[b:b + 1, t * cfg.tile:(t + 1) * cfg.tile] = \\
                pypto.exp(x[b:b + 1, t * cfg.tile:(t + 1) * cfg.tile]) * scale


def make_kernel(cfg):
    width = cfg.tile * 4

    @pypto.frontend.jit
    def doubled(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, cfg.tile)
        for b in pypto.loop(cfg.rows):
            out[b:b + 1, 0:width] = x[b:b + 1, 0:width] * 2.0

    return doubled
'''

TEST = '''
import torch

from kern import TileConfig, make_kernel, ragged


def test_ragged():
    cfg = TileConfig(rows=4, tile=16)
    x = torch.randn(4, 64)
    out = torch.zeros(4, 64)
    ragged(x, torch.tensor([1, 4, 0, 2], dtype=torch.int32), out, cfg, 0.5)
    ragged(torch.randn(6, 64), torch.tensor([1, 1, 1, 1], dtype=torch.int32), torch.zeros(6, 64), cfg, 0.5)
    want = torch.zeros(4, 64)
    for b, n in enumerate([1, 4, 0, 2]):
        want[b, :n * 16] = torch.exp(x[b, :n * 16]) * 0.5
    torch.testing.assert_close(out, want)
    k = make_kernel(TileConfig(rows=2, tile=8))
    k(torch.randn(2, 32), torch.zeros(2, 32))
'''


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # the timeout is a safety net for a broken CLI, not what a test measures
    return subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
                          env=None if env is None else {**os.environ, **env})


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The user's project: a kernel file and its pytest file, captured once."""
    root = tmp_path_factory.mktemp("project")
    (root / "kern.py").write_text(KERNEL)
    (root / "test_kern.py").write_text(TEST)
    proc = _cli("capture", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_kern.py", cwd=root)
    return root, proc


def test_capture_runs_the_users_pytest_and_records_each_kernels_first_call(captured):
    root, proc = captured
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout  # the user's test ran, under this pypto, and passed
    store = root / ".pypto" / "captures"
    docs = {c.kernel.qualname: c for c in map(capture.read, store.glob("*.json"))}
    assert set(docs) == {"ragged", "make_kernel.<locals>.doubled"}  # the second call of ragged: not recorded
    ragged = docs["ragged"]
    assert ragged.kernel.file == str(root / "kern.py") and ragged.kernel.line == 14  # the def, not the decorator
    assert ragged.command == "python -m pytest -q -p no:cacheprovider test_kern.py"
    args = ragged.doc["arguments"]
    assert args["x"]["$tensor"]["shape"] == [4, 64] and args["lens"]["$tensor"]["dtype"] == "int32"
    assert args["cfg"] == {"$dataclass": {"module": "kern", "qualname": "TileConfig", "file": str(root / "kern.py"),
                                          "fields": {"rows": 4, "tile": 16}}}
    assert args["scale"] == 0.5
    assert ragged.arrays()[args["lens"]["$tensor"]["values"]].tolist() == [1, 4, 0, 2]
    doubled = docs["make_kernel.<locals>.doubled"]
    assert doubled.doc["closure"]["width"] == 32 and doubled.kernel.line == 28
    # what the command printed: each kernel, where, its signature, the file
    assert "captured ragged  " + f"{root / 'kern.py'}:14" in proc.stdout
    assert "cfg=TileConfig(rows=4, tile=16)" in proc.stdout and "lens: int32[4] + values" in proc.stdout
    assert "    closure: cfg=TileConfig(rows=2, tile=8), width=32" in proc.stdout


def test_compile_uses_the_capture_and_says_so(captured):
    root, _ = captured
    proc = _cli("compile", "kern.py::ragged", cwd=root)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("ragged  ") and "x: fp32[4, 64]" in lines[0] and "scale=0.5" in lines[0]
    assert lines[1].startswith("  inputs: captured from `python -m pytest -q -p no:cacheprovider test_kern.py` at ")
    # the captured lens [1, 4, 0, 2] drive the inner loop: 7 tiles of exp, each one task
    assert "tasks 7 " in proc.stdout


def test_a_kernel_made_inside_a_factory_compiles_by_its_name_or_qualified_name(captured):
    root, _ = captured
    for name in ("doubled", "make_kernel.<locals>.doubled", "make_kernel.doubled"):
        proc = _cli("compile", f"kern.py::{name}", cwd=root)
        assert proc.returncode == 0, proc.stderr
        head = proc.stdout.splitlines()[0]
        assert head.startswith(f"doubled  {root / 'kern.py'}:28  ") and "x: fp32[2, 32]" in head
        assert "inputs: captured from" in proc.stdout and "tasks 8 " in proc.stdout  # rows=2, 4 tiles each
        assert "changed since" not in proc.stdout  # made again from its capture, it is the kernel captured
    whole = _cli("compile", "kern.py", cwd=root)  # every kernel of the file, the factory's among them
    assert whole.returncode == 0 and [ln.split()[0] for ln in whole.stdout.splitlines()
                                      if ln.startswith(("ragged ", "doubled "))] == ["ragged", "doubled"]


def test_the_record_and_the_language_servers_listing_see_captures(captured, monkeypatch):
    from server import analyze

    root, _ = captured
    monkeypatch.syspath_prepend(str(root))
    path = str(root / "kern.py")
    listing = analyze.list_kernels(path, (root / "kern.py").read_text())
    # each at its first decorator's line, the factory's kernel as the module's
    assert [(k["name"], k["line"]) for k in listing["kernels"]] == [("ragged", 13), ("doubled", 27)]
    result = analyze.analyze_kernel(path, (root / "kern.py").read_text(), "doubled", {"board": "sim"})
    assert result["error"] is None, result["error"]
    src = result["record"]["source"]["inputs_from"]
    assert src["kind"] == "capture" and src["qualname"] == "make_kernel.<locals>.doubled"
    assert src["parameters"] == ["x", "out"] and src["command"].startswith("python -m pytest")


def test_the_language_servers_parse_offers_kernels_made_inside_functions_and_report_names_the_capture(captured):
    from server.state import parse_kernels

    root, _ = captured
    kernels, error = parse_kernels((root / "kern.py").read_text(), str(root / "kern.py"), {})
    assert error is None and [(k.name, k.line, k.def_line) for k in kernels] == [("ragged", 13, 14),
                                                                                 ("doubled", 27, 28)]
    proc = _cli("report", "kern.py::doubled", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    (doc,) = json.loads(proc.stdout)
    assert doc["kernel"] == "doubled" and doc["inputs_from"]["qualname"] == "make_kernel.<locals>.doubled"


def test_a_factory_kernel_using_a_helper_made_beside_it_and_a_class_attribute_kernel(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        import pypto


        def build(cfg):
            scale = cfg["scale"]

            def rows_of(t):
                return t * scale

            @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
            def scaled(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
                pypto.set_vec_tile_shapes(1, 16)
                x[:] = rows_of(x)

            return scaled


        class Layer:
            @pypto.frontend.jit
            def bump(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
                pypto.set_vec_tile_shapes(1, 16)
                x[:] = x + 1.0


        def lonely(cfg):
            lock = cfg["lock"]

            @pypto.frontend.jit
            def guarded(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
                pypto.set_vec_tile_shapes(1, 16)
                if lock.locked():
                    x[:] = x * 0.0

            return guarded
    '''))
    (tmp_path / "run.py").write_text(textwrap.dedent('''
        import threading

        import numpy as np

        from model import Layer, build, lonely

        build({"scale": 3.0})(np.ones((5, 16), np.float32))
        Layer.bump(np.ones((2, 16), np.float32))
        lonely({"lock": threading.Lock()})(np.ones((1, 16), np.float32))
    '''))
    proc = _cli("capture", "--", "python", "run.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not stored: closure.lock: a _thread.lock" in proc.stdout
    scaled = _cli("compile", "model.py::scaled", cwd=tmp_path)
    assert scaled.returncode == 0, scaled.stderr
    assert "x: fp32[5, 16]" in scaled.stdout and "inputs: captured from `python run.py`" in scaled.stdout
    bump = _cli("compile", "model.py::Layer.bump", cwd=tmp_path)
    assert bump.returncode == 0, bump.stderr
    assert "x: fp32[2, 16]" in bump.stdout and "inputs: captured from" in bump.stdout
    guarded = _cli("compile", "model.py::guarded", cwd=tmp_path)
    assert guarded.returncode == 1
    assert ("note: the captured kernel lonely.<locals>.guarded cannot be made again: it uses values of the function "
            "it is made in that a capture cannot keep: lock (a _thread.lock)") in guarded.stderr
    assert "no kernel named 'guarded'" in guarded.stderr

    # the checkout moves (the old one gone): its captures move with it, the kernel and its helper are made
    # from the files where they are now
    moved = tmp_path.parent / f"{tmp_path.name}-moved"
    shutil.copytree(tmp_path, moved)
    (tmp_path / "model.py").unlink()
    again = _cli("compile", "model.py::scaled", cwd=moved)
    assert again.returncode == 0, again.stderr
    assert f"scaled  {moved / 'model.py'}:" in again.stdout and f"({moved / '.pypto' / 'captures'}" in again.stdout


def test_a_capture_comes_before_the_docstring_block_and_the_record_keeps_which(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc_kernel.py").write_text(textwrap.dedent('''
        import pypto


        @pypto.frontend.jit
        def scaled(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), factor):
            """pypto-inputs:
                x: fp32[8, 64]
                out: fp32[8, 64]
                factor: 3.0
            """
            pypto.set_vec_tile_shapes(1, 64)
            out[:] = x * factor
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    import doc_kernel

    kernel = doc_kernel.scaled
    assert example_arguments(kernel, values=False)["x"].shape == (8, 64)  # no capture yet: the block
    monkeypatch.setenv(capture.ENV_STORE, str(tmp_path / ".pypto" / "captures"))
    monkeypatch.setenv(capture.ENV_COMMAND, "python run.py")
    kernel(np.ones((2, 64), np.float32), np.zeros((2, 64), np.float32), 0.25)
    monkeypatch.delenv(capture.ENV_STORE)
    args = example_arguments(kernel, values=False)
    assert args["x"].shape == (2, 64) and args["factor"] == 0.25 and args.capture is not None
    assert example_arguments(kernel, values=False, use_capture=False)["x"].shape == (8, 64)
    record = compile_record(kernel)
    assert record.source.inputs_from is not None and record.source.inputs_from["command"] == "python run.py"
    assert record.source.inputs_from["kernel_changed"] is False
    edited = kernel.fresh()  # the same kernel, as if its source had changed since the capture
    edited.source_hash = "edited since"
    assert inputs_from(example_arguments(edited, values=False))["kernel_changed"] is True
    doc = json.loads(json.dumps(record.to_json()))
    SCHEMA.validate(doc)
    again = CompileRecord.from_json(doc)
    assert again.source.inputs_from == record.source.inputs_from
    assert [i.shape for i in record.inputs if i.name == "x"] == [(2, 64)]

    # a captured tensor too large to make here (its values not kept, as a big one's are not): refused (as a
    # docstring's would be), naming the capture, which comes before the docstring block
    path = Path(record.source.inputs_from["file"])
    big = json.loads(path.read_text())
    big["arguments"]["x"]["$tensor"].update(shape=[1 << 40, 64], values=None)
    path.write_text(json.dumps(big))
    with pytest.raises(pypto.PyptoError, match=r"x: its captured input \(fp32\[1099511627776, 64\], from .*\) "
                                               r"needs 256\.0 TB.*delete that capture"):
        example_arguments(kernel)


# ---- the store ----------------------------------------------------------------------------------

@dataclasses.dataclass
class Config:
    block: tuple[int, int]
    dtype: pypto.DataType
    scale: float


Pair = namedtuple("Pair", "a b")


class Mode(enum.Enum):
    FAST = 1


class Plain:
    def __init__(self) -> None:
        self.depth = 3
        self.names = ["q", "k"]


@pypto.frontend.jit
def anything(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), table, big, wide, cfg, pair, mode, plain, odd,
             lock, weird):
    pypto.set_vec_tile_shapes(1, 8)
    x[:] = x * 2.0


def test_the_store_round_trips_every_kind_of_argument_and_names_what_it_cannot_keep(tmp_path):
    x = torch.arange(16, dtype=torch.float32).reshape(2, 8)
    table = np.arange(12, dtype=np.int32).reshape(3, 4)
    big = np.zeros(capture.SMALL_BYTES // 4 + 1, np.float32)  # over the bound: shape and dtype only
    wide = np.ones(capture.SMALL_BYTES * 2, np.int8)  # an int tensor over the small bound: kept
    cfg = Config((16, 32), pypto.DT_BF16, float("inf"))
    odd = {1: (2, 3), "$x": None}
    bound = anything.signature.bind(x, table, big, wide, cfg, Pair(1, [2.5]), Mode.FAST, Plain(), odd,
                                    threading.Lock(), lambda: 1).arguments
    doc, arrays = capture.capture_document(anything, bound, "python t.py", "s1")
    assert set(doc["unstored"]) == {"lock", "weird"} and "_thread.lock" in doc["unstored"]["lock"]
    path = capture.write(tmp_path, doc, arrays)
    again = capture.read(path)
    assert again.doc["format"] == "pypto-ide/capture" and again.doc["version"] == capture.VERSION
    assert "not_kept" in again.doc["arguments"]["big"]["$tensor"]

    def missing(name, dt, shape, was_torch):
        return ("generated", name, dt.short, shape)

    got = capture.arguments(again, anything, missing)
    assert isinstance(got["x"], torch.Tensor) and torch.equal(got["x"], x)  # torch in, torch out
    as_numpy = capture.arguments(again, anything, missing, like_torch=False)["x"]  # unless asked for numpy
    assert isinstance(as_numpy, np.ndarray) and np.array_equal(as_numpy, x.numpy())
    assert isinstance(got["table"], np.ndarray) and np.array_equal(got["table"], table)
    assert got["big"] == ("generated", "big", "fp32", (capture.SMALL_BYTES // 4 + 1,))
    assert np.array_equal(got["wide"], wide)
    assert got["cfg"] == cfg and got["pair"] == Pair(1, [2.5]) and got["mode"] is Mode.FAST
    assert isinstance(got["plain"], Plain) and vars(got["plain"]) == {"depth": 3, "names": ["q", "k"]}
    assert got["odd"] == odd and "lock" not in got and "weird" not in got
    # a newer call of the same signature replaces the capture (its values file too); another signature is
    # a capture of its own
    doc2, arrays2 = capture.capture_document(anything, bound, "python t.py", "s2")
    capture.write(tmp_path, doc2, arrays2)
    assert len(list(tmp_path.glob("*.json"))) == 1 and len(list(tmp_path.glob("*.npz"))) == 1
    assert capture.read(path).doc["session"] == "s2"
    other = dict(bound, x=torch.zeros(5, 8))
    capture.write(tmp_path, *capture.capture_document(anything, other, "python t.py", "s3"))
    assert len(list(tmp_path.glob("*.json"))) == 2


@dataclasses.dataclass
class SetInInit:  # `@dataclass` over a class without annotations: every attribute set by its own __init__
    def __init__(self) -> None:
        self.unroll = [8, 4, 2, 1]
        self.tile = 16


class Marker:
    def __init__(self, name: str) -> None:
        self.name = name


MARK = Marker("MARK")  # a sentinel compared by identity, as pypto.DYNAMIC


def test_sentinels_come_back_as_themselves_and_a_dataclass_keeps_what_its_init_set(tmp_path):
    cfg = SetInInit()
    cfg.unroll = [2, 1]  # as the program changed it before the call
    changed = Marker("MARK")
    sentinels = (pypto.DYNAMIC, pypto.STATIC, MARK, torch.bfloat16)
    doc, arrays = capture.capture_document(anything, {"cfg": cfg, "pair": sentinels, "plain": changed}, "", "")
    assert doc["unstored"] == {}
    got = capture.arguments(capture.read(capture.write(tmp_path, doc, arrays)), anything, lambda *a: None)
    assert all(a is b for a, b in zip(got["pair"], sentinels, strict=True))
    assert isinstance(got["cfg"], SetInInit) and vars(got["cfg"]) == {"unroll": [2, 1], "tile": 16}
    assert got["plain"] is not MARK and vars(got["plain"]) == {"name": "MARK"}  # not a module's object
    MARK.name = "renamed"  # a module's object changed since the capture: a copy of the one captured
    try:
        doc, arrays = capture.capture_document(anything, {"plain": MARK}, "", "")
        MARK.name = "MARK"
        got = capture.arguments(capture.read(capture.write(tmp_path, doc, arrays)), anything, lambda *a: None)
        assert got["plain"] is not MARK and vars(got["plain"]) == {"name": "renamed"}
    finally:
        MARK.name = "MARK"


def test_a_capture_made_before_the_tracer_moved_finds_its_sentinels_under_the_new_module(tmp_path):
    """Captures made before session 15 name pypto.language.tensor.DYNAMIC (the tracer is pypto.tracing now,
    pypto.language is PyPTO 3's): they still come back as the sentinels, not as namespaces of their fields."""
    doc, arrays = capture.capture_document(anything, {"pair": (pypto.DYNAMIC, pypto.STATIC)}, "", "")
    text = json.dumps(doc)
    assert '"pypto.tracing.tensor"' in text
    old = json.loads(text.replace('"pypto.tracing.', '"pypto.language.'))
    got = capture.arguments(capture.read(capture.write(tmp_path, old, arrays)), anything, lambda *a: None)
    assert got["pair"][0] is pypto.DYNAMIC and got["pair"][1] is pypto.STATIC


def test_a_factory_kernel_whose_shapes_use_pypto_dynamic_from_the_factory_is_made_again(tmp_path):
    (tmp_path / "fact.py").write_text(textwrap.dedent('''
        import numpy as np

        import pypto


        def make(width):
            rows = pypto.DYNAMIC
            shape = [rows, width]

            @pypto.frontend.jit
            def scaled(x: pypto.Tensor(shape, pypto.DT_FP32)):
                pypto.set_vec_tile_shapes(1, width)
                x[:] = x * 2.0

            return scaled


        if __name__ == "__main__":
            make(16)(np.ones((3, 16), np.float32))
    '''))
    proc = _cli("capture", "--", "python", "fact.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = _cli("compile", "fact.py::scaled", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "x: fp32[3, 16]" in out.stdout and "inputs: captured from `python fact.py`" in out.stdout


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn, torch.float16, torch.int64, torch.bool])
def test_tensor_values_of_every_dtype_come_back_bit_for_bit(tmp_path, dtype):
    x = (torch.randn(3, 5) * 4).to(dtype)
    doc, arrays = capture.capture_document(anything, {"x": x}, "", "")
    got = capture.arguments(capture.read(capture.write(tmp_path, doc, arrays)), anything, lambda *a: None)["x"]
    assert got.dtype == dtype and torch.equal(got.view(torch.uint8), x.view(torch.uint8))


def test_a_class_that_cannot_be_found_comes_back_as_a_namespace_of_its_fields(tmp_path):
    doc, arrays = capture.capture_document(anything, {"cfg": Config((1, 2), pypto.DT_FP16, 0.5)}, "", "")
    doc["arguments"]["cfg"]["$dataclass"]["module"] = "no_such_module_here"
    doc["arguments"]["cfg"]["$dataclass"]["qualname"] = "Gone"
    got = capture.arguments(capture.read(capture.write(tmp_path, doc, arrays)), anything, lambda *a: None)
    assert got["cfg"] == SimpleNamespace(block=(1, 2), dtype=pypto.DT_FP16, scale=0.5)


# ---- hostile commands ---------------------------------------------------------------------------

def test_a_command_that_raises_hangs_calls_no_kernel_or_does_not_exist_is_one_clear_error(tmp_path):
    (tmp_path / "boom.py").write_text("raise RuntimeError('the user script failed')\n")
    proc = _cli("capture", "--", "python", "boom.py", cwd=tmp_path)
    assert proc.returncode == 1 and "RuntimeError: the user script failed" in proc.stderr  # the command's own output
    assert "capture: error: `python boom.py` exited with status 1; nothing was captured" in proc.stderr

    (tmp_path / "spin.py").write_text("while True:\n    pass\n")
    proc = _cli("capture", "--timeout", "1", "--", "python", "spin.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "capture: error: `python spin.py` did not finish within 1 s (--timeout): stopped" in proc.stderr

    (tmp_path / "idle.py").write_text("import pypto\nprint('no kernels here')\n")
    proc = _cli("capture", "--", "python", "idle.py", cwd=tmp_path)
    assert proc.returncode == 1 and "called no @pypto.jit kernel" in proc.stderr and "Traceback" not in proc.stderr

    proc = _cli("capture", "--", "no-such-program-here", cwd=tmp_path)
    assert proc.returncode == 1 and "capture: error: cannot run `no-such-program-here`" in proc.stderr
    proc = _cli("capture", cwd=tmp_path)
    assert proc.returncode == 1 and "no command" in proc.stderr


SKIPS = '''
import pytest
import torch

from kern import make_kernel, TileConfig

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.skip(reason="large test case")
def test_big():
    make_kernel(TileConfig(rows=2, tile=8))(torch.randn(2, 32), torch.zeros(2, 32))


class TestDevice:
    @pytest.mark.skipif("True", reason="needs an A5 chip")
    def test_a5(self):
        pass


def test_here():
    pytest.skip("no device here")


@pytest.mark.xfail(reason="known", strict=False)
def test_known():
    assert False


def test_scribbles():  # user code writes over the capture's file: what is not an entry is passed over
    import os
    with open(os.environ["PYPTO_CAPTURE_SKIPS"], "a") as f:
        f.write("not json\\n" + "x" * 2_000_000 + "\\n[1, 2]\\n" + '{"test": 3}\\n')
'''


def test_a_pytest_run_says_what_it_skipped_and_run_skipped_runs_the_tests_their_marks_skip(tmp_path):
    (tmp_path / "kern.py").write_text(KERNEL)
    (tmp_path / "test_skips.py").write_text(SKIPS)
    (tmp_path / "userplug.py").write_text("def pytest_configure(config):\n    print('userplug configured')\n")
    proc = _cli("capture", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_skips.py",
                cwd=tmp_path, env={"PYTEST_PLUGINS": "userplug"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "skipped test_skips.py::test_big  by its skip mark: large test case\n" in proc.stdout
    assert "skipped test_skips.py::TestDevice::test_a5  by its skip mark: needs an A5 chip\n" in proc.stdout
    assert "skipped test_skips.py::test_here  at run time: no device here\n" in proc.stdout
    assert "test_known" not in proc.stdout  # an xfail is no skip
    assert proc.stderr.rstrip().endswith("nothing captured; pytest skipped 2 test(s) by their skip marks: "
                                         "--run-skipped runs them")
    assert not (tmp_path / ".pypto" / "captures").exists()

    proc = _cli("capture", "--run-skipped", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "test_skips.py", cwd=tmp_path, env={"PYTEST_PLUGINS": "userplug"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed, 1 skipped, 1 xfailed" in proc.stdout
    assert "userplug configured" in proc.stdout  # the user's own PYTEST_PLUGINS still loaded
    assert "captured make_kernel.<locals>.doubled  " in proc.stdout
    assert "unskipped test_skips.py::test_big  (its skip mark lifted): large test case\n" in proc.stdout
    assert "unskipped test_skips.py::TestDevice::test_a5  (its skip mark lifted): needs an A5 chip\n" in proc.stdout
    assert "skipped test_skips.py::test_here  at run time: no device here\n" in proc.stdout  # nothing lifts that
    # a command that runs no pytest: no such lines, and the user's environment keeps its own plugins only
    (tmp_path / "run.py").write_text("import os\nprint('plugins:', os.environ.get('PYTEST_PLUGINS'))\n"
                                     "from kern import make_kernel, TileConfig\nimport torch\nmake_kernel(TileConfig("
                                     "rows=2, tile=8))(torch.randn(2, 32), torch.zeros(2, 32))\n")
    proc = _cli("capture", "--", "python", "run.py", cwd=tmp_path)
    assert proc.returncode == 0 and "skipped" not in proc.stdout, proc.stdout + proc.stderr
    assert f"plugins: {capture.PYTEST_PLUGIN}\n" in proc.stdout


def test_a_command_killed_by_a_signal_is_told_which_and_a_sigkill_it_did_not_send_where_one_comes_from(tmp_path):
    (tmp_path / "killed.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    proc = _cli("capture", "--memory-limit-mb", "9000", "--", "python", "killed.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "capture: error: `python killed.py` was killed by SIGKILL (signal 9), not by this capture: by the " \
           "system's out-of-memory killer (the machine ran out of memory; its memory cap (9000 MB) would have " \
           "raised MemoryError; run fewer commands at once or lower --memory-limit-mb) or by another process" \
        in proc.stderr

    (tmp_path / "terminated.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    proc = _cli("capture", "--", "python", "terminated.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "capture: error: `python terminated.py` was killed by SIGTERM (signal 15); nothing was captured" \
        in proc.stderr


def test_a_program_written_for_the_npu_is_captured_with_the_torch_npu_stand_in(tmp_path):
    (tmp_path / "npu_run.py").write_text(textwrap.dedent('''
        import torch
        import torch_npu  # noqa: F401

        import pypto


        @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
        def double(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 8)
            x[:] = x * 2.0


        torch.npu.set_device(0)
        x = torch.ones(3, 8).npu()
        double(x)
        torch.npu.synchronize()
        print("result", x.cpu()[0, 0].item())
    '''))
    proc = _cli("capture", "--", "python", "npu_run.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "result 2.0" in proc.stdout and "captured double  " in proc.stdout and "x: fp32[3, 8]" in proc.stdout
    off = _cli("capture", "--no-npu-standin", "--", "python", "npu_run.py", cwd=tmp_path)
    assert off.returncode == 1 and "No module named 'torch_npu'" in off.stderr


def test_an_npu_script_that_runs_only_on_a_machine_with_a_device_id_is_captured(tmp_path):
    (tmp_path / "device_run.py").write_text(textwrap.dedent('''
        import os

        import numpy as np

        import pypto


        @pypto.frontend.jit
        def double(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 8)
            x[:] = x * 2.0


        if "TILE_FWK_DEVICE_ID" not in os.environ:  # as PyPTO's scripts: no device, no run
            print("no device")
        else:
            print("device", os.environ["TILE_FWK_DEVICE_ID"])
            double(np.ones((3, 8), np.float32))
    '''))
    env = {k: v for k, v in os.environ.items() if k != "TILE_FWK_DEVICE_ID"}
    proc = subprocess.run([str(CLI), "capture", "--", "python", "device_run.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "device 0" in proc.stdout and "captured double  " in proc.stdout
    own = _cli("capture", "--", "python", "device_run.py", cwd=tmp_path, env={"TILE_FWK_DEVICE_ID": "3"})
    assert "device 3" in own.stdout  # the user's own setting wins
    off = subprocess.run([str(CLI), "capture", "--no-npu-standin", "--", "python", "device_run.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=False, env=env)
    assert "no device" in off.stdout and off.returncode == 1


def test_all_records_every_call_and_store_puts_captures_where_asked(tmp_path):
    (tmp_path / "twice.py").write_text(textwrap.dedent('''
        import numpy as np
        import pypto


        @pypto.frontend.jit
        def double(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 8)
            x[:] = x * 2.0


        for rows in (1, 2, 2):
            double(np.ones((rows, 8), np.float32))
    '''))
    proc = _cli("capture", "--all", "--store", "elsewhere", "--", "python", "twice.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    files = sorted((tmp_path / "elsewhere").glob("*.json"))
    assert len(files) == 2 and not (tmp_path / ".pypto").exists()  # two signatures; rows=2 kept once
    assert proc.stdout.count("captured double ") == 2
    # a store elsewhere is found through PYPTO_CAPTURE_PATH; the newest capture is used
    plain = _cli("compile", "twice.py", cwd=tmp_path)
    assert plain.returncode == 1 and "cannot make example inputs for 'x'" in plain.stderr
    found = _cli("compile", "twice.py", cwd=tmp_path, env={"PYPTO_CAPTURE_PATH": str(tmp_path / "elsewhere")})
    assert found.returncode == 0, found.stderr
    assert "x: fp32[2, 8]" in found.stdout and "inputs: captured from `python twice.py`" in found.stdout



TWINS = """
import pypto

T = pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)


def make_scaled(factor):
    @pypto.frontend.jit
    def kernel(x: T, out: T):
        pypto.set_vec_tile_shapes(1, 32)
        out[:, :] = x * factor
    return kernel


def make_shifted(shift):
    @pypto.frontend.jit
    def kernel(x: T, out: T):
        pypto.set_vec_tile_shapes(1, 32)
        out[:, :] = x + shift
    return kernel


if __name__ == "__main__":
    import torch

    make_scaled(2.0)(torch.ones(2, 32), torch.zeros(2, 32))
    make_shifted(1.0)(torch.ones(3, 32), torch.zeros(3, 32))
"""


def test_a_name_two_factories_kernels_share_is_refused_alike_by_every_door_naming_both(tmp_path):
    from server.analyze import analyze_kernel

    (tmp_path / "twins.py").write_text(TWINS)
    proc = _cli("capture", "--", "python", "twins.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    why = ("'kernel' is the name of 2 kernels made inside functions: name one by its qualified name "
           "(make_scaled.<locals>.kernel, make_shifted.<locals>.kernel)")
    short = _cli("compile", "twins.py::kernel", cwd=tmp_path)  # before: the first of the two, silently
    assert short.returncode == 1 and f"twins.py:1: error: {why}" in short.stderr, short.stdout + short.stderr
    path = str(tmp_path / "twins.py")
    err = analyze_kernel(path, TWINS, "kernel", {"health": False})["error"]  # the servers' job
    assert err["message"] == why and err["line"] == 1
    for qualname, rows in (("make_scaled.<locals>.kernel", 2), ("make_shifted.<locals>.kernel", 3)):
        named = _cli("compile", f"twins.py::{qualname}", cwd=tmp_path)
        assert named.returncode == 0 and f"x: fp32[{rows}, 32]" in named.stdout, named.stderr
        assert analyze_kernel(path, TWINS, qualname, {"health": False})["error"] is None
    unknown = _cli("compile", "twins.py::nothing", cwd=tmp_path)
    assert "(kernels: make_scaled.<locals>.kernel, make_shifted.<locals>.kernel)" in unknown.stderr
    assert "(kernels: make_scaled.<locals>.kernel, make_shifted.<locals>.kernel)" in \
        analyze_kernel(path, TWINS, "nothing", {"health": False})["error"]["message"]


# ---- serve ----------------------------------------------------------------------------------------

def test_serve_lists_a_captured_factory_kernel_and_its_job_says_which_capture(tmp_path):
    import httpx
    from test_http import WAIT, Server, finished, submit

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kern.py").write_text(KERNEL)
    (ws / "test_kern.py").write_text(TEST)
    proc = _cli("capture", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_kern.py", cwd=ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    server = Server([str(ws), "--port", "0", "--workers", "1", "--no-watch",
                     "--webview", str(tmp_path / "no-bundle")])
    try:
        with httpx.Client(base_url=server.url, timeout=WAIT) as client:
            ids = {k["id"]: k for k in client.get("/api/v1/kernels").json()["kernels"]}
            assert {"kern.py::ragged", "kern.py::doubled"} <= set(ids) and ids["kern.py::doubled"]["line"] == 27
            job = submit(client, "kern.py::doubled", "profile")
            assert finished(client, job["id"])["status"] == "done"
            result = client.get(f"/api/v1/jobs/{job['id']}/result").json()
            assert result["error"] is None and result["summary"]["tasks"] == 8
            assert result["inputs_from"]["qualname"] == "make_kernel.<locals>.doubled"
    finally:
        server.stop()


def test_the_default_memory_cap_is_three_quarters_of_the_machine_and_at_least_8_gib():
    from pypto.cli import CAPTURE_MEMORY_MB

    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert CAPTURE_MEMORY_MB == max(8192, (total * 3 // 4) >> 20)
