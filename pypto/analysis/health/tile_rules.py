"""The tile level's rules: part-empty tail tiles (`tile.tail-waste`, with an edit of the tile-shape
call when one divides the tensors), rows padded to the alignment (`tile.last-dim-unaligned`), a
leaf's buffer too full to double-buffer or over capacity (`tile.buffer-peak`), copies that buy
nothing (`tile.redundant-copy`) and a GM region loaded twice in one task (`tile.duplicate-load`).

They read what `tile.py` gathered (`TileFacts`, `HealthContext.cfg`) and suggest other tile shapes
through `tile_shapes.py`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pypto.analysis.findings import Fix, Related, TextEdit
from pypto.analysis.health.context import MAX_LINES, HealthContext, jsonable, pct, rounded
from pypto.analysis.health.tile import TileFacts, iteration_shape
from pypto.analysis.health.tile_shapes import call_text, edit_for, shrunk, tail_fix
from pypto.boards.core_model import padded_bytes, vector_bytes
from pypto.compiler.block_ir import Operand
from pypto.ir.dtypes import DataType


def tile_rules(h: HealthContext, facts: TileFacts) -> None:
    """The tile level's findings, in a fixed order."""
    rule_tail_waste(h)
    if facts.unaligned_nodes:
        rule_unaligned(h, facts.ops, facts.unaligned_nodes)
    rule_buffer_peak(h)
    rule_copies(h, facts.clones, facts.round_trips)
    rule_duplicates(h, facts.duplicates)


def rule_tail_waste(h: HealthContext) -> None:
    for cid, c in sorted(h.cfg.items()):
        if c.waste < h.th.tail_waste or not c.tails:
            continue
        tc = c.tc
        now = call_text(tc, tc.dims)
        tails = []
        for j, ds in sorted(c.tails.items()):
            t = tc.dims[j] if tc.kind == "vec" else tc.dims[j][-1]
            for d in sorted(ds):
                tails.append(f"{d} = {d // t} x {t} + {d % t}")
        fix = tail_fix(h, c)
        numbers: dict[str, Any] = {"waste": rounded(c.waste), "threshold": h.th.tail_waste,
                                   "elements": c.elems, "capacity": c.capacity,
                                   "tails": tails, "dims": list(jsonable(tc.dims))}
        edits: tuple[TextEdit, ...] = ()
        if fix is not None:
            new, notes = fix
            new_text = h.propose(tc, new)
            edits = edit_for(h, tc, new)
            numbers["suggested_dims"] = list(jsonable(new))
            suggestion = f"use {new_text}: {'; '.join(notes)}, no tail"
        else:
            pads = []
            for j, ds in sorted(c.tails.items()):
                t = tc.dims[j] if tc.kind == "vec" else tc.dims[j][-1]
                pads += [f"{d} to {math.ceil(d / t) * t}" for d in sorted(ds)]
            suggestion = (f"no tile size between {1 / h.th.fix_scale:g}x and {h.th.fix_scale:g}x the current "
                          f"one divides the tensor (keeping rows a multiple of {h.align} bytes and the buffer "
                          f"fit): pad {', '.join(pads)} so the tiles divide it")
        h.add("tile.tail-waste", "warning",
              f"{now} leaves {pct(c.waste)} of its tile grid empty ({'; '.join(tails)})",
              "Tiles that do not divide the tensor end in part-empty tail tiles: each pays a full tile's "
              "fixed costs for less work, and the tail shapes are extra leaf functions.",
              suggestion, h.config_where(cid) or h.node_where(c.nodes[0]), numbers, edits)


