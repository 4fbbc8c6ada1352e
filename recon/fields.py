"""What a person may write into a case's history: the bounds of ``note`` and ``by``.

Every path that records an action (``--note`` and ``--by`` on the command line, the ``note`` and
``by`` columns of a CSV or workbook sent back to ``recon exceptions apply``, the operating-system
user) is checked by :func:`field_problems` before anything is written, so a field is refused with
its row and exit 2 on every database, instead of a traceback where the column is too narrow
(``by`` is ``VARCHAR(255)``) or the database rejects the text (PostgreSQL refuses NUL).

- ``note``: at most :data:`NOTE_MAX` characters; line breaks and tabs allowed, no other control
  character. A huge note made every report file as large and the mail refused every night while
  the case stayed acknowledged (docs/reliability.md).
- ``by``: at most :data:`BY_MAX` characters, no control character at all.
- Neither may hold a lone surrogate (what a command line that is not UTF-8 gives Python), which no
  database stores as UTF-8.

A note's Windows line endings (``\\r\\n``, from a cell edited in Excel) are line breaks, not control
characters: :func:`clean_note` makes them ``\\n``.
"""

from __future__ import annotations

import re

NOTE_MAX = 4000
BY_MAX = 255

# Control characters (C0, DEL, C1) and lone surrogates; a note keeps line breaks and tabs.
_BY_REFUSED = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_NOTE_REFUSED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_note(note: str | None) -> str | None:
    """``note`` with Windows line endings made ``\\n`` (``None`` stays ``None``)."""
    return None if note is None else note.replace("\r\n", "\n")


def field_problems(note: str | None, by: str | None) -> list[str]:
    """Why ``note`` or ``by`` cannot be recorded (empty: they can). ``note`` as :func:`clean_note`
    gives it."""
    problems: list[str] = []
    if note is not None:
        problems += _problems("note", note, NOTE_MAX, _NOTE_REFUSED, " (line breaks and tabs are)")
    if by is not None:
        problems += _problems("by", by, BY_MAX, _BY_REFUSED, "")
    return problems


def _problems(name: str, text: str, most: int, refused: re.Pattern[str], allowed: str) -> list[str]:
    problems = []
    if len(text) > most:
        problems.append(f"{name} is {len(text):,} characters long; at most {most:,} are allowed")
    found = refused.search(text)
    if found is not None:
        char = found.group()
        what = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control"
        problems.append(
            f"{name} holds {what} character ({char!r} at character {found.start() + 1}), which"
            f" is not allowed{allowed}"
        )
    return problems
