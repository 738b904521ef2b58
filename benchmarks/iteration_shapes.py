"""How alike a production kernel's loop iterations are after lowering: the measure behind reuse below the kernel
(issue 28; docs/ARCHITECTURE.md, "The compile cache").

An edit of a big kernel compiles it whole: tile expansion, graph partition and the execute graph walk every tile
op of every loop iteration. When most iterations of a loop lower to the same tile ops (up to where they read and
write: offsets, buffers) and are partitioned alike, one iteration's work could stand for the others. This prints,
per `pypto.loop` of each kernel (its instances: one per iteration, nested loops' included):

- **tile ops**: the loop's iterations' tile ops, all of them;
- **shapes**: distinct iteration shapes — each iteration's tile ops as (op, tensor node, shape, dtype, tile
  coordinates, inputs by their place among the iteration's tile ops or, made outside it, by their tensor node, the
  GM region's shape and layout but not its place) — and how many iterations the commonest one has;
- **partitions**: distinct partitions of those iterations — each subgraph's core, leaf and tile ops by their place
  in the iteration — and the commonest one's count.

The kernels are PyPTO's models/ with captures, as production_bench.py makes them (`--keep DIR`; run it once
without `--no-capture` first).

Run: `.venv/bin/python benchmarks/iteration_shapes.py --keep DIR [--kernels gated_delta_rule,block_attn_res]`.

Measured 2026-11-29 (this tree at the commit that added it):

| kernel: loop | iterations | tile ops | shapes (commonest) | partitions (commonest) |
|---|---|---|---|---|
| gated_delta_rule: LOOP_Nv_TND | 16 | 32 | 1 (16) | 1 (16) |
| gated_delta_rule: LOOP_S_TND | 256 | 195,520 | 2 (240) | 2 (240) |
| block_attn_res: Block_Attn_Res_T_Loop_LoopUnroll128 | 64 | 139,840 | 1 (64) | 1 (64) |
| glm_attention: LOOP_s2 | 256 | 3,072 | 1 (256) | 1 (256) |
| glm_attention: if pypto.is_loop_begin(s2_idx) | 8 | 200 | 1 (8) | 1 (8) |
| glm_attention: else (if pypto.is_loop_begin(s2_idx)) | 248 | 21,080 | 1 (248) | 1 (248) |
| glm_attention: if pypto.is_loop_end(s2_idx) | 8 | 56 | 1 (8) | 1 (8) |

Every loop's iterations are one program at other offsets, and are partitioned alike (gated delta rule's other 16
are its `is_loop_end` variant): 99.9 % of gated delta rule's tile ops, and all of Kimi's, are in iterations whose
tile ops and partition another iteration already has. Not measured here: whether the execute graph's dependencies
repeat as well (they cross iterations: a carried state, a buffer written in slabs).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _models import kept_models_arguments  # noqa: E402
from production_bench import KERNELS  # noqa: E402

from server import analyze  # noqa: E402


def iteration_shape(ops: list[Any], where: dict[int, tuple[int, int]], node_of: dict[int, int]) -> tuple[Any, ...]:
    """One iteration's tile ops up to where they read and write (see the module doc); `where`: each tile op's
    (instance, place among its instance's ops), `node_of`: its tensor node."""
    me = ops[0].instance
    out = []
    for o in ops:
        inputs = tuple(("here", where[i][1]) if where[i][0] == me else ("outside", node_of[i]) for i in o.inputs)
        r = o.region
        out.append((o.op, o.node, o.shape, o.dtype.short, o.coord, inputs, None if r is None else (r.shape, r.layout)))
    return tuple(out)


def loops(record: Any) -> list[tuple[str, int, int, Counter[Any], Counter[Any]]]:
    """Per loop with tile ops: (its name, iterations, tile ops, iteration shapes, partitions)."""
    p = record.program
    tiles = p.tiles
    by_instance: dict[int, list[Any]] = defaultdict(list)
    where: dict[int, tuple[int, int]] = {}
    for o in tiles.ops:
        where[o.id] = (o.instance, len(by_instance[o.instance]))
        by_instance[o.instance].append(o)
    node_of = {o.id: o.node for o in tiles.ops}
    subgraphs: dict[int, list[Any]] = defaultdict(list)
    for sg in p.subgraphs or ():
        subgraphs[sg.instance].append(sg)
    names = {n.id: str(n.attrs.get("name") or f"loop %{n.id}") for n in p.graph.walk() if n.op == "loop"}
    by_root: dict[int, list[int]] = defaultdict(list)
    for inst in tiles.instances:
        if by_instance[inst.id]:
            by_root[inst.root].append(inst.id)
    out = []
    for root, insts in by_root.items():
        if root < 0:
            continue
        shapes = Counter(iteration_shape(by_instance[i], where, node_of) for i in insts)
        parts = Counter(tuple((sg.core, sg.leaf, tuple(where[o][1] if where[o][0] == i else ("outside", node_of[o])
                                                       for o in sg.ops)) for sg in subgraphs[i]) for i in insts)
        out.append((names.get(root, f"loop %{root}"), len(insts), sum(len(by_instance[i]) for i in insts),
                    shapes, parts))
    return out


def main() -> int:
    a = kept_models_arguments(__doc__.split("\n\n")[0], "gated_delta_rule,block_attn_res,glm_attention", None)
    models = a.models
    from pypto.frontend.inputs import example_arguments
    from pypto.record import compile_for

    analyze.warm_up()
    print("| kernel: loop | iterations | tile ops | shapes (commonest) | partitions (commonest) |")
    print("|---|---|---|---|---|")
    for key in a.kernels.split(","):
        k = next(x for x in KERNELS if x.key == key)
        path = models / k.file
        kernel = analyze._kernel(analyze._load(str(path), path.read_text()), str(path), k.shown)
        record, _ = compile_for(kernel, example_arguments(kernel, values=False))
        for name, n, ops, shapes, parts in loops(record):
            print(f"| {key}: {name} | {n} | {ops:,} | {len(shapes)} ({shapes.most_common(1)[0][1]}) | "
                  f"{len(parts)} ({parts.most_common(1)[0][1]}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
