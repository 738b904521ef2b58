"""Cost per source line (`pypto.analysis.line_costs`): each instruction's pipe cycles, times the
tasks that run its leaf, go to the lines that made it; fused lines are told apart."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pypto.analysis.line_costs import line_costs
from pypto.analysis.report import make_report
from pypto.boards.core_model import CoreModel
from pypto.cli import load_module
from pypto.frontend.inputs import example_arguments
from pypto.record import compile_record
from pypto.target import load as load_board

SOFTMAX = Path(__file__).resolve().parents[1] / "examples" / "softmax.py"


def _line(marker: str) -> int:
    return next(k for k, t in enumerate(SOFTMAX.read_text().splitlines(), 1) if marker in t)


def test_the_lines_fused_into_one_leaf_each_get_their_share():
    kernel = load_module(SOFTMAX).softmax_kernel
    record = compile_record(kernel, example_arguments(kernel))
    costs = line_costs(record)
    assert record.program.leaves is not None and len(record.program.leaves) == 1  # one fused leaf
    amax, exp, div = (costs[(str(SOFTMAX), _line(m))] for m in ("pypto.amax(", "pypto.exp(", "pypto.sum("))
    assert amax.opcodes.most_common(1)[0][0] == "TROWMAX" and exp.opcodes["TEXP"] > 0
    assert div.opcodes["TROWSUM"] > 0 and "MTE3" in div.pipes  # the store of the result is on this line
    assert all(0 < c.share < 0.6 for c in (amax, exp, div))
    # each instruction counted once: the lines add up to the model's cycles of every task
    blocks = record.program.blocks or ()
    model = CoreModel(blocks, load_board())
    total = sum(sum(model.pipe_cycles(b.leaf).values()) * b.tasks for b in blocks)
    assert sum(c.cycles for c in costs.values()) == pytest.approx(total, rel=1e-9)
    assert sum(c.share for c in costs.values()) == pytest.approx(1.0, rel=1e-9)


def test_the_report_lists_the_heaviest_lines_on_the_sim_board_only():
    kernel = load_module(SOFTMAX).softmax_kernel
    rep = make_report(kernel)
    assert [c.line for c in rep.line_costs][:1] == [_line("pypto.sum(")]
    doc = rep.to_json()
    assert doc["line_costs"][0]["line"] == _line("pypto.sum(") and doc["line_costs"][0]["opcodes"]
    cpu = make_report(kernel, board="cpu", workers=1)
    assert cpu.line_costs == []  # the cpu board times whole tasks: no per-line figure is invented


def test_node_cycles_split_a_fused_leaf_by_node_and_travel_in_the_record_json():
    """The graph overlay's figures: per tensor node, its instructions' cycles over all tasks."""
    kernel = load_module(SOFTMAX).softmax_kernel
    record = compile_record(kernel, example_arguments(kernel))
    per_node = record.node_cycles
    blocks = record.program.blocks or ()
    model = CoreModel(blocks, load_board())
    total = sum(sum(model.pipe_cycles(b.leaf).values()) * b.tasks for b in blocks)
    assert sum(per_node.values()) == pytest.approx(total, rel=1e-9)
    ops = {n.id: n.op for n in record.graph.walk()}
    by_op = {ops[n]: c for n, c in per_node.items() if n in ops}
    assert by_op.get("exp", 0) > 0 and by_op.get("amax", 0) > 0 and len(per_node) > 2  # one leaf, several nodes
    js = record.to_json()["node_cycles"]
    assert js is not None and {int(k) for k in js} == set(per_node)
    assert compile_record(kernel, example_arguments(kernel), stage="tensor").to_json()["node_cycles"] is None


def test_instruction_costs_find_each_ops_node_whatever_order_the_ops_are_in():
    """A tile op is found at its id's position, where a compile puts it, else by its id: the same costs either way."""
    kernel = load_module(SOFTMAX).softmax_kernel
    record = compile_record(kernel, example_arguments(kernel))
    tiles = record.program.tiles
    assert tiles is not None and all(o.id == i for i, o in enumerate(tiles.ops))  # a compile's order
    shuffled = dataclasses.replace(tiles, ops=tuple(reversed(tiles.ops)))
    again = dataclasses.replace(record, program=dataclasses.replace(record.program, tiles=shuffled))
    assert again.instruction_costs == record.instruction_costs
    assert any(node is not None for node, *_ in record.instruction_costs)
