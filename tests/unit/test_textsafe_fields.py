"""Terminal escaping and the bounds of notes and names, on literal text."""

from __future__ import annotations

from recon.fields import BY_MAX, NOTE_MAX, clean_note, field_problems
from recon.textsafe import terminal_lines, terminal_text


def test_terminal_controls_are_shown_as_escapes_never_sent() -> None:
    """Retitle, clear-screen, clipboard and C1 CSI sequences print as text; other text is kept."""
    hostile = "ref\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b2J\u202eok\nnext\tcol"
    assert terminal_text(hostile) == (
        "ref\\x1b]0;owned\\x07\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07\\x9b2J\\u202eok\\nnext\\tcol"
    )
    assert terminal_text("Ödön 1,234.50 €") == "Ödön 1,234.50 €"
    assert terminal_lines("a\x1b\nb") == "a\\x1b\nb"


def test_a_note_keeps_line_breaks_and_tabs_and_nothing_else() -> None:
    """At the bounds nothing is said; past them, or with a control character, each is named."""
    assert field_problems("x" * NOTE_MAX + "", "b" * BY_MAX) == []
    assert field_problems(clean_note("line\r\nnext\ttab"), "anna") == []
    assert field_problems("x" * (NOTE_MAX + 1), None) == [
        "note is 4,001 characters long; at most 4,000 are allowed"
    ]
    assert field_problems("a\x00b", "x\ty") == [
        "note holds a control character ('\\x00' at character 2), which is not allowed"
        " (line breaks and tabs are)",
        "by holds a control character ('\\t' at character 2), which is not allowed",
    ]
    assert field_problems(None, "\udcff") == [
        "by holds a lone surrogate character ('\\udcff' at character 1), which is not allowed"
    ]
