"""Every test states the behaviour it checks in a one-line docstring (STYLE.md, "Size, names")."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def undocumented_tests(source: str) -> list[str]:
    """Names of the test functions in ``source`` that have no docstring."""
    return [
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
        and not ast.get_docstring(node)
    ]


def test_the_check_finds_a_test_without_docstring() -> None:
    """A test with a docstring passes the check; one without is named."""
    source = 'def test_a():\n    """Says."""\n\nasync def test_b():\n    pass\n'
    assert undocumented_tests(source) == ["test_b"]


def test_every_test_in_the_suite_has_a_docstring() -> None:
    """No test function anywhere under tests/ lacks its docstring."""
    missing = [
        f"{path.relative_to(TESTS.parent)}: {name}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for name in undocumented_tests(path.read_text(encoding="utf-8"))
    ]
    assert missing == []
