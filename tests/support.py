"""Helpers shared by the tile-stage tests: every example kernel's record, and random inputs."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import textwrap
from typing import Any

import numpy as np
import pytest

from pypto.cli import load_module
from pypto.compiler.tile_ir import TileGraph
from pypto.frontend.jit import CompiledKernel, JitKernel, Lowered, to_numpy
from pypto.record import CompileRecord, compile_record

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def example_records() -> list[tuple[str, CompileRecord]]:
    """(example.kernel, its CompileRecord through every stage) for every example kernel."""
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        mod = load_module(path)
        for name, k in sorted(vars(mod).items()):
            if isinstance(k, JitKernel):
                out.append((f"{path.stem}.{name}", compile_record(k)))
    return out


def param_inputs(tiles: TileGraph, seed: int = 0) -> dict[str, np.ndarray]:
    """Random arrays for a tile graph's parameter buffers."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for b in tiles.buffers:
        if b.kind == "param":
            arr = rng.standard_normal(b.shape) * 3 if b.dtype.is_float else rng.integers(-5, 5, b.shape)
            inputs[b.name] = np.asarray(arr).astype(b.dtype.np)
    return inputs


def lowered(kernel: JitKernel, *args: object) -> tuple[CompiledKernel, Lowered, dict[str, np.ndarray], dict[str, int]]:
    """Compile `kernel` for `args` (torch tensors or numpy arrays) and lower it for their shapes."""
    ck = kernel.compile(*args)
    arrays = {n: a if isinstance(a, np.ndarray) else to_numpy(a) for n, a in zip(ck.param_names, args)}
    syms = ck.bind_symbols(arrays, None)  # type: ignore[arg-type]
    return ck, ck.lower(syms), arrays, syms


# Kernels that misbehave in every way a worker must survive (tests of the pool, the HTTP server and the
# language server): a good one, one that hangs, one that exits its process, one that eats memory, one with
# an invalid tile shape (its call on line 32, the op it fails for on 33) and one without example inputs (its
# def on line 37).
HOSTILE_KERNELS = textwrap.dedent('''
    import os
    import pypto


    @pypto.jit
    def good(x: pypto.Tensor([64, 128], pypto.DT_FP32), out: pypto.Tensor([64, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.exp(x)


    @pypto.jit
    def hang(x: pypto.Tensor([8, 8], pypto.DT_FP32)):
        while True:
            pass


    @pypto.jit
    def die(x: pypto.Tensor([8, 8], pypto.DT_FP32)):
        os._exit(3)


    @pypto.jit
    def hog(x: pypto.Tensor([8, 8], pypto.DT_FP32)):
        keep = []
        while True:
            keep.append(bytearray(10**7))


    @pypto.jit
    def bad_tile(x: pypto.Tensor([8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8)
        return pypto.exp(x)


    @pypto.jit
    def no_inputs(x: pypto.Tensor()):
        return pypto.exp(x)
''')


# a kernel file that imports a sibling module (helpers.py with ROWS next to it): 64 / ROWS tasks
USES_HELPER = """
import pypto
from helpers import ROWS


@pypto.jit
def scaled(x: pypto.Tensor([64, 128], pypto.DT_FP32), out: pypto.Tensor([64, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(ROWS, 128)
    out[:] = x * 2.0
"""

def softmax_source(batches: int, name: str) -> str:
    """A document with one softmax kernel `name` over `batches` rows of [32, 1, 256] (4 batches:
    the small kernel the LSP tests open; 64: 512 tasks on 72 lanes, a maximal swimlane ~36k bins)."""
    return SOFTMAX_TEMPLATE.replace("softmax_kernel", name).replace("fp32[4,", f"fp32[{batches},")


SOFTMAX_TEMPLATE = '''import pypto


@pypto.frontend.jit
def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                   out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
    """pypto-inputs:
        x: fp32[4, 32, 1, 256]
        out: fp32[4, 32, 1, 256]
    """
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    for i in pypto.loop(0, x.shape[0], 1, name="LOOP_b", idx_name="i"):
        v = x[i:i + 1, ...]
        m = pypto.amax(v, dim=-1, keepdim=True)
        e = pypto.exp(v - m)
        out[i:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)
'''


# A small vector kernel the language-server tests edit (tile shape, ops): 64x256, tiles of 8x64.
SCALE_EXP = '''import pypto


@pypto.jit
def scale_exp(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    y = pypto.exp(x) * 2.0
    out[:] = y + x
'''


# ---- bad input the servers must name at its line (tests/lsp/test_bad_input.py, tests/test_http_bad_input.py)

