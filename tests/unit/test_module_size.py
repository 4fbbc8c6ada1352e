"""Modules are sized by idea: each names it in its first docstring line; a long one is flagged.

No count fails the suite (STYLE.md: split a module when it holds two ideas, never to meet a count).
A module past :data:`WARN_OVER` lines is named in a warning, which pytest shows in its summary and
does not turn into a failure (pyproject.toml's ``filterwarnings`` lets this module's warnings be).
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import recon

PACKAGE = Path(recon.__file__).parent
WARN_OVER = 600


def long_modules(sizes: dict[str, int], limit: int) -> list[str]:
    """The modules over ``limit`` lines, longest first, each with its size."""
    over = sorted(((n, name) for name, n in sizes.items() if n > limit), reverse=True)
    return [f"{name}: {n} lines" for n, name in over]


def without_idea(sources: dict[str, str]) -> list[str]:
    """The non-empty modules whose docstring is missing or starts with a blank line."""
    missing = []
    for name, source in sorted(sources.items()):
        if not source.strip():
            continue  # an empty __init__.py marks a package and says nothing
        doc = ast.get_docstring(ast.parse(source), clean=False)
        if not doc or not doc.splitlines()[0].strip():
            missing.append(name)
    return missing


def sources() -> dict[str, str]:
    return {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
    }


def test_the_size_check_names_only_modules_over_the_limit() -> None:
    """Modules over the limit are named, longest first; one at the limit is not."""
    sizes = {"a.py": 601, "b.py": 600, "c.py": 913, "d.py": 12}
    assert long_modules(sizes, 600) == ["c.py: 913 lines", "a.py: 601 lines"]


def test_the_idea_check_names_a_module_without_a_docstring_first_line() -> None:
    """No docstring, or one opening on a blank line, is named; an empty module is not."""
    found = without_idea(
        {
            "named.py": '"""The one idea."""\n',
            "bare.py": "x = 1\n",
            "blank.py": '"""\nThe idea, a line late."""\n',
            "__init__.py": "",
        }
    )
    assert found == ["bare.py", "blank.py"]


def test_every_module_of_recon_names_its_idea_in_its_first_docstring_line() -> None:
    """Every non-empty module of recon/ opens with a docstring whose first line is not blank."""
    assert without_idea(sources()) == []


def test_a_module_past_600_lines_is_named_in_a_warning() -> None:
    """A warning, not a failure: the summary lists each module of recon/ past 600 lines."""
    sizes = {name: len(text.splitlines()) for name, text in sources().items()}
    for long in long_modules(sizes, WARN_OVER):
        warnings.warn(
            f"recon/{long}, past {WARN_OVER}: does it still hold one idea?",
            UserWarning,
            stacklevel=1,
        )
