"""Graph partition and leaf functions: tile ops grouped into tasks, tasks into leaf functions.

Partition walks the tile ops in program order and grows vector subgraphs greedily: an op
joins the subgraph of its producers when they all live in one (same root instance) and
the subgraph's on-chip footprint stays within UB; otherwise it starts a new subgraph. The
footprint model keeps every tile that still has a consumer, frees a tile at its last use,
and lets an op overwrite a dying input of its size (in place). Elementwise chains and row
reductions fuse this way; a subgraph over capacity is split, and a single op whose tiles
cannot fit even alone is a user error naming the numbers. Cube ops (matmul tiles) are
subgraphs of their own on AIC. Edges that cross subgraphs go through GM: a store in the
producer's subgraph, a load in the consumer's (copy insertion). Dependencies through GM count
too (a load of a matmul's result, a store over a tensor another subgraph read): an op never
joins a subgraph that something it depends on already depends on, so the task graph has no
cycle. Isomorphic subgraphs —
the same ops, shapes, dtypes and attributes, whatever their tile coordinates — are one
leaf function.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Set
from typing import Any, Final

from pypto.compiler.gm_index import Accesses, Owner, accesses, flatten, reshaped_buffers
from pypto.compiler.tile_ir import (
    Buffer,
    CopyFacts,
    Leaf,
    Region,
    Subgraph,
    TileGraph,
    TileOp,
    note_copy_facts,
    ops_by_id,
)
from pypto.ir.errors import PyptoError
from pypto.ir.graph import Node
from pypto.ir.source import Loc

_NO_DEPS: frozenset[int] = frozenset()
_SHARED_UNION = 16  # a frozenset from this size on is worth a union cache keyed by its identity (`gm_deps`)
# tile ops from which partition lets go of its state itself (see the end of `partition`): glm's fused attention
# (2.1 M) held ~0.8 GB of it through its job's open, the peak 5.66 -> 4.83 GB; gated delta rule's (196 k) ~100 MB,
# and freeing it cost its tile edit's job ~0.1 s of 2.2 (job_bench: the deallocation, and the execute graph's
# build then writing to the freed pages its forked child shares)
RELEASE_FROM = 500_000
# where a tile sits, not what it computes
_POSITION_ATTRS: Final = frozenset({"partial", "base", "first", "inputs", "at"})


def nbytes(op: TileOp) -> int:
    """The UB bytes an op's result holds: none for a write to GM (a store, a scatter_update)."""
    return 0 if op.op == "store" or op.op == "scatter_update" else math.prod(op.shape) * op.dtype.nbytes


class _Group:
    __slots__ = ("id", "key", "core", "instance", "ops", "open_bytes", "peak", "successor")

    def __init__(self, gid: int, core: str, instance: int) -> None:
        self.id = gid
        # its id as the one object the GM index, the dependencies and `exported` hold (`gm_index.Owner`: the native
        # build would make an int object per entry of an id of type int)
        self.key: Owner = gid
        self.core = core
        self.instance = instance
        self.ops: list[TileOp] = []  # its tile ops as they joined (objects: a list of ids would box each id anew)
        self.open_bytes = 0  # the bytes of its live tiles (`partition`'s `live`: still to be read)
        self.peak = 0
        self.successor: _Group | None = None  # where ops that overflow this group go


