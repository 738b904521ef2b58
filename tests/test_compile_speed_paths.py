"""The compiler's fast paths (issue 19 item 2) build and check exactly what the plain code did."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from support import example_records

from pypto.compiler.tile_expand import buffer, region, tile_op
from pypto.compiler.tile_ir import Buffer, Region, TileOp
from pypto.ir.dtypes import DataType


def test_fast_constructors_build_the_frozen_dataclasses_themselves():
    r = region(3, (64, 64), (0, 32), (32, 32))
    plain = Region(3, (64, 64), (0, 32), (32, 32))
    assert type(r) is Region and r == plain and hash(r) == hash(plain)
    o = tile_op(7, "load", 2, 0, (0, 1), (32, 32), DataType.DT_FP32, (), r)
    assert type(o) is TileOp and o == TileOp(7, "load", 2, 0, (0, 1), (32, 32), DataType.DT_FP32, (), r, {})
    assert o.attrs == {} and o.attrs is not tile_op(8, "exp", 2, 0, (0, 1), (32, 32), DataType.DT_FP32).attrs
    b = buffer(4, (32, 32), DataType.DT_FP16, "workspace", "xfer7", 2)
    assert type(b) is Buffer and b == Buffer(4, (32, 32), DataType.DT_FP16, "workspace", "xfer7", 2)
    for x in (r, o, b):
        with pytest.raises(dataclasses.FrozenInstanceError):
            x.shape = (1, 1)  # type: ignore[misc]
        assert pickle.loads(pickle.dumps(x)) == x and copy.copy(x) == x and dataclasses.replace(x) == x


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
    moved = tuple(dataclasses.replace(sg, core="AIV") if sg.core == "AIC" else sg for sg in p.subgraphs)
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
