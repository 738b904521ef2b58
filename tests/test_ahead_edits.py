"""The edits compiled ahead (server/ahead.py): which shapes of the call under the cursor, in which order, written into
which text — and none for a call the document does not hold on one line."""

from __future__ import annotations

from server import ahead

TEXT = '''import pypto

@pypto.jit
def k(x):
    name = "é"; pypto.set_vec_tile_shapes(16, 384)  # é: a byte more in UTF-8 than in characters, before the call
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [128, 256], enable_split_k=True)
'''


def _config(text: str, needle: str, kind: str, dims: list, path: str = "/w/k.py") -> dict:
    lines = text.split("\n")
    line = next(i for i, t in enumerate(lines) if needle in t)
    raw = lines[line].encode()
    col = raw.index(needle.encode())
    end = raw.index(b")", col) + 1 if kind == "vec" else raw.rindex(b")") + 1
    return {"id": 0, "kind": kind, "dims": dims, "span": {"file": path, "line": line + 1, "col": col,
                                                           "end_line": line + 1, "end_col": end}}


def test_a_vec_calls_entries_are_halved_then_doubled_the_last_first():
    assert ahead.shapes("vec", [16, 384]) == [[16, 192], [16, 768], [8, 384], [32, 384]]
    assert ahead.shapes("vec", [3, 1]) == [[3, 2], [6, 1]], "an odd entry, and 1, only doubled"
    assert ahead.shapes("cube", [16, 384]) == [], "not a cube call's dims"


def test_a_cube_calls_pairs_move_whole_n_then_k_then_m_keeping_split_k():
    dims = [[32, 64], [64, 128], [128, 256], True]
    assert ahead.shapes("cube", dims) == [
        [[32, 64], [64, 128], [64, 128], True], [[32, 64], [64, 128], [256, 512], True],
        [[32, 64], [32, 64], [128, 256], True], [[32, 64], [128, 256], [128, 256], True],
        [[16, 32], [64, 128], [128, 256], True], [[64, 128], [64, 128], [128, 256], True]]


def test_the_edits_are_the_document_with_the_call_rewritten_in_place():
    tc = _config(TEXT, "pypto.set_vec_tile_shapes", "vec", [16, 384])
    got = ahead.edits(TEXT, "/w/k.py", tc, 3)
    assert got == [(f"pypto.set_vec_tile_shapes{new}", TEXT.replace("(16, 384)", new))
                   for new in ("(16, 192)", "(16, 768)", "(8, 384)")]
    cube = _config(TEXT, "pypto.set_cube_tile_shapes", "cube", [[32, 64], [64, 128], [128, 256], True])
    assert ahead.edits(TEXT, "/w/k.py", cube, 1) == [
        ("pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 128], enable_split_k=True)",
         TEXT.replace("[128, 256], enable", "[64, 128], enable"))]


def test_no_edit_of_a_call_elsewhere_over_several_lines_or_not_asked_for():
    tc = _config(TEXT, "pypto.set_vec_tile_shapes", "vec", [16, 384])
    assert ahead.edits(TEXT, "/w/other.py", tc, 4) == [], "a call in another file"
    assert ahead.edits(TEXT, "/w/k.py", tc, 0) == []
    several = {**tc, "span": {**tc["span"], "end_line": tc["span"]["line"] + 1}}
    assert ahead.edits(TEXT, "/w/k.py", several, 4) == []
    for col, end in ((0, tc["span"]["end_col"]), (tc["span"]["col"], tc["span"]["end_col"] - 1)):
        other = {**tc, "span": {**tc["span"], "col": col, "end_col": end}}  # not a call's text
        assert ahead.edits(TEXT, "/w/k.py", other, 4) == []
    assert ahead.edits(TEXT, "/w/k.py", {**tc, "kind": "cube"}, 4) == [], "not the call of its kind"
    assert ahead.edits(TEXT, "/w/k.py", {**tc, "span": None}, 4) == []


def test_only_the_entry_that_changes_is_written_the_other_arguments_text_kept():
    vec = "pypto.set_vec_tile_shapes(1, norm_m_tile, d)"
    assert ahead.rewritten(vec, "vec", [1, 32, 128], [1, 32, 64]) == "pypto.set_vec_tile_shapes(1, norm_m_tile, 64)"
    cube = "pypto.set_cube_tile_shapes(c1_tile[0], c1_tile[1], c1_tile[2])"
    dims = [[16, 128], [128, 256], [128, 128]]
    assert ahead.rewritten(cube, "cube", dims, [[16, 128], [128, 256], [64, 64]]) == \
        "pypto.set_cube_tile_shapes(c1_tile[0], c1_tile[1], [64, 64])"
    split = "set_cube_tile_shapes([l_max, l_max], [256, 256], [32, 32], enable_split_k=True)"
    assert ahead.rewritten(split, "cube", [[32, 32], [256, 256], [32, 32], True],
                           [[32, 32], [128, 128], [32, 32], True]) == \
        "set_cube_tile_shapes([l_max, l_max], [128, 128], [32, 32], enable_split_k=True)"
    # arguments that do not line up with the dims: the call written whole, with numbers
    assert ahead.rewritten("pypto.set_vec_tile_shapes(*shape)", "vec", [8, 64], [8, 32]) == \
        "pypto.set_vec_tile_shapes(8, 32)"
    text = TEXT.replace("set_vec_tile_shapes(16, 384)", "set_vec_tile_shapes(rows, 384)")
    tc = _config(text, "pypto.set_vec_tile_shapes", "vec", [16, 384])
    assert ahead.edits(text, "/w/k.py", tc, 1) == [("pypto.set_vec_tile_shapes(rows, 192)",
                                                    text.replace("(rows, 384)", "(rows, 192)"))]
