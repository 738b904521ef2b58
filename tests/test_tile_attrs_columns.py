"""A record's tile-op attributes as columns (`pypto.compiler.serialize._attrs_columns`) decode to each op's own JSON
(`_tile_attrs_json`), values and key order, the table holding each distinct one once: also for a matmul's tiles,
which share every value but their position `at` (each value's text is made once per object, so equal values held by
other objects, other key orders, 0 and 0.0, must still come out as their own JSON)."""

from __future__ import annotations

import json

import pytest
from support import example_records

from pypto.compiler.serialize import _attrs_columns, _tile_attrs_json
from pypto.compiler.tile_ir import Region
from pypto.ir import columns as C


def decoded(attrs):
    arrays = {}
    spec = _attrs_columns(attrs, "a", arrays)
    return spec, C.expand({C.MARK: spec}, arrays)


@pytest.fixture(scope="module")
def records():
    return example_records()


def test_every_examples_tile_attributes_decode_to_their_json(records):
    matmuls = 0
    for name, rec in records:
        ops = rec.program.tiles.ops
        attrs = [o.attrs for o in ops]
        matmuls += sum(1 for a in attrs if "at" in a)
        _, got = decoded(attrs)
        assert json.dumps(got) == json.dumps([_tile_attrs_json(a) for a in attrs]), name
    assert matmuls  # the examples have matmul tiles


def test_matmul_tiles_sharing_all_but_their_place_are_one_entry_per_distinct_json():
    lay = (64, 64)
    inputs = (Region(0, lay, (0, 0), (64, 64)), Region(1, lay, (0, 0), (64, 64)))
    same_inputs = (Region(0, lay, (0, 0), (64, 64)), Region(1, lay, (0, 0), (64, 64)))  # equal, another object
    cube = ((16, 16), (64, 64), (16, 16))
    attrs = []
    for it in range(200):  # a loop's iterations: the same places again, with other dicts and tuples
        for at in ((0, 0), (0, 16), (16, 0)):
            attrs.append({"a_trans": False, "inputs": inputs if it % 2 else same_inputs, "at": tuple(at),
                          "k_steps": 4, "cube": cube})
    attrs += [{"a_trans": False, "inputs": inputs, "at": (0.0, 16.0), "k_steps": 4, "cube": cube},  # floats: another
              {"a_trans": True, "inputs": inputs, "at": (0, 16), "k_steps": 4, "cube": cube},  # another value
              {"inputs": inputs, "a_trans": False, "at": (0, 16), "k_steps": 4, "cube": cube},  # another key order
              {"at": (0, 16), "a_trans": False, "inputs": inputs, "k_steps": 4, "cube": cube},
              {}, {"scalar": 1.0}]
    spec, got = decoded(attrs)
    want = [_tile_attrs_json(a) for a in attrs]
    assert json.dumps(got) == json.dumps(want)  # values and key order
    assert "pick" in spec and len(spec["table"]) == len({json.dumps(w) for w in want})
    got[0]["inputs"].append("changed")  # each entry its own list: a reader may change one
    assert got[3]["inputs"] == want[3]["inputs"]