def rule_unaligned(h: HealthContext, ops: Sequence[Any], nodes: set[int]) -> None:
    cache: dict[tuple[tuple[int, ...], DataType, bool], tuple[int, int]] = {}
    acc: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # node -> moved raw/padded, vector raw/padded
    odd: dict[int, set[int]] = defaultdict(set)  # node -> last dims of its padded tiles
    odd_nb: dict[int, set[int]] = defaultdict(set)  # node -> element sizes of its padded tiles
    for o in ops:
        if o.node not in nodes or o.op == "matmul" or not o.shape:
            continue
        move = o.op in ("load", "store")
        key = (o.shape, o.dtype, move)
        got = cache.get(key)
        if got is None:
            operand = Operand("UB", "", 0, 0, o.shape, o.dtype)
            raw = math.prod(o.shape) * o.dtype.nbytes
            got = cache[key] = (raw, padded_bytes(operand, h.align) if move else
                                max(raw, vector_bytes(operand, h.align)))
        a = acc[o.node]
        base = 0 if move else 2
        a[base] += got[0]
        a[base + 1] += got[1]
        if got[1] > got[0]:
            odd[o.node].add(o.shape[-1])
            odd_nb[o.node].add(o.dtype.nbytes)
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for nid in sorted(nodes):
        n = h.nodes.get(nid)
        shape = iteration_shape(h, n) if n is not None else None
        nb = n.type.dtype.nbytes if n is not None and n.type is not None else 0
        d = shape[-1] if shape else 0
        groups[(d, nb)].append(nid)
    for (d, nb), nids in sorted(groups.items()):
        mr = sum(acc[n][0] for n in nids)
        mp = sum(acc[n][1] for n in nids)
        vr = sum(acc[n][2] for n in nids)
        vp = sum(acc[n][3] for n in nids)
        move_share = (mp - mr) / mp if mp else 0.0
        vec_share = (vp - vr) / vp if vp else 0.0
        share = max(move_share, vec_share)
        if share < h.th.unaligned_waste:
            continue
        first = min(nids, key=lambda x: (h.line_of(x), x))
        lines = sorted({h.line_of(x) for x in nids})
        # the alignment step of the narrowest padded element (a cast's fp16 load pads where its fp32 result does not)
        nb_odd = min(set().union(*(odd_nb[x] for x in nids)), default=nb)
        step = h.align // math.gcd(h.align, nb_odd) if nb_odd else h.align
        padded = -(-d // step) * step if d else 0
        tile_dims = sorted(set().union(*(odd[x] for x in nids)))
        where = h.node_where(first)
        related: tuple[Related, ...] = ()
        fixes: tuple[Fix, ...] = ()
        if d and nb_odd and (d * nb_odd) % h.align:
            what = f"last dim {d} ({d * nb} bytes)"
            sugg = (f"pad the last dim from {d} to {padded} (a multiple of {step} elements = {h.align} "
                    f"bytes) where the tensor is made, and slice the result")
        else:  # the tensor is aligned, some tiles are not
            what = f"tiles {', '.join(map(str, tile_dims))} wide"
            if d:  # (an op whose inputs' rows are wider than its result's, a transpose: those are the tiles)
                what += f" (of a last dim of {d})" if max(tile_dims, default=0) <= d else \
                    f" (its inputs' rows: its result's last dim is {d})"
            sugg = f"choose a tile whose last dim is a multiple of {step} elements ({h.align} bytes)"
            call = _unaligned_call(h, nids, step)
            whole = _vec_call(h, nids)
            if whole is not None and call is None:  # the tiles are aligned: the odd widths are the data's
                tc, e = whole
                sugg = (f"{_entry(tc, e)}, {tc.dims[e]} ({call_text(tc, tuple(tc.dims))}), is aligned: "
                        f"the rows are {', '.join(map(str, tile_dims))} wide because the data is (the tensor's last "
                        f"dim, or a view's valid part, a length known at run time, in these inputs), which no tile "
                        f"shape changes; padding it to a multiple of {step} elements where it is made would")
            if call is not None:  # the call's last tile size is the culprit: report it there, the ops related
                (tc, e), alts = call
                where = h.config_where(tc.id) or where
                related = tuple(Related(h.node_where(x), f"{h.nodes[x].op} here is tiled by it")
                                for x in _one_per_line(h, nids))
                news = [(*tc.dims[:e], a, *tc.dims[e + 1:]) for a in alts]
                sugg = (f"use {' or '.join(map(str, alts))} for {_entry(tc, e)} "
                        f"({' or '.join(call_text(tc, n) for n in news)}): a multiple of {step} elements "
                        f"({h.align} bytes)")
                fixes = tuple(Fix(f"use {call_text(tc, n)}", e) for n in news if (e := edit_for(h, tc, n)))
        h.add("tile.last-dim-unaligned", "warning",
              f"{what}: not a multiple of {h.align} bytes, rows are padded "
              f"({pct(move_share)} of moved bytes, {pct(vec_share)} of vector work)",
              f"Rows are moved in {h.align}-byte blocks and an unaligned row is computed on its own in "
              "whole vector repeats, so the padding costs bandwidth and vector time.",
              sugg,
              where,
              {"last_dim": d, "elem_bytes": nb, "padded_to": padded, "tile_last_dims": tile_dims,
               "moved_waste": rounded(move_share),
               "vector_waste": rounded(vec_share), "threshold": h.th.unaligned_waste,
               "lines": lines[:MAX_LINES]}, related=related, fixes=fixes)


def _vec_call(h: HealthContext, nids: Sequence[int]) -> tuple[Any, int] | None:
    """The one `set_vec_tile_shapes` call the nodes are tiled by and the entry that tiles their last axis
    (entry i tiles axis i, so a node of rank r takes entry r - 1), when the nodes share a rank and that entry
    is an int (else None)."""
    cids = {n.tile for x in nids if (n := h.nodes.get(x)) is not None and n.tile is not None}
    tc = h.configs.get(cids.pop()) if len(cids) == 1 else None
    ranks = {len(s) for x in nids if (n := h.nodes.get(x)) is not None and (s := iteration_shape(h, n))}
    if tc is None or tc.kind != "vec" or len(ranks) != 1:
        return None
    e = ranks.pop() - 1
    if not 0 <= e < len(tc.dims) or not isinstance(tc.dims[e], int):
        return None
    return tc, e


def _entry(tc: Any, e: int) -> str:
    """How a finding names a vec call's entry `e` that tiles the last axis: 'the last tile size', or, when the
    tensors have fewer axes than the call has entries, the entry that tiles their last axis."""
    if e == len(tc.dims) - 1:
        return "the last tile size"
    axes = "1 axis" if e == 0 else f"{e + 1} axes"
    return f"the tile size of entry {e + 1} (these tensors have {axes}, and entry i tiles axis i)"


def _unaligned_call(h: HealthContext, nids: Sequence[int], step: int) -> tuple[tuple[Any, int], list[int]] | None:
    """`_vec_call` when the entry tiling the nodes' last axis is off the alignment step, and the aligned sizes
    nearest it (one below, one above)."""
    got = _vec_call(h, nids)
    t = int(got[0].dims[got[1]]) if got is not None else 0
    if got is None or t % step == 0:
        return None
    return got, sorted({max(step, t // step * step), math.ceil(t / step) * step})


def _one_per_line(h: HealthContext, nids: Sequence[int]) -> list[int]:
    seen: dict[int, int] = {}
    for x in sorted(nids, key=lambda x: (h.line_of(x), x)):
        seen.setdefault(h.line_of(x), x)
    return list(seen.values())


def rule_buffer_peak(h: HealthContext) -> None:
    seen: set[tuple[str, int | None, str]] = set()
    for b in sorted(h.p.blocks or (), key=lambda b: -b.tasks):
        caps = dict(b.capacity_bytes)
        has_loads = any(i.opcode == "TLOAD" and not i.note for i in b.instrs)
        cid = h.leaf_cfg.get(b.leaf)
        for space, peak in b.peak_bytes:
            cap = caps.get(space, 0)
            if not cap:
                continue
            share = peak / cap
            if peak > cap:
                sev, what = "error", "over capacity"
            elif has_loads and not b.double_buffered and space in ("UB", "L1"):
                sev, what = "warning", "too full to double-buffer the loads"
            elif share >= h.th.buffer_peak:
                sev, what = "info", "nearly full"
            else:
                continue
            key = (space, cid, sev)
            if key in seen:
                continue
            seen.add(key)
            smaller = shrunk(h, cid)
            tc = h.configs.get(cid) if cid is not None else None
            hint = f"use {h.propose(tc, smaller)}" if smaller is not None and tc is not None else \
                f"use smaller {h.unit}s"
            if sev == "warning":
                suggestion = f"{hint}: half the tile leaves room for two copies of each load, so MTE2 overlaps V"
            elif sev == "error":
                suggestion = f"{hint}: the {h.unit}s must fit the {cap:,}-byte {space}"
            else:
                suggestion = f"fine as it is; do not grow the tile (larger tiles would spill). To double-check: " \
                             f"{hint} halves the peak"
            h.add("tile.buffer-peak", sev,
                  f"leaf {b.leaf} uses {peak:,} of {cap:,} bytes of {space} ({pct(share)}): {what}",
                  "When the loads cannot be doubled, a task loads its next tile only after computing the "
                  "current one; a buffer over capacity cannot be allocated at all.",
                  suggestion, h.leaf_where(b.leaf),
                  {"leaf": b.leaf, "memory": space, "peak_bytes": peak, "capacity_bytes": cap,
                   "share": rounded(share), "threshold": h.th.buffer_peak, "double_buffered": b.double_buffered,
                   "tasks": b.tasks})


def rule_copies(h: HealthContext, clones: Mapping[int, list[int]], round_trips: Mapping[int, list[Any]]) -> None:
    for nid, (count, nbytes) in sorted(clones.items()):
        if nbytes <= h.th.redundant_copy_bytes:
            continue
        n = h.nodes.get(nid)
        src = h.nodes.get(n.inputs[0]) if n is not None and n.inputs else None
        name = f"`{src.name}`" if src is not None and src.name else "its input"
        h.add("tile.redundant-copy", "warning", f"clone copies {count} tile(s), {nbytes:,} bytes, on chip",
              "Tensor values are never modified in place, so a clone's copy (TCOPY on the vector pipe) "
              "buys nothing.",
              f"drop the .clone() and use {name} directly (saves {count} TCOPY and {nbytes:,} bytes of UB)",
              h.node_where(nid), {"tiles": count, "bytes": nbytes, "threshold": h.th.redundant_copy_bytes})
    for nid, (count, nbytes, readers, kinds) in sorted(round_trips.items()):
        if nbytes <= h.th.redundant_copy_bytes:
            continue
        lines = sorted({h.line_of(x) for x in readers})
        local = "local" in kinds
        h.add("tile.redundant-copy", "warning",
              f"{count} tile(s) written to GM here are read back unchanged "
              f"(line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:MAX_LINES]))})",
              "A tile stored to GM and loaded back with the same region costs a store, a load and the GM "
              "latency; the value was already on chip.",
              ("use the value directly where it is read instead of writing it to a local tensor and "
               "reading it back" if local else "read the value you wrote (keep it in a variable) instead of "
               "reading the written tensor back") + f" (saves {nbytes:,} bytes of loads)",
              h.node_where(nid), {"tiles": count, "bytes": nbytes, "read_at": lines[:MAX_LINES],
                                  "threshold": h.th.redundant_copy_bytes})


def rule_duplicates(h: HealthContext, dup: Mapping[int, list[Any]]) -> None:
    buffers = h.p.tiles.buffers if h.p.tiles is not None else ()
    by_line: dict[tuple[str, int], list[Any]] = {}
    for nid, (count, nbytes, bufs, sgs) in sorted(dup.items()):
        w = h.node_where(nid)
        acc = by_line.setdefault((w.file, w.line), [nid, 0, 0, set(), set()])
        acc[1] += count
        acc[2] += nbytes
        acc[3] |= bufs
        acc[4] |= sgs
    for (_file, _line), (nid, count, nbytes, bufs, sgs) in sorted(by_line.items(), key=lambda kv: kv[0][1]):
        if count < h.th.duplicate_loads:
            continue
        named = sorted({buffers[b].name for b in bufs if b < len(buffers) and buffers[b].kind != "workspace"})
        inner = sum(1 for b in bufs if b < len(buffers) and buffers[b].kind == "workspace")
        what = ", ".join(f"`{n}`" for n in named) + (", " if named and inner else "") + \
            (f"{inner} compiler transfer buffer(s)" if inner else "")
        hint = (f"read {what} in fewer ops (combine the expressions that use it), or load it once into a value "
                f"(e.g. `v = {named[0]} + 0`) and use that" if named else
                "a value read by several ops here is re-read from its transfer buffer by each; fewer ops "
                "reading it (or tiles that line up with its producer's) avoid that")
        h.add("tile.duplicate-load", "info",
              f"{count} tile load(s) of {what} repeat a load of the same region in the same task",
              "Every op that reads a GM tensor loads its tiles itself, so a task reading one tile for "
              "two ops loads it twice (L2 serves the second load, MTE2 still moves it).",
              f"{nbytes:,} bytes over {len(sgs)} task(s): {hint}",
              h.node_where(nid), {"extra_loads": count, "bytes": nbytes, "tasks": len(sgs),
                                  "buffers": named + ([f"{inner} transfer"] if inner else []),
                                  "threshold": h.th.duplicate_loads})