def partition(tiles: TileGraph, nodes: Mapping[int, Node], ub_bytes: int, notes: list[tuple[str, Loc]] | None = None,
              strict: Callable[[Loc], bool] | None = None) -> tuple[TileGraph, tuple[Subgraph, ...]]:
    """Tile ops into subgraphs (see the module doc). An op whose tiles alone overflow the UB is a
    board limit, not an error (PyPTO compiles it): it gets a subgraph of its own and a note in
    `notes`; it raises without `notes`, or where `strict` says so of the op's line (the tuning advisor's strict
    mode, `pypto.tracing.tiling.strict_at`)."""
    noted: set[int] = set()
    # per tile op, by id (ids are 0..n-1 in some order; lists, which the native build indexes directly)
    n_ids = max((o.id for o in tiles.ops), default=-1) + 1
    ops: list[TileOp] = [tiles.ops[0]] * n_ids if n_ids else []  # each op (the first fills the place of an unused id)
    size: list[int] = [0] * n_ids
    uses: list[int] = [0] * n_ids
    load_of: list[TileOp | None] = [None] * n_ids  # the loads
    nbytes_of: dict[tuple[bool, tuple[int, ...], int], int] = {}  # (store, shape, dtype) -> nbytes(op)
    for o in tiles.ops:
        oid = o.id
        ops[oid] = o
        if o.op == "load":
            load_of[oid] = o
        k = (o.op == "store" or o.op == "scatter_update", o.shape, id(o.dtype))
        b = nbytes_of.get(k)
        if b is None:
            b = nbytes_of[k] = nbytes(o)
        size[oid] = b
        for i in o.inputs:
            uses[i] += 1
    # each tile op's group, None while it has none (the group, not its id: in the native build a list of ints holds a
    # new int object per entry, 32 bytes each, whose holes outlive partition: glm's fused attention, 2.2 M tile ops)
    group_of: list[_Group | None] = [None] * n_ids
    # whether the op's tile is open in its group: made there (or loaded) and still to be read (a flag per op, not a
    # dict per group: glm's fused attention has 1.05 M groups)
    live: list[bool] = [False] * n_ids
    groups: list[_Group] = []
    # the groups another group reads a tile of, or depends on through GM (they may not take new inputs): a set,
    # grown by C-level unions (Kimi's block attention: 82 k accesses meeting ~100 groups each)
    exported: set[Owner] = set()
    last_partial: dict[tuple[int, tuple[int, ...]], _Group] = {}
    crossing: list[TileOp] = []  # the ops with inputs from other subgraphs (copied), in program order

    def new_group(core: str, instance: int) -> _Group:
        g = _Group(len(groups), core, instance)
        groups.append(g)
        return g

    def cost(g: _Group, o: TileOp, loads: list[TileOp]) -> int:
        """The group's footprint while `o` runs, if it joined."""
        out = size[o.id]
        if not loads:
            for i in o.inputs:  # written in place over an input of its size that dies here
                if uses[i] == 1 and live[i] and group_of[i] is g and size[i] >= out:
                    out = 0
                    break
            return g.open_bytes + out
        if len(loads) == 1:  # the common case of the one below, without building a set
            lid = loads[0].id
            for i in o.inputs:
                if uses[i] == 1 and (i == lid or live[i] and group_of[i] is g) and size[i] >= out:
                    out = 0
                    break
            return g.open_bytes + size[lid] + out
        extra = {ld.id for ld in loads}
        for i in o.inputs:
            if uses[i] == 1 and (i in extra or live[i] and group_of[i] is g) and size[i] >= out:
                out = 0
                break
        return g.open_bytes + sum([size[i] for i in extra]) + out

    def add(g: _Group, o: TileOp, loads: list[TileOp], copied: list[TileOp], c: int = -1) -> None:
        """`o` joins `g` with its fresh loads; `copied` inputs arrive from other groups via GM.
        `c`: `cost(g, o, loads + copied)` before the loads joined, when the caller has it and the
        loads are distinct (then it is the cost after they joined, which is not computed again)."""
        members = g.ops
        for ld in loads:  # (a load an op reads twice comes twice, and counts twice while it lives)
            lid = ld.id
            group_of[lid] = g
            members.append(ld)
            live[lid] = True
            g.open_bytes += size[lid]
        if c < 0:
            c = cost(g, o, copied)
        if c > g.peak:
            g.peak = c
        oid = o.id
        group_of[oid] = g
        members.append(o)
        for i in o.inputs:
            left = uses[i] = uses[i] - 1
            if left == 0 and live[i]:  # (an op is live only in its own group)
                live[i] = False
                _group(group_of, i).open_bytes -= size[i]
        if uses[oid] > 0:
            live[oid] = True
            g.open_bytes += size[oid]

    # the GM accesses of the subgraphs so far: an op that loads what another subgraph wrote (a
    # matmul's result, a tensor stored by an earlier subgraph) or stores over what another read or
    # wrote depends on that subgraph through GM, as the execute graph will see it (same index)
    # (a buffer nothing writes — a read-only parameter — has no conflicts: its accesses are not filed)
    seen: dict[int, Accesses] = defaultdict(Accesses)
    reshaped, written = reshaped_buffers(tiles.ops, written=True)

    def gm_accesses(o: TileOp, loads: list[TileOp]) -> list[tuple[Region, bool]]:
        r = o.region
        if not loads and r is not None and o.op == "store":  # the common case of the below: one write
            b = r.buffer
            return [(flatten(r) if b in reshaped else r, True)] if b in written else []
        out = [a for ld in loads for a in accesses(ld)] if loads else []
        if o.region is not None:
            out += accesses(o)
        return [(flatten(r) if r.buffer in reshaped else r, w) for r, w in out if r.buffer in written]

    # the union of a shared set and others, by the shared set's identity and the others' contents: the one frozenset
    # every group with those accesses gets (Kimi's block attention, edited: 16 k matmuls each meet a shared set of 256
    # groups and one group of their own: 128 unions, 64 distinct contents; made anew, each a 257-entry set of its own)
    unions: dict[tuple[object, ...], tuple[frozenset[int], list[Set[int]]]] = {}

    def gm_deps(gm: list[tuple[Region, bool]]) -> Set[int]:
        """The groups these accesses conflict with; read-only: one access's set as `conflicts` gave it (a frozenset
        many groups share, or a new set), `record_gm` keeps it as it is."""
        if len(gm) == 1:
            r, w = gm[0]
            return seen[r.buffer].conflicts(r, w)
        met: list[Set[int]] = []  # each access's set, when it meets something
        for r, w in gm:
            found = seen[r.buffer].conflicts(r, w)
            if found:
                met.append(found)
        if len(met) < 2:
            return met[0] if met else _NO_DEPS  # (not copied)
        if not any(type(f) is frozenset and len(f) >= _SHARED_UNION for f in met):
            joined = set(met[0])
            for f in met[1:]:
                joined |= f
            return joined
        key = tuple([id(f) if type(f) is frozenset else frozenset(f) for f in met])
        known = unions.get(key)
        if known is None:  # (the sets named by identity are kept with it: no identity is reused meanwhile)
            known = unions[key] = (frozenset(met[0]).union(*met[1:]), met)
        return known[0]

    # What the execute stage would find again: each subgraph's GM dependencies (`depends`), valid when every
    # access was filed in program order as it files them (`in_order`). Only a load is filed later, with its
    # first consumer; that is the same order unless its buffer was written in between (`writes_to` at the
    # load, `written_at`), or its tile is read by another subgraph too (loaded again there), or nothing reads it.
    depends: dict[Owner, Set[Owner]] = {}
    writes_to: dict[int, int] = {}  # buffer -> write accesses filed so far
    written_at: dict[int, int] = {}  # a load of a written buffer -> writes_to of its buffer at its place
    in_order = True

    def record_gm(g: _Group, gm: list[tuple[Region, bool]], deps: Set[int]) -> None:
        gid = g.key
        if deps:
            had = gid in exported
            exported.update(deps)
            if not had:  # its own access does not export it
                exported.discard(gid)
            mine = depends.get(gid)
            if mine is None:  # kept as gm_deps gave it (a set shared by many groups stays one object)
                depends[gid] = deps if gid not in deps else deps - {gid}
            else:
                if type(mine) is not set:  # a shared set, or one gm_deps made: copied before it changes
                    mine = depends[gid] = set(mine)
                mine |= deps
                mine.discard(gid)
        for r, w in gm:
            b = r.buffer
            seen[b].add(r, gid, w)
            if w:
                writes_to[b] = writes_to.get(b, 0) + 1

    def filed_late(loads: list[TileOp]) -> bool:
        """Whether a write to one of these loads' buffers was filed since the load's place."""
        for ld in loads:
            mark = written_at.get(ld.id)
            if mark is not None and mark != writes_to.get(ld.region.buffer, 0):  # type: ignore[union-attr]
                return True
        return False

    # PyPTO 3's `pl.at` scopes (nodes with a `scope`; none in a CANN kernel): all tile ops of one scope
    # instance (scope, root instance) are one subgraph, its core type settled at the end by what it holds
    scoped = {nid: n.scope for nid, n in nodes.items() if n.scope is not None}
    scope_groups: dict[tuple[int, int], _Group] = {}
    scope_instance = _scope_instances(tiles, scoped) if scoped else {}
    has_cube: set[int] = set()
    has_vector: set[int] = set()

    def place_in_scope(o: TileOp, key: tuple[int, int]) -> None:
        nonlocal in_order
        g = scope_groups.get(key)
        if g is None:
            g = scope_groups[key] = new_group("", key[1])  # no core yet: no other op joins it
        loads = [ld for i in o.inputs if group_of[i] is None and (ld := load_of[i]) is not None]
        copied = [ops[i] for i in o.inputs if group_of[i] is not None and group_of[i] is not g]
        gm = gm_accesses(o, loads)
        deps = gm_deps(gm) if gm else _NO_DEPS
        if loads and written_at and filed_late(loads) or copied and _reads_written(copied, written):
            in_order = False
        if copied:
            crossing.append(o)
            for cp in copied:
                exported.add(_group(group_of, cp.id).key)
        add(g, o, loads, copied)
        if gm:
            record_gm(g, gm, deps)
        (has_cube if o.op == "matmul" else has_vector).add(g.id)

    failed: PyptoError | None = None  # the advisor's strict mode: an op whose tiles alone overflow the UB
    for o in tiles.ops:
        kind = o.op
        if kind == "load":
            r = o.region
            if r is not None and r.buffer in written:
                written_at[o.id] = writes_to.get(r.buffer, 0)
            continue  # placed with its first consumer
        if scoped:
            sc = scoped.get(o.node)
            if sc is not None:
                place_in_scope(o, (sc, scope_instance[(sc, o.instance)]))
                continue
        if kind == "matmul":
            cube = new_group("AIC", o.instance)
            written_gm = gm_accesses(o, [])
            deps = gm_deps(written_gm)
            add(cube, o, [], [])
            record_gm(cube, written_gm, deps)
            continue
        loads: list[TileOp] = []  # inputs loaded from GM and not yet placed
        producers: list[_Group] = []  # the groups of the other inputs, each once (an op's few: a list, not a set)
        latest: _Group | None = None  # the one made last
        for i in o.inputs:
            made_in = group_of[i]
            if made_in is not None:
                if made_in not in producers:
                    producers.append(made_in)
                    if latest is None or made_in.id > latest.id:
                        latest = made_in
            else:
                ld = load_of[i]
                if ld is not None:
                    loads.append(ld)
        partial = "partial" in o.attrs
        if not producers and partial and (o.node, o.coord) in last_partial:
            latest = last_partial[(o.node, o.coord)]  # the partials of one reduction fuse
            producers = [latest]
        g: _Group | None = None
        copied: list[TileOp] = []
        gm: list[tuple[Region, bool]] = []
        if o.region is not None:
            gm = gm_accesses(o, loads)
        else:
            for ld in loads:  # loads of read-only buffers (the common case) have no GM conflicts
                r = ld.region
                if r is not None and r.buffer in written:
                    gm = gm_accesses(o, loads)
                    break
        deps = gm_deps(gm) if gm else _NO_DEPS
        if loads and written_at and in_order and filed_late(loads):
            in_order = False
        cand = latest
        c = -1  # the cost of `o` in `g` with its loads and copied inputs, when they are distinct
        while cand is not None and g is None:
            cid = cand.id
            if len(producers) == 1 and cand is latest:
                copied = []  # every input made in a subgraph is made in this one
            else:
                copied = []  # (a loop: cheaper than a comprehension for an op's few inputs)
                for i in o.inputs:
                    gi = group_of[i]
                    if gi is not None and gi is not cand:
                        copied.append(ops[i])
            # joining with inputs from elsewhere is safe only into a subgraph nothing depends on yet
            foreign = cand.key in exported and (copied or any(d != cid for d in deps))
            if cand.core == "AIV" and cand.instance == o.instance and not foreign \
                    and (c := cost(cand, o, loads + copied if copied else loads)) <= ub_bytes:
                g = cand
            else:
                cand = cand.successor  # the subgraph this one overflowed into
        if g is None:
            g = new_group("AIV", o.instance)
            copied = [ops[i] for i in o.inputs if group_of[i] is not None]
            for f in producers:  # later overflow from the same producer lands here, not in yet another group
                while f.successor is not None:
                    f = f.successor
                if f is not g and f.core == "AIV" and f.instance == o.instance:
                    f.successor = g
            need = c = cost(g, o, loads + copied)
            if need > ub_bytes and o.node not in noted:
                # PyPTO compiles it: a board limit, said at the op's line; the subgraph holds it alone
                node = nodes[o.node]
                message = (f"{node.op}: its tiles need {need:,} bytes of UB at once (tile {list(o.shape)} of "
                           f"{o.dtype.short} and its inputs), more than the {ub_bytes:,}-byte UB; halve the "
                           f"vector tile shape")
                if notes is None or strict is not None and strict(node.loc):
                    failed = PyptoError(message, node.loc)
                    break
                noted.add(o.node)
                notes.append((message, node.loc))
        if copied:
            crossing.append(o)
            for cp in copied:
                exported.add(_group(group_of, cp.id).key)
            if in_order and _reads_written(copied, written):
                in_order = False
        add(g, o, loads, copied, c if len(loads) < 2 or len({ld.id for ld in loads}) == len(loads) else -1)
        if gm:
            record_gm(g, gm, deps)
        if partial:
            last_partial[(o.node, o.coord)] = g
    out: TileGraph | None = None
    subgraphs: tuple[Subgraph, ...] = ()
    if failed is None:
        for o in tiles.ops:  # a load nothing consumed runs alone
            if o.op == "load" and group_of[o.id] is None:
                g = new_group("AIV", o.instance)
                add(g, o, [], [])
                if o.id in written_at:
                    in_order = False
        for g in scope_groups.values():  # cube and vector work: one MIX task on a cluster's AIC and two AIVs
            g.core = ("MIX" if g.id in has_vector else "AIC") if g.id in has_cube else "AIV"
        out, subgraphs = _insert_copies(tiles, ops, group_of, groups, crossing)
        # the copies' buffers are the ones added (each a tile written once, then read): the execute stage
        # needs no GM index for them, and no scan for what is reshaped or written
        note_copy_facts(out, CopyFacts(frozenset(reshaped), frozenset(written), len(tiles.buffers),
                                       depends if in_order else None))
    # The nested functions above and the state they share make a reference cycle (mypyc keeps both in one
    # environment object), which only the cyclic collector frees; a compile pauses it, and a job's pipeline then
    # freezes what is left (`pipeline.gc_paused`): the state stays for the job's life. Let go of it here when it is
    # big (`RELEASE_FROM`) and for the advisor's candidates (strict: a job checks several).
    if notes is None or strict is not None or n_ids >= RELEASE_FROM:
        groups, group_of, live, size, uses, ops, load_of = [], [], [], [], [], [], []
        seen, depends, unions, exported, crossing = defaultdict(Accesses), {}, {}, set(), []
        writes_to, written_at, scope_groups = {}, {}, {}
    if failed is not None:
        try:
            raise failed
        finally:
            failed = None  # (the frame the traceback holds would hold the exception: another cycle)
    assert out is not None
    return out, subgraphs


