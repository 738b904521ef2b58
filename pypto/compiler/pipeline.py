"""The pipeline: every pass, in order, with the stage it belongs to and why it runs.

This list is the compiler. Read it top to bottom to know what happens to a kernel; the
IDE's pass strip shows exactly these names. Stages follow PyPTO's: tensor graph → tile
graph → block graph → execute graph.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator, Sequence
from typing import Any

from pypto.compiler.block import block_schedule
from pypto.compiler.execute import execute_graph
from pypto.compiler.manager import Instrument, Pass, PassContext, PassManager, PassRecord, Program, Recorder
from pypto.compiler.tensor_passes import autocast, cse, dce, decompose, simplify, verify
from pypto.compiler.tile_ir import forget_depends, forget_ops_by_id, keep_ops, take_execute_ahead
from pypto.compiler.tile_passes import graph_partition, leaf_functions, memory_types, tile_expand
from pypto.ir.enums import CompStage
from pypto.ir.graph import Graph
from pypto.target import load as load_board

PIPELINE: tuple[Pass, ...] = (
    # ---- tensor stage: the kernel as the user wrote it, made explicit and minimal
    Pass("verify", "tensor", verify, "re-derive every type from its inputs: the trace is well formed"),
    Pass("decompose", "tensor", decompose, "softmax, rms_norm, var become the primitives the tiler lowers"),
    Pass("autocast", "tensor", autocast, "bf16 (and fp16 transcendentals, div, reductions) compute in fp32"),
    Pass("simplify", "tensor", simplify, "whole-tensor views, same-shape reshapes, same-dtype casts vanish"),
    Pass("cse", "tensor", cse, "identical computations are done once"),
    Pass("dce", "tensor", dce, "values no output needs are not computed"),
    Pass("verify_tensor", "tensor", verify, "the tensor stage left a well-formed graph"),
    # ---- tile stage: the concrete shapes of this call, cut into tiles
    Pass("tile_expand", "tile", tile_expand, "each op becomes tile ops by the tile shapes in force at its line"),
    Pass("graph_partition", "tile", graph_partition,
         "tile ops group into per-core subgraphs that fit UB; crossing edges go through GM"),
    Pass("memory_types", "tile", memory_types,
         "each tile's memory and data path (UB, L1/L0A/L0B/L0C, GM between), checked against the board"),
    Pass("leaf_functions", "tile", leaf_functions, "isomorphic subgraphs merge into one leaf function"),
    # ---- block stage: each leaf function as its core's instructions
    Pass("block_schedule", "block", block_schedule,
         "each leaf becomes pipe instructions over allocated on-chip buffers, synchronized by flags"),
    # ---- execute stage: the tasks the runtime schedules
    Pass("execute_graph", "execute", execute_graph,
         "every task (a leaf at tile coordinates), its GM inputs and outputs, and what it waits for"),
)

_STOP = {CompStage.TENSOR_GRAPH: "tensor", CompStage.TILE_GRAPH: "tile",
         CompStage.CODEGEN_INSTRUCTION: "block", CompStage.EXECUTE_GRAPH: "execute"}


def stop_stage(options: dict[str, Any]) -> str | None:
    """The last stage to run, from `host_options={"compile_stage": ...}` (None: all)."""
    stage = options.get("host_options", {}).get("compile_stage", CompStage.ALL_COMPLETE)
    return _STOP.get(CompStage(stage))


def run_pipeline(graph: Graph, options: dict[str, Any], instruments: Sequence[Instrument] = ()
                 ) -> tuple[Program, list[PassRecord]]:
    """The tensor stage of `graph` (it needs no concrete shapes); returns the program and
    one record per pass. On failure the exception carries `records`: every pass before it
    and the failing one."""
    return _run(Program(graph), options, instruments, "tensor", "tensor")


def lower(program: Program, bindings: dict[str, int], options: dict[str, Any],
          instruments: Sequence[Instrument] = ()) -> tuple[Program, list[PassRecord]]:
    """The stages after the tensor stage, for concrete values of the dynamic dims."""
    stop = stop_stage(options)
    if stop == "tensor":
        return program, []
    start = dataclasses.replace(program, bindings=tuple(sorted(bindings.items())))
    return _run(start, options, instruments, "tile", stop)


_kept_frozen = False  # `keep_frozen()` was called: this process's frozen generation stays


def keep_frozen() -> None:
    """Say that this process froze what it holds for good (a worker's template, `gc.freeze()` before it forks
    its jobs, so that no job's collector walks, and so copies, its pages): `gc_paused` leaves it frozen without
    counting it. `gc.get_freeze_count()` walks the whole frozen generation: 30 ms at a template's 0.4 M
    objects, 60 ms once a job froze gated delta rule's record, and a job calls it on every pipeline run and
    record document. Inherited by forked children."""
    global _kept_frozen
    _kept_frozen = True


def frozen() -> bool:
    """Whether anything is frozen in this process (`keep_frozen`: without counting)."""
    return _kept_frozen or gc.get_freeze_count() > 0


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector. The tile, block and execute stages build
    hundreds of thousands of small acyclic objects; without the pause, the collector's full
    passes over the growing tile graph cost as much as the stages themselves. At the end, what
    was made joins the oldest generation (freeze, then unfreeze) instead of the youngest: the
    youngest's next collection, right after the pause, would traverse all of it at once (~15 % of
    softmax 4096² at 32x32's compile). A cycle made meanwhile is collected by the next full
    collection instead of the next young one; `gc.collect()` collects it as before. Not when
    something is frozen already: unfreezing would release it. In a process that froze for good
    (`keep_frozen`: a worker's template and the jobs it forks, which live for one answer) what was
    made is frozen too — refcounting still frees it, only a cycle made meanwhile stays; left in the
    youngest generation, the collections right after the pause walked all of it (gated delta rule's
    job: its record 0.4 s later)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _kept_frozen:
                gc.freeze()
            elif not frozen():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _run(program: Program, options: dict[str, Any], instruments: Sequence[Instrument], start: str,
         stop: str | None) -> tuple[Program, list[PassRecord]]:
    recorder = Recorder()
    ctx = PassContext(options, load_board("a2a3"))
    manager = PassManager(PIPELINE, [recorder, *instruments])
    try:
        with gc_paused():
            result = manager.run(program, ctx, stop, start)
            if result.tiles is not None:
                if result.blocks is not None:  # the few ops the listings and per-node costs read, found now
                    keep_ops(result.tiles, {ins.tile_op for b in result.blocks for ins in b.instrs})
                forget_ops_by_id(result.tiles)  # the stages' index of the tile ops: not kept with the program
                forget_depends(result.tiles)  # nor the partition's arrows the execute stage read
                take_execute_ahead(result.tiles, ())  # nor an execute graph a stop stage left untaken
    except Exception as e:
        e.records = recorder.records  # type: ignore[attr-defined]
        raise
    return result, recorder.records