BAD_LOOP_STEP = '''import pypto


@pypto.jit
def rows(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(0, 8, 0.5):
        out[i:i + 1, :] = x[i:i + 1, :]
'''

# `reads` and `writes` start past the end of dim 0; `runs_past` only stops past it, which PyPTO takes
BAD_SLICES = '''import pypto


@pypto.jit
def reads(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([1, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    row = x[9:10, :]
    out[:] = pypto.exp(row)


@pypto.jit
def writes(x: pypto.Tensor([1, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    out[9:10, :] = pypto.exp(x)


@pypto.jit
def runs_past(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 64)
    out[6:10, :] = pypto.exp(x[6:10, :])
'''


SARIF_SCHEMA = (pathlib.Path(__file__).resolve().parent.parent / "node_modules" / "@microsoft" / "jest-sarif" / "lib"
                / "schemas" / "sarif-2.1.0-rtm.5.json")


def sarif_schema() -> dict[str, Any]:
    """The SARIF 2.1.0 schema (OASIS's, not bundled here: its terms are not an open licence), from the
    npm dev dependency @microsoft/jest-sarif that `make setup` installs; skips naming it when absent."""
    if not SARIF_SCHEMA.exists():
        pytest.skip(f"the SARIF 2.1.0 schema is not installed ({SARIF_SCHEMA}): run `make setup` (npm ci)")
    return json.loads(SARIF_SCHEMA.read_text())


def timeless(x: Any) -> Any:
    """The answer without what differs between two compiles of one program: the passes' durations."""
    if isinstance(x, dict):
        return {k: None if k == "seconds" else timeless(v) for k, v in x.items() if k not in ("reused", "output")}
    if isinstance(x, (list, tuple)):
        return [timeless(v) for v in x]
    if isinstance(x, np.ndarray):  # the editor view's tile index
        return (str(x.dtype), x.shape, x.tolist())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):  # its ragged columns
        return (type(x).__name__, timeless(dataclasses.asdict(x)))
    return x


def unruns(runs: list[Any]) -> list[int]:
    """A slim record's `pred_runs` (server.panel_data.pred_runs) as the ids they stand for: a pair [i, j] is
    i, i+1, …, j; a number itself (the reading webview/src/model.ts `expandSlimRecord` does)."""
    out: list[int] = []
    for x in runs:
        out.extend(range(x[0], x[1] + 1) if isinstance(x, list) else [x])
    return out


def unpack(column: Any) -> list[Any]:
    """A slim record's `$rows` column as its list (server.panel_data.packed; the reading webview/src/model.ts `unpack`
    does): `{"$range": [first, step, n]}`, `{"$runs": [value, count, …]}`, or a list. The LSP test client renames
    both keys (no identifiers) alike: then three numbers are a range (runs are pairs)."""
    if not isinstance(column, dict):
        return list(column)
    ((kind, v),) = column.items()
    if kind == "$range" or kind != "$runs" and len(v) % 2 == 1:
        first, step, n = v
        return [first + i * step for i in range(n)]
    return [list(value) if isinstance(value, list) else value for value, count in zip(v[::2], v[1::2])
            for _ in range(count)]


def from_rows(x: Any) -> Any:
    """A slim record's list sent as columns, `{"$rows": {key: [values]}}` (server.panel_data.as_rows), as its objects
    (the reading webview/src/model.ts `expandSlimRecord` does; the LSP test client renames the `$rows` key, which is
    no identifier: any one key). Anything else as it is."""
    if isinstance(x, dict) and len(x) == 1:
        cols = {k: unpack(c) for k, c in next(iter(x.values())).items()}
        keys = list(cols)
        n = len(cols[keys[0]]) if keys else 0
        return [{k: cols[k][i] for k in keys} for i in range(n)]
    return x


def execute_both_ways(tiles: TileGraph, nodes: Any) -> tuple[Any, Any, bool]:
    """The execute graph of `tiles` (a tile graph before partition) from partition's arrows and found by the
    execute stage itself, and whether partition offered its arrows."""
    from pypto.compiler import tile_ir
    from pypto.compiler.execute import build
    from pypto.compiler.partition import merge_leaves, partition

    out, subgraphs = partition(tiles, nodes, 1 << 30, [])
    subgraphs, _ = merge_leaves(out, subgraphs)
    facts = tile_ir.copy_facts(out)
    assert facts is not None
    taken = build(out, subgraphs)
    tile_ir.note_copy_facts(out, dataclasses.replace(facts, depends=None))
    return taken, build(out, subgraphs), facts.depends is not None
