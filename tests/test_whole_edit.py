"""Which edits skip the debounce (`server.live._whole_edit`): one that puts in two or more letters or digits at once
(a quick fix, a paste, an agent's edit), not typing (a character, an editor's bracket pair, a newline and indent, a
deletion)."""

from __future__ import annotations

import pytest

from server.live import _inserted, _whole_edit

KERNEL = "def k(x):\n    pypto.set_vec_tile_shapes(8, 64)\n    return x\n"


@pytest.mark.parametrize(("old", "new", "put_in", "whole"), [
    (KERNEL, KERNEL.replace("(8, 64)", "(16, 64)"), "16", True),  # a quick fix's tile shape
    (KERNEL, KERNEL.replace("(8, 64)", "(8, 128)"), "128", True),
    (KERNEL, KERNEL.replace("(8, 64)", "(4, 64)"), "4", False),  # a keystroke over a selection
    (KERNEL, KERNEL.replace("(8, 64)", "(8, 6)"), "", False),  # a deletion
    (KERNEL, KERNEL.replace("return x", "return f()"), "f()", False),  # a letter and its bracket pair
    (KERNEL, KERNEL.replace("    return", "\n    return"), "", False),  # Enter: a line of its own, empty
    (KERNEL, KERNEL.replace("    return", "    y = x\n    return"), "    y = x", True),  # a pasted line
    (KERNEL, KERNEL + "\n\n# see the docs\n", "\n# see the docs\n", True),  # a pasted comment
    (KERNEL, KERNEL, "", False),
])
def test_a_change_is_whole_when_it_puts_in_two_letters_or_digits_at_once(old: str, new: str, put_in: str,
                                                                          whole: bool) -> None:
    assert _inserted(old, new) == put_in
    assert _whole_edit(old, new) is whole
