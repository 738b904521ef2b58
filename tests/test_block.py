"""The block stage: leaf functions as pipe instructions over allocated buffers, with flags.

Kernels go in, blocks come out, and independent checkers judge them: a brute-force
hazard scan with happens-before reachability (every cross-pipe RAW/WAR/WAW is ordered by
SET/WAIT pairs), a value-token simulation of the vector core (every instruction reads the
tiles it should, so no live buffer was overwritten, including across spills), capacity
and overlap checks on the buffer table, and the K loop of a matmul leaf.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import sys
from typing import Any

import numpy as np
import pytest
from support import lowered

import pypto
from pypto import native
from pypto.cli import load_module
from pypto.compiler import block as block_module
from pypto.compiler.block import EVENTS_PER_PAIR, build_blocks, insert_sync, listing
from pypto.compiler.block_ir import PIPES, Block, Instr, Operand
from pypto.compiler.manager import Program
from pypto.compiler.pipeline import PIPELINE
from pypto.frontend.inputs import example_arguments
from pypto.frontend.jit import JitKernel, to_numpy
from pypto.target import load as load_board
from pypto.tracing.tiling import strict_tile_rules

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SOURCE = pathlib.Path(__file__).read_text().splitlines()


def _line(marker: str) -> int:
    (n,) = [k + 1 for k, text in enumerate(SOURCE) if text.rstrip().endswith(marker) and "pypto." in text]
    return n


# ---- kernels ------------------------------------------------------------------------------------

@pypto.jit
def softmax_rows(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    m = pypto.amax(x, dim=-1, keepdim=True)  # line: amax
    e = pypto.exp(x - m)  # line: exp
    out[:] = e / pypto.sum(e, dim=-1, keepdim=True)  # line: sum


@pypto.jit
def elementwise(x: pypto.Tensor([64, 256], pypto.DT_FP32), y: pypto.Tensor([64, 256], pypto.DT_FP32),
                out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)  # every buffer a whole tile: none small enough for a two-ended heap's top
    a = x * y + x
    b = (a - y) * x
    out[:] = a * b + (b - x) * y


@pypto.jit
def big_tile(x: pypto.Tensor([128, 256], pypto.DT_FP32), out: pypto.Tensor([128, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(128, 256)  # 128 KiB per tile: two of them do not fit the 192 KiB UB
    out[:] = pypto.exp(x) + 1.0


@pypto.jit
def mm(a: pypto.Tensor([64, 256], pypto.DT_FP16), b: pypto.Tensor([256, 64], pypto.DT_FP16),
       c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)  # line: matmul


@pypto.jit
def mm_bias(a: pypto.Tensor([64, 128], pypto.DT_FP16), b_t: pypto.Tensor([64, 128], pypto.DT_FP16),
            bias: pypto.Tensor([64], pypto.DT_FP32), c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 64], [32, 64], [32, 64])  # two L0C blocks per m and n, two L1 k blocks
    c[:] = pypto.matmul(a, b_t, pypto.DT_FP32, b_trans=True, extend_params={"bias_tensor": bias})


def _lower(kernel: JitKernel, *arrays: np.ndarray) -> Program:
    _, lw, _, _ = lowered(kernel, *arrays)
    assert lw.program.blocks is not None
    return lw.program


def _rand(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


def _softmax() -> Program:
    return _lower(softmax_rows, _rand(64, 256), np.zeros((64, 256), np.float32))


def _example_programs() -> list[tuple[str, Program]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        mod = load_module(path)
        for k in vars(mod).values():
            if isinstance(k, JitKernel):
                args = example_arguments(k)
                ck = k.compile(**args)
                arrays = {n: to_numpy(a) for n, a in args.items() if n in ck.param_names}
                out.append((f"{path.stem}.{k.name}", ck.lower(ck.bind_symbols(arrays, None)).program))  # type: ignore[arg-type]
    return out


# ---- independent checkers -----------------------------------------------------------------------

def _overlap(a: Operand, b: Operand) -> bool:
    if a.space != b.space:
        return False
    if a.space == "GM":
        if a.buffer != b.buffer:
            return False
        if a.buffer < 0:  # the spill area: bytes
            return a.offset < b.offset + b.size and b.offset < a.offset + a.size
        if a.layout != b.layout:
            return True
        return all(x < y + n and y < x + m for x, m, y, n in zip(a.at, a.shape, b.at, b.shape))
    return a.offset < b.offset + b.size and b.offset < a.offset + a.size


def _conflict(i: Instr, j: Instr) -> bool:
    """i and j touch the same bytes and at least one of them writes them."""
    return any(_overlap(w, x) for w in i.dst for x in (*j.srcs, *j.dst)) or \
        any(_overlap(w, x) for w in j.dst for x in i.srcs)


def check_flags(block: Block) -> None:
    """Flags are well formed: ids in range, cross-pipe only, each SET waited once before it is set again."""
    state: dict[tuple[str, str, int], str] = {}
    for ins in block.instrs:
        if ins.flag is None:
            assert ins.opcode not in ("SET_FLAG", "WAIT_FLAG")
            continue
        src, dst, ev = ins.flag
        assert src != dst and src in PIPES and dst in PIPES and 0 <= ev < EVENTS_PER_PAIR
        if ins.opcode == "SET_FLAG":
            assert ins.pipe == src and state.get(ins.flag, "waited") == "waited", ins
            state[ins.flag] = "set"
        else:
            assert ins.opcode == "WAIT_FLAG" and ins.pipe == dst and state.get(ins.flag) == "set", ins
            state[ins.flag] = "waited"
    assert all(s == "waited" for s in state.values())


def check_sync(block: Block) -> int:
    """Every cross-pipe hazard is ordered: the earlier instruction reaches the later one through
    same-pipe program order and SET -> WAIT edges. Returns how many hazards were checked."""
    instrs = block.instrs
    n = len(instrs)
    succ: list[list[int]] = [[] for _ in range(n)]
    last_on: dict[str, int] = {}
    open_set: dict[tuple[str, str, int], int] = {}
    for k, ins in enumerate(instrs):
        if ins.pipe in last_on:
            succ[last_on[ins.pipe]].append(k)
        last_on[ins.pipe] = k
        if ins.opcode == "SET_FLAG":
            open_set[ins.flag] = k  # type: ignore[index]
        elif ins.opcode == "WAIT_FLAG":
            succ[open_set.pop(ins.flag)].append(k)  # type: ignore[arg-type]
    reach = [0] * n  # bitset of what each instruction reaches (itself included)
    for k in range(n - 1, -1, -1):
        r = 1 << k
        for s in succ[k]:
            r |= reach[s]
        reach[k] = r
    real = [k for k, ins in enumerate(instrs) if ins.flag is None]
    checked = 0
    for a, i in enumerate(real):
        for j in real[a + 1:]:
            if instrs[i].pipe != instrs[j].pipe and _conflict(instrs[i], instrs[j]):
                checked += 1
                assert reach[i] >> j & 1, (f"leaf {block.leaf}: {i} {instrs[i].opcode} ({instrs[i].pipe}) and "
                                           f"{j} {instrs[j].opcode} ({instrs[j].pipe}) are not ordered")
    return checked


def check_buffers(block: Block) -> None:
    """Live buffers of one memory never overlap; peaks stay within capacity and match the table."""
    caps = dict(block.capacity_bytes)
    for s, peak in block.peak_bytes:
        assert 0 <= peak <= caps[s]
        assert peak == max((b.offset + b.size for b in block.buffers if b.space == s), default=0)
    for b in block.buffers:
        assert b.offset % 32 == 0 and b.size % 32 == 0 and b.offset + b.size <= caps[b.space]
        assert 0 <= b.start <= b.end < len(block.instrs)
    bufs = sorted(block.buffers, key=lambda b: b.start)
    for k, a in enumerate(bufs):
        for b in bufs[k + 1:]:
            if b.start > a.end:
                continue
            if a.space == b.space:
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)
    for ins in block.instrs:  # every on-chip operand lies inside one buffer live at that instruction
        for op in (*ins.dst, *ins.srcs):
            if op.on_chip:
                (b,) = [b for b in block.buffers if b.name == op.name]
                assert b.offset <= op.offset and op.offset + op.size <= b.offset + b.size


def check_values(block: Block, program: Program) -> None:
    """Simulate which tile each UB byte range holds: every vector instruction must read exactly the
    tiles its tile op consumes, so nothing live was overwritten (spills and reloads included)."""
    assert program.tiles is not None
    ops = {o.id: o for o in program.tiles.ops}

    def token(t: int) -> int:  # a bitcast is its input's bytes
        while ops[t].op == "bitcast":
            t = ops[t].inputs[0]
        return t

    ub: dict[int, tuple[int, int]] = {}  # offset -> (size, token)
    spill: dict[int, int] = {}

    def write(op: Operand, tok: int) -> None:
        if op.space == "GM":
            if op.buffer < 0:
                spill[op.offset] = tok
            return
        for off in [o for o, (s, _) in ub.items() if o < op.offset + op.size and op.offset < o + s]:
            del ub[off]
        ub[op.offset] = (op.size, tok)

    def read(op: Operand) -> int | None:
        if op.space == "GM":
            return spill[op.offset] if op.buffer < 0 else None
        size, tok = ub[op.offset]
        assert size == op.size
        return tok

    for ins in block.instrs:
        if ins.flag is not None:
            continue
        got = [read(op) for op in ins.srcs]
        o = ops[ins.tile_op]
        if ins.note == "reload":
            write(ins.dst[0], got[0])  # type: ignore[arg-type]
            continue
        if ins.note == "spill":
            write(ins.dst[0], got[0])  # type: ignore[arg-type]
            continue
        on_chip = [t for t in got if t is not None]
        want = {token(i) for i in o.inputs}
        if o.op == "combine":
            assert set(on_chip) <= want | {o.id} and on_chip, (ins, on_chip, want)
        else:
            assert set(on_chip) == want, (ins, on_chip, want)
        for op in ins.dst:
            write(op, o.id)


def check_block(block: Block, program: Program) -> None:
    check_flags(block)
    check_sync(block)
    check_buffers(block)
    if block.core == "AIV":
        check_values(block, program)


# ---- tests --------------------------------------------------------------------------------------

def test_the_pass_runs_after_leaf_functions_and_makes_one_block_per_leaf():
    names = [p.name for p in PIPELINE]
    assert names.index("block_schedule") == names.index("leaf_functions") + 1
    assert next(p for p in PIPELINE if p.name == "block_schedule").stage == "block"
    p = _softmax()
    assert p.leaves is not None and p.blocks is not None
    assert [b.leaf for b in p.blocks] == [lf.id for lf in p.leaves]
    assert [b.core for b in p.blocks] == [lf.core for lf in p.leaves]
    assert [b.tasks for b in p.blocks] == [lf.count for lf in p.leaves]


def test_a_softmax_block_is_ordered_allocated_and_reads_the_right_tiles():
    p = _softmax()
    (block,) = p.blocks  # type: ignore[misc]
    check_block(block, p)
    assert check_sync(block) > 10  # there were hazards to check
    ops = [i.opcode for i in block.instrs]
    for want in ("TLOAD", "TROWMAX", "TMAX", "TSUB", "TEXP", "TROWSUM", "TADD", "TDIV", "TSTORE"):
        assert want in ops
    first = {op: ops.index(op) for op in ("TROWMAX", "TEXP", "TROWSUM", "TDIV", "TSTORE")}
    assert first["TROWMAX"] < first["TEXP"] < first["TROWSUM"] < first["TDIV"] < first["TSTORE"]
    pipes = {i.opcode: i.pipe for i in block.instrs if i.flag is None}
    assert pipes["TLOAD"] == "MTE2" and pipes["TSTORE"] == "MTE3" and pipes["TEXP"] == "V"
    # a load and the first vector op that reads it are on different pipes: a flag sits between them
    load = ops.index("TLOAD")
    assert ops[load + 1:ops.index("TROWMAX")] == ["SET_FLAG", "WAIT_FLAG"]
    assert block.instrs[load + 1].flag[:2] == ("MTE2", "V")  # type: ignore[index]
    # elementwise results reuse a dying input's buffer: sub, exp and div write where x was loaded
    sub = next(i for i in block.instrs if i.opcode == "TSUB")
    assert sub.dst[0].name == sub.srcs[0].name and sub.dst[0].offset == sub.srcs[0].offset
    assert block.spills == 0


def test_vector_instructions_do_not_wait_on_each_other():
    p = _softmax()
    (block,) = p.blocks  # type: ignore[misc]
    ops = block.instrs
    for a, b in zip(ops, ops[1:]):
        if a.flag is None and b.flag is None and a.pipe == b.pipe == "V":
            continue
        if b.opcode == "WAIT_FLAG":
            assert b.flag[0] != b.flag[1]  # type: ignore[index]


def test_double_buffering_when_twice_the_loads_fit():
    p = _softmax()
    (block,) = p.blocks  # type: ignore[misc]
    assert block.double_buffered
    loads = [i for i in block.instrs if i.opcode == "TLOAD"]
    assert loads and all(i.double_buffered for i in loads)
    halves = [i.dst[0].half for i in loads]
    assert set(halves) == {0, 1}  # successive loads into one region alternate ping and pong
    assert all(b.double for b in block.buffers if any(i.dst[0].name == b.name for i in loads))
    # a load into the other half does not wait for the vector op still reading the first
    ops = block.instrs
    second = ops.index(loads[1])
    assert loads[1].dst[0].half != loads[0].dst[0].half
    assert not [i for i in ops[ops.index(loads[0]) + 1:second] if i.opcode == "WAIT_FLAG" and i.pipe == "MTE2"]
    assert block.peak("UB") <= dict(block.capacity_bytes)["UB"]


def test_no_double_buffering_when_it_does_not_fit():
    p = _lower(big_tile, _rand(128, 256), np.zeros((128, 256), np.float32))
    (block,) = p.blocks  # type: ignore[misc]
    check_block(block, p)
    assert not block.double_buffered and block.spills == 0
    assert all(not i.double_buffered for i in block.instrs)
    assert all(not b.double for b in block.buffers)
    assert block.peak("UB") == 128 * 256 * 4  # exp and the +1 run in place over the loaded tile
    assert [i.opcode for i in block.instrs if i.flag is None] == ["TLOAD", "TEXP", "TADDS", "TSTORE"]


def test_a_matmul_leaf_is_a_k_loop_on_the_cube_pipes():
    p = _lower(mm, _rand(64, 256, dtype=np.float16), _rand(256, 64, dtype=np.float16),
               np.zeros((64, 64), np.float32))
    assert p.tiles is not None
    (mm_op,) = [o for o in p.tiles.ops if o.op == "matmul"]
    steps = mm_op.attrs["k_steps"]
    assert steps == 4
    (block,) = [b for b in p.blocks if b.core == "AIC"]  # type: ignore[union-attr]
    check_block(block, p)
    real = [i for i in block.instrs if i.flag is None]
    assert [i.opcode for i in real].count("TMATMUL") == steps
    assert [i.opcode for i in real].count("TMOV") == 2 * steps
    assert [i.opcode for i in real].count("TLOAD") == 4  # K = 256 in L1 blocks of 128: A and B twice each
    assert real[-1].opcode == "TFIXPIPE" and real[-1].pipe == "FIX"
    assert real[-1].dst[0].space == "GM" and real[-1].srcs[0].space == "L0C"
    pipe_of = {"TLOAD": "MTE2", "TMOV": "MTE1", "TMATMUL": "M", "TFIXPIPE": "FIX"}
    assert all(i.pipe == pipe_of[i.opcode] for i in real)
    first = {pipe: next(k for k, i in enumerate(real) if i.pipe == pipe) for pipe in ("MTE2", "MTE1", "M", "FIX")}
    assert first["MTE2"] < first["MTE1"] < first["M"] < first["FIX"]
    movs = [i for i in real if i.opcode == "TMOV"]
    assert {i.dst[0].space for i in movs} == {"L0A", "L0B"} and {i.srcs[0].space for i in movs} == {"L1"}
    mms = [i for i in real if i.opcode == "TMATMUL"]
    assert len({i.dst[0].name for i in mms}) == 1  # one accumulator in L0C
    assert mms[0].dst[0] not in mms[0].srcs and all(i.dst[0] in i.srcs for i in mms[1:])  # later steps accumulate
    # every k step waits for its operands' moves (MTE1 -> M) and the fixpipe for the last step (M -> FIX)
    flags = {i.flag[:2] for i in block.instrs if i.opcode == "WAIT_FLAG"}  # type: ignore[index]
    assert {("MTE2", "MTE1"), ("MTE1", "M"), ("M", "FIX")} <= flags
    assert block.double_buffered  # L0A/L0B ping-pong: the move of step k+1 overlaps the matmul of step k
    assert {i.dst[0].half for i in movs} == {0, 1}


def test_a_matmul_with_bias_and_several_l0c_blocks():
    p = _lower(mm_bias, _rand(64, 128, dtype=np.float16), _rand(64, 128, dtype=np.float16),
               _rand(64), np.zeros((64, 64), np.float32))
    assert p.tiles is not None
    blocks = [b for b in p.blocks if b.core == "AIC"]  # type: ignore[union-attr]
    assert blocks
    for block in blocks:
        check_block(block, p)
        real = [i for i in block.instrs if i.flag is None]
        (o,) = {i.tile_op for i in real}
        op = next(t for t in p.tiles.ops if t.id == o)
        steps = op.attrs["k_steps"]
        (m0, _), _, (n0, _) = op.attrs["cube"]
        l0c_blocks = -(-op.shape[-2] // m0) * -(-op.shape[-1] // n0)
        fix = [i for i in real if i.opcode == "TFIXPIPE"]
        assert len(fix) == l0c_blocks
        assert [i.opcode for i in real].count("TMATMUL") == steps * l0c_blocks
        assert all("+bias" in i.note for i in fix) and all(any(s.space == "L1" for s in i.srcs) for i in fix)
        assert any(i.opcode == "TLOAD" and i.note == "bias" for i in real)


def test_the_listing_shows_source_lines_opcodes_and_memory():
    p = _softmax()
    (block,) = p.blocks  # type: ignore[misc]
    text = listing(block, p)
    head, mem = text.splitlines()[:2]
    assert head.startswith("leaf 0 · AIV · ") and "softmax_rows" in head
    for marker in ("# line: amax", "# line: exp", "# line: sum"):
        assert f":{_line(marker)}" in head
    assert "UB peak" in mem and "196,608" in mem and "double-buffered" in mem and "0 spills" in mem
    body = text.splitlines()[2:]
    amax = next(ln for ln in body if "TROWMAX" in ln)
    assert f"test_block.py:{_line('# line: amax')}" in amax and " V " in amax and "ub" in amax
    assert any("SET_FLAG  MTE2 -> V  ev0" in ln for ln in body)
    assert any("TLOAD" in ln and "gm x[" in ln and "MTE2" in ln for ln in body)
    pm = _lower(mm, _rand(64, 256, dtype=np.float16), _rand(256, 64, dtype=np.float16),
                np.zeros((64, 64), np.float32))
    aic = next(b for b in pm.blocks if b.core == "AIC")  # type: ignore[union-attr]
    text = listing(aic, pm)
    assert "L0A peak" in text and "TMATMUL" in text and "TFIXPIPE" in text
    assert f"test_block.py:{_line('# line: matmul')}" in text


def test_spills_are_counted_when_the_buffer_is_too_small():
    p = _softmax()
    board = load_board("a2a3")
    tile = 16 * 64 * 4
    tiny = {**board, "buffers_bytes": {**board["buffers_bytes"], "UB": 2 * tile + 1024}}
    (block,), notes = build_blocks(p, tiny)
    assert not block.double_buffered
    assert block.spills > 0
    stores = [i for i in block.instrs if i.opcode == "TSTORE" and i.note == "spill"]
    reloads = [i for i in block.instrs if i.opcode == "TLOAD" and i.note == "reload"]
    assert len(stores) == block.spills and reloads
    assert all(i.dst[0].space == "GM" and i.dst[0].name == "spill" and i.pipe == "MTE3" for i in stores)
    assert block.peak("UB") <= tiny["buffers_bytes"]["UB"]
    check_block(block, p)  # the reloads wait for their spill stores (MTE3 -> MTE2) and read the right tiles
    assert notes and "spills" in notes[0][0]
    # the real board needs none
    (roomy,), quiet = build_blocks(p, board)
    assert roomy.spills == 0 and not quiet


@pypto.jit
def decayed(col: pypto.Tensor([128, 1], pypto.DT_FP32), tril: pypto.Tensor([128, 128], pypto.DT_FP32),
            a: pypto.Tensor([128, 128], pypto.DT_FP32), mask: pypto.Tensor([128, 128], pypto.DT_FP32),
            out: pypto.Tensor([128, 128], pypto.DT_FP32), decay: pypto.Tensor([128, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(128, 128)
    d = pypto.exp((col - pypto.transpose(col, 0, 1)) * tril)
    out[:] = a * d * mask
    decay[:] = d


def test_small_buffers_do_not_split_the_room_big_tiles_need():
    """Gated delta rule's decay (its leaf 8): three 64 KiB tiles live at once fill the 192 KiB UB exactly, and a
    512-byte row placed first at the bottom left them 1 KiB short: first fit spilled one in every task. Planned
    with small buffers from the top, as a compiler that knows every lifetime ahead would, nothing spills."""
    p = _lower(decayed, _rand(128, 1), np.tril(np.ones((128, 128), np.float32)), _rand(128, 128), _rand(128, 128),
               np.zeros((128, 128), np.float32), np.zeros((128, 128), np.float32))
    (block,), notes = build_blocks(p, load_board("a2a3"))
    assert block.spills == 0 and not notes
    assert block.peak("UB") == 196_608
    check_block(block, p)


def _source_block() -> Any:
    """block.py run from its Python source, a module of its own: in the native build (`pypto.native`) `allocate`
    makes the compiled `_Allocator`, whatever the module's attribute says."""
    spec = importlib.util.spec_from_file_location("block_as_source", native.source_of("pypto.compiler.block"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.mark.parametrize("ub_tiles", [2, 3])
def test_spill_choices_are_the_furthest_next_use_as_a_scan_of_every_resident_finds(ub_tiles, monkeypatch):
    p = _softmax()
    board = load_board("a2a3")
    tiny = {**board, "buffers_bytes": {**board["buffers_bytes"], "UB": ub_tiles * 16 * 64 * 4 + 1024}}
    blocks, _ = build_blocks(p, tiny)
    assert sum(b.spills for b in blocks) > 0
    source = _source_block()
    scans: list[int] = []

    class BruteForceVictims(source._Allocator):  # type: ignore[misc, name-defined]
        """The spill choice by its definition: of the unpinned residents of the memory, the one used
        furthest ahead, then the largest, then the first in residency order (a scan of all of them)."""

        def victim(self, space: str, pinned: set[int], i: int) -> int | None:
            scans.append(i)
            cands = [r for r, a in self.res.items() if a.space == space and r not in pinned]
            if not cands:
                return None
            return max(cands, key=lambda r: (self.next_use(r, i), self.res[r].unit * self.res[r].copies))

    monkeypatch.setattr(source, "_Allocator", BruteForceVictims)
    brute, _ = source.build_blocks(p, tiny)
    assert scans, "the scan chose the victims"
    assert blocks == brute


@pytest.mark.parametrize("ub_tiles", [2, 4])
def test_allocations_skipped_when_no_buffer_is_small_give_the_blocks_every_allocation_gives(ub_tiles, monkeypatch):
    """`allocate` skips the two-ended attempt after one that asked for no small buffer (the two would be the same
    run), and makes the spill queue only when a victim is first looked for: the blocks are those of trying every
    attempt with the queue kept from the start."""
    p = _lower(elementwise, _rand(64, 256), _rand(64, 256), np.zeros((64, 256), np.float32))
    board = load_board("a2a3")
    tiny = {**board, "buffers_bytes": {**board["buffers_bytes"], "UB": ub_tiles * 16 * 64 * 4 + 1024}}
    source = _source_block()
    runs: list[bool] = []

    class Counted(source._Allocator):  # type: ignore[misc, name-defined]
        def run(self) -> Any:
            runs.append(self.trial)
            return super().run()

    monkeypatch.setattr(source, "_Allocator", Counted)
    lazy, _ = source.build_blocks(p, tiny)
    skipped = len(runs)

    class Eager(Counted):
        """Every attempt made, the spill queue kept from the first instruction on (as before session 63)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.queued = True

        def took_small(self) -> bool:
            return True

    monkeypatch.setattr(source, "_Allocator", Eager)
    runs.clear()
    eager, _ = source.build_blocks(p, tiny)
    assert lazy == eager
    assert skipped < len(runs), "an attempt was skipped"
    assert (sum(b.spills for b in lazy) > 0) == (ub_tiles == 2)  # (with 4 tiles' room: single-buffered)
    for b in lazy:
        check_block(b, p)


def test_gm_hazards_found_through_the_grid_are_those_a_scan_of_every_record_finds():
    """Random GM boxes (two layouts, several shapes, aligned or not): the hazards an access notes
    are those of every earlier record it overlaps (any record of another layout counts)."""
    rng = np.random.default_rng(7)
    gm = block_module._GmAccesses()
    seen: list[tuple[Operand, int, str, bool]] = []
    for idx in range(400):
        layout = (64, 64) if rng.random() < 0.9 else (4096,)
        if layout == (64, 64):
            shape = tuple(int(x) for x in rng.choice([1, 4, 8, 16], size=2))
            at = tuple(int(rng.integers(0, 64 - n + 1)) if rng.random() < 0.5 else int(rng.integers(0, 64 // n)) * n
                       for n in shape)
        else:
            shape = (int(rng.choice([16, 64, 256])),)
            at = (int(rng.integers(0, 4096 - shape[0] + 1)),)
        op = Operand("GM", "x", 0, 4 * int(np.prod(shape)), shape, pypto.DT_FP32, buffer=0, layout=layout, at=at)
        pipe, write = str(rng.choice(["MTE2", "MTE3", "FIX"])), bool(rng.random() < 0.4)
        want: dict[str, int] = {}
        last: dict[tuple, tuple[int, str, dict[str, int]]] = {}
        for o, i, pp, wr in seen:  # replay: who last wrote each box, who read it since
            key = (o.layout, o.at, o.shape)
            w, wp, rd = last.get(key, (-1, "", {}))
            last[key] = (i, pp, {}) if wr else (w, wp, {**rd, pp: i})
        for (lay, a, shp), (w, wp, rd) in last.items():
            if lay != layout or all(x < y + n and y < x + m for x, m, y, n in zip(at, shape, a, shp)):
                if w >= 0:
                    want[wp] = max(want.get(wp, -1), w)
                if write:
                    for q, r in rd.items():
                        want[q] = max(want.get(q, -1), r)
        got: dict[str, int] = {}
        gm.access(op, idx, pipe, write, got)
        assert got == want, idx
        seen.append((op, idx, pipe, write))


def test_a_buffer_too_small_for_one_instruction_is_modelled_and_said_and_refused_by_strict_rules():
    p = _softmax()
    board = load_board("a2a3")
    small = {**board, "buffers_bytes": {**board["buffers_bytes"], "UB": 4096}}
    blocks, notes = build_blocks(p, small)  # PyPTO compiles it: modelled as if it fit, and said so
    over = [(m, loc) for m, loc, rule in notes if rule == "block.over-capacity"]
    assert blocks and over and "bytes of UB at once" in over[0][0] and "4,096-byte UB" in over[0][0]
    assert over[0][1].span is not None and over[0][1].span.file == __file__
    with strict_tile_rules(), pytest.raises(pypto.PyptoError) as e:  # the tuning advisor's rules refuse it
        build_blocks(p, small)
    assert "bytes of UB at once" in str(e.value) and str(e.value).splitlines()[0].startswith(f"{__file__}:")


def test_event_ids_are_reused_round_robin_and_never_while_outstanding():
    def ub(k: int) -> Operand:
        return Operand("UB", f"ub{k}", k * 256, 256, (64,), pypto.DT_FP32)

    gm = Operand("GM", "x", 0, 256, (64,), pypto.DT_FP32, buffer=0, layout=(64 * 12,), at=(0,))
    loads = [Instr("TLOAD", "MTE2", k, (ub(k),), (dataclasses.replace(gm, at=(64 * k,)),)) for k in range(12)]
    uses = [Instr("TEXP", "V", 100 + k, (ub(20 + k),), (ub(k),)) for k in range(12)]
    out, where = insert_sync([*loads, *uses])
    block = Block(0, "AIV", 1, 0, tuple(out), (), (("UB", 0),), (("UB", 1 << 20),), False, 0)
    check_flags(block)
    assert check_sync(block) == 12
    sets = [i.flag[2] for i in out if i.opcode == "SET_FLAG"]  # type: ignore[index]
    assert len(sets) == 12 and sets[:EVENTS_PER_PAIR] == list(range(EVENTS_PER_PAIR))
    assert [out[k] for k in where] == [*loads, *uses]
    # a wait already implied by a later one on the same pipe is dropped
    chain = [Instr("TLOAD", "MTE2", 0, (ub(0),), (gm,)), Instr("TLOAD", "MTE2", 1, (ub(1),), (gm,)),
             Instr("TADD", "V", 2, (ub(2),), (ub(1), ub(0)))]
    out, _ = insert_sync(chain)
    assert [i.opcode for i in out] == ["TLOAD", "TLOAD", "SET_FLAG", "WAIT_FLAG", "TADD"]


def test_the_block_does_not_grow_with_the_number_of_tasks():
    @pypto.jit
    def rows(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
             out: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 128)
        out[:] = pypto.exp(x) * 2.0

    small = _lower(rows, _rand(16, 128), np.zeros((16, 128), np.float32))
    large = _lower(rows, _rand(256, 128), np.zeros((256, 128), np.float32))
    (a,), (b,) = small.blocks, large.blocks  # type: ignore[misc]
    assert a.tasks * 16 == b.tasks
    assert a.instrs == b.instrs or len(a.instrs) == len(b.instrs)


def test_every_example_block_is_synchronized_and_allocated_within_capacity():
    programs = _example_programs()
    assert len(programs) >= 11
    for name, program in programs:
        assert program.blocks is not None and program.leaves is not None, name
        assert len(program.blocks) == len(program.leaves), name
        for block in program.blocks:
            check_block(block, program)
            assert listing(block, program).count("\n") >= len(block.instrs) + 1, name