def _reads_written(copied: list[TileOp], written: Set[int]) -> bool:
    """Whether one of these inputs from other subgraphs is a load of a written buffer (copy insertion loads it
    again in the consumer's subgraph: an access partition did not file)."""
    return any(cp.op == "load" and cp.region is not None and cp.region.buffer in written for cp in copied)


def _scope_instances(tiles: TileGraph, scoped: Mapping[int, int]) -> dict[tuple[int, int], int]:
    """(scope, root instance of a tile op) -> the instance the scope runs in: the ancestor of the op's
    instance at the depth of the scope's shallowest ops. A scope holding a loop traced as a root
    function (a run-time-bounded `pl.range`, a run-time `if`) has ops in that loop's iterations, which
    are instances of their own: they are still the scope instance's task (else the task before the
    loop and the one after it would each wait on the other)."""
    instances = tiles.instances
    parent: list[int] = []
    latest: dict[tuple[tuple[str, int], ...], int] = {}  # loop indices -> the latest instance with them
    for inst in instances:  # made parent first, then its loops' iterations, in order
        parent.append(latest.get(inst.index[:-1], 0) if inst.index else -1)
        latest[inst.index] = inst.id
    depth: dict[int, int] = {}
    seen: set[tuple[int, int]] = set()
    for o in tiles.ops:
        sc = scoped.get(o.node)
        if sc is not None and (sc, o.instance) not in seen:
            seen.add((sc, o.instance))
            d = len(instances[o.instance].index)
            if d < depth.get(sc, d + 1):
                depth[sc] = d
    out: dict[tuple[int, int], int] = {}
    for sc, i in seen:
        a = i
        while len(instances[a].index) > depth[sc]:
            a = parent[a]
        out[(sc, i)] = a
    return out


