"""The compiler's fast paths (issue 19 item 2) build and check exactly what the plain code did."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from support import example_records, execute_both_ways

from pypto.compiler.execute_ir import Task
from pypto.compiler.tile_ir import Buffer, Region, Subgraph, TileOp
from pypto.ir.dtypes import DataType


def test_the_tile_ir_values_are_values_in_either_build():
    """Native classes when the compiler is built (pypto.native), plain classes with slots otherwise: equal by their
    fields, hashed as the frozen dataclasses they were (a set of regions iterates as before), no attribute beyond
    them, pickled, copied and shown field by field."""
    r = Region(3, (64, 64), (0, 32), (32, 32))
    plain = Region(3, (64, 64), (0, 32), (32, 32))  # another object, equal
    assert type(r) is Region and r == plain and hash(r) == hash(plain) == hash((3, (64, 64), (0, 32), (32, 32)))
    assert r != Region(3, (64, 64), (0, 0), (32, 32)) and r != (3, (64, 64), (0, 32), (32, 32))
    assert r.sub((0, 8), (32, 8)) == Region(3, (64, 64), (0, 40), (32, 8)) and not r.whole
    cube = Region(1, (4, 4, 4), (1, 0, 2), (2, 2, 2))
    assert cube.sub((1, 1, 1), (1, 1, 1)) == Region(1, (4, 4, 4), (2, 1, 3), (1, 1, 1))  # another rank
    o = TileOp(7, "load", 2, 0, (0, 1), (32, 32), DataType.DT_FP32, (), r)
    assert type(o) is TileOp and o == TileOp(7, "load", 2, 0, (0, 1), (32, 32), DataType.DT_FP32, (), r, {})
    assert o != TileOp(7, "load", 2, 0, (0, 1), (32, 32), DataType.DT_FP32, (), r, {"x": 1})
    assert o.attrs == {} and o.attrs is not TileOp(8, "exp", 2, 0, (0, 1), (32, 32), DataType.DT_FP32).attrs
    with pytest.raises(TypeError):
        hash(o)  # its attributes are a dict
    b = Buffer(4, (32, 32), DataType.DT_FP16, "workspace", "xfer7", 2)
    assert type(b) is Buffer and b == Buffer(4, (32, 32), DataType.DT_FP16, "workspace", "xfer7", 2)
    assert repr(r) == "Region(buffer=3, layout=(64, 64), offset=(0, 32), shape=(32, 32))"
    fp16 = DataType.DT_FP16
    assert repr(b) == f"Buffer(id=4, shape=(32, 32), dtype={fp16!r}, kind='workspace', name='xfer7', node=2)"
    assert repr(o).startswith("TileOp(id=7, op='load', node=2, instance=0, coord=(0, 1), shape=(32, 32), dtype=")
    assert repr(o).endswith(f"inputs=(), region={r!r}, attrs={{}})")
    t = Task(5, 9, 1, "AIV", 0, -1, (0, 1), (r,), (plain,), (2, 3))
    assert t == Task(5, 9, 1, "AIV", 0, -1, (0, 1), (plain,), (r,), (2, 3))
    assert t != Task(5, 9, 1, "AIC", 0, -1, (0, 1), (r,), (plain,), (2, 3))
    assert hash(t) == hash((5, 9, 1, "AIV", 0, -1, (0, 1), (r,), (plain,), (2, 3)))
    assert repr(t) == (f"Task(id=5, subgraph=9, leaf=1, core='AIV', instance=0, root=-1, coord=(0, 1), "
                       f"reads=({r!r},), writes=({r!r},), preds=(2, 3))")
    sg = Subgraph(2, "AIV", 1, (4, 5), 1024)
    assert sg.leaf == -1 and sg == Subgraph(2, "AIV", 1, (4, 5), 1024, -1)
    assert sg != Subgraph(2, "AIV", 1, (4, 5), 1024, 0)
    assert hash(sg) == hash((2, "AIV", 1, (4, 5), 1024, -1))
    assert repr(sg) == "Subgraph(id=2, core='AIV', instance=1, ops=(4, 5), peak_bytes=1024, leaf=-1)"
    for x in (r, o, b, t, sg):
        with pytest.raises(AttributeError):
            x.extra = 1  # type: ignore[union-attr]
        assert pickle.loads(pickle.dumps(x)) == x and copy.copy(x) == x and copy.deepcopy(x) == x


def test_memory_types_names_the_op_on_the_wrong_core():
    from pypto.compiler.manager import PassContext
    from pypto.compiler.tile_passes import memory_types
    from pypto.target import load as load_board

    name, record = next((n, r) for n, r in example_records() if r.program.tiles is not None
                        and any(o.op == "matmul" for o in r.program.tiles.ops))
    p = record.program
    assert p.subgraphs is not None and p.tiles is not None
    ctx = PassContext({}, load_board("a2a3"))
    assert memory_types(dataclasses.replace(p, memory=None), ctx).memory == p.memory, name
    moved = tuple(Subgraph(sg.id, "AIV", sg.instance, sg.ops, sg.peak_bytes, sg.leaf) if sg.core == "AIC" else sg
                  for sg in p.subgraphs)
    first = next(o for o in p.tiles.ops if o.op == "matmul")
    with pytest.raises(AssertionError, match=f"tile op {first.id} \\(matmul\\) sits on a AIV core"):
        memory_types(dataclasses.replace(p, memory=None, subgraphs=moved), ctx)


def test_a_compiled_program_keeps_partitions_notes_but_not_the_ops_index():
    """The stages share one ops-by-id dict per tile graph; the compile drops it at its end (a kept
    program need not hold it), keeping graph partition's notes on its copies (a few numbers)."""
    from pypto.compiler import tile_ir

    name, record = next((n, r) for n, r in example_records() if r.program.tiles is not None
                        and tile_ir.copy_facts(r.program.tiles) is not None)
    tiles = record.program.tiles
    assert tiles is not None
    hit = tile_ir._DERIVED.get(id(tiles))
    assert hit is not None and hit[0]() is tiles and "by_id" not in hit[1], name
    by_id = tile_ir.ops_by_id(tiles)
    assert by_id == {o.id: o for o in tiles.ops} and tile_ir.ops_by_id(tiles) is by_id
    tile_ir.forget_ops_by_id(tiles)
    assert "by_id" not in hit[1] and tile_ir.copy_facts(tiles) is not None


