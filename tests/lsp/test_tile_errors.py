"""Tile-shape errors at the call (issue 18 item 4), over stdio with the real server: a
`set_*_tile_shapes` call that breaks a rule for an op is reported on the call, with the op's
line as related information; each "use N" of the message is a quick fix whose edit, applied,
gives a kernel that compiles; a health finding that names a replacement tile shape is a quick fix
on the call's line."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30, "tileSearchBudget": 4}

CALL = "pypto.set_cube_tile_shapes([32, 32], 56, [32, 32])"
MATMUL = f'''import pypto


@pypto.jit
def mm(a: pypto.Tensor([64, 128], pypto.DT_FP16), b: pypto.Tensor([128, 64], pypto.DT_FP16),
       c: pypto.Tensor([64, 64], pypto.DT_FP32)):
    # its k is not a multiple of the fp16 fractal (16 elements)
    {CALL}
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
'''

VEC_CALL = "pypto.set_vec_tile_shapes(8, 100)"
UNALIGNED = f'''import pypto


@pypto.jit
def unaligned(x: pypto.Tensor([32, 256], pypto.DT_FP32), out: pypto.Tensor([32, 256], pypto.DT_FP32)):
    {VEC_CALL}
    y = pypto.exp(x)
    out[:] = y * 2.0
'''


def line_range(text: str, needle: str) -> lsp.Range:
    for i, line in enumerate(text.split("\n")):
        if needle in line:
            c = line.index(needle)
            return lsp.Range(lsp.Position(i, c), lsp.Position(i, c + len(needle)))
    raise AssertionError(needle)


async def test_a_cube_k_off_the_fractal_is_an_error_on_the_call_with_the_matmul_related_and_a_fix(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "cube_k.py", MATMUL)
    record = await client.records.record(doc.uri, "mm", 1)
    assert record["error"] is not None
    published = await client.published.wait(lambda p: p.uri == doc.uri and any(d.code == "tile.shape"
                                                                                 for d in p.diagnostics))
    (d,) = [d for d in published.diagnostics if d.code == "tile.shape"]
    assert d.severity == lsp.DiagnosticSeverity.Error
    assert d.range == line_range(MATMUL, CALL), d.range  # the call, not the matmul's line
    assert "use 64" in d.message
    related = d.related_information or []
    assert [(r.location.uri, r.location.range.start.line) for r in related] == \
        [(doc.uri, doc.line_of("pypto.matmul("))]
    assert "matmul" in related[0].message

    actions = await doc.actions(doc.line_of(CALL), 10)
    fixes = [a for a in actions if a.title.startswith("pypto: use 64")]
    assert len(fixes) == 1, [a.title for a in actions]
    fix = fixes[0]
    assert fix.kind == lsp.CodeActionKind.QuickFix and list(fix.diagnostics or ()) == [d]
    assert fix.edit is not None
    (edit,) = fix.edit.changes[doc.uri]
    k = line_range(MATMUL, "56, [").start  # the k argument
    assert edit.new_text == "64" and edit.range == lsp.Range(k, lsp.Position(k.line, k.character + 2))

    v = doc.apply(fix.edit)
    assert "pypto.set_cube_tile_shapes([32, 32], 64, [32, 32])" in doc.text
    fixed = await client.records.record(doc.uri, "mm", v)
    assert fixed["error"] is None, fixed["error"]
    # the diagnostics published once the new record is in (before it, the old error may still show)
    await client.published.wait(lambda p: p.uri == doc.uri and p.version == v and not any(
        x.severity == lsp.DiagnosticSeverity.Error for x in p.diagnostics))


async def test_an_unaligned_vector_tile_is_a_warning_on_the_call_with_each_aligned_size_a_fix(
        client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "unaligned.py", UNALIGNED)
    record = await client.records.record(doc.uri, "unaligned", 1)
    assert record["error"] is None
    published = await client.published.wait(
        lambda p: p.uri == doc.uri and any(d.code == "tile.last-dim-unaligned" for d in p.diagnostics))
    (d,) = [d for d in published.diagnostics if d.code == "tile.last-dim-unaligned"]
    assert d.range == line_range(UNALIGNED, VEC_CALL), d.range
    assert re.search(r"use 96 or 104", d.message), d.message
    related = sorted(r.location.range.start.line for r in d.related_information or [])
    assert related == [doc.line_of("pypto.exp(x)"), doc.line_of("out[:] = y")]

    actions = await doc.actions(doc.line_of(VEC_CALL), 10)
    titles = [a.title for a in actions]
    for size in (96, 104):
        assert any(f"set_vec_tile_shapes(8, {size})" in t for t in titles), titles
    fix = next(a for a in actions if "set_vec_tile_shapes(8, 96)" in a.title)
    assert list(fix.diagnostics or ()) == [d] and fix.edit is not None
    v = doc.apply(fix.edit)
    assert "pypto.set_vec_tile_shapes(8, 96)" in doc.text
    fixed = await client.records.record(doc.uri, "unaligned", v)
    assert fixed["error"] is None
    await client.published.wait(lambda p: p.uri == doc.uri and p.version == v and not any(
        x.code == "tile.last-dim-unaligned" for x in p.diagnostics))


async def test_code_actions_answer_at_once_and_add_the_advisors_shapes_once_its_search_is_done(
        client, lsp_kit, tmp_path):
    """An answer held for a tile-shape search is dropped by VS Code ("No code actions available"):
    the first request answers with the findings' fixes and only starts the search."""
    doc = lsp_kit.Doc(client, tmp_path / "at_once.py", UNALIGNED)
    await client.records.record(doc.uri, "unaligned", 1)
    await client.published.wait(
        lambda p: p.uri == doc.uri and any(d.code == "tile.last-dim-unaligned" for d in p.diagnostics))
    line = doc.line_of(VEC_CALL)
    first = [a.title for a in await doc.actions(line, 10)]
    assert any(t.startswith("pypto (tile.last-dim-unaligned)") for t in first), first
    assert not [t for t in first if t.startswith("pypto: pypto.set_vec_tile_shapes")], first  # not waited for
    found = await doc.call("pypto/suggestions", kernel="unaligned")  # the search the request started
    assert found["suggestions"]
    later = [a.title for a in await doc.actions(line, 10)]
    assert any(t.startswith("pypto: pypto.set_vec_tile_shapes") for t in later), later
    assert any(t.startswith("pypto (tile.last-dim-unaligned)") for t in later), later