def _group(group_of: list[_Group | None], oid: int) -> _Group:
    """The group of a tile op that has one."""
    g = group_of[oid]
    assert g is not None
    return g


def _insert_copies(tiles: TileGraph, ops: list[TileOp], group_of: list[_Group | None],
                   groups: list[_Group], crossing: list[TileOp]) -> tuple[TileGraph, tuple[Subgraph, ...]]:
    """Every input that comes from another subgraph is read back from GM. `crossing`: the ops with such
    inputs (those that joined a subgraph with copied inputs), in program order; no other op has any; every op has
    its group."""
    next_id = len(group_of)  # the first id after every tile op's (`group_of` is indexed by id)
    buffers = list(tiles.buffers)
    stored: dict[int, Region] = {}  # producer id -> workspace region holding its tile
    before: dict[int, list[TileOp]] = {}  # consumer id -> loads to run just before it
    after: dict[int, list[TileOp]] = {}  # producer id -> stores to run just after it
    replaced: dict[int, TileOp] = {}
    # per tile op by id: 1 when it is replaced (has loads before it), 2 when it has stores after it (a flag to read for
    # every op, not two dict lookups of a boxed id)
    extra: list[int] = [0] * next_id
    for o in crossing:
        inputs = o.inputs
        if not inputs:
            continue
        group = group_of[o.id]
        for i in inputs:
            if group_of[i] is not group:
                break
        else:
            continue  # every input is made in its own subgraph (the common case)
        new_inputs = list(inputs)
        lds: list[TileOp] = []
        oid, node, instance = o.id, o.node, o.instance
        joined = _group(group_of, oid).ops
        for k, i in enumerate(inputs):
            if group_of[i] is group:
                continue
            p = ops[i]
            if p.op == "load":  # a shared load: each subgraph loads for itself
                region = p.region
            else:
                region = stored.get(i)
                if region is None:
                    b = Buffer(len(buffers), p.shape, p.dtype, "workspace", f"xfer{i}", p.node)
                    buffers.append(b)
                    region = stored[i] = Region(b.id, p.shape, (0,) * len(p.shape), p.shape)
                    st = TileOp(next_id, "store", p.node, p.instance, p.coord, p.shape, p.dtype, (i,), region)
                    next_id += 1
                    after.setdefault(i, []).append(st)
                    extra[i] |= 2
                    made_in = _group(group_of, i)
                    group_of.append(made_in)  # (the ids made here follow the last one: the list's next index)
                    made_in.ops.append(st)
            ld = TileOp(next_id, "load", node, instance, p.coord, p.shape, p.dtype, (), region)
            group_of.append(group)
            joined.append(ld)  # ordered by program position below
            lds.append(ld)
            new_inputs[k] = next_id
            next_id += 1
        before[oid] = lds
        extra[oid] |= 1
        # dataclasses.replace, spelled out (it is slow)
        replaced[oid] = TileOp(oid, o.op, node, instance, o.coord, o.shape, o.dtype, tuple(new_inputs), o.region,
                                o.attrs)
    # each subgraph's ops in program order: its members as they come in `order`, when each op was
    # added to its subgraph once (else sorted by position: an op added twice stays twice)
    order: list[TileOp] = []
    members: list[list[int]] = [[] for _ in groups]
    for o in tiles.ops:
        oid = o.id
        m = members[_group(group_of, oid).id]  # also the group of its loads before and its stores after
        more = extra[oid]
        if more & 1:  # the op has loads to run just before it
            for ld in before[oid]:
                order.append(ld)
                m.append(ld.id)
            o = replaced[oid]
        order.append(o)
        m.append(oid)
        if more & 2:
            for st in after[oid]:
                order.append(st)
                m.append(st.id)
    for gi, grp in enumerate(groups):
        if len(members[gi]) != len(grp.ops):
            position = {op.id: at for at, op in enumerate(order)}
            members = [sorted([op.id for op in x.ops], key=position.__getitem__) for x in groups]
            break
    subgraphs = tuple([Subgraph(g.id, g.core, g.instance, tuple(m), g.peak) for g, m in zip(groups, members)])
    if not before and not after:  # no copy: the very tile graph, which a record's snapshot of tile expansion then
        return tiles, subgraphs   # shares instead of writing its columns again (`serialize.program_document`)
    return dataclasses.replace(tiles, buffers=tuple(buffers), ops=tuple(order)), subgraphs


