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
