"""The native build of the compiler's hot modules (pypto/native.py): used only when it is of the current
source and this interpreter, and then it compiles what the Python source compiles, byte for byte."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pypto import native

ROOT = Path(__file__).resolve().parent.parent
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def fake_build(tmp: Path, root: Path, **change: object) -> Path:
    """A build folder whose manifest lists `MODULES` (extensions: empty files) built from `root`'s sources,
    changed by `change`."""
    build = tmp / "native"
    modules = {}
    for name in native.MODULES:
        rel = f"{name.replace('.', '/')}{SUFFIX}"
        (build / rel).parent.mkdir(parents=True, exist_ok=True)
        (build / rel).write_bytes(b"")
        modules[name] = {"file": rel}
    manifest = {"format": native.FORMAT, "suffix": SUFFIX, "modules": modules, "runtime": {},
                "sources": native.sources(root), **change}
    (build / native.MANIFEST).write_text(json.dumps(manifest))
    return build


def copy_sources(tmp: Path) -> Path:
    root = tmp / "src"
    shutil.copytree(ROOT / "pypto", root / "pypto", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_build_of_the_current_sources_is_used(tmp_path: Path) -> None:
    root = copy_sources(tmp_path)
    files, why = native.check(fake_build(tmp_path, root), root)
    assert files is not None and sorted(files) == sorted(native.MODULES), why


@pytest.mark.parametrize("edited", [native.MODULES[-1], "pypto.ir.graph"])  # compiled; read for its types
def test_an_edit_anywhere_in_pypto_uses_the_python_source(tmp_path: Path, edited: str) -> None:
    root = copy_sources(tmp_path)
    build = fake_build(tmp_path, root)
    path = native.source_of(edited, root)
    path.write_text(path.read_text() + "\n# an edit\n")
    files, why = native.check(build, root)
    assert files is None and why.startswith(f"{path.relative_to(root).as_posix()} changed since the native build")


def test_a_new_pypto_file_uses_the_python_source(tmp_path: Path) -> None:
    root = copy_sources(tmp_path)
    build = fake_build(tmp_path, root)
    (root / "pypto" / "compiler" / "new_pass.py").write_text("X = 1\n")
    files, why = native.check(build, root)
    assert files is None and why.startswith("pypto/compiler/new_pass.py changed since the native build")


@pytest.mark.parametrize("change, said", [
    ({"suffix": ".cpython-39-x86_64-linux-gnu.so"}, "not this interpreter's"),
    ({"format": native.FORMAT + 1}, "another format"),
    ({"failed": "mypyc failed (exit 1): partition.py:3: error: ..."}, "the native build failed"),
    ({"modules": {}}, "other modules"),
])
def test_a_build_that_does_not_fit_is_not_used(tmp_path: Path, change: dict[str, object], said: str) -> None:
    root = copy_sources(tmp_path)
    files, why = native.check(fake_build(tmp_path, root, **change), root)
    assert files is None and said in why


def test_no_build_and_a_missing_extension_say_so(tmp_path: Path) -> None:
    root = copy_sources(tmp_path)
    files, why = native.check(tmp_path / "nowhere", root)
    assert files is None and why.startswith(f"no native build ({tmp_path / 'nowhere' / native.MANIFEST}")
    build = fake_build(tmp_path, root)
    next(build.rglob(f"*{SUFFIX}")).unlink()
    files, why = native.check(build, root)
    assert files is None and "is missing" in why


def test_the_makefile_rebuilds_when_a_pypto_source_changes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    listed = re.search(r"^NATIVE_SRC := (.*)$", makefile, re.M)
    assert listed is not None and "tools/build_native.py" in listed.group(1)
    assert "$(shell find pypto -name '*.py'" in listed.group(1)


def _compile(env: dict[str, str]) -> dict[str, object]:
    """Every example's and bench kernel's record, listings and swimlane digests (test_compile_identity's), and the
    file partition was imported from, in a fresh interpreter."""
    code = ("import json, sys; sys.path.insert(0, 'tests'); import test_compile_identity as t; "
            "import pypto.compiler.partition as p; "
            "print(json.dumps({'partition': p.__file__, 'records': t.compute()}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_native_build_compiles_what_the_source_compiles() -> None:
    files, why = native.check()
    if files is None:
        if os.environ.get("CI") and importlib.util.find_spec("mypyc") is not None:
            pytest.fail(f"CI with mypyc installed, but no native build in use: {why}")
        pytest.skip(f"no native build of the current source: {why}")
    fast, plain = _compile({"PYPTO_NATIVE": "1"}), _compile({"PYPTO_NATIVE": "0"})
    assert str(fast["partition"]).endswith(SUFFIX) and str(plain["partition"]).endswith(".py")
    assert fast["records"] == plain["records"]


# A compile as a job runs it (its collector paused, then what is left frozen: `pipeline.keep_frozen`), of a kernel
# that partition accepts, and then of one it refuses (the advisor's strict rules: a tile over the UB); then how many
# of graph partition's groups are still alive, and which file partition came from.
_STATE_LEFT = """
import gc, json, textwrap, sys, tempfile, pathlib, torch
import pypto.compiler.partition as p
from pypto.cli import load_module
from pypto.compiler.pipeline import keep_frozen
from pypto.ir.errors import PyptoError
from pypto.record import compile_record
from pypto.tracing.builder import tile_overrides
from pypto.tracing.tiling import strict_tile_rules
src = textwrap.dedent('''
    import pypto
    @pypto.jit
    def soft(x: pypto.Tensor([512, 1024], pypto.DT_FP32), out: pypto.Tensor([512, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        out[:] = pypto.softmax(x, -1)
''')
path = pathlib.Path(tempfile.mkdtemp()) / "soft.py"
path.write_text(src)
kernel = load_module(path).soft
inputs = {"x": torch.randn(512, 1024), "out": torch.empty(512, 1024)}
gc.collect(); gc.freeze(); keep_frozen()
p.RELEASE_FROM = 0  # (this kernel is small: its state is let go of from this size on)
record = compile_record(kernel, inputs)
assert record.program.subgraphs
refused = ""
with tile_overrides({0: (48, 1024)}), strict_tile_rules():
    try:
        compile_record(kernel.fresh(), inputs)
    except PyptoError as e:
        refused = e.message
gc.unfreeze()
groups = sum(1 for o in gc.get_objects() if type(o) is p._Group)
print(json.dumps({"partition": p.__file__, "groups": groups, "refused": refused}))
"""


def _run_script(script: str, build: str) -> dict[str, Any]:
    """The JSON a script prints last, run in a fresh interpreter with the native build (`build` "1", skipped when there
    is none of the current source) or the Python source ("0"); it says which file partition came from."""
    files, why = native.check()
    if build == "1" and files is None:
        pytest.skip(f"no native build of the current source: {why}")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                         env={**os.environ, "PYPTO_NATIVE": build, "PYTHONPATH": str(ROOT)}, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    got: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert str(got["partition"]).endswith(SUFFIX if build == "1" else ".py")
    return got


@pytest.mark.parametrize("build", ["1", "0"])
def test_graph_partition_lets_go_of_its_state_when_done_or_refused(build: str) -> None:
    """mypyc keeps partition's nested functions and the state they share in one environment object, each referring
    to the other: a cycle only the cyclic collector frees. A job's compile pauses the collector and then freezes what
    is left, so the state (gated delta rule: 76 k groups and their GM index, ~100 MB; glm's fused attention ~1 GB)
    stayed for the job's life, and each refused advice candidate's with it. Partition lets go of it itself (from
    `RELEASE_FROM` tile ops, and always in the advisor's strict mode)."""
    got = _run_script(_STATE_LEFT, build)
    assert "more than the" in got["refused"] and "UB" in got["refused"]
    assert got["groups"] == 0


# Graph partition of a kernel whose groups depend on each other through GM (a matmul, a vector op on its result, a
# second matmul reading that), then the int objects that hold each id above 256 among its dependencies (keys: the
# groups; values: what each waits for), and which file partition came from.
_IDS_HELD = """
import json, textwrap, tempfile, pathlib, torch
import pypto.compiler.partition as p
from pypto.cli import load_module
from pypto.compiler.tile_ir import copy_facts
from pypto.record import compile_record
from pypto.target import load as load_board
src = textwrap.dedent('''
    import pypto
    @pypto.jit
    def chain(a: pypto.Tensor([512, 512], pypto.DT_FP16), b: pypto.Tensor([512, 512], pypto.DT_FP16),
              out: pypto.Tensor([512, 512], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        pypto.set_vec_tile_shapes(32, 32)
        d = pypto.cast(pypto.matmul(a, b, pypto.DT_FP32) + 1.0, pypto.DT_FP16)
        out[:] = pypto.matmul(d, b, pypto.DT_FP32)
''')
path = pathlib.Path(tempfile.mkdtemp()) / "chain.py"
path.write_text(src)
kernel = load_module(path).chain
inputs = {"a": torch.randn(512, 512).half(), "b": torch.randn(512, 512).half(), "out": torch.empty(512, 512)}
record = compile_record(kernel, inputs)
expanded = next(x.snapshot for x in record.passes if x.name == "tile_expand")
ub = int(load_board("a2a3")["buffers_bytes"]["UB"])
tiles, subgraphs = p.partition(expanded.tiles, expanded.graph.by_id(), ub, [])
objects = {}
for k, v in copy_facts(tiles).depends.items():
    for x in (k, *v):
        if x > 256:  # (smaller ints are one object each in any build)
            objects.setdefault(x, set()).add(id(x))
print(json.dumps({"partition": p.__file__, "ids": len(objects), "most": max(map(len, objects.values()), default=0)}))
"""


@pytest.mark.parametrize("build", ["1", "0"])
def test_graph_partition_holds_one_int_object_per_group_id(build: str) -> None:
    """A native class keeps an `int` unboxed, and each store of one into a set, list or dict makes a new int object:
    partition's dependencies held an object per entry (the same group id in several sets, several objects), and its
    per-op lists an object per op, ~200 MB more than the Python build at glm's fused attention (2.2 M tile ops) and
    over the worker's cap. A group's id is now one object wherever partition and the GM index keep it
    (`gm_index.Owner`, `partition._Group.key`)."""
    got = _run_script(_IDS_HELD, build)
    assert got["ids"] > 100  # groups past the small ints, some waited for by several others
    assert got["most"] == 1


# Leaf functions of a kernel whose matmul tiles each have their own attributes (their input regions and position
# differ per tile), two matmuls alike but for their inputs' shapes: which subgraphs share a leaf, against a grouping of
# the subgraphs by value (each op's kind, input shapes, region shape and where its inputs come from).
_LEAVES_BY_VALUE = """
import json, textwrap, tempfile, pathlib, torch
import pypto.compiler.partition as p
from pypto.cli import load_module
from pypto.compiler.tile_ir import ops_by_id
from pypto.record import compile_record
src = textwrap.dedent('''
    import pypto
    @pypto.jit
    def mm(a: pypto.Tensor([64, 80], pypto.DT_FP16), c: pypto.Tensor([96, 80], pypto.DT_FP16),
           b: pypto.Tensor([80, 96], pypto.DT_FP16), out: pypto.Tensor([64, 96], pypto.DT_FP32),
           out2: pypto.Tensor([96, 96], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        pypto.set_vec_tile_shapes(32, 32)
        out[:] = pypto.matmul(a, b, pypto.DT_FP32) * 2.0
        out2[:] = pypto.matmul(c, b, pypto.DT_FP32) * 2.0
''')
path = pathlib.Path(tempfile.mkdtemp()) / "mm.py"
path.write_text(src)
kernel = load_module(path).mm
inputs = {"a": torch.randn(64, 80).half(), "c": torch.randn(96, 80).half(), "b": torch.randn(80, 96).half(),
          "out": torch.empty(64, 96), "out2": torch.empty(96, 96)}
prog = compile_record(kernel, inputs).program
ops = ops_by_id(prog.tiles)
def value(o):
    named = tuple(sorted((k, repr(v)) for k, v in o.attrs.items() if k not in p._POSITION_ATTRS))
    ins = tuple(r.shape for r in o.attrs.get("inputs", ()))
    return (o.op, o.shape, o.dtype.short, named, ins, None if o.region is None else o.region.shape)
def by_value(sg):
    local = {m: k for k, m in enumerate(sg.ops)}
    return (sg.core, tuple((value(ops[m]), tuple(local.get(i, -1) for i in ops[m].inputs)) for m in sg.ops))
groups = {}
for sg in prog.subgraphs:
    groups.setdefault(by_value(sg), set()).add(sg.leaf)
mms = [o for o in prog.tiles.ops if o.op == "matmul"]
# and by hand: three matmul tiles of one tensor op (their attribute values the same objects, each its own dict and
# input regions), the third's inputs of another shape
from pypto.compiler.tile_ir import Region, Subgraph, TileGraph, TileOp
from pypto.ir.dtypes import DataType
shared = {"out_dtype": DataType.DT_FP32, "a_trans": False, "b_trans": False, "k_steps": 2,
          "cube": ((16, 16), (32, 32), (16, 16))}
def tile(i, m):
    ins = (Region(0, (m, 32), (16 * i, 0), (m, 32)), Region(1, (32, 16), (0, 0), (32, 16)))
    return TileOp(i, "matmul", 7, 0, (i, 0), (16, 16), DataType.DT_FP32, (), None,
                  {**shared, "inputs": ins, "at": (16 * i, 0)})
hand = TileGraph((), tuple(tile(i, m) for i, m in enumerate((64, 64, 48))), (), ())
_, hand_leaves = p.merge_leaves(hand, tuple(Subgraph(i, "AIC", 0, (i,), 0, -1) for i in range(3)))
print(json.dumps({"partition": p.__file__, "subgraphs": len(prog.subgraphs), "leaves": len(prog.leaves),
                  "one_leaf_each": all(len(v) == 1 for v in groups.values()),
                  "groups": len(groups), "own_attrs": len({id(o.attrs) for o in mms}), "matmuls": len(mms),
                  "by_hand": [lf.count for lf in hand_leaves]}))
"""


@pytest.mark.parametrize("build", ["1", "0"])
def test_leaf_functions_group_subgraphs_by_value(build: str) -> None:
    """Subgraphs share a leaf function exactly when they are alike by value: each op's kind (op, shape, dtype, its
    attributes but positions), its input regions' shapes and where its inputs come from. A matmul tile's attributes
    are its own (its input regions and position), so `signature` finds its kind by its other values' identities and
    its inputs' shapes (a repr per matmul before: Kimi's block attention's 32 k); two matmuls alike but for their
    inputs' shapes are two kinds."""
    got = _run_script(_LEAVES_BY_VALUE, build)
    assert got["matmuls"] > 4 and got["own_attrs"] == got["matmuls"]  # each matmul tile has its own attributes
    assert got["one_leaf_each"] and got["leaves"] == got["groups"]
    assert got["by_hand"] == [2, 1]  # the two alike, and the one whose inputs' shapes differ


# The health report of every kernel of test_health (each of its rules fired or not, round trips and clones
# included) and of test_compile_identity, made in one build: digests of each report's JSON, the tile level's
# totals, and the file the tile level's walk came from.
_HEALTH = """
import hashlib, json, sys
sys.path.insert(0, "tests")
import pypto.compiler.partition as p
import pypto.compiler.tile_census as census
import test_compile_identity as identity
import test_health as health
from pypto.analysis.health import health_report
from pypto.record import compile_record, profile
reports, totals = {}, {}
kernels = [(f"health::{n}", k, None) for n, k in health.KERNELS.items()] + identity._kernels()
for name, kernel, inputs in kernels:
    j = health_report(profile(compile_record(kernel, inputs), "sim")).to_json()
    reports[name] = hashlib.sha256(json.dumps(j, sort_keys=True, default=str).encode()).hexdigest()
    for k in ("round_trips", "clones", "duplicate_loads", "unaligned_nodes", "ops"):
        totals[k] = totals.get(k, 0) + int(j["stats"]["tile"][k])
print(json.dumps({"partition": p.__file__, "census": census.__file__, "reports": reports, "totals": totals}))
"""


def test_the_health_reports_tile_level_is_the_same_in_both_builds() -> None:
    """The tile level's walk over every tile op (`pypto.compiler.tile_census`, native since session 54) finds in the
    native build what it finds in the Python source: the same reports, byte for byte, for kernels whose round trips,
    clones, duplicate loads and unaligned rows it counts."""
    fast, plain = _run_script(_HEALTH, "1"), _run_script(_HEALTH, "0")
    assert str(fast["census"]).endswith(SUFFIX) and str(plain["census"]).endswith(".py")
    assert all(v > 0 for v in plain["totals"].values()), plain["totals"]
    assert fast["reports"] == plain["reports"] and fast["totals"] == plain["totals"]