class Kinds:
    """The op kinds seen so far (`signature` interns them): `keys` maps both an op's quick key (its
    attribute dict by identity) and its full key (attributes by value) to the kind's number;
    `names` holds each new kind's repr; `count()` is how many keys there are, as the number of the
    next new kind. An op with no attributes has its own empty dict, so its quick key is new each
    time: it is looked up by structure in `empty`, which keeps the dicts seen, and only counted (the
    numbers, and so the leaf hashes, are what they were when every quick key was stored). The dicts
    are kept in a list and their identities counted only when a new kind is numbered (`count`), which
    comes rarely and mostly early: a set of every one's id cost a new int and a set entry per op (Kimi's
    block attention after its tile edit: 148 k of its 246 k tile ops)."""

    __slots__ = ("keys", "names", "empty", "by_value")

    def __init__(self) -> None:
        self.keys: dict[tuple[object, ...], int] = {}
        self.names: list[str] = []
        self.empty: dict[tuple[object, ...], _Empties] = {}  # structure -> its kind and the dicts seen
        self.by_value: dict[tuple[object, ...], int] = {}  # structure, attribute values by identity -> kind

    def full(self, o: TileOp, attrs: dict[str, Any], rshape: tuple[int, ...] | None) -> int:
        """The kind of `o` by value (numbered as new if unseen)."""
        if attrs:
            named = tuple(sorted((k, repr(v)) for k, v in attrs.items() if k not in _POSITION_ATTRS))
            regions = tuple(r.shape for r in attrs.get("inputs", ()))
        else:
            named = regions = ()
        full = (o.op, o.shape, o.dtype, named, regions, rshape)
        kind = self.keys.get(full)
        if kind is None:
            kind = self.keys[full] = self.count()
            self.names.append(repr(full))
        return kind

    def count(self) -> int:
        """The keys so far: stored (quick and full) and the empty dicts' quick keys (counted when a
        new kind is numbered, rarely, not per op)."""
        return len(self.keys) + sum(e.distinct() for e in self.empty.values())


