"""Which edits skip the debounce: `server.live._whole_edit` of what `_edit` says a change put in — two or more letters
or digits at once (a quick fix, a paste, an agent's edit), not typing (a character, an editor's bracket pair, a
newline and indent, a deletion); and `typed`: an editor's change event that is the same keystroke at several cursors,
which the text difference would take for a whole edit."""

from __future__ import annotations

import pytest

from server.live import _edit, _whole_edit, typed

KERNEL = "def k(x):\n    pypto.set_vec_tile_shapes(8, 64)\n    return x\n"


@pytest.mark.parametrize(("new", "line", "put_in", "whole"), [
    (KERNEL.replace("(8, 64)", "(16, 64)"), 2, "16", True),  # a quick fix's tile shape
    (KERNEL.replace("(8, 64)", "(8, 128)"), 2, "128", True),
    (KERNEL.replace("(8, 64)", "(4, 64)"), 2, "4", False),  # a keystroke over a selection
    (KERNEL.replace("(8, 64)", "(8, 6)"), 2, "", False),  # a deletion
    (KERNEL.replace("return x", "return f()"), 3, "f()", False),  # a letter and its bracket pair
    (KERNEL.replace("    return", "\n    return"), 3, "", False),  # Enter: a line of its own, empty
    (KERNEL.replace("    return", "    y = x\n    return"), 3, "    y = x", True),  # a pasted line
    (KERNEL + "\n\n# see the docs\n", 5, "\n# see the docs\n", True),  # a pasted comment
    (KERNEL, 0, "", False),  # no change
])
def test_a_change_is_whole_when_it_puts_in_two_letters_or_digits_at_once(new: str, line: int, put_in: str,
                                                                          whole: bool) -> None:
    assert _edit(KERNEL, new) == (line, put_in)  # the first line that differs (1-based), what was put in
    assert _whole_edit(put_in) is whole


@pytest.mark.parametrize(("changes", "keystrokes"), [
    ([(True, "1"), (True, "1")], True),  # a digit typed at two cursors
    ([(True, ""), (True, ""), (True, "")], True),  # a character deleted at three
    ([(True, "()"), (True, "()")], True),  # an editor's bracket pair at two
    ([(True, "1")], False),  # one cursor: the text difference says it (`_whole_edit`)
    ([(True, "8"), (True, "4")], False),  # a quick fix's two numbers: other texts
    ([(True, "64"), (True, "64")], False),  # a paste at two cursors: whole
    ([(False, "1"), (False, "1")], False),  # whole-document changes: nothing to tell
])
def test_the_same_keystroke_at_several_cursors_is_typing(changes: list[tuple[bool, str]], keystrokes: bool) -> None:
    assert typed(changes) is keystrokes


def test_a_keystroke_at_two_cursors_passes_for_a_whole_edit_by_its_text_difference() -> None:
    """Why `typed` is needed: the difference spans the text between the cursors."""
    new = KERNEL.replace("(8, 64)", "(18, 164)")
    assert _whole_edit(_edit(KERNEL, new)[1])
