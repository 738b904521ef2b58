"""The language server's parse of a version (`server.state.parse_kernels`): which functions are kernels, under which
names, wherever a `def` sits among the statements (the parse walks statements only: a `def` is never inside an
expression)."""

from __future__ import annotations

import textwrap

from server.state import parse_kernels

SOURCE = textwrap.dedent('''
    import pypto

    jit = pypto.frontend.jit


    def make(flag):
        if flag:
            try:
                with open(__file__):
                    @pypto.frontend.jit
                    def kernel(x):
                        return x
            except OSError:
                pass
        return kernel


    def other(cfg=lambda: 0):
        for _ in range(1):
            while True:
                @jit
                def kernel(x):
                    return x
                break
        return kernel


    class Holder:
        @pypto.frontend.jit
        def attr_kernel(x):
            def inner(y):
                return y  # not looked for inside a kernel
            return x


    def plain(x):
        return [lambda y: y for _ in x]
''')


def test_kernels_nested_in_compound_statements_are_found_with_their_qualified_names():
    kernels, error = parse_kernels(SOURCE, "model.py", {})
    assert error is None
    # two factories make a `kernel`: each known by its qualified name, as the worker finds them
    assert [(k.name, k.line, k.def_line) for k in kernels] == [
        ("make.<locals>.kernel", 11, 12), ("other.<locals>.kernel", 22, 23), ("attr_kernel", 30, 31)]
    assert len({k.key for k in kernels}) == 3


def test_an_edit_outside_every_kernel_changes_every_key_and_one_inside_only_its_own():
    before, _ = parse_kernels(SOURCE, "model.py", {})
    inside, _ = parse_kernels(SOURCE.replace("return y  #", "return -y  #"), "model.py", {})
    outside, _ = parse_kernels(SOURCE.replace("[lambda y: y", "[lambda y: -y"), "model.py", {})
    assert [k.key for k in outside] != [k.key for k in before] and all(
        a.key != b.key for a, b in zip(before, outside))
    assert [a.name for a, b in zip(before, inside) if a.key != b.key] == ["attr_kernel"]


# ---- an edit parses from the version before (`parse_version(..., last)`) --------------------------------------------

FILE = textwrap.dedent('''
    import pypto

    SCALE = 2


    @pypto.frontend.jit(runtime_options={"run_mode": 1})
    def first(x, out):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(4):
            out[i] = x[i] * SCALE
        s = """a string
    that spans lines"""


    def make(flag):
        @pypto.frontend.jit
        def first(x):
            return x
        return first


    @pypto.frontend.jit
    async def second(x, out):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        out[:] = pypto.matmul(x, x)  # a comment


    @pypto.frontend.jit
    def third(x):
        if x:
            return x
        return [x,
                x]
''').lstrip("\n")


def _edits(text: str) -> list[str]:
    """Versions one edit away: each line replaced, indented, dedented, removed, doubled, or a line put after it,
    among them lines that do not parse, open a string or a bracket, or end a kernel early."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        for new in ([line + "  # c", line.replace("16", "8"), line.replace("x", "y"), "    " + line, line.lstrip(),
                     line + "(", line + ' """', "    pass", "x = 1", "", "# c", "\tx = 1", line[:2] + "\t" + line[2:]]):
            out.append("\n".join(lines[:i] + [new] + lines[i + 1:]))
        out.append("\n".join(lines[:i] + lines[i + 1:]))
        out.append("\n".join(lines[:i + 1] + [line] + lines[i + 1:]))
        out.append("\n".join(lines[:i + 1] + ["        y = 2", "    z = 3"] + lines[i + 1:]))
        out.append("\n".join(lines[:i + 1] + ["@pypto.frontend.jit", "def split(x):"] + lines[i + 1:]))
        out.append("\n".join(lines[:i + 1] + ["def split(x):"] + lines[i + 1:]))
    for name in ("first", "second", "third"):  # a kernel renamed, or no longer one
        out += [text.replace(f"def {name}(", f"def {name}2("), text.replace(f"def {name}(", f"def {name}(y, "),
                text.replace(f"jit\ndef {name}(", f"jitter\ndef {name}(")]
    return out


def test_an_edit_parsed_from_the_version_before_finds_what_a_whole_parse_finds():
    from server.state import parse_version

    before, error = parse_version(FILE, "model.py", {})
    assert before is not None and error is None
    assert [(k.name, k.line, k.end_line, k.def_line, k.def_col) for k in before.kernels] == [
        ("first", 6, 12, 7, 4), ("make.<locals>.first", 16, 18, 17, 8), ("second", 22, 25, 23, 10),
        ("third", 28, 33, 29, 4)]
    edits = _edits(FILE)
    assert len(edits) > 500
    for text in edits:
        whole, whole_error = parse_version(text, "model.py", {})
        after, after_error = parse_version(text, "model.py", {}, last=before)
        assert after_error == whole_error, text
        assert (after.kernels if after else None) == (whole.kernels if whole else None), text
        assert (after.found if after else None) == (whole.found if whole else None), text


def test_an_edit_within_a_kernel_parses_that_kernels_lines_only(monkeypatch):
    import ast

    from server import state

    before, _ = state.parse_version(FILE, "model.py", {})
    parsed: list[int] = []
    real = ast.parse
    monkeypatch.setattr(state.ast, "parse", lambda text, *a, **kw: parsed.append(text.count("\n") + 1) or
                        real(text, *a, **kw))
    inside = FILE.replace("out[i] = x[i] * SCALE", "out[i] = x[i] * SCALE * 2\n        out[i] = out[i]")
    after, _ = state.parse_version(inside, "model.py", {}, last=before)
    assert parsed == [8]  # `first`'s lines, one more than before
    assert after is not None
    assert [k.line for k in after.kernels] == [6, 17, 23, 29]  # the kernels below it moved a line down
    assert [a.key == b.key for a, b in zip(before.kernels, after.kernels)] == [False] * 4  # (moved: keys change)
    parsed.clear()
    state.parse_version(FILE.replace("SCALE = 2", "SCALE = 3"), "model.py", {}, last=before)  # outside: whole
    state.parse_version(FILE.replace("return first", "return  first"), "model.py", {}, last=before)  # a factory's
    assert parsed == [FILE.count("\n") + 1] * 2
    parsed.clear()
    state.parse_version(FILE.replace("return x\n    return first", "return -x\n    return first"), "model.py", {},
                        last=before)  # a kernel the factory makes: its lines, less their indentation
    assert parsed == [3]