class _Empties:
    """The empty attribute dicts seen for one structure (`Kinds.empty`): its kind, the dicts in the order seen, and
    how many distinct ones (by identity) among the first `counted` of them. The dicts are the ops' own, alive while
    the kinds are used, so no identity is reused meanwhile."""

    __slots__ = ("kind", "dicts", "ids", "counted")

    def __init__(self, kind: int, first: dict[str, Any]) -> None:
        self.kind: Any = kind  # (the object, not a new int per read)
        self.dicts: list[dict[str, Any]] = [first]
        self.ids: set[int] = set()
        self.counted = 0

    def distinct(self) -> int:
        dicts, ids = self.dicts, self.ids
        for k in range(self.counted, len(dicts)):
            ids.add(id(dicts[k]))
        self.counted = len(dicts)
        return len(ids)


def signature(sg: Subgraph, ops: Mapping[Any, TileOp], kinds: Kinds, nodes: list[int] | None = None) -> tuple[int, ...]:
    """The structure of a subgraph as ints: each op's kind (op, shape, dtype, attributes but
    not coordinates — interned in `kinds`) followed by where its inputs come from. The tensor
    node of each op is appended to `nodes`. (Written for mypyc, which compiles this module: direct
    method calls and plain loops, no bound methods or `map`, which it calls generically; the ids and
    kinds typed `Any`, so that each is the object its tuple or dict holds: typed `int`, every use of
    one above 256 made a new int object — `gm_index.Owner`'s reason.)"""
    members: Any = sg.ops
    local: dict[Any, int] = {}
    at = 0  # each member's position (not `k`: the attribute names below)
    for m in members:
        local[m] = at
        at += 1
    out: list[Any] = [0 if sg.core == "AIV" else 1 if sg.core == "AIC" else 2]
    keys, empty, by_value = kinds.keys, kinds.empty, kinds.by_value
    kind: Any
    for m in members:
        o = ops[m]
        if nodes is not None:
            nodes.append(o.node)
        attrs, region = o.attrs, o.region
        rshape = None if region is None else region.shape
        if attrs:
            # the dtype enum member by identity (cheaper than hashing it); attribute dicts are
            # shared by the tiles of one tensor op, so their identity stands for their contents
            key = (o.op, o.shape, id(o.dtype), id(attrs), rshape)
            kind = keys.get(key)
            if kind is None:
                # a new dict (a partial's, a matmul's: its position differs per tile): its kind by the
                # identity of its values, which stand for their reprs while the ops live (no repr, no
                # sort), and by its input regions' shapes, which are what `full` reads of them (their
                # identity differed per tile: Kimi's block attention's 32 k matmuls each made a repr)
                in_shapes: list[tuple[int, ...]] = []
                ins = attrs.get("inputs")
                if ins is not None:
                    for r in ins:
                        in_shapes.append(r.shape)
                vkey = (key[0], key[1], key[2], rshape,
                        tuple([(k, id(v)) for k, v in attrs.items() if k not in _POSITION_ATTRS]), tuple(in_shapes))
                kind = by_value.get(vkey)
                if kind is None:
                    kind = by_value[vkey] = kinds.full(o, attrs, rshape)
                keys[key] = kind
        else:
            skey = (o.op, o.shape, id(o.dtype), rshape)
            seen = empty.get(skey)
            if seen is None:
                kind = kinds.full(o, attrs, rshape)
                empty[skey] = _Empties(kind, attrs)  # its quick key
            else:
                kind = seen.kind
                seen.dicts.append(attrs)
        inputs: Any = o.inputs
        out.append(kind)
        out.append(len(inputs))
        for i in inputs:
            out.append(local.get(i, -1))
    return tuple(out)