# ---- the execute stage takes graph partition's dependencies (`CopyFacts.depends`) when partition filed the GM
# accesses in program order, and finds them itself otherwise: the same arrows either way

def test_partitions_arrows_are_the_ones_the_execute_stage_finds_on_every_example():
    offered = 0
    records = example_records()
    for name, record in records:
        expanded = next((p.snapshot for p in record.passes if p.name == "tile_expand" and p.snapshot is not None), None)
        if expanded is None or expanded.tiles is None:
            continue
        taken, found, was_offered = execute_both_ways(expanded.tiles, expanded.graph.by_id())
        assert taken == found, name
        offered += was_offered
    assert offered >= len(records) // 2  # the fast path is the common one


def _graph(ops: list[Any], n_buffers: int = 2) -> Any:
    from pypto.compiler.tile_ir import Buffer, Instance, TileGraph

    f32 = DataType.DT_FP32
    buffers = tuple(Buffer(b, (8, 8), f32, "param", f"b{b}", 0) for b in range(n_buffers))
    return TileGraph(buffers, tuple(ops), (Instance(0, -1, ()), Instance(1, 0, (("i", 0),))), ())


def _op(tid: int, op: str, inputs: tuple[int, ...] = (), buffer: int | None = None, instance: int = 0) -> TileOp:
    f32 = DataType.DT_FP32
    r = None if buffer is None else Region(buffer, (8, 8), (0, 0), (8, 8))
    return TileOp(tid, op, 0, instance, (0, 0), (8, 8), f32, inputs, r, {})


@pytest.mark.parametrize("case, ops", [
    # a store over the buffer between a load and its consumer: in program order the load reads first
    ("written between", [_op(0, "load", buffer=0), _op(1, "fill"), _op(2, "store", (1,), 0),
                         _op(3, "exp", (0,)), _op(4, "store", (3,), 1)]),
    # one load's tile read by two subgraphs (another instance): copy insertion loads it again in the second
    ("loaded again", [_op(0, "load", buffer=0), _op(1, "exp", (0,)), _op(2, "store", (1,), 1),
                      _op(3, "exp", (0,), instance=1), _op(4, "store", (3,), 0, instance=1)]),
    # a load nothing consumes: it runs alone, filed by no consumer
    ("unconsumed", [_op(0, "load", buffer=0), _op(1, "fill"), _op(2, "store", (1,), 0)]),
])
def test_the_execute_stage_finds_the_arrows_itself_where_partitions_order_was_not_the_programs(
        case: str, ops: list[TileOp]) -> None:
    taken, found, offered = execute_both_ways(_graph(ops), {})
    assert not offered, case
    assert taken == found
    if case == "written between":  # the store waits for the task that read first (not the other way round)
        reader = next(t for t in found.tasks if any(r.buffer == 0 for r in t.reads))
        writer = next(t for t in found.tasks if any(r.buffer == 0 for r in t.writes))
        assert reader.id in writer.preds and writer.id not in reader.preds


