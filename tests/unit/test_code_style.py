"""Code says why in words: no comment or docstring points at an issue by its number.

An issue number tells the history, which git keeps; the reader of the code needs the reason, which
the comment should say itself (STYLE.md, "Size, names, comments"). Only comments and docstrings are
read: a string the code outputs (a benchmark's report, say) is not a comment.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("recon", "sql", "cron", "bench")

# "issue 12", "Issues 14 and 24", "issue #34", and a bare "#34" as GitHub writes a reference.
ISSUE_BY_NUMBER = re.compile(r"\bissues? #?\d+|(?<![\w&#])#\d{2,}\b", re.IGNORECASE)
# Where a comment starts in a shell script, a crontab or a unit file: a `#` at a word's start.
_LINE_COMMENT = re.compile(r"(?:^|\s)#(.*)$")


def python_comments(source: str) -> list[tuple[int, str]]:
    """Each comment and each line of each docstring of a Python module, with its line number."""
    found = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            lines = first.value.value.splitlines()
            found += [(first.lineno + i, line) for i, line in enumerate(lines)]
    return sorted(found)


def line_comments(text: str) -> list[tuple[int, str]]:
    """The comment part of each line of a shell script, crontab, unit file or template."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LINE_COMMENT.search(line)
        if match:
            found.append((number, match.group(1)))
    return found


def issue_mentions(name: str, text: str) -> list[str]:
    """``name:line: comment`` for each comment or docstring line that names an issue by number."""
    comments = python_comments(text) if name.endswith(".py") else line_comments(text)
    return [
        f"{name}:{number}: {comment.strip()}"
        for number, comment in comments
        if ISSUE_BY_NUMBER.search(comment)
    ]


def checked_files() -> dict[str, str]:
    """Every text file of the checked folders, by its path from the repository's root."""
    files = {}
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            try:
                files[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:  # pragma: no cover - no binary file lives there today
                continue
    return files


def test_the_issue_check_reads_comments_and_docstrings_not_strings() -> None:
    """A comment or docstring naming an issue is found, with its line; a string the code outputs,
    a colour and a shell's base-8 number are not."""
    source = '''"""The module (issue 12)."""

COLOUR = "#999999"  # grey
TITLE = "before issue 12"


def f() -> None:
    """Does it, as #34 asked."""
    # Issues 14 and 24 said so.
'''
    assert issue_mentions("m.py", source) == [
        "m.py:1: The module (issue 12).",
        "m.py:8: Does it, as #34 asked.",
        "m.py:9: # Issues 14 and 24 said so.",
    ]
    shell = "# wrapper (issue 17)\nif (( (8#$mode & 8#077) != 0 )); then  # see #12\n"
    assert issue_mentions("w.sh", shell) == ["w.sh:1: wrapper (issue 17)", "w.sh:2: see #12"]


def test_no_comment_or_docstring_names_an_issue_by_number() -> None:
    """recon/, sql/, cron/ and bench/ say why in words; the history is git's and docs/'."""
    mentions = [m for name, text in checked_files().items() for m in issue_mentions(name, text)]
    assert mentions == [], "say why in words instead of the issue's number:\n" + "\n".join(mentions)
