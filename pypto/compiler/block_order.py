"""The order of a block's tile ops where program order spills: depth first from the block's outputs.

A subgraph's tile ops come in program order: every tile of one tensor op, then every tile of the next. A block
that loads two [4, 5120] fp32 tiles, multiplies each, casts each and stores each (GLM's MoE fusion) then holds
both products at once, 200 KiB in a 192 KiB UB, and spills; the chip does not, for PyPTO's block scheduler
(its out-of-order scheduling pass, whose default sort is a depth-first walk from the outputs) emits one output's
chain — load, mul, cast, store — before the next's. `dfs_order` makes that order, in our words:

1. **Dependencies.** An op follows its inputs, and an op that touches GM follows each earlier op of the block
   on the same GM buffer when either of the two writes it (a store, a scatter_update, a matmul's result): the
   GM traffic keeps its program order wherever it could conflict.
2. **Outputs first, by family.** The outputs (ops nothing in the block reads or follows) are grouped by the
   source each reaches walking up through its deepest input, families in program order, the longest chain of
   a family first.
3. **Depth first.** From an output, an op whose dependencies are all placed is placed; otherwise its unplaced
   dependencies go to the front of the walk, the one walked first being a compute op before a load (a load as
   late as its first reader allows), then the deeper, then the later in program order. After the first output,
   the next walk starts from the unplaced output with the fewest unplaced ancestors (in a block of many outputs,
   where finding that one would cost more than the block's allocation, from the next output in family order).
4. **Stores early.** The order is then re-sorted topologically, each step taking a ready no-instruction op
   (a bitcast), then a ready GM write, then the rest, each by its place in the walk: a store leaves as soon as its
   value is made, so its tile dies.

A `combine` (the tiles of a reduction across tiles, made one) reads all its parts in one tile op; lowered as it
stands, every part is loaded before the first add. PyPTO's tile graph adds them pairwise and its scheduler walks
each add's load just before it: `streamed_loads` names the parts the block stage loads where its combine takes
them (a load only that combine reads, no write to its GM buffer between the two), one part in the UB at a time.
PyPTO's QAT per-tensor backward combines 2,048 [32, 1] fp32 partial sums in one task: 2 MiB of padded rows.

The block stage (`pypto.compiler.block.build_block`) allocates a block in program order and, only where that
spills, in this order with those loads streamed, keeping the one that spills less: blocks that fit keep their
listings as before.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping, Sequence

from pypto.compiler.tile_ir import TileOp

_GM_WRITES = frozenset({"store", "scatter_update", "matmul"})
_COPY_IN = frozenset({"load", "index_select"})
# outputs² x ops from which the next walk starts from the next output in family order (the fewest-ancestors choice
# costs a walk of every unplaced output's ancestors per walk)
_EXACT_UP_TO = 4_000_000


def _dependencies(order: Sequence[int], ops: Mapping[int, TileOp]) -> list[list[int]]:
    """Per position in `order`, the positions it must follow (inputs, then GM order)."""
    at = {oid: i for i, oid in enumerate(order)}
    deps: list[list[int]] = []
    # per GM buffer: its last write and the reads since (a read follows the write, a write follows both: the rest
    # of the buffer's program order follows by transitivity)
    written: dict[int, int] = {}
    read: dict[int, list[int]] = {}
    for i, oid in enumerate(order):
        o = ops[oid]
        mine = [at[x] for x in o.inputs if x in at]
        gm: list[tuple[int, bool]] = []
        if o.region is not None:
            gm.append((o.region.buffer, o.op in _GM_WRITES))
        if o.op == "matmul":
            gm += [(x.buffer, False) for x in o.attrs.get("inputs", ())]
        for buffer, writes in gm:
            w = written.get(buffer)
            if w is not None and w != i:
                mine.append(w)
            if writes:
                mine += [j for j in read.pop(buffer, ()) if j != i]
                written[buffer] = i
            else:
                read.setdefault(buffer, []).append(i)
        deps.append(sorted(set(mine)))
    return deps


def dfs_order(order: Sequence[int], ops: Mapping[int, TileOp]) -> list[int]:
    """The block's tile ops (`order`: program order, topological) in depth-first order from its outputs."""
    n = len(order)
    if n < 3:
        return list(order)
    deps = _dependencies(order, ops)
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, ds in enumerate(deps):
        for j in ds:
            succ[j].append(i)
    depth = [0] * n  # the longest chain of dependencies ending at each (a source: 1)
    for i in range(n):
        depth[i] = 1 + max((depth[j] for j in deps[i]), default=0)
    outputs = [i for i in range(n) if not succ[i]]
    family: dict[int, int] = {}  # source -> its family's number, in the order met
    of: dict[int, int] = {}
    for out in outputs:
        cur = out
        while deps[cur]:
            cur = max(deps[cur], key=depth.__getitem__)  # (the first of the deepest)
        of[out] = family.setdefault(cur, len(family))
    outputs.sort(key=lambda out: (of[out], -depth[out]))
    rank = [10 if ops[order[i]].op not in _COPY_IN else 2 for i in range(n)]
    placed = [False] * n
    walk: list[int] = []

    def from_output(out: int) -> None:
        front = [out]  # the walk's front is the list's end
        while front:
            cur = front[-1]
            if placed[cur]:
                front.pop()
                continue
            waiting = [j for j in deps[cur] if not placed[j]]
            if not waiting:
                placed[cur] = True
                front.pop()
                walk.append(cur)
                continue
            waiting.sort(key=lambda j: (rank[j], depth[j], j))
            front += waiting  # the last sorted is walked first

    def unplaced_ancestors(out: int) -> int:
        seen = {out}
        todo = [out]
        while todo:
            for j in deps[todo.pop()]:
                if not placed[j] and j not in seen:
                    seen.add(j)
                    todo.append(j)
        return len(seen) - 1

    exact = len(outputs) ** 2 * n <= _EXACT_UP_TO
    from_output(outputs[0])
    for out in outputs[1:]:
        while not placed[out]:
            nxt = min((o for o in outputs if not placed[o]), key=unplaced_ancestors) if exact else out
            from_output(nxt)
    # stores early: a topological re-sort, a ready bitcast first, then a ready GM write, then by place in the walk
    place = {i: k for k, i in enumerate(walk)}
    kind = [1 if ops[order[i]].op == "bitcast" else 2 if ops[order[i]].op in ("store", "scatter_update") else 3
            for i in range(n)]
    missing = [len(deps[i]) for i in range(n)]
    ready = [(kind[i], place[i], i) for i in range(n) if not missing[i]]
    heapq.heapify(ready)
    out_order: list[int] = []
    while ready:
        _, _, i = heapq.heappop(ready)
        out_order.append(i)
        for s in succ[i]:
            missing[s] -= 1
            if not missing[s]:
                heapq.heappush(ready, (kind[s], place[s], s))
    assert len(out_order) == n, "a block's dependencies form a cycle"
    return [order[i] for i in out_order]


def streamed_loads(order: Sequence[int], ops: Mapping[int, TileOp]) -> frozenset[int]:
    """The loads of a block (`order`) to make where the combine that reads them takes them: read by that combine
    alone, and no op between the two in `order` writes the load's GM buffer."""
    at = {oid: k for k, oid in enumerate(order)}
    readers: dict[int, int] = {}
    writes: dict[int, list[int]] = {}  # GM buffer -> the positions that write it, ascending
    for k, oid in enumerate(order):
        o = ops[oid]
        for i in o.inputs:
            readers[i] = readers.get(i, 0) + 1
        if o.region is not None and o.op in _GM_WRITES:
            writes.setdefault(o.region.buffer, []).append(k)
    out: set[int] = set()
    for k, oid in enumerate(order):
        o = ops[oid]
        if o.op != "combine":
            continue
        for i in o.inputs:
            part = ops[i]
            if part.op != "load" or readers.get(i) != 1 or i not in at or part.region is None:
                continue
            w = writes.get(part.region.buffer, [])
            if bisect.bisect_left(w, at[i]) == bisect.bisect_left(w, k):  # no write between the load and here
                out.add(i)
    return frozenset(out)