def test_partition_offers_its_arrows_in_program_order():
    ops = [_op(0, "fill"), _op(1, "store", (0,), 0), _op(2, "load", buffer=0), _op(3, "exp", (2,)),
           _op(4, "store", (3,), 1)]
    taken, found, offered = execute_both_ways(_graph(ops), {})
    assert offered and taken == found
    reader = next(t for t in found.tasks if any(r.buffer == 0 for r in t.reads))
    writer = next(t for t in found.tasks if any(r.buffer == 0 for r in t.writes))
    assert writer.id in reader.preds


def test_a_compiled_programs_facts_keep_no_arrows():
    """The arrows are read by the execute stage of the same compile and not kept with the program."""
    from pypto.compiler import tile_ir

    _, record = next((n, r) for n, r in example_records() if r.program.tiles is not None)
    assert record.program.tiles is not None
    facts = tile_ir.copy_facts(record.program.tiles)
    assert facts is not None and facts.depends is None


def test_the_kept_grids_are_the_grids_and_every_example_expands_alike_without_them(monkeypatch: pytest.MonkeyPatch):
    """`tile_expand.grid` keeps small grids (a loop's iterations cut the same shapes again): a kept grid is the cells
    the plain generator gives, a big one is not kept, the store is bounded; and every example kernel's tile graph
    made with them equals the one made without."""
    from pypto.compiler import tile_expand as te

    monkeypatch.setattr(te, "_GRIDS", {})
    small, tail = ((40, 64), (16, 32)), ((7,), (3,))
    for shape, tile in (small, tail):
        assert te.grid(shape, tile) is te.grid(shape, tile) == tuple(te._grid(shape, tile))
    assert te.grid(*small) == (((0, 0), (0, 0), (16, 32)), ((0, 1), (0, 32), (16, 32)), ((1, 0), (16, 0), (16, 32)),
                               ((1, 1), (16, 32), (16, 32)), ((2, 0), (32, 0), (8, 32)), ((2, 1), (32, 32), (8, 32)))
    big = ((1024, 1024), (16, 16))  # 4,096 tiles
    assert list(te.grid(*big)) == list(te._grid(*big)) and big not in te._GRIDS
    monkeypatch.setattr(te, "GRIDS_KEPT", 3)
    for n in range(8):
        te.grid((n + 1, 4), (1, 4))
    assert 1 <= len(te._GRIDS) <= 3
    for name, record in example_records():
        traced = next(x.snapshot for x in record.passes if x.name == "tile_expand")
        before = record.passes[[x.name for x in record.passes].index("tile_expand") - 1].snapshot
        assert traced is not None and before is not None and record.program.bindings is not None
        monkeypatch.setattr(te, "SMALL_GRID", 64)
        kept, _, _ = te.expand(before.graph, record.program.bindings)
        # no grid kept: each one the plain generator (`grid` reads these globals: a native build calls it directly)
        monkeypatch.setattr(te, "SMALL_GRID", 0)
        monkeypatch.setattr(te, "_GRIDS", {})
        plain, _, _ = te.expand(before.graph, record.program.bindings)
        assert kept == plain == traced.tiles, name


def test_shared_arrow_sets_give_the_columns_and_order_distinct_ones_give() -> None:
    """`execute._flat` joins one array per predecessor tuple when tasks share a few, and `_lower` finds each set's
    highest once: both as the plain one pass over every tuple (`build` shares one tuple among the tasks of a set)."""
    import itertools

    import numpy as np

    from pypto.compiler.execute import _flat, _lower

    shared, other = (0, 1, 2, 5), (3,)
    cases = {
        "shared": [shared] * 40 + [other] * 9 + [()] * 3,  # few distinct objects: joined
        "distinct": [tuple(range(i % 7)) for i in range(50)],  # equal contents, distinct objects: one pass
        "none": [],
    }
    for name, preds in cases.items():
        plain = np.fromiter(itertools.chain.from_iterable(preds), dtype=np.int64)
        got = _flat(preds, len(plain))
        assert got.dtype == np.int64 and got.tolist() == plain.tolist(), name
    arrows = {t: frozenset(shared) for t in range(6, 40)}
    assert _lower(arrows) and _lower({**arrows, 40: set()})
    assert not _lower({**arrows, 5: frozenset(shared)}), "a set shared by a task not above its highest"
    assert not _lower({6: {3}, 7: {7}})


