"""The pipeline: every pass, in order, with the stage it belongs to and why it runs.

This list is the compiler. Read it top to bottom to know what happens to a kernel; the
IDE's pass strip shows exactly these names. Stages follow PyPTO's: tensor graph → tile
graph → block graph → execute graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pypto.boards import load as load_board
from pypto.compiler.manager import Instrument, Pass, PassContext, PassManager, PassRecord, Program, Recorder
from pypto.compiler.tensor_passes import autocast, cse, dce, decompose, simplify, verify
from pypto.enums import CompStage
from pypto.ir.graph import Graph

PIPELINE: tuple[Pass, ...] = (
    # ---- tensor stage: the kernel as the user wrote it, made explicit and minimal
    Pass("verify", "tensor", verify, "re-derive every type from its inputs: the trace is well formed"),
    Pass("decompose", "tensor", decompose, "softmax, rms_norm, var become the primitives the tiler lowers"),
    Pass("autocast", "tensor", autocast, "bf16 (and fp16 transcendentals, div, reductions) compute in fp32"),
    Pass("simplify", "tensor", simplify, "whole-tensor views, same-shape reshapes, same-dtype casts vanish"),
    Pass("cse", "tensor", cse, "identical computations are done once"),
    Pass("dce", "tensor", dce, "values no output needs are not computed"),
    Pass("verify_tensor", "tensor", verify, "the tensor stage left a well-formed graph"),
)

_STOP = {CompStage.TENSOR_GRAPH: "tensor", CompStage.TILE_GRAPH: "tile",
         CompStage.CODEGEN_INSTRUCTION: "block", CompStage.EXECUTE_GRAPH: "execute"}


def stop_stage(options: dict[str, Any]) -> str | None:
    """The last stage to run, from `host_options={"compile_stage": ...}` (None: all)."""
    stage = options.get("host_options", {}).get("compile_stage", CompStage.ALL_COMPLETE)
    return _STOP.get(CompStage(stage))


def run_pipeline(graph: Graph, options: dict[str, Any],
                 instruments: Sequence[Instrument] = ()) -> tuple[Program, list[PassRecord]]:
    """Compile `graph`; returns the final program and one record per pass that ran.

    On failure the exception propagates and `Recorder.records` (reachable through the
    exception's `records` attribute) still holds every pass before it and the failing one."""
    recorder = Recorder()
    ctx = PassContext(options, load_board("a2a3"))
    manager = PassManager(PIPELINE, [recorder, *instruments])
    try:
        program = manager.run(Program(graph), ctx, stop_stage(options))
    except Exception as e:
        e.records = recorder.records  # type: ignore[attr-defined]
        raise
    return program, recorder.records