def merge_leaves(tiles: TileGraph, subgraphs: tuple[Subgraph, ...]) -> tuple[tuple[Subgraph, ...], tuple[Leaf, ...]]:
    ops = ops_by_id(tiles)
    leaves: list[dict[str, object]] = []
    out = []
    kinds = Kinds()
    by_sig: dict[tuple[int, ...], int] = {}
    for sg in subgraphs:
        made_from: list[int] = []
        sig = signature(sg, ops, kinds, made_from)
        lid = by_sig.get(sig)
        if lid is None:
            lid = by_sig[sig] = len(leaves)
            text = "\n".join(kinds.names)  # stable across runs
            h = hashlib.sha1((text + repr(sig)).encode()).hexdigest()[:16]
            leaves.append({"hash": h, "core": sg.core, "template": sg.id, "count": 0, "nodes": set()})
        leaf = leaves[lid]
        leaf["count"] = int(leaf["count"]) + 1  # type: ignore[call-overload]
        leaf["nodes"].update(made_from)  # type: ignore[attr-defined]
        out.append(Subgraph(sg.id, sg.core, sg.instance, sg.ops, sg.peak_bytes, lid))
    return tuple(out), tuple(Leaf(i, str(d["hash"]), str(d["core"]), int(d["template"]),  # type: ignore[call-overload]
                                  int(d["count"]), tuple(sorted(d["nodes"])))  # type: ignore[call-overload]
                             for i, d in enumerate(leaves))
