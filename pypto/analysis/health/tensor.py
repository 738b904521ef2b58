"""The tensor level: the shape of the traced graph (ops, depth, width, fan-in and fan-out) and the
one rule about it, `tensor.high-fan-out` (a GM tensor loaded again by every op that reads it).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from pypto.analysis.health.context import MAX_LINES, HealthContext

_STRUCTURAL = frozenset({"param", "carry", "loop_out", "loop", "assume"})


def tensor_level(h: HealthContext) -> None:
    """The tensor graph's stats (`h.stats["tensor"]`) and its findings."""
    nodes = list(h.graph.walk())
    ops = [n for n in nodes if n.op not in _STRUCTURAL]
    readers: dict[int, set[int]] = defaultdict(set)
    level: dict[int, int] = {}
    width: Counter[int] = Counter()
    for n in nodes:
        lv = 0
        for i in n.inputs:
            if i in level and level[i] + 1 > lv:
                lv = level[i] + 1
        level[n.id] = lv
        if n.op not in _STRUCTURAL:
            width[lv] += 1
            for i in set(n.inputs):
                readers[i].add(n.id)
    fan_out = {nid: len(rs) for nid, rs in readers.items()}
    op_levels = [level[n.id] for n in ops]
    h.stats["tensor"] = {
        "nodes": len(nodes), "ops": len(ops), "tensors": sum(1 for n in nodes if n.type is not None),
        "params": len(h.graph.params()), "loops": sum(1 for n in nodes if n.op == "loop"),
        "op_kinds": dict(Counter(n.op for n in ops).most_common()),
        "max_fan_in": max((len(n.inputs) for n in ops), default=0),
        "max_fan_out": max(fan_out.values(), default=0),
        "depth": (max(op_levels) - min(op_levels) + 1) if op_levels else 0,
        "width": max(width.values(), default=0),
        "tile_configs": len(h.configs),
    }
    for nid, count in sorted(fan_out.items()):
        n = h.nodes.get(nid)
        if n is None or n.type is None or count < h.th.fan_out:
            continue
        name = n.attrs.get("name") if n.op == "param" else n.name
        what = f"`{name}`" if name else f"the {n.op} result"
        lines = sorted({h.line_of(r) for r in readers[nid]})
        h.add("tensor.high-fan-out", "info", f"{what} is read by {count} ops",
              "A tensor in GM (a parameter, or a value stored between tasks) is loaded again, tile by tile, "
              "by every op that reads it.",
              f"compute what those {count} readers share once, so fewer ops read {what} "
              f"(lines {', '.join(map(str, lines[:MAX_LINES]))})",
              h.node_where(nid),
              {"readers": count, "threshold": h.th.fan_out, "lines": lines[:MAX_LINES]})
