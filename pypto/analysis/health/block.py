"""The block level: each leaf function's instruction list on the core model (cycles per pipe, the
busiest pipe, scheduled cycles, peak bytes, spills) and its rules: tiles spilled to GM
(`block.spills`), pipes waiting on each other (`block.schedule-gap`) and a leaf bound by one pipe
(`block.pipe-bound`). `PIPE_ADVICE` says how to relieve each pipe; the board level reuses it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pypto.analysis.health.context import HealthContext, rounded
from pypto.analysis.health.tile_shapes import grown, shrunk
from pypto.boards.core_model import CoreModel

_PIPE_KIND = {"MTE2": "memory (GM reads)", "MTE3": "memory (GM writes)", "FIX": "memory (cube results to GM)",
              "MTE1": "cube operand moves (L1 -> L0)", "V": "vector", "M": "cube", "S": "scalar"}
PIPE_ADVICE = {
    "MTE2": "move fewer bytes: narrower input dtypes (bf16/fp16), fuse ops so intermediate tiles stay on chip, "
            "or reuse loaded tiles",
    "MTE3": "write fewer bytes: narrower output dtypes, or keep intermediates on chip instead of storing them",
    "FIX": "write fewer bytes out of L0C (a narrower output dtype)",
    "MTE1": "larger cube L0 tiles move operands to L0 less often per MAC",
    "V": "fewer or cheaper vector instructions: fold constants, multiply by a reciprocal instead of dividing, "
         "avoid casts that autocast can skip",
    "M": "the cube is the limit: this is near peak for the shapes; only fewer MACs help",
    "S": "fewer scalar steps",
}
_MAX_LISTED_LEAVES = 20  # per-leaf block stats listed (the leaves with the most task cycles)


def block_level(h: HealthContext) -> None:
    """Each leaf function's stats on the core model (`h.stats["block"]`) and its findings."""
    blocks = h.p.blocks
    assert blocks is not None
    if h.core_model is None:
        h.core_model = CoreModel(blocks, h.board)
    cm = h.core_model
    rows = []
    mem = h.board.get("memory", {})
    read_lat, write_lat = float(mem.get("gm_read_latency", 0)), float(mem.get("gm_write_latency", 0))
    counts = Counter(t.leaf for t in h.p.execute.tasks) if h.p.execute is not None else \
        Counter({b.leaf: b.tasks for b in blocks})
    for b in blocks:
        pipes = cm.pipe_cycles(b.leaf)
        sched = h.leaf_cycles.get(b.leaf)
        if sched is None:
            sched = h.leaf_cycles[b.leaf] = cm.run(b.leaf, 0.0, 1.0)[0]
        busiest = max(pipes, key=lambda p: pipes[p]) if pipes else ""
        theory = pipes.get(busiest, 0.0)
        # the shortest a task can be however well its pipes overlap: its busiest pipe's work, plus the latency
        # of its first GM read (nothing can use the data before it lands) and of its last GM write
        reads, _, writes, _ = cm.hbm_occupancy(b.leaf)
        exposed = (read_lat if reads else 0.0) + (write_lat if writes else 0.0)
        floor = theory + exposed
        rows.append({"leaf": b.leaf, "core": b.core, "tasks": counts.get(b.leaf, b.tasks),
                     "instructions": len(b.instrs), "pipe_cycles": {p: rounded(c, 1) for p, c in pipes.items()},
                     "busiest_pipe": busiest, "min_cycles": rounded(theory, 1), "scheduled_cycles": rounded(sched, 1),
                     "gap": rounded(sched / theory) if theory else 0.0,
                     "floor_cycles": rounded(floor, 1), "floor_gap": rounded(sched / floor) if floor else 0.0,
                     "peak_bytes": dict(b.peak_bytes), "double_buffered": b.double_buffered, "spills": b.spills})
    total = sum(r["scheduled_cycles"] * r["tasks"] for r in rows) or 1.0
    for r in rows:
        r["share"] = rounded(r["scheduled_cycles"] * r["tasks"] / total)
    rows.sort(key=lambda r: (-r["share"], r["leaf"]))
    pipe_tot: Counter[str] = Counter()
    for r in rows:
        for p, c in r["pipe_cycles"].items():
            pipe_tot[p] += c * r["tasks"]
    h.stats["block"] = {
        "leaves": len(rows), "spills": sum(r["spills"] for r in rows),
        "leaves_spilling": sum(1 for r in rows if r["spills"]),
        "single_buffered": sum(1 for r in rows if not r["double_buffered"]),
        "task_cycles_total": rounded(total, 1),
        "pipe_cycles_total": {p: rounded(c, 1) for p, c in pipe_tot.most_common()},
        "leaf_stats": rows[:_MAX_LISTED_LEAVES],
    }
    # one finding per rule and tile-shape call (the leaf with the most task cycles speaks for the others)
    spilling = _grouped(h, [r for r in rows if r["spills"] > h.th.spills], lambda r: ())
    for r, group in spilling:
        cid = h.leaf_cfg.get(r["leaf"])
        smaller = shrunk(h, cid)
        tc = h.configs.get(cid) if cid is not None else None
        if smaller is not None and tc is not None:
            sev, sugg = "error", f"use {h.propose(tc, smaller)}: half the tile's live bytes fit"
        else:
            sev, sugg = "warning", "split the work per task (fewer live tiles at once)"
        spills = sum(g["spills"] for g in group)
        h.add("block.spills", sev,
              f"leaf {r['leaf']} spills {r['spills']} tile(s) to GM in each of its {r['tasks']} task(s)"
              + (f" ({len(group)} leaves spill {spills} in all)" if len(group) > 1 else ""),
              "Its live tiles do not fit the on-chip buffer in program order nor in the depth-first order "
              "PyPTO's block scheduler sorts a block in, so the compiler stores some to GM and loads them back: "
              "extra MTE2/MTE3 traffic and latency in every task.",
              sugg, h.leaf_where(r["leaf"]),
              {"leaf": r["leaf"], "spills": r["spills"], "tasks": r["tasks"], "peak_bytes": r["peak_bytes"],
               "leaves": [g["leaf"] for g in group], "spills_total": spills, "threshold": h.th.spills})
    ranked = [r for r in rows if r["share"] >= h.th.min_leaf_share and r["min_cycles"]]
    # measured against what the task cannot avoid (its busiest pipe and one GM round trip), not the busiest
    # pipe alone: a short task of one load, one op and one store is all latency, and no schedule hides that
    gaps = _grouped(h, [r for r in ranked if r["floor_gap"] >= h.th.schedule_gap], lambda r: (r["double_buffered"],))
    for r, group in gaps:
        gap, pipe = r["floor_gap"], r["busiest_pipe"]
        cid = h.leaf_cfg.get(r["leaf"])
        tc = h.configs.get(cid) if cid is not None else None
        if not r["double_buffered"]:
            smaller = shrunk(h, cid)
            sugg = (f"use {h.propose(tc, smaller)} so the loads can be double-buffered"
                    if smaller is not None and tc is not None else "make room for double buffering")
            cause = "its loads are single-buffered, so loading and computing take turns"
        else:
            bigger = grown(h, cid)
            sugg = (f"use {h.propose(tc, bigger)}: more independent tiles per task keep the pipes "
                    "streaming while one tile waits" if bigger is not None and tc is not None else
                    "give each task more independent work (tiles along an axis that is not reduced), so "
                    "the pipes stream instead of waiting")
            cause = ("its pipes wait on each other in turn (each GM read is "
                     f"{read_lat:,.0f} cycles of latency before its data can be used) instead of streaming")
        others = f" ({len(group) - 1} more leaves too)" if len(group) > 1 else ""
        h.add("block.schedule-gap", "warning",
              f"leaf {r['leaf']} takes {r['scheduled_cycles']:,.0f} cycles, {gap:.1f}x what its busiest pipe "
              f"({pipe}, {r['min_cycles']:,.0f}) and one GM round trip need{others}",
              f"Its pipes could finish in {r['floor_cycles']:,.0f} cycles ({pipe}'s work and the latency of one GM "
              f"read and one write) if they overlapped fully; {cause}.",
              sugg, h.leaf_where(r["leaf"]),
              {**_leaf_numbers(r, group), "threshold": h.th.schedule_gap})
    bound = _grouped(h, [r for r in ranked if r["gap"] <= h.th.pipe_bound], lambda r: (r["busiest_pipe"],))
    for r, group in bound:
        pipe = r["busiest_pipe"]
        h.add("block.pipe-bound", "info",
              f"leaf {r['leaf']} is {_PIPE_KIND.get(pipe, pipe)}-bound: {pipe} is busy "
              f"{r['min_cycles']:,.0f} of its {r['scheduled_cycles']:,.0f} cycles",
              f"The other pipes overlap with {pipe}; only less {pipe} work makes the task shorter.",
              PIPE_ADVICE.get(pipe, "reduce the busiest pipe's work"), h.leaf_where(r["leaf"]),
              {**_leaf_numbers(r, group), "threshold": h.th.pipe_bound})


def _grouped(h: HealthContext, rows: list[dict[str, Any]],
             key: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Rows (sorted by share) grouped by where their leaf points and `key`: (first row, all rows)."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        w = h.leaf_where(r["leaf"])
        groups.setdefault((w.file, w.line, w.col, *key(r)), []).append(r)
    return [(g[0], g) for g in groups.values()]


def _leaf_numbers(r: Mapping[str, Any], group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"leaf": r["leaf"], "tasks": r["tasks"], "scheduled_cycles": r["scheduled_cycles"],
            "min_cycles": r["min_cycles"], "busiest_pipe": r["busiest_pipe"], "pipe_cycles": r["pipe_cycles"],
            "ratio": r["gap"], "floor_cycles": r["floor_cycles"], "floor_ratio": r["floor_gap"],
            "share_of_task_cycles": r["share"], "double_buffered": r["double_buffered"],
            "leaves": [g["leaf"] for g in group]}