def test_a_group_that_took_a_shared_arrow_set_and_then_more_keeps_them_all() -> None:
    """A second read of one box since its buffer's last write gets the frozenset the first read's lookup kept
    (`gm_index.Accesses.conflicts`), and partition keeps it as that group's arrows without a copy; when an op that
    reads another buffer then joins the group, its arrows are a new set holding both (the shared one unchanged)."""
    from pypto.compiler.tile_ir import Buffer, Instance, TileGraph

    f32 = DataType.DT_FP32
    buffers = (Buffer(0, (16, 8), f32, "local", "x", 0), Buffer(1, (8, 8), f32, "local", "y", 0),
               Buffer(2, (16, 8), f32, "output", "o1", 0), Buffer(3, (16, 8), f32, "output", "o2", 0))

    def op(tid: int, kind: str, inputs: tuple[int, ...] = (), at: tuple[int, int, int, int] | None = None,
           shape: tuple[int, int] = (8, 8)) -> TileOp:
        r = None if at is None else Region(at[0], buffers[at[0]].shape, (at[1], at[2]), (at[3], 8))
        return TileOp(tid, kind, 0, 0, (0, 0), shape, f32, inputs, r, {})

    ops = [op(0, "fill"), op(1, "store", (0,), (0, 0, 0, 8)),  # x written in two slabs, by two tasks
           op(2, "fill"), op(3, "store", (2,), (0, 8, 0, 8)),
           op(4, "fill"), op(5, "store", (4,), (1, 0, 0, 8)),  # y, by a third
           op(6, "load", at=(0, 0, 0, 16), shape=(16, 8)), op(7, "exp", (6,), shape=(16, 8)),  # all of x, read once
           op(8, "store", (7,), (2, 0, 0, 16), shape=(16, 8)),
           op(9, "load", at=(0, 0, 0, 16), shape=(16, 8)), op(10, "exp", (9,), shape=(16, 8)),  # and again
           op(11, "load", at=(1, 0, 0, 8)), op(12, "add", (10, 11), shape=(16, 8)),  # then y, in the same task
           op(13, "store", (12,), (3, 0, 0, 16), shape=(16, 8))]
    graph = TileGraph(buffers, tuple(ops), (Instance(0, -1, ()),), ())
    taken, found, offered = execute_both_ways(graph, {})
    assert offered and taken == found
    last = next(t for t in found.tasks if any(r.buffer == 3 for r in t.writes))
    writers = {t.id for t in found.tasks if any(r.buffer in (0, 1) for r in t.writes)}
    assert len(writers) == 3 and writers <= set(last.preds)


def test_groups_that_meet_one_shared_arrow_set_and_the_same_others_share_their_union() -> None:
    """Two matmuls each read all of a buffer that 16 tasks wrote in slabs (a shared set from the read's kept lookup)
    and a tile one other task wrote: partition gives both groups the one union (`gm_deps`' cache), holding every
    writer, and the execute graph built from it is the one the execute stage finds itself. A third reads the slabs
    and a tile of another writer: its union is another object, with that writer."""
    from pypto.compiler import tile_ir
    from pypto.compiler.partition import partition
    from pypto.compiler.tile_ir import Instance, TileGraph

    f32 = DataType.DT_FP32
    slabs = 16
    x = Buffer(0, (8 * slabs, 8), f32, "local", "x", 0)
    ys = (Buffer(1, (8, 8), f32, "local", "y", 0), Buffer(2, (8, 8), f32, "local", "z", 0))
    outs = tuple(Buffer(3 + i, (8, 8), f32, "output", f"o{i}", 0) for i in range(3))
    buffers = (x, *ys, *outs)
    ops: list[TileOp] = []

    def write(buffer: Buffer, row: int) -> None:
        fill = TileOp(len(ops), "fill", 0, 0, (0, 0), (8, 8), f32, (), None, {})
        ops.append(fill)
        ops.append(TileOp(len(ops), "store", 0, 0, (0, 0), (8, 8), f32, (fill.id,),
                          Region(buffer.id, buffer.shape, (row, 0), (8, 8)), {}))

    for s in range(slabs):
        write(x, 8 * s)
    for y in ys:
        write(y, 0)
    whole = Region(0, x.shape, (0, 0), x.shape)
    for i, y in enumerate((ys[0], ys[0], ys[1])):
        ops.append(TileOp(len(ops), "matmul", 0, 0, (0, 0), (8, 8), f32, (), Region(outs[i].id, (8, 8), (0, 0), (8, 8)),
                          {"inputs": (whole, Region(y.id, y.shape, (0, 0), (8, 8)))}))
    graph = TileGraph(buffers, tuple(ops), (Instance(0, -1, ()),), ())
    tiles, subgraphs = partition(graph, {}, 1 << 30, [])
    facts = tile_ir.copy_facts(tiles)
    assert facts is not None and facts.depends is not None
    group = {o: sg.id for sg in subgraphs for o in sg.ops}
    writers = {o.region.buffer: group[o.id] for o in ops if o.op == "store" and o.region.buffer != 0}  # type: ignore
    slab_writers = {group[o.id] for o in ops if o.op == "store" and o.region.buffer == 0}  # type: ignore[union-attr]
    first, second, third = (facts.depends[group[o.id]] for o in ops if o.op == "matmul")
    assert first is second and first == slab_writers | {writers[1]}
    assert third is not first and third == slab_writers | {writers[2]}
    taken, found, offered = execute_both_ways(graph, {})
    assert offered and taken == found
