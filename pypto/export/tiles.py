"""The tile-stage program as a graph other tools open: one node per tile op and per GM buffer.

A tile op node carries the tensor node it lowers, its tile coordinates, shape, dtype,
subgraph, leaf, core, task and memory path; edges follow tile-op inputs and GM traffic
(a load reads its buffer, a store or matmul writes one). For a big kernel this is large
(10^5 nodes at 16k tiles): the IDE's own views aggregate per tensor op instead.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from pypto.compiler.manager import Program


def tiles_to_networkx(p: Program) -> nx.MultiDiGraph:
    assert p.tiles is not None, "the program has no tile graph (the compile stopped at the tensor stage)"
    sub_of = {oid: sg for sg in (p.subgraphs or ()) for oid in sg.ops}
    task_of = {t.subgraph: t.id for t in (p.execute.tasks if p.execute is not None else ())}
    memory = dict(zip((o.id for o in p.tiles.ops), p.memory or ()))
    g = nx.MultiDiGraph(name=p.graph.name)
    for b in p.tiles.buffers:
        g.add_node(f"gm{b.id}", kind="buffer", label=f"{b.name} {b.dtype.short}{list(b.shape)}", buffer_kind=b.kind,
                   node=b.node)
    for o in p.tiles.ops:
        sg = sub_of.get(o.id)
        g.add_node(f"t{o.id}", kind="tile_op", op=o.op, label=f"{o.op}{list(o.coord)}", node=o.node,
                   coord=str(list(o.coord)), shape=str(list(o.shape)), dtype=o.dtype.short,
                   subgraph=sg.id if sg else -1, leaf=sg.leaf if sg else -1, core=sg.core if sg else "",
                   task=task_of.get(sg.id, -1) if sg else -1, memory=memory.get(o.id, ""))
        for i in o.inputs:
            g.add_edge(f"t{i}", f"t{o.id}", kind="tile")
        if o.op == "load" and o.region is not None:
            g.add_edge(f"gm{o.region.buffer}", f"t{o.id}", kind="gm")
        if o.op in ("store", "matmul") and o.region is not None:
            g.add_edge(f"t{o.id}", f"gm{o.region.buffer}", kind="gm")
        for r in o.attrs.get("inputs", ()):  # matmul operands
            g.add_edge(f"gm{r.buffer}", f"t{o.id}", kind="gm")
    return g


def write_tile_graphml(p: Program, path: Path | str) -> Path:
    path = Path(path)
    nx.write_graphml(tiles_to_networkx(p), path)
    return path


def write_tile_dot(p: Program, path: Path | str) -> Path:
    path = Path(path)
    nx.nx_pydot.write_dot(tiles_to_networkx(p), path)
    return path


def tasks_per_node(p: Program) -> dict[int, float]:
    """Tensor node id -> how many tasks run some tile of it (a Model Explorer overlay's values)."""
    if p.tiles is None or p.subgraphs is None:
        return {}
    node_of = {o.id: o.node for o in p.tiles.ops}
    counts: dict[int, set[int]] = {}
    for sg in p.subgraphs:
        for oid in sg.ops:
            counts.setdefault(node_of[oid], set()).add(sg.id)
    return {n: float(len(s)) for n, s in counts.items()}
