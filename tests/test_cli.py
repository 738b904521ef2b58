"""`pypto-ide compile`: a real subprocess on an example (table, dumps, JSON), exports, the
stage cut-off, and every mistake reported as one `file:line: error:` line with exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pypto.cli import main
from pypto.compiler.pipeline import PIPELINE

REPO = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "pypto-ide"
SOFTMAX = REPO / "examples" / "softmax.py"
SCHEMA = jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "compile-record.schema.json").read_text()))


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_compile_softmax_in_a_subprocess_prints_every_pass_and_dumps(tmp_path):
    proc = _run("compile", str(SOFTMAX), "--dump", "tmp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("softmax_kernel  ") and "x: fp32[32, 32, 1, 256]" in lines[0]
    rows = [ln.split() for ln in lines[2:] if ln.strip() and ln.split()[0].isdigit()]
    names = [r[2] for r in rows]
    assert names == [p.name for p in PIPELINE][: len(names)] and "verify" in names and "dce" in names
    assert {r[3] for r in rows} <= {"yes", "–"}
    folder = tmp_path / "tmp" / "softmax_kernel"
    files = sorted(f.name for f in folder.glob("[0-9]*.json"))
    assert files == [f"{int(r[0]):03d}_{r[2]}.json" for r in rows]
    dump = json.loads((folder / files[1]).read_text())
    assert dump["pass"]["name"] == "decompose" and dump["graph"]["name"] == "softmax_kernel"
    record = json.loads((folder / "record.json").read_text())
    SCHEMA.validate(record)
    assert [p["name"] for p in record["passes"]] == names



def test_compile_listing_prints_and_dumps_each_leafs_listing_in_order(tmp_path, capsys):
    """`--listing` prints every leaf function's listing and `--dump` writes each to leaf_NNN.pto: the record's
    `listing(leaf)` for each leaf, in leaf order (both made by `CompileRecord.listings`, the nodes looked up once)."""
    from pypto.cli import load_module
    from pypto.frontend.inputs import example_arguments
    from pypto.record import compile_record

    kernel = load_module(SOFTMAX).softmax_kernel
    record = compile_record(kernel, example_arguments(kernel))
    want = [record.listing(leaf) for leaf in range(len(record.program.blocks or ()))]
    assert want and record.listings() == want
    assert main(["compile", str(SOFTMAX), "--listing", "--dump", str(tmp_path / "d")]) == 0
    printed = capsys.readouterr().out
    assert all(text in printed for text in want)
    assert [printed.index(text) for text in want] == sorted(printed.index(text) for text in want)
    folder = tmp_path / "d" / "softmax_kernel"
    assert [(folder / f"leaf_{i:03d}.pto").read_text() for i in range(len(want))] == [t + "\n" for t in want]
    assert not (folder / f"leaf_{len(want):03d}.pto").exists()

def test_compile_json_in_a_subprocess(tmp_path):
    proc = _run("compile", f"{REPO / 'examples' / 'quant.py'}::dequantize_kernel", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    SCHEMA.validate(doc)
    assert doc["source"]["kernel"] == "dequantize_kernel" and doc["bindings"]["q.d0"] == 24


def test_compile_record_writes_the_document_and_its_columns(tmp_path, capsys):
    from pypto.record import CompileRecord, compile_record

    assert main(["compile", str(SOFTMAX), "--record", str(tmp_path / "rec")]) == 0
    assert "wrote 2 files" in capsys.readouterr().out
    doc = json.loads((tmp_path / "rec" / "record.json").read_text())
    SCHEMA.validate(doc)
    assert doc["version"] == 3 and doc["columns"]["file"] == "record.columns.npz" and "inline" not in doc["columns"]
    assert doc["columns"]["count"] > 0 and (tmp_path / "rec" / "record.columns.npz").stat().st_size > 0
    assert "$columns" in json.dumps(doc["tiles"])  # the tile ops are columns, not lists
    back = CompileRecord.read(tmp_path / "rec")
    fresh = compile_record(next(iter(_kernels_of(SOFTMAX))))
    assert back.program.tiles == fresh.program.tiles and back.program.execute == fresh.program.execute
    assert back.graph == fresh.graph and back.program.blocks == fresh.program.blocks


def test_compile_makes_no_input_values_and_imports_no_torch(tmp_path):
    """A compile reads shapes and dtypes: its example inputs are made without values, so a kernel of big
    tensors costs none of their memory, and torch (~180 MB) is not imported unless the user's file does."""
    kernel = tmp_path / "big.py"
    kernel.write_text(textwrap.dedent("""\
        import pypto

        t = pypto.Tensor([2048, 2048], pypto.DT_FP32)


        @pypto.jit
        def scale(x: t, out: t):
            pypto.set_vec_tile_shapes(64, 2048)
            out[:] = x * 2.0
        """))
    code = ("import sys; from pypto.cli import main; "
            f"rc = main(['compile', {str(kernel)!r}, '--record', {str(tmp_path / 'rec')!r}]); "
            "print(rc, 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    rc, torch_imported = proc.stdout.splitlines()[-1].split()
    assert (rc, torch_imported) == ("0", "False")
    doc = json.loads((tmp_path / "rec" / "record.json").read_text())
    assert [(i["name"], i["dtype"], i["shape"]) for i in doc["inputs"]] == [("x", "fp32", [2048, 2048]),
                                                                             ("out", "fp32", [2048, 2048])]


def _kernels_of(path: Path) -> list[Any]:
    from pypto.cli import load_module
    from pypto.frontend.jit import JitKernel

    return [v for v in vars(load_module(path, prefix="pypto_cli_test_")).values() if isinstance(v, JitKernel)]


def test_compile_json_leaves_a_big_records_columns_out_and_says_how_to_get_them(capsys, monkeypatch):
    import pypto.cli as cli

    monkeypatch.setattr(cli, "JSON_COLUMN_BYTES", 1000)  # softmax's columns pass for a big kernel's
    assert main(["compile", str(SOFTMAX), "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert "inline" not in doc["columns"] and "--record DIR" in doc["columns"]["omitted"]
    assert f"pypto-ide compile {SOFTMAX} --record DIR" in out.err and "record.columns.npz" in out.err
    monkeypatch.setattr(cli, "JSON_COLUMN_BYTES", 1 << 30)
    assert main(["compile", str(SOFTMAX), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["columns"]["inline"] and "omitted" not in doc["columns"]
    SCHEMA.validate(doc)


def test_json_for_several_kernels_is_a_list(capsys):
    assert main(["compile", str(REPO / "examples" / "quant.py"), "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [d["source"]["kernel"] for d in docs] == ["quantize_kernel", "dequantize_kernel"]


def test_stage_tensor_stops_after_the_tensor_stage(capsys):
    assert main(["compile", str(SOFTMAX), "--stage", "tensor", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {p["stage"] for p in doc["passes"]} == {"tensor"}
    assert doc["source"]["options"]["host_options"]["compile_stage"] == "TENSOR_GRAPH"


@pytest.mark.filterwarnings("ignore:'setParseAction' deprecated")
@pytest.mark.parametrize("fmt, produced", [
    ("graphml", ["softmax_kernel.graphml"]),
    ("dot", ["softmax_kernel.dot"]),
    ("model-explorer", ["softmax_kernel.model_explorer.json", "softmax_kernel.node_data.json"]),
    ("program", ["softmax_kernel/program.json",
                 "softmax_kernel/computation_graph/Pass_00_Verify/Before_000_verify_softmax_kernel.json"]),
])
def test_export_formats(tmp_path, capsys, fmt, produced):
    assert main(["compile", str(SOFTMAX), "--export", fmt, str(tmp_path / "out")]) == 0
    for rel in produced:
        assert (tmp_path / "out" / rel).is_file(), rel
    assert "wrote" in capsys.readouterr().out


def _error(capsys, *argv: str) -> str:
    """Run the CLI in-process; it must exit 1 with exactly one error line and no traceback."""
    assert main(list(argv)) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.err


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_missing_file(tmp_path, capsys):
    err = _error(capsys, "compile", str(tmp_path / "nope.py"))
    assert err == f"{tmp_path / 'nope.py'}: error: no such file\n"


def test_no_kernels_and_unknown_name(tmp_path, capsys):
    empty = _write(tmp_path, "empty.py", "x = 1\n")
    assert _error(capsys, "compile", str(empty)) == f"{empty}:1: error: no @pypto.jit kernels in this file\n"
    err = _error(capsys, "compile", f"{SOFTMAX}::nope")
    assert err == f"{SOFTMAX}:1: error: no kernel named 'nope' (kernels: softmax_kernel)\n"


def test_unknown_export_format(capsys):
    assert "unknown format 'png'" in _error(capsys, "compile", str(SOFTMAX), "--export", "png", "x")


KERNELS = """\
import pypto


@pypto.jit
def needs_inputs(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                 out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    out[:] = x


@pypto.jit
def bad_shapes(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32),
               out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x + y


@pypto.jit
def fine(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.exp(x)
"""


def _line(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def test_missing_inputs_point_at_the_def_line_and_say_what_to_add(tmp_path, capsys):
    path = _write(tmp_path, "kernels.py", KERNELS)
    err = _error(capsys, "compile", f"{path}::needs_inputs")
    first, *rest = err.splitlines()
    assert first.startswith(f"{path}:{_line(path, 'def needs_inputs')}: error: needs_inputs: cannot make example")
    assert "        x: fp32[<x.d0>, 64]" in rest


def test_a_pyptoerror_in_the_kernel_is_one_line_at_its_line(tmp_path, capsys):
    path = _write(tmp_path, "kernels.py", KERNELS)
    err = _error(capsys, "compile", f"{path}::bad_shapes")
    assert len(err.splitlines()) == 1 and err.startswith(f"{path}:{_line(path, 'out[:] = x + y')}: error: ")


def test_other_kernels_still_compile_after_one_fails(tmp_path, capsys):
    path = _write(tmp_path, "kernels.py", KERNELS)
    assert main(["compile", str(path), "--dump", str(tmp_path / "d")]) == 1
    captured = capsys.readouterr()
    assert "fine  " in captured.out and len(captured.err.splitlines()) >= 2
    assert (tmp_path / "d" / "fine" / "record.json").is_file()


def test_an_import_error_in_the_file_is_one_line_at_its_line(tmp_path, capsys):
    path = _write(tmp_path, "broken.py", "import pypto\n\nvalue = 1 / 0\n")
    want = f"{path}:3: error: ZeroDivisionError while importing: division by zero\n"
    assert _error(capsys, "compile", str(path)) == want
    # raised inside a module it imports: the user's import line, and where it really was raised
    (tmp_path / "helper_mod.py").write_text("def boom():\n    raise RuntimeError('inner failure')\n")
    inner = _write(tmp_path, "uses_helper.py", f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
                   "import helper_mod\nhelper_mod.boom()\n")
    got = _error(capsys, "compile", str(inner))
    assert got == (f"{inner}:4: error: RuntimeError while importing: inner failure "
                   f"(raised in {tmp_path / 'helper_mod.py'}:2)\n"), got
    syntax = _write(tmp_path, "syntax.py", "def f(:\n    pass\n")
    assert _error(capsys, "compile", str(syntax)).startswith(f"{syntax}:1: error: SyntaxError")


def test_a_failing_pass_writes_its_dump(tmp_path, capsys, monkeypatch):
    import pypto
    import pypto.compiler.pipeline as P

    def boom(p, ctx):
        raise pypto.PyptoError("a tile does not fit", p.graph.nodes[-1].loc)

    monkeypatch.setattr(P, "PIPELINE", (PIPELINE[0], P.Pass("boom", "tensor", boom, "fails")))
    path = _write(tmp_path, "kernels.py", KERNELS)
    err = _error(capsys, "compile", f"{path}::fine", "--dump", str(tmp_path / "d"))
    assert err.startswith(f"{path}:") and "a tile does not fit" in err
    failed = json.loads((tmp_path / "d" / "fine" / "001_boom.json").read_text())
    assert failed["pass"]["error"].startswith("PyptoError") and "a tile does not fit" in failed["pass"]["error"]


def test_examples_subcommand_still_works(tmp_path, capsys):
    _write(tmp_path, "tiny.py", '''\
        """A tiny example."""
        import torch

        import pypto
        from pypto.testing import compare


        @pypto.jit
        def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 32)
            out[:] = x * 2.0


        def check():
            x = torch.randn(8, 32)
            out = torch.empty_like(x)
            k(x, out)
            return [compare("double", out, x * 2)]
        ''')
    assert main(["examples", str(tmp_path)]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
